//! Staging: the snapshot's copy of the memory the program rewrites, taken in
//! the stall, so that the program's writes after the fork cost it nothing.
//!
//! After `fork()`, the first write to each page of the snapshot is a
//! copy-on-write fault in the program (4-12 us per 4 KiB page on these
//! machines): a program that rewrites its arrays between checkpoints pays
//! about what a blocking write of its image would cost, however short the
//! stall. Staging pays one memcpy in the stall instead. The large private
//! anonymous regions are copied into a buffer kept for it (shared memory:
//! the first checkpoint faults it in, later ones reuse it without a fault),
//! they are left out of the fork (MADV_DONTFORK), and the writer reads the
//! copy. The program's own pages are never shared with the writer, so its
//! writes take no fault at all.
//!
//! Protocol of one snapshot (the dumper's):
//! 1. Before the freeze, [`Stager::open`] maps or reuses the buffer (its
//!    range is left out of the image), [`Stager::make_room`] allocates, on
//!    every core, the pages the snapshot will need that it does not hold
//!    yet (the first snapshot's cost: fresh memory, which a virtual
//!    machine's host backs on first touch), and [`Stager::choose`] picks the
//!    regions it may stage: private anonymous and writable, of at least
//!    [`MIN_REGION`] bytes, holding nothing the writer reads (the snapshot's
//!    tables, the handler's stack and thread descriptor) and not the
//!    uninitialized data of a loaded object (where the runtime's and libc's
//!    statics live, which the writer's code reads).
//! 2. In the handler, every other thread stopped, [`Stager::stage`] copies
//!    the populated pages each region stores in this image (all of them, or
//!    the written ones of an incremental image) into the buffer while it has
//!    room, and marks the region MADV_DONTFORK. A region that does not fit
//!    is not staged: its pages are shared with the writer as before.
//! 3. The fork. The writer reads through [`Memory`], which serves staged
//!    regions from the buffer (zeros where nothing was populated) and the
//!    rest from the snapshot.
//! 4. Right after the fork, [`Stager::release`] marks the regions
//!    MADV_DOFORK again. The buffer is not written again until the writer
//!    has ended: the next snapshot waits for it.
//!
//! A region the writer touched after all would not be in its address space:
//! it would die of SIGSEGV and the image would fail as any failed write does,
//! the previous one staying whole. Nothing is ever read wrong.

use std::sync::{Mutex, MutexGuard};

use crate::dirty::PageRegion;
use crate::image::{Region, SHARED};
use crate::incremental::RegionWrite;
use crate::sys::call;

/// Regions smaller than this are left to copy-on-write: their faults cost
/// little and each staged region costs two madvise calls.
pub const MIN_REGION: u64 = 1 << 20;

/// Staged regions with less populated than this are left to copy-on-write.
const MIN_STAGED: u64 = 64 << 10;

/// What the buffer keeps populated beyond the last snapshot's need is
/// counted in these.
const KEEP_STEP: u64 = 2 << 20;

/// Slots for the populated ranges of one snapshot's staged regions, and for
/// the staged regions (24 and 16 bytes each). A snapshot that needs more
/// leaves the rest to copy-on-write.
const SEGMENTS: usize = 1 << 16;
const STAGED: usize = 1 << 14;
const SCAN: usize = 4096;

/// `[start, end)` of the snapshot, staged at `offset` of the buffer.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Segment {
    pub start: u64,
    pub end: u64,
    pub offset: u64,
}

/// A staged region: its pages are the buffer's segments, zeros elsewhere.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct StagedRegion {
    pub start: u64,
    pub end: u64,
}

/// The buffer kept from one snapshot to the next.
struct Buffer {
    base: u64,
    /// Bytes of address space reserved (only what snapshots copy is
    /// populated).
    len: u64,
    /// Bytes of the buffer the last snapshot used (populated up to there).
    used: u64,
    /// `threads::RESTORES` when it was mapped: a restored process does not
    /// have it (its range is in no image).
    restores: u64,
}

static BUFFER: Mutex<Option<Buffer>> = Mutex::new(None);

/// The writer reading the buffer, until it is waited for (0: none). A
/// snapshot taken meanwhile is not staged: it would overwrite what that
/// writer reads.
static READER: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// The writer `pid` reads the buffer from now on (0: it ended).
pub(crate) fn set_reader(pid: i32) {
    READER.store(pid, std::sync::atomic::Ordering::Release);
}

