//! The checkpoint directory of a job, claimed before anything starts: made if
//! missing (0700: its images hold the processes' memory), checked to be a
//! directory this user can write, and locked for the job's life so that a
//! second job naming it is refused instead of mixing its epochs in. The lock
//! is an flock on a file of the directory, held by mpcrs-run (or, in a job
//! another launcher started, by process 0): the kernel drops it when its
//! holder ends, however it ends.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The file whose lock marks the directory as a running job's.
pub const LOCK_FILE: &str = ".mpcrs-run.lock";

/// Holds the claim until dropped (or the process ends).
#[derive(Debug)]
pub struct Claim {
    _lock: File,
}

/// Claims `dir` for this job, whose holder is described as `holder` to a job
/// refused meanwhile ("mpcrs-run pid 12"); the error says why the directory
/// cannot hold checkpoints.
pub fn claim(dir: &Path, holder: &str) -> Result<Claim, String> {
    match std::fs::metadata(dir) {
        Ok(m) if !m.is_dir() => return Err("not a directory".into()),
        Ok(_) => {}
        Err(_) => crate::commit::private_dir_all(dir)
            .map_err(|e| format!("cannot make the directory: {e}"))?,
    }
    let path = dir.join(LOCK_FILE);
    let mut lock = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(&path)
        .map_err(|e| format!("cannot write there: {e}"))?;
    // SAFETY: flock on a descriptor this function owns.
    if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EWOULDBLOCK) {
            return Err(format!("cannot lock {}: {e}", path.display()));
        }
        let mut holder = String::new();
        let _ = lock.read_to_string(&mut holder);
        let holder = holder.trim();
        let who = if holder.is_empty() {
            "another job".to_string()
        } else {
            format!("another job ({holder})")
        };
        return Err(format!(
            "{who} is checkpointing into it; one job per checkpoint directory"
        ));
    }
    // Who holds it, for the message of a job refused meanwhile.
    let _ = lock.set_len(0);
    let _ = lock.rewind();
    let _ = write!(lock, "{holder}");
    Ok(Claim { _lock: lock })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("mpcrs-claim-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn a_claimed_directory_is_refused_until_released() {
        let d = scratch("twice");
        let first = claim(&d.join("a/b"), "the first job").expect("a new directory is claimed");
        let again = claim(&d.join("a/b"), "the second").unwrap_err();
        assert_eq!(
            again,
            "another job (the first job) is checkpointing into it; one job per checkpoint directory"
        );
        drop(first);
        claim(&d.join("a/b"), "the second").expect("released with its holder");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(d.join("a/b"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn what_cannot_hold_checkpoints_is_named() {
        let d = scratch("file");
        std::fs::write(&d, b"x").unwrap();
        assert_eq!(claim(&d, "t").unwrap_err(), "not a directory");
        assert_eq!(
            claim(Path::new("/dev/null"), "t").unwrap_err(),
            "not a directory"
        );
        assert!(claim(Path::new("/proc/self"), "t")
            .unwrap_err()
            .starts_with("cannot write there"));
        std::fs::remove_file(&d).unwrap();
    }
}
