//! Shared-memory rendezvous of the ranks of one communicator that live in this
//! process: each rank publishes the buffers of its collective call in its slot, then
//! either the last rank to arrive does the whole operation for everyone while the
//! others are held (small operations: one barrier), or every rank does its share
//! between two barriers (large operations).

use std::cell::UnsafeCell;
use std::sync::Arc;

use crate::comm::CommShared;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use mpcrs_scheduler::sync::Barrier;

/// What one rank publishes for a collective call. Pointers stay valid until the rank
/// leaves the call, which the barriers order after every use by other ranks.
#[derive(Clone, Copy)]
pub(crate) struct Slot {
    pub(crate) send: *const u8,
    pub(crate) recv: *mut u8,
    /// Bytes at `send` (per block for block-structured operations).
    pub(crate) send_len: usize,
    /// Bytes at `recv` (per block for block-structured operations).
    pub(crate) recv_len: usize,
    /// Per-destination lengths and displacements in bytes (v-variants).
    pub(crate) send_counts: *const usize,
    pub(crate) send_displs: *const usize,
    pub(crate) recv_counts: *const usize,
    pub(crate) recv_displs: *const usize,
    /// Free words: root, colour and key of a split, ...
    pub(crate) a: i64,
    pub(crate) b: i64,
}

impl Default for Slot {
    fn default() -> Self {
        Slot {
            send: std::ptr::null(),
            recv: std::ptr::null_mut(),
            send_len: 0,
            recv_len: 0,
            send_counts: std::ptr::null(),
            send_displs: std::ptr::null(),
            recv_counts: std::ptr::null(),
            recv_displs: std::ptr::null(),
            a: 0,
            b: 0,
        }
    }
}

impl Slot {
    /// The slot of a reduction: `len` bytes in, the same out.
    pub(crate) fn reduction(send: *const u8, recv: *mut u8, len: usize) -> Slot {
        Slot {
            send,
            recv,
            send_len: len,
            ..Slot::default()
        }
    }
}

/// Bytes of data a rank can publish by value (see [`Arena::publish_inline`]).
pub(crate) const INLINE_MAX: usize = 56;

/// Data published by value, with its length, in one cache line.
#[repr(C, align(64))]
#[derive(Clone, Copy)]
pub(crate) struct Inline {
    pub(crate) len: usize,
    pub(crate) bytes: [u8; INLINE_MAX],
}

/// Each slot on its own cache lines: ranks on different workers write neighbours.
#[repr(align(128))]
struct SlotCell {
    /// Small contributions by value, one per round parity: a rank may publish
    /// round g+1's while others still read its round g, never round g+2's.
    inline: [UnsafeCell<Inline>; 2],
    slot: UnsafeCell<Slot>,
    /// Set when this rank's part of the round did not fit (truncation); read and
    /// cleared by the rank itself after the round.
    truncated: AtomicBool,
    /// A result the leader hands this rank (its new communicator after a split).
    handout: UnsafeCell<Option<Arc<CommShared>>>,
}

/// 16-byte aligned scratch, so typed reductions can run in place on it. Held as a
/// raw allocation: several ranks write disjoint ranges of it between two barriers,
/// which must not go through `&mut` to one shared object.
pub(crate) struct Scratch {
    ptr: *mut u8,
    cap: usize,
}

const SCRATCH_ALIGN: usize = 16;

impl Default for Scratch {
    fn default() -> Self {
        Scratch {
            ptr: std::ptr::null_mut(),
            cap: 0,
        }
    }
}

