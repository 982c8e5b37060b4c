//! The job as one process sees it: context-id allocation, the communicators
//! whose members meet by context, and which worker runs which rank.

use std::sync::atomic::{AtomicU64, Ordering};

/// Process-wide state shared by every rank of the job in this process.
pub(crate) struct Universe {
    next_context: AtomicU64,
    /// Communicators of a process without a fabric whose members cannot hand
    /// each other the object (made by each member from a context they all
    /// derive), with how many members have still to join: see `comm::meet`.
    pub(crate) meetings: std::sync::Mutex<
        rustc_hash::FxHashMap<u64, (std::sync::Arc<crate::comm::CommShared>, usize)>,
    >,
}

impl Universe {
    pub(crate) fn new() -> Universe {
        Universe {
            // Context 0 is MPI_COMM_WORLD.
            next_context: AtomicU64::new(1),
            meetings: Default::default(),
        }
    }

    /// A context id no other communicator of this job uses. Called by one rank (the
    /// leader of the creating collective) per new communicator.
    pub(crate) fn new_context(&self) -> u64 {
        self.next_context.fetch_add(1, Ordering::Relaxed)
    }
}

/// Which worker runs world rank `rank` of `size` on `workers` workers: contiguous
/// blocks, so neighbouring ranks (the usual communication partners) share a worker.
pub(crate) fn worker_of_rank(rank: usize, size: usize, workers: usize) -> usize {
    rank * workers / size.max(1)
}
