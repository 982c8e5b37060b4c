//! Just enough ELF (64-bit, little-endian) for the launcher to tell C MPI programs
//! from Rust ones, and for the C ABI's loader to load a program once per rank: find
//! its `main`, clear the DF_1_PIE flag that makes dlopen refuse an executable, and
//! point a dependency on MPICH's library at ours.

use std::fmt;

#[derive(Debug)]
pub struct ElfError(pub String);

impl fmt::Display for ElfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn err<T>(msg: impl Into<String>) -> Result<T, ElfError> {
    Err(ElfError(msg.into()))
}

const ET_EXEC: u16 = 2;
const ET_DYN: u16 = 3;
const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;
const SHT_SYMTAB: u32 = 2;
const SHT_DYNSYM: u32 = 11;
const DT_NULL: u64 = 0;
const DT_NEEDED: u64 = 1;
const DT_STRTAB: u64 = 5;
const DT_FLAGS_1: u64 = 0x6fff_fffb;
const DF_1_PIE: u64 = 0x0800_0000;

fn u16_at(b: &[u8], o: usize) -> Result<u16, ElfError> {
    b.get(o..o + 2)
        .map(|s| u16::from_le_bytes(s.try_into().unwrap()))
        .ok_or_else(|| ElfError(format!("truncated ELF file at offset {o}")))
}
fn u32_at(b: &[u8], o: usize) -> Result<u32, ElfError> {
    b.get(o..o + 4)
        .map(|s| u32::from_le_bytes(s.try_into().unwrap()))
        .ok_or_else(|| ElfError(format!("truncated ELF file at offset {o}")))
}
fn u64_at(b: &[u8], o: usize) -> Result<u64, ElfError> {
    b.get(o..o + 8)
        .map(|s| u64::from_le_bytes(s.try_into().unwrap()))
        .ok_or_else(|| ElfError(format!("truncated ELF file at offset {o}")))
}

fn cstr_at(b: &[u8], o: usize) -> &[u8] {
    let s = b.get(o..).unwrap_or(&[]);
    &s[..s.iter().position(|&c| c == 0).unwrap_or(s.len())]
}

/// A parsed program image.
pub struct Image {
    pub bytes: Vec<u8>,
    /// e_type: ET_DYN for a position-independent executable.
    kind: u16,
    phoff: usize,
    phnum: usize,
    shoff: usize,
    shnum: usize,
}

impl Image {
    pub fn parse(bytes: Vec<u8>) -> Result<Image, ElfError> {
        if bytes.len() < 64 || &bytes[..4] != b"\x7fELF" {
            return err("not an ELF file");
        }
        if bytes[4] != 2 || bytes[5] != 1 {
            return err("not a 64-bit little-endian ELF file");
        }
        Ok(Image {
            kind: u16_at(&bytes, 16)?,
            phoff: u64_at(&bytes, 32)? as usize,
            shoff: u64_at(&bytes, 40)? as usize,
            phnum: u16_at(&bytes, 56)? as usize,
            shnum: u16_at(&bytes, 60)? as usize,
            bytes,
        })
    }

    pub fn is_position_independent(&self) -> bool {
        self.kind == ET_DYN
    }

    pub fn is_fixed_address_executable(&self) -> bool {
        self.kind == ET_EXEC
    }

    /// Program headers as (type, offset, vaddr, filesz).
    fn segments(&self) -> Result<Vec<(u32, u64, u64, u64)>, ElfError> {
        (0..self.phnum)
            .map(|i| {
                let o = self.phoff + i * 56;
                Ok((
                    u32_at(&self.bytes, o)?,
                    u64_at(&self.bytes, o + 8)?,
                    u64_at(&self.bytes, o + 16)?,
                    u64_at(&self.bytes, o + 32)?,
                ))
            })
            .collect()
    }

    fn vaddr_to_offset(&self, vaddr: u64) -> Result<usize, ElfError> {
        for (ty, off, va, sz) in self.segments()? {
            if ty == PT_LOAD && vaddr >= va && vaddr < va + sz {
                return Ok((vaddr - va + off) as usize);
            }
        }
        err(format!("address {vaddr:#x} is in no loadable segment"))
    }

