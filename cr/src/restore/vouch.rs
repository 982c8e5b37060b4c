//! Images the launcher vouches for: it has just read and checksummed them
//! whole (it must, to choose each process's level and epoch), so the restore
//! reads each once more only to fill memory, not to checksum it again. A
//! vouch names the file's identity (device, inode, size, modification and
//! change times); a file that changed since, or another file at that path,
//! is checksummed as usual.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// One line per image: its identity, a tab, its path.
pub const VOUCHED_ENV: &str = mpcrs_settings::variables::RESTORE_VOUCHED.name;

/// What identifies this version of the file at `path`.
fn identity(path: &Path) -> std::io::Result<String> {
    let m = std::fs::metadata(path)?;
    Ok(format!(
        "{}:{}:{}:{}.{}:{}.{}",
        m.dev(),
        m.ino(),
        m.size(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec()
    ))
}

/// The value of [`VOUCHED_ENV`] for `images`, verified whole just before;
/// an image whose identity cannot be read is left out.
pub fn vouch_for<'a>(images: impl IntoIterator<Item = &'a Path>) -> String {
    let mut out = String::new();
    for path in images {
        let Ok(id) = identity(path) else { continue };
        let Some(p) = path.to_str().filter(|p| !p.contains('\n')) else {
            continue;
        };
        out.push_str(&id);
        out.push('\t');
        out.push_str(p);
        out.push('\n');
    }
    out
}

/// Whether `vouched` (a [`VOUCHED_ENV`] value) vouches for the file now at
/// `path`.
pub fn is_vouched(vouched: &str, path: &Path) -> bool {
    let Some(p) = path.to_str() else { return false };
    vouched.lines().any(|line| {
        line.split_once('\t')
            .is_some_and(|(id, at)| at == p && identity(path).is_ok_and(|now| now == id))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vouch_holds_until_the_file_changes() {
        let dir = std::env::temp_dir().join(format!("mpcrs-vouch-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = dir.join("a.img");
        let b = dir.join("b.img");
        std::fs::write(&a, b"one").unwrap();
        std::fs::write(&b, b"two").unwrap();
        let vouched = vouch_for([a.as_path()]);
        assert!(is_vouched(&vouched, &a));
        assert!(!is_vouched(&vouched, &b), "b was never vouched for");
        // Rewritten in place (same inode and size): its change time moves.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&a, b"eno").unwrap();
        assert!(!is_vouched(&vouched, &a));
        // Replaced by another file at the same path.
        let vouched = vouch_for([a.as_path()]);
        std::fs::rename(&b, &a).unwrap();
        assert!(!is_vouched(&vouched, &a));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
