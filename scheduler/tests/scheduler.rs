//! Behaviour of the scheduler seen from its public API.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mpcrs_scheduler::sync::{Barrier, Condvar, Event, Mutex};
use mpcrs_scheduler::{Progress, Scheduler};

fn sched(workers: usize) -> Scheduler {
    Scheduler::builder().workers(workers).build().unwrap()
}

#[test]
fn spawn_and_join_return_values_and_panics() {
    let s = sched(2);
    let h = s.handle();
    let ok = h.spawn_on(1, || 6 * 7);
    let bad = h.spawn_on(0, || -> u32 { panic!("boom") });
    assert_eq!(ok.join().unwrap(), 42);
    let err = bad.join().unwrap_err();
    assert_eq!(err.downcast_ref::<&str>(), Some(&"boom"));
}

#[test]
fn ults_stay_on_their_worker_across_yields_and_parks() {
    let s = sched(2);
    let h = s.handle();
    let handles: Vec<_> = (0..64)
        .map(|i| {
            h.spawn_on(i % 2, move || {
                for _ in 0..100 {
                    assert_eq!(mpcrs_scheduler::current_worker(), Some(i % 2));
                    mpcrs_scheduler::yield_now();
                    mpcrs_scheduler::sleep(Duration::from_micros(10));
                }
            })
        })
        .collect();
    for j in handles {
        j.join().unwrap();
    }
}

#[test]
fn yield_round_robins_ults_of_one_worker() {
    let s = sched(1);
    let h = s.handle();
    // Spawned from a ULT of the same worker, the three are queued in order before
    // any of them runs; wake-ups from another thread would arrive over time.
    let log = h
        .spawn_on(0, || {
            let log = Arc::new(std::sync::Mutex::new(Vec::new()));
            let hs: Vec<_> = (0..3)
                .map(|id| {
                    let log = log.clone();
                    mpcrs_scheduler::spawn_local(move || {
                        for _ in 0..3 {
                            log.lock().unwrap().push(id);
                            mpcrs_scheduler::yield_now();
                        }
                    })
                })
                .collect();
            for j in hs {
                j.join().unwrap();
            }
            let v = log.lock().unwrap().clone();
            v
        })
        .join()
        .unwrap();
    assert_eq!(log, vec![0, 1, 2, 0, 1, 2, 0, 1, 2]);
}

