//! Dirty-page tracking for incremental checkpoints (DESIGN.md section 7): the
//! kernel marks written pages of write-protected ranges by itself (userfaultfd
//! write-protect in asynchronous mode: no fault reaches user space), and
//! `ioctl(PAGEMAP_SCAN)` on /proc/self/pagemap lists the written pages and
//! write-protects them again in one call. Unprivileged (`UFFD_USER_MODE_ONLY`);
//! needs Linux 6.7 or later. The constants below are the kernel's UAPI values,
//! newer than the C headers of some distributions.

use std::fs::File;
use std::io;
use std::ops::Range;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const PAGE: u64 = 4096;

const fn iowr(kind: u64, nr: u64, size: u64) -> u64 {
    (3 << 30) | (size << 16) | (kind << 8) | nr
}

// linux/userfaultfd.h
const UFFD_API: u64 = 0xAA;
const UFFD_USER_MODE_ONLY: i32 = 1;
const UFFDIO_API: u64 = iowr(0xAA, 0x3F, 24);
const UFFDIO_REGISTER: u64 = iowr(0xAA, 0x00, 32);
const UFFDIO_WRITEPROTECT: u64 = iowr(0xAA, 0x06, 24);
const UFFDIO_REGISTER_MODE_WP: u64 = 1 << 1;
const UFFDIO_WRITEPROTECT_MODE_WP: u64 = 1 << 0;
const UFFD_FEATURE_WP_UNPOPULATED: u64 = 1 << 13;
const UFFD_FEATURE_WP_ASYNC: u64 = 1 << 15;

// linux/fs.h
const PAGEMAP_SCAN: u64 = iowr(b'f' as u64, 16, 96);
const PM_SCAN_WP_MATCHING: u64 = 1 << 0;
const PM_SCAN_CHECK_WPASYNC: u64 = 1 << 1;
const PAGE_IS_WRITTEN: u64 = 1 << 1;

#[repr(C)]
struct UffdioApi {
    api: u64,
    features: u64,
    ioctls: u64,
}

#[repr(C)]
struct UffdioRange {
    start: u64,
    len: u64,
}

#[repr(C)]
struct UffdioRegister {
    range: UffdioRange,
    mode: u64,
    ioctls: u64,
}

#[repr(C)]
struct UffdioWriteprotect {
    range: UffdioRange,
    mode: u64,
}

#[repr(C)]
struct PmScanArg {
    size: u64,
    flags: u64,
    start: u64,
    end: u64,
    walk_end: u64,
    vec: u64,
    vec_len: u64,
    max_pages: u64,
    category_inverted: u64,
    category_mask: u64,
    category_anyof_mask: u64,
    return_mask: u64,
}

/// A range of pages PAGEMAP_SCAN reports.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct PageRegion {
    pub start: u64,
    pub end: u64,
    categories: u64,
}

impl PageRegion {
    pub fn new(range: Range<u64>) -> PageRegion {
        PageRegion {
            start: range.start,
            end: range.end,
            categories: 0,
        }
    }
}

const PAGE_IS_PRESENT: u64 = 1 << 3;
const PAGE_IS_SWAPPED: u64 = 1 << 4;
const PAGE_IS_PFNZERO: u64 = 1 << 5;

/// Which pages a scan asks for (the kernel's category masks): those whose
/// categories, `inverted` flipped, hold all of `mask` and one of `anyof`
/// (when not 0).
#[derive(Clone, Copy)]
struct Categories {
    inverted: u64,
    mask: u64,
    anyof: u64,
    returned: u64,
}

/// Written pages. Not returning PAGE_IS_WRITTEN alone: asked for exactly
/// that, the kernel takes a shortcut that reports every page without the
/// write-protect bit in its entry as written, which includes empty entries
/// and the markers of pages never populated (a thread's untouched stack
/// would be stored again at every epoch). Returning the page's presence too
/// makes it look at each entry's kind.
const WRITTEN: Categories = Categories {
    inverted: 0,
    mask: PAGE_IS_WRITTEN,
    anyof: 0,
    returned: PAGE_IS_WRITTEN | PAGE_IS_PRESENT | PAGE_IS_SWAPPED,
};

