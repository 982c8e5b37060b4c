//! The shm driver's building blocks: a single-producer single-consumer ring of
//! length-prefixed frames in a POSIX shared-memory object (eager messages between
//! processes of one node), and cross-memory attach (process_vm_readv) for the one
//! copy of a large message straight out of the sender's memory.

use std::ffi::CString;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

const HEADER: usize = 128;
const ALIGN: u64 = 8;

/// One direction of a shared-memory channel.
pub struct ShmRing {
    map: *mut u8,
    map_len: usize,
    cap: u64,
    name: String,
    /// The other side's position as last read: the producer's view of `head`,
    /// the consumer's of `tail`. Each side reads the shared one only when its own
    /// view says the ring is full (or empty), so a frame moves the cache lines of
    /// the positions between the two cores once, not on every push and pop.
    head_seen: AtomicU64,
    tail_seen: AtomicU64,
}

// SAFETY: the mapping is shared memory accessed through atomics (positions) and
// through byte ranges owned, by the SPSC protocol, by exactly one side at a time.
unsafe impl Send for ShmRing {}
// SAFETY: see `Send`; `push` must be called by one producer and `pop` by one
// consumer, which the driver guarantees by owning each ring on one side.
unsafe impl Sync for ShmRing {}

fn shm_name(name: &str) -> io::Result<CString> {
    CString::new(format!("/{}", name.trim_start_matches('/'))).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "shared-memory name with a NUL byte",
        )
    })
}

impl ShmRing {
    /// Creates the ring `name` with `capacity` bytes of data (a power of two).
    pub fn create(name: &str, capacity: usize) -> io::Result<ShmRing> {
        assert!(
            capacity.is_power_of_two() && capacity >= 64,
            "ring capacity must be a power of two"
        );
        let cname = shm_name(name)?;
        // SAFETY: shm_open with a valid name; the fd is closed below.
        let fd = unsafe {
            libc::shm_open(
                cname.as_ptr(),
                libc::O_CREAT | libc::O_EXCL | libc::O_RDWR,
                0o600,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let len = HEADER + capacity;
        // SAFETY: sizing the object we just created.
        if unsafe { libc::ftruncate(fd, len as libc::off_t) } != 0 {
            let e = io::Error::last_os_error();
            // SAFETY: cleaning up our own object.
            unsafe {
                libc::close(fd);
                libc::shm_unlink(cname.as_ptr());
            }
            return Err(e);
        }
        Self::map(fd, len, name)
    }

    /// Opens the ring `name` created by the other side.
    pub fn open(name: &str) -> io::Result<ShmRing> {
        let cname = shm_name(name)?;
        // SAFETY: shm_open with a valid name.
        let fd = unsafe { libc::shm_open(cname.as_ptr(), libc::O_RDWR, 0) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a zeroed stat is a valid out-parameter.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: fstat on our fd.
        if unsafe { libc::fstat(fd, &mut st) } != 0 {
            let e = io::Error::last_os_error();
            // SAFETY: closing our fd.
            unsafe { libc::close(fd) };
            return Err(e);
        }
        Self::map(fd, st.st_size as usize, name)
    }

    fn map(fd: libc::c_int, len: usize, name: &str) -> io::Result<ShmRing> {
        // SAFETY: mapping `len` bytes of the object behind `fd`, shared.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        // SAFETY: the mapping keeps the object alive; the fd is no longer needed.
        unsafe { libc::close(fd) };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let cap = (len - HEADER) as u64;
        if !cap.is_power_of_two() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("shared-memory ring {name} has a bad size"),
            ));
        }
        Ok(ShmRing {
            map: p.cast(),
            map_len: len,
            cap,
            name: name.to_string(),
            head_seen: AtomicU64::new(0),
            tail_seen: AtomicU64::new(0),
        })
    }

