//! The job as one process sees it: world size, the scheduler running the ranks,
//! context-id allocation, and what each rank ULT knows about itself.

use std::io::Write;
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

/// World rank of the calling ULT, if it is a rank of a running job.
pub fn current_rank() -> Option<i32> {
    rank_of_ult_word(mpcrs_scheduler::ult_local())
}

/// The rank a ULT's local word names (see `set_current_rank`), if any.
pub fn rank_of_ult_word(word: usize) -> Option<i32> {
    match word {
        0 => None,
        r => Some(r as i32 - 1),
    }
}

pub(crate) fn set_current_rank(rank: i32) {
    mpcrs_scheduler::set_ult_local(rank as usize + 1);
}

/// Ends the whole job now with `code`, after flushing what the ranks printed.
pub fn abort_job(code: i32) -> ! {
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    std::process::exit(failure_status(code))
}

/// The process exit status for a failure with `code`: the kernel keeps only its
/// low 8 bits, and a status of 0 (a rank returning 256 or 768) would tell the
/// launcher this process succeeded, leaving the others waiting for it.
fn failure_status(code: i32) -> i32 {
    match code & 0xff {
        0 => 1,
        low => low,
    }
}
