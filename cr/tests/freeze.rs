//! The freeze that stops every thread for a snapshot, when a thread does not
//! stop: the snapshot is refused naming the thread, every other thread goes
//! on, and the next freeze works. (Its own test binary: a freeze stops every
//! thread of the process, other tests' included.)

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mpcrs_cr::threads::{Freeze, FREEZE_SIGNAL};

#[test]
fn a_thread_that_blocks_the_freeze_signal_is_named_and_the_others_go_on() {
    let stop = Arc::new(AtomicBool::new(false));
    let counter = Arc::new(AtomicU64::new(0));
    let (tx, rx) = std::sync::mpsc::channel();
    let blocker = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            // SAFETY: a sigset with the freeze signal, blocked for this thread.
            unsafe {
                let mut set: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                libc::sigaddset(&mut set, FREEZE_SIGNAL);
                libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            }
            // SAFETY: gettid has no preconditions.
            tx.send(unsafe { libc::gettid() }).unwrap();
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let busy = {
        let (stop, counter) = (stop.clone(), counter.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                counter.fetch_add(1, Ordering::Relaxed);
                std::thread::yield_now();
            }
        })
    };
    let tid = rx.recv().unwrap();
    let t = Instant::now();
    let e = Freeze::stop_others()
        .err()
        .expect("a freeze with a blocking thread is refused");
    assert!(
        e.contains(&format!("thread {tid} did not stop within")),
        "{e}"
    );
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    // The threads that stopped were let go.
    let before = counter.load(Ordering::Relaxed);
    std::thread::sleep(Duration::from_millis(50));
    assert!(
        counter.load(Ordering::Relaxed) > before,
        "the busy thread stays stopped"
    );
    stop.store(true, Ordering::Relaxed);
    blocker.join().unwrap();
    busy.join().unwrap();
    // Every thread left stops now.
    let freeze = Freeze::stop_others().expect("a freeze of threads that stop");
    drop(freeze);
}
