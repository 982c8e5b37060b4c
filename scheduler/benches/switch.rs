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

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = ult_switch, spawn_join, park_unpark_across_workers, os_thread_ping_pong
}
criterion_main!(benches);