    /// Dynamic entries as (file offset of the entry, tag, value).
    fn dynamic(&self) -> Result<Vec<(usize, u64, u64)>, ElfError> {
        let Some((_, off, _, sz)) = self.segments()?.into_iter().find(|s| s.0 == PT_DYNAMIC) else {
            return err("no dynamic section: a statically linked program cannot use libmpi");
        };
        let mut out = Vec::new();
        for i in 0..(sz as usize / 16) {
            let o = off as usize + i * 16;
            let tag = u64_at(&self.bytes, o)?;
            if tag == DT_NULL {
                break;
            }
            out.push((o, tag, u64_at(&self.bytes, o + 8)?));
        }
        Ok(out)
    }

    fn dynstr_offset(&self) -> Result<usize, ElfError> {
        let Some((_, _, strtab)) = self.dynamic()?.into_iter().find(|e| e.1 == DT_STRTAB) else {
            return err("no DT_STRTAB");
        };
        self.vaddr_to_offset(strtab)
    }

    /// The libraries the program needs (DT_NEEDED).
    pub fn needed(&self) -> Result<Vec<String>, ElfError> {
        let strtab = self.dynstr_offset()?;
        Ok(self
            .dynamic()?
            .into_iter()
            .filter(|e| e.1 == DT_NEEDED)
            .map(|e| {
                String::from_utf8_lossy(cstr_at(&self.bytes, strtab + e.2 as usize)).into_owned()
            })
            .collect())
    }

    /// Clears DF_1_PIE, which dlopen refuses; returns whether it was set.
    pub fn clear_pie_flag(&mut self) -> Result<bool, ElfError> {
        for (o, tag, val) in self.dynamic()? {
            if tag == DT_FLAGS_1 && val & DF_1_PIE != 0 {
                self.bytes[o + 8..o + 16].copy_from_slice(&(val & !DF_1_PIE).to_le_bytes());
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Rewrites the DT_NEEDED name `from` to `to` in place (`to` no longer than `from`).
    pub fn rename_needed(&mut self, from: &str, to: &str) -> Result<bool, ElfError> {
        assert!(to.len() <= from.len());
        let strtab = self.dynstr_offset()?;
        for (_, tag, val) in self.dynamic()? {
            let at = strtab + val as usize;
            if tag == DT_NEEDED && cstr_at(&self.bytes, at) == from.as_bytes() {
                self.bytes[at..at + to.len()].copy_from_slice(to.as_bytes());
                self.bytes[at + to.len()] = 0;
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Address (relative to the load base) of a function symbol, from the full
    /// symbol table or, for stripped programs linked with -rdynamic, the dynamic one.
    pub fn symbol(&self, name: &str) -> Result<Option<u64>, ElfError> {
        for wanted in [SHT_SYMTAB, SHT_DYNSYM] {
            for i in 0..self.shnum {
                let sh = self.shoff + i * 64;
                if u32_at(&self.bytes, sh + 4)? != wanted {
                    continue;
                }
                let off = u64_at(&self.bytes, sh + 24)? as usize;
                let size = u64_at(&self.bytes, sh + 32)? as usize;
                let link = u32_at(&self.bytes, sh + 40)? as usize;
                let str_off = u64_at(&self.bytes, self.shoff + link * 64 + 24)? as usize;
                for s in 0..size / 24 {
                    let so = off + s * 24;
                    let st_name = u32_at(&self.bytes, so)? as usize;
                    let st_value = u64_at(&self.bytes, so + 8)?;
                    if st_value != 0 && cstr_at(&self.bytes, str_off + st_name) == name.as_bytes() {
                        return Ok(Some(st_value));
                    }
                }
            }
        }
        Ok(None)
    }
}

/// A program linked against an MPI library (ours or MPICH's), as opposed to a
/// Rust program built on the mpcrs API.
pub struct MpiProgram {
    /// Its ranks can share a process (one copy of the image each).
    pub position_independent: bool,
}

/// What the file at `path` is, if a program linked against an MPI library:
/// read and parsed once.
pub fn mpi_program(path: &std::path::Path) -> Option<MpiProgram> {
    let img = Image::parse(std::fs::read(path).ok()?).ok()?;
    let needed = img.needed().ok()?;
    needed
        .iter()
        .any(|n| n.starts_with("libmpi.so") || n.starts_with("libmpich.so"))
        .then(|| MpiProgram {
            position_independent: img.is_position_independent(),
        })
}
