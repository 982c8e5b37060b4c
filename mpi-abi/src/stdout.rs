//! stdout (and, when the user asks for labels or files, stderr) of a
//! privatized job: line by line per rank.
//!
//! The ranks share libc's stdout. Fully buffered (as it is on a pipe), it would
//! cut one rank's line with another's at any 4 KiB boundary, and keep a rank's
//! output until the process ends. Before any copy is loaded, stdout is replaced
//! by an unbuffered stream whose writes reach `write_out` in the writing rank:
//! each rank's bytes collect in its own buffer, complete lines go out in one
//! write(2) each time, and the rest at the rank's end. printf, puts, the
//! program's `stdout` (copied from libc's after the switch) and std::cout (built
//! on libc's stdout) all go this way.
//!
//! Under `--tag-output`, `-prepend-rank` or `--output-filename`
//! (MPCRS_OUTPUT_LABELS, MPCRS_OUTPUT_DIR), in a process of several ranks,
//! stderr is replaced the same way, and each rank's complete lines go out
//! labelled with its rank, or into its own files; a last line without its
//! newline goes out, labelled, at the rank's end. A process of one rank
//! leaves that to mpcrs-run, which sees its output whole (launch's output.rs).

use std::os::raw::{c_char, c_void};
use std::path::PathBuf;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::OnceLock;

use mpcrs_settings::output::{self, Labels, Stream};

use crate::libc_state::{self, RankLibc};

extern "C" {
    #[link_name = "stdout"]
    static mut LIBC_STDOUT: *mut libc::FILE;
    #[link_name = "stderr"]
    static mut LIBC_STDERR: *mut libc::FILE;
}

/// The streams installed as stdout and stderr, once installed.
static SHARED_OUT: AtomicPtr<libc::FILE> = AtomicPtr::new(std::ptr::null_mut());
static SHARED_ERR: AtomicPtr<libc::FILE> = AtomicPtr::new(std::ptr::null_mut());

/// What the user asked of the ranks' output (in a process of several ranks).
#[derive(Debug, Default)]
struct Presentation {
    labels: Option<Labels>,
    /// `--output-filename`: each rank's files below it.
    dir: Option<PathBuf>,
}

static PRESENTATION: OnceLock<Presentation> = OnceLock::new();

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

/// Whether `stream` is one of the streams the ranks share (stdout, and
/// stderr when it is replaced): a rank may not change their buffering.
pub(crate) fn is_shared_stdout(stream: *mut libc::FILE) -> bool {
    !stream.is_null()
        && (stream == SHARED_OUT.load(Ordering::Acquire)
            || stream == SHARED_ERR.load(Ordering::Acquire))
}

fn fd_of(stream: Stream) -> libc::c_int {
    match stream {
        Stream::Stdout => 1,
        Stream::Stderr => 2,
    }
}

fn write_all(fd: libc::c_int, mut b: &[u8]) {
    while !b.is_empty() {
        // SAFETY: writing from a valid slice to an open descriptor.
        let n = unsafe { libc::write(fd, b.as_ptr().cast(), b.len()) };
        if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        if n <= 0 {
            return;
        }
        b = &b[n as usize..];
    }
}

/// Sends `lines` of rank `rank` (complete lines, or its last bytes at its
/// end) where they go: its file, or the process's descriptor, labelled if
/// asked.
fn emit(rank: usize, stream: Stream, lines: &[u8]) {
    let how = PRESENTATION.get();
    if let Some(dir) = how.and_then(|h| h.dir.as_deref()) {
        // Opened for each batch of lines: a descriptor per rank and stream
        // kept open would exhaust the process's descriptors with many ranks.
        let path = output::rank_file(dir, rank, stream);
        if let Ok(mut f) = std::fs::OpenOptions::new().append(true).open(&path) {
            let _ = std::io::Write::write_all(&mut f, lines);
        }
        return;
    }
    let Some(labels) = how.and_then(|h| h.labels) else {
        write_all(fd_of(stream), lines);
        return;
    };
    let label = labels.label(&rank.to_string(), stream);
    let mut labelled = Vec::with_capacity(lines.len() + 2 * label.len());
    for line in lines.split_inclusive(|&b| b == b'\n') {
        labelled.extend_from_slice(label.as_bytes());
        labelled.extend_from_slice(line);
    }
    if labelled.last() != Some(&b'\n') {
        // A rank's last line ends here: the next label starts a line.
        labelled.push(b'\n');
    }
    // One write for the batch: lines of ranks never mix.
    write_all(fd_of(stream), &labelled);
}

