//! ULT stacks, carved from large mappings ("chunks", of 4 slots doubling up
//! to 256 per worker) so that a stack does not
//! cost a memory mapping of its own. With one mapping per stack plus one per
//! guard page, vm.max_map_count (65,530 by default) capped a process near
//! 32,000 ranks. Chunks are mapped MAP_NORESERVE: a stack costs the pages its
//! ULT touched, nothing more.
//!
//! Layout of a chunk of `n` slots, each `slot` bytes (a multiple of the page):
//!
//! ```text
//! [slot 0][slot 1] ... [slot n-1]
//! slot j:  [red zone / guard page][usable stack ............][canary of j+1]
//!           ^ limit                                          ^ base = end - 64
//! ```
//!
//! Slot 0 always has a guard page: it is the chunk's floor, so a runaway
//! recursion on an unguarded stack faults there instead of running on into
//! whatever mapping lies below.
//!
//! What protects a stack against overflow:
//! - a guarded stack has a PROT_NONE page below it: an overflow faults at once
//!   and the fault handler ([`crate::fault`]) names the ULT. Each guard splits
//!   its chunk's mapping in two, so guards are given while the process-wide
//!   budget lasts: a quarter of vm.max_map_count (16,382 stacks by default).
//! - beyond that budget, a stack has a red zone page below it (committed only
//!   if written) and, below the red zone, a 64-byte canary, checked each time
//!   its ULT switches out ([`PooledStack::canary_intact`]): an overflow reaches
//!   the canary before the stack underneath, and is reported before any other
//!   ULT of the worker runs. The canary sits in the top page of the slot below,
//!   which that slot's ULT touches anyway, so it costs no page of its own. An
//!   overflow whose frames jump over both red zone and canary without writing
//!   them is not caught: raising vm.max_map_count gives every stack a guard.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use corosensei::stack::{DefaultStack, Stack, StackPointer};

const PAGE: usize = 4096;
/// Bytes of a canary, one cache line.
const CANARY_LEN: usize = 64;
const CANARY_WORD: u64 = 0x6d70_6372_735f_7374; // "mpcrs_st"
/// Slots of a worker's first chunk, and of its largest: each chunk doubles
/// the one before up to 256 (256 one-MiB stacks are 256 MiB of address space),
/// so that a job of a few ranks reserves, and a checkpoint of it scans, little
/// more than its stacks.
const FIRST_CHUNK_SLOTS: usize = 4;
const CHUNK_SLOTS: usize = 256;
/// Free stacks a worker keeps with their pages; those freed beyond give their
/// pages back to the kernel.
const WARM_STACKS: usize = 256;
/// Cold stacks whose pages are given back at once: sorted, neighbours in a
/// chunk go in one madvise. One madvise per stack made the end of a job of
/// 65,536 ranks 65,536 TLB shootdowns (a fifth of its run).
const COLD_BATCH: usize = 1024;

/// How many more stacks may get a guard page (see the module's header).
fn guards_left() -> &'static AtomicUsize {
    static LEFT: OnceLock<AtomicUsize> = OnceLock::new();
    LEFT.get_or_init(|| AtomicUsize::new(default_guards()))
}

/// Stacks guarded by default: a quarter of vm.max_map_count (two mappings
/// each, so half the mappings for at most this many stacks).
fn default_guards() -> usize {
    max_map_count() / 4
}

/// Sets how many stacks, from now on, get a guard page (the others a red
/// zone and a canary).
pub(crate) fn set_guard_budget(stacks: usize) {
    guards_left().store(stacks, Ordering::Relaxed);
}

/// vm.max_map_count, or Linux's default if it cannot be read.
pub fn max_map_count() -> usize {
    std::fs::read_to_string("/proc/sys/vm/max_map_count")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(65_530)
}

/// Stacks carved so far in this process.
static CARVED: AtomicUsize = AtomicUsize::new(0);

pub(crate) fn stacks_mapped() -> usize {
    CARVED.load(Ordering::Relaxed)
}

fn take_guard() -> bool {
    guards_left()
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
        .is_ok()
}

