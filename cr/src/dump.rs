//! The in-process dumper: `fork()`, and the single-threaded child writes the
//! image of the copy-on-write snapshot while the parent goes on.
//!
//! Everything that allocates (reading /proc/self/maps, laying out the image,
//! encoding the region table, opening the file) happens before the other
//! threads are stopped ([`crate::threads`]). The leader forks in its own signal
//! handler, so every thread of the snapshot sits at a signal frame a restorer
//! can resume. The child only computes checksums, issues raw `pwrite`s straight
//! from memory and `fsync`, and leaves with `exit_group`: no allocation, no
//! lock, nothing another thread of the parent could have held at the fork.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::compress::{Compression, Compressor};
use crate::dirty::PageRegion;
use crate::image::{
    self, ExeIdentity, Extent, ImageError, ImageHeader, Parent, Region, COMPRESSED, DELTA,
    EXTENT_DATA, EXTENT_ZERO, HAS_DATA, KERNEL, PAGE, SHARED,
};
use crate::incremental::{self, Incremental, RegionWrite};
use crate::maps::{parse_maps, Skip};
use crate::staging::{Memory, Segment, Stager};
use crate::sys::{self, call};
use crate::threads::Captured;

/// What one dump did.
#[derive(Debug, Clone)]
pub struct DumpReport {
    pub path: PathBuf,
    /// The image this one applies to (an incremental image), and the CRC of
    /// this image's metadata (its identity for the next one).
    pub parent: Option<Parent>,
    pub meta_crc: u32,
    /// Image size, bytes actually stored (pages of zeros are holes), and memory
    /// contents in it.
    pub bytes: u64,
    pub stored_bytes: u64,
    pub data_bytes: u64,
    pub regions: usize,
    /// How long the calling thread was held: mappings read, table built, fork.
    pub stall: Duration,
    /// From the fork to the image being durable.
    pub write: Duration,
    /// What the write cost the program besides the stall.
    pub cost: WriteCost,
}

/// What writing an image cost the program that goes on meanwhile: the
/// stall is not all of it. After the fork, each page the program writes
/// that it still shares with the writer is copied on a page fault, and the
/// writer takes CPU time the program may need.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteCost {
    /// Bytes copied in the stall so that the writer shares no page with the
    /// program ([`crate::staging`]).
    pub staged_bytes: u64,
    /// Page faults of the program from the fork to the image being durable
    /// (copies of shared pages, and whatever else it faulted in).
    pub faults: u64,
    /// The program's time in the kernel meanwhile (where faults are spent).
    pub program_kernel: Duration,
    /// CPU time of the writer.
    pub writer_cpu: Duration,
}

impl WriteCost {
    /// What the program lost at most, stall aside: its kernel time during
    /// the write and the writer's CPU time (all of it, as when the program
    /// keeps every core busy).
    pub fn lost(&self) -> Duration {
        self.program_kernel + self.writer_cpu
    }
}

impl DumpReport {
    /// Bytes stored per second of writing (what the file system took).
    pub fn write_mb_per_s(&self) -> f64 {
        self.stored_bytes as f64 / 1e6 / self.write.as_secs_f64().max(1e-9)
    }
}

/// The object (executable or shared library) holding this crate's code: the
/// restorer runs from it.
pub fn runtime_object() -> std::io::Result<String> {
    let here = runtime_object as *const () as u64;
    let maps = std::fs::read("/proc/self/maps")?;
    parse_maps(&maps)?
        .into_iter()
        .find(|m| m.start <= here && here < m.end)
        .map(|m| m.path)
        .ok_or_else(|| std::io::Error::other("no mapping holds the runtime's code"))
}

/// Computes once what every image records about the executable and the
/// runtime (a checksum of each whole file), so that the first checkpoint does
/// not stall the application for it.
pub fn prepare() {
    let _ = exe_identity();
    let _ = runtime_identity();
}

pub(crate) fn runtime_identity() -> Result<&'static ExeIdentity, String> {
    static RT: OnceLock<Result<ExeIdentity, String>> = OnceLock::new();
    RT.get_or_init(|| {
        let path = runtime_object().map_err(|e| format!("/proc/self/maps: {e}"))?;
        ExeIdentity::of(Path::new(&path)).map_err(|e| format!("{path}: {e}"))
    })
    .as_ref()
    .map_err(|e| e.clone())
}

pub(crate) fn exe_identity() -> Result<&'static ExeIdentity, String> {
    static EXE: OnceLock<Result<ExeIdentity, String>> = OnceLock::new();
    EXE.get_or_init(|| {
        let path =
            std::fs::read_link("/proc/self/exe").map_err(|e| format!("/proc/self/exe: {e}"))?;
        ExeIdentity::of(&path).map_err(|e| format!("{}: {e}", path.display()))
    })
    .as_ref()
    .map_err(|e| e.clone())
}

/// The regions an image records, in address order, from the text of
/// /proc/self/maps, leaving out the ranges `holes` (the writer's stack, the
/// staging buffer).
fn regions(maps: &[u8], holes: &[(u64, u64)]) -> std::io::Result<Vec<Region>> {
    let mut out = Vec::new();
    for m in parse_maps(maps)? {
        let (data, kernel) = match m.skip() {
            None => (true, false),
            Some(Skip::Unreadable) => (false, false),
            Some(Skip::Kernel) => (false, true),
            Some(Skip::Device | Skip::Rail) => continue,
        };
        let region = Region {
            start: m.start,
            end: m.end,
            prot: m.prot(),
            flags: if m.shared { SHARED } else { 0 }
                | if data { HAS_DATA } else { 0 }
                | if kernel { KERNEL } else { 0 },
            data_offset: 0,
            stored: 0,
            crc: 0,
            path: m.path,
        };
        // Mappings next to each other merge: cut each hole out of whichever
        // holds it.
        let mut pieces = vec![region];
        for &(from, to) in holes {
            pieces = pieces
                .into_iter()
                .flat_map(|r| {
                    let before = (r.start < from).then(|| Region {
                        end: r.end.min(from),
                        ..r.clone()
                    });
                    let after = (to < r.end).then(|| Region {
                        start: r.start.max(to),
                        ..r.clone()
                    });
                    before.into_iter().chain(after)
                })
                .collect();
        }
        out.extend(pieces);
    }
    Ok(out)
}