/// Pages neither in memory nor in swap.
const UNPOPULATED: Categories = Categories {
    inverted: PAGE_IS_PRESENT | PAGE_IS_SWAPPED,
    mask: PAGE_IS_PRESENT | PAGE_IS_SWAPPED,
    anyof: 0,
    returned: PAGE_IS_PRESENT | PAGE_IS_SWAPPED,
};

/// Pages that hold zeros for certain where no swap is in use: not in
/// memory, or mapping the shared zero page. A page "in swap" is then the
/// write-protect marker of a page tracked but never populated (the kernel
/// files markers under swap), which [`UNPOPULATED`] counts as holding data:
/// a tracked 8 MiB stack would read as 8 MiB to store.
const NOT_PRESENT_OR_ZERO: Categories = Categories {
    inverted: PAGE_IS_PRESENT,
    mask: 0,
    anyof: PAGE_IS_PRESENT | PAGE_IS_PFNZERO,
    returned: PAGE_IS_PRESENT | PAGE_IS_PFNZERO,
};

/// Whether this host swaps (a swap area is active): then a page not in
/// memory may hold data in swap. Read before each snapshot (it allocates).
pub fn swap_in_use() -> bool {
    std::fs::read_to_string("/proc/swaps").map_or(true, |s| s.lines().count() > 1)
}

fn check(what: &str, r: i64) -> io::Result<i64> {
    if r < 0 {
        let e = io::Error::last_os_error();
        Err(io::Error::new(e.kind(), format!("{what}: {e}")))
    } else {
        Ok(r)
    }
}