/// A stack from a chunk. Never unmapped: chunks live as long as the process.
pub(crate) struct PooledStack {
    /// Lowest address of the slot: the guard or red zone page.
    limit: usize,
    /// The chunk's first page: slot 0's guard.
    floor: usize,
    /// One past the highest usable byte; the next slot's canary starts here.
    base: usize,
    guarded: bool,
}

impl PooledStack {
    /// Where this stack's canary lives, if it has one (unguarded stacks).
    pub(crate) fn canary(&self) -> Option<usize> {
        (!self.guarded && self.limit != self.floor).then_some(self.limit - CANARY_LEN)
    }
}

/// Whether the canary at `addr` (from [`PooledStack::canary`]) is untouched.
#[inline]
pub(crate) fn canary_intact(addr: usize) -> bool {
    // SAFETY: `addr` is a canary of a live chunk: mapped read-write, 8-aligned,
    // CANARY_LEN bytes. Volatile: an overflow writes it behind the compiler's back.
    (0..CANARY_LEN / 8)
        .all(|i| unsafe { std::ptr::read_volatile((addr as *const u64).add(i)) == CANARY_WORD })
}

fn write_canary(addr: usize) {
    for i in 0..CANARY_LEN / 8 {
        // SAFETY: as in `canary_intact`; no ULT runs on the slot below yet, or
        // its stack ends below `addr` (its base), so nothing else writes here.
        unsafe { std::ptr::write_volatile((addr as *mut u64).add(i), CANARY_WORD) };
    }
}

// SAFETY: base and limit bound memory this stack owns alone for its whole life
// (its slot, minus the next slot's canary above `base`), both 64-aligned.
// Guarded stacks have the guard page the trait asks for; unguarded ones trade it
// for a red zone and a canary (module header): the scheduler accepts that only
// where guards would exceed the kernel's mapping limit.
unsafe impl Stack for PooledStack {
    fn base(&self) -> StackPointer {
        StackPointer::new(self.base).expect("stack base is not null")
    }

    fn limit(&self) -> StackPointer {
        StackPointer::new(self.limit).expect("stack limit is not null")
    }
}

/// The stack of one ULT: from the pool (the scheduler's stack size) or mapped
/// alone (another size, asked for explicitly).
pub(crate) enum UltStack {
    Pooled(PooledStack),
    Own(DefaultStack),
}

// SAFETY: delegates to two implementations that uphold the trait's contract.
unsafe impl Stack for UltStack {
    fn base(&self) -> StackPointer {
        match self {
            UltStack::Pooled(s) => s.base(),
            UltStack::Own(s) => s.base(),
        }
    }

    fn limit(&self) -> StackPointer {
        match self {
            UltStack::Pooled(s) => s.limit(),
            UltStack::Own(s) => s.limit(),
        }
    }
}

/// Where a ULT's stack is, for the overflow checks and the fault handler.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct StackInfo {
    /// Lowest address: the guard or red zone page.
    pub(crate) limit: usize,
    /// The guard page where an overflow of an unguarded stack ends: the
    /// first page of its chunk (the stack's own guard for a guarded one).
    pub(crate) floor: usize,
    /// Bytes the ULT may use.
    pub(crate) usable: usize,
    /// The canary to check when the ULT switches out; 0 for a guarded stack.
    pub(crate) canary: usize,
}

impl StackInfo {
    /// Whether a fault at `addr` hit the page below the stack.
    pub(crate) fn contains_guard(&self, addr: usize) -> bool {
        let within = |page: usize| page != 0 && addr >= page && addr < page + PAGE;
        within(self.limit) || within(self.floor)
    }
}

impl UltStack {
    /// Where this stack is, for a ULT of `usable` bytes of stack.
    pub(crate) fn info(&self, usable: usize) -> StackInfo {
        let limit = self.limit().get();
        match self {
            UltStack::Pooled(s) => StackInfo {
                limit,
                floor: s.floor,
                usable,
                canary: s.canary().unwrap_or(0),
            },
            UltStack::Own(_) => StackInfo {
                limit,
                floor: limit,
                usable,
                canary: 0,
            },
        }
    }
}

