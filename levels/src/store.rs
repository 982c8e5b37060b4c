//! Where the levels keep an epoch's files. L1 (and the L2 copies and L3
//! parity a process keeps) live on each node's local storage, under
//! `LOCAL/node-N/epoch-K/`; L4 is the global checkpoint directory's
//! `epoch-K/`. Files are written under a temporary name, made durable, then
//! renamed: a file with its final name is whole.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use crate::direct::{AlignedBuf, DirectFile};
use crate::partner::{give_name, with_path};
use crate::transport::{blocking, stopped_error, Io};

/// The node-local storage of a job's checkpoints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalStore {
    root: PathBuf,
}

impl LocalStore {
    pub fn new(root: impl Into<PathBuf>) -> LocalStore {
        LocalStore { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// What node `node` keeps.
    pub fn node_dir(&self, node: u32) -> PathBuf {
        self.root.join(format!("node-{node}"))
    }

    pub fn epoch_dir(&self, node: u32, epoch: u64) -> PathBuf {
        self.node_dir(node).join(format!("epoch-{epoch}"))
    }

    /// Process `process`'s L1 image of `epoch` on `node`.
    pub fn image(&self, node: u32, epoch: u64, process: usize) -> PathBuf {
        self.epoch_dir(node, epoch).join(image_name(process))
    }

    /// Where the process on `node` that is `process`'s partner keeps its L2
    /// copy of `epoch`.
    pub fn partner_copy(&self, node: u32, epoch: u64, process: usize) -> PathBuf {
        self.epoch_dir(node, epoch).join(partner_copy_name(process))
    }

    /// Where process `process` (on `node`) keeps its L3 parity shard of `epoch`.
    pub fn parity(&self, node: u32, epoch: u64, process: usize) -> PathBuf {
        self.epoch_dir(node, epoch).join(parity_name(process))
    }

    /// Removes the files named `names` of the epochs of `node` older than
    /// `newest` and not in `kept`, and epoch directories left empty.
    pub fn prune(&self, node: u32, names: &[String], newest: u64, kept: &[u64]) -> io::Result<()> {
        let dir = self.node_dir(node);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Ok(());
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(k) = name
                .strip_prefix("epoch-")
                .and_then(|k| k.parse::<u64>().ok())
            else {
                continue;
            };
            if k < newest && !kept.contains(&k) {
                for name in names {
                    let _ = std::fs::remove_file(e.path().join(name));
                }
                let _ = std::fs::remove_dir(e.path());
            }
        }
        Ok(())
    }
}

/// The file name of process `process`'s L3 parity shard.
pub fn parity_name(process: usize) -> String {
    format!("parity-{process}.rs")
}

/// The file name of the L2 copy of process `process`'s image.
pub fn partner_copy_name(process: usize) -> String {
    format!("partner-of-{process}.img")
}

/// The file name of process `process`'s image in an epoch directory.
pub fn image_name(process: usize) -> String {
    format!("process-{process}.img")
}

/// The node-local root for a job whose global directory is `global`, when
/// none is given: under the temporary directory, named after the user and the
/// global directory, so that every run of the job finds it again.
pub fn default_local_root(global: &Path) -> PathBuf {
    let global = std::path::absolute(global).unwrap_or_else(|_| global.to_path_buf());
    // FNV-1a of the path: stable across runs and builds.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in global.as_os_str().as_encoded_bytes() {
        h = (h ^ *b as u64).wrapping_mul(0x0000_0100_0000_01b3);
    }
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    std::env::temp_dir()
        .join(format!("mpcrs-{uid}"))
        .join(format!("{h:016x}"))
}

/// Copies the file at `from` to `to` (durable, then renamed), in pieces run
/// through `io`; returns the bytes of data copied. L4's flush of an L1 image.
/// Holes stay holes: an image holds the address space of every rank's stack,
/// mostly never touched (65,536 ranks: 64 GiB of holes around 600 MB of data).
pub fn copy_durably(io: &dyn Io, from: &Path, to: &Path) -> io::Result<u64> {
    let partial = to.with_extension("partial");
    let (src, dst, len) = blocking(io, || {
        let (len, src) = DirectFile::open_sized(from)?;
        let dst = DirectFile::create(&partial)?;
        dst.file().set_len(len)?;
        Ok((src, dst, len))
    })
    .map_err(|e| with_path(e, to))?;
    let mut buf = AlignedBuf::new(crate::partner::CHUNK);
    let mut total = 0u64;
    let mut at = 0u64;
    while at < len {
        let Some((start, end)) = next_data(src.file(), at, len).map_err(|e| with_path(e, to))?
        else {
            break;
        };
        let mut pos = start;
        while pos < end {
            let want = ((end - pos) as usize).min(crate::partner::CHUNK);
            blocking(io, || {
                src.read_exact_at(&mut buf, want, pos)?;
                dst.write_all_at(&buf[..want], pos)
            })
            .map_err(|e| with_path(e, to))?;
            pos += want as u64;
            total += want as u64;
            io.pause();
            if io.stopped() {
                drop(dst);
                let _ = std::fs::remove_file(&partial);
                return Err(stopped_error());
            }
        }
        at = end;
    }
    blocking(io, || give_name(dst.file(), &partial, to)).map_err(|e| with_path(e, to))?;
    Ok(total)
}

