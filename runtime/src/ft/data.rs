//! The file of one process's protected data in one checkpoint: a header, then
//! one section per rank of the process, each with its own CRC-32C, so that a
//! damaged or truncated file is told from a whole one (and the levels can
//! recover it) and a rank reads only its own section.
//!
//! ```text
//! header (64 bytes): "MPCRSFT1", sections u32, 0 u32, total length u64, CRC of these 24 bytes u32
//! section:           "MPCRSFTS", rank u32, variables u32, payload length u64, CRC of the payload u32, 0 u32
//!   payload:         per variable: id i32, element size u32, count u64, bytes u64; then each one's bytes
//! ```
//! Integers are little-endian.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::datatype::{bytes_of, Equivalence};

const FILE_MAGIC: &[u8; 8] = b"MPCRSFT1";
const SECTION_MAGIC: &[u8; 8] = b"MPCRSFTS";
/// Where the first section starts.
pub(crate) const HEADER_LEN: u64 = 64;
const SECTION_HEADER_LEN: u64 = 32;
const ENTRY_LEN: u64 = 24;

/// One protected variable as a rank writes it.
#[derive(Debug, Clone, Copy)]
pub struct Var<'a> {
    pub id: i32,
    /// The size of one element (of the variable's FTI type).
    pub elem_size: u32,
    pub bytes: &'a [u8],
}