/// The addresses `stack` occupies, its guard page included, and nothing else:
/// the kernel may place it right next to a mapping the image must keep whole.
fn mapped_range(stack: &corosensei::stack::DefaultStack) -> (u64, u64) {
    use corosensei::stack::Stack;
    // corosensei's limit already includes the guard page.
    (stack.limit().get() as u64, stack.base().get() as u64)
}

/// Exit statuses of the child.
const CHILD_SHORT_WRITE: i32 = 250;

/// Bytes written per round.
const CHUNK: u64 = 8 << 20;

/// The child's private buffer of [`CHUNK`] bytes, page-aligned: every region is
/// copied into it, checksummed there and written from there. Direct I/O from
/// the snapshot's own pages would make the kernel unshare (copy) each page it
/// pins, one fault at a time, and shared mappings may change between a
/// checksum and a write. Mapped with a raw system call (no allocation in the
/// child); `None` if the kernel refuses.
fn bounce_buffer() -> Option<&'static mut [u8]> {
    sys::map_anonymous(CHUNK as usize)
}

/// Where the child's bytes of a region go.
enum Out<'c> {
    /// To the file at their offsets, pages of zeros left as holes.
    File(i32),
    /// Through the compressor, in order (offsets are implied).
    Zstd(i32, &'c mut Compressor),
}

impl Out<'_> {
    /// Puts `bytes`, which belong at `offset` of an uncompressed image.
    /// 0 or an errno.
    fn put(&mut self, bytes: &[u8], offset: u64) -> i32 {
        match self {
            Out::File(fd) => write_skipping_zeros(*fd, bytes, offset),
            Out::Zstd(fd, z) => z.push(*fd, bytes),
        }
    }
}

/// Writes `len` bytes from `src` at `offset` through `bounce`, checksumming
/// them on the way. Returns 0 or an errno. Runs in the forked child: no
/// allocation.
fn write_region(
    out: &mut Out<'_>,
    mem: &Memory<'_>,
    src: u64,
    len: u64,
    offset: u64,
    crc: &mut u32,
    bounce: &mut [u8],
) -> i32 {
    let mut done = 0;
    while done < len {
        let n = (len - done).min(CHUNK) as usize;
        // [src, src+len) is a readable mapping of the snapshot (it was listed
        // readable in /proc/self/maps before the fork, and the child has
        // nothing that could unmap it), or staged. Staged bytes are written
        // from the staging buffer as they are.
        let bytes = match mem.staged_bytes(src + done, n) {
            Some(staged) => staged,
            None => {
                mem.copy(src + done, &mut bounce[..n]);
                &bounce[..n]
            }
        };
        *crc = crc32c::crc32c_append(*crc, bytes);
        let e = out.put(bytes, offset + done);
        if e != 0 {
            return e;
        }
        done += n as u64;
    }
    0
}

/// What the child needs to read only the populated pages of anonymous
/// memory: its own /proc/self/pagemap and a buffer of ranges. Pages of
/// anonymous memory that were never touched (most of 65,536 ranks' stacks:
/// 69.6 GB of address space for 605 MB of data) hold zeros; reading them
/// page by page to find that out faulted the zero page in 17 million times.
struct Populated {
    pagemap: i32,
    ranges: &'static mut [crate::dirty::PageRegion],
    /// Whether the host swaps ([`crate::dirty::swap_in_use`]).
    swap: bool,
}

/// Ranges of empty pages one scan reports at most.
const EMPTY_RANGES: usize = 4096;

impl Populated {
    /// None where the kernel has no PAGEMAP_SCAN or the child cannot map the
    /// buffer: regions are then read whole.
    fn open(swap: bool) -> Option<Populated> {
        // SAFETY: openat (raw: the child allocates nothing) of a NUL-terminated
        // path; in the child, /proc/self is the snapshot.
        let fd = unsafe {
            call!(
                libc::SYS_openat,
                libc::AT_FDCWD,
                c"/proc/self/pagemap".as_ptr(),
                libc::O_RDONLY | libc::O_CLOEXEC
            )
        };
        if fd < 0 {
            return None;
        }
        let bytes =
            sys::map_anonymous(EMPTY_RANGES * std::mem::size_of::<crate::dirty::PageRegion>())?;
        // SAFETY: a fresh page-aligned mapping of EMPTY_RANGES page ranges'
        // worth of zeros, a valid value of the plain-old-data PageRegion.
        let ranges = unsafe {
            std::slice::from_raw_parts_mut(
                bytes.as_mut_ptr().cast::<crate::dirty::PageRegion>(),
                EMPTY_RANGES,
            )
        };
        Some(Populated {
            pagemap: fd as i32,
            ranges,
            swap,
        })
    }

