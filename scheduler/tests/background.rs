//! Background ULTs (helpers): they run only when their worker has nothing else
//! ready, or for one turn after another ULT yields; they never preempt a ULT
//! that computes.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mpcrs_scheduler::Scheduler;

#[test]
fn a_helper_waits_while_a_rank_computes_and_runs_once_it_waits() {
    let s = Scheduler::builder().workers(1).build().unwrap();
    let h = s.handle();
    let order = Arc::new(Mutex::new(Vec::new()));
    let computing = Arc::new(AtomicBool::new(true));
    let (o, c, h2) = (order.clone(), computing.clone(), h.clone());
    let rank = h.spawn_on(0, move || {
        let (o2, c2) = (o.clone(), c.clone());
        // Spawned first, so it would run first in a plain FIFO.
        let helper = h2.spawn_background(0, move || {
            // The rank never yielded before parking: it must be done computing.
            o2.lock()
                .unwrap()
                .push(("helper", c2.load(Ordering::SeqCst)));
        });
        let other = mpcrs_scheduler::spawn_local({
            let o = o.clone();
            move || o.lock().unwrap().push(("other rank", true))
        });
        // Compute without yielding for a while: nobody else may run.
        let t = Instant::now();
        while t.elapsed() < Duration::from_millis(30) {
            std::hint::spin_loop();
        }
        c.store(false, Ordering::SeqCst);
        o.lock().unwrap().push(("rank done computing", false));
        other.join().unwrap();
        helper.join().unwrap();
    });
    rank.join().unwrap();
    let order = order.lock().unwrap().clone();
    // Nothing ran while the rank computed; then, as the rank waits (yielding,
    // then parking), the other rank and the helper both run.
    assert_eq!(order[0], ("rank done computing", false), "{order:?}");
    assert!(order.contains(&("helper", false)), "{order:?}");
    assert!(order.contains(&("other rank", true)), "{order:?}");
    assert_eq!(order.len(), 3);
}

#[test]
fn a_helper_progresses_while_ranks_poll_by_yielding() {
    let s = Scheduler::builder().workers(1).build().unwrap();
    let h = s.handle();
    let steps = Arc::new(AtomicUsize::new(0));
    let st = steps.clone();
    let helper = h.spawn_background(0, move || {
        for _ in 0..100 {
            st.fetch_add(1, Ordering::SeqCst);
            mpcrs_scheduler::yield_now();
        }
    });
    // A rank that waits for the helper by yielding (never parking): it only
    // finishes if the helper gets turns.
    let st = steps.clone();
    let rank = h.spawn_on(0, move || {
        let mut yields = 0;
        while st.load(Ordering::SeqCst) < 100 {
            mpcrs_scheduler::yield_now();
            yields += 1;
        }
        yields
    });
    let yields = rank.join().unwrap();
    helper.join().unwrap();
    // The helper may take its first step before the rank starts (nothing
    // else was ready then): 99 yields.
    assert!(
        (99..=110).contains(&yields),
        "one helper step per yield, got {yields} yields"
    );
}

#[test]
fn helpers_alone_run_like_any_ult() {
    let s = Scheduler::builder().workers(2).build().unwrap();
    let h = s.handle();
    let js: Vec<_> = (0..8)
        .map(|i| h.spawn_background(i % 2, move || i * 2))
        .collect();
    let sum: usize = js.into_iter().map(|j| j.join().unwrap()).sum();
    assert_eq!(sum, 56);
}
