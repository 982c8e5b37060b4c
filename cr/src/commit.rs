//! The checkpoint directory and its commit protocol.
//!
//! ```text
//! DIR/epoch-K/            a complete epoch: one image per process and MANIFEST
//! DIR/epoch-K.partial/    an epoch being written (or abandoned by a crash)
//! DIR/latest              "epoch-K": the newest epoch whose every file is durable
//! ```
//!
//! Every file is written under a temporary name, fsync'd and renamed; an epoch
//! directory is renamed from `.partial` only once its manifest is durable, and
//! `latest` moves to it only after that rename is durable. A crash at any point
//! leaves `latest` naming the previous complete epoch.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

pub const MANIFEST: &str = "MANIFEST";
pub const LATEST: &str = "latest";
const PARTIAL: &str = ".partial";

/// Name of epoch `k`'s directory.
pub fn epoch_name(k: u64) -> String {
    format!("epoch-{k}")
}

fn parse_epoch_name(name: &str) -> Option<u64> {
    name.strip_prefix("epoch-")?.parse().ok()
}

/// fsync of a directory, so that the renames inside it are durable.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Makes `dir` and its missing parents readable by this user only (0700,
/// whatever the umask): checkpoint data holds the processes' memory and
/// their environment.
pub fn private_dir_all(dir: &Path) -> io::Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// Creates (or truncates) `path` readable and writable by this user only
/// (0600, whatever the umask).
pub fn create_private(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
}

/// Writes `bytes` to `dir/name` durably: a temporary file, fsync, rename, fsync
/// of the directory. Readers see the old file or the whole new one.
pub fn write_durably(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<()> {
    write_parts_durably(dir, name, &[bytes])
}

/// [`write_durably`] of the concatenation of `parts`, written as they are
/// (large parts are not copied together first).
pub fn write_parts_durably(dir: &Path, name: &str, parts: &[&[u8]]) -> io::Result<()> {
    let tmp = dir.join(format!("{name}.tmp"));
    let mut f = io::BufWriter::with_capacity(1 << 20, create_private(&tmp)?);
    for p in parts {
        f.write_all(p)?;
    }
    let f = f.into_inner().map_err(|e| e.into_error())?;
    f.sync_all()?;
    drop(f);
    fs::rename(&tmp, dir.join(name))?;
    sync_dir(dir)
}

/// A checkpoint directory (`--checkpoint DIR`).
#[derive(Debug, Clone)]
pub struct CheckpointDir {
    root: PathBuf,
}

impl CheckpointDir {
    /// Opens `root`, creating it if needed.
    pub fn create(root: &Path) -> io::Result<CheckpointDir> {
        private_dir_all(root)?;
        Ok(CheckpointDir {
            root: root.to_path_buf(),
        })
    }

    /// Opens an existing checkpoint directory.
    pub fn open(root: &Path) -> io::Result<CheckpointDir> {
        if !root.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("{}: no such checkpoint directory", root.display()),
            ));
        }
        Ok(CheckpointDir {
            root: root.to_path_buf(),
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn epoch_dir(&self, k: u64) -> PathBuf {
        self.root.join(epoch_name(k))
    }

    /// Where epoch `k` is written until its commit (every process of a job
    /// writes its image there; one of them begins and commits the epoch).
    pub fn partial_dir(&self, k: u64) -> PathBuf {
        self.root.join(format!("{}{PARTIAL}", epoch_name(k)))
    }

    /// The epoch `latest` names, if any.
    pub fn latest(&self) -> io::Result<Option<u64>> {
        let path = self.root.join(LATEST);
        match fs::read_to_string(&path) {
            Ok(text) => parse_epoch_name(text.trim()).map(Some).ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "{}: does not name an epoch: {:?}",
                        path.display(),
                        text.trim()
                    ),
                )
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Complete epochs (renamed from partial, manifest present), oldest first.
    pub fn epochs(&self) -> io::Result<Vec<u64>> {
        let mut v: Vec<u64> = fs::read_dir(&self.root)?
            .filter_map(|e| e.ok())
            .filter_map(|e| parse_epoch_name(&e.file_name().to_string_lossy()))
            .filter(|&k| self.epoch_dir(k).join(MANIFEST).is_file())
            .collect();
        v.sort_unstable();
        Ok(v)
    }

    /// The number the next epoch takes: above every epoch, complete or not.
    pub fn next_epoch(&self) -> io::Result<u64> {
        let mut next = 1;
        for e in fs::read_dir(&self.root)? {
            let name = e?.file_name().to_string_lossy().into_owned();
            let base = name.strip_suffix(PARTIAL).unwrap_or(&name);
            if let Some(k) = parse_epoch_name(base) {
                next = next.max(k + 1);
            }
        }
        Ok(next)
    }

    /// Starts writing epoch `k` in `epoch-K.partial/`, removing what a crashed
    /// attempt left there.
    pub fn begin(&self, k: u64) -> io::Result<PendingEpoch> {
        let partial = self.partial_dir(k);
        if partial.exists() {
            fs::remove_dir_all(&partial)?;
        }
        if self.epoch_dir(k).exists() {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!(
                    "{}: epoch {k} is already complete",
                    self.epoch_dir(k).display()
                ),
            ));
        }
        fs::DirBuilder::new().mode(0o700).create(&partial)?;
        Ok(PendingEpoch {
            store: self.clone(),
            epoch: k,
            partial,
        })
    }

    /// Removes complete epochs older than the newest `keep` (never `latest`), and
    /// abandoned partial ones below the newest complete epoch.
    pub fn prune(&self, keep: usize) -> io::Result<()> {
        self.prune_except(keep, &[])
    }

    /// The complete epochs pruning keeps: the newest `keep`, `latest`, those
    /// of `also`, and every epoch whose images theirs apply to (the `base`
    /// of an epoch of incremental images).
    pub fn kept(&self, keep: usize, also: &[u64]) -> io::Result<Vec<u64>> {
        let latest = self.latest()?;
        let epochs = self.epochs()?;
        let cut = epochs.len().saturating_sub(keep.max(1));
        let mut kept: Vec<u64> = epochs[cut..].to_vec();
        kept.extend(latest);
        kept.extend(also);
        for k in kept.clone() {
            if let Ok(m) = mpcrs_settings::JobManifest::read(&self.epoch_dir(k).join(MANIFEST)) {
                kept.extend(m.base);
            }
        }
        kept.sort_unstable();
        kept.dedup();
        Ok(kept)
    }

    /// [`CheckpointDir::prune`], keeping the epochs of `also` too (the newest
    /// epoch whose images all reached this directory, when newer ones are
    /// only on node-local storage), and what every kept epoch needs.
    pub fn prune_except(&self, keep: usize, also: &[u64]) -> io::Result<()> {
        let kept = self.kept(keep, also)?;
        let epochs = self.epochs()?;
        for &k in &epochs {
            if !kept.contains(&k) {
                fs::remove_dir_all(self.epoch_dir(k))?;
            }
        }
        if let Some(newest) = epochs.last() {
            for e in fs::read_dir(&self.root)? {
                let name = e?.file_name().to_string_lossy().into_owned();
                if let Some(k) = name.strip_suffix(PARTIAL).and_then(parse_epoch_name) {
                    if k < *newest {
                        fs::remove_dir_all(self.root.join(&name))?;
                    }
                }
            }
        }
        sync_dir(&self.root)
    }
}