    /// [`write_region`] of the anonymous region `r`, reading only its
    /// populated pages: the others are holes of the image, checksummed as
    /// zeros without being read. 0 or an errno.
    fn write(
        &mut self,
        out: &mut Out<'_>,
        mem: &Memory<'_>,
        r: &Region,
        at: u64,
        crc: &mut u32,
        bounce: &mut [u8],
    ) -> i32 {
        if let Some(segments) = mem.segments_of(r) {
            return write_staged(out, mem, r, segments, at, crc, bounce);
        }
        // Where the bytes written or checksummed so far end.
        let mut pos = r.start;
        let walked = crate::dirty::for_each_populated(
            self.pagemap,
            r.start..r.end,
            self.swap,
            self.ranges,
            |s, e| {
                *crc = crate::holes::append_zeros(*crc, s - pos);
                pos = e;
                match write_region(out, mem, s, e - s, at + (s - r.start), crc, bounce) {
                    0 => Ok(()),
                    e => Err(e),
                }
            },
        );
        match walked {
            Err(e) => e,
            Ok(stop) => {
                *crc = crate::holes::append_zeros(*crc, stop - pos);
                if stop == r.end {
                    return 0;
                }
                // No PAGEMAP_SCAN, or no progress: the rest is read.
                write_region(
                    out,
                    mem,
                    stop,
                    r.end - stop,
                    at + (stop - r.start),
                    crc,
                    bounce,
                )
            }
        }
    }
}

/// [`write_region`] of a staged region: its segments from the buffer, the
/// pages between them (never populated) as holes, checksummed as zeros.
fn write_staged(
    out: &mut Out<'_>,
    mem: &Memory<'_>,
    r: &Region,
    segments: &[Segment],
    at: u64,
    crc: &mut u32,
    bounce: &mut [u8],
) -> i32 {
    let mut pos = r.start;
    for g in segments {
        *crc = crate::holes::append_zeros(*crc, g.start - pos);
        let e = write_region(
            out,
            mem,
            g.start,
            g.end - g.start,
            at + (g.start - r.start),
            crc,
            bounce,
        );
        if e != 0 {
            return e;
        }
        pos = g.end;
    }
    *crc = crate::holes::append_zeros(*crc, r.end - pos);
    0
}

/// Writes the pages of `bytes` that are not all zeros at `offset` on: the
/// file was sized beforehand, so the others stay holes that read back as
/// zeros (untouched stacks and heaps). 0 or an errno.
fn write_skipping_zeros(fd: i32, bytes: &[u8], offset: u64) -> i32 {
    let mut at = 0usize;
    while at < bytes.len() {
        let page_end = |p: usize| (p + PAGE_BYTES).min(bytes.len());
        if is_zero(&bytes[at..page_end(at)]) {
            at = page_end(at);
            continue;
        }
        let mut run_end = page_end(at);
        while run_end < bytes.len() && !is_zero(&bytes[run_end..page_end(run_end)]) {
            run_end = page_end(run_end);
        }
        let e = pwrite_all(fd, &bytes[at..run_end], offset + at as u64);
        if e != 0 {
            return e;
        }
        at = run_end;
    }
    0
}

const PAGE_BYTES: usize = 4096;

pub(crate) fn is_zero(page: &[u8]) -> bool {
    // SAFETY: u64 has no invalid bit patterns; align_to splits off the unaligned ends.
    let (head, words, tail) = unsafe { page.align_to::<u64>() };
    head.iter().all(|&b| b == 0) && words.iter().all(|&w| w == 0) && tail.iter().all(|&b| b == 0)
}

/// Writes all of `bytes` at `offset`; 0 or an errno. No allocation.
pub(crate) fn pwrite_all(fd: i32, bytes: &[u8], offset: u64) -> i32 {
    let mut at = 0usize;
    while at < bytes.len() {
        // A raw system call: glibc's pwrite is a cancellation point and writes
        // errno and the thread descriptor, which live in a mapping being dumped.
        // SAFETY: pwrite64 reads from a valid slice into an open descriptor.
        let w = unsafe {
            call!(
                libc::SYS_pwrite64,
                fd,
                bytes[at..].as_ptr(),
                bytes.len() - at,
                offset + at as u64
            )
        };
        if w < 0 {
            if w == -(libc::EINTR as i64) {
                continue;
            }
            if w == -(libc::EINVAL as i64) && without_direct_io(fd) {
                // The file system takes no direct I/O of this size or place:
                // written through the page cache instead (fsync'd all the same).
                continue;
            }
            return -w as i32;
        }
        if w == 0 {
            return CHILD_SHORT_WRITE;
        }
        at += w as usize;
    }
    0
}

/// Clears `O_DIRECT` on `fd`; whether it was set.
fn without_direct_io(fd: i32) -> bool {
    // SAFETY: fcntl (raw, as in pwrite_all) on an open descriptor.
    let flags = unsafe { call!(libc::SYS_fcntl, fd, libc::F_GETFL) };
    if flags < 0 || flags & libc::O_DIRECT as i64 == 0 {
        return false;
    }
    // SAFETY: as above.
    unsafe {
        call!(
            libc::SYS_fcntl,
            fd,
            libc::F_SETFL,
            flags & !(libc::O_DIRECT as i64)
        ) >= 0
    }
}

/// What the child writes: each region as `writes` says, the ranges of
/// DELTA regions in `pages`.
struct ChildPlan<'a> {
    memory: Memory<'a>,
    regions: &'a [Region],
    writes: &'a [RegionWrite],
    pages: &'a [PageRegion],
    compression: Option<Compression>,
    /// Whether the host swaps ([`crate::dirty::swap_in_use`]).
    swap: bool,
}

