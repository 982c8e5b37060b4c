//! Flushed checkpoints: one file per rank and checkpoint,
//! `DIR/craas/rank-R/NAME.craas`, replaced durably (a temporary file, fsync,
//! rename, fsync of the directory), so a reader finds the previous flush or
//! the whole new one. The file: magic, version, a CRC-32C of the rest, then
//! a frame as [`crate::wire`] lays it out: the checkpoint as a change from
//! nothing (header), its arrays whole (payload).

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::data::{Change, Checkpoint};

const MAGIC: &[u8; 8] = b"MPCRSCRA";
const VERSION: u32 = 1;

/// The header of a flushed file.
#[derive(Debug, Serialize, Deserialize)]
struct FileHeader {
    rank: u32,
    ckpt: String,
    change: Change,
}

/// The directory of `rank`'s flushed checkpoints under the global directory
/// `dir`.
pub fn rank_dir(dir: &Path, rank: u32) -> PathBuf {
    dir.join("craas").join(format!("rank-{rank}"))
}

/// The file of `rank`'s checkpoint `ckpt` under `dir`.
pub fn path(dir: &Path, rank: u32, ckpt: &str) -> PathBuf {
    rank_dir(dir, rank).join(format!("{ckpt}.craas"))
}

/// Writes `c`, checkpoint `ckpt` of `rank`, durably under `dir`; returns the
/// bytes written.
pub fn write(dir: &Path, rank: u32, ckpt: &str, c: &Checkpoint) -> io::Result<u64> {
    let arrays = c.payload();
    let header = FileHeader {
        rank,
        ckpt: ckpt.to_string(),
        change: c.whole(),
    };
    let start = crate::wire::frame_start(&header, &arrays)?;
    let crc = arrays.iter().fold(crc32c::crc32c(&start), |crc, a| {
        crc32c::crc32c_append(crc, a)
    });
    let (version, crc) = (VERSION.to_le_bytes(), crc.to_le_bytes());
    let mut parts: Vec<&[u8]> = vec![MAGIC, &version, &crc, &start];
    parts.extend(&arrays);
    let rdir = rank_dir(dir, rank);
    mpcrs_cr::commit::private_dir_all(&rdir)?;
    mpcrs_cr::commit::write_parts_durably(&rdir, &format!("{ckpt}.craas"), &parts)?;
    Ok(parts.iter().map(|p| p.len() as u64).sum())
}

/// Reads `rank`'s checkpoint `ckpt` under `dir`: `Ok(None)` when there is no
/// file, an error naming the file when it is damaged or of another rank.
pub fn read(dir: &Path, rank: u32, ckpt: &str) -> Result<Option<Checkpoint>, String> {
    let p = path(dir, rank, ckpt);
    let mut f = match fs::File::open(&p) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", p.display())),
    };
    let bad = |what: &str| format!("{}: {what}", p.display());
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes).map_err(|e| bad(&e.to_string()))?;
    if bytes.len() < 16 || &bytes[..8] != MAGIC {
        return Err(bad("not a flushed checkpoint (no magic)"));
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().unwrap());
    if version != VERSION {
        return Err(bad(&format!("version {version}, not {VERSION}")));
    }
    let crc = u32::from_le_bytes(bytes[12..16].try_into().unwrap());
    if crc32c::crc32c(&bytes[16..]) != crc {
        return Err(bad("damaged (its CRC-32C does not match)"));
    }
    let (h, payload): (FileHeader, Vec<u8>) =
        crate::wire::receive(&mut &bytes[16..]).map_err(|e| bad(&e.to_string()))?;
    if h.rank != rank || h.ckpt != ckpt {
        return Err(bad(&format!(
            "holds checkpoint {:?} of rank {}",
            h.ckpt, h.rank
        )));
    }
    let mut c = Checkpoint::default();
    c.apply(&h.change, &payload).map_err(|e| bad(&e))?;
    Ok(Some(c))
}

/// The commit that `rank`'s flushed checkpoint `ckpt` under `dir` holds, read
/// from its header alone (the data is checked when it is read); `None` when
/// there is no file or its header does not read.
pub fn commit_of(dir: &Path, rank: u32, ckpt: &str) -> Option<u64> {
    let mut f = fs::File::open(path(dir, rank, ckpt)).ok()?;
    let mut start = [0u8; 20];
    f.read_exact(&mut start).ok()?;
    if &start[..8] != MAGIC {
        return None;
    }
    let n = u32::from_le_bytes(start[16..20].try_into().unwrap());
    if n > crate::wire::MAX_HEADER {
        return None;
    }
    let mut head = vec![0u8; n as usize];
    f.read_exact(&mut head).ok()?;
    let h: FileHeader = bincode::deserialize(&head).ok()?;
    (h.rank == rank && h.ckpt == ckpt).then_some(h.change.commit)
}

/// Removes `rank`'s flushed checkpoint `ckpt` under `dir`, if any.
pub fn remove(dir: &Path, rank: u32, ckpt: &str) -> io::Result<()> {
    match fs::remove_file(path(dir, rank, ckpt)) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::ArrayChange;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("craas-files-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn a_flushed_checkpoint_reads_back_and_damage_is_named() {
        let dir = scratch("rt");
        let mut c = Checkpoint::default();
        let data: Vec<u8> = (0..100_000u32).map(|i| i as u8).collect();
        c.apply(
            &Change {
                commit: 5,
                indices: vec![("k".into(), 42)],
                arrays: vec![ArrayChange {
                    name: "a".into(),
                    len: data.len() as u64,
                    blocks: vec![0, 1],
                }],
            },
            &data,
        )
        .unwrap();
        write(&dir, 2, "mm", &c).unwrap();
        assert_eq!(commit_of(&dir, 2, "mm"), Some(5));
        assert_eq!(commit_of(&dir, 3, "mm"), None);
        assert_eq!(read(&dir, 2, "mm").unwrap(), Some(c));
        assert_eq!(read(&dir, 2, "other").unwrap(), None);
        let p = path(&dir, 2, "mm");
        let mut bytes = fs::read(&p).unwrap();
        let n = bytes.len();
        bytes[n - 7] ^= 1;
        fs::write(&p, &bytes).unwrap();
        let e = read(&dir, 2, "mm").unwrap_err();
        assert!(e.contains("CRC-32C") && e.contains("mm.craas"), "{e}");
        fs::copy(&p, path(&dir, 2, "x")).unwrap();
        remove(&dir, 2, "mm").unwrap();
        remove(&dir, 2, "mm").unwrap();
        let _ = fs::remove_dir_all(&dir);
    }
}