/// The next range of `file` holding data at or after `at` (below `len`), as
/// the file system reports it (SEEK_DATA, SEEK_HOLE); `None` past the last.
/// (mpcrs-cr's `holes` answers the same for the readers of an image; this
/// crate does not depend on the image crate.)
fn next_data(file: &File, at: u64, len: u64) -> io::Result<Option<(u64, u64)>> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: lseek on a descriptor we own; it only moves the file offset,
    // which this module never relies on (reads and writes are positioned).
    let start = unsafe { libc::lseek(fd, at as libc::off_t, libc::SEEK_DATA) };
    if start < 0 {
        let e = io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::ENXIO) => Ok(None),
            // A file system without SEEK_DATA: all of it is data.
            Some(libc::EINVAL) => Ok(Some((at, len))),
            _ => Err(e),
        };
    }
    // SAFETY: as above.
    let end = unsafe { libc::lseek(fd, start, libc::SEEK_HOLE) };
    if end < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Some((start as u64, (end as u64).min(len))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PlainIo;

    #[test]
    fn images_are_copied_durably_and_old_epochs_pruned() {
        let root = std::env::temp_dir().join(format!("mpcrs-levels-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let store = LocalStore::new(&root);
        for k in 1..=3 {
            let img = store.image(1, k, 2);
            std::fs::create_dir_all(img.parent().unwrap()).unwrap();
            std::fs::write(&img, vec![k as u8; 3 << 20]).unwrap();
        }
        let to = root.join("global-3.img");
        assert_eq!(
            copy_durably(&PlainIo, &store.image(1, 3, 2), &to).unwrap(),
            3 << 20
        );
        assert_eq!(std::fs::read(&to).unwrap(), vec![3u8; 3 << 20]);
        store.prune(1, &[image_name(2)], 3, &[1]).unwrap();
        assert!(store.epoch_dir(1, 1).exists() && !store.epoch_dir(1, 2).exists());
        store.prune(1, &[image_name(2)], 3, &[]).unwrap();
        assert!(!store.epoch_dir(1, 1).exists());
        assert!(store.image(1, 3, 2).exists());
        assert_eq!(
            default_local_root(Path::new("/a/b")),
            default_local_root(Path::new("/a/b"))
        );
        assert_ne!(
            default_local_root(Path::new("/a/b")),
            default_local_root(Path::new("/a/c"))
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_copy_keeps_the_holes_of_a_sparse_image() {
        use std::os::unix::fs::{FileExt, MetadataExt};
        let root = std::env::temp_dir().join(format!("mpcrs-levels-sparse-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let from = root.join("sparse.img");
        let f = File::create(&from).unwrap();
        // 1 GiB of address space, data in three places (one at the very end).
        let len = 1u64 << 30;
        f.set_len(len).unwrap();
        for (at, byte) in [(0u64, 1u8), (300 << 20, 2), (len - 4096, 3)] {
            f.write_all_at(&[byte; 4096], at).unwrap();
        }
        f.sync_all().unwrap();
        let to = root.join("copy.img");
        let copied = copy_durably(&PlainIo, &from, &to).unwrap();
        assert!(copied < 4 << 20, "copied {copied} bytes of data");
        let meta = std::fs::metadata(&to).unwrap();
        assert_eq!(meta.len(), len);
        assert!(
            meta.blocks() * 512 < 16 << 20,
            "{} bytes allocated",
            meta.blocks() * 512
        );
        let c = File::open(&to).unwrap();
        for (at, byte) in [(0u64, 1u8), (300 << 20, 2), (len - 4096, 3), (100 << 20, 0)] {
            let mut page = [9u8; 4096];
            c.read_exact_at(&mut page, at).unwrap();
            assert!(page.iter().all(|&b| b == byte), "at {at}");
        }
        std::fs::remove_dir_all(&root).unwrap();
    }
}