/// An epoch being written. Dropping it without [`PendingEpoch::commit`] leaves
/// the previous epoch as the restart point.
pub struct PendingEpoch {
    store: CheckpointDir,
    epoch: u64,
    partial: PathBuf,
}

impl PendingEpoch {
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Where the epoch's files are written until the commit.
    pub fn dir(&self) -> &Path {
        &self.partial
    }

    /// Makes the epoch the restart point: manifest, directory rename, `latest`,
    /// each durable before the next step.
    pub fn commit(self, manifest: &[u8]) -> io::Result<u64> {
        write_durably(&self.partial, MANIFEST, manifest)?;
        let done = self.store.epoch_dir(self.epoch);
        fs::rename(&self.partial, &done)?;
        sync_dir(self.store.root())?;
        write_durably(
            self.store.root(),
            LATEST,
            format!("{}\n", epoch_name(self.epoch)).as_bytes(),
        )?;
        Ok(self.epoch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let p = std::env::temp_dir().join(format!("mpcrs-commit-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&p);
        p
    }

    #[test]
    fn an_uncommitted_epoch_leaves_the_previous_one_as_latest() {
        let root = scratch("uncommitted");
        let dir = CheckpointDir::create(&root).unwrap();
        assert_eq!(dir.latest().unwrap(), None);
        let e = dir.begin(dir.next_epoch().unwrap()).unwrap();
        write_durably(e.dir(), "process-0.img", b"one").unwrap();
        assert_eq!(e.commit(b"manifest 1").unwrap(), 1);
        let e = dir.begin(dir.next_epoch().unwrap()).unwrap();
        assert_eq!(e.epoch(), 2);
        write_durably(e.dir(), "process-0.img", b"two").unwrap();
        drop(e);
        assert_eq!(dir.latest().unwrap(), Some(1));
        assert_eq!(dir.epochs().unwrap(), vec![1]);
        assert_eq!(
            fs::read(dir.epoch_dir(1).join("process-0.img")).unwrap(),
            b"one"
        );
        // The abandoned number is not reused; a retry starts clean.
        assert_eq!(dir.next_epoch().unwrap(), 3);
        let e = dir.begin(2).unwrap();
        assert_eq!(fs::read_dir(e.dir()).unwrap().count(), 0);
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn prune_keeps_the_newest_epochs() {
        let root = scratch("prune");
        let dir = CheckpointDir::create(&root).unwrap();
        for _ in 0..4 {
            let e = dir.begin(dir.next_epoch().unwrap()).unwrap();
            e.commit(b"m").unwrap();
        }
        let abandoned = dir.begin(5).unwrap();
        drop(abandoned);
        dir.prune(2).unwrap();
        assert_eq!(dir.epochs().unwrap(), vec![3, 4]);
        assert_eq!(dir.latest().unwrap(), Some(4));
        // The partial epoch 5 is newer than every complete one: it may be in progress.
        assert!(root.join("epoch-5.partial").is_dir());
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_damaged_latest_is_reported_with_its_path() {
        let root = scratch("latest");
        let dir = CheckpointDir::create(&root).unwrap();
        fs::write(root.join(LATEST), "garbage").unwrap();
        let e = dir.latest().unwrap_err().to_string();
        assert!(e.contains("latest: does not name an epoch"), "{e}");
        fs::remove_dir_all(&root).unwrap();
    }
}
