//! Program text shared by the ranks of a process.
//!
//! Each rank's copy of the program (and of each library copied per rank) is a
//! memfd of its own, because the dynamic loader tells objects apart by file.
//! Written whole, every copy's pages, code included, were the rank's own: a
//! program of 64 MB of code at 256 ranks wrote 16 GB before computing anything.
//! Only the writable segments (data, GOT) need to be private. So:
//!
//! - [`Plan::new`], once per object, finds the pages of its read-only segments
//!   that the copies hold unchanged from the original file (not the pages the
//!   loader patched: symbol tables, names of the rank's library copies).
//! - [`Plan::write_copy`] writes a rank's copy without those pages of the
//!   object's code, left as holes, where nothing reads them before the copy
//!   runs: the loader reads only headers and tables (`Image::loader_reads`),
//!   and the copy's initializers, which the loader would run, are hidden from
//!   it (`Image::hide_initializers`) and run by the loader of ranks once the
//!   code is in place. An object whose loading runs its own code (IFUNC
//!   resolvers) or writes relocations into its code (DT_TEXTREL) is written
//!   whole.
//! - [`Plan::share`], once the copy is loaded, maps every such page, code or
//!   read-only data, from the original file over the copy: one page in the
//!   page cache for all ranks. The memfd's own pages there are given back (a
//!   hole punched) where they had been written.

use std::os::fd::AsRawFd;
use std::os::raw::c_int;
use std::path::Path;

use mpcrs_elf::Image;

const PAGE: usize = 4096;

/// The original file of a copied object, mapped for comparison.
pub(crate) struct Original {
    file: std::fs::File,
    map: *const u8,
    len: usize,
    /// Whether its pages may be mapped executable (not on a noexec mount).
    executable: bool,
}

// SAFETY: the mapping is read-only and lives as long as the value.
unsafe impl Send for Original {}

impl Original {
    /// Maps `path` read-only; None when it cannot be (the copies then keep
    /// pages of their own).
    pub(crate) fn open(path: &Path) -> Option<Original> {
        let file = std::fs::File::open(path).ok()?;
        let len = file.metadata().ok()?.len() as usize;
        if len == 0 {
            return None;
        }
        let map = |prot| {
            // SAFETY: a new private mapping of a file we hold open.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    prot,
                    libc::MAP_PRIVATE,
                    file.as_raw_fd(),
                    0,
                )
            };
            (p != libc::MAP_FAILED).then_some(p)
        };
        let executable = match map(libc::PROT_READ | libc::PROT_EXEC) {
            Some(p) => {
                // SAFETY: the probe mapping just made.
                unsafe { libc::munmap(p, len) };
                true
            }
            None => false,
        };
        let map = map(libc::PROT_READ)?;
        Some(Original {
            file,
            map: map as *const u8,
            len,
            executable,
        })
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `map` is a live mapping of `len` readable bytes.
        unsafe { std::slice::from_raw_parts(self.map, self.len) }
    }
}

impl Drop for Original {
    fn drop(&mut self) {
        // SAFETY: our own mapping, no longer borrowed.
        unsafe { libc::munmap(self.map as *mut libc::c_void, self.len) };
    }
}

/// Pages of a read-only segment the copies hold as the original does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Run {
    /// File offset and length, in whole pages.
    offset: usize,
    len: usize,
    /// Where the run is loaded, relative to the load base.
    vaddr: usize,
    prot: c_int,
    /// Left out of the memfd (code nothing reads while the copy loads).
    hole: bool,
}

/// How the copies of one object share pages with its original file.
#[derive(Default)]
pub(crate) struct Plan {
    runs: Vec<Run>,
}