    /// Removes the name; mappings stay valid. Call once both sides have opened it.
    pub fn unlink(&self) -> io::Result<()> {
        let cname = shm_name(&self.name)?;
        // SAFETY: unlinking a name; no memory is touched.
        if unsafe { libc::shm_unlink(cname.as_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    fn head(&self) -> &AtomicU64 {
        // SAFETY: the header's first 8 bytes, 8-aligned (page-aligned mapping).
        unsafe { &*(self.map as *const AtomicU64) }
    }

    fn tail(&self) -> &AtomicU64 {
        // SAFETY: bytes 64..72 of the header, on their own cache line.
        unsafe { &*(self.map.add(64) as *const AtomicU64) }
    }

    /// Copies `src` into the data area at position `pos`, wrapping around.
    fn write_at(&self, pos: u64, src: &[u8]) {
        let at = (pos & (self.cap - 1)) as usize;
        let first = src.len().min(self.cap as usize - at);
        // SAFETY: both ranges lie in the data area, which this side owns between
        // the positions it has not yet published.
        unsafe {
            let data = self.map.add(HEADER);
            std::ptr::copy_nonoverlapping(src.as_ptr(), data.add(at), first);
            std::ptr::copy_nonoverlapping(src.as_ptr().add(first), data, src.len() - first);
        }
    }

    fn read_at(&self, pos: u64, dst: &mut [u8]) {
        let at = (pos & (self.cap - 1)) as usize;
        let first = dst.len().min(self.cap as usize - at);
        // SAFETY: as `write_at`, for bytes the producer has published.
        unsafe {
            let data = self.map.add(HEADER);
            std::ptr::copy_nonoverlapping(data.add(at), dst.as_mut_ptr(), first);
            std::ptr::copy_nonoverlapping(data, dst.as_mut_ptr().add(first), dst.len() - first);
        }
    }

    /// The largest frame the ring can ever take.
    pub fn max_frame(&self) -> usize {
        self.cap as usize - 8
    }

    /// Appends a frame (producer side); false if there is no room now.
    pub fn push(&self, frame: &[u8]) -> bool {
        self.push_parts(&[frame])
    }

    /// [`ShmRing::push`] of the frame made of `parts` one after the other.
    pub fn push_parts(&self, parts: &[&[u8]]) -> bool {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        assert!(len <= self.max_frame(), "frame larger than the ring");
        let need = (4 + len as u64).next_multiple_of(ALIGN);
        let tail = self.tail().load(Ordering::Relaxed);
        if self.cap - (tail - self.head_seen.load(Ordering::Relaxed)) < need {
            let head = self.head().load(Ordering::Acquire);
            self.head_seen.store(head, Ordering::Relaxed);
            if self.cap - (tail - head) < need {
                return false;
            }
        }
        self.write_at(tail, &(len as u32).to_le_bytes());
        let mut at = tail + 4;
        for p in parts {
            self.write_at(at, p);
            at += p.len() as u64;
        }
        self.tail().store(tail + need, Ordering::Release);
        true
    }

    /// Takes the oldest frame (consumer side).
    pub fn pop(&self) -> Option<Vec<u8>> {
        let head = self.head().load(Ordering::Relaxed);
        if head == self.tail_seen.load(Ordering::Relaxed) {
            let tail = self.tail().load(Ordering::Acquire);
            if head == tail {
                return None;
            }
            self.tail_seen.store(tail, Ordering::Relaxed);
        }
        let mut len = [0u8; 4];
        self.read_at(head, &mut len);
        let len = u32::from_le_bytes(len) as usize;
        let mut frame = vec![0u8; len];
        self.read_at(head + 4, &mut frame);
        self.head().store(
            head + (4 + len as u64).next_multiple_of(ALIGN),
            Ordering::Release,
        );
        Some(frame)
    }
}

impl Drop for ShmRing {
    fn drop(&mut self) {
        // SAFETY: unmapping our own mapping.
        unsafe { libc::munmap(self.map.cast(), self.map_len) };
    }
}

/// Copies `dst.len()` bytes at `remote` in process `pid` into `dst`, in one copy
/// by the kernel (cross-memory attach; same user, no ptrace restriction needed
/// beyond the defaults).
pub fn read_remote(pid: i32, remote: usize, dst: &mut [u8]) -> io::Result<()> {
    let mut done = 0;
    while done < dst.len() {
        let local = libc::iovec {
            iov_base: dst[done..].as_mut_ptr().cast(),
            iov_len: dst.len() - done,
        };
        let remote_iov = libc::iovec {
            iov_base: (remote + done) as *mut libc::c_void,
            iov_len: dst.len() - done,
        };
        // SAFETY: `local` covers our own buffer; the kernel checks the remote range.
        let n = unsafe { libc::process_vm_readv(pid, &local, 1, &remote_iov, 1, 0) };
        if n <= 0 {
            return Err(if n == 0 {
                io::Error::new(io::ErrorKind::UnexpectedEof, "no bytes read")
            } else {
                io::Error::last_os_error()
            });
        }
        done += n as usize;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(i: usize) -> Vec<u8> {
        (0..(i * 131) % 3000).map(|j| (i * 7 + j) as u8).collect()
    }

    #[test]
    fn frames_cross_two_mappings_in_order_with_wraparound() {
        let name = format!("mpcrs-test-ring-{}", std::process::id());
        let producer = ShmRing::create(&name, 4096).unwrap();
        let consumer = ShmRing::open(&name).unwrap();
        producer.unlink().unwrap();
        let n = 20_000;
        let t = std::thread::spawn(move || {
            for i in 0..n {
                let f = frame(i);
                while !producer.push(&f) {
                    std::hint::spin_loop();
                }
            }
        });
        for i in 0..n {
            let got = loop {
                if let Some(f) = consumer.pop() {
                    break f;
                }
                std::hint::spin_loop();
            };
            assert_eq!(got, frame(i), "frame {i}");
        }
        t.join().unwrap();
        assert!(consumer.pop().is_none());
    }
}
