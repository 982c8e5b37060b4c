//! What a process holds in the kernel rather than in memory and that an image
//! must carry: signal dispositions and open regular files (path, flags,
//! offset). Both are recorded into statics, so they are part of the image's
//! memory; the restorer reads them back from the image at the same addresses.

use std::cell::UnsafeCell;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;

use crate::sys::call;

/// A static written by one thread at a time: the checkpoint leader while every
/// other thread is stopped.
pub struct Racy<T>(UnsafeCell<T>);

// SAFETY: writers are serialized by the checkpoint protocol (only the leader
// writes, with every other thread stopped), and readers read images.
unsafe impl<T> Sync for Racy<T> {}

impl<T> Racy<T> {
    pub const fn new(v: T) -> Racy<T> {
        Racy(UnsafeCell::new(v))
    }
    pub fn get(&self) -> *mut T {
        self.0.get()
    }
}

/// The kernel's `struct sigaction` on x86-64 (rt_sigaction's layout).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KernelSigaction {
    pub handler: u64,
    pub flags: u64,
    pub restorer: u64,
    pub mask: u64,
}

/// Signal dispositions, indexed by signal number (0 unused).
pub static SIGNALS: Racy<[KernelSigaction; 65]> = Racy::new(
    [KernelSigaction {
        handler: 0,
        flags: 0,
        restorer: 0,
        mask: 0,
    }; 65],
);

/// Whether `sig` has a disposition that can be read and set.
pub fn settable_signal(sig: usize) -> bool {
    (1..=64).contains(&sig) && sig != libc::SIGKILL as usize && sig != libc::SIGSTOP as usize
}

/// Records every signal's disposition. Raw calls only: other threads are stopped.
pub fn record_signals() {
    let table = SIGNALS.get();
    for sig in 0..65 {
        let mut act = KernelSigaction::default();
        if settable_signal(sig) {
            // SAFETY: rt_sigaction with no new action writes the old one (32 bytes).
            unsafe {
                call!(
                    libc::SYS_rt_sigaction,
                    sig,
                    0,
                    &mut act as *mut KernelSigaction,
                    8
                )
            };
        }
        // SAFETY: only the checkpoint leader writes the table.
        unsafe { (*table)[sig] = act };
    }
}

/// Sets signal `sig`'s disposition.
pub fn apply_signal(sig: usize, act: &KernelSigaction) -> i64 {
    // SAFETY: rt_sigaction reads a valid kernel sigaction.
    unsafe {
        call!(
            libc::SYS_rt_sigaction,
            sig,
            act as *const KernelSigaction,
            0,
            8
        )
    }
}

pub const MAX_FILES: usize = 256;
pub const MAX_PATH: usize = 512;

/// One open regular file.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct FileRecord {
    pub fd: i32,
    /// `fcntl(F_GETFL)` and `fcntl(F_GETFD)`.
    pub status_flags: i32,
    pub fd_flags: i32,
    pub path_len: u32,
    pub offset: i64,
    pub path: [u8; MAX_PATH],
}

impl FileRecord {
    pub fn path(&self) -> &[u8] {
        &self.path[..(self.path_len as usize).min(MAX_PATH)]
    }
}

#[repr(C)]
pub struct FileTable {
    pub count: usize,
    pub files: [FileRecord; MAX_FILES],
}

pub static FILES: Racy<FileTable> = Racy::new(FileTable {
    count: 0,
    files: [FileRecord {
        fd: -1,
        status_flags: 0,
        fd_flags: 0,
        path_len: 0,
        offset: 0,
        path: [0; MAX_PATH],
    }; MAX_FILES],
});

/// Records the open regular files (path and flags) but standard input and
/// output, leaving out `exclude`.
/// Called before the other threads are stopped (it allocates); the offsets are
/// read by [`record_file_offsets`] once they are.
pub fn record_files(exclude: &[i32]) -> Result<(), String> {
    let dir = std::fs::read_dir("/proc/self/fd").map_err(|e| format!("/proc/self/fd: {e}"))?;
    let mut fds: Vec<i32> = dir
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        // Standard input and output belong to whoever starts the process,
        // the first time and at a restart alike.
        .filter(|fd| *fd > 2 && !exclude.contains(fd))
        .collect();
    fds.sort_unstable();
    // SAFETY: only the checkpoint leader writes the table, before the freeze.
    let table = unsafe { &mut *FILES.get() };
    table.count = 0;
    for fd in fds {
        let Ok(path) = std::fs::read_link(format!("/proc/self/fd/{fd}")) else {
            continue;
        };
        let bytes = path.as_os_str().as_bytes();
        // Anonymous files (memfd) and deleted ones cannot be reopened by path;
        // what they held that matters is in memory.
        if !bytes.starts_with(b"/")
            || bytes.starts_with(b"/memfd:")
            || bytes.ends_with(b" (deleted)")
        {
            continue;
        }
        // SAFETY: fstat into a zeroed struct on a descriptor of this process.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstat(fd, &mut st) } != 0 || st.st_mode & libc::S_IFMT != libc::S_IFREG {
            continue;
        }
        if bytes.len() > MAX_PATH {
            return Err(format!(
                "descriptor {fd} names a path longer than {MAX_PATH} bytes: {}",
                path.display()
            ));
        }
        if table.count == MAX_FILES {
            return Err(format!(
                "more than {MAX_FILES} regular files are open; an image records at most that many"
            ));
        }
        let rec = &mut table.files[table.count];
        rec.fd = fd;
        // SAFETY: fcntl queries on an open descriptor.
        rec.status_flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        rec.fd_flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
        rec.path_len = bytes.len() as u32;
        rec.path[..bytes.len()].copy_from_slice(bytes);
        rec.offset = 0;
        table.count += 1;
    }
    Ok(())
}

