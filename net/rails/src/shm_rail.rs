//! The shm rail of one process: a ring per ordered pair of processes of the node
//! (the sender creates it and names it to the receiver through signaling; the
//! receiver opens and unlinks it), polled by the scheduler's progress hooks.
//! Frames up to the ring's limit go eagerly; a large message is one frame naming
//! the sender's buffer, which the receiver copies once with [`read_remote`]
//! (crate::shm), then acknowledges.

use std::cell::UnsafeCell;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::shm::ShmRing;

/// Where incoming frames go: (sending process, frame), the frame lent where it
/// lies in the ring until the sink returns.
pub type ShmSink = Box<dyn Fn(u32, &[u8]) + Send + Sync>;

/// Bytes of each ring.
pub const RING_BYTES: usize = 1 << 20;

/// Name of the ring carrying frames from `from` to `to` in job `job`. Its
/// /dev/shm path starts with `mpcrs-`, which checkpoint images leave out.
pub fn ring_name(job: &str, from: u32, to: u32) -> String {
    format!("mpcrs-{job}-{from}-{to}")
}

/// Removes what is left in /dev/shm of the rings of job `job` (rings offered to a
/// process that ended, or was killed, before opening them). For the launcher,
/// once every process of the job is gone; returns how many it removed.
pub fn remove_job_rings(job: &str) -> usize {
    let prefix = ring_name(job, 0, 0);
    let prefix = &prefix[..prefix.len() - "0-0".len()];
    let Ok(dir) = std::fs::read_dir("/dev/shm") else {
        return 0;
    };
    dir.filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .filter(|e| std::fs::remove_file(e.path()).is_ok())
        .count()
}

/// A ring of `ShmRail::incoming`, as the watch list points at it.
struct Watched(*const ShmRing);

// SAFETY: `ShmRing` is Sync, and the pointer is only read through `&` while the
// ring is alive (see `ShmRail::any_frame`).
unsafe impl Send for Watched {}
// SAFETY: as above.
unsafe impl Sync for Watched {}

/// A lock released by a plain store: a locked instruction right after a
/// frame's stores to shared memory would wait until the other core gave their
/// cache lines up. Held for a push or a pass over the rings only, so a
/// contender spins.
struct Exclusive<T> {
    held: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: `value` is reached only through a guard, which one thread at a time
// holds (`held`).
unsafe impl<T: Send> Sync for Exclusive<T> {}

struct ExclusiveGuard<'a, T> {
    lock: &'a Exclusive<T>,
}

impl<T> Exclusive<T> {
    fn new(value: T) -> Exclusive<T> {
        Exclusive {
            held: AtomicBool::new(false),
            value: UnsafeCell::new(value),
        }
    }

    fn try_lock(&self) -> Option<ExclusiveGuard<'_, T>> {
        self.held
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .ok()
            .map(|_| ExclusiveGuard { lock: self })
    }

    fn lock(&self) -> ExclusiveGuard<'_, T> {
        loop {
            if let Some(g) = self.try_lock() {
                return g;
            }
            std::hint::spin_loop();
        }
    }
}

impl<T> std::ops::Deref for ExclusiveGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: this guard holds the lock.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T> std::ops::DerefMut for ExclusiveGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: this guard holds the lock.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T> Drop for ExclusiveGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.held.store(false, Ordering::Release);
    }
}

/// A ring this process writes to, kept to one writer at a time.
type Outgoing = Exclusive<ShmRing>;