/// Adds `bytes` the calling rank wrote to `stream` to its pending bytes and
/// sends the complete lines; outside a rank, writes them as they are.
fn collect(stream: Stream, bytes: &[u8]) {
    let done = libc_state::with(|st| {
        let rank = st.rank;
        let pending = st.pending(stream);
        pending.extend_from_slice(bytes);
        if let Some(end) = pending.iter().rposition(|&b| b == b'\n') {
            let lines: Vec<u8> = pending.drain(..=end).collect();
            emit(rank, stream, &lines);
        }
    });
    if done.is_none() {
        write_all(fd_of(stream), bytes);
    }
}

unsafe extern "C" fn write_out(_cookie: *mut c_void, buf: *const c_char, len: usize) -> isize {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    // SAFETY: stdio hands us `len` bytes at `buf`.
    let bytes = unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), len) };
    collect(Stream::Stdout, bytes);
    len as isize
}

unsafe extern "C" fn write_err(_cookie: *mut c_void, buf: *const c_char, len: usize) -> isize {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    // SAFETY: stdio hands us `len` bytes at `buf`.
    let bytes = unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), len) };
    collect(Stream::Stderr, bytes);
    len as isize
}

/// A write-only, unbuffered stream whose writes reach `write`.
fn cookie_stream(
    write: unsafe extern "C" fn(*mut c_void, *const c_char, usize) -> isize,
) -> Option<*mut libc::FILE> {
    let io = CookieIo {
        read: std::ptr::null(),
        write: Some(write),
        seek: std::ptr::null(),
        close: std::ptr::null(),
    };
    // SAFETY: a write-only stream without state.
    let f = unsafe { fopencookie(std::ptr::null_mut(), c"w".as_ptr(), io) };
    if f.is_null() {
        return None;
    }
    // SAFETY: `f` is a valid stream no one else uses yet.
    unsafe { libc::setvbuf(f, std::ptr::null_mut(), libc::_IONBF, 0) };
    Some(f)
}

/// What MPCRS_OUTPUT_LABELS and MPCRS_OUTPUT_DIR ask for, with every local
/// rank's files made; `None` when they ask for nothing.
fn presentation(local: &std::ops::Range<usize>) -> Option<Presentation> {
    use mpcrs_settings::variables as env;
    let labels = env::OUTPUT_LABELS.get().and_then(|l| Labels::from_name(&l));
    let dir = env::OUTPUT_DIR.get_os().map(PathBuf::from);
    if labels.is_none() && dir.is_none() {
        return None;
    }
    if let Some(dir) = &dir {
        for rank in local.clone() {
            for stream in [Stream::Stdout, Stream::Stderr] {
                let path = output::rank_file(dir, rank, stream);
                let made = path
                    .parent()
                    .map_or(Ok(()), std::fs::create_dir_all)
                    .and_then(|_| std::fs::File::create(&path));
                if let Err(e) = made {
                    mpcrs_settings::report!(
                        error,
                        "mpcrs: --output-filename: {}: {e}",
                        path.display()
                    );
                    mpcrs::abort_job(1);
                }
            }
        }
    }
    Some(Presentation { labels, dir })
}

/// Replaces libc's stdout by the per-rank line stream, and stderr too when
/// this process of several ranks (`local`) labels or files their output
/// (before the copies load: each copies libc's `stdout` and `stderr`
/// pointers).
pub(crate) fn install(local: std::ops::Range<usize>) {
    let Some(f) = cookie_stream(write_out) else {
        return;
    };
    // SAFETY: no rank runs yet, so no one else uses stdout while it is
    // switched (anything it held is flushed first).
    unsafe {
        libc::fflush(LIBC_STDOUT);
        LIBC_STDOUT = f;
    }
    SHARED_OUT.store(f, Ordering::Release);
    if local.len() < 2 {
        return;
    }
    let Some(how) = presentation(&local) else {
        return;
    };
    let _ = PRESENTATION.set(how);
    let Some(f) = cookie_stream(write_err) else {
        return;
    };
    // SAFETY: as for stdout.
    unsafe {
        libc::fflush(LIBC_STDERR);
        LIBC_STDERR = f;
    }
    SHARED_ERR.store(f, Ordering::Release);
}

/// Writes what the rank left after its last lines.
pub(crate) fn flush_rank(cell: &RankLibc) {
    if let Some(st) = cell.lock().as_mut() {
        let rank = st.rank;
        for stream in [Stream::Stdout, Stream::Stderr] {
            let rest = std::mem::take(st.pending(stream));
            if !rest.is_empty() {
                emit(rank, stream, &rest);
            }
        }
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
