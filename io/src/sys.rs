//! The system calls of file access: whole transfers (retrying short and
//! interrupted ones), and errno as an MPI error class.

use mpcrs::ErrorClass;

/// An errno as the MPI error class a program sees (MPI-3.1 13.7).
pub fn class_of(errno: i32) -> ErrorClass {
    match errno {
        libc::ENOENT => ErrorClass::NoSuchFile,
        libc::EEXIST => ErrorClass::FileExists,
        libc::EACCES | libc::EPERM => ErrorClass::Access,
        libc::EROFS => ErrorClass::ReadOnly,
        libc::ENOSPC | libc::EFBIG => ErrorClass::NoSpace,
        libc::EDQUOT => ErrorClass::Quota,
        libc::ENAMETOOLONG | libc::ENOTDIR | libc::EISDIR | libc::ELOOP => ErrorClass::BadFile,
        _ => ErrorClass::Io,
    }
}

/// The last errno, as (class, "what: strerror").
pub fn last_error(what: &str) -> (ErrorClass, String) {
    let e = std::io::Error::last_os_error();
    (
        class_of(e.raw_os_error().unwrap_or(0)),
        format!("{what}: {e}"),
    )
}

/// Most buffers one vectored call takes.
const IOV_MAX: usize = 1024;

/// Skips `n` bytes a vectored call moved from `iov[first..]`: returns the
/// first buffer not done, resumed inside a partly moved one.
fn advance(iov: &mut [libc::iovec], mut first: usize, mut n: usize) -> usize {
    while n > 0 && first < iov.len() {
        let l = iov[first].iov_len;
        if n >= l {
            n -= l;
            first += 1;
        } else {
            // SAFETY: `n` is within the buffer.
            iov[first].iov_base = unsafe { iov[first].iov_base.cast::<u8>().add(n).cast() };
            iov[first].iov_len -= n;
            n = 0;
        }
    }
    first
}

/// Which way a vectored transfer goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transfer {
    Read,
    Write,
}

/// Moves the buffers, one after the other, from or to file offset `at`;
/// returns the bytes moved (fewer than asked only for a read at the end of
/// the file).
///
/// # Safety
/// Each (pointer, length) valid (only read from for a write).
pub unsafe fn transfer_all(
    fd: i32,
    how: Transfer,
    pieces: &[(*mut u8, usize)],
    mut at: u64,
) -> Result<usize, (ErrorClass, String)> {
    let mut total = 0;
    for chunk in pieces.chunks(IOV_MAX) {
        let mut iov: Vec<libc::iovec> = chunk
            .iter()
            .filter(|p| p.1 > 0)
            .map(|&(p, l)| libc::iovec {
                iov_base: p.cast(),
                iov_len: l,
            })
            .collect();
        let mut first = 0;
        while first < iov.len() {
            let (ptr, count) = (iov[first..].as_ptr(), (iov.len() - first) as i32);
            // SAFETY: the iovecs name the caller's valid buffers.
            let n = unsafe {
                match how {
                    Transfer::Read => libc::preadv(fd, ptr, count, at as i64),
                    Transfer::Write => libc::pwritev(fd, ptr, count, at as i64),
                }
            };
            if n < 0 {
                if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                let what = match how {
                    Transfer::Read => "reading",
                    Transfer::Write => "writing",
                };
                return Err(last_error(&format!("{what} at offset {at}")));
            }
            if n == 0 {
                if how == Transfer::Read {
                    return Ok(total);
                }
                return Err((
                    ErrorClass::Io,
                    format!("writing at offset {at}: nothing written"),
                ));
            }
            total += n as usize;
            at += n as u64;
            first = advance(&mut iov, first, n as usize);
        }
    }
    Ok(total)
}

/// The file's size.
pub fn size_of(fd: i32) -> Result<u64, (ErrorClass, String)> {
    // SAFETY: fstat into a zeroed struct.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Err(last_error("fstat"));
    }
    Ok(st.st_size as u64)
}

/// Takes (`lock`) or releases a POSIX record lock over [at, at + len) for the
/// process: atomic mode's exclusion between processes.
pub fn record_lock(
    fd: i32,
    write: bool,
    at: u64,
    len: u64,
    lock: bool,
) -> Result<(), (ErrorClass, String)> {
    // SAFETY: a zeroed flock is a valid argument once filled.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = if !lock {
        libc::F_UNLCK
    } else if write {
        libc::F_WRLCK
    } else {
        libc::F_RDLCK
    } as i16;
    fl.l_whence = libc::SEEK_SET as i16;
    fl.l_start = at as i64;
    fl.l_len = len as i64;
    loop {
        // SAFETY: fcntl on our descriptor with a filled flock.
        if unsafe { libc::fcntl(fd, libc::F_SETLKW, &fl) } == 0 {
            return Ok(());
        }
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return Err(last_error("locking a byte range (atomic mode)"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn vectored_calls_move_every_piece_past_the_iovec_limit() {
        let path = std::env::temp_dir().join(format!("mpcrs-io-sys-{}", std::process::id()));
        let f = std::fs::OpenOptions::new()
            .create(true)
            .read(true)
            .write(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        let fd = f.as_raw_fd();
        // 3000 pieces of 1..=7 bytes: more than one call's worth of buffers.
        let data: Vec<Vec<u8>> = (0..3000)
            .map(|i| vec![(i % 251) as u8; 1 + i % 7])
            .collect();
        let total: usize = data.iter().map(|d| d.len()).sum();
        let out: Vec<(*mut u8, usize)> = data
            .iter()
            .map(|d| (d.as_ptr() as *mut u8, d.len()))
            .collect();
        // SAFETY: the pieces are live vectors, only read.
        unsafe { transfer_all(fd, Transfer::Write, &out, 10).unwrap() };
        assert_eq!(size_of(fd).unwrap(), 10 + total as u64);
        let mut back: Vec<Vec<u8>> = data.iter().map(|d| vec![0; d.len()]).collect();
        let into: Vec<(*mut u8, usize)> =
            back.iter_mut().map(|d| (d.as_mut_ptr(), d.len())).collect();
        // SAFETY: as above.
        let n = unsafe { transfer_all(fd, Transfer::Read, &into, 10).unwrap() };
        assert_eq!(n, total);
        assert_eq!(back, data);
        // At the end of the file: what is there.
        let mut tail = [0u8; 8];
        // SAFETY: `tail` holds 8 bytes.
        let n = unsafe {
            transfer_all(
                fd,
                Transfer::Read,
                &[(tail.as_mut_ptr(), 8)],
                10 + total as u64 - 3,
            )
            .unwrap()
        };
        assert_eq!(n, 3);
        drop(f);
        std::fs::remove_file(&path).unwrap();
    }
}
