//! A gate threads pass through, which can be closed: closing waits until those
//! inside have left, and keeps new ones out until it opens again. The fabric has
//! two: one for progress rounds (a snapshot must find no thread inside a
//! driver), one for outgoing frames (a checkpoint holds them from the drain
//! until every image is taken).

use std::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering};

/// How many times a worker is inside (ULTs of one worker may nest rounds when
/// one parks inside), alone on its cache line. Written only by its worker's
/// thread, so a load and a store count it.
#[repr(align(64))]
#[derive(Default)]
pub(crate) struct Mark(AtomicUsize);

impl Mark {
    fn add(&self, delta: isize) {
        let n = self.0.load(Ordering::Relaxed);
        self.0
            .store(n.wrapping_add_signed(delta), Ordering::Release);
    }
}

#[derive(Default)]
pub(crate) struct Gate {
    closed: AtomicBool,
    /// Threads inside through [`Gate::try_enter`].
    inside: AtomicUsize,
    /// Workers inside through [`Gate::try_enter_worker`], one mark each.
    workers: Box<[Mark]>,
    /// Whether closing issues a barrier on every thread of the process
    /// (membarrier), which spares workers entering any fence of their own.
    /// Registered per process: a process restored from an image registers again.
    asymmetric: AtomicBool,
}

/// Being inside a [`Gate`]; leaves it when dropped.
pub(crate) enum Pass<'a> {
    Counted(&'a Gate),
    Worker(&'a Mark),
}

impl Drop for Pass<'_> {
    fn drop(&mut self) {
        match self {
            Pass::Counted(g) => {
                g.inside.fetch_sub(1, Ordering::SeqCst);
            }
            Pass::Worker(m) => m.add(-1),
        }
    }
}

/// Runs membarrier command `cmd`; whether it succeeded.
fn membarrier(cmd: libc::c_int) -> bool {
    // SAFETY: the membarrier syscall with a command and no pointers.
    unsafe { libc::syscall(libc::SYS_membarrier, cmd, 0, 0) == 0 }
}

/// Registers this process for expedited membarriers; whether it may use them.
fn register_membarrier() -> bool {
    membarrier(libc::MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED)
}

/// Makes every thread of this process run a full barrier.
fn barrier_on_every_thread() -> bool {
    membarrier(libc::MEMBARRIER_CMD_PRIVATE_EXPEDITED)
}

impl Gate {
    /// A gate with a mark for each of `workers` workers.
    pub(crate) fn with_workers(workers: usize) -> Gate {
        Gate {
            closed: AtomicBool::new(false),
            inside: AtomicUsize::new(0),
            workers: (0..workers).map(|_| Mark::default()).collect(),
            asymmetric: AtomicBool::new(register_membarrier()),
        }
    }

    /// Enters, unless the gate is closed.
    pub(crate) fn try_enter(&self) -> Option<Pass<'_>> {
        // Counted first, then checked: whoever closes sees this one inside, or
        // this one sees the gate closed (both sides sequentially consistent).
        self.inside.fetch_add(1, Ordering::SeqCst);
        let pass = Pass::Counted(self);
        (!self.is_closed()).then_some(pass)
    }

    /// Enters as worker `worker` (only that worker's thread enters with that
    /// number), unless the gate is closed. With membarrier, without a read-modify-write
    /// or a fence: the closer makes this thread run one instead.
    pub(crate) fn try_enter_worker(&self, worker: usize) -> Option<Pass<'_>> {
        let Some(mark) = self.workers.get(worker) else {
            return self.try_enter();
        };
        mark.add(1);
        if self.asymmetric.load(Ordering::Relaxed) {
            // Only the compiler must keep the mark before the look at `closed`;
            // the closer's membarrier orders them for the CPU.
            std::sync::atomic::compiler_fence(Ordering::SeqCst);
        } else {
            fence(Ordering::SeqCst);
        }
        let pass = Pass::Worker(mark);
        (!self.closed.load(Ordering::Relaxed)).then_some(pass)
    }

    /// Enters through the mark of the worker the caller runs on (a ULT never
    /// leaves its worker), or counted from any other thread.
    pub(crate) fn try_enter_here(&self) -> Option<Pass<'_>> {
        match mpcrs_scheduler::current_worker() {
            Some(worker) => self.try_enter_worker(worker),
            None => self.try_enter(),
        }
    }

    /// Closes the gate and waits until nobody is inside. Not from inside.
    pub(crate) fn close(&self) {
        self.close_now();
        // Every worker now either has its mark visible here or sees the gate
        // closed (the barrier separates its mark from its look at `closed`).
        if !(self.asymmetric.load(Ordering::Relaxed) && barrier_on_every_thread()) {
            fence(Ordering::SeqCst);
        }
        while self.inside.load(Ordering::SeqCst) != 0
            || self
                .workers
                .iter()
                .any(|m| m.0.load(Ordering::Acquire) != 0)
        {
            std::thread::yield_now();
        }
    }

    /// In a process restored from an image: registers for membarrier again (the
    /// image's registration belonged to the process that took it). Called while
    /// the gate is closed, so no worker is entering meanwhile.
    pub(crate) fn renew(&self) {
        self.asymmetric
            .store(register_membarrier(), Ordering::Relaxed);
    }

    /// Closes the gate without waiting (from inside, for good).
    pub(crate) fn close_now(&self) {
        self.closed.store(true, Ordering::SeqCst);
    }

    pub(crate) fn open(&self) {
        self.closed.store(false, Ordering::SeqCst);
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::{Gate, Pass};

    #[test]
    fn closing_waits_for_those_inside_and_keeps_others_out() {
        for gate in [Gate::default(), Gate::with_workers(2)] {
            closing_waits_for(&gate, || gate.try_enter());
        }
        let gate = Gate::with_workers(2);
        closing_waits_for(&gate, || gate.try_enter_worker(1));
        // A worker that is inside twice is inside until it left twice.
        let gate = Gate::with_workers(1);
        let outer = gate.try_enter_worker(0).expect("open");
        drop(gate.try_enter_worker(0).expect("open"));
        closing_waits_for(&gate, move || Some(outer));
    }

    /// `close` returns only once the pass `enter` gives is dropped, and keeps
    /// everyone out until the gate opens again.
    fn closing_waits_for<'a>(gate: &'a Gate, enter: impl FnOnce() -> Option<Pass<'a>>) {
        let pass = enter().expect("open");
        std::thread::scope(|s| {
            let closer = s.spawn(|| gate.close());
            std::thread::sleep(std::time::Duration::from_millis(20));
            assert!(!closer.is_finished(), "close returned with one inside");
            drop(pass);
            closer.join().unwrap();
        });
        assert!(gate.try_enter().is_none());
        assert!(gate.workers.is_empty() || gate.try_enter_worker(0).is_none());
        gate.open();
        assert!(gate.try_enter().is_some());
        assert!(gate.workers.is_empty() || gate.try_enter_worker(0).is_some());
    }
}