impl Plan {
    /// The runs of `image` (patched, with the rank-specific bytes at
    /// `varying`, each `PATH_SLOT` long) that equal `original`.
    pub(crate) fn new(image: &Image, original: Option<&Original>, varying: &[usize]) -> Plan {
        let Some(original) = original else {
            return Plan::default();
        };
        let (Ok(false), Ok(segments)) = (image.has_text_relocations(), image.load_segments())
        else {
            return Plan::default();
        };
        let holes_allowed =
            original.executable && matches!(image.runs_code_while_relocated(), Ok(false));
        let Ok(reads) = image.loader_reads() else {
            return Plan::default();
        };
        let copy = &image.bytes;
        let orig = original.bytes();
        let varies = |page: usize| {
            varying
                .iter()
                .any(|&at| at < page + PAGE && at + crate::libraries::PATH_SLOT > page)
        };
        let same = |page: usize| {
            page + PAGE <= copy.len()
                && page + PAGE <= orig.len()
                && !varies(page)
                && copy[page..page + PAGE] == orig[page..page + PAGE]
        };
        let mut runs = Vec::new();
        for seg in segments.iter().filter(|s| !s.writable) {
            // ELF keeps offset and address congruent modulo the page.
            let first = seg.offset as usize / PAGE * PAGE;
            let end = (seg.offset + seg.file_size) as usize;
            let vpage = seg.vaddr as usize / PAGE * PAGE;
            let span = first as u64..end as u64;
            let hole = holes_allowed
                && seg.executable
                && first != 0
                && !reads
                    .iter()
                    .any(|r| r.start < span.end && span.start < r.end);
            let prot = libc::PROT_READ | if seg.executable { libc::PROT_EXEC } else { 0 };
            let mut page = first;
            while page < end {
                if !same(page) {
                    page += PAGE;
                    continue;
                }
                let start = page;
                while page < end && same(page) {
                    page += PAGE;
                }
                runs.push(Run {
                    offset: start,
                    len: page - start,
                    vaddr: vpage + (start - first),
                    prot,
                    hole,
                });
            }
        }
        Plan { runs }
    }

    /// Bytes the copies leave out of their memfds.
    #[cfg(test)]
    fn hole_bytes(&self) -> usize {
        self.runs.iter().filter(|r| r.hole).map(|r| r.len).sum()
    }

