//! Incremental images (seed 001): after a full image, the next ones store
//! only the pages written since the image before them, per region, with the
//! kernel tracking writes ([`crate::dirty`]: userfaultfd write-protect in
//! asynchronous mode, read and reset by PAGEMAP_SCAN).
//!
//! The protocol, per snapshot, with every other thread stopped (the
//! dumper's freeze) so that the image and the reset see the same memory:
//!
//! 1. A region tracked since the last committed image stores its written
//!    pages (read and write-protected again in one scan) and, in anonymous
//!    memory, the ranges that hold nothing any more (zeros: memory given
//!    back with MADV_DONTNEED). Any other region (new, moved, remapped,
//!    shared with other processes, or that the kernel will not track) is
//!    stored whole: a scan fails with EPERM on a mapping not tracked.
//! 2. Every region stored whole is registered and write-protected: its
//!    tracking starts at this snapshot. For a full image this is done just
//!    before the freeze, outside the application's stall: pages written in
//!    between are stored again by the next image, never missed.
//! 3. The image names its parent (epoch and metadata CRC). It becomes the
//!    parent of the next one only once its epoch is committed
//!    ([`settle`]); an epoch that is not makes the next image full, as does
//!    a restored process (its tracking did not survive), and every
//!    `full_every`-th image.

use std::sync::Mutex;

use crate::dirty::{DirtyTracker, PageRegion};
use crate::image::{Parent, Region, KERNEL, SHARED};

/// What the caller asks of a snapshot.
#[derive(Debug, Clone, Copy)]
pub struct Incremental {
    /// The epoch the image belongs to.
    pub epoch: u64,
    /// At most this many images in a chain (a full one, then incremental
    /// ones); 1 makes every image full but keeps nothing tracked.
    pub full_every: u32,
}

/// The tracking between snapshots of this process.
struct State {
    tracker: DirtyTracker,
    /// `threads::RESTORES` when the tracker was made: a restored process
    /// has none of the tracking of the one that made the image.
    restores: u64,
    /// The committed image the next one may apply to, and how many images
    /// its chain holds.
    base: Option<(Parent, u32)>,
    /// The snapshot taken and not yet settled: its epoch and the chain
    /// length it makes.
    pending: Option<(u64, u32)>,
    /// The scan buffer, kept from one snapshot to the next: a new one would
    /// be zeroed, and every page of it would be in the next image.
    pages: Box<[PageRegion]>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

/// Slots of the scan buffer: ranges of written or empty pages of one
/// snapshot (24 bytes each). A snapshot with more stores the rest whole.
const SCAN_SLOTS: usize = 1 << 16;

/// How one region goes into the image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RegionWrite {
    /// No contents (unreadable, the kernel's).
    Nothing,
    Whole,
    /// The written ranges and the empty ranges, as index ranges of the
    /// scan buffer.
    Delta {
        written: (usize, usize),
        empty: (usize, usize),
    },
}

impl RegionWrite {
    /// Each of `regions` as a full image stores it.
    pub(crate) fn whole(regions: &[Region]) -> Vec<RegionWrite> {
        regions
            .iter()
            .map(|r| {
                if r.has_data() {
                    RegionWrite::Whole
                } else {
                    RegionWrite::Nothing
                }
            })
            .collect()
    }
}

/// The incremental side of one snapshot, prepared before the freeze (all
/// allocation happens here) and filled during it.
pub(crate) struct Snapshot {
    guard: std::sync::MutexGuard<'static, Option<State>>,
    /// Whether the tracking was reset to this snapshot ([`Snapshot::classify`]).
    classified: bool,
    /// The parent, when this image is incremental.
    pub parent: Option<Parent>,
    chain: u32,
    epoch: u64,
    pub writes: Vec<RegionWrite>,
    /// Per region, whether its tracking was started at [`Snapshot::prepare`].
    armed: Vec<bool>,
}

