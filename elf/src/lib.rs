//! Just enough ELF (64-bit, little-endian) for the launcher to tell C MPI programs
//! from Rust ones, and for the C ABI's loader to load a program once per rank: find
//! its `main`, clear the DF_1_PIE flag that makes dlopen refuse an executable, and
//! point a dependency on MPICH's library at ours.
//!
//! Owns: reading and patching ELF headers, dynamic sections, symbol tables,
//! version needs and the TLS segment of one file; and (loading.rs) the facts
//! of a file that say what the dynamic loader reads and runs while loading it.
//!
//! Must not touch: loading or running anything (mpcrs-abi's loader does), or
//! MPI semantics: it only reads which MPI library a program was linked with.

use std::fmt;

mod loading;

pub use loading::{Initializers, LoadSegment};

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
const PT_TLS: u32 = 7;
const SHT_SYMTAB: u32 = 2;
const SHT_DYNSYM: u32 = 11;
const DT_NULL: u64 = 0;
const DT_NEEDED: u64 = 1;
const DT_STRTAB: u64 = 5;
const DT_STRSZ: u64 = 10;
const DT_RELA: u64 = 7;
const DT_RELASZ: u64 = 8;
const DT_SYMTAB: u64 = 6;
const R_X86_64_COPY: u64 = 5;
const DT_RPATH: u64 = 15;
const DT_RUNPATH: u64 = 29;
const PF_W: u32 = 2;
const SHT_NOBITS: u32 = 8;
const DT_FLAGS_1: u64 = 0x6fff_fffb;
const DT_VERNEED: u64 = 0x6fff_fffe;
const DT_VERNEEDNUM: u64 = 0x6fff_ffff;
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

