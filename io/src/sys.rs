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
    (class_of(e.raw_os_error().unwrap_or(0)), format!("{what}: {e}"))
}

/// Most buffers one vectored call takes.
const IOV_MAX: usize = 1024;

/// Writes the buffers, one after the other, from file offset `at`.
///
/// # Safety
/// Each (pointer, length) valid.
pub unsafe fn pwritev_all(fd: i32, pieces: &[(*const u8, usize)], mut at: u64) -> Result<(), (ErrorClass, String)> {
    for chunk in pieces.chunks(IOV_MAX) {
        let mut iov: Vec<libc::iovec> = chunk
            .iter()
            .filter(|p| p.1 > 0)
            .map(|&(p, l)| libc::iovec { iov_base: p as *mut _, iov_len: l })
            .collect();
        let mut first = 0;
        while first < iov.len() {
            // SAFETY: the iovecs name the caller's valid buffers.
            let n = unsafe {
                libc::pwritev(fd, iov[first..].as_ptr(), (iov.len() - first) as i32, at as i64)
            };
            if n < 0 {
                if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return Err(last_error(&format!("writing at offset {at}")));
            }
            let mut n = n as usize;
            at += n as u64;
            // Skip what was written; resume inside a partly written buffer.
            while n > 0 && first < iov.len() {
                let l = iov[first].iov_len;
                if n >= l {
                    n -= l;
                    first += 1;
                } else {
                    // SAFETY: within the buffer.
                    iov[first].iov_base = unsafe { iov[first].iov_base.cast::<u8>().add(n).cast() };
                    iov[first].iov_len -= n;
                    n = 0;
                }
            }
        }
    }
    Ok(())
}

/// Reads into the buffers, one after the other, from file offset `at`;
/// returns the bytes read (fewer than asked only at the end of the file).
///
/// # Safety
/// Each (pointer, length) valid.
pub unsafe fn preadv_all(fd: i32, pieces: &[(*mut u8, usize)], mut at: u64) -> Result<usize, (ErrorClass, String)> {
    let mut total = 0;
    for chunk in pieces.chunks(IOV_MAX) {
        let mut iov: Vec<libc::iovec> = chunk
            .iter()
            .filter(|p| p.1 > 0)
            .map(|&(p, l)| libc::iovec { iov_base: p.cast(), iov_len: l })
            .collect();
        let mut first = 0;
        while first < iov.len() {
            // SAFETY: the iovecs name the caller's valid buffers.
            let n = unsafe {
                libc::preadv(fd, iov[first..].as_ptr(), (iov.len() - first) as i32, at as i64)
            };
            if n < 0 {
                if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return Err(last_error(&format!("reading at offset {at}")));
            }
            if n == 0 {
                return Ok(total);
            }
            let mut n = n as usize;
            total += n;
            at += n as u64;
            while n > 0 && first < iov.len() {
                let l = iov[first].iov_len;
                if n >= l {
                    n -= l;
                    first += 1;
                } else {
                    // SAFETY: within the buffer.
                    iov[first].iov_base = unsafe { iov[first].iov_base.cast::<u8>().add(n).cast() };
                    iov[first].iov_len -= n;
                    n = 0;
                }
            }
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
pub fn record_lock(fd: i32, write: bool, at: u64, len: u64, lock: bool) -> Result<(), (ErrorClass, String)> {
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