impl Snapshot {
    /// Prepares a snapshot of `regions`: incremental over the last committed
    /// image where there is one and the chain is short enough; `None` when
    /// writes cannot be tracked here (the image is then full, as always).
    pub(crate) fn prepare(opts: Incremental, regions: &[Region]) -> Result<Snapshot, String> {
        let mut guard = STATE.lock().unwrap_or_else(|e| e.into_inner());
        let restores = crate::threads::RESTORES.load(std::sync::atomic::Ordering::Acquire);
        if guard.as_ref().is_some_and(|s| s.restores != restores) {
            // The descriptors are those of the process that made the image:
            // closed, or reused by this one. Forgotten, not closed.
            std::mem::forget(guard.take());
        }
        if guard.is_none() {
            let tracker = DirtyTracker::new().map_err(|e| e.to_string())?;
            *guard = Some(State {
                tracker,
                restores,
                base: None,
                pending: None,
                pages: vec![PageRegion::default(); SCAN_SLOTS].into_boxed_slice(),
            });
        }
        let state = guard.as_mut().expect("made above");
        state.pending = None;
        let (parent, chain) = match state.base {
            Some((p, n)) if n < opts.full_every => (Some(p), n + 1),
            _ => (None, 1),
        };
        // A full image starts the tracking of every region it stores, which
        // write-protects every page: done here, before the threads stop,
        // not in the application's stall. A page written between now and
        // the snapshot goes into the next image too, which costs it nothing
        // but the page. Once reset, the tracking no longer tells what
        // changed since the old base: only a full image may follow it.
        if parent.is_none() {
            state.base = None;
        }
        let armed = regions
            .iter()
            .map(|r| {
                parent.is_none()
                    && r.has_data()
                    && r.flags & (SHARED | KERNEL) == 0
                    && state.tracker.track_raw(r.start..r.end).is_ok()
            })
            .collect();
        Ok(Snapshot {
            guard,
            classified: false,
            parent,
            chain,
            epoch: opts.epoch,
            writes: RegionWrite::whole(regions),
            armed,
        })
    }

    /// The tracker's descriptors (no image records them).
    pub(crate) fn fds(&self) -> [i32; 2] {
        self.state().tracker.fds()
    }

    fn state(&self) -> &State {
        self.guard.as_ref().expect("prepared")
    }

    /// The ranges [`Snapshot::classify`] found, which `writes` indexes.
    pub(crate) fn pages(&self) -> &[PageRegion] {
        &self.state().pages
    }

    /// Decides how each region goes into the image and resets the tracking
    /// to this instant. Runs with every other thread stopped: no allocation.
    pub(crate) fn classify(&mut self, regions: &[Region]) {
        self.classified = true;
        let state = self.guard.as_mut().expect("prepared");
        let (t, pages) = (&state.tracker, &mut state.pages[..]);
        let incremental = self.parent.is_some();
        let mut used = 0;
        for (i, r) in regions.iter().enumerate() {
            if self.writes[i] == RegionWrite::Nothing {
                continue;
            }
            let trackable = r.flags & (SHARED | KERNEL) == 0;
            let mut write = RegionWrite::Whole;
            if incremental && trackable {
                let free = &mut pages[used..];
                if let Ok(Some(n)) = t.take_written_into(r.start..r.end, free) {
                    let written = (used, used + n);
                    used += n;
                    // Empty pages of file mappings read as the file: only
                    // anonymous memory's are zeros.
                    let empty = if anonymous(r) {
                        t.unpopulated_into(r.start..r.end, &mut pages[used..])
                            .ok()
                            .flatten()
                            .map(|m| {
                                used += m;
                                (used - m, used)
                            })
                    } else {
                        Some((used, used))
                    };
                    if let Some(empty) = empty {
                        write = RegionWrite::Delta { written, empty };
                    }
                }
            }
            if write == RegionWrite::Whole && trackable {
                // Tracked from now on; a region the kernel will not track
                // stays whole in every image.
                if !self.armed[i] {
                    let _ = t.track_raw(r.start..r.end);
                }
                // In an incremental image, a region stored whole is one
                // written range: its pages of zeros become extents of zeros
                // (a new thread's stack is mostly untouched).
                if incremental && used < pages.len() {
                    pages[used] = PageRegion::new(r.start..r.end);
                    write = RegionWrite::Delta {
                        written: (used, used + 1),
                        empty: (used + 1, used + 1),
                    };
                    used += 1;
                }
            }
            self.writes[i] = write;
        }
    }

    /// The snapshot is taken: its epoch waits for [`settle`].
    pub(crate) fn taken(mut self) {
        let (epoch, chain) = (self.epoch, self.chain);
        self.classified = false;
        if let Some(s) = self.guard.as_mut() {
            s.pending = Some((epoch, chain));
        }
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        // Reset to a snapshot that was not taken: what was written before it
        // is in no image, so the next one is full.
        if self.classified {
            if let Some(s) = self.guard.as_mut() {
                s.base = None;
            }
        }
    }
}

/// Whether a region is private anonymous memory (its pages that hold
/// nothing read as zeros).
pub(crate) fn anonymous(r: &Region) -> bool {
    r.flags & SHARED == 0 && (r.path.is_empty() || r.path == "[heap]" || r.path == "[stack]")
}

/// Tells the tracking whether the epoch of the last snapshot was committed
/// and, if so, the CRC of its image's metadata: the next image applies to it,
/// or (not committed) is full.
pub fn settle(epoch: u64, committed_meta_crc: Option<u32>) {
    let mut guard = STATE.lock().unwrap_or_else(|e| e.into_inner());
    let Some(s) = guard.as_mut() else {
        return;
    };
    match (s.pending.take(), committed_meta_crc) {
        (Some((k, chain)), Some(meta_crc)) if k == epoch => {
            s.base = Some((Parent { epoch, meta_crc }, chain));
        }
        _ => s.base = None,
    }
}