/// A PT_TLS segment: the initial image of an object's thread-local block.
#[derive(Clone, Debug)]
pub struct TlsSegment {
    /// Where the image lies in the object (relative to its load base).
    pub vaddr: u64,
    /// The initialised part (.tdata) as in the file; the rest is zero.
    pub init: Vec<u8>,
    pub mem_size: usize,
    pub align: usize,
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
    /// Bytes of the string space (see `reserve_string`) already given out.
    strings_used: usize,
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
            strings_used: 0,
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
        Ok(self
            .segments_with_flags()?
            .into_iter()
            .map(|s| (s.0, s.1, s.2, s.3))
            .collect())
    }

    /// Program headers as (type, offset, vaddr, filesz, flags).
    fn segments_with_flags(&self) -> Result<Vec<(u32, u64, u64, u64, u32)>, ElfError> {
        (0..self.phnum)
            .map(|i| {
                let o = self.phoff + i * 56;
                Ok((
                    u32_at(&self.bytes, o)?,
                    u64_at(&self.bytes, o + 8)?,
                    u64_at(&self.bytes, o + 16)?,
                    u64_at(&self.bytes, o + 32)?,
                    u32_at(&self.bytes, o + 4)?,
                ))
            })
            .collect()
    }

    /// The thread-local storage segment, if the object has one.
    pub fn tls_segment(&self) -> Result<Option<TlsSegment>, ElfError> {
        for i in 0..self.phnum {
            let o = self.phoff + i * 56;
            if u32_at(&self.bytes, o)? != PT_TLS {
                continue;
            }
            let offset = u64_at(&self.bytes, o + 8)? as usize;
            let file_size = u64_at(&self.bytes, o + 32)? as usize;
            let Some(init) = self.bytes.get(offset..offset + file_size) else {
                return err(format!("TLS segment at {offset:#x} ends past the file"));
            };
            return Ok(Some(TlsSegment {
                vaddr: u64_at(&self.bytes, o + 16)?,
                init: init.to_vec(),
                mem_size: u64_at(&self.bytes, o + 40)? as usize,
                align: u64_at(&self.bytes, o + 48)?.max(1) as usize,
            }));
        }
        Ok(None)
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

    /// The search path of the program's libraries: DT_RPATH and DT_RUNPATH.
    pub fn search_paths(&self) -> Result<(Option<String>, Option<String>), ElfError> {
        let strtab = self.dynstr_offset()?;
        let (mut rpath, mut runpath) = (None, None);
        for (_, tag, val) in self.dynamic()? {
            let s = || {
                String::from_utf8_lossy(cstr_at(&self.bytes, strtab + val as usize)).into_owned()
            };
            match tag {
                DT_RPATH => rpath = Some(s()),
                DT_RUNPATH => runpath = Some(s()),
                _ => {}
            }
        }
        Ok((rpath, runpath))
    }

    /// Makes the DT_NEEDED entry `name` the first one, so that the libraries'
    /// symbols are searched in an order where it comes before the others.
    pub fn move_needed_first(&mut self, name: &str) -> Result<bool, ElfError> {
        let strtab = self.dynstr_offset()?;
        let needed: Vec<(usize, u64)> = self
            .dynamic()?
            .into_iter()
            .filter(|e| e.1 == DT_NEEDED)
            .map(|e| (e.0, e.2))
            .collect();
        let Some(&(at, val)) = needed
            .iter()
            .find(|e| cstr_at(&self.bytes, strtab + e.1 as usize) == name.as_bytes())
        else {
            return Ok(false);
        };
        let (first, first_val) = needed[0];
        self.bytes[first + 8..first + 16].copy_from_slice(&val.to_le_bytes());
        self.bytes[at + 8..at + 16].copy_from_slice(&first_val.to_le_bytes());
        Ok(true)
    }

    /// Points the DT_NEEDED entry `name` at a new string of up to `len - 1` bytes
    /// (initially empty) and returns the file offset where the caller writes it.
    ///
    /// The string goes where the image has room that is loaded but unused: the
    /// tail of a page after the end of a read-only segment, up to where the file's
    /// next contents begin (the dynamic loader reads names at the string table's
    /// address plus the entry's offset, not bounded by the table's size).
    pub fn reserve_needed_string(&mut self, name: &str, len: usize) -> Result<usize, ElfError> {
        let strtab_off = self.dynstr_offset()?;
        let Some((_, _, strtab_va)) = self.dynamic()?.into_iter().find(|e| e.1 == DT_STRTAB) else {
            return err("no DT_STRTAB");
        };
        let Some(entry) = self.dynamic()?.into_iter().find(|e| {
            e.1 == DT_NEEDED && cstr_at(&self.bytes, strtab_off + e.2 as usize) == name.as_bytes()
        }) else {
            return err(format!("no dependency on {name}"));
        };
        let (file_off, vaddr, room) = self.string_space()?;
        if self.strings_used + len > room {
            return err(format!(
                "no room in the image for the name of a private copy of {name} \
                 ({room} bytes free after its read-only segments)"
            ));
        }
        let at = file_off + self.strings_used;
        let va = vaddr + self.strings_used as u64;
        if va < strtab_va {
            return err("the image's free space lies before its string table");
        }
        self.strings_used += len;
        self.bytes[at..at + len].fill(0);
        self.bytes[entry.0 + 8..entry.0 + 16].copy_from_slice(&(va - strtab_va).to_le_bytes());
        self.rename_version_needs(name, (va - strtab_va) as u32)?;
        Ok(at)
    }

    /// Points the symbol-version needs of library `name` (.gnu.version_r:
    /// the dynamic loader checks them against the objects by the name it
    /// loaded them by) at the string at `new_name` in the string table.
    fn rename_version_needs(&mut self, name: &str, new_name: u32) -> Result<(), ElfError> {
        let dynamic = self.dynamic()?;
        let (Some(verneed), Some(count)) = (
            dynamic.iter().find(|e| e.1 == DT_VERNEED).map(|e| e.2),
            dynamic.iter().find(|e| e.1 == DT_VERNEEDNUM).map(|e| e.2),
        ) else {
            return Ok(());
        };
        let strtab_off = self.dynstr_offset()?;
        let mut at = self.vaddr_to_offset(verneed)?;
        for _ in 0..count {
            // Elf64_Verneed: vn_version u16, vn_cnt u16, vn_file u32, vn_aux u32, vn_next u32.
            let file = u32_at(&self.bytes, at + 4)? as usize;
            if cstr_at(&self.bytes, strtab_off + file) == name.as_bytes() {
                self.bytes[at + 4..at + 8].copy_from_slice(&new_name.to_le_bytes());
            }
            let next = u32_at(&self.bytes, at + 12)? as usize;
            if next == 0 {
                break;
            }
            at += next;
        }
        Ok(())
    }

    /// The largest loaded, unused stretch of the file: (file offset, vaddr,
    /// length). One after a segment of data rather than code, if there is one
    /// with room for 16 names: the page that holds the names differs from the
    /// original file in each rank's copy, and so cannot be shared (a
    /// program's code is shared between its copies, loader::shared_text).
    fn string_space(&self) -> Result<(usize, u64, usize), ElfError> {
        const ROOM_FOR_DATA: usize = 16 * 32;
        let data = self.largest_string_space(false)?;
        if data.2 >= ROOM_FOR_DATA {
            return Ok(data);
        }
        self.largest_string_space(true)
    }

    /// The largest loaded, unused stretch after a read-only segment (of data
    /// only, unless `code`).
    fn largest_string_space(&self, code: bool) -> Result<(usize, u64, usize), ElfError> {
        const PAGE: u64 = 4096;
        const PF_X: u32 = 1;
        let segs = self.segments_with_flags()?;
        let mut best = (0, 0, 0);
        for &(ty, off, va, filesz, flags) in &segs {
            if !code && flags & PF_X != 0 {
                continue;
            }
            if ty != PT_LOAD || flags & PF_W != 0 {
                continue;
            }
            let start = off + filesz;
            let mut end = (start + PAGE - 1) / PAGE * PAGE;
            end = end.min(self.bytes.len() as u64);
            // Whatever else the file holds there (another segment, a section
            // outside the segments) bounds the space.
            for &(_, o, _, sz, _) in &segs {
                if sz > 0 && o + sz > start && o < end {
                    end = end.min(o.max(start));
                }
            }
            for i in 0..self.shnum {
                let sh = self.shoff + i * 64;
                if u32_at(&self.bytes, sh + 4)? == SHT_NOBITS {
                    continue;
                }
                let o = u64_at(&self.bytes, sh + 24)?;
                let sz = u64_at(&self.bytes, sh + 32)?;
                if sz > 0 && o + sz > start && o < end {
                    end = end.min(o.max(start));
                }
            }
            if self.shoff as u64 >= start && (self.shoff as u64) < end {
                end = self.shoff as u64;
            }
            if end > start && (end - start) as usize > best.2 {
                best = (start as usize, va + filesz, (end - start) as usize);
            }
        }
        Ok(best)
    }

    fn dynamic_value(&self, tag: u64) -> Result<Option<u64>, ElfError> {
        Ok(self
            .dynamic()?
            .into_iter()
            .find(|e| e.1 == tag)
            .map(|e| e.2))
    }

    /// The copy relocations: (symbol name, address relative to the load base,
    /// file offset of the symbol's dynamic symbol table entry, size).
    pub fn copy_relocations(&self) -> Result<Vec<(String, u64, usize, u64)>, ElfError> {
        let (Some(rela), Some(size), Some(symtab)) = (
            self.dynamic_value(DT_RELA)?,
            self.dynamic_value(DT_RELASZ)?,
            self.dynamic_value(DT_SYMTAB)?,
        ) else {
            return Ok(Vec::new());
        };
        let (rela, symtab, strtab) = (
            self.vaddr_to_offset(rela)?,
            self.vaddr_to_offset(symtab)?,
            self.dynstr_offset()?,
        );
        let mut out = Vec::new();
        for i in 0..size as usize / 24 {
            let r = rela + i * 24;
            let info = u64_at(&self.bytes, r + 8)?;
            if info & 0xffff_ffff != R_X86_64_COPY {
                continue;
            }
            let sym = symtab + (info >> 32) as usize * 24;
            let name = cstr_at(&self.bytes, strtab + u32_at(&self.bytes, sym)? as usize);
            out.push((
                String::from_utf8_lossy(name).into_owned(),
                u64_at(&self.bytes, r)?,
                sym,
                u64_at(&self.bytes, sym + 16)?,
            ));
        }
        Ok(out)
    }

    /// Makes the dynamic symbol whose entry is at file offset `sym` undefined
    /// (no section, no value): lookups no longer find it in this object.
    pub fn undefine_symbol(&mut self, sym: usize) {
        self.bytes[sym + 6..sym + 8].fill(0);
        self.bytes[sym + 8..sym + 16].fill(0);
    }

    /// Address (relative to the load base) of a function symbol, from the full
    /// symbol table or, for stripped programs linked with -rdynamic, the dynamic one.
    pub fn symbol(&self, name: &str) -> Result<Option<u64>, ElfError> {
        for wanted in [SHT_SYMTAB, SHT_DYNSYM] {
            let mut found = None;
            self.each_symbol(wanted, |sym| {
                if found.is_none() && sym.value != 0 && sym.name == name.as_bytes() {
                    found = Some(sym.value);
                }
            })?;
            if found.is_some() {
                return Ok(found);
            }
        }
        Ok(None)
    }

    /// Calls `f` with every entry of the symbol tables of type `table`
    /// (SHT_SYMTAB or SHT_DYNSYM); whether there was such a table.
    fn each_symbol(&self, table: u32, mut f: impl FnMut(Symbol<'_>)) -> Result<bool, ElfError> {
        let mut has_table = false;
        for i in 0..self.shnum {
            let sh = self.shoff + i * 64;
            if u32_at(&self.bytes, sh + 4)? != table {
                continue;
            }
            has_table = true;
            let off = u64_at(&self.bytes, sh + 24)? as usize;
            let size = u64_at(&self.bytes, sh + 32)? as usize;
            let link = u32_at(&self.bytes, sh + 40)? as usize;
            let str_off = u64_at(&self.bytes, self.shoff + link * 64 + 24)? as usize;
            for s in 0..size / 24 {
                let so = off + s * 24;
                let info = *self
                    .bytes
                    .get(so + 4)
                    .ok_or_else(|| ElfError(format!("truncated ELF file at offset {so}")))?;
                f(Symbol {
                    name: cstr_at(&self.bytes, str_off + u32_at(&self.bytes, so)? as usize),
                    info,
                    section: u16_at(&self.bytes, so + 6)?,
                    value: u64_at(&self.bytes, so + 8)?,
                    size: u64_at(&self.bytes, so + 16)?,
                });
            }
        }
        Ok(has_table)
    }
}

/// One entry of a symbol table.
struct Symbol<'a> {
    name: &'a [u8],
    info: u8,
    section: u16,
    value: u64,
    size: u64,
}

