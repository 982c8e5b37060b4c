//! What the dynamic loader reads and runs while it loads an object: its
//! loadable segments, the tables it reads (headers, notes, the dynamic
//! section and what that points to), code it runs before the object's
//! initializers (IFUNC resolvers), and the initializers themselves, which an
//! image can hide from the loader so that its user runs them later.

use std::ops::Range;

use super::{
    u64_at, ElfError, Image, DT_RELA, DT_RELASZ, DT_STRSZ, DT_STRTAB, DT_SYMTAB, PF_W, PT_DYNAMIC,
    PT_LOAD, SHT_DYNSYM,
};

const PF_X: u32 = 1;
const PT_INTERP: u32 = 3;
const PT_NOTE: u32 = 4;
const PT_GNU_EH_FRAME: u32 = 0x6474_e550;
const PT_GNU_PROPERTY: u32 = 0x6474_e553;
const STT_GNU_IFUNC: u8 = 10;
const R_X86_64_IRELATIVE: u64 = 37;

const DT_HASH: u64 = 4;
const DT_INIT: u64 = 12;
const DT_PLTRELSZ: u64 = 2;
const DT_TEXTREL: u64 = 22;
const DT_JMPREL: u64 = 23;
const DT_INIT_ARRAY: u64 = 25;
const DT_INIT_ARRAYSZ: u64 = 27;
const DT_FLAGS: u64 = 30;
const DT_RELRSZ: u64 = 35;
const DT_RELR: u64 = 36;
const DT_GNU_HASH: u64 = 0x6fff_fef5;
const DT_VERSYM: u64 = 0x6fff_fff0;
const DT_VERDEF: u64 = 0x6fff_fffc;
const DT_VERNEED: u64 = 0x6fff_fffe;
const DF_TEXTREL: u64 = 0x4;
const DF_STATIC_TLS: u64 = 0x10;
/// Where a hidden initializer tag goes: the OS-specific range, which glibc's
/// dynamic loader skips (it keeps no slot for tags it does not know).
const HIDDEN_TAG_BASE: u64 = 0x6000_0100;

/// A loadable segment (PT_LOAD).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadSegment {
    /// Where its bytes start in the file.
    pub offset: u64,
    /// Where it is loaded, relative to the load base.
    pub vaddr: u64,
    /// Bytes of it the file holds.
    pub file_size: u64,
    pub writable: bool,
    pub executable: bool,
}

/// An object's initializers, hidden from the dynamic loader
/// ([`Image::hide_initializers`]): addresses relative to the load base.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Initializers {
    /// DT_INIT: a function, run first.
    pub init: Option<u64>,
    /// DT_INIT_ARRAY: an array of function pointers (relocated by the
    /// loader), run in order after `init`.
    pub array: Option<u64>,
    /// Entries of the array.
    pub array_len: usize,
}

impl Image {
    /// The loadable segments, in the order of the program headers.
    pub fn load_segments(&self) -> Result<Vec<LoadSegment>, ElfError> {
        Ok(self
            .segments_with_flags()?
            .into_iter()
            .filter(|s| s.0 == PT_LOAD)
            .map(|(_, offset, vaddr, file_size, flags)| LoadSegment {
                offset,
                vaddr,
                file_size,
                writable: flags & PF_W != 0,
                executable: flags & PF_X != 0,
            })
            .collect())
    }

    /// Whether the dynamic loader writes relocations into read-only segments
    /// (DT_TEXTREL): their loaded pages then differ from the file's.
    pub fn has_text_relocations(&self) -> Result<bool, ElfError> {
        Ok(self
            .dynamic()?
            .iter()
            .any(|&(_, tag, val)| tag == DT_TEXTREL || (tag == DT_FLAGS && val & DF_TEXTREL != 0)))
    }

    /// Whether the object's thread-local variables are reached by the
    /// initial-exec model (DF_STATIC_TLS), so that a dlopen of it takes its
    /// block from the static TLS room.
    pub fn needs_static_tls(&self) -> Result<bool, ElfError> {
        Ok(self
            .dynamic()?
            .iter()
            .any(|&(_, tag, val)| tag == DT_FLAGS && val & DF_STATIC_TLS != 0))
    }

    /// Whether loading the object runs code of its own before its
    /// initializers: IFUNC resolvers, called while it is relocated
    /// (R_X86_64_IRELATIVE relocations, or an IFUNC symbol it defines). True
    /// when it cannot be told (no section headers).
    pub fn runs_code_while_relocated(&self) -> Result<bool, ElfError> {
        for (table, size) in [(DT_RELA, DT_RELASZ), (DT_JMPREL, DT_PLTRELSZ)] {
            let (Some(at), Some(len)) = (self.dynamic_value(table)?, self.dynamic_value(size)?)
            else {
                continue;
            };
            let at = self.vaddr_to_offset(at)?;
            for i in 0..len as usize / 24 {
                if u64_at(&self.bytes, at + i * 24 + 8)? & 0xffff_ffff == R_X86_64_IRELATIVE {
                    return Ok(true);
                }
            }
        }
        let mut ifunc = false;
        let has_dynsym = self.each_symbol(SHT_DYNSYM, |sym| {
            ifunc |= sym.info & 0xf == STT_GNU_IFUNC && sym.section != 0;
        })?;
        Ok(ifunc || !has_dynsym)
    }

