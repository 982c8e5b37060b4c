//! Bells: futex words in memory shared with other processes, which a sender
//! rings after it left something for a process whose workers sleep. A worker
//! with nothing to do sleeps on its own word (other threads of the process
//! wake it) and on the bells its progress hooks armed, at once (futex_waitv),
//! so that a message from another process wakes it at once instead of at its
//! next timed poll.
//!
//! The protocol, for one bell and the channel it guards:
//! - the sleeper reads the bell, announces itself (a count next to the bell,
//!   a locked increment), looks at the channel once more, and sleeps while the
//!   bell holds the value it read;
//! - the sender publishes its frame, reads the count, and if anyone sleeps,
//!   increments the bell and wakes one sleeper ([`ring`]).
//!
//! The sender reads the count without a fence (a fence after every frame
//! would cost every message the time its cache lines take to reach the
//! other core): for as long as its frame sits in its CPU's store buffer, the
//! count it reads may predate an announcement that the sleeper's last look
//! then misses. That window is the store buffer's drain time; the sleep is
//! capped (see `idle`), so a bell missed there costs at most the cap.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

/// The two words of the protocol above, as they lie in memory shared between
/// processes (a ring's header, a node area's slot): the count of announced
/// sleepers and the bell. A zeroed `Doorbell` is a quiet one.
#[repr(C)]
#[derive(Default)]
pub struct Doorbell {
    sleepers: AtomicU32,
    bell: AtomicU32,
}

impl Doorbell {
    /// Announces a sleeper; returns the bell to sleep on. The caller looks at
    /// its channel once more before it sleeps, and calls [`Doorbell::disarm`]
    /// once awake.
    ///
    /// # Safety
    /// The doorbell's memory stays mapped for as long as the bell is used
    /// (slept on, or asked whether it rang).
    pub unsafe fn arm(&self) -> Bell {
        let seen = self.bell.load(Ordering::Acquire);
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        Bell {
            word: &self.bell,
            seen,
        }
    }

    /// Withdraws an announcement of [`Doorbell::arm`].
    pub fn disarm(&self) {
        self.sleepers.fetch_sub(1, Ordering::Release);
    }

    /// After publishing to the channel: wakes one sleeper if any announced
    /// itself (read without a fence: see the module's notes).
    pub fn ring_if_sleeping(&self) {
        if self.sleepers.load(Ordering::Relaxed) != 0 {
            ring(&self.bell);
        }
    }
}

/// A bell armed for one sleep: its word and the value the sleeper read before
/// it announced itself. Made by [`Doorbell::arm`], whose caller keeps the
/// doorbell's memory mapped while the bell is used.
#[derive(Clone, Copy, Debug)]
pub struct Bell {
    word: *const AtomicU32,
    seen: u32,
}

// SAFETY: a bell is an address and a value; the word is only read through
// atomics, and its mapping outlives the bell (see `Doorbell::arm`).
unsafe impl Send for Bell {}

/// A driver's bells, armed for one sleep of a worker. Dropping it withdraws
/// the worker's announcement.
pub trait Armed: Send {
    /// Appends the bells to sleep on.
    fn bells(&self, out: &mut Vec<Bell>);
}

/// Rings `word`, the bell of a channel the caller just published to and
/// whose count said somebody sleeps: one sleeper wakes and polls (it hands
/// what it finds to the ULTs that wait for it, waking their own workers).
fn ring(word: &AtomicU32) {
    word.fetch_add(1, Ordering::Release);
    // SAFETY: `word` is a valid, aligned u32; FUTEX_WAKE (shared: the sleepers
    // are other processes) only identifies the futex by its address.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, 1);
    }
}

impl Bell {
    /// Whether the bell rang since it was armed.
    pub fn rang(&self) -> bool {
        // SAFETY: the word is mapped while the bell is used (see `Doorbell::arm`).
        unsafe { (*self.word).load(Ordering::Acquire) != self.seen }
    }
}

/// Parks the calling ULT until `bell` rings or `timeout` passes; its worker
/// looks at the bell between ULTs and sleeps on it when idle. Outside a ULT,
/// sleeps the thread likewise. Returns early spuriously: callers look again.
pub fn wait_in_ult(bell: Bell, timeout: Duration) {
    match crate::worker::current_task() {
        Some(task) => {
            crate::worker::add_bell_waiter(bell, task.clone());
            crate::park_timeout(timeout);
            crate::worker::remove_bell_waiter(&task);
        }
        None => {
            wait(&AtomicU32::new(0), 0, &[bell], Some(timeout));
        }
    }
}

/// The kernel's `struct futex_waitv`.
#[repr(C)]
struct FutexWaitv {
    val: u64,
    uaddr: u64,
    flags: u32,
    reserved: u32,
}

/// futex2 flags: a 32-bit word, process-private.
const FUTEX2_SIZE_U32: u32 = 0x02;
const FUTEX2_PRIVATE: u32 = 128;
/// Words one futex_waitv call takes.
const MAX_WORDS: usize = 128;

/// Set once futex_waitv proved missing (kernels before 5.16): bells cannot
/// wake anyone then, and workers keep their timed polls.
static NO_WAITV: AtomicBool = AtomicBool::new(false);

