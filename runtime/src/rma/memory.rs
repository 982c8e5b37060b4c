//! A window's memory as the ranks of one process see it: where each member of
//! this process exposes memory (found by every rank of the process, so that
//! operations between them are plain loads and stores), checked against the
//! window's bounds, and the lock that makes accumulates atomic (a word of the
//! node segment when other processes reach the memory too).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use super::allocation::Allocation;
use crate::datatype::Kind;
use crate::op::Op;

/// The members of one window in this process, by rank in the window's
/// communicator. Found by the context of the window's request communicator.
pub(crate) struct Shared {
    targets: Box<[OnceLock<Target>]>,
    /// The area the members of the node in this process share, if the
    /// window has one (made by the first of them to ask).
    area: Mutex<Option<Arc<Allocation>>>,
}

/// Windows alive in this process, by context.
static WINDOWS: Mutex<Option<HashMap<u64, Weak<Shared>>>> = Mutex::new(None);

impl Shared {
    /// The process's view of window `context` of `size` members, made by the
    /// first of its ranks to ask.
    pub(crate) fn join(context: u64, size: usize) -> Arc<Shared> {
        let mut all = WINDOWS.lock().unwrap();
        let all = all.get_or_insert_with(HashMap::new);
        all.retain(|_, w| w.strong_count() > 0);
        if let Some(s) = all.get(&context).and_then(Weak::upgrade) {
            return s;
        }
        let s = Arc::new(Shared {
            targets: (0..size).map(|_| OnceLock::new()).collect(),
            area: Mutex::new(None),
        });
        all.insert(context, Arc::downgrade(&s));
        s
    }

    /// Publishes member `rank`'s memory (once, at creation).
    pub(crate) fn expose(&self, rank: usize, target: Target) {
        if self.targets[rank].set(target).is_err() {
            unreachable!("member {rank} exposed its memory twice");
        }
    }

    /// The area of the node's members in this process: the one made, or a
    /// new one from `make`.
    pub(crate) fn area(
        &self,
        make: impl FnOnce() -> Result<Allocation, String>,
    ) -> Result<Arc<Allocation>, String> {
        let mut area = self.area.lock().unwrap();
        if let Some(a) = &*area {
            return Ok(a.clone());
        }
        let a = Arc::new(make()?);
        *area = Some(a.clone());
        Ok(a)
    }

    /// Member `rank`'s memory if that member lives in this process.
    #[inline]
    pub(crate) fn target(&self, rank: usize) -> Option<&Target> {
        self.targets.get(rank)?.get()
    }
}

/// One member's exposed memory.
pub(crate) struct Target {
    pub(crate) base: usize,
    pub(crate) size: usize,
    /// A dynamic window: displacements are addresses inside attached regions.
    pub(crate) dynamic: bool,
    /// Regions attached to a dynamic window: (address, bytes).
    regions: Mutex<Vec<(usize, usize)>>,
    /// Held while an accumulate reads and writes: MPI makes accumulates to the
    /// same location atomic with respect to each other.
    accumulating: Mutex<()>,
    /// Memory in a segment of the node, reached from several processes: the
    /// lock is this word of the segment instead (0 free, 1 held).
    word: Option<&'static AtomicU32>,
}

/// Holds a target's accumulate lock until dropped.
enum Held<'a> {
    Process(#[allow(dead_code)] std::sync::MutexGuard<'a, ()>),
    Word(&'a AtomicU32),
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        if let Held::Word(w) = self {
            w.store(0, Ordering::Release);
        }
    }
}

impl Target {
    pub(crate) fn new(base: usize, size: usize, dynamic: bool) -> Target {
        Target {
            base,
            size,
            dynamic,
            regions: Mutex::new(Vec::new()),
            accumulating: Mutex::new(()),
            word: None,
        }
    }

    /// The same target, its accumulates locked by `word` (a word of a node
    /// segment every process that reaches this memory uses).
    ///
    /// # Safety
    /// `word` is a 4-byte aligned word that stays mapped as long as the target.
    pub(crate) unsafe fn with_lock_word(self, word: *mut u8) -> Target {
        // SAFETY: by contract; AtomicU32 has u32's layout.
        let w = unsafe { &*(word as *const AtomicU32) };
        Target {
            word: Some(w),
            ..self
        }
    }