#[test]
fn unpark_from_another_worker_and_from_a_thread() {
    let s = sched(2);
    let h = s.handle();
    let flag = Arc::new(AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::channel();
    let f2 = flag.clone();
    let parked = h.spawn_on(0, move || {
        tx.send(mpcrs_scheduler::current()).unwrap();
        while !f2.load(Ordering::Acquire) {
            mpcrs_scheduler::park();
        }
        7
    });
    let me = rx.recv().unwrap();
    // From a ULT on worker 1.
    let f3 = flag.clone();
    let me2 = me.clone();
    h.spawn_on(1, move || {
        me2.unpark(); // spurious for the parked ULT: it must park again
        mpcrs_scheduler::sleep(Duration::from_millis(5));
        f3.store(true, Ordering::Release);
        me2.unpark();
    })
    .join()
    .unwrap();
    assert_eq!(parked.join().unwrap(), 7);
    // A token left before the park is not lost.
    let t = h.spawn_on(1, || {
        mpcrs_scheduler::current().unpark();
        mpcrs_scheduler::park(); // returns at once
        1
    });
    assert_eq!(t.join().unwrap(), 1);
    drop(me);
}

#[test]
fn timers_wake_sleeping_ults_in_deadline_order() {
    let s = sched(1);
    let h = s.handle();
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    let start = Instant::now();
    let hs: Vec<_> = [30u64, 10, 20]
        .into_iter()
        .map(|ms| {
            let order = order.clone();
            h.spawn_on(0, move || {
                mpcrs_scheduler::sleep(Duration::from_millis(ms));
                order.lock().unwrap().push(ms);
            })
        })
        .collect();
    for j in hs {
        j.join().unwrap();
    }
    assert!(start.elapsed() >= Duration::from_millis(30));
    assert_eq!(*order.lock().unwrap(), vec![10, 20, 30]);
}

#[test]
fn mutex_and_condvar_under_contention() {
    let s = sched(2);
    let h = s.handle();
    let state = Arc::new((Mutex::new(0u64), Condvar::new()));
    let n = 200;
    let hs: Vec<_> = (0..n)
        .map(|i| {
            let state = state.clone();
            h.spawn_on(i % 2, move || {
                for _ in 0..100 {
                    let mut g = state.0.lock();
                    let v = *g;
                    mpcrs_scheduler::yield_now(); // hold the lock across a switch
                    *g = v + 1;
                }
                state.1.notify_all();
            })
        })
        .collect();
    let waiter = {
        let state = state.clone();
        h.spawn_on(0, move || {
            let g = state.0.lock();
            let g = state.1.wait_while(g, |v| *v < (n as u64) * 100);
            *g
        })
    };
    for j in hs {
        j.join().unwrap();
    }
    assert_eq!(waiter.join().unwrap(), n as u64 * 100);
}

#[test]
fn barrier_has_one_leader_per_round() {
    let s = sched(2);
    let h = s.handle();
    let parties = 33;
    let barrier = Arc::new(Barrier::new(parties));
    let leaders = Arc::new(AtomicUsize::new(0));
    let phase = Arc::new(AtomicUsize::new(0));
    let hs: Vec<_> = (0..parties)
        .map(|i| {
            let (b, l, p) = (barrier.clone(), leaders.clone(), phase.clone());
            h.spawn_on(i % 2, move || {
                for round in 0..50 {
                    assert_eq!(p.load(Ordering::SeqCst) / parties, round);
                    p.fetch_add(1, Ordering::SeqCst);
                    if b.wait().is_leader() {
                        l.fetch_add(1, Ordering::SeqCst);
                    }
                    b.wait();
                }
            })
        })
        .collect();
    for j in hs {
        j.join().unwrap();
    }
    assert_eq!(leaders.load(Ordering::SeqCst), 50);
}

#[test]
fn blocking_calls_run_off_the_worker() {
    let s = sched(1);
    let h = s.handle();
    let ticks = Arc::new(AtomicUsize::new(0));
    let t2 = ticks.clone();
    let ticker = h.spawn_on(0, move || {
        for _ in 0..20 {
            t2.fetch_add(1, Ordering::SeqCst);
            mpcrs_scheduler::sleep(Duration::from_millis(2));
        }
    });
    let t3 = ticks.clone();
    let io = h.spawn_on(0, move || {
        let before = t3.load(Ordering::SeqCst);
        // A blocking 100 ms sleep: the ticker must keep running meanwhile.
        let worker_thread = std::thread::current().id();
        let ran_on = mpcrs_scheduler::run_blocking(move || {
            std::thread::sleep(Duration::from_millis(100));
            std::thread::current().id()
        });
        assert_ne!(ran_on, worker_thread);
        t3.load(Ordering::SeqCst) - before
    });
    let progressed = io.join().unwrap();
    ticker.join().unwrap();
    assert!(progressed >= 10, "ticker advanced only {progressed} times");
}

struct CountingHook {
    polls: AtomicUsize,
    pending: AtomicBool,
    delivered: Event,
}

impl Progress for CountingHook {
    fn poll(&self, _worker: usize) -> bool {
        self.polls.fetch_add(1, Ordering::Relaxed);
        if self.pending.swap(false, Ordering::AcqRel) {
            self.delivered.set();
            return true;
        }
        false
    }
}

#[test]
fn progress_hooks_are_polled_and_wake_waiters() {
    let s = sched(2);
    let h = s.handle();
    let hook = Arc::new(CountingHook {
        polls: AtomicUsize::new(0),
        pending: AtomicBool::new(false),
        delivered: Event::new(),
    });
    h.add_progress_hook(hook.clone());
    let hk = hook.clone();
    let waiter = h.spawn_on(0, move || hk.delivered.wait());
    std::thread::sleep(Duration::from_millis(5));
    hook.pending.store(true, Ordering::Release);
    waiter.join().unwrap();
    assert!(hook.polls.load(Ordering::Relaxed) > 0);
}

#[test]
fn stacks_are_reused_across_many_short_ults() {
    let s = sched(2);
    let h = s.handle();
    for batch in 0..20 {
        let hs: Vec<_> = (0..500).map(|i| h.spawn(move || i * batch)).collect();
        let sum: usize = hs.into_iter().map(|j| j.join().unwrap()).sum();
        assert_eq!(sum, batch * 499 * 500 / 2);
    }
    assert_eq!(h.live_ults(), 0);
}

#[test]
fn custom_stack_size_holds_deep_frames() {
    let s = sched(1);
    let h = s.handle();
    let j = h.spawn_with_stack(0, 8 << 20, || {
        let big = [1u8; 4 << 20];
        std::hint::black_box(&big)
            .iter()
            .map(|&b| b as usize)
            .sum::<usize>()
    });
    assert_eq!(j.join().unwrap(), 4 << 20);
}

#[test]
fn park_unpark_ping_pong_across_workers() {
    let s = sched(2);
    // Many short and long rounds: a lost wake-up shows up as a hang (the test's
    // time limit), which an earlier version of `unpark` did about once per million.
    for round in 0..40 {
        for iters in [1usize, 2, 3, 10, 100, 1000, 20_000] {
            ping_pong(&s.handle(), iters + round);
        }
    }
}

fn ping_pong(h: &mpcrs_scheduler::Handle, iters: usize) {
    let turn = Arc::new(AtomicUsize::new(0));
    let slots: Arc<[std::sync::Mutex<Option<mpcrs_scheduler::Unparker>>; 2]> =
        Arc::new([std::sync::Mutex::new(None), std::sync::Mutex::new(None)]);
    let registered = Arc::new(AtomicUsize::new(0));
    let player = |me: usize| {
        let (turn, slots, registered) = (turn.clone(), slots.clone(), registered.clone());
        h.spawn_on(me, move || {
            *slots[me].lock().unwrap() = Some(mpcrs_scheduler::current());
            registered.fetch_add(1, Ordering::SeqCst);
            while registered.load(Ordering::SeqCst) < 2 {
                mpcrs_scheduler::yield_now();
            }
            let other = slots[1 - me].lock().unwrap().clone().unwrap();
            for i in 0..iters {
                let mine = 2 * i + me;
                while turn.load(Ordering::Acquire) != mine {
                    mpcrs_scheduler::park();
                }
                turn.store(mine + 1, Ordering::Release);
                other.unpark();
            }
        })
    };
    let a = player(0);
    let b = player(1);
    a.join().unwrap();
    b.join().unwrap();
    assert_eq!(turn.load(Ordering::SeqCst), 2 * iters);
}

struct ForeignHook {
    foreign_polls: AtomicUsize,
    pending: AtomicBool,
    delivered: Event,
}

impl Progress for ForeignHook {
    fn poll(&self, worker: usize) -> bool {
        if worker == mpcrs_scheduler::FOREIGN_THREAD {
            self.foreign_polls.fetch_add(1, Ordering::Relaxed);
        }
        if self.pending.swap(false, Ordering::AcqRel) {
            self.delivered.set();
            return true;
        }
        false
    }
}

/// A plain OS thread waiting for what a progress hook delivers gets it even
/// while the only worker is held by a ULT blocked in a system call (a rank
/// joining its own threads): the thread polls the hooks itself as it parks.
#[test]
fn a_plain_thread_polls_the_hooks_while_every_worker_is_blocked() {
    let s = sched(1);
    let h = s.handle();
    let hook = Arc::new(ForeignHook {
        foreign_polls: AtomicUsize::new(0),
        pending: AtomicBool::new(false),
        delivered: Event::new(),
    });
    h.add_progress_hook(hook.clone());
    let (blocking_tx, blocking_rx) = std::sync::mpsc::channel::<()>();
    let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
    let blocker = h.spawn_on(0, move || {
        blocking_tx.send(()).unwrap();
        // Blocks the worker's OS thread, not just this ULT.
        release_rx.recv().unwrap();
    });
    blocking_rx.recv().unwrap();
    hook.pending.store(true, Ordering::Release);
    let hk = hook.clone();
    let plain = std::thread::spawn(move || {
        hk.delivered.wait();
        release_tx.send(()).unwrap();
    });
    plain.join().unwrap();
    blocker.join().unwrap();
    assert!(hook.foreign_polls.load(Ordering::Relaxed) > 0);
}
