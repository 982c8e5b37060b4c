//! ULT-aware barrier. The last arrival is the leader (the runtime's checkpoint uses
//! it to pick the rank that drives the dumper).

use std::sync::atomic::{AtomicU64, Ordering};

use super::WaitList;

pub struct Barrier {
    parties: usize,
    arrived: std::sync::Mutex<usize>,
    generation: AtomicU64,
    waiters: WaitList,
}

/// What [`Barrier::wait`] tells each party.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BarrierWaitResult {
    leader: bool,
}

impl BarrierWaitResult {
    /// True for exactly one party per round: the last one to arrive.
    pub fn is_leader(&self) -> bool {
        self.leader
    }
}

impl Barrier {
    pub fn new(parties: usize) -> Barrier {
        assert!(parties > 0, "a barrier needs at least one party");
        Barrier {
            parties,
            arrived: std::sync::Mutex::new(0),
            generation: AtomicU64::new(0),
            waiters: WaitList::new(),
        }
    }

    pub fn wait(&self) -> BarrierWaitResult {
        let gen = {
            let mut arrived = self.arrived.lock().unwrap();
            *arrived += 1;
            if *arrived == self.parties {
                *arrived = 0;
                self.generation.fetch_add(1, Ordering::SeqCst);
                drop(arrived);
                self.waiters.notify_all();
                return BarrierWaitResult { leader: true };
            }
            self.generation.load(Ordering::SeqCst)
        };
        self.waiters
            .wait_until(|| self.generation.load(Ordering::Acquire) != gen);
        BarrierWaitResult { leader: false }
    }
}