/// Why no stack could be mapped.
#[derive(Debug)]
pub(crate) struct MapError {
    pub(crate) bytes: usize,
    pub(crate) error: std::io::Error,
}

/// One worker's stacks of the scheduler's size: free ones, and the rest of
/// the chunk being carved.
pub(crate) struct StackPool {
    slot: usize,
    usable: usize,
    /// Free stacks with their pages.
    free: Vec<PooledStack>,
    /// Free stacks beyond those: the last `pending` still hold their pages,
    /// to be given back together (see [`COLD_BATCH`]).
    cold: Vec<PooledStack>,
    pending: usize,
    /// Slots of the next chunk to map.
    chunk_slots: usize,
    /// Next unused slot of the current chunk, and the chunk's start and end.
    next: usize,
    start: usize,
    end: usize,
}

impl StackPool {
    /// A pool of stacks with at least `usable` bytes each.
    pub(crate) fn new(usable: usize) -> StackPool {
        let slot = (usable + CANARY_LEN).div_ceil(PAGE) * PAGE + PAGE;
        StackPool {
            slot,
            usable,
            free: Vec::new(),
            cold: Vec::new(),
            pending: 0,
            chunk_slots: FIRST_CHUNK_SLOTS,
            next: 0,
            start: 0,
            end: 0,
        }
    }

    /// Usable bytes of each stack.
    pub(crate) fn usable(&self) -> usize {
        self.usable
    }

    pub(crate) fn take(&mut self) -> Result<PooledStack, MapError> {
        if let Some(s) = self.free.pop() {
            return Ok(s);
        }
        if let Some(s) = self.cold.pop() {
            self.pending = self.pending.min(self.cold.len());
            // Its canary may have gone with the pages of the slot below.
            if let Some(c) = s.canary() {
                write_canary(c);
            }
            return Ok(s);
        }
        if self.next == self.end {
            self.map_chunk()?;
        }
        let limit = self.next;
        self.next += self.slot;
        CARVED.fetch_add(1, Ordering::Relaxed);
        let guarded = if limit == self.start {
            protect_guard(limit)
        } else {
            take_guard() && protect_guard(limit)
        };
        let stack = PooledStack {
            limit,
            floor: self.start,
            base: limit + self.slot - CANARY_LEN,
            guarded,
        };
        if let Some(c) = stack.canary() {
            write_canary(c);
        }
        Ok(stack)
    }

    /// Takes back a stack whose ULT finished.
    pub(crate) fn give_back(&mut self, stack: PooledStack) {
        if self.free.len() < WARM_STACKS {
            self.free.push(stack);
            return;
        }
        self.cold.push(stack);
        self.pending += 1;
        if self.pending >= COLD_BATCH {
            self.give_pages_back();
        }
    }

    /// Gives the pages of the pending cold stacks back to the kernel, one
    /// madvise per run of neighbouring slots. A slot's top page holds the
    /// canary of the slot above: kept unless that slot is in the run too (a
    /// cold stack rewrites its canary when taken again).
    fn give_pages_back(&mut self) {
        let first = self.cold.len() - self.pending;
        let batch = &mut self.cold[first..];
        batch.sort_unstable_by_key(|s| s.limit);
        let mut i = 0;
        while i < batch.len() {
            let mut j = i;
            while j + 1 < batch.len() && batch[j + 1].limit == batch[j].limit + self.slot {
                j += 1;
            }
            let lo = batch[i].limit + PAGE;
            let hi = (batch[j].base & !(PAGE - 1)).max(lo);
            // SAFETY: [lo, hi) lies inside the slots of cold stacks, no longer
            // used by any ULT (a guard page between them is left as it is);
            // their contents are dead.
            unsafe { libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_DONTNEED) };
            i = j + 1;
        }
        self.pending = 0;
    }

    fn map_chunk(&mut self) -> Result<(), MapError> {
        let len = self.chunk_slots * self.slot;
        // SAFETY: a fresh anonymous private mapping; no existing memory is touched.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_STACK,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(MapError {
                bytes: len,
                error: std::io::Error::last_os_error(),
            });
        }
        self.start = p as usize;
        self.next = p as usize;
        self.end = p as usize + len;
        self.chunk_slots = (self.chunk_slots * 2).min(CHUNK_SLOTS);
        Ok(())
    }
}