/// A function of an object's symbol table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionSymbol {
    pub name: String,
    /// Address relative to the load base.
    pub start: u64,
    /// Bytes of code (0 where the symbol table does not say).
    pub size: u64,
}

impl Image {
    /// The defined functions of the full symbol table (static ones too) or,
    /// for a stripped object, of the dynamic one; sorted by address.
    pub fn function_symbols(&self) -> Result<Vec<FunctionSymbol>, ElfError> {
        const STT_FUNC: u8 = 2;
        for wanted in [SHT_SYMTAB, SHT_DYNSYM] {
            let mut found = Vec::new();
            let has_table = self.each_symbol(wanted, |sym| {
                if sym.info & 0xf == STT_FUNC && sym.section != 0 && sym.value != 0 {
                    found.push(FunctionSymbol {
                        name: String::from_utf8_lossy(sym.name).into_owned(),
                        start: sym.value,
                        size: sym.size,
                    });
                }
            })?;
            if has_table {
                found.sort_by_key(|f| f.start);
                return Ok(found);
            }
        }
        Ok(Vec::new())
    }
}

/// A program linked against an MPI library (ours or MPICH's), as opposed to a
/// Rust program built on the mpcrs API.
pub struct MpiProgram {
    /// Its ranks can share a process (one copy of the image each).
    pub position_independent: bool,
}

