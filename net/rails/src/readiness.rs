//! Which sockets of a tcp rail have something to read, asked of the kernel in one
//! call (an epoll set, level-triggered, polled with a zero timeout).
//!
//! Trying every socket instead costs a system call each, and a non-blocking
//! `accept` that finds no connection still makes and frees a socket inside the
//! kernel: measured as a quarter of the time of a ping-pong between two processes
//! whose progress rounds looked at their sockets.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Events one look takes; more ready sockets are reported by the next look
/// (level-triggered).
const BATCH: usize = 64;

pub(crate) struct Readiness {
    epoll: OwnedFd,
}

impl Readiness {
    pub(crate) fn new() -> io::Result<Readiness> {
        // SAFETY: epoll_create1 takes no pointers; a non-negative result is a new
        // descriptor we own.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a fresh descriptor owned by nobody else.
        Ok(Readiness {
            epoll: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// Watches `fd` for input (and hang-up), reported with `key`.
    pub(crate) fn watch(&self, fd: RawFd, key: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event {
            events: (libc::EPOLLIN | libc::EPOLLRDHUP) as u32,
            u64: key,
        };
        // SAFETY: `ev` is a valid event for the duration of the call.
        let r =
            unsafe { libc::epoll_ctl(self.epoll.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Stops watching `fd` (a closed connection would be reported every look).
    pub(crate) fn forget(&self, fd: RawFd) {
        // SAFETY: no event pointer is needed for EPOLL_CTL_DEL. An fd that is not
        // in the set gives ENOENT, which changes nothing.
        unsafe {
            libc::epoll_ctl(
                self.epoll.as_raw_fd(),
                libc::EPOLL_CTL_DEL,
                fd,
                std::ptr::null_mut(),
            )
        };
    }

    /// Replaces `keys` with those of the sockets ready now, without waiting.
    pub(crate) fn ready(&self, keys: &mut Vec<u64>) -> io::Result<()> {
        keys.clear();
        let mut events = [libc::epoll_event { events: 0, u64: 0 }; BATCH];
        // SAFETY: `events` has room for BATCH entries; a zero timeout never blocks.
        let n = unsafe {
            libc::epoll_wait(
                self.epoll.as_raw_fd(),
                events.as_mut_ptr(),
                BATCH as libc::c_int,
                0,
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            // A signal (a checkpoint request) during the call: nothing was taken.
            return if e.kind() == io::ErrorKind::Interrupted {
                Ok(())
            } else {
                Err(e)
            };
        }
        keys.extend(events[..n as usize].iter().map(|e| e.u64));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn reports_only_sockets_with_input_until_it_is_read() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let set = Readiness::new().unwrap();
        set.watch(listener.as_raw_fd(), 7).unwrap();
        let mut keys = Vec::new();
        set.ready(&mut keys).unwrap();
        assert!(keys.is_empty(), "nothing to accept yet: {keys:?}");

        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        // Level-triggered: reported on every look until accepted.
        for _ in 0..2 {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
            loop {
                set.ready(&mut keys).unwrap();
                if !keys.is_empty() || std::time::Instant::now() > deadline {
                    break;
                }
            }
            assert_eq!(keys, vec![7]);
        }
        let (server, _) = listener.accept().unwrap();
        set.watch(server.as_raw_fd(), 8).unwrap();
        set.ready(&mut keys).unwrap();
        assert!(keys.is_empty(), "accepted, and no bytes sent: {keys:?}");

        client.write_all(b"x").unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while keys.is_empty() && std::time::Instant::now() < deadline {
            set.ready(&mut keys).unwrap();
        }
        assert_eq!(keys, vec![8]);
        set.forget(server.as_raw_fd());
        set.ready(&mut keys).unwrap();
        assert!(keys.is_empty(), "forgotten: {keys:?}");
    }
}