/// The child's whole work; returns its exit status. Regions are laid out
/// one after the other after the metadata, as they are written.
fn child_writes(fd: i32, plan: &ChildPlan<'_>, meta: &mut [u8]) -> i32 {
    let Some(bounce) = bounce_buffer() else {
        return libc::ENOMEM;
    };
    let mut compressor = match plan.compression {
        Some(c) => match Compressor::new(c) {
            Some(z) => Some(z),
            None => return libc::ENOMEM,
        },
        None => None,
    };
    let mut populated = Populated::open(plan.swap);
    let mut at = meta.len() as u64;
    for (i, r) in plan.regions.iter().enumerate() {
        let mut crc = 0;
        let mut out = match compressor.as_mut() {
            Some(z) => {
                z.begin(at);
                Out::Zstd(fd, z)
            }
            None => Out::File(fd),
        };
        let (flags, mut stored) = match plan.writes[i] {
            RegionWrite::Nothing => continue,
            RegionWrite::Whole => {
                let e = match (&mut out, &mut populated) {
                    (Out::File(_), Some(p)) if crate::incremental::anonymous(r) => {
                        p.write(&mut out, &plan.memory, r, at, &mut crc, bounce)
                    }
                    _ => write_region(
                        &mut out,
                        &plan.memory,
                        r.start,
                        r.len(),
                        at,
                        &mut crc,
                        bounce,
                    ),
                };
                if e != 0 {
                    return e;
                }
                (r.flags & !DELTA, r.len())
            }
            RegionWrite::Delta { written, empty } => {
                let written = &plan.pages[written.0..written.1];
                let empty = &plan.pages[empty.0..empty.1];
                match write_delta(
                    &mut out,
                    &plan.memory,
                    r,
                    written,
                    empty,
                    at,
                    &mut crc,
                    bounce,
                ) {
                    Ok(stored) => (r.flags | DELTA, stored),
                    Err(e) => return e,
                }
            }
        };
        let mut flags = flags & !COMPRESSED;
        if let Some(z) = compressor.as_mut() {
            match z.finish(fd) {
                Ok((bytes, frames_crc)) => (stored, crc) = (bytes, frames_crc),
                Err(e) => return e,
            }
            flags |= COMPRESSED;
        }
        image::set_region_data(meta, i, flags, at, stored, crc);
        at += stored;
    }
    // Pages of zeros at the end were not written: the length makes them read.
    // SAFETY: ftruncate (raw, as in pwrite_all) on the descriptor opened before the fork.
    let e = unsafe { call!(libc::SYS_ftruncate, fd, at) };
    if e != 0 {
        return -e as i32;
    }
    image::seal(meta);
    let mut crc_unused = 0;
    let e = write_region(
        &mut Out::File(fd),
        &Memory::unstaged(),
        meta.as_ptr() as u64,
        meta.len() as u64,
        0,
        &mut crc_unused,
        bounce,
    );
    if e != 0 {
        return e;
    }
    // SAFETY: fsync (raw, as above) on the descriptor opened before the fork.
    let e = unsafe { call!(libc::SYS_fsync, fd) };
    if e != 0 {
        return -e as i32;
    }
    0
}

/// Bytes written through the bounce buffer in whole chunks (direct I/O
/// takes whole pages at page offsets), checksummed on the way.
struct Staged<'b, 'o, 'c> {
    out: &'o mut Out<'c>,
    at: u64,
    bounce: &'b mut [u8],
    filled: usize,
}

impl Staged<'_, '_, '_> {
    fn push(&mut self, mut bytes: &[u8], crc: &mut u32) -> i32 {
        while !bytes.is_empty() {
            let n = bytes.len().min(self.bounce.len() - self.filled);
            self.bounce[self.filled..self.filled + n].copy_from_slice(&bytes[..n]);
            self.filled += n;
            bytes = &bytes[n..];
            if self.filled == self.bounce.len() {
                let e = self.flush(crc);
                if e != 0 {
                    return e;
                }
            }
        }
        0
    }

    /// Writes what is staged, padded with zeros to a whole page.
    fn flush(&mut self, crc: &mut u32) -> i32 {
        let end = self.filled.div_ceil(PAGE_BYTES) * PAGE_BYTES;
        self.bounce[self.filled..end].fill(0);
        *crc = crc32c::crc32c_append(*crc, &self.bounce[..end]);
        let e = self.out.put(&self.bounce[..end], self.at);
        self.at += end as u64;
        self.filled = 0;
        e
    }
}

/// Calls `f` with each extent of DELTA region `r`, in address order: the
/// `empty` ranges (zeros), and the `written` ranges (both sorted and
/// disjoint) split where their pages hold zeros: a page of zeros is stored
/// as an extent of zeros, whatever wrote it (a stack's probes, memory given
/// back and touched again, a buffer cleared). Reads the snapshot's pages:
/// the same extents every call. No allocation.
fn for_each_extent(
    mem: &Memory<'_>,
    r: &Region,
    written: &[PageRegion],
    empty: &[PageRegion],
    mut f: impl FnMut(Extent),
) {
    // `at` is a page of a written range of a readable mapping of the
    // snapshot (as in write_region), or staged.
    let page_is_zero = |at: u64| mem.page_is_zero(at, PAGE_BYTES);
    let mut emit = |start: u64, end: u64, kind: u64| {
        f(Extent {
            offset: start - r.start,
            len: end - start,
            kind,
        })
    };
    let (mut w, mut z) = (0, 0);
    while w < written.len() || z < empty.len() {
        if z == empty.len() || (w < written.len() && written[w].start < empty[z].start) {
            let x = written[w];
            w += 1;
            // Runs of pages of one kind.
            let mut run = x.start;
            let mut zero = page_is_zero(x.start);
            let mut at = x.start + PAGE;
            while at < x.end {
                let z_now = page_is_zero(at);
                if z_now != zero {
                    emit(run, at, if zero { EXTENT_ZERO } else { EXTENT_DATA });
                    run = at;
                    zero = z_now;
                }
                at += PAGE;
            }
            emit(run, x.end, if zero { EXTENT_ZERO } else { EXTENT_DATA });
        } else {
            emit(empty[z].start, empty[z].end, EXTENT_ZERO);
            z += 1;
        }
    }
}