pub struct ShmRail {
    job: String,
    me: u32,
    /// Rings towards other processes, by process number (null: none), read
    /// without a lock by senders. Made by `create_outgoing`, freed only by
    /// `close_all` (no sender then) or with the rail.
    outgoing: Box<[AtomicPtr<Outgoing>]>,
    /// Rings replaced by a new one towards the same process, freed likewise
    /// (boxed: a sender may still write through a pointer to one).
    #[allow(clippy::vec_box)]
    replaced: Mutex<Vec<Box<Outgoing>>>,
    /// Rings being read; held by the one thread progressing, across popping and
    /// delivering, so that frames reach the sink in the order they were sent.
    /// Shared: `watch` points at them, and sleeping workers hold them armed.
    incoming: Exclusive<Vec<(u32, Arc<ShmRing>)>>,
    /// The same rings, for workers arming their doorbells (`incoming` may be
    /// held for a while by a delivery).
    armable: Mutex<Vec<Arc<ShmRing>>>,
    /// Workers asleep on armed bells (see [`ShmRail::arm`]).
    armed: Arc<AtomicUsize>,
    /// The rings of `incoming`, looked at without the lock by every poll: most
    /// polls find nothing, and need not take it then. Replaced (under the lock)
    /// when rings join; replaced lists are kept in `retired` until `close_all`,
    /// since a poll may still be reading one.
    watch: AtomicPtr<Vec<Watched>>,
    #[allow(clippy::vec_box)] // a poll may still read a list's header: it must not move
    retired: Mutex<Vec<Box<Vec<Watched>>>>,
    /// Rings accepted but not yet read (accepting may happen inside the sink),
    /// and whether there are any (looked at by every poll without the lock).
    accepted: Mutex<Vec<(u32, ShmRing)>>,
    any_accepted: AtomicBool,
    sink: ShmSink,
}

impl ShmRail {
    /// The rail of process `me` in a job of `processes` processes.
    pub fn new(job: &str, me: u32, processes: u32, sink: ShmSink) -> ShmRail {
        ShmRail {
            job: job.to_string(),
            me,
            outgoing: (0..processes)
                .map(|_| AtomicPtr::new(std::ptr::null_mut()))
                .collect(),
            replaced: Mutex::new(Vec::new()),
            incoming: Exclusive::new(Vec::new()),
            armable: Mutex::new(Vec::new()),
            armed: Arc::new(AtomicUsize::new(0)),
            watch: AtomicPtr::new(std::ptr::null_mut()),
            retired: Mutex::new(Vec::new()),
            accepted: Mutex::new(Vec::new()),
            any_accepted: AtomicBool::new(false),
            sink,
        }
    }

