//! MPI_Wtime's clock: the node's monotonic clock (CLOCK_MONOTONIC), read
//! between two of its samples through the CPU's time-stamp counter.
//!
//! A vDSO `clock_gettime` costs 23-30 ns on these virtual machines and a bare
//! `rdtsc` 9-10 ns; programs that time every operation (OSU's one-sided
//! latency loops read MPI_Wtime twice per put) pay the difference on each
//! call. The counter is used only where the kernel itself keeps time with it
//! (its clocksource is `tsc`, which it picks only when the counter is
//! constant-rate and synchronized between CPUs); elsewhere, and with
//! `MPCRS_WTIME=clock`, every call reads the clock.
//!
//! Protocol. After a first sample the clock is read directly for one
//! fifth of a millisecond (calibration, which the runtime starts as a
//! process joins the job); then the value is an anchor plus ticks times a
//! rate, with the anchor published under a sequence lock. A call that finds
//! the anchor older than [`REANCHOR_TICKS`] samples the clock again: the rate
//! becomes the one measured since the first sample, corrected so that the
//! counter's value meets the clock's by the next sample (slewing, never a step
//! back), and the new anchor continues the old line at that tick. An error of
//! more than [`STEP_NS`] (the process was restored on another host, or the
//! machine was suspended) restarts the measurement from the clock's value.

use std::sync::atomic::{fence, AtomicU64, AtomicU8, Ordering};

/// How long the clock is read directly before the counter's rate is first
/// trusted (to within a few 1e-4, which the next sample corrects).
const CALIBRATION_NS: f64 = 2e5;
/// Ticks between two samples of the clock (1.4 ms at 3 GHz).
const REANCHOR_TICKS: u64 = 1 << 22;
/// How far behind the anchor a read may be and still count as "at" it.
const BEHIND_TICKS: u64 = 1 << 16;
/// An error beyond which the counter's line restarts from the clock.
const STEP_NS: f64 = 1e6;

const UNDECIDED: u8 = 0;
const CLOCK_ONLY: u8 = 1;
const CALIBRATING: u8 = 2;
const COUNTER: u8 = 3;

static MODE: AtomicU8 = AtomicU8::new(UNDECIDED);
/// Sequence lock over the fields below: odd while a writer changes them.
static SEQ: AtomicU64 = AtomicU64::new(0);
/// The line: ns = ANCHOR_NS + (tsc - ANCHOR_TSC) * RATE (ns per tick).
static ANCHOR_TSC: AtomicU64 = AtomicU64::new(0);
static ANCHOR_NS: AtomicU64 = AtomicU64::new(0);
static RATE: AtomicU64 = AtomicU64::new(0);
/// The first sample, from which the rate is measured.
static BASE_TSC: AtomicU64 = AtomicU64::new(0);
static BASE_NS: AtomicU64 = AtomicU64::new(0);

/// Seconds since an arbitrary point of the node (MPI_Wtime).
#[inline]
pub fn wtime() -> f64 {
    now_ns() * 1e-9
}

fn clock_ns() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64
}

#[inline]
#[cfg(target_arch = "x86_64")]
fn ticks() -> u64 {
    // SAFETY: rdtsc has no preconditions; `counter_is_trusted` checked the
    // CPU has a constant, synchronized counter before any call reaches here.
    unsafe { core::arch::x86_64::_rdtsc() }
}

#[cfg(not(target_arch = "x86_64"))]
fn ticks() -> u64 {
    unreachable!("the counter is used on x86_64 only")
}

/// The counter and the clock read together: of a few tries, the one whose
/// clock read the counter brackets most tightly (a thread preempted between
/// the two reads would otherwise put its whole time off into the rate).
fn sample() -> (u64, f64) {
    let mut best = (u64::MAX, 0, 0.0);
    for _ in 0..5 {
        let before = ticks();
        let ns = clock_ns();
        let after = ticks();
        let spread = after.wrapping_sub(before);
        if spread < best.0 {
            best = (spread, before + spread / 2, ns);
        }
    }
    (best.1, best.2)
}

/// Whether the kernel keeps time with the counter (and the user did not ask
/// for the clock).
fn counter_is_trusted() -> bool {
    let asked_clock =
        std::env::var_os(mpcrs_settings::variables::WTIME.name).is_some_and(|v| v == "clock");
    if !cfg!(target_arch = "x86_64") || asked_clock {
        return false;
    }
    std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
        .is_ok_and(|s| s.trim() == "tsc")
}

#[inline]
fn now_ns() -> f64 {
    match MODE.load(Ordering::Acquire) {
        COUNTER => counter_ns(),
        CLOCK_ONLY => clock_ns(),
        CALIBRATING => calibrating_ns(),
        _ => decide(),
    }
}

/// The first call: picks the source and takes the first sample.
#[cold]
fn decide() -> f64 {
    let now = clock_ns();
    if !counter_is_trusted() {
        MODE.store(CLOCK_ONLY, Ordering::Release);
        return now;
    }
    if let Some(seq) = lock() {
        let (tsc, now) = sample();
        BASE_TSC.store(tsc, Ordering::Relaxed);
        BASE_NS.store(now.to_bits(), Ordering::Relaxed);
        unlock(seq);
        // Racing first calls: the first to lock sets the base.
        let _ = MODE.compare_exchange(UNDECIDED, CALIBRATING, Ordering::AcqRel, Ordering::Acquire);
        return now;
    }
    now
}