/// The error of a raw call that failed with `errno`.
fn errno_error(what: &str, errno: i32) -> io::Error {
    let e = io::Error::from_raw_os_error(errno);
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

/// Tracks writes to registered ranges of this process's anonymous memory.
pub struct DirtyTracker {
    uffd: OwnedFd,
    pagemap: File,
}

impl DirtyTracker {
    pub fn new() -> io::Result<DirtyTracker> {
        // SAFETY: the userfaultfd system call takes flags only.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_userfaultfd,
                libc::O_CLOEXEC | libc::O_NONBLOCK | UFFD_USER_MODE_ONLY,
            )
        };
        let fd = check("userfaultfd", fd)? as i32;
        // SAFETY: fd was just returned by the kernel and is owned here alone.
        let uffd = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut api = UffdioApi {
            api: UFFD_API,
            features: UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED,
            ioctls: 0,
        };
        // SAFETY: UFFDIO_API reads and writes a uffdio_api of the declared size.
        let r = unsafe { libc::ioctl(uffd.as_raw_fd(), UFFDIO_API as _, &mut api) };
        check(
            "UFFDIO_API (asynchronous write-protect needs Linux 6.7+)",
            r as i64,
        )?;
        Ok(DirtyTracker {
            uffd,
            pagemap: File::open("/proc/self/pagemap")?,
        })
    }

    /// Starts tracking writes to `range` (page-aligned, anonymous memory): its
    /// pages count as clean from now on.
    pub fn track(&self, range: Range<u64>) -> io::Result<()> {
        self.track_raw(range.clone()).map_err(|e| {
            errno_error(
                &format!("UFFDIO_REGISTER {:#x}-{:#x}", range.start, range.end),
                e,
            )
        })
    }

    /// The ranges of `range` written since tracking began or since the last
    /// `take_written`; with `reset`, they count as clean again afterwards.
    fn scan(&self, range: Range<u64>, reset: bool) -> io::Result<Vec<Range<u64>>> {
        let mut out: Vec<Range<u64>> = Vec::new();
        let mut regions = [PageRegion::default(); 256];
        let mut start = range.start;
        while start < range.end {
            let (n, walk_end) = self
                .scan_all(start..range.end, reset, WRITTEN, &mut regions)
                .map_err(|e| errno_error("PAGEMAP_SCAN", e))?;
            for r in &regions[..n] {
                match out.last_mut() {
                    Some(last) if last.end == r.start => last.end = r.end,
                    _ => out.push(r.start..r.end),
                }
            }
            if walk_end <= start {
                break;
            }
            start = walk_end;
        }
        Ok(out)
    }

    /// The descriptors the tracker holds (left out of an image's files).
    pub fn fds(&self) -> [i32; 2] {
        [self.uffd.as_raw_fd(), self.pagemap.as_raw_fd()]
    }

    /// Write-protects `range` again (its pages count as clean), without
    /// registering it. A raw ioctl: no allocation.
    pub fn protect(&self, range: Range<u64>) -> Result<(), i32> {
        let mut wp = UffdioWriteprotect {
            range: UffdioRange {
                start: range.start,
                len: range.end - range.start,
            },
            mode: UFFDIO_WRITEPROTECT_MODE_WP,
        };
        // SAFETY: UFFDIO_WRITEPROTECT reads a uffdio_writeprotect.
        let r = unsafe {
            crate::sys::call!(
                libc::SYS_ioctl,
                self.uffd.as_raw_fd(),
                UFFDIO_WRITEPROTECT,
                &mut wp as *mut _
            )
        };
        if r < 0 {
            Err(-r as i32)
        } else {
            Ok(())
        }
    }

    /// Registers `range` and write-protects it (tracking starts now), with
    /// raw ioctls: no allocation, for a caller whose other threads are
    /// stopped. The errno on failure (the range cannot be tracked).
    pub fn track_raw(&self, range: Range<u64>) -> Result<(), i32> {
        let mut reg = UffdioRegister {
            range: UffdioRange {
                start: range.start,
                len: range.end - range.start,
            },
            mode: UFFDIO_REGISTER_MODE_WP,
            ioctls: 0,
        };
        // SAFETY: UFFDIO_REGISTER reads and writes a uffdio_register.
        let r = unsafe {
            crate::sys::call!(
                libc::SYS_ioctl,
                self.uffd.as_raw_fd(),
                UFFDIO_REGISTER,
                &mut reg as *mut _
            )
        };
        if r < 0 {
            return Err(-r as i32);
        }
        self.protect(range)
    }

    /// The pages of tracked `range` written since it was last
    /// write-protected, into `out`, write-protecting them again; `None`
    /// when `out` cannot hold them all (the rest of the range is then
    /// write-protected too, and the caller treats the range as written
    /// whole). Fails with the errno, EPERM where the range is not tracked.
    pub fn take_written_into(
        &self,
        range: Range<u64>,
        out: &mut [PageRegion],
    ) -> Result<Option<usize>, i32> {
        let (n, walk_end) = self.scan_all(range.clone(), true, WRITTEN, out)?;
        if walk_end < range.end {
            self.protect(walk_end..range.end)?;
            return Ok(None);
        }
        Ok(Some(n))
    }

    /// [`scan_all`] on this tracker's pagemap.
    fn scan_all(
        &self,
        range: Range<u64>,
        reset: bool,
        pages: Categories,
        out: &mut [PageRegion],
    ) -> Result<(usize, u64), i32> {
        scan_all(self.pagemap.as_raw_fd(), range, reset, pages, out)
    }

    /// The pages of `range` that hold nothing (neither in memory nor in
    /// swap: zeros, in anonymous memory), into `out`; `None` when `out`
    /// cannot hold them all.
    pub fn unpopulated_into(
        &self,
        range: Range<u64>,
        out: &mut [PageRegion],
    ) -> Result<Option<usize>, i32> {
        let (n, walk_end) = self.scan_all(range.clone(), false, UNPOPULATED, out)?;
        Ok((walk_end >= range.end).then_some(n))
    }

    /// Written ranges of `range`, leaving them marked written.
    pub fn written(&self, range: Range<u64>) -> io::Result<Vec<Range<u64>>> {
        self.scan(range, false)
    }

    /// Written ranges of `range`, write-protected again in the same call so that
    /// the next scan reports only later writes.
    pub fn take_written(&self, range: Range<u64>) -> io::Result<Vec<Range<u64>>> {
        self.scan(range, true)
    }
}

/// Pages of the ranges.
pub fn pages(ranges: &[Range<u64>]) -> u64 {
    ranges.iter().map(|r| (r.end - r.start) / PAGE).sum()
}