/// Whether `pid` is the writer reading the buffer.
pub(crate) fn is_reader(pid: i32) -> bool {
    pid != 0 && READER.load(std::sync::atomic::Ordering::Acquire) == pid
}

/// Address space reserved at least, so that a budget that changes a little
/// from one snapshot to the next does not remap (and fault in) the buffer.
const RESERVE_STEP: u64 = 1 << 30;

/// Bytes of memory the buffer holds now (what the last snapshot copied).
pub fn held() -> u64 {
    let mut guard = BUFFER.lock().unwrap_or_else(|e| e.into_inner());
    forget_if_restored(&mut guard);
    guard.as_ref().map_or(0, |b| b.used)
}

/// In a restored process, forgets the buffer: the image left it out, so
/// nothing is mapped there now, and the writer that read it was the
/// snapshot's process's.
fn forget_if_restored(buffer: &mut Option<Buffer>) {
    let restores = crate::threads::RESTORES.load(std::sync::atomic::Ordering::Acquire);
    if buffer.as_ref().is_some_and(|b| b.restores != restores) {
        *buffer = None;
        set_reader(0);
    }
}

/// One snapshot's staging (see the module's protocol).
pub(crate) struct Stager {
    guard: MutexGuard<'static, Option<Buffer>>,
    pagemap: i32,
    /// Per region of the snapshot being prepared: whether it may be staged.
    candidate: Vec<bool>,
    scan: Box<[PageRegion]>,
    segments: Box<[Segment]>,
    segments_len: usize,
    staged: Box<[StagedRegion]>,
    staged_len: usize,
    /// Bytes this snapshot may copy.
    limit: u64,
    /// Whether the host swaps ([`crate::dirty::swap_in_use`]).
    swap: bool,
    /// Bytes copied by the last [`Stager::stage`].
    pub copied: u64,
}

impl Stager {
    /// A stager that copies at most `budget` bytes, into the buffer kept
    /// from one snapshot to the next (mapped, or grown, here); `None`
    /// without a budget or when the buffer or /proc/self/pagemap cannot be
    /// had (the snapshot is then taken by copy-on-write alone).
    pub(crate) fn open(budget: u64, swap: bool) -> Option<Stager> {
        if budget < MIN_STAGED {
            return None;
        }
        let mut guard = BUFFER.lock().unwrap_or_else(|e| e.into_inner());
        forget_if_restored(&mut guard);
        if READER.load(std::sync::atomic::Ordering::Acquire) != 0 {
            return None;
        }
        let len = budget.div_ceil(RESERVE_STEP) * RESERVE_STEP;
        if guard.as_ref().is_some_and(|b| b.len < budget) {
            let b = guard.take().expect("checked");
            // SAFETY: unmapping the buffer this module mapped; no snapshot
            // uses it (the caller holds the lock and the last writer ended).
            unsafe { libc::munmap(b.base as *mut libc::c_void, b.len as usize) };
        }
        if guard.is_none() {
            *guard = Some(Buffer {
                base: map_shared(len)?,
                len,
                used: 0,
                restores: crate::threads::RESTORES.load(std::sync::atomic::Ordering::Acquire),
            });
        }
        let pagemap = std::fs::File::open("/proc/self/pagemap").ok()?;
        Some(Stager {
            guard,
            pagemap: std::os::fd::IntoRawFd::into_raw_fd(pagemap),
            candidate: Vec::new(),
            scan: vec![PageRegion::default(); SCAN].into_boxed_slice(),
            segments: vec![Segment::default(); SEGMENTS].into_boxed_slice(),
            segments_len: 0,
            staged: vec![StagedRegion::default(); STAGED].into_boxed_slice(),
            staged_len: 0,
            limit: budget,
            swap,
            copied: 0,
        })
    }

    /// The buffer's range, which no image holds.
    pub(crate) fn hole(&self) -> (u64, u64) {
        let b = self.guard.as_ref().expect("opened with a buffer");
        (b.base, b.base + b.len)
    }

    /// The descriptor this stager holds (no image records it).
    pub(crate) fn fd(&self) -> i32 {
        self.pagemap
    }

