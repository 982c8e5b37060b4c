//! Stopping every thread of this process at a checkpoint and recording what
//! brings each one back.
//!
//! The leader sends [`FREEZE_SIGNAL`] to every other thread. Each handler
//! records where the kernel saved the thread's interrupted context (the signal
//! frame on the thread's own stack, hence in the image), its FS base, robust
//! futex list, CPU affinity and name, then waits until the leader releases it.
//! The leader then signals itself: its handler records its own frame and runs
//! the leader's hook (the dumper forks there), so the snapshot holds every
//! thread stopped at a signal frame. A restorer re-creates each thread with
//! `clone` on its saved FS base and resumes it with `rt_sigreturn` on its frame:
//! the thread goes on from exactly where the signal interrupted it.
//!
//! Everything the handlers touch is a static (in the image too) and every call
//! is a raw system call: a stopped thread may hold any lock of libc.

use std::ffi::c_void;
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::sys::{self, call};

/// The real-time signal that stops threads (SIGRTMAX - 2 under glibc).
pub const FREEZE_SIGNAL: i32 = 62;
/// Most threads a process may have at a checkpoint.
pub const MAX_THREADS: usize = 1024;
/// How long stopped threads are waited for.
const STOP_TIMEOUT: Duration = Duration::from_secs(2);
/// Where glibc's thread descriptor may hold the thread id, from the FS base.
const DESCRIPTOR_SCAN: usize = 0x800;

/// One thread as its signal handler recorded it.
#[repr(C)]
pub struct ThreadSlot {
    pub tid: AtomicI32,
    /// 1 once the handler filled the slot.
    pub stopped: AtomicU32,
    pub fs_base: AtomicU64,
    /// The `ucontext` the kernel saved: `rt_sigreturn` with the stack pointer
    /// here resumes the thread.
    pub frame: AtomicU64,
    pub robust_head: AtomicU64,
    pub robust_len: AtomicU64,
    /// CPU affinity mask (up to 1024 CPUs).
    pub cpus: [AtomicU64; 16],
    /// Thread name (comm), NUL-padded.
    pub name: [AtomicU64; 2],
}

impl ThreadSlot {
    const fn new() -> ThreadSlot {
        ThreadSlot {
            tid: AtomicI32::new(0),
            stopped: AtomicU32::new(0),
            fs_base: AtomicU64::new(0),
            frame: AtomicU64::new(0),
            robust_head: AtomicU64::new(0),
            robust_len: AtomicU64::new(0),
            cpus: [const { AtomicU64::new(0) }; 16],
            name: [const { AtomicU64::new(0) }; 2],
        }
    }
}

/// The threads of the last snapshot; slots with tid 0 are threads that ended
/// before they could be stopped.
pub static THREADS: [ThreadSlot; MAX_THREADS] = [const { ThreadSlot::new() }; MAX_THREADS];
pub static THREAD_COUNT: AtomicUsize = AtomicUsize::new(0);
/// The process id at the snapshot: the main thread's tid.
pub static PROCESS_ID: AtomicI32 = AtomicI32::new(0);
/// Offset of the thread id in glibc's thread descriptor, from the FS base
/// (found by matching every stopped thread's tid; the restorer rewrites it).
pub static TID_OFFSET: AtomicUsize = AtomicUsize::new(0);
/// Incremented by the restorer: a snapshot that sees it change was restored.
pub static RESTORES: AtomicU64 = AtomicU64::new(0);

static LEADER: AtomicI32 = AtomicI32::new(0);
static ARRIVED: AtomicU32 = AtomicU32::new(0);
static DEPARTED: AtomicU32 = AtomicU32::new(0);
static RELEASE: AtomicU32 = AtomicU32::new(0);
/// The leader's hook, run in its own handler: the address of a
/// `*mut dyn FnMut()` on the leader's stack, or 0.
static HOOK: AtomicUsize = AtomicUsize::new(0);