    /// File ranges the dynamic loader reads while loading the object: the
    /// ELF and program headers, notes, the interpreter's name, the dynamic
    /// section, the unwinder's table, and the start of every table the
    /// dynamic section names (symbols, strings, hashes, relocations,
    /// versions), a byte long where the dynamic section gives no size (a
    /// table lies wholly in one segment, so its start says which).
    pub fn loader_reads(&self) -> Result<Vec<Range<u64>>, ElfError> {
        let mut out = vec![0..(self.phoff + self.phnum * 56) as u64];
        for (ty, offset, _, size, _) in self.segments_with_flags()? {
            if matches!(
                ty,
                PT_INTERP | PT_NOTE | PT_DYNAMIC | PT_GNU_EH_FRAME | PT_GNU_PROPERTY
            ) {
                out.push(offset..offset + size.max(1));
            }
        }
        let sized = [
            (DT_STRTAB, Some(DT_STRSZ)),
            (DT_RELA, Some(DT_RELASZ)),
            (DT_JMPREL, Some(DT_PLTRELSZ)),
            (DT_RELR, Some(DT_RELRSZ)),
            (DT_SYMTAB, None),
            (DT_HASH, None),
            (DT_GNU_HASH, None),
            (DT_VERSYM, None),
            (DT_VERDEF, None),
            (DT_VERNEED, None),
        ];
        for (tag, size_tag) in sized {
            let Some(vaddr) = self.dynamic_value(tag)? else {
                continue;
            };
            let start = self.vaddr_to_offset(vaddr)? as u64;
            let len = match size_tag {
                Some(t) => self.dynamic_value(t)?.unwrap_or(1).max(1),
                None => 1,
            };
            out.push(start..start + len);
        }
        Ok(out)
    }

    /// Hides the object's initializers (DT_INIT, DT_INIT_ARRAY) from the
    /// dynamic loader, which then loads and relocates the object without
    /// running them, and returns them for the caller to run. Its finalizers
    /// stay: the loader runs them at dlclose or exit as usual.
    pub fn hide_initializers(&mut self) -> Result<Initializers, ElfError> {
        let mut found = Initializers::default();
        for (at, tag, val) in self.dynamic()? {
            match tag {
                DT_INIT => found.init = Some(val),
                DT_INIT_ARRAY => found.array = Some(val),
                DT_INIT_ARRAYSZ => found.array_len = val as usize / 8,
                _ => continue,
            }
            let hidden = HIDDEN_TAG_BASE + tag;
            self.bytes[at..at + 8].copy_from_slice(&hidden.to_le_bytes());
        }
        if found.array.is_none() {
            found.array_len = 0;
        }
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn own_image() -> Image {
        let exe = std::fs::read_link("/proc/self/exe").unwrap();
        Image::parse(std::fs::read(exe).unwrap()).unwrap()
    }

    #[test]
    fn hidden_initializers_are_returned_and_gone_from_the_dynamic_section() {
        let mut image = own_image();
        let found = image.hide_initializers().unwrap();
        assert!(found.array.is_some() && found.array_len > 0, "{found:?}");
        let tags: Vec<u64> = image.dynamic().unwrap().iter().map(|e| e.1).collect();
        assert!(!tags
            .iter()
            .any(|&t| t == DT_INIT || t == DT_INIT_ARRAY || t == DT_INIT_ARRAYSZ));
        assert!(tags.contains(&(HIDDEN_TAG_BASE + DT_INIT_ARRAY)));
        // Hidden once, there is nothing left to hide.
        assert_eq!(image.hide_initializers().unwrap(), Initializers::default());
    }

    #[test]
    fn the_loader_reads_headers_and_tables_but_not_the_code() {
        let image = own_image();
        let reads = image.loader_reads().unwrap();
        assert_eq!(reads[0].start, 0);
        let code = image
            .load_segments()
            .unwrap()
            .into_iter()
            .find(|s| s.executable)
            .unwrap();
        let span = code.offset..code.offset + code.file_size;
        assert!(
            !reads
                .iter()
                .any(|r| r.start < span.end && span.start < r.end),
            "{reads:?} {span:?}"
        );
        assert!(!image.has_text_relocations().unwrap());
    }

    #[test]
    fn the_needs_read_alone_are_those_of_the_whole_file() {
        let exe = std::fs::read_link("/proc/self/exe").unwrap();
        let part = crate::read_needs(&exe).unwrap();
        let whole = own_image();
        assert_eq!(part.needed().unwrap(), whole.needed().unwrap());
        assert!(!part.needed().unwrap().is_empty());
        assert_eq!(
            part.is_position_independent(),
            whole.is_position_independent()
        );
    }
}