    /// Allocates, before the freeze and on every core, the buffer's pages
    /// that a snapshot of `regions` needs and it does not hold yet, so that
    /// the copy in the stall runs at memcpy's speed. True when it did: the
    /// threads it ran changed the mappings, which are to be read again.
    pub(crate) fn make_room(&mut self, regions: &[Region]) -> bool {
        let Some(buf) = self.guard.as_mut() else {
            return false;
        };
        let need: u64 = (0..regions.len())
            .filter(|&i| may_stage(regions, i))
            .map(|i| {
                let mut bytes = 0;
                let r = &regions[i];
                let _ = crate::dirty::for_each_populated(
                    self.pagemap,
                    r.start..r.end,
                    self.swap,
                    &mut self.scan,
                    |s, e| {
                        bytes += e - s;
                        Ok::<(), ()>(())
                    },
                );
                bytes
            })
            .sum();
        let want = need.min(self.limit).min(buf.len);
        if want <= buf.used {
            return false;
        }
        populate(buf.base + buf.used, want - buf.used);
        buf.used = want.div_ceil(KEEP_STEP) * KEEP_STEP;
        true
    }

    /// Picks the regions of `regions` that may be staged. `read` holds every
    /// address the writer reads outside its own stack (sorted or not): a
    /// region holding one is left out.
    pub(crate) fn choose(&mut self, regions: &[Region], read: &[u64]) {
        let mut read: Vec<u64> = read.to_vec();
        read.extend([
            self.scan.as_ptr() as u64,
            self.segments.as_ptr() as u64,
            self.staged.as_ptr() as u64,
            // This thread's descriptor, which the writer's code may read (the
            // handler's stack is left out by `stage`).
            crate::sys::fs_base(),
        ]);
        read.sort_unstable();
        self.candidate = regions
            .iter()
            .enumerate()
            .map(|(i, r)| {
                may_stage(regions, i)
                    && read.partition_point(|&a| a < r.start)
                        == read.partition_point(|&a| a < r.end)
            })
            .collect();
    }

    /// Copies what the image stores of each chosen region into the buffer
    /// and leaves those regions out of the coming fork. `writes` and `pages`
    /// say what the image stores of each region. Runs in the stall, every
    /// other thread stopped: no allocation, raw calls only.
    pub(crate) fn stage(
        &mut self,
        regions: &[Region],
        writes: &[RegionWrite],
        pages: &[PageRegion],
    ) {
        self.segments_len = 0;
        self.staged_len = 0;
        self.copied = 0;
        let Some(buf) = self.guard.as_mut() else {
            return;
        };
        let (base, len) = (buf.base, self.limit.min(buf.len));
        // The handler's stack, where the writer's plan is.
        let here = &len as *const u64 as u64;
        let mut used = 0u64;
        for (i, r) in regions.iter().enumerate() {
            if !self.candidate.get(i).copied().unwrap_or(false)
                || self.staged_len == STAGED
                || (r.start <= here && here < r.end)
            {
                continue;
            }
            let whole = [PageRegion::new(r.start..r.end)];
            let wanted = match writes[i] {
                RegionWrite::Nothing => continue,
                RegionWrite::Whole => &whole[..],
                RegionWrite::Delta { written, .. } => &pages[written.0..written.1],
            };
            let (mark, used_mark) = (self.segments_len, used);
            let fits = wanted.iter().all(|w| {
                crate::dirty::for_each_populated(
                    self.pagemap,
                    w.start..w.end,
                    self.swap,
                    &mut self.scan,
                    |s, e| {
                        if self.segments_len == SEGMENTS || used + (e - s) > len {
                            return Err(());
                        }
                        self.segments[self.segments_len] = Segment {
                            start: s,
                            end: e,
                            offset: used,
                        };
                        self.segments_len += 1;
                        used += e - s;
                        Ok(())
                    },
                ) == Ok(w.end)
            });
            // SAFETY: madvise on a whole mapping of this process, which the
            // writer does not read (chosen so); it only changes what fork copies.
            if !fits
                || used - used_mark < MIN_STAGED
                || unsafe { call!(libc::SYS_madvise, r.start, r.len(), libc::MADV_DONTFORK) } != 0
            {
                self.segments_len = mark;
                used = used_mark;
                continue;
            }
            for g in &self.segments[mark..self.segments_len] {
                // SAFETY: the segment is populated memory of a readable
                // mapping (stopped threads do not unmap it), and the buffer
                // holds `len` >= its offset + length writable bytes that
                // nothing else uses while the stall lasts.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        g.start as *const u8,
                        (base + g.offset) as *mut u8,
                        (g.end - g.start) as usize,
                    )
                };
            }
            self.staged[self.staged_len] = StagedRegion {
                start: r.start,
                end: r.end,
            };
            self.staged_len += 1;
        }
        // What the last snapshot used beyond this one's is given back: the
        // buffer holds only what the latest image needed.
        let keep = used.div_ceil(KEEP_STEP) * KEEP_STEP;
        if buf.used > keep {
            // SAFETY: a range of the buffer no snapshot needs now (shared
            // memory: MADV_REMOVE frees it, MADV_DONTNEED would only unmap).
            unsafe {
                call!(
                    libc::SYS_madvise,
                    base + keep,
                    buf.used - keep,
                    libc::MADV_REMOVE
                )
            };
        }
        buf.used = keep;
        self.copied = used;
    }

    /// What the writer reads.
    pub(crate) fn memory(&self) -> Memory<'_> {
        Memory {
            base: self.guard.as_ref().map_or(0, |b| b.base),
            segments: &self.segments[..self.segments_len],
            staged: &self.staged[..self.staged_len],
        }
    }

    /// After the fork: the staged regions are forked again by any later fork.
    pub(crate) fn release(&mut self) {
        for s in &self.staged[..self.staged_len] {
            // SAFETY: madvise on a whole mapping of this process.
            unsafe {
                call!(
                    libc::SYS_madvise,
                    s.start,
                    s.end - s.start,
                    libc::MADV_DOFORK
                )
            };
        }
    }

    /// In a restored process: the descriptor was the snapshot's process's
    /// (not in the image; its number may be another file's here).
    pub(crate) fn forget_descriptor(mut self) {
        self.pagemap = -1;
    }
}