    /// Takes the accumulate lock: a ULT that waits for a word held by
    /// another process lets the worker's other ULTs run meanwhile.
    fn hold(&self) -> Held<'_> {
        match self.word {
            None => Held::Process(self.accumulating.lock().unwrap()),
            Some(w) => {
                while w
                    .compare_exchange_weak(0, 1, Ordering::Acquire, Ordering::Relaxed)
                    .is_err()
                {
                    mpcrs_scheduler::yield_now();
                }
                Held::Word(w)
            }
        }
    }

    pub(crate) fn attach(&self, addr: usize, len: usize) -> Result<(), String> {
        let mut r = self.regions.lock().unwrap();
        if r.iter().any(|&(a, l)| addr < a + l && a < addr + len) {
            return Err(format!(
                "memory at {addr:#x} ({len} bytes) overlaps a region already attached"
            ));
        }
        r.push((addr, len));
        Ok(())
    }

    pub(crate) fn detach(&self, addr: usize) -> Result<(), String> {
        let mut r = self.regions.lock().unwrap();
        match r.iter().position(|&(a, _)| a == addr) {
            Some(i) => {
                r.swap_remove(i);
                Ok(())
            }
            None => Err(format!("no region attached at {addr:#x}")),
        }
    }

    /// Checks that every block of a layout starting at `at` lies in the
    /// window (or in an attached region of a dynamic window).
    #[inline]
    pub(crate) fn check(&self, at: i64, blocks: &[(i64, u64)]) -> Result<(), String> {
        let regions = self.dynamic.then(|| self.regions.lock().unwrap());
        for &(o, l) in blocks {
            if l == 0 {
                continue;
            }
            let start = at as i128 + o as i128;
            let end = start + l as i128;
            let inside = match &regions {
                None => start >= 0 && end <= self.size as i128,
                Some(r) => covered(r, start, end),
            };
            if !inside {
                return Err(if self.dynamic {
                    format!(
                        "bytes [{start:#x}, {end:#x}) are in no region attached to the dynamic window"
                    )
                } else {
                    format!(
                        "bytes [{start}, {end}) are outside the target's window of {} bytes",
                        self.size
                    )
                });
            }
        }
        Ok(())
    }

    /// Address of byte `o` of a layout starting at `at` (checked before).
    #[inline]
    pub(crate) fn addr(&self, at: i64, o: i64) -> *mut u8 {
        if self.dynamic {
            (at + o) as usize as *mut u8
        } else {
            (self.base as i64 + at + o) as usize as *mut u8
        }
    }

    /// Copies `data` into the blocks, in order.
    ///
    /// # Safety
    /// The layout was checked; `data` holds the blocks' bytes.
    #[inline]
    pub(crate) unsafe fn scatter(&self, at: i64, blocks: &[(i64, u64)], data: &[u8]) {
        let mut from = 0;
        for &(o, l) in blocks {
            let l = l as usize;
            // SAFETY: checked layout inside exposed memory; `data` long enough.
            unsafe {
                std::ptr::copy(data[from..from + l].as_ptr(), self.addr(at, o), l);
            }
            from += l;
        }
    }

    /// Copies the blocks, in order, into `out`.
    ///
    /// # Safety
    /// As [`Target::scatter`].
    #[inline]
    pub(crate) unsafe fn gather(&self, at: i64, blocks: &[(i64, u64)], out: &mut [u8]) {
        let mut to = 0;
        for &(o, l) in blocks {
            let l = l as usize;
            // SAFETY: as in scatter.
            unsafe {
                std::ptr::copy(self.addr(at, o), out[to..to + l].as_mut_ptr(), l);
            }
            to += l;
        }
    }

    /// `target = data op target` element-wise over the blocks, atomically with
    /// respect to other accumulates; the values from before into `old`.
    ///
    /// # Safety
    /// As [`Target::scatter`]; `data` (and `old`) hold the blocks' bytes, whole
    /// elements of `kind`.
    pub(crate) unsafe fn accumulate(
        &self,
        at: i64,
        blocks: &[(i64, u64)],
        data: &[u8],
        kind: Kind,
        op: &Op,
        old: Option<&mut [u8]>,
    ) {
        let _atomic = self.hold();
        if let [(o, l)] = blocks {
            // One block: combined where it lies.
            // SAFETY: the block was checked to lie in the exposed memory.
            let target = unsafe { std::slice::from_raw_parts_mut(self.addr(at, *o), *l as usize) };
            if let Some(old) = old {
                old.copy_from_slice(target);
            }
            op.apply(kind, data, target);
            return;
        }
        let mut values = vec![0u8; data.len()];
        // SAFETY: forwarded.
        unsafe { self.gather(at, blocks, &mut values) };
        if let Some(old) = old {
            old.copy_from_slice(&values);
        }
        if matches!(op, Op::NoOp) {
            return;
        }
        op.apply(kind, data, &mut values);
        // SAFETY: forwarded.
        unsafe { self.scatter(at, blocks, &values) };
    }

    /// Replaces the element at `at` with `new` if it equals `compare`; the
    /// element from before into `old`.
    ///
    /// # Safety
    /// The element was checked; the three slices have its size.
    pub(crate) unsafe fn compare_and_swap(
        &self,
        at: i64,
        new: &[u8],
        compare: &[u8],
        old: &mut [u8],
    ) {
        let _atomic = self.hold();
        let block = [(0, new.len() as u64)];
        // SAFETY: forwarded.
        unsafe { self.gather(at, &block, old) };
        if old == compare {
            // SAFETY: forwarded.
            unsafe { self.scatter(at, &block, new) };
        }
    }
}