/// Writes DELTA region `r` at `at`: its extent table (see
/// [`for_each_extent`]), then the pages of its data extents. Returns the
/// bytes stored, or an errno. No allocation: the table is built in
/// `bounce`, a chunk at a time.
#[allow(clippy::too_many_arguments)]
fn write_delta(
    out: &mut Out<'_>,
    mem: &Memory<'_>,
    r: &Region,
    written: &[PageRegion],
    empty: &[PageRegion],
    at: u64,
    crc: &mut u32,
    bounce: &mut [u8],
) -> Result<u64, i32> {
    let mut count = 0usize;
    for_each_extent(mem, r, written, empty, |_| count += 1);
    let mut table = Staged {
        out,
        at,
        bounce,
        filled: 0,
    };
    let mut e = table.push(&(count as u64).to_le_bytes(), crc);
    for_each_extent(mem, r, written, empty, |x| {
        if e != 0 {
            return;
        }
        let mut entry = [0u8; image::EXTENT_SIZE];
        entry[..8].copy_from_slice(&x.offset.to_le_bytes());
        entry[8..16].copy_from_slice(&x.len.to_le_bytes());
        entry[16..].copy_from_slice(&x.kind.to_le_bytes());
        e = table.push(&entry, crc);
    });
    if e == 0 && table.filled > 0 {
        e = table.flush(crc);
    }
    if e != 0 {
        return Err(e);
    }
    debug_assert_eq!(table.at - at, image::extent_table_len(count));
    let mut data_at = table.at;
    let (out, bounce) = (table.out, table.bounce);
    for_each_extent(mem, r, written, empty, |x| {
        if e != 0 || x.kind != EXTENT_DATA {
            return;
        }
        e = write_region(out, mem, r.start + x.offset, x.len, data_at, crc, bounce);
        data_at += x.len;
    });
    if e != 0 {
        return Err(e);
    }
    Ok(data_at - at)
}

/// How an image is taken.
#[derive(Debug, Clone, Copy, Default)]
pub struct DumpOptions {
    /// Incremental over the last committed image where it can be.
    pub incremental: Option<Incremental>,
    /// What the image stores compressed, if anything.
    pub compression: Option<Compression>,
    /// Whose image it is, recorded in its header.
    pub owner: Option<crate::image::Owner>,
    /// Bytes of memory kept for copying the large regions the program
    /// rewrites in the stall instead of sharing them with the writer
    /// ([`crate::staging`]); 0: copy-on-write alone.
    pub staging: u64,
}

/// Dumps this process into the image file `path` and waits until it is durable.
/// `None`: the call returned in a process restored from that image.
pub fn dump_image(path: &Path) -> Result<Option<DumpReport>, ImageError> {
    match start_dump(path, DumpOptions::default())? {
        Snapshot::Writing(pending) => pending.wait().map(Some),
        Snapshot::Restored => Ok(None),
    }
}

/// A dump whose writer (the forked child) may still be running.
pub struct PendingDump {
    path: PathBuf,
    tmp: PathBuf,
    pid: libc::pid_t,
    fd: i32,
    data_bytes: u64,
    regions: usize,
    stall: Duration,
    forked: Instant,
    usage_at_fork: Usage,
    staged_bytes: u64,
}

/// How [`start_dump`] returned.
pub enum Snapshot {
    /// In the process that took the snapshot: its image is being written.
    Writing(PendingDump),
    /// In a process restored from the image.
    Restored,
}

impl Snapshot {
    /// The dump being written, unless this is a restored process.
    pub fn into_pending(self) -> Option<PendingDump> {
        match self {
            Snapshot::Writing(p) => Some(p),
            Snapshot::Restored => None,
        }
    }
}

/// How often the mappings are read again when they change under the freeze.
/// Threads that run until the freeze (a checkpoint asked from outside finds
/// ranks computing) may map or trim memory in the meantime (an allocator
/// returning the tail of its heap, say); on a loaded machine the window is
/// long, so a few more attempts cost little next to a failed checkpoint.
const MAPS_ATTEMPTS: usize = 20;