    /// Creates the ring towards `to`; returns the name to send it (the address of
    /// a connect request).
    pub fn create_outgoing(&self, to: u32) -> io::Result<String> {
        let name = ring_name(&self.job, self.me, to);
        let slot = self.outgoing.get(to as usize).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("no process {to} in this job"),
            )
        })?;
        let ring = ShmRing::create(&name, RING_BYTES)
            .map_err(|e| io::Error::new(e.kind(), format!("shm ring {name}: {e}")))?;
        let new = Box::into_raw(Box::new(Outgoing::new(ring)));
        let old = slot.swap(new, Ordering::AcqRel);
        if !old.is_null() {
            // SAFETY: made by `Box::into_raw` here; a sender may still hold it,
            // so it is kept until `close_all`.
            self.replaced
                .lock()
                .unwrap()
                .push(unsafe { Box::from_raw(old) });
        }
        Ok(name)
    }

    /// Opens the ring `name` that process `from` created towards us, and removes
    /// its name (both sides have it mapped now; nothing is left in /dev/shm).
    pub fn accept_incoming(&self, from: u32, name: &str) -> io::Result<()> {
        if name != ring_name(&self.job, from, self.me) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("process {from} offered shm ring {name:?}, not one of this job towards process {}", self.me),
            ));
        }
        let ring = ShmRing::open(name)
            .map_err(|e| io::Error::new(e.kind(), format!("shm ring {name}: {e}")))?;
        ring.unlink()?;
        self.accepted.lock().unwrap().push((from, ring));
        self.any_accepted.store(true, Ordering::Release);
        Ok(())
    }

    /// Removes the names of every ring this process offered or was offered
    /// and that is still in /dev/shm (a process ending its job: no launcher
    /// of another kind removes what a killed peer never opened). Mappings
    /// stay as they are.
    pub fn unlink_names(&self) {
        for q in 0..self.outgoing.len() as u32 {
            let _ = crate::shm::unlink_shared(&ring_name(&self.job, self.me, q));
            let _ = crate::shm::unlink_shared(&ring_name(&self.job, q, self.me));
        }
    }

    /// Unmaps every ring, both ways, and removes the names of rings the other side
    /// never opened (a checkpoint closes the shm rail: images leave shared memory
    /// out, and rings are created again on demand afterwards). The caller makes
    /// sure no frame is left in them.
    pub fn close_all(&self) -> usize {
        let mut closed = 0;
        for out in self.take_outgoing() {
            // Already gone when the other side opened it.
            let _ = out.lock().unlink();
            closed += 1;
        }
        let mut incoming = self.incoming.lock();
        closed += incoming.len();
        // No poll runs now (the caller holds the network still): the lists and
        // the rings they point at can go, once no worker sleeps armed on them.
        self.retire_watch();
        self.retired.lock().unwrap().clear();
        let rings = std::mem::take(&mut *self.armable.lock().unwrap());
        self.wait_disarmed(&rings);
        drop(rings);
        incoming.clear();
        let mut accepted = self.accepted.lock().unwrap();
        closed += accepted.len();
        accepted.clear();
        closed
    }

    /// Largest frame `send` takes.
    pub fn max_frame(&self) -> usize {
        RING_BYTES / 2
    }

    /// Queues one frame to `to`. While the ring is full it drains its own
    /// incoming rings, so two processes filling each other's rings still move.
    /// The ring's lock makes this side the single producer the ring requires.
    pub fn send(&self, to: u32, frame: &[u8]) -> io::Result<()> {
        self.send_parts(to, &[frame])
    }

    /// [`ShmRail::send`] of the frame made of `parts` one after the other.
    pub fn send_parts(&self, to: u32, parts: &[&[u8]]) -> io::Result<()> {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        if len > self.max_frame() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{len}-byte frame over the shm rail (limit {}): large messages go by reference",
                    self.max_frame()
                ),
            ));
        }
        let out = self
            .outgoing
            .get(to as usize)
            .map(|slot| slot.load(Ordering::Acquire))
            .filter(|p| !p.is_null())
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::NotConnected,
                    format!("no shm endpoint to process {to}"),
                )
            })?;
        // SAFETY: rings are freed only by `close_all`, which runs while nothing
        // is sent (the caller holds the network still), or with the rail.
        let out = unsafe { &*out };
        loop {
            let pushed = out.lock().push_parts(parts);
            if pushed {
                return Ok(());
            }
            if !self.progress() {
                std::thread::yield_now();
            }
        }
    }

    /// Every outgoing ring, removed from the rail.
    #[allow(clippy::vec_box)]
    fn take_outgoing(&self) -> Vec<Box<Outgoing>> {
        let mut all: Vec<Box<Outgoing>> = std::mem::take(&mut *self.replaced.lock().unwrap());
        for slot in self.outgoing.iter() {
            let p = slot.swap(std::ptr::null_mut(), Ordering::AcqRel);
            if !p.is_null() {
                // SAFETY: made by `Box::into_raw` in `create_outgoing`, unpublished
                // just now; the caller guarantees no sender holds it.
                all.push(unsafe { Box::from_raw(p) });
            }
        }
        all
    }

    /// Hands every frame that arrived to the sink, in order; returns whether any
    /// did. One thread progresses at a time: a call made while another thread (or
    /// the sink itself) is progressing returns false at once.
    pub fn progress(&self) -> bool {
        let joining = self.any_accepted.load(Ordering::Relaxed);
        if !joining && !self.any_frame() {
            return false;
        }
        let Some(mut incoming) = self.incoming.try_lock() else {
            return false;
        };
        if joining && self.any_accepted.swap(false, Ordering::AcqRel) {
            let accepted = std::mem::take(&mut *self.accepted.lock().unwrap());
            let joined: Vec<(u32, Arc<ShmRing>)> = accepted
                .into_iter()
                .map(|(from, ring)| (from, Arc::new(ring)))
                .collect();
            self.armable
                .lock()
                .unwrap()
                .extend(joined.iter().map(|(_, r)| r.clone()));
            incoming.extend(joined);
            let list: Vec<Watched> = incoming.iter().map(|(_, r)| Watched(&**r)).collect();
            self.retire_watch();
            self.watch
                .store(Box::into_raw(Box::new(list)), Ordering::Release);
        }
        let mut moved = false;
        for (from, ring) in incoming.iter() {
            while ring.pop_with(|f| (self.sink)(*from, f)).is_some() {
                moved = true;
            }
        }
        moved
    }

    /// Whether a frame waits in any ring being read, without taking the lock.
    fn any_frame(&self) -> bool {
        let list = self.watch.load(Ordering::Acquire);
        if list.is_null() {
            return false;
        }
        // SAFETY: a published list is freed only by `close_all`, when no poll
        // runs; its rings are boxed in `incoming` and dropped there too.
        unsafe { (*list).iter().any(|ring| (*ring.0).has_frame()) }
    }

    /// Arms the bell of every ring being read, for one sleep of a worker
    /// (see [`mpcrs_scheduler::bell`]): the writers ring them after their
    /// next frame. The worker looks for frames once more before it sleeps.
    pub fn arm(&self) -> Option<ArmedRings> {
        let rings = self.armable.lock().unwrap().clone();
        if rings.is_empty() {
            return None;
        }
        self.armed.fetch_add(1, Ordering::AcqRel);
        // SAFETY: the rings' mappings live as long as the Arcs kept with the
        // bells, in the returned ArmedRings.
        let bells = rings
            .iter()
            .map(|r| unsafe { r.doorbell().arm() })
            .collect();
        Some(ArmedRings {
            rings,
            bells,
            armed: self.armed.clone(),
        })
    }

    /// Waits until no worker sleeps armed on `rings` (taken out of the rail
    /// being closed): a checkpoint's image leaves the rings' memory out, so a
    /// worker restored from it must not touch them when it wakes. Armed
    /// sleepers are rung awake; each sleeps at most a millisecond anyway,
    /// but a thread of a loaded machine may wait long for a CPU: that is
    /// said after a second, and taken for a fault of the runtime after a
    /// minute.
    fn wait_disarmed(&self, rings: &[Arc<ShmRing>]) {
        let start = Instant::now();
        let mut said = false;
        while self.armed.load(Ordering::Acquire) != 0 {
            for r in rings {
                r.doorbell().ring_if_sleeping();
            }
            let waited = start.elapsed();
            if waited > Duration::from_secs(1) && !said {
                said = true;
                mpcrs_settings::report!(
                    warn,
                    "mpcrs: process {}: closing the shm rail waits for a worker asleep on it",
                    self.me
                );
            }
            assert!(
                waited < Duration::from_secs(60),
                "a worker stayed asleep on the shm rail for a minute after it was rung"
            );
            std::thread::yield_now();
        }
    }

    /// Unpublishes the watch list, keeping it for `close_all` to free.
    fn retire_watch(&self) {
        let old = self.watch.swap(std::ptr::null_mut(), Ordering::AcqRel);
        if !old.is_null() {
            // SAFETY: made by `Box::into_raw` in `progress`, unpublished just now.
            self.retired
                .lock()
                .unwrap()
                .push(unsafe { Box::from_raw(old) });
        }
    }
}