/// Whether sleeping on bells works on this kernel.
pub(crate) fn available() -> bool {
    !NO_WAITV.load(Ordering::Relaxed)
}

/// Why a [`wait`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Woke {
    /// `own` changed (another thread of the process woke the sleeper).
    Own,
    /// A bell rang.
    Bell,
    /// The timeout passed.
    Timeout,
    /// A signal, a spurious return, or a wait without bells (which cannot
    /// tell).
    Other,
}

/// Sleeps while `own` holds `expected` (a word of this process, which its
/// threads change and wake with [`crate::futex::wake_one`]) and each bell
/// holds the value it was armed with, at most `timeout`; returns early on a
/// signal or spuriously. Bells past the 127th are left out (their senders'
/// frames wait for the timeout).
pub fn wait(own: &AtomicU32, expected: u32, bells: &[Bell], timeout: Option<Duration>) -> Woke {
    if bells.is_empty() || !available() {
        crate::futex::wait(own, expected, timeout);
        return Woke::Other;
    }
    let mut words = Vec::with_capacity((bells.len() + 1).min(MAX_WORDS));
    words.push(FutexWaitv {
        val: expected as u64,
        uaddr: own.as_ptr() as u64,
        flags: FUTEX2_SIZE_U32 | FUTEX2_PRIVATE,
        reserved: 0,
    });
    words.extend(bells.iter().take(MAX_WORDS - 1).map(|b| FutexWaitv {
        val: b.seen as u64,
        uaddr: b.word as u64,
        flags: FUTEX2_SIZE_U32,
        reserved: 0,
    }));
    // futex_waitv takes an absolute time on the clock it is given.
    let deadline = timeout.map(|t| {
        let mut now = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `now` is a valid out-parameter.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
        let nanos = now.tv_nsec as u64 + t.subsec_nanos() as u64;
        libc::timespec {
            tv_sec: now
                .tv_sec
                .saturating_add(t.as_secs().min(i64::MAX as u64 / 2) as libc::time_t)
                + (nanos / 1_000_000_000) as libc::time_t,
            tv_nsec: (nanos % 1_000_000_000) as libc::c_long,
        }
    });
    let deadline_ptr = deadline
        .as_ref()
        .map_or(std::ptr::null(), |d| d as *const libc::timespec);
    // SAFETY: `words` holds valid futex_waitv entries for aligned words that
    // stay mapped during the call (`own` is borrowed, the bells by contract);
    // the deadline, if any, lives on this frame.
    let r = unsafe {
        libc::syscall(
            libc::SYS_futex_waitv,
            words.as_ptr(),
            words.len() as libc::c_uint,
            0 as libc::c_uint,
            deadline_ptr,
            libc::CLOCK_MONOTONIC,
        )
    };
    if r == 0 {
        return Woke::Own;
    }
    if r > 0 {
        return Woke::Bell;
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::ETIMEDOUT) => Woke::Timeout,
        // A word had changed already.
        Some(libc::EAGAIN) if own.load(Ordering::Relaxed) != expected => Woke::Own,
        Some(libc::EAGAIN) => Woke::Bell,
        Some(libc::ENOSYS) => {
            NO_WAITV.store(true, Ordering::Relaxed);
            crate::futex::wait(own, expected, timeout);
            Woke::Other
        }
        _ => Woke::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Instant;

    #[test]
    fn a_rung_bell_ends_the_sleep_and_an_unrung_one_waits_for_the_timeout() {
        let own = Arc::new(AtomicU32::new(1));
        let door = Arc::new(Doorbell::default());
        // SAFETY: `door` outlives every bell armed here.
        let arm = || unsafe { door.arm() };
        door.ring_if_sleeping();
        let t0 = Instant::now();
        let woke = wait(&own, 1, &[arm()], Some(Duration::from_millis(30)));
        assert!(t0.elapsed() >= Duration::from_millis(25), "returned early");
        assert!(matches!(woke, Woke::Timeout | Woke::Other), "{woke:?}");
        door.disarm();

        let bells = [arm()];
        let d = door.clone();
        let ringer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            d.ring_if_sleeping();
        });
        let t0 = Instant::now();
        let woke = wait(&own, 1, &bells, Some(Duration::from_secs(10)));
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "a rung bell did not wake the sleeper"
        );
        assert!(matches!(woke, Woke::Bell | Woke::Other), "{woke:?}");
        ringer.join().unwrap();
        door.disarm();

        // Rung between arming and sleeping: no sleep at all.
        let bells = [arm()];
        door.ring_if_sleeping();
        let t0 = Instant::now();
        let woke = wait(&own, 1, &bells, Some(Duration::from_secs(10)));
        assert!(t0.elapsed() < Duration::from_secs(5), "a missed ring slept");
        assert_eq!(woke, Woke::Bell);
        door.disarm();

        // Nobody announced: a ring wakes no one, and changes nothing.
        let before = door.bell.load(Ordering::Relaxed);
        door.ring_if_sleeping();
        assert_eq!(door.bell.load(Ordering::Relaxed), before);
    }
}