/// Forks the image writer for `path` (written as `path.tmp`, made durable, then
/// renamed by [`PendingDump::wait`]) and returns as soon as the fork does: the
/// caller's memory is from then on free to change. Every other thread of the
/// process is stopped at a signal frame while the snapshot is taken
/// ([`crate::threads`]), so the image holds all of them. With `incremental`,
/// writes are tracked from this snapshot on and the image stores only what
/// changed since the last committed one, when there is one
/// ([`crate::incremental`]); with `compression`, what it stores is
/// compressed ([`crate::compress`]).
pub fn start_dump(path: &Path, options: DumpOptions) -> Result<Snapshot, ImageError> {
    let DumpOptions {
        incremental,
        compression,
        owner,
        staging,
    } = options;
    let fail = |problem: String| ImageError {
        file: path.to_path_buf(),
        problem,
    };
    let started = Instant::now();
    let exe = exe_identity().map_err(|e| fail(format!("executable identity: {e}")))?;
    let runtime =
        runtime_identity().map_err(|e| fail(format!("identity of the mpcrs runtime: {e}")))?;
    let tmp = PathBuf::from(format!("{}.tmp", path.display()));
    let ctmp = CString::new(tmp.as_os_str().as_bytes())
        .map_err(|_| fail("path holds a NUL byte".into()))?;
    // Direct I/O where the file system takes it: the image bypasses the page
    // cache (the writer's pages are its own, aligned, in whole pages), so it
    // goes at the device's pace instead of the dirty-page throttle's.
    let open = |direct: i32| {
        // SAFETY: open with a NUL-terminated path.
        unsafe {
            libc::open(
                ctmp.as_ptr(),
                libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_CLOEXEC | direct,
                0o600,
            )
        }
    };
    let fd = match open(libc::O_DIRECT) {
        fd if fd < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL) => {
            open(0)
        }
        fd => fd,
    };
    if fd < 0 {
        return Err(fail(format!(
            "cannot create {}: {}",
            tmp.display(),
            std::io::Error::last_os_error()
        )));
    }
    let abandon = |problem: String| {
        // SAFETY: closing the descriptor this function opened.
        unsafe { libc::close(fd) };
        let _ = std::fs::remove_file(&tmp);
        fail(problem)
    };
    // The child works on a stack of its own, left out of the image: the calling
    // thread's stack is in the image and must not change while it is
    // checksummed and written, and neither may the child's.
    let mut child_stack = match corosensei::stack::DefaultStack::new(256 * 1024) {
        Ok(s) => Some(s),
        Err(e) => return Err(abandon(format!("stack for the image writer: {e}"))),
    };
    let stack_range = mapped_range(child_stack.as_ref().unwrap());
    let swap = crate::dirty::swap_in_use();
    let mut stager = Stager::open(staging, swap);
    let holes: Vec<(u64, u64)> = std::iter::once(stack_range)
        .chain(stager.as_ref().map(Stager::hole))
        .collect();
    let mut maps_now: Vec<u8> = Vec::new();
    let mut last_change = String::new();
    let mut tracking: Option<incremental::Snapshot> = None;
    for _ in 0..MAPS_ATTEMPTS {
        let maps = std::fs::read("/proc/self/maps")
            .map_err(|e| abandon(format!("/proc/self/maps: {e}")))?;
        let regions =
            regions(&maps, &holes).map_err(|e| abandon(format!("reading the mappings: {e}")))?;
        if stager.as_mut().is_some_and(|st| st.make_room(&regions)) {
            // The threads that allocated the buffer's pages changed the
            // mappings: read them again.
            last_change = "the staging buffer grew".into();
            continue;
        }
        // The tracking of the last attempt is let go first (it holds a lock).
        drop(tracking.take());
        tracking = match incremental {
            Some(opts) => match incremental::Snapshot::prepare(opts, &regions) {
                Ok(t) => Some(t),
                Err(e) => {
                    no_tracking(&e);
                    None
                }
            },
            None => None,
        };
        let whole = match tracking {
            None => RegionWrite::whole(&regions),
            Some(_) => Vec::new(),
        };
        let data_bytes = regions
            .iter()
            .filter(|r| r.has_data())
            .map(|r| r.len())
            .sum();
        // SAFETY: sbrk(0) only reads the current program break.
        let brk = unsafe { libc::sbrk(0) } as u64;
        let header = ImageHeader {
            exe: exe.clone(),
            runtime: runtime.clone(),
            brk,
            regions,
            parent: tracking.as_ref().and_then(|t| t.parent),
            owner,
            meta_crc: 0,
        };
        let mut meta = image::encode(&header);
        let mut not_recorded = vec![fd];
        if let Some(t) = &tracking {
            not_recorded.extend(t.fds());
        }
        if let Some(st) = stager.as_mut() {
            not_recorded.push(st.fd());
            // What the writer reads besides its stack and the buffer.
            let mut read: Vec<u64> = vec![
                meta.as_ptr() as u64,
                header.regions.as_ptr() as u64,
                whole.as_ptr() as u64,
            ];
            read.extend(header.regions.iter().map(|r| r.path.as_ptr() as u64));
            if let Some(t) = &tracking {
                read.extend([t.writes.as_ptr() as u64, t.pages().as_ptr() as u64]);
            }
            st.choose(&header.regions, &read);
        }
        crate::kernel_state::record_files(&not_recorded).map_err(abandon)?;
        maps_now.clear();
        maps_now.reserve(maps.len() * 2 + 65536);
        let freeze = crate::threads::Freeze::stop_others().map_err(abandon)?;
        // Nothing below allocates until the freeze ends. If a mapping changed
        // since it was read (another thread mapped memory), read them again.
        if !read_raw("/proc/self/maps\0", &mut maps_now) || maps_now != maps {
            drop(freeze);
            last_change = first_difference(&maps, &maps_now);
            continue;
        }
        crate::kernel_state::record_file_offsets();
        crate::kernel_state::record_signals();
        let mut pid: i64 = 0;
        let meta = &mut meta;
        let captured = freeze.capture_self(&mut || {
            // The written pages are read and reset here, in the handler,
            // once this thread's signal frame is on its stack: a write
            // between the reset and the fork would be in this image's memory
            // but not among the pages it stores, and the restored thread
            // would resume at its parent image's frame. What the handler
            // writes from here on is below that frame, dead once it returns.
            if let Some(t) = tracking.as_mut() {
                t.classify(&header.regions);
            }
            let writes = tracking.as_ref().map_or(&whole[..], |t| &t.writes[..]);
            let pages = tracking.as_ref().map_or(&[][..], |t| t.pages());
            if let Some(st) = stager.as_mut() {
                st.stage(&header.regions, writes, pages);
            }
            let plan = ChildPlan {
                memory: stager.as_ref().map_or(Memory::unstaged(), Stager::memory),
                regions: &header.regions,
                writes,
                pages,
                compression,
                swap,
            };
            // A raw fork: glibc's would take malloc's locks, which a stopped
            // thread may hold.
            // SAFETY: clone without CLONE_VM is fork; the child only writes the
            // image with raw calls on its own stack and leaves with exit_group.
            pid = unsafe { call!(libc::SYS_clone, libc::SIGCHLD, 0, 0, 0, 0) };
            if pid == 0 {
                let stack = child_stack.as_mut().unwrap();
                let status = corosensei::on_stack(stack, || child_writes(fd, &plan, meta));
                sys::exit_group(status);
            }
            if let Some(st) = stager.as_mut() {
                st.release();
            }
        });
        drop(freeze);
        if captured == Captured::Restored {
            // The descriptor and the writer's stack belonged to the process
            // that took the snapshot; neither exists here.
            std::mem::forget(child_stack);
            if let Some(st) = stager.take() {
                st.forget_descriptor();
            }
            return Ok(Snapshot::Restored);
        }
        drop(child_stack);
        let stall = started.elapsed();
        if pid >= 0 {
            if let Some(t) = tracking.take() {
                t.taken();
            }
        }
        let forked = Instant::now();
        let usage_at_fork = own_usage();
        let staged_bytes = stager.as_ref().map_or(0, |s| s.copied);
        if staged_bytes > 0 && pid > 0 {
            crate::staging::set_reader(pid as i32);
        }
        if pid < 0 {
            return Err(abandon(format!(
                "fork: {}",
                std::io::Error::from_raw_os_error(-pid as i32)
            )));
        }
        return Ok(Snapshot::Writing(PendingDump {
            path: path.to_path_buf(),
            tmp,
            pid: pid as libc::pid_t,
            fd,
            data_bytes,
            regions: header.regions.len(),
            stall,
            forked,
            usage_at_fork,
            staged_bytes,
        }));
    }
    Err(abandon(format!(
        "the mappings kept changing while the threads were stopped ({MAPS_ATTEMPTS} attempts; last: {last_change})"
    )))
}