/// Reads the offsets of the recorded files. Raw calls only: other threads are stopped.
pub fn record_file_offsets() {
    // SAFETY: only the checkpoint leader writes the table.
    let table = unsafe { &mut *FILES.get() };
    for rec in &mut table.files[..table.count.min(MAX_FILES)] {
        // SAFETY: lseek on a descriptor of this process.
        let at = unsafe { call!(libc::SYS_lseek, rec.fd, 0, libc::SEEK_CUR) };
        rec.offset = at.max(0);
    }
}

/// Reopens a recorded file at its descriptor and offset.
pub fn reopen(rec: &FileRecord) -> Result<(), String> {
    let path = std::path::Path::new(std::ffi::OsStr::from_bytes(rec.path()));
    let what = || format!("descriptor {} ({})", rec.fd, path.display());
    let c = CString::new(rec.path()).map_err(|_| format!("{}: NUL in path", what()))?;
    // Never create, truncate or exclusively create again: the file is resumed.
    let flags =
        rec.status_flags & !(libc::O_CREAT | libc::O_EXCL | libc::O_TRUNC) | libc::O_CLOEXEC;
    // SAFETY: open with a NUL-terminated path.
    let fd = unsafe { libc::open(c.as_ptr(), flags) };
    if fd < 0 {
        return Err(format!(
            "{}: cannot reopen: {}",
            what(),
            std::io::Error::last_os_error()
        ));
    }
    let cloexec = if rec.fd_flags & libc::FD_CLOEXEC != 0 {
        libc::O_CLOEXEC
    } else {
        0
    };
    if fd != rec.fd {
        // SAFETY: dup3 onto the recorded number, then drop the temporary one.
        let r = unsafe { libc::dup3(fd, rec.fd, cloexec) };
        unsafe { libc::close(fd) };
        if r < 0 {
            return Err(format!("{}: {}", what(), std::io::Error::last_os_error()));
        }
    } else if cloexec == 0 {
        // SAFETY: clearing FD_CLOEXEC on our own descriptor.
        unsafe { libc::fcntl(fd, libc::F_SETFD, 0) };
    }
    // SAFETY: lseek on the descriptor just placed.
    if unsafe { libc::lseek(rec.fd, rec.offset, libc::SEEK_SET) } < 0 {
        return Err(format!(
            "{}: cannot seek to {}: {}",
            what(),
            rec.offset,
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn files_are_recorded_and_reopened_at_their_offset() {
        let dir = std::env::temp_dir().join(format!("mpcrs-ks-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("log");
        let mut f = std::fs::File::create(&path).unwrap();
        f.write_all(b"hello ").unwrap();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&f);
        record_files(&[]).unwrap();
        record_file_offsets();
        // SAFETY: the table is not written concurrently in this test.
        let table = unsafe { &*FILES.get() };
        let rec = *table.files[..table.count]
            .iter()
            .find(|r| r.fd == fd)
            .expect("the open file is recorded");
        assert_eq!(rec.path(), path.as_os_str().as_bytes());
        assert_eq!(rec.offset, 6);
        drop(f);
        reopen(&rec).unwrap();
        // SAFETY: the descriptor was just reopened by `reopen`.
        let mut f = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(rec.fd) };
        f.write_all(b"again").unwrap();
        drop(f);
        assert_eq!(std::fs::read(&path).unwrap(), b"hello again");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn signal_dispositions_are_recorded() {
        record_signals();
        // SAFETY: read after the write above, same thread.
        let t = unsafe { &*SIGNALS.get() };
        // Rust's runtime ignores SIGPIPE.
        assert_eq!(t[libc::SIGPIPE as usize].handler, libc::SIG_IGN as u64);
        assert_eq!(
            apply_signal(libc::SIGPIPE as usize, &t[libc::SIGPIPE as usize]),
            0
        );
    }
}
