//! Scheduler costs: ULT switch, spawn+join, park→unpark ping-pong across workers,
//! and the same ping-pong between two OS threads for comparison.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use mpcrs_scheduler::{Scheduler, Unparker};

/// Two ULTs on one worker yield to each other `iters` times each.
fn ult_switch(c: &mut Criterion) {
    let s = Scheduler::builder().workers(1).build().unwrap();
    let h = s.handle();
    c.bench_function("ult_switch (yield between 2 ULTs, per switch)", |b| {
        b.iter_custom(|iters| {
            let go = Arc::new(AtomicBool::new(false));
            let mk = |go: Arc<AtomicBool>| {
                h.spawn_on(0, move || {
                    while !go.load(Ordering::Acquire) {
                        mpcrs_scheduler::yield_now();
                    }
                    let t0 = Instant::now();
                    for _ in 0..iters {
                        mpcrs_scheduler::yield_now();
                    }
                    t0.elapsed()
                })
            };
            let a = mk(go.clone());
            let bb = mk(go.clone());
            go.store(true, Ordering::Release);
            let t = a.join().unwrap().max(bb.join().unwrap());
            // Each iteration of each ULT is one switch away and one back: 2 switches
            // per iteration per ULT, shared by the two ULTs.
            t / 2
        })
    });
}

fn spawn_join(c: &mut Criterion) {
    let s = Scheduler::builder().workers(1).build().unwrap();
    let h = s.handle();
    c.bench_function("spawn_join (ULT on a pooled stack)", |b| {
        b.iter(|| h.spawn_on(0, || 1u32).join().unwrap())
    });
}

/// Two ULTs on different workers hand a token back and forth with park/unpark.
fn park_unpark_across_workers(c: &mut Criterion) {
    let s = Scheduler::builder().workers(2).build().unwrap();
    let h = s.handle();
    c.bench_function("park_unpark across workers (one-way hand-off)", |b| {
        b.iter_custom(|iters| {
            let turn = Arc::new(AtomicU64::new(0));
            let slots: Arc<[Mutex<Option<Unparker>>; 2]> =
                Arc::new([Mutex::new(None), Mutex::new(None)]);
            let registered = Arc::new(AtomicU64::new(0));
            let start = Arc::new(AtomicBool::new(false));
            let player = |me: u64, worker: usize| {
                let (turn, slots, registered, start) = (
                    turn.clone(),
                    slots.clone(),
                    registered.clone(),
                    start.clone(),
                );
                h.spawn_on(worker, move || {
                    *slots[me as usize].lock().unwrap() = Some(mpcrs_scheduler::current());
                    registered.fetch_add(1, Ordering::SeqCst);
                    while !start.load(Ordering::Acquire) {
                        mpcrs_scheduler::yield_now();
                    }
                    let other = slots[1 - me as usize].lock().unwrap().clone().unwrap();
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
            let a = player(0, 0);
            let b2 = player(1, 1);
            while registered.load(Ordering::SeqCst) < 2 {
                std::thread::yield_now();
            }
            let t0 = Instant::now();
            start.store(true, Ordering::Release);
            a.join().unwrap();
            b2.join().unwrap();
            t0.elapsed() / 2
        })
    });
}

/// The same hand-off between two OS threads with std park/unpark.
fn os_thread_ping_pong(c: &mut Criterion) {
    c.bench_function("os_thread park_unpark (one-way hand-off)", |b| {
        b.iter_custom(|iters| {
            let turn = Arc::new(AtomicU64::new(0));
            let main = std::thread::current();
            let t2 = turn.clone();
            let other = std::thread::spawn(move || {
                for i in 0..iters {
                    while t2.load(Ordering::Acquire) != 2 * i + 1 {
                        std::thread::park();
                    }
                    t2.store(2 * i + 2, Ordering::Release);
                    main.unpark();
                }
            });
            let peer = other.thread().clone();
            let t0 = Instant::now();
            for i in 0..iters {
                turn.store(2 * i + 1, Ordering::Release);
                peer.unpark();
                while turn.load(Ordering::Acquire) != 2 * i + 2 {
                    std::thread::park();
                }
            }
            let t = t0.elapsed();
            other.join().unwrap();
            t / 2
        })
    });
}

/// Latency from unpark to the ULT running again when its worker sleeps in the kernel.
fn wake_sleeping_worker(c: &mut Criterion) {
    let s = Scheduler::builder().workers(2).build().unwrap();
    let h = s.handle();
    c.bench_function("wake a ULT whose worker sleeps (unpark to running)", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let woken_at = Arc::new(Mutex::new(None::<Instant>));
                let flag = Arc::new(AtomicBool::new(false));
                let (w2, f2) = (woken_at.clone(), flag.clone());
                let (tx, rx) = std::sync::mpsc::channel();
                let j = h.spawn_on(1, move || {
                    tx.send(mpcrs_scheduler::current()).unwrap();
                    while !f2.load(Ordering::Acquire) {
                        mpcrs_scheduler::park();
                    }
                    *w2.lock().unwrap() = Some(Instant::now());
                });
                let u = rx.recv().unwrap();
                // Past the idle spin: the worker is asleep on its futex.
                std::thread::sleep(Duration::from_micros(300));
                let t0 = Instant::now();
                flag.store(true, Ordering::Release);
                u.unpark();
                j.join().unwrap();
                total += woken_at.lock().unwrap().unwrap() - t0;
            }
            total
        })
    });
}

/// The same for a long-lived OS thread asleep in `std::thread::park`, pinned like a
/// worker to the other CPU: the kernel's and the machine's share of the wake-up
/// cost (on a VM, waking a halted virtual CPU dominates).
fn wake_sleeping_os_thread(c: &mut Criterion) {
    let cpus = core_affinity::get_core_ids().unwrap();
    let (home, other) = (cpus[0], *cpus.last().unwrap());
    let generation = Arc::new(AtomicU64::new(0));
    let woken: Arc<Mutex<(u64, Option<Instant>)>> = Arc::new(Mutex::new((0, None)));
    let (g2, w2) = (generation.clone(), woken.clone());
    let sleeper = std::thread::spawn(move || {
        core_affinity::set_for_current(other);
        let mut seen = 0;
        loop {
            while g2.load(Ordering::Acquire) == seen {
                std::thread::park();
            }
            seen = g2.load(Ordering::Acquire);
            if seen == u64::MAX {
                return;
            }
            *w2.lock().unwrap() = (seen, Some(Instant::now()));
        }
    });
    core_affinity::set_for_current(home);
    c.bench_function(
        "wake an OS thread asleep in park (unpark to running)",
        |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    std::thread::sleep(Duration::from_micros(300));
                    let g = generation.load(Ordering::Relaxed) + 1;
                    let t0 = Instant::now();
                    generation.store(g, Ordering::Release);
                    sleeper.thread().unpark();
                    let at = loop {
                        let w = *woken.lock().unwrap();
                        if w.0 == g {
                            break w.1.unwrap();
                        }
                        std::hint::spin_loop();
                    };
                    total += at - t0;
                }
                total
            })
        },
    );
    generation.store(u64::MAX, Ordering::Release);
    sleeper.thread().unpark();
    sleeper.join().unwrap();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = ult_switch, spawn_join, park_unpark_across_workers, os_thread_ping_pong, wake_sleeping_worker, wake_sleeping_os_thread
}
criterion_main!(benches);