/// Says once that images are full because writes cannot be tracked.
fn no_tracking(why: &str) {
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        mpcrs_settings::report!(
            warn,
            "mpcrs: incremental images are not available here ({why}); every image is full"
        );
    });
}

/// The first line where two readings of /proc/self/maps differ, for the
/// error of a snapshot that could not be taken.
fn first_difference(before: &[u8], after: &[u8]) -> String {
    let (b, a) = (
        String::from_utf8_lossy(before),
        String::from_utf8_lossy(after),
    );
    let mut lines = b.lines().zip(a.lines());
    match lines.find(|(x, y)| x != y) {
        Some((x, y)) => format!("{x:?} became {y:?}"),
        None => format!("{} lines became {}", b.lines().count(), a.lines().count()),
    }
}

/// Reads a whole /proc file into `buf`'s spare capacity with raw calls; false
/// if it does not fit.
fn read_raw(path_nul: &str, buf: &mut Vec<u8>) -> bool {
    // SAFETY: open with a NUL-terminated path.
    let fd = unsafe {
        call!(
            libc::SYS_open,
            path_nul.as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC
        )
    };
    if fd < 0 {
        return false;
    }
    let mut complete = false;
    loop {
        let spare = buf.capacity() - buf.len();
        if spare == 0 {
            break;
        }
        // SAFETY: read into the vector's spare capacity, then extend its length
        // by what was written.
        let n = unsafe { call!(libc::SYS_read, fd, buf.as_mut_ptr().add(buf.len()), spare) };
        if n < 0 {
            break;
        }
        if n == 0 {
            complete = true;
            break;
        }
        // SAFETY: the kernel wrote n bytes there.
        unsafe { buf.set_len(buf.len() + n as usize) };
    }
    // SAFETY: closing the descriptor opened above.
    unsafe { call!(libc::SYS_close, fd) };
    complete
}

impl PendingDump {
    /// Waits for the writer; on success the image is durable under its name.
    pub fn wait(self) -> Result<DumpReport, ImageError> {
        let PendingDump {
            path,
            tmp,
            pid,
            fd,
            data_bytes,
            regions,
            stall,
            forked,
            usage_at_fork,
            staged_bytes,
        } = self;
        let path = path.as_path();
        let fail = |problem: String| ImageError {
            file: path.to_path_buf(),
            problem,
        };
        let mut status = 0;
        // SAFETY: rusage is plain old data, all zeros a valid value.
        let mut writer: libc::rusage = unsafe { std::mem::zeroed() };
        loop {
            // SAFETY: waiting for the child this function forked.
            let r = unsafe { libc::wait4(pid, &mut status, 0, &mut writer) };
            if r == pid {
                break;
            }
            if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                break;
            }
        }
        // Reaped (or not ours to wait for any more): the buffer is free.
        if crate::staging::is_reader(pid) {
            crate::staging::set_reader(0);
        }
        // SAFETY: closing the descriptor this function opened.
        unsafe { libc::close(fd) };
        let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
        if !ok {
            let _ = std::fs::remove_file(&tmp);
            let why = if libc::WIFEXITED(status) {
                match libc::WEXITSTATUS(status) {
                    CHILD_SHORT_WRITE => "the file system took no more bytes".to_string(),
                    e => std::io::Error::from_raw_os_error(e).to_string(),
                }
            } else {
                format!("the writer was killed by signal {}", libc::WTERMSIG(status))
            };
            return Err(fail(format!("writing the image failed: {why}")));
        }
        std::fs::rename(&tmp, path)
            .map_err(|e| fail(format!("rename from {}: {e}", tmp.display())))?;
        if let Some(dir) = path.parent() {
            crate::commit::sync_dir(dir)
                .map_err(|e| fail(format!("fsync of the directory: {e}")))?;
        }
        let write = forked.elapsed();
        let now = own_usage();
        let cost = WriteCost {
            staged_bytes,
            faults: (now.faults - usage_at_fork.faults).max(0) as u64,
            program_kernel: now.kernel.saturating_sub(usage_at_fork.kernel),
            writer_cpu: duration(writer.ru_utime) + duration(writer.ru_stime),
        };
        let (_, header) = image::read_header(path)?;
        let meta = std::fs::metadata(path).map_err(|e| fail(e.to_string()))?;
        let bytes = meta.len();
        let stored_bytes = (std::os::unix::fs::MetadataExt::blocks(&meta) * 512).min(bytes);
        Ok(DumpReport {
            path: path.to_path_buf(),
            parent: header.parent,
            meta_crc: header.meta_crc,
            bytes,
            stored_bytes,
            data_bytes,
            regions,
            stall,
            write,
            cost,
        })
    }
}

/// What this process (every thread) used of what a write costs it.
#[derive(Debug, Clone, Copy)]
struct Usage {
    faults: i64,
    kernel: Duration,
}

