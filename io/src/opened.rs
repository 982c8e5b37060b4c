//! A file as the process holds it: one descriptor shared by the ranks of the
//! process that opened it together, found by the context of the file's
//! communicator. The descriptor is a regular open file of the process, so a
//! checkpoint records it and a restart reopens it at its number like any other.

use std::collections::HashMap;
use std::ffi::CString;
use std::path::PathBuf;
use std::sync::{Arc, Weak};

use mpcrs::ErrorClass;
use mpcrs_scheduler::sync::Mutex;

use crate::collective::Rounds;
use crate::sys::last_error;

/// One opening of a file, shared by the ranks of this process that made it.
pub(crate) struct Opened {
    pub(crate) fd: i32,
    pub(crate) path: PathBuf,
    /// The collective accesses gathering their ranks' pieces.
    pub(crate) rounds: Rounds,
    /// Atomic mode between the ranks of this process (POSIX record locks
    /// exclude other processes only).
    pub(crate) atomic: Mutex<()>,
}

impl Drop for Opened {
    fn drop(&mut self) {
        // SAFETY: the descriptor is this opening's and nothing uses it now
        // (every rank holding the opening dropped it).
        unsafe { libc::close(self.fd) };
    }
}

/// Openings alive in this process, by the context of their communicator.
static OPENINGS: std::sync::Mutex<Option<HashMap<u64, Weak<Opened>>>> = std::sync::Mutex::new(None);

/// The opening of communicator `context` in this process: the one another
/// of its ranks made, or a new one opening `path` with `flags`.
pub(crate) fn join(
    context: u64,
    path: &str,
    flags: i32,
    members_here: usize,
) -> Result<Arc<Opened>, (ErrorClass, String)> {
    let mut all = OPENINGS.lock().unwrap();
    let all = all.get_or_insert_with(HashMap::new);
    all.retain(|_, w| w.strong_count() > 0);
    if let Some(o) = all.get(&context).and_then(Weak::upgrade) {
        return Ok(o);
    }
    let c = CString::new(path).map_err(|_| {
        (
            ErrorClass::BadFile,
            format!("file name {path:?} holds a NUL byte"),
        )
    })?;
    // SAFETY: open with a NUL-terminated path; the mode is for a new file.
    let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC, 0o666) };
    if fd < 0 {
        return Err(last_error(path));
    }
    let o = Arc::new(Opened {
        fd,
        path: PathBuf::from(path),
        rounds: Rounds::new(members_here),
        atomic: Mutex::new(()),
    });
    all.insert(context, Arc::downgrade(&o));
    Ok(o)
}