fn record(slot: &ThreadSlot, frame: *mut c_void) {
    slot.fs_base.store(sys::fs_base(), Ordering::Relaxed);
    slot.frame.store(frame as u64, Ordering::Relaxed);
    let (mut head, mut len) = (0u64, 0u64);
    // SAFETY: get_robust_list(0, …) stores the caller's list head and length.
    unsafe {
        call!(
            libc::SYS_get_robust_list,
            0,
            &mut head as *mut u64,
            &mut len as *mut u64
        )
    };
    slot.robust_head.store(head, Ordering::Relaxed);
    slot.robust_len.store(len, Ordering::Relaxed);
    let mut cpus = [0u64; 16];
    // SAFETY: sched_getaffinity writes at most 128 bytes into `cpus`.
    unsafe { call!(libc::SYS_sched_getaffinity, 0, 128, cpus.as_mut_ptr()) };
    for (s, c) in slot.cpus.iter().zip(cpus) {
        s.store(c, Ordering::Relaxed);
    }
    let mut name = [0u64; 2];
    // SAFETY: PR_GET_NAME writes 16 bytes.
    unsafe { call!(libc::SYS_prctl, libc::PR_GET_NAME, name.as_mut_ptr()) };
    for (s, n) in slot.name.iter().zip(name) {
        s.store(n, Ordering::Relaxed);
    }
    slot.stopped.store(1, Ordering::Release);
}

extern "C" fn on_freeze(_sig: i32, _info: *mut libc::siginfo_t, frame: *mut c_void) {
    let tid = sys::gettid();
    let n = THREAD_COUNT.load(Ordering::Acquire).min(MAX_THREADS);
    let Some(slot) = THREADS[..n]
        .iter()
        .find(|s| s.tid.load(Ordering::Relaxed) == tid)
    else {
        return;
    };
    record(slot, frame);
    if tid == LEADER.load(Ordering::Relaxed) {
        let hook = HOOK.load(Ordering::Acquire) as *const *mut dyn FnMut();
        if !hook.is_null() {
            // SAFETY: the leader stored the address of its live hook pointer
            // and is inside tgkill on itself until this handler returns.
            unsafe { (**hook)() };
        }
        return;
    }
    ARRIVED.fetch_add(1, Ordering::Release);
    while RELEASE.load(Ordering::Acquire) == 0 {
        sys::futex_wait(&RELEASE, 0);
    }
    DEPARTED.fetch_add(1, Ordering::Release);
}