impl Drop for Stager {
    fn drop(&mut self) {
        if self.pagemap >= 0 {
            // SAFETY: closing the descriptor opened in `open`.
            unsafe { libc::close(self.pagemap) };
        }
    }
}

/// Whether region `i` of `regions` is of the kind staged: private anonymous
/// memory, readable and writable, of [`MIN_REGION`] or more, and not the
/// uninitialized data of a loaded object (right after its file's mapping).
fn may_stage(regions: &[Region], i: usize) -> bool {
    let r = &regions[i];
    let rw = (libc::PROT_READ | libc::PROT_WRITE) as u32;
    let after_object = i > 0
        && regions[i - 1].end == r.start
        && !regions[i - 1].path.is_empty()
        && !regions[i - 1].path.starts_with('[');
    r.has_data()
        && r.flags & SHARED == 0
        && r.path.is_empty()
        && r.prot & rw == rw
        && r.len() >= MIN_REGION
        && !after_object
}

/// Allocates the pages of `[from, from + len)` of the buffer, split among
/// the cores: measured here, 4 GiB took 4.0-12 s on one core and 1.6-6.1 s
/// on two in the same state of the machine (a virtual machine's host backs
/// memory on first touch, and takes back what the guest frees). Where the
/// kernel cannot (before Linux 5.14), the copy faults them in.
fn populate(from: u64, len: u64) {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(16) as u64;
    let share = (len / threads).div_ceil(4096) * 4096;
    let advise = |at: u64, n: u64| {
        // SAFETY: advice on pages of the buffer, which nothing uses now.
        unsafe { call!(libc::SYS_madvise, at, n, libc::MADV_POPULATE_WRITE) };
    };
    std::thread::scope(|scope| {
        let mut at = from;
        while at < from + len {
            let n = share.max(4096).min(from + len - at);
            if at + n >= from + len {
                advise(at, n);
            } else {
                let start = at;
                if std::thread::Builder::new()
                    .name("mpcrs-staging".into())
                    .spawn_scoped(scope, move || advise(start, n))
                    .is_err()
                {
                    advise(start, n);
                }
            }
            at += n;
        }
    });
}