    /// Writes a copy (`bytes`) into the empty memfd `fd`, leaving the hole
    /// runs out.
    pub(crate) fn write_copy(&self, fd: c_int, bytes: &[u8]) -> std::io::Result<()> {
        // SAFETY: sizes our own memfd.
        if unsafe { libc::ftruncate(fd, bytes.len() as libc::off_t) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut at = 0;
        for run in self.runs.iter().filter(|r| r.hole) {
            write_at(fd, &bytes[at..run.offset], at)?;
            at = run.offset + run.len;
        }
        write_at(fd, &bytes[at..], at)
    }

    /// Maps the runs of the copy loaded at `base` (written to `fd` from
    /// `bytes`) from the original, and gives back the memfd's pages there.
    /// A hole the kernel would not map from the original is filled from
    /// `bytes` instead. Returns the bytes now shared.
    pub(crate) fn share(
        &self,
        base: usize,
        fd: c_int,
        bytes: &[u8],
        original: &Original,
    ) -> std::io::Result<usize> {
        let mut shared = 0;
        for run in &self.runs {
            // SAFETY: [base + vaddr, + len) is part of the copy's read-only
            // segment, which holds these very bytes (or a hole nothing has
            // read yet): code running or reading there sees the same bytes.
            let p = unsafe {
                libc::mmap(
                    (base + run.vaddr) as *mut libc::c_void,
                    run.len,
                    run.prot,
                    libc::MAP_PRIVATE | libc::MAP_FIXED,
                    original.file.as_raw_fd(),
                    run.offset as libc::off_t,
                )
            };
            if p == libc::MAP_FAILED {
                if run.hole {
                    // The copy's own mapping of the hole was never touched: the
                    // bytes written now are what it shows.
                    write_at(fd, &bytes[run.offset..run.offset + run.len], run.offset)?;
                }
                continue;
            }
            shared += run.len;
            if !run.hole {
                // SAFETY: punches a hole in our own memfd, whose pages there are
                // mapped nowhere any more.
                unsafe {
                    libc::fallocate(
                        fd,
                        libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                        run.offset as libc::off_t,
                        run.len as libc::off_t,
                    )
                };
            }
        }
        Ok(shared)
    }
}

fn write_at(fd: c_int, mut bytes: &[u8], mut at: usize) -> std::io::Result<()> {
    while !bytes.is_empty() {
        // SAFETY: writes from a valid slice into our own memfd.
        let n = unsafe { libc::pwrite(fd, bytes.as_ptr().cast(), bytes.len(), at as libc::off_t) };
        if n <= 0 {
            return Err(std::io::Error::last_os_error());
        }
        bytes = &bytes[n as usize..];
        at += n as usize;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This test program's own file, as image and original.
    fn own_file() -> (Image, Original) {
        let exe = std::fs::read_link("/proc/self/exe").unwrap();
        let image = Image::parse(std::fs::read(&exe).unwrap()).unwrap();
        (image, Original::open(&exe).unwrap())
    }

    fn code_segment(image: &Image) -> mpcrs_elf::LoadSegment {
        *image
            .load_segments()
            .unwrap()
            .iter()
            .find(|s| s.executable && !s.writable)
            .unwrap()
    }

    #[test]
    fn an_unchanged_file_shares_its_read_only_pages_and_leaves_its_code_out() {
        let (image, original) = own_file();
        let plan = Plan::new(&image, Some(&original), &[]);
        let code = code_segment(&image);
        assert!(plan
            .runs
            .iter()
            .all(|r| r.offset % PAGE == 0 && r.len % PAGE == 0));
        // Every whole page of code is left out of the copies.
        let whole_pages = (code.offset as usize + code.file_size as usize) / PAGE * PAGE
            - code.offset.next_multiple_of(PAGE as u64) as usize;
        assert!(
            plan.hole_bytes() >= whole_pages,
            "{} < {whole_pages}",
            plan.hole_bytes()
        );
        // No page the loader reads is a hole.
        for r in image.loader_reads().unwrap() {
            assert!(plan
                .runs
                .iter()
                .filter(|run| run.hole)
                .all(
                    |run| r.end as usize <= run.offset || run.offset + run.len <= r.start as usize
                ));
        }
    }

    #[test]
    fn pages_that_differ_or_vary_by_rank_stay_the_copy_s() {
        let (mut image, original) = own_file();
        let code = code_segment(&image);
        let changed = code.offset.next_multiple_of(PAGE as u64) as usize + PAGE;
        image.bytes[changed + 10] ^= 0xff;
        let varying = changed + 3 * PAGE + 100;
        let plan = Plan::new(&image, Some(&original), &[varying]);
        let covered = |page: usize| {
            plan.runs
                .iter()
                .any(|r| page >= r.offset && page < r.offset + r.len)
        };
        assert!(!covered(changed));
        assert!(!covered(varying / PAGE * PAGE));
        assert!(covered(changed + PAGE));
    }

    #[test]
    fn a_copy_is_written_without_its_holes() {
        let (image, original) = own_file();
        let plan = Plan::new(&image, Some(&original), &[]);
        let hole = *plan.runs.iter().find(|r| r.hole).unwrap();
        // SAFETY: a new memfd with a valid name.
        let fd = unsafe { libc::memfd_create(c"shared-text-test".as_ptr(), 0) };
        assert!(fd >= 0);
        plan.write_copy(fd, &image.bytes).unwrap();
        let mut back = vec![0xaau8; image.bytes.len()];
        // SAFETY: reads our own memfd into a buffer of its size.
        let n = unsafe { libc::pread(fd, back.as_mut_ptr().cast(), back.len(), 0) };
        assert_eq!(n as usize, image.bytes.len());
        assert!(back[hole.offset..hole.offset + hole.len]
            .iter()
            .all(|&b| b == 0));
        assert_eq!(back[..PAGE], image.bytes[..PAGE]);
        // SAFETY: our own fd.
        unsafe { libc::close(fd) };
    }
}
