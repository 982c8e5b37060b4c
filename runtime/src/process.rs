//! This process in its job, below every other module: the rank the calling
//! user-level thread acts for, and ending the whole job.

use std::io::Write;

/// World rank of the calling ULT, if it is a rank of a running job.
pub fn current_rank() -> Option<i32> {
    rank_of_ult_word(mpcrs_scheduler::ult_local())
}

/// The bit of a ULT's local word that marks a window agent (rma/agent.rs):
/// its sends pass the network's agent gate, not the ranks' one.
const AGENT: usize = 1 << 62;

/// The rank a ULT's local word names (see `set_current_rank`), if any.
pub fn rank_of_ult_word(word: usize) -> Option<i32> {
    match word & !AGENT {
        0 => None,
        r => Some(r as i32 - 1),
    }
}

pub(crate) fn set_current_rank(rank: i32) {
    mpcrs_scheduler::set_ult_local(rank as usize + 1);
}

/// Marks the calling ULT (acting for its rank) as a window agent.
pub(crate) fn mark_agent() {
    mpcrs_scheduler::set_ult_local(mpcrs_scheduler::ult_local() | AGENT);
}

/// Whether a ULT's local word marks a window agent.
pub(crate) fn is_agent_word(word: usize) -> bool {
    word & AGENT != 0
}

/// Whether the calling ULT is a window agent.
pub(crate) fn is_agent() -> bool {
    is_agent_word(mpcrs_scheduler::ult_local())
}

/// Ends the whole job now with `code`, after flushing what the ranks printed.
pub fn abort_job(code: i32) -> ! {
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    if let Some(tell) = TELL_LAUNCHER.get() {
        tell(code);
    }
    std::process::exit(failure_status(code))
}

/// How an ending process asks its launcher to end the rest of the job (set
/// by a job of several processes): under mpcrs-run its death would do, but
/// another launcher (srun) lets the other processes run on, waiting for
/// this one.
static TELL_LAUNCHER: std::sync::OnceLock<fn(i32)> = std::sync::OnceLock::new();

pub(crate) fn on_abort_tell_launcher(tell: fn(i32)) {
    let _ = TELL_LAUNCHER.set(tell);
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