/// Maps `len` bytes of shared anonymous memory; its address. Shared, not
/// private: the fork leaves a shared mapping writable in the program, so
/// the next snapshot's copy takes no fault, and the writer may hand its
/// pages to direct I/O as they are (a private page shared with a child is
/// copied when pinned). Not transparent huge pages: measured here, faulting
/// in 537 MB of them took 1.2-2.2 s against 0.46-0.63 s in 4 KiB pages (a
/// virtual machine's host backs never-used memory on first touch), and
/// later snapshots copy at the same speed into either.
fn map_shared(len: u64) -> Option<u64> {
    // SAFETY: a fresh shared anonymous mapping; MAP_NORESERVE: only what a
    // snapshot copies is ever populated.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len as usize,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    (p != libc::MAP_FAILED).then_some(p as u64)
}

/// The snapshot's memory as the writer reads it: staged regions from the
/// buffer, the rest where it is.
#[derive(Clone, Copy)]
pub(crate) struct Memory<'a> {
    base: u64,
    segments: &'a [Segment],
    staged: &'a [StagedRegion],
}

/// A run of the snapshot's bytes.
pub(crate) enum Piece<'a> {
    Bytes(&'a [u8]),
    Zeros(usize),
}

impl Memory<'static> {
    /// The snapshot's own pages, nothing staged.
    pub(crate) fn unstaged() -> Memory<'static> {
        Memory {
            base: 0,
            segments: &[],
            staged: &[],
        }
    }
}