/// Makes the page at `addr` a guard; false if the kernel refused (out of
/// mappings): the stack then has a red zone and a canary instead. (Slot 0
/// of a chunk without its guard still has one: the canary of a chunk's first
/// slot would lie outside the chunk, so it is never checked.)
fn protect_guard(addr: usize) -> bool {
    // SAFETY: `addr` is the first page of a fresh slot of our own chunk.
    let ok = unsafe { libc::mprotect(addr as *mut libc::c_void, PAGE, libc::PROT_NONE) } == 0;
    if !ok {
        guards_left().store(0, Ordering::Relaxed);
    }
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stacks_of_a_chunk_do_not_overlap_and_hold_what_was_asked() {
        let mut pool = StackPool::new(64 * 1024);
        // Chunks of 4, 8 and 16 slots: stacks of the first three chunks.
        let mut stacks: Vec<_> = (0..20).map(|_| pool.take().unwrap()).collect();
        let floors: std::collections::BTreeSet<usize> = stacks.iter().map(|s| s.floor).collect();
        assert_eq!(floors.len(), 3);
        stacks.sort_by_key(|s| s.limit);
        for w in stacks.windows(2) {
            assert!(w[0].base + CANARY_LEN <= w[1].limit);
        }
        for s in &stacks {
            let usable = s.base - s.limit - PAGE;
            assert!(usable >= 64 * 1024, "{usable}");
            assert_eq!(s.base % 16, 0);
            if let Some(c) = s.canary() {
                assert!(canary_intact(c));
            }
        }
    }

    #[test]
    fn an_overwritten_canary_is_seen() {
        let mut pool = StackPool::new(16 * 1024);
        let s = loop {
            // Force an unguarded stack whatever the budget left.
            let s = pool.take().unwrap();
            if s.canary().is_some() {
                break s;
            }
            guards_left().store(0, Ordering::Relaxed);
        };
        let c = s.canary().unwrap();
        assert!(canary_intact(c));
        // SAFETY: the canary belongs to this test's own chunk.
        unsafe { *((c + 40) as *mut u8) = 0 };
        assert!(!canary_intact(c));
    }

    #[test]
    fn cold_stacks_give_their_pages_back_together_and_come_back_with_their_canaries() {
        let mut pool = StackPool::new(16 * 1024);
        guards_left().store(0, Ordering::Relaxed);
        let n = WARM_STACKS + COLD_BATCH;
        let stacks: Vec<_> = (0..n).map(|_| pool.take().unwrap()).collect();
        for s in &stacks {
            // SAFETY: the stack's own usable bytes, no ULT runs on it.
            unsafe { *((s.base - 100) as *mut u8) = 7 };
        }
        for s in stacks {
            pool.give_back(s);
        }
        assert_eq!(
            (pool.free.len(), pool.cold.len(), pool.pending),
            (WARM_STACKS, COLD_BATCH, 0)
        );
        // Given back: their written byte reads as zero, and every canary of a
        // stack taken again is whole.
        let cold = pool.cold.iter().filter(|s| s.canary().is_some()).count();
        assert!(cold > 0);
        let base = pool.cold[COLD_BATCH / 2].base;
        // SAFETY: a mapped byte of a cold stack of our own pool.
        assert_eq!(unsafe { *((base - 100) as *const u8) }, 0);
        let again: Vec<_> = (0..n).map(|_| pool.take().unwrap()).collect();
        for s in &again {
            if let Some(c) = s.canary() {
                assert!(canary_intact(c));
            }
        }
    }

    #[test]
    fn a_freed_stack_is_reused() {
        let mut pool = StackPool::new(16 * 1024);
        let a = pool.take().unwrap();
        let limit = a.limit;
        pool.give_back(a);
        assert_eq!(pool.take().unwrap().limit, limit);
    }
}