impl Scratch {
    /// Makes room for `len` bytes; previous contents are not kept.
    pub(crate) fn reserve(&mut self, len: usize) {
        if len <= self.cap {
            return;
        }
        self.release();
        let cap = len.next_power_of_two();
        let layout = std::alloc::Layout::from_size_align(cap, SCRATCH_ALIGN).expect("scratch size");
        // SAFETY: `cap` > 0 (len > self.cap >= 0, so len >= 1).
        let ptr = unsafe { std::alloc::alloc(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        self.ptr = ptr;
        self.cap = cap;
    }

    pub(crate) fn ptr(&self) -> *mut u8 {
        self.ptr
    }

    fn release(&mut self) {
        if self.cap > 0 {
            // SAFETY: `ptr` was allocated in `reserve` with this exact layout.
            unsafe {
                std::alloc::dealloc(
                    self.ptr,
                    std::alloc::Layout::from_size_align_unchecked(self.cap, SCRATCH_ALIGN),
                )
            };
            self.cap = 0;
            self.ptr = std::ptr::null_mut();
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        self.release();
    }
}

pub(crate) struct Arena {
    /// The communicator's context (what a deadlock report names).
    context: u64,
    barrier: Barrier,
    slots: Box<[SlotCell]>,
    /// Two scratch buffers used alternately by consecutive collectives, so a rank
    /// may still read round g's result while the leader of round g+1 fills the other.
    scratch: [UnsafeCell<Scratch>; 2],
    /// Generation + 1 of the last round whose leader did all the work.
    finished_round: AtomicU64,
    /// The length common to the round's contributions, found by its leader
    /// (see [`Round::set_common_len`]).
    common_len: std::sync::atomic::AtomicUsize,
}

// SAFETY: slots are written only by their owner before it arrives at a barrier and
// read by others only after that barrier; scratch and handout are written only by
// the leader inside the barrier's leader action (or by a single designated rank
// between two barriers) and read after release. The barrier orders all of it.
unsafe impl Sync for Arena {}
// SAFETY: see `Sync`; the raw pointers inside slots are only dereferenced under
// that protocol.
unsafe impl Send for Arena {}

/// Information handed to the leader and to the parties after a barrier.
pub(crate) struct Round<'a> {
    arena: &'a Arena,
    pub(crate) generation: u64,
}

impl<'a> Round<'a> {
    pub(crate) fn slot(&self, rank: usize) -> Slot {
        // SAFETY: the barrier that produced this round ordered the owner's write
        // before this read, and no owner writes again before the next barrier.
        unsafe { *self.arena.slots[rank].slot.get() }
    }

    /// Records, in the leader's action, a length every party then reads in
    /// O(1): a party looking at every slot itself made a round O(ranks^2).
    pub(crate) fn set_common_len(&self, len: usize) {
        // Relaxed: the barrier's release/acquire orders it, as `finished_round`.
        self.arena.common_len.store(len, Ordering::Relaxed);
    }

    /// What the round's leader recorded with [`Round::set_common_len`]. Valid
    /// until the round's last barrier.
    pub(crate) fn common_len(&self) -> usize {
        self.arena.common_len.load(Ordering::Relaxed)
    }

    /// Records that `rank`'s data did not fit in the round's buffers.
    pub(crate) fn set_truncated(&self, rank: usize) {
        self.arena.slots[rank]
            .truncated
            .store(true, Ordering::Relaxed);
    }

    /// Hands `rank` a result, to be taken with [`Arena::take_handout`].
    ///
    /// # Safety
    /// Only one rank may call this at a time: the leader inside its barrier
    /// action, or one designated rank between two barriers (before the second,
    /// nobody takes a hand-out).
    pub(crate) unsafe fn hand_out(&self, rank: usize, value: Option<Arc<CommShared>>) {
        // SAFETY: leader action: no one else touches hand-outs until release.
        unsafe { *self.arena.slots[rank].handout.get() = value };
    }

    pub(crate) fn size(&self) -> usize {
        self.arena.slots.len()
    }

    /// Makes this round's scratch hold `len` bytes and returns it.
    ///
    /// # Safety
    /// Only the leader, inside its barrier action, may call this.
    pub(crate) unsafe fn reserve_scratch(&self, len: usize) -> *mut u8 {
        // SAFETY: the leader is the only one touching the scratch during its action.
        let s = unsafe { &mut *self.arena.scratch[(self.generation % 2) as usize].get() };
        s.reserve(len);
        s.ptr()
    }

    /// This round's scratch, as sized by the leader. Ranks may read it, and write
    /// disjoint ranges of it, between this round's barrier and the next one of the
    /// same parity (two rounds later), which no one reaches before all are done.
    pub(crate) fn scratch(&self) -> *mut u8 {
        // SAFETY: reading the pointer field only; it changes only in a leader action,
        // which the barrier orders before or after this read.
        unsafe { (*self.arena.scratch[(self.generation % 2) as usize].get()).ptr() }
    }
}

impl Arena {
    /// The arena of `size` ranks of the communicator of `context`.
    pub(crate) fn new(size: usize, context: u64) -> Arena {
        Arena {
            context,
            barrier: Barrier::new(size),
            slots: (0..size)
                .map(|_| SlotCell {
                    inline: [
                        UnsafeCell::new(Inline {
                            len: 0,
                            bytes: [0; INLINE_MAX],
                        }),
                        UnsafeCell::new(Inline {
                            len: 0,
                            bytes: [0; INLINE_MAX],
                        }),
                    ],
                    slot: UnsafeCell::new(Slot::default()),
                    truncated: AtomicBool::new(false),
                    handout: UnsafeCell::new(None),
                })
                .collect(),
            scratch: [
                UnsafeCell::new(Scratch::default()),
                UnsafeCell::new(Scratch::default()),
            ],
            finished_round: AtomicU64::new(0),
            common_len: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// Publishes the caller's slot. Must be followed by a barrier before anyone reads it.
    pub(crate) fn publish(&self, rank: usize, slot: Slot) {
        // SAFETY: only `rank` writes its own slot, and only between the barrier that
        // ended the previous round (after which nobody reads it) and the next one.
        unsafe { *self.slots[rank].slot.get() = slot };
    }

    /// Copies `data` (at most [`INLINE_MAX`] bytes) into the caller's slot for the
    /// round it is about to join; returns that round's generation.
    pub(crate) fn publish_inline(&self, rank: usize, data: &[u8]) -> u64 {
        let generation = self.barrier.generation();
        let cell = &self.slots[rank].inline[(generation % 2) as usize];
        // SAFETY: only `rank` writes its own inline data, for the round it has not yet
        // arrived at; the buffer of that parity was last read in round g-2, which
        // every rank left before anyone could arrive at round g-1.
        unsafe {
            let inline = &mut *cell.get();
            inline.len = data.len();
            inline.bytes[..data.len()].copy_from_slice(data);
        }
        generation
    }

    /// Rank `rank`'s inline data of the round `generation`, read after its barrier.
    pub(crate) fn inline(&self, rank: usize, generation: u64) -> &Inline {
        // SAFETY: written before the round's barrier, not rewritten before every rank
        // arrived at the next round (see `publish_inline`).
        unsafe { &*self.slots[rank].inline[(generation % 2) as usize].get() }
    }

    /// Takes what the leader of the last round handed the caller.
    pub(crate) fn take_handout(&self, rank: usize) -> Option<Arc<CommShared>> {
        // SAFETY: only `rank` takes its own hand-out, after the round's release and
        // before it arrives at the next round (the only time a leader writes it).
        unsafe { (*self.slots[rank].handout.get()).take() }
    }

    /// Whether the caller's part of the last round was truncated; clears the flag.
    /// Call after the round's last barrier.
    pub(crate) fn take_truncated(&self, rank: usize) -> bool {
        self.slots[rank].truncated.swap(false, Ordering::Relaxed)
    }

    /// Number of ranks meeting here.
    pub(crate) fn size(&self) -> usize {
        self.slots.len()
    }

    /// A plain barrier.
    pub(crate) fn barrier(&self) -> Round<'_> {
        let r = self.barrier.wait_marked(|| {
            crate::waits::waiting(crate::waits::Wait::Collective {
                context: self.context,
            })
        });
        Round {
            arena: self,
            generation: r.generation(),
        }
    }

    /// The skeleton of every collective: a barrier whose leader either does the
    /// whole operation (returns true: small operations) or prepares the shared work
    /// (returns false); in the latter case every rank runs `share` and a second
    /// barrier ends the operation. The leader decides with every rank's arguments in
    /// view, so all ranks take the same path. Returns the first round and whether
    /// the leader finished.
    pub(crate) fn run(
        &self,
        leader: impl FnOnce(&Round<'_>) -> bool,
        share: impl FnOnce(&Round<'_>),
    ) -> (Round<'_>, bool) {
        let r = self.barrier_with(|r| {
            if leader(r) {
                self.finished_round
                    .store(r.generation + 1, Ordering::Relaxed);
            }
        });
        // Relaxed suffices: the barrier's release/acquire orders the store.
        let finished = self.finished_round.load(Ordering::Relaxed) == r.generation + 1;
        if !finished {
            share(&r);
            self.barrier();
        }
        (r, finished)
    }

    /// A barrier whose last arrival runs `action` on behalf of all before release.
    pub(crate) fn barrier_with(&self, action: impl FnOnce(&Round<'_>)) -> Round<'_> {
        let r = self.barrier.wait_with(|generation| {
            action(&Round {
                arena: self,
                generation,
            })
        });
        Round {
            arena: self,
            generation: r.generation(),
        }
    }
}