impl<'a> Memory<'a> {
    /// The bytes at `at`, at most `max` of them (at least one when `max` is).
    /// `at` must be in a readable region of the snapshot.
    fn piece(&self, at: u64, max: usize) -> Piece<'a> {
        let max = max as u64;
        let i = self.staged.partition_point(|s| s.end <= at);
        let bytes = |from: u64, n: u64| {
            // SAFETY: `from` is in the buffer (a staged segment) or in a
            // readable region of the snapshot the writer has (one not
            // staged), for `n` bytes: pieces end where either does.
            Piece::Bytes(unsafe { std::slice::from_raw_parts(from as *const u8, n as usize) })
        };
        match self.staged.get(i) {
            Some(s) if s.start <= at => {
                let j = self.segments.partition_point(|g| g.end <= at);
                match self.segments.get(j) {
                    Some(g) if g.start <= at => {
                        bytes(self.base + g.offset + (at - g.start), max.min(g.end - at))
                    }
                    next => {
                        let end = next.map_or(s.end, |g| g.start.min(s.end));
                        Piece::Zeros(max.min(end - at) as usize)
                    }
                }
            }
            next => bytes(at, max.min(next.map_or(u64::MAX, |s| s.start) - at)),
        }
    }

    /// The buffer's copy of the snapshot's `[at, at + len)`, when one staged
    /// segment holds all of it: shared memory, which the writer may hand to
    /// direct I/O as it is.
    pub(crate) fn staged_bytes(&self, at: u64, len: usize) -> Option<&'a [u8]> {
        let j = self.segments.partition_point(|g| g.end <= at);
        let g = self
            .segments
            .get(j)
            .filter(|g| g.start <= at && at + len as u64 <= g.end)?;
        let from = self.base + g.offset + (at - g.start);
        // SAFETY: inside the buffer's copy of segment `g`, which nothing
        // writes while the writer runs.
        Some(unsafe { std::slice::from_raw_parts(from as *const u8, len) })
    }

    /// Copies the snapshot's `[src, src + dst.len())` into `dst`.
    pub(crate) fn copy(&self, src: u64, dst: &mut [u8]) {
        let mut done = 0;
        while done < dst.len() {
            match self.piece(src + done as u64, dst.len() - done) {
                Piece::Bytes(b) => {
                    dst[done..done + b.len()].copy_from_slice(b);
                    done += b.len();
                }
                Piece::Zeros(n) => {
                    dst[done..done + n].fill(0);
                    done += n;
                }
            }
        }
    }

    /// Whether the snapshot's page at `at` holds only zeros.
    pub(crate) fn page_is_zero(&self, at: u64, page: usize) -> bool {
        let mut done = 0;
        while done < page {
            match self.piece(at + done as u64, page - done) {
                Piece::Bytes(b) => {
                    if !crate::dump::is_zero(b) {
                        return false;
                    }
                    done += b.len();
                }
                Piece::Zeros(n) => done += n,
            }
        }
        true
    }

    /// The staged segments of region `r`, when it is staged (the rest of it
    /// is zeros).
    pub(crate) fn segments_of(&self, r: &Region) -> Option<&'a [Segment]> {
        let i = self.staged.partition_point(|s| s.end <= r.start);
        let s = self.staged.get(i).filter(|s| s.start == r.start)?;
        let from = self.segments.partition_point(|g| g.end <= s.start);
        let to = self.segments.partition_point(|g| g.start < s.end);
        Some(&self.segments[from..to])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region(start: u64, end: u64) -> Region {
        Region {
            start,
            end,
            prot: (libc::PROT_READ | libc::PROT_WRITE) as u32,
            flags: crate::image::HAS_DATA,
            data_offset: 0,
            stored: 0,
            crc: 0,
            path: String::new(),
        }
    }

    #[test]
    fn staged_regions_read_from_the_buffer_with_zeros_between_segments() {
        let buffer: Vec<u8> = (0..64u8).collect();
        let live: Vec<u8> = vec![7; 64];
        let lb = live.as_ptr() as u64;
        // A staged region at a fake address range never dereferenced: its
        // bytes come from the buffer or are zeros.
        let (s0, s1) = (0x1000_0000u64, 0x1000_0040u64);
        let segments = [
            Segment {
                start: s0 + 8,
                end: s0 + 16,
                offset: 0,
            },
            Segment {
                start: s0 + 32,
                end: s0 + 40,
                offset: 8,
            },
        ];
        let staged = [StagedRegion { start: s0, end: s1 }];
        let m = Memory {
            base: buffer.as_ptr() as u64,
            segments: &segments,
            staged: &staged,
        };
        let mut out = [0xffu8; 64];
        m.copy(s0, &mut out);
        let mut want = [0u8; 64];
        want[8..16].copy_from_slice(&buffer[0..8]);
        want[32..40].copy_from_slice(&buffer[8..16]);
        assert_eq!(out, want);
        // Memory outside every staged region is read where it is.
        let mut out = [0u8; 64];
        m.copy(lb, &mut out);
        assert_eq!(out, [7u8; 64]);
        assert!(m.page_is_zero(s0 + 16, 16));
        assert!(!m.page_is_zero(s0, 16));
        assert_eq!(m.segments_of(&region(s0, s1)), Some(&segments[..]));
        assert_eq!(m.segments_of(&region(lb, lb + 64)), None);
    }

    /// Populated ranges of a fresh mapping of 16 pages where pages 1, 2, 7
    /// and 15 were written and page 4 only read (the zero page), with its
    /// writes tracked (`tracked`: pages never written hold write-protect
    /// markers).
    fn populated_pages(tracked: bool) -> Vec<(u64, u64)> {
        let pages = 16usize;
        // SAFETY: a fresh anonymous mapping, unmapped below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                pages * 4096,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED);
        let base = p as u64;
        let range = base..base + (pages * 4096) as u64;
        let tracker = crate::dirty::DirtyTracker::new().unwrap();
        if tracked {
            tracker.track(range.clone()).unwrap();
        }
        for page in [1usize, 2, 7, 15] {
            // SAFETY: inside the mapping.
            unsafe { (p as *mut u8).add(page * 4096).write_volatile(1) };
        }
        // SAFETY: inside the mapping.
        assert_eq!(unsafe { (p as *const u8).add(4 * 4096).read_volatile() }, 0);
        let f = std::fs::File::open("/proc/self/pagemap").unwrap();
        let mut scan = vec![PageRegion::default(); 8];
        let mut found = Vec::new();
        let swap = crate::dirty::swap_in_use();
        let end = range.end;
        let ok = crate::dirty::for_each_populated(
            std::os::fd::AsRawFd::as_raw_fd(&f),
            range,
            swap,
            &mut scan,
            |s, e| {
                found.push(((s - base) / 4096, (e - base) / 4096));
                Ok::<(), ()>(())
            },
        ) == Ok(end);
        // SAFETY: unmapping the mapping made above.
        unsafe { libc::munmap(p, pages * 4096) };
        assert!(ok, "PAGEMAP_SCAN of an anonymous mapping failed");
        found
    }

    #[test]
    fn populated_ranges_skip_pages_never_written() {
        assert!(
            !crate::dirty::swap_in_use(),
            "this test expects a host without swap"
        );
        assert_eq!(populated_pages(false), vec![(1, 3), (7, 8), (15, 16)]);
        // The markers of tracked pages never written are not data.
        assert_eq!(populated_pages(true), vec![(1, 3), (7, 8), (15, 16)]);
    }
}