/// One PAGEMAP_SCAN of `range` on `pagemap` (an open /proc/self/pagemap)
/// into `out` with raw calls (no allocation): the ranges of pages in the
/// categories asked, and where the walk stopped (before `range.end` when
/// `out` filled up). `reset` write-protects the pages reported (written
/// ones), and the call fails with EPERM where a mapping of `range` is not
/// tracked.
fn scan_raw(
    pagemap: i32,
    range: Range<u64>,
    reset: bool,
    pages: Categories,
    out: &mut [PageRegion],
) -> Result<(usize, u64), i32> {
    let mut arg = PmScanArg {
        size: std::mem::size_of::<PmScanArg>() as u64,
        flags: if reset {
            PM_SCAN_WP_MATCHING | PM_SCAN_CHECK_WPASYNC
        } else {
            0
        },
        start: range.start,
        end: range.end,
        walk_end: 0,
        vec: out.as_mut_ptr() as u64,
        vec_len: out.len() as u64,
        max_pages: 0,
        category_inverted: pages.inverted,
        category_mask: pages.mask,
        category_anyof_mask: pages.anyof,
        return_mask: pages.returned,
    };
    // SAFETY: PAGEMAP_SCAN reads the argument and fills at most vec_len
    // page_regions into `out`, which outlives the call.
    let n =
        unsafe { crate::sys::call!(libc::SYS_ioctl, pagemap, PAGEMAP_SCAN, &mut arg as *mut _) };
    if n < 0 {
        return Err(-n as i32);
    }
    Ok((n as usize, arg.walk_end))
}

/// [`scan_raw`] from `range.start` until the walk reaches `range.end` or
/// `out` is full: one call may stop short of both (it returns after filling
/// its own buffer of a page table's worth of ranges). The ranges found and
/// where the walk stopped.
fn scan_all(
    pagemap: i32,
    range: Range<u64>,
    reset: bool,
    pages: Categories,
    out: &mut [PageRegion],
) -> Result<(usize, u64), i32> {
    let (mut n, mut start) = (0, range.start);
    loop {
        let (m, walk_end) = scan_raw(pagemap, start..range.end, reset, pages, &mut out[n..])?;
        n += m;
        if walk_end >= range.end || n == out.len() || walk_end <= start {
            return Ok((n, walk_end));
        }
        start = walk_end;
    }
}

/// Calls `f(start, end)` with each populated range of `range` in order (as
/// [`unpopulated_raw`] tells pages apart; no allocation: `scan` holds each
/// answer of the kernel). Returns where the walk stopped: `range.end`, or
/// the first page that could not be told apart (every range before it was
/// given to `f`, the rest of the walk holds nothing); or `f`'s error.
pub(crate) fn for_each_populated<E>(
    pagemap: i32,
    range: Range<u64>,
    swap: bool,
    scan: &mut [PageRegion],
    mut f: impl FnMut(u64, u64) -> Result<(), E>,
) -> Result<u64, E> {
    let mut pos = range.start;
    while pos < range.end {
        let Ok((n, walk_end)) = unpopulated_raw(pagemap, pos..range.end, scan, swap) else {
            return Ok(pos);
        };
        if walk_end <= pos {
            return Ok(pos);
        }
        let walk_end = walk_end.min(range.end);
        for empty in &scan[..n] {
            let (s, e) = (empty.start.max(pos), empty.end.min(walk_end));
            if s >= e {
                continue;
            }
            if s > pos {
                f(pos, s)?;
            }
            pos = e;
        }
        if walk_end > pos {
            f(pos, walk_end)?;
        }
        pos = pos.max(walk_end);
    }
    Ok(range.end)
}