/// Whether attached regions cover [start, end) together (an access may run
/// from one region into the next one attached right after it).
fn covered(regions: &[(usize, usize)], start: i128, end: i128) -> bool {
    let mut at = start;
    while at < end {
        match regions
            .iter()
            .find(|&&(a, n)| a as i128 <= at && at < a as i128 + n as i128)
        {
            Some(&(a, n)) => at = a as i128 + n as i128,
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_outside_the_window_are_refused_and_inside_ones_move_data() {
        let mut mem = [0i32; 8];
        let t = Target::new(mem.as_mut_ptr() as usize, 32, false);
        assert!(t.check(28, &[(0, 4)]).is_ok());
        assert!(t.check(28, &[(0, 8)]).unwrap_err().contains("outside"));
        assert!(t.check(-4, &[(0, 4)]).is_err());
        let blocks = [(0, 4), (8, 4)];
        let data: Vec<u8> = [5i32, 6].iter().flat_map(|x| x.to_ne_bytes()).collect();
        // SAFETY: layout checked against the 32 bytes of `mem`.
        unsafe { t.scatter(4, &blocks, &data) };
        assert_eq!(mem[..5], [0, 5, 0, 6, 0]);
        let mut old = vec![0u8; 8];
        // SAFETY: as above.
        unsafe { t.accumulate(4, &blocks, &data, Kind::I32, &Op::Sum, Some(&mut old)) };
        assert_eq!(old, data);
        assert_eq!(mem[..5], [0, 10, 0, 12, 0]);
    }

    #[test]
    fn dynamic_windows_reach_only_attached_regions() {
        let mut mem = vec![0u8; 64];
        let base = mem.as_mut_ptr() as usize;
        let t = Target::new(0, 0, true);
        assert!(t.check(base as i64, &[(0, 1)]).is_err());
        t.attach(base, 16).unwrap();
        assert!(t.attach(base + 8, 4).is_err());
        assert!(t.check(base as i64, &[(15, 1)]).is_ok());
        assert!(t.check(base as i64, &[(15, 2)]).is_err());
        // Two regions attached end to end are reached by one access.
        t.attach(base + 16, 16).unwrap();
        assert!(t.check(base as i64, &[(8, 16)]).is_ok());
        assert!(t.check(base as i64, &[(8, 25)]).is_err());
        t.detach(base).unwrap();
        assert!(t.detach(base).is_err());
        assert!(t.check(base as i64, &[(0, 1)]).is_err());
        assert!(t.check(base as i64, &[(16, 16)]).is_ok());
    }

    #[test]
    fn compare_and_swap_swaps_only_on_equal() {
        let mut x = 7u64;
        let t = Target::new(&mut x as *mut u64 as usize, 8, false);
        let mut old = [0u8; 8];
        // SAFETY: one element inside the window.
        unsafe { t.compare_and_swap(0, &9u64.to_ne_bytes(), &3u64.to_ne_bytes(), &mut old) };
        assert_eq!((x, u64::from_ne_bytes(old)), (7, 7));
        // SAFETY: as above.
        unsafe { t.compare_and_swap(0, &9u64.to_ne_bytes(), &7u64.to_ne_bytes(), &mut old) };
        assert_eq!((x, u64::from_ne_bytes(old)), (9, 7));
    }
}
