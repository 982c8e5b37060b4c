//! Idle policy, measured from /proc. Kept alone in its own test binary so that no
//! other test burns CPU in the same process while it measures.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mpcrs_scheduler::sync::Event;
use mpcrs_scheduler::Scheduler;

fn sched(workers: usize) -> Scheduler {
    Scheduler::builder().workers(workers).build().unwrap()
}

fn process_cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = 100.0; // USER_HZ on Linux
    (f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap()) / ticks
}

#[test]
fn idle_workers_sleep_in_the_kernel() {
    let s = sched(2);
    let h = s.handle();
    let ev = Arc::new(Event::new());
    let hs: Vec<_> = (0..16)
        .map(|i| {
            let ev = ev.clone();
            h.spawn_on(i % 2, move || ev.wait())
        })
        .collect();
    std::thread::sleep(Duration::from_millis(50));
    let cpu0 = process_cpu_seconds();
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_secs(1));
    let used = (process_cpu_seconds() - cpu0) / t0.elapsed().as_secs_f64();
    let wake = Instant::now();
    ev.set();
    for j in hs {
        j.join().unwrap();
    }
    let wake_time = wake.elapsed();
    assert!(
        used < 0.05,
        "idle scheduler used {:.1}% of a core",
        used * 100.0
    );
    assert!(
        wake_time < Duration::from_millis(50),
        "wake-up took {wake_time:?}"
    );
}
