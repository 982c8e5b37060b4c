//! stdout of a privatized job: line by line per rank.
//!
//! The ranks share libc's stdout. Fully buffered (as it is on a pipe), it would
//! cut one rank's line with another's at any 4 KiB boundary, and keep a rank's
//! output until the process ends. Before any copy is loaded, stdout is replaced
//! by an unbuffered stream whose writes reach `write_out` in the writing rank:
//! each rank's bytes collect in its own buffer, complete lines go out in one
//! write(2) each time, and the rest at the rank's end. printf, puts, the
//! program's `stdout` (copied from libc's after the switch) and std::cout (built
//! on libc's stdout) all go this way.

use std::os::raw::{c_char, c_void};
use std::sync::atomic::{AtomicPtr, Ordering};

use crate::libc_state::{self, RankLibc};

extern "C" {
    #[link_name = "stdout"]
    static mut LIBC_STDOUT: *mut libc::FILE;
}

/// The stream installed as stdout, once installed.
static SHARED: AtomicPtr<libc::FILE> = AtomicPtr::new(std::ptr::null_mut());

#[repr(C)]
struct CookieIo {
    read: *const c_void,
    write: Option<unsafe extern "C" fn(*mut c_void, *const c_char, usize) -> isize>,
    seek: *const c_void,
    close: *const c_void,
}

extern "C" {
    fn fopencookie(cookie: *mut c_void, mode: *const c_char, io: CookieIo) -> *mut libc::FILE;
}

pub(crate) fn is_shared_stdout(stream: *mut libc::FILE) -> bool {
    !stream.is_null() && stream == SHARED.load(Ordering::Acquire)
}

fn write_all(mut b: &[u8]) {
    while !b.is_empty() {
        // SAFETY: writing from a valid slice to fd 1.
        let n = unsafe { libc::write(1, b.as_ptr().cast(), b.len()) };
        if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        if n <= 0 {
            return;
        }
        b = &b[n as usize..];
    }
}

unsafe extern "C" fn write_out(_cookie: *mut c_void, buf: *const c_char, len: usize) -> isize {
    // SAFETY: stdio hands us `len` bytes at `buf`.
    let bytes = unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), len) };
    let done = libc_state::with(|st| {
        st.stdout_pending.extend_from_slice(bytes);
        if let Some(end) = st.stdout_pending.iter().rposition(|&b| b == b'\n') {
            write_all(&st.stdout_pending[..=end]);
            st.stdout_pending.drain(..=end);
        }
    });
    if done.is_none() {
        write_all(bytes);
    }
    len as isize
}

/// Replaces libc's stdout by the per-rank line stream (before the copies load:
/// each copies libc's `stdout` pointer).
pub(crate) fn install() {
    let io = CookieIo {
        read: std::ptr::null(),
        write: Some(write_out),
        seek: std::ptr::null(),
        close: std::ptr::null(),
    };
    // SAFETY: a write-only stream without state.
    let f = unsafe { fopencookie(std::ptr::null_mut(), c"w".as_ptr(), io) };
    if f.is_null() {
        return;
    }
    // SAFETY: `f` is a valid stream; no rank runs yet, so no one else uses
    // stdout while it is switched (anything it held is flushed first).
    unsafe {
        libc::setvbuf(f, std::ptr::null_mut(), libc::_IONBF, 0);
        libc::fflush(LIBC_STDOUT);
        LIBC_STDOUT = f;
    }
    SHARED.store(f, Ordering::Release);
}

/// Writes what the rank left after its last line.
pub(crate) fn flush_rank(cell: &RankLibc) {
    if let Some(st) = cell.lock().as_mut() {
        write_all(&st.stdout_pending);
        st.stdout_pending.clear();
    }
}

/// Writes what every rank of `ranks` left (the process ends).
pub(crate) fn flush_all(ranks: std::ops::Range<usize>) {
    for r in ranks {
        if let Some(cell) = crate::handles::rank_libc(r) {
            flush_rank(cell);
        }
    }
}