impl Drop for ShmRail {
    fn drop(&mut self) {
        drop(self.take_outgoing());
        self.retire_watch();
    }
}

/// The bells of a rail's rings, armed for one sleep of a worker; disarmed
/// when dropped.
pub struct ArmedRings {
    rings: Vec<Arc<ShmRing>>,
    bells: Vec<mpcrs_scheduler::bell::Bell>,
    armed: Arc<AtomicUsize>,
}

impl mpcrs_scheduler::bell::Armed for ArmedRings {
    fn bells(&self, out: &mut Vec<mpcrs_scheduler::bell::Bell>) {
        out.extend_from_slice(&self.bells);
    }
}

impl Drop for ArmedRings {
    fn drop(&mut self) {
        for r in &self.rings {
            r.doorbell().disarm();
        }
        self.armed.fetch_sub(1, Ordering::AcqRel);
    }
}

impl mpcrs_scheduler::Progress for ShmRail {
    fn poll(&self, _worker: usize) -> bool {
        self.progress()
    }

    fn arm(&self) -> Option<Box<dyn mpcrs_scheduler::bell::Armed>> {
        Some(Box::new(ShmRail::arm(self)?))
    }

    fn rings_for_everything(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;
    use std::time::{Duration, Instant};

    /// Two rails of one job in this process, process 0 writing to process 1.
    fn pair(job: &str) -> (ShmRail, ShmRail) {
        let a = ShmRail::new(job, 0, 2, Box::new(|_, _| {}));
        let b = ShmRail::new(job, 1, 2, Box::new(|_, _| {}));
        let name = a.create_outgoing(1).unwrap();
        b.accept_incoming(0, &name).unwrap();
        // Joins the accepted ring to those read, and to those armed.
        b.progress();
        (a, b)
    }

    /// Closing the rail (a checkpoint) waits until no worker sleeps armed on
    /// its rings, ringing them awake: a worker restored from the image must
    /// not touch rings the image left out.
    #[test]
    fn closing_the_rail_wakes_and_waits_for_armed_sleepers() {
        let (a, b) = pair(&format!("test-close-armed-{}", std::process::id()));
        let b = Arc::new(b);
        let woke = Arc::new(AtomicBool::new(false));
        let (rail, w) = (b.clone(), woke.clone());
        let sleeper = std::thread::spawn(move || {
            let armed = rail.arm().expect("a ring to arm");
            let mut bells = Vec::new();
            mpcrs_scheduler::bell::Armed::bells(&armed, &mut bells);
            let own = AtomicU32::new(0);
            mpcrs_scheduler::bell::wait(&own, 0, &bells, Some(Duration::from_secs(60)));
            w.store(true, Ordering::Release);
            drop(armed);
        });
        while b.armed.load(Ordering::Acquire) == 0 {
            std::thread::yield_now();
        }
        let t0 = Instant::now();
        assert_eq!(b.close_all(), 1);
        assert!(
            woke.load(Ordering::Acquire),
            "closed before the sleeper disarmed"
        );
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "the sleeper was not rung awake"
        );
        sleeper.join().unwrap();
        assert!(b.arm().is_none(), "a closed rail still arms rings");
        a.close_all();
    }

    /// A frame to a process whose worker sleeps armed wakes it.
    #[test]
    fn a_frame_wakes_an_armed_sleeper() {
        let (a, b) = pair(&format!("test-frame-armed-{}", std::process::id()));
        let armed = b.arm().expect("a ring to arm");
        let mut bells = Vec::new();
        mpcrs_scheduler::bell::Armed::bells(&armed, &mut bells);
        let sender = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            a.send(1, b"hello").unwrap();
            a
        });
        let t0 = Instant::now();
        let own = AtomicU32::new(0);
        mpcrs_scheduler::bell::wait(&own, 0, &bells, Some(Duration::from_secs(60)));
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "the frame rang no bell"
        );
        drop(armed);
        let a = sender.join().unwrap();
        a.close_all();
        b.close_all();
    }
}