/// The pages of `range` that hold nothing (neither in memory nor in swap:
/// zeros, in anonymous memory; where no swap is in use, `swap` false, not
/// in memory or the zero page) by `pagemap`, an open /proc/self/pagemap of
/// the caller, into `out`, with raw calls (a forked image writer's): how
/// many ranges, and where the walk stopped (before `range.end` when `out`
/// filled up, or the kernel stopped early).
pub(crate) fn unpopulated_raw(
    pagemap: i32,
    range: Range<u64>,
    out: &mut [PageRegion],
    swap: bool,
) -> Result<(usize, u64), i32> {
    let pages = if swap {
        UNPOPULATED
    } else {
        NOT_PRESENT_OR_ZERO
    };
    scan_all(pagemap, range, false, pages, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Anon {
        base: *mut u8,
        len: usize,
    }

    impl Anon {
        fn new(pages: usize) -> Anon {
            let len = pages * PAGE as usize;
            // SAFETY: an anonymous private mapping, unmapped in Drop.
            let base = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            assert_ne!(base, libc::MAP_FAILED);
            Anon {
                base: base.cast(),
                len,
            }
        }
        fn range(&self) -> Range<u64> {
            self.base as u64..self.base as u64 + self.len as u64
        }
        fn touch(&self, page: usize) {
            // SAFETY: page is inside the mapping.
            unsafe { self.base.add(page * PAGE as usize + 17).write_volatile(1) };
        }
        fn pages(&self, ranges: &[Range<u64>]) -> Vec<Range<u64>> {
            let b = self.base as u64;
            ranges
                .iter()
                .map(|r| (r.start - b) / PAGE..(r.end - b) / PAGE)
                .collect()
        }
    }

    impl Drop for Anon {
        fn drop(&mut self) {
            // SAFETY: unmapping the mapping made in new.
            unsafe { libc::munmap(self.base.cast(), self.len) };
        }
    }

    #[test]
    fn written_pages_are_reported_once_per_interval() {
        let t = DirtyTracker::new().unwrap();
        let mem = Anon::new(64);
        mem.touch(5); // before tracking: not dirty afterwards
        t.track(mem.range()).unwrap();
        assert_eq!(t.written(mem.range()).unwrap(), vec![]);
        for p in [3, 10, 11, 40, 5] {
            mem.touch(p);
        }
        let got = t.written(mem.range()).unwrap();
        assert_eq!(mem.pages(&got), vec![3..4, 5..6, 10..12, 40..41]);
        // `written` does not reset; `take_written` does.
        let got = t.take_written(mem.range()).unwrap();
        assert_eq!(mem.pages(&got), vec![3..4, 5..6, 10..12, 40..41]);
        assert_eq!(pages(&got), 5);
        assert_eq!(t.take_written(mem.range()).unwrap(), vec![]);
        mem.touch(11);
        mem.touch(63);
        let got = t.take_written(mem.range()).unwrap();
        assert_eq!(mem.pages(&got), vec![11..12, 63..64]);
    }

    #[test]
    fn scans_continue_past_a_full_result_vector() {
        // Every other page written: 600 separate ranges, more than one scan holds.
        let t = DirtyTracker::new().unwrap();
        let mem = Anon::new(1200);
        t.track(mem.range()).unwrap();
        for p in (0..1200).step_by(2) {
            mem.touch(p);
        }
        let got = t.take_written(mem.range()).unwrap();
        let expected: Vec<Range<u64>> = (0..1200).step_by(2).map(|p| p..p + 1).collect();
        assert_eq!(mem.pages(&got), expected);
        assert_eq!(t.take_written(mem.range()).unwrap(), vec![]);
    }

    #[test]
    fn pages_never_populated_are_not_written() {
        // A stack's shape: tracked while empty, then its top pages used.
        let t = DirtyTracker::new().unwrap();
        let mem = Anon::new(512);
        t.track(mem.range()).unwrap();
        mem.touch(511);
        mem.touch(500);
        assert_eq!(
            mem.pages(&t.take_written(mem.range()).unwrap()),
            vec![500..501, 511..512]
        );
        assert_eq!(t.take_written(mem.range()).unwrap(), vec![]);
        mem.touch(3);
        assert_eq!(mem.pages(&t.take_written(mem.range()).unwrap()), vec![3..4]);
    }

    #[test]
    fn a_scan_goes_on_past_the_kernels_own_buffer() {
        // 1024 written ranges: more than the kernel gathers in one pass.
        let t = DirtyTracker::new().unwrap();
        let mem = Anon::new(65536);
        t.track(mem.range()).unwrap();
        let mut expected: Vec<u64> = (0..1024).map(|i| (i * 131) % 65536).collect();
        for &p in &expected {
            mem.touch(p as usize);
        }
        expected.sort_unstable();
        let mut out = vec![PageRegion::default(); 4096];
        let n = t.take_written_into(mem.range(), &mut out).unwrap();
        let got: Vec<u64> = mem
            .pages(
                &out[..n.expect("every range fits")]
                    .iter()
                    .map(|r| r.start..r.end)
                    .collect::<Vec<_>>(),
            )
            .iter()
            .map(|r| r.start)
            .collect();
        assert_eq!(got, expected);
        let mut none = [PageRegion::default(); 4];
        assert_eq!(
            t.take_written_into(mem.range(), &mut none).unwrap(),
            Some(0)
        );
    }
}