impl<'a> Var<'a> {
    /// A slice of plain data protected as `id`.
    pub fn slice<T: Equivalence>(id: i32, s: &'a [T]) -> Var<'a> {
        Var {
            id,
            elem_size: std::mem::size_of::<T>() as u32,
            bytes: bytes_of(s),
        }
    }

    /// A value of plain data protected as `id`.
    pub fn value<T: Equivalence>(id: i32, v: &'a T) -> Var<'a> {
        Self::slice(id, std::slice::from_ref(v))
    }
}

/// One variable as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    pub id: i32,
    pub elem_size: u32,
    pub bytes: Vec<u8>,
}

/// The length of the section of `vars`.
pub(crate) fn section_len(vars: &[Var<'_>]) -> u64 {
    SECTION_HEADER_LEN
        + ENTRY_LEN * vars.len() as u64
        + vars.iter().map(|v| v.bytes.len() as u64).sum::<u64>()
}

/// Writes rank `rank`'s section of `vars` into `file` at `offset`.
pub(crate) fn write_section(
    file: &File,
    offset: u64,
    rank: u32,
    vars: &[Var<'_>],
) -> io::Result<()> {
    let mut table = Vec::with_capacity(vars.len() * ENTRY_LEN as usize);
    for v in vars {
        table.extend_from_slice(&v.id.to_le_bytes());
        table.extend_from_slice(&v.elem_size.to_le_bytes());
        let count = v.bytes.len() as u64 / u64::from(v.elem_size.max(1));
        table.extend_from_slice(&count.to_le_bytes());
        table.extend_from_slice(&(v.bytes.len() as u64).to_le_bytes());
    }
    let mut crc = crc32c::crc32c(&table);
    let mut at = offset + SECTION_HEADER_LEN;
    file.write_all_at(&table, at)?;
    at += table.len() as u64;
    for v in vars {
        crc = crc32c::crc32c_append(crc, v.bytes);
        file.write_all_at(v.bytes, at)?;
        at += v.bytes.len() as u64;
    }
    let mut head = Vec::with_capacity(SECTION_HEADER_LEN as usize);
    head.extend_from_slice(SECTION_MAGIC);
    head.extend_from_slice(&rank.to_le_bytes());
    head.extend_from_slice(&(vars.len() as u32).to_le_bytes());
    head.extend_from_slice(&(at - offset - SECTION_HEADER_LEN).to_le_bytes());
    head.extend_from_slice(&crc.to_le_bytes());
    head.extend_from_slice(&0u32.to_le_bytes());
    file.write_all_at(&head, offset)
}

/// Writes the file's header: `sections` sections, `total` bytes in all.
pub(crate) fn write_header(file: &File, sections: u32, total: u64) -> io::Result<()> {
    let mut head = vec![0u8; HEADER_LEN as usize];
    head[..8].copy_from_slice(FILE_MAGIC);
    head[8..12].copy_from_slice(&sections.to_le_bytes());
    head[16..24].copy_from_slice(&total.to_le_bytes());
    let crc = crc32c::crc32c(&head[..24]);
    head[24..28].copy_from_slice(&crc.to_le_bytes());
    file.write_all_at(&head, 0)
}

fn bad(what: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Reads the header of `file`: its number of sections (its length checked).
fn read_header(file: &File) -> io::Result<u32> {
    let mut head = [0u8; HEADER_LEN as usize];
    file.read_exact_at(&mut head, 0)
        .map_err(|e| bad(format!("no whole header ({e})")))?;
    if &head[..8] != FILE_MAGIC {
        return Err(bad("not a file of protected data (wrong magic)".into()));
    }
    if crc32c::crc32c(&head[..24]) != u32_at(&head, 24) {
        return Err(bad("header checksum mismatch".into()));
    }
    let total = u64_at(&head, 16);
    let len = file.metadata()?.len();
    if len != total {
        return Err(bad(format!("{len} bytes where the header says {total}")));
    }
    Ok(u32_at(&head, 8))
}

/// A section: its rank, variables and payload, read at `offset`; the offset
/// of the next one.
struct Section {
    rank: u32,
    variables: u32,
    payload: Vec<u8>,
    next: u64,
}

fn read_section(file: &File, offset: u64, want_payload: bool) -> io::Result<(Section, bool)> {
    let mut head = [0u8; SECTION_HEADER_LEN as usize];
    file.read_exact_at(&mut head, offset)
        .map_err(|e| bad(format!("section at byte {offset}: {e}")))?;
    if &head[..8] != SECTION_MAGIC {
        return Err(bad(format!("section at byte {offset}: wrong magic")));
    }
    let len = u64_at(&head, 16);
    let mut s = Section {
        rank: u32_at(&head, 8),
        variables: u32_at(&head, 12),
        payload: Vec::new(),
        next: offset + SECTION_HEADER_LEN + len,
    };
    if !want_payload {
        return Ok((s, false));
    }
    let mut payload = vec![0u8; len as usize];
    file.read_exact_at(&mut payload, offset + SECTION_HEADER_LEN)
        .map_err(|e| bad(format!("section of rank {} at byte {offset}: {e}", s.rank)))?;
    let whole = crc32c::crc32c(&payload) == u32_at(&head, 24);
    s.payload = payload;
    Ok((s, whole))
}

/// Checks every section of the file at `path`: `Ok` when it is whole, else
/// what is wrong.
pub fn check(path: &Path) -> Result<(), String> {
    let file = File::open(path).map_err(|e| e.to_string())?;
    let sections = read_header(&file).map_err(|e| e.to_string())?;
    let mut at = HEADER_LEN;
    for _ in 0..sections {
        let (s, whole) = read_section(&file, at, true).map_err(|e| e.to_string())?;
        if !whole {
            return Err(format!(
                "checksum mismatch in the section of rank {}",
                s.rank
            ));
        }
        at = s.next;
    }
    Ok(())
}

/// Reads rank `rank`'s variables from the file at `path`, its checksum
/// verified.
pub fn read_rank(path: &Path, rank: u32) -> io::Result<Vec<Stored>> {
    let file = File::open(path)?;
    let sections = read_header(&file)?;
    let mut at = HEADER_LEN;
    for _ in 0..sections {
        let (s, _) = read_section(&file, at, false)?;
        if s.rank != rank {
            at = s.next;
            continue;
        }
        let (s, whole) = read_section(&file, at, true)?;
        if !whole {
            return Err(bad(format!(
                "checksum mismatch in the section of rank {rank}"
            )));
        }
        return parse_payload(&s.payload, s.variables);
    }
    Err(bad(format!("no section of rank {rank}")))
}

fn parse_payload(payload: &[u8], variables: u32) -> io::Result<Vec<Stored>> {
    let mut r = payload;
    let mut table = vec![0u8; variables as usize * ENTRY_LEN as usize];
    r.read_exact(&mut table)
        .map_err(|_| bad("variable table cut short".into()))?;
    let mut out = Vec::with_capacity(variables as usize);
    for e in table.chunks_exact(ENTRY_LEN as usize) {
        let bytes = u64_at(e, 16) as usize;
        if bytes > r.len() {
            return Err(bad("variable data cut short".into()));
        }
        let (data, rest) = r.split_at(bytes);
        out.push(Stored {
            id: i32::from_le_bytes(e[..4].try_into().expect("4 bytes")),
            elem_size: u32_at(e, 4),
            bytes: data.to_vec(),
        });
        r = rest;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_written_apart_read_back_and_damage_is_found() {
        let path = std::env::temp_dir().join(format!("mpcrs-ft-data-{}", std::process::id()));
        let a = [1u8, 2, 3, 4, 5, 6, 7, 8];
        let b = 7i32.to_le_bytes();
        let v0 = [
            Var {
                id: 1,
                elem_size: 8,
                bytes: &a,
            },
            Var {
                id: 0,
                elem_size: 4,
                bytes: &b,
            },
        ];
        let v1 = [Var {
            id: 1,
            elem_size: 1,
            bytes: &a[..3],
        }];
        let (l0, l1) = (section_len(&v0), section_len(&v1));
        let f = File::create(&path).unwrap();
        // Rank 1's section first, as ranks write at once, each at its offset.
        write_section(&f, HEADER_LEN + l0, 5, &v1).unwrap();
        write_section(&f, HEADER_LEN, 4, &v0).unwrap();
        write_header(&f, 2, HEADER_LEN + l0 + l1).unwrap();
        drop(f);
        check(&path).unwrap();
        let r4 = read_rank(&path, 4).unwrap();
        assert_eq!(
            r4[0],
            Stored {
                id: 1,
                elem_size: 8,
                bytes: a.to_vec()
            }
        );
        assert_eq!(r4[1].bytes, b);
        assert_eq!(read_rank(&path, 5).unwrap()[0].bytes, &a[..3]);
        assert!(read_rank(&path, 6).is_err());
        // One byte flipped in rank 5's data.
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert!(check(&path).unwrap_err().contains("rank 5"));
        assert!(read_rank(&path, 5).is_err());
        read_rank(&path, 4).unwrap();
        // Cut short.
        std::fs::write(&path, &bytes[..bytes.len() - 2]).unwrap();
        assert!(check(&path).unwrap_err().contains("header says"));
        let _ = std::fs::remove_file(&path);
    }
}
