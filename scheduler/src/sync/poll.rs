//! Bounded polling: the first phase of every blocking wait.

use std::time::{Duration, Instant};

/// How long a blocking call polls before it parks.
pub const DEFAULT_POLL: Duration = Duration::from_micros(20);

/// Rounds through the worker's ready ULTs a poller may make past its budget.
const MIN_ROUNDS: u32 = 3;

/// Polls `cond` for `budget`, yielding to other ready ULTs of this worker between
/// tries (spinning when there are none). Returns whether `cond` became true.
///
/// A poller that yields gets at least [`MIN_ROUNDS`] turns through the ready queue
/// even when they take longer than the budget: with hundreds of ranks per worker,
/// one round alone can exceed it, and what they wait for (the last arrival at a
/// barrier) is usually among them. The rounds are bounded, so a worker whose ULTs
/// all wait for something outside still goes idle.
#[inline]
pub fn poll_until(mut cond: impl FnMut() -> bool, budget: Duration) -> bool {
    if cond() {
        return true;
    }
    // The clock is read from the 16th try on: most waits end before.
    let mut start: Option<Instant> = None;
    let probe = crate::worker::ReadyProbe::current();
    let mut tries = 0u32;
    let mut rounds = 0u32;
    loop {
        let ready = probe.is_some_and(|p| p.has_ready());
        if ready {
            crate::yield_now();
            rounds += 1;
            // The ULTs that ran may be polling too: where threads share CPUs,
            // the one that would end this wait may be waiting for this CPU.
            if probe.is_some_and(|p| p.yields_when_idle() && p.cpu_yield_due()) {
                std::thread::yield_now();
            }
        } else if let Some(p) = probe.filter(|p| p.has_progress_hooks()) {
            // What a poller waits for may come from the network: its worker is
            // busy with it, so it drives the progress hooks itself, without a
            // pause in between (a pause is ~140 cycles on recent x86: eight of
            // them were a third of a message's latency between processes).
            // Where processes share CPUs, the one that would send it may be
            // waiting for this CPU.
            if !p.poll_progress() && p.yields_when_idle() {
                std::thread::yield_now();
            }
        } else {
            for _ in 0..8 {
                std::hint::spin_loop();
            }
        }
        if cond() {
            return true;
        }
        tries += 1;
        // Reading the clock costs 20-50 ns: do it every few tries only. Once nothing
        // else is ready, the rounds owed are moot: a sleeping ULT's timer, or the
        // progress that would set `cond`, only runs once this poller parks.
        if tries.is_multiple_of(16) {
            let now = Instant::now();
            let since = *start.get_or_insert(now);
            if now - since >= budget && (!ready || rounds >= MIN_ROUNDS) {
                return false;
            }
        }
    }
}

/// Looks at `cond` up to `spins` times with a spin hint in between, when nothing
/// else could use the CPU meanwhile: this worker has no other ULT ready and its
/// scheduler does not give CPUs away when idle. For conditions another process
/// or thread sets through shared memory, where a look costs a cache line and a
/// round of [`poll_until`] drives the network first. Returns whether `cond` held.
#[inline]
pub fn spin_until(mut cond: impl FnMut() -> bool, spins: u32) -> bool {
    if cond() {
        return true;
    }
    let probe = crate::worker::ReadyProbe::current();
    if probe.is_some_and(|p| p.has_ready() || p.yields_when_idle()) {
        return false;
    }
    for _ in 0..spins {
        std::hint::spin_loop();
        if cond() {
            return true;
        }
    }
    false
}
