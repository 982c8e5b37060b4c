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

/// The process's CPU time over the next second, in cores.
fn cores_used_for_a_second() -> f64 {
    let cpu0 = process_cpu_seconds();
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_secs(1));
    (process_cpu_seconds() - cpu0) / t0.elapsed().as_secs_f64()
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
    let used = cores_used_for_a_second();
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

/// A network with nothing to deliver until told, counting its polls.
struct QuietNetwork {
    pending: std::sync::atomic::AtomicBool,
    delivered: Event,
}

impl mpcrs_scheduler::Progress for QuietNetwork {
    fn poll(&self, _worker: usize) -> bool {
        if self
            .pending
            .swap(false, std::sync::atomic::Ordering::AcqRel)
        {
            self.delivered.set();
            return true;
        }
        false
    }
}

/// Two workers, in the given idle policy, polling a [`QuietNetwork`].
fn two_workers_on_a_quiet_network(yields: bool) -> (Scheduler, Arc<QuietNetwork>) {
    let s = Scheduler::builder()
        .workers(2)
        .yield_when_idle(yields)
        .build()
        .unwrap();
    let net = Arc::new(QuietNetwork {
        pending: false.into(),
        delivered: Event::new(),
    });
    s.handle().add_progress_hook(net.clone());
    (s, net)
}

/// Workers polling a network give their CPUs back once idle for a while, in
/// both idle policies: yielding them for good kept the kernel's own threads of
/// a 2-CPU machine (writeback, RCU) waiting for minutes.
#[test]
fn idle_workers_polling_a_network_nap_instead_of_yielding_for_good() {
    for yields in [true, false] {
        let (s, net) = two_workers_on_a_quiet_network(yields);
        let h = s.handle();
        let n = net.clone();
        let waiter = h.spawn_on(0, move || n.delivered.wait());
        // Past the first idle stretch, during which workers poll and yield.
        std::thread::sleep(Duration::from_millis(200));
        let used = cores_used_for_a_second();
        let sent = Instant::now();
        net.pending
            .store(true, std::sync::atomic::Ordering::Release);
        waiter.join().unwrap();
        let seen = sent.elapsed();
        assert!(
            used < 0.25,
            "yield_when_idle({yields}): two idle workers polling a network used {:.0}% of a core",
            used * 100.0
        );
        assert!(
            seen < Duration::from_millis(100),
            "yield_when_idle({yields}): a message to an idle worker took {seen:?}"
        );
    }
}

/// A ULT that polls something between short sleeps (a rank waiting for
/// another process through shared memory) is no work for its worker's idle
/// clock: the worker naps until the ULT's next wake-up instead of yielding its
/// CPU in between for as long as the wait lasts, which kept the kernel's own
/// threads of a 2-CPU machine from running (an fsync waited for seconds).
#[test]
fn a_ult_polling_between_sleeps_leaves_its_worker_napping() {
    for yields in [true, false] {
        // The network stays registered for the whole test.
        let (s, _network) = two_workers_on_a_quiet_network(yields);
        let h = s.handle();
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let d = done.clone();
        let polls = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let p = polls.clone();
        let poller = h.spawn_on(0, move || {
            while !d.load(std::sync::atomic::Ordering::Acquire) {
                p.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                mpcrs_scheduler::sleep(Duration::from_micros(50));
            }
        });
        std::thread::sleep(Duration::from_millis(200));
        let polls_before = polls.load(std::sync::atomic::Ordering::Relaxed);
        let used = cores_used_for_a_second();
        let polled = polls.load(std::sync::atomic::Ordering::Relaxed) - polls_before;
        done.store(true, std::sync::atomic::Ordering::Release);
        poller.join().unwrap();
        assert!(
            used < 0.5,
            "yield_when_idle({yields}): a ULT polling between 50 us sleeps kept its workers at {:.0}% of a core",
            used * 100.0
        );
        // Its sleeps still end on time (napping is bounded by its timer).
        assert!(
            polled > 2_000,
            "yield_when_idle({yields}): the poller woke {polled} times in a second"
        );
    }
}

/// A network whose senders ring a bell (see mpcrs_scheduler::bell): what
/// one node's processes over shared memory look like to the scheduler.
struct BellNetwork {
    pending: std::sync::atomic::AtomicBool,
    /// The event of the message under way.
    delivered: std::sync::Mutex<Arc<Event>>,
    /// Where a shared-memory channel keeps it: beside its frames.
    doorbell: Arc<mpcrs_scheduler::bell::Doorbell>,
}

struct ArmedBell {
    bell: mpcrs_scheduler::bell::Bell,
    doorbell: Arc<mpcrs_scheduler::bell::Doorbell>,
}

impl mpcrs_scheduler::bell::Armed for ArmedBell {
    fn bells(&self, out: &mut Vec<mpcrs_scheduler::bell::Bell>) {
        out.push(self.bell);
    }
}

impl Drop for ArmedBell {
    fn drop(&mut self) {
        self.doorbell.disarm();
    }
}

impl BellNetwork {
    /// Another process's send: the frame, then the bell if anyone sleeps.
    fn send(&self) {
        self.pending
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.doorbell.ring_if_sleeping();
    }
}

impl mpcrs_scheduler::Progress for BellNetwork {
    fn poll(&self, _worker: usize) -> bool {
        if self
            .pending
            .swap(false, std::sync::atomic::Ordering::AcqRel)
        {
            self.delivered.lock().unwrap().set();
            return true;
        }
        false
    }

    fn arm(&self) -> Option<Box<dyn mpcrs_scheduler::bell::Armed>> {
        // SAFETY: the returned ArmedBell holds the doorbell as long as the
        // bell is used.
        let bell = unsafe { self.doorbell.arm() };
        Some(Box::new(ArmedBell {
            bell,
            doorbell: self.doorbell.clone(),
        }))
    }

    fn rings_for_everything(&self) -> bool {
        true
    }
}

/// Workers whose CPUs other processes share, polling a network that rings
/// a bell for everything, sleep on it as soon as they are idle: a worker
/// that polled and yielded first kept a CPU busy for the 50 ms of every
/// short wait, which on a 2-CPU machine running 4 processes was CPU the
/// others' ranks and checkpoint helpers needed. Each message still wakes
/// its worker.
#[test]
fn workers_sharing_their_cpus_sleep_on_their_networks_bells_as_soon_as_idle() {
    let s = Scheduler::builder()
        .workers(2)
        .yield_when_idle(true)
        .build()
        .unwrap();
    let net = Arc::new(BellNetwork {
        pending: false.into(),
        delivered: std::sync::Mutex::new(Arc::new(Event::new())),
        doorbell: Arc::default(),
    });
    s.handle().add_progress_hook(net.clone());
    // Short waits, each shorter than the polling stretch of a worker that
    // cannot count on bells.
    let waits = 25;
    let cpu0 = process_cpu_seconds();
    let t0 = Instant::now();
    for _ in 0..waits {
        let delivered = Arc::new(Event::new());
        *net.delivered.lock().unwrap() = delivered.clone();
        let waiter = s.handle().spawn_on(0, move || delivered.wait());
        std::thread::sleep(Duration::from_millis(40));
        net.send();
        waiter.join().unwrap();
    }
    let used = (process_cpu_seconds() - cpu0) / t0.elapsed().as_secs_f64();
    assert!(
        used < 0.25,
        "workers idle between {waits} messages used {:.0}% of a core",
        used * 100.0
    );
}