fn install_handler() -> Result<(), String> {
    // SAFETY: reading the current disposition into a zeroed struct.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: querying only.
    unsafe { libc::sigaction(FREEZE_SIGNAL, std::ptr::null(), &mut old) };
    if old.sa_sigaction == on_freeze as *const () as usize {
        return Ok(());
    }
    if old.sa_sigaction != libc::SIG_DFL {
        return Err(format!(
            "signal {FREEZE_SIGNAL}, with which mpcrs stops threads at a checkpoint, has a \
             handler of the program"
        ));
    }
    // SAFETY: a zeroed sigaction is valid; the handler is async-signal-safe
    // (raw system calls and atomics only).
    let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
    act.sa_sigaction = on_freeze as *const () as usize;
    act.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
    // SAFETY: sa_mask is a valid sigset; every signal is held off while a
    // thread is stopped, so nothing runs on top of its frame.
    unsafe { libc::sigfillset(&mut act.sa_mask) };
    // SAFETY: installing a valid disposition.
    if unsafe { libc::sigaction(FREEZE_SIGNAL, &act, std::ptr::null_mut()) } != 0 {
        return Err(format!(
            "cannot handle signal {FREEZE_SIGNAL}: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

fn task_ids() -> Result<Vec<i32>, String> {
    let dir = std::fs::read_dir("/proc/self/task").map_err(|e| format!("/proc/self/task: {e}"))?;
    let mut tids: Vec<i32> = dir
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    tids.sort_unstable();
    Ok(tids)
}

fn tgkill(pid: i32, tid: i32, sig: i32) -> i64 {
    // SAFETY: tgkill only sends a signal.
    unsafe { call!(libc::SYS_tgkill, pid, tid, sig) }
}

/// Every thread of the process but the caller, stopped in its handler until
/// this is dropped.
pub struct Freeze {
    pid: i32,
    me: i32,
    stopped: u32,
}

/// How [`Freeze::capture_self`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Captured {
    /// In the process that took the snapshot.
    Here,
    /// In a process restored from the snapshot.
    Restored,
}

impl Freeze {
    /// Stops every other thread. Fails, with every thread running again, if one
    /// does not stop within two seconds (it blocks the signal, for instance).
    pub fn stop_others() -> Result<Freeze, String> {
        install_handler()?;
        let pid = sys::getpid();
        let me = sys::gettid();
        let tids = task_ids()?;
        if tids.len() > MAX_THREADS {
            return Err(format!(
                "the process has {} threads; a checkpoint holds at most {MAX_THREADS}",
                tids.len()
            ));
        }
        for (i, slot) in THREADS.iter().enumerate() {
            slot.tid
                .store(tids.get(i).copied().unwrap_or(0), Ordering::Relaxed);
            slot.stopped.store(0, Ordering::Relaxed);
        }
        LEADER.store(me, Ordering::Relaxed);
        PROCESS_ID.store(pid, Ordering::Relaxed);
        ARRIVED.store(0, Ordering::Relaxed);
        DEPARTED.store(0, Ordering::Relaxed);
        RELEASE.store(0, Ordering::Relaxed);
        THREAD_COUNT.store(tids.len(), Ordering::Release);
        let mut freeze = Freeze {
            pid,
            me,
            stopped: 0,
        };
        for (i, &tid) in tids.iter().enumerate() {
            if tid == me {
                continue;
            }
            match tgkill(pid, tid, FREEZE_SIGNAL) {
                0 => freeze.stopped += 1,
                e if e == -(libc::ESRCH as i64) => THREADS[i].tid.store(0, Ordering::Relaxed),
                e => return Err(format!("cannot signal thread {tid}: errno {}", -e)),
            }
        }
        // From here on nothing may allocate: a stopped thread may hold malloc's lock.
        let deadline = Instant::now() + STOP_TIMEOUT;
        while ARRIVED.load(Ordering::Acquire) < freeze.stopped {
            if Instant::now() > deadline {
                // A thread that ended after it was signalled never arrives.
                let mut missing = 0;
                let mut ended = 0;
                for slot in &THREADS[..tids.len()] {
                    let tid = slot.tid.load(Ordering::Relaxed);
                    if tid == 0 || tid == me || slot.stopped.load(Ordering::Acquire) == 1 {
                        continue;
                    }
                    if tgkill(pid, tid, 0) == -(libc::ESRCH as i64) {
                        slot.tid.store(0, Ordering::Relaxed);
                        ended += 1;
                    } else {
                        missing = tid;
                    }
                }
                freeze.stopped -= ended;
                if missing != 0 {
                    // Released before the message is made: a stopped thread
                    // may hold malloc's lock.
                    drop(freeze);
                    return Err(format!(
                        "thread {missing} did not stop within {} s (it blocks signal {FREEZE_SIGNAL}, \
                         or got no CPU in that time)",
                        STOP_TIMEOUT.as_secs()
                    ));
                }
                continue;
            }
            std::hint::spin_loop();
            std::thread::yield_now();
        }
        Ok(freeze)
    }

    /// Records the caller like the others (through its own signal frame) and
    /// runs `hook` in its handler, where the caller's context is saved: a
    /// process forked there holds every thread at a signal frame. Returns
    /// [`Captured::Restored`] when a restored process resumes here.
    pub fn capture_self(&self, hook: &mut dyn FnMut()) -> Captured {
        let restores = RESTORES.load(Ordering::Acquire);
        find_tid_offset(self.me);
        // SAFETY: only the trait object's lifetime is erased; the pointer is
        // used by this thread's handler during the tgkill below and then cleared.
        let hook: *mut (dyn FnMut() + 'static) = unsafe { std::mem::transmute(hook) };
        HOOK.store(&hook as *const _ as usize, Ordering::Release);
        tgkill(self.pid, self.me, FREEZE_SIGNAL);
        HOOK.store(0, Ordering::Release);
        if RESTORES.load(Ordering::Acquire) != restores {
            // The other threads resumed at their frames, not in their handlers:
            // none is left to depart.
            DEPARTED.store(ARRIVED.load(Ordering::Acquire), Ordering::Release);
            Captured::Restored
        } else {
            Captured::Here
        }
    }
}

impl Drop for Freeze {
    fn drop(&mut self) {
        RELEASE.store(1, Ordering::Release);
        sys::futex_wake_all(&RELEASE);
        // The statics are reused by the next snapshot: wait until every handler left.
        while DEPARTED.load(Ordering::Acquire) < ARRIVED.load(Ordering::Acquire) {
            std::hint::spin_loop();
            std::thread::yield_now();
        }
    }
}

/// Finds where glibc keeps the thread id in its thread descriptor: the offset
/// at which every stopped thread's descriptor holds that thread's tid.
fn find_tid_offset(me: i32) {
    let n = THREAD_COUNT.load(Ordering::Acquire).min(MAX_THREADS);
    let own = sys::fs_base();
    let matches = |base: u64, tid: i32, off: usize| {
        // SAFETY: the thread descriptor spans at least DESCRIPTOR_SCAN bytes
        // from the FS base of a live thread of this process.
        unsafe { std::ptr::read_volatile((base as usize + off) as *const i32) == tid }
    };
    let found = (0..DESCRIPTOR_SCAN).step_by(4).find(|&off| {
        matches(own, me, off)
            && THREADS[..n].iter().all(|s| {
                let tid = s.tid.load(Ordering::Relaxed);
                tid == 0
                    || tid == me
                    || s.stopped.load(Ordering::Acquire) == 0
                    || matches(s.fs_base.load(Ordering::Relaxed), tid, off)
            })
    });
    TID_OFFSET.store(found.unwrap_or(0), Ordering::Release);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_threads_stop_and_the_leader_captures_itself() {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let spinners: Vec<_> = (0..3)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                })
            })
            .collect();
        let sleeper = std::thread::spawn(|| std::thread::sleep(Duration::from_millis(300)));
        std::thread::sleep(Duration::from_millis(20));
        let freeze = Freeze::stop_others().unwrap();
        let mut ran = 0;
        let got = freeze.capture_self(&mut || ran += 1);
        assert_eq!((got, ran), (Captured::Here, 1));
        let n = THREAD_COUNT.load(Ordering::Acquire);
        let me = sys::gettid();
        for slot in &THREADS[..n] {
            let tid = slot.tid.load(Ordering::Relaxed);
            if tid == 0 {
                continue;
            }
            assert_eq!(slot.stopped.load(Ordering::Relaxed), 1, "thread {tid}");
            assert_ne!(slot.frame.load(Ordering::Relaxed), 0);
            assert_ne!(slot.fs_base.load(Ordering::Relaxed), 0);
            if tid == me {
                assert_eq!(slot.fs_base.load(Ordering::Relaxed), sys::fs_base());
            }
        }
        let off = TID_OFFSET.load(Ordering::Relaxed);
        assert_ne!(off, 0);
        // SAFETY: the offset lies within this thread's descriptor.
        assert_eq!(
            unsafe { *((sys::fs_base() as usize + off) as *const i32) },
            me
        );
        drop(freeze);
        stop.store(true, Ordering::Relaxed);
        for s in spinners {
            s.join().unwrap();
        }
        sleeper.join().unwrap();
    }
}
