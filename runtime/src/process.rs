//! This process in its job, below every other module: the rank the calling
//! user-level thread acts for, and ending the whole job.

use std::io::Write;

/// World rank of the calling ULT, if it is a rank of a running job.
#[inline]
pub fn current_rank() -> Option<i32> {
    rank_of_ult_word(mpcrs_scheduler::ult_local())
}

/// The bit of a ULT's local word that marks a window agent (rma/agent.rs):
/// its sends pass the network's agent gate, not the ranks' one.
const AGENT: usize = 1 << 62;

/// The rank a ULT's local word names (see `set_current_rank`), if any.
#[inline]
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

/// How a rank waits for the next run of its job when a peer process died,
/// under recovery in place (set by recovery/ when it is armed): the network
/// below it asks here, not there.
static AWAIT_NEW_RUN: std::sync::OnceLock<fn() -> !> = std::sync::OnceLock::new();

pub(crate) fn on_peer_death_await(wait: fn() -> !) {
    let _ = AWAIT_NEW_RUN.set(wait);
}

/// Whether this process outlives the death of a peer (recovery in place).
pub(crate) fn survives_peer_deaths() -> bool {
    AWAIT_NEW_RUN.get().is_some()
}

/// Makes the calling rank wait for the new run, if this process outlives
/// its peers' deaths; returns otherwise.
pub(crate) fn await_new_run() {
    if let Some(wait) = AWAIT_NEW_RUN.get() {
        wait()
    }
}