/// The parts of the file at `path` that say which libraries it needs (its
/// headers, dynamic section and dynamic string table), at their offsets in
/// a buffer of the file's size whose other bytes are zeros: an application's
/// binary may be hundreds of megabytes, and the launcher asks this of it
/// before every start.
fn read_needs(path: &std::path::Path) -> std::io::Result<Image> {
    use std::os::unix::fs::FileExt;
    let file = std::fs::File::open(path)?;
    let len = file.metadata()?.len() as usize;
    let fill = |bytes: &mut [u8], range: std::ops::Range<usize>| -> std::io::Result<()> {
        let range = range.start.min(len)..range.end.min(len);
        file.read_exact_at(&mut bytes[range.clone()], range.start as u64)
    };
    let mut header = vec![0u8; len];
    fill(&mut header, 0..64)?;
    let invalid = |e: ElfError| std::io::Error::other(e.0);
    let mut img = Image::parse(header).map_err(invalid)?;
    fill(&mut img.bytes, img.phoff..img.phoff + img.phnum * 56)?;
    let Some((_, offset, _, size)) = img
        .segments()
        .map_err(invalid)?
        .into_iter()
        .find(|s| s.0 == PT_DYNAMIC)
    else {
        return Ok(img);
    };
    fill(&mut img.bytes, offset as usize..(offset + size) as usize)?;
    if let (Some(strtab), Some(strsz)) = (
        img.dynamic_value(DT_STRTAB).map_err(invalid)?,
        img.dynamic_value(DT_STRSZ).map_err(invalid)?,
    ) {
        let at = img.vaddr_to_offset(strtab).map_err(invalid)?;
        fill(&mut img.bytes, at..at + strsz as usize)?;
    }
    Ok(img)
}

/// What the file at `path` is, if a program linked against an MPI library.
pub fn mpi_program(path: &std::path::Path) -> Option<MpiProgram> {
    let img = read_needs(path).ok()?;
    let needed = img.needed().ok()?;
    needed
        .iter()
        // libfti.so of mpcrs is libmpi.so (FTI's calls are in it): a program
        // linked with -lfti may need no other MPI library.
        .any(|n| n.starts_with("libmpi.so") || n.starts_with("libmpich.so") || n == "libfti.so")
        .then(|| MpiProgram {
            position_independent: img.is_position_independent(),
        })
}