fn own_usage() -> Usage {
    // SAFETY: rusage is plain old data; getrusage fills it.
    let u = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u
    };
    Usage {
        faults: u.ru_minflt + u.ru_majflt,
        kernel: duration(u.ru_stime),
    }
}

fn duration(t: libc::timeval) -> Duration {
    Duration::new(t.tv_sec.max(0) as u64, (t.tv_usec.max(0) as u32) * 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_writers_stack_range_is_exactly_its_own_mappings() {
        let stack = corosensei::stack::DefaultStack::new(256 * 1024).unwrap();
        let (start, end) = mapped_range(&stack);
        let maps = parse_maps(&std::fs::read("/proc/self/maps").unwrap()).unwrap();
        let inside: Vec<_> = maps
            .iter()
            .filter(|m| m.start < end && start < m.end)
            .collect();
        assert!(!inside.is_empty());
        assert!(
            inside.iter().all(|m| start <= m.start && m.end <= end),
            "[{start:#x}, {end:#x}) takes part of a neighbouring mapping: {inside:?}"
        );
        assert_eq!(inside.first().unwrap().start, start);
        assert_eq!(inside.last().unwrap().end, end);
        // Mappings apart from the stack's are recorded whole.
        let maps_text = std::fs::read("/proc/self/maps").unwrap();
        let kept: u64 = regions(&maps_text, &[(start, end)])
            .unwrap()
            .iter()
            .map(|r| r.end - r.start)
            .sum();
        let all: u64 = regions(&maps_text, &[])
            .unwrap()
            .iter()
            .map(|r| r.end - r.start)
            .sum();
        assert_eq!(kept, all - (end - start));
    }

    /// A region of `pages` pages, written by the two writers into memfds:
    /// what each file holds and the checksum.
    fn both_writers(r: &Region) -> ((Vec<u8>, u32), (Vec<u8>, u32)) {
        let bounce = bounce_buffer().unwrap();
        let mut run = |populated: bool| {
            // SAFETY: a new memfd with a valid name.
            let fd = unsafe { libc::memfd_create(c"dump-test".as_ptr(), 0) };
            let mut crc = 0;
            let mut out = Out::File(fd);
            let e = if populated {
                Populated::open(crate::dirty::swap_in_use()).unwrap().write(
                    &mut out,
                    &Memory::unstaged(),
                    r,
                    0,
                    &mut crc,
                    bounce,
                )
            } else {
                write_region(
                    &mut out,
                    &Memory::unstaged(),
                    r.start,
                    r.len(),
                    0,
                    &mut crc,
                    bounce,
                )
            };
            assert_eq!(e, 0);
            let mut bytes = vec![0u8; r.len() as usize];
            // SAFETY: reads our own memfd into a buffer of the region's size;
            // what lies past its end (holes at the end) stays zeros.
            unsafe { libc::pread(fd, bytes.as_mut_ptr().cast(), bytes.len(), 0) };
            // SAFETY: our own fd.
            unsafe { libc::close(fd) };
            (bytes, crc)
        };
        // The reader of populated pages first: the other one populates them all.
        let populated = run(true);
        (run(false), populated)
    }

    /// Whether page `p` of `mem` holds nothing yet.
    fn unpopulated(mem: &[u8], p: usize) -> bool {
        let pagemap = std::fs::File::open("/proc/self/pagemap").unwrap();
        let start = mem.as_ptr() as u64 + (p * PAGE_BYTES) as u64;
        let mut out = [crate::dirty::PageRegion::default(); 4];
        use std::os::fd::AsRawFd;
        let (n, _) = crate::dirty::unpopulated_raw(
            pagemap.as_raw_fd(),
            start..start + PAGE_BYTES as u64,
            &mut out,
            crate::dirty::swap_in_use(),
        )
        .unwrap();
        n == 1
    }

    #[test]
    fn only_populated_pages_of_anonymous_memory_are_read_and_the_image_is_the_same() {
        const PAGES: usize = 3000;
        let mem = sys::map_anonymous(PAGES * PAGE_BYTES).unwrap();
        let at = |p: usize| p * PAGE_BYTES;
        // Written pages here and there (runs, single pages, one at each end),
        // a page written with zeros, and a page only read (the zero page).
        for p in [0, 1, 2, 700, 1500, 1501, 2998, 2999] {
            mem[at(p)..at(p) + 100].fill(p as u8 | 1);
        }
        mem[at(900)] = 0;
        // SAFETY: a read of our own mapping.
        let _ = unsafe { std::ptr::read_volatile(&mem[at(1200)]) };
        let r = Region {
            start: mem.as_ptr() as u64,
            end: mem.as_ptr() as u64 + mem.len() as u64,
            prot: 3,
            flags: HAS_DATA,
            data_offset: 0,
            stored: 0,
            crc: 0,
            path: String::new(),
        };
        assert!(unpopulated(mem, 2000));
        let bounce = bounce_buffer().unwrap();
        // SAFETY: a new memfd with a valid name.
        let fd = unsafe { libc::memfd_create(c"dump-test".as_ptr(), 0) };
        let mut crc = 0;
        let e = Populated::open(crate::dirty::swap_in_use()).unwrap().write(
            &mut Out::File(fd),
            &Memory::unstaged(),
            &r,
            0,
            &mut crc,
            bounce,
        );
        assert_eq!(e, 0);
        // SAFETY: our own fd.
        unsafe { libc::close(fd) };
        assert!(
            unpopulated(mem, 2000),
            "the writer read a page never touched"
        );
        assert!(!unpopulated(mem, 700));
        let ((whole, whole_crc), (populated, populated_crc)) = both_writers(&r);
        assert_eq!(whole_crc, populated_crc);
        assert!(whole == populated);
        assert_eq!(whole[at(1501)], 1501u16 as u8 | 1);
    }
}
