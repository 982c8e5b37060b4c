//! ULT-aware barrier. The last arrival is the leader: it may run an action that
//! every other party observes once released (the runtime's collectives and the
//! checkpoint use that to pick the rank that does the shared work).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crossbeam::utils::CachePadded;

use super::WaitList;

/// The count of arrivals and the generation the waiters poll live on cache
/// lines of their own: sharing one, every arrival on one core took the line
/// from the pollers on the other.
pub struct Barrier {
    parties: usize,
    arrived: CachePadded<AtomicUsize>,
    generation: CachePadded<AtomicU64>,
    waiters: WaitList,
}

/// What [`Barrier::wait`] tells each party.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BarrierWaitResult {
    leader: bool,
    generation: u64,
}

impl BarrierWaitResult {
    /// True for exactly one party per round: the last one to arrive.
    pub fn is_leader(&self) -> bool {
        self.leader
    }

    /// The round this wait completed (0, 1, 2, ...), the same for every party.
    pub fn generation(&self) -> u64 {
        self.generation
    }
}

impl Barrier {
    pub fn new(parties: usize) -> Barrier {
        assert!(parties > 0, "a barrier needs at least one party");
        Barrier {
            parties,
            arrived: CachePadded::new(AtomicUsize::new(0)),
            generation: CachePadded::new(AtomicU64::new(0)),
            waiters: WaitList::new(),
        }
    }

    pub fn parties(&self) -> usize {
        self.parties
    }

    /// The round a party arriving now will take part in (it cannot change before
    /// the caller has arrived).
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    pub fn wait(&self) -> BarrierWaitResult {
        self.wait_with(|_| ())
    }

    /// [`Barrier::wait`] that calls `on_park` once polling gave up (see
    /// [`WaitList::wait_until_marked`]).
    pub fn wait_marked<M>(&self, on_park: impl FnOnce() -> M) -> BarrierWaitResult {
        self.wait_full(|_| (), on_park)
    }

    /// Waits for every party; the last to arrive runs `leader_action` (given the
    /// round's generation) before anyone is released, so its effects are visible to
    /// all parties when they return.
    pub fn wait_with(&self, leader_action: impl FnOnce(u64)) -> BarrierWaitResult {
        self.wait_full(leader_action, || ())
    }

    fn wait_full<M>(
        &self,
        leader_action: impl FnOnce(u64),
        on_park: impl FnOnce() -> M,
    ) -> BarrierWaitResult {
        // Read before arriving: the generation cannot move until we have arrived.
        let gen = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.parties {
            leader_action(gen);
            // Reset before releasing: nobody re-arrives before seeing the new generation.
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
            self.waiters.notify_all();
            return BarrierWaitResult {
                leader: true,
                generation: gen,
            };
        }
        self.waiters.wait_until_marked(
            || self.generation.load(Ordering::Acquire) != gen,
            crate::sync::DEFAULT_POLL,
            on_park,
        );
        BarrierWaitResult {
            leader: false,
            generation: gen,
        }
    }
}