/// Until the rate is measured over [`CALIBRATION_NS`], the clock itself.
fn calibrating_ns() -> f64 {
    let now = clock_ns();
    let base = f64::from_bits(BASE_NS.load(Ordering::Relaxed));
    if now - base < CALIBRATION_NS || MODE.load(Ordering::Acquire) != CALIBRATING {
        return now;
    }
    let Some(seq) = lock() else {
        return now;
    };
    if MODE.load(Ordering::Acquire) == CALIBRATING {
        let (tsc, now) = sample();
        let base_tsc = BASE_TSC.load(Ordering::Relaxed);
        let rate = (now - base) / tsc.wrapping_sub(base_tsc).max(1) as f64;
        set_line(tsc, now, rate);
        // Before the unlock: no second caller measures again.
        MODE.store(COUNTER, Ordering::Release);
        unlock(seq);
        return now;
    }
    unlock(seq);
    now
}

/// The counter's line, sampling the clock again when the anchor is old.
#[inline]
fn counter_ns() -> f64 {
    for _ in 0..1000 {
        let seq = SEQ.load(Ordering::Acquire);
        if seq & 1 == 0 {
            let at = ANCHOR_TSC.load(Ordering::Relaxed);
            let ns = f64::from_bits(ANCHOR_NS.load(Ordering::Relaxed));
            let rate = f64::from_bits(RATE.load(Ordering::Relaxed));
            fence(Ordering::Acquire);
            if SEQ.load(Ordering::Relaxed) == seq {
                let d = ticks().wrapping_sub(at);
                if d < REANCHOR_TICKS {
                    return ns + d as f64 * rate;
                }
                // A few ticks behind the anchor: another CPU's counter read
                // an instant later by the writer. Far behind (a restored
                // process) wraps to a huge distance and samples the clock.
                if d > u64::MAX - BEHIND_TICKS {
                    return ns;
                }
                if let Some(v) = resample(seq) {
                    return v;
                }
            }
        }
        std::hint::spin_loop();
    }
    // A writer was descheduled inside its few instructions: read the clock.
    clock_ns()
}

/// Samples the clock and moves the anchor (under the lock, which the caller
/// saw free at `seq`); `None` if another caller is doing it.
#[cold]
fn resample(seq: u64) -> Option<f64> {
    lock_at(seq)?;
    let (tsc, now) = sample();
    let at = ANCHOR_TSC.load(Ordering::Relaxed);
    let anchor_ns = f64::from_bits(ANCHOR_NS.load(Ordering::Relaxed));
    let old_rate = f64::from_bits(RATE.load(Ordering::Relaxed));
    let d = tsc.wrapping_sub(at);
    let ext = anchor_ns + d as f64 * old_rate;
    let err = now - ext;
    let value = if d > u64::MAX / 2 || err.abs() > STEP_NS {
        // Counter or clock jumped: measure again from here.
        BASE_TSC.store(tsc, Ordering::Relaxed);
        BASE_NS.store(now.to_bits(), Ordering::Relaxed);
        set_line(tsc, now, old_rate);
        now
    } else {
        let base_tsc = BASE_TSC.load(Ordering::Relaxed);
        let base_ns = f64::from_bits(BASE_NS.load(Ordering::Relaxed));
        let measured = (now - base_ns) / tsc.wrapping_sub(base_tsc).max(1) as f64;
        // Meet the clock by the next sample, never more than 1% off its
        // rate (an error beyond STEP_NS steps instead).
        let slew = (err / REANCHOR_TICKS as f64).clamp(-0.01 * measured, 0.01 * measured);
        set_line(tsc, ext, measured + slew);
        ext
    };
    SEQ.store(seq + 2, Ordering::Release);
    Some(value)
}

fn set_line(tsc: u64, ns: f64, rate: f64) {
    ANCHOR_TSC.store(tsc, Ordering::Relaxed);
    ANCHOR_NS.store(ns.to_bits(), Ordering::Relaxed);
    RATE.store(rate.to_bits(), Ordering::Relaxed);
}

/// Takes the sequence lock if it is free; returns the value to unlock with.
fn lock() -> Option<u64> {
    let seq = SEQ.load(Ordering::Acquire);
    if seq & 1 == 1 {
        return None;
    }
    lock_at(seq)
}

/// Takes the sequence lock if it still reads `seq` (free).
fn lock_at(seq: u64) -> Option<u64> {
    SEQ.compare_exchange(seq, seq + 1, Ordering::Acquire, Ordering::Relaxed)
        .ok()?;
    fence(Ordering::Release);
    Some(seq)
}

fn unlock(seq: u64) {
    SEQ.store(seq + 2, Ordering::Release);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The clock and wtime read together (retried while something came
    /// between the reads), in seconds.
    fn both() -> (f64, f64) {
        loop {
            let c0 = clock_ns();
            let w = wtime();
            let c1 = clock_ns();
            if c1 - c0 < 5e3 {
                return ((c0 + c1) * 0.5e-9, w);
            }
        }
    }

    #[test]
    fn follows_the_monotonic_clock_and_never_goes_back() {
        let start = clock_ns();
        let mut last = wtime();
        // Past calibration and several samples of the clock.
        while clock_ns() - start < 20e6 {
            let now = wtime();
            assert!(now >= last, "wtime went back from {last} to {now}");
            last = now;
        }
        let (clock, ours) = both();
        assert!(
            (clock - ours).abs() < 50e-6,
            "wtime {ours} is {} us away from CLOCK_MONOTONIC {clock}",
            (ours - clock) * 1e6
        );
    }

    #[test]
    fn counts_time_at_the_clocks_rate() {
        let (c0, w0) = both();
        std::thread::sleep(std::time::Duration::from_millis(30));
        let (c1, w1) = both();
        let (dc, dw) = (c1 - c0, w1 - w0);
        assert!(
            (dc - dw).abs() < 30e-6,
            "over {dc} s of the clock wtime counted {dw} s"
        );
    }
}
