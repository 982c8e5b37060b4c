//! A gate threads pass through, which can be closed: closing waits until those
//! inside have left, and keeps new ones out until it opens again. The fabric has
//! two: one for progress rounds (a snapshot must find no thread inside a
//! driver), one for outgoing frames (a checkpoint holds them from the drain
//! until every image is taken).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

#[derive(Default)]
pub(crate) struct Gate {
    closed: AtomicBool,
    inside: AtomicUsize,
}

/// Being inside a [`Gate`]; leaves it when dropped.
pub(crate) struct Pass<'a>(&'a Gate);

impl Drop for Pass<'_> {
    fn drop(&mut self) {
        self.0.inside.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Gate {
    /// Enters, unless the gate is closed.
    pub(crate) fn try_enter(&self) -> Option<Pass<'_>> {
        // Counted first, then checked: whoever closes sees this one inside, or
        // this one sees the gate closed (both sides sequentially consistent).
        self.inside.fetch_add(1, Ordering::SeqCst);
        let pass = Pass(self);
        (!self.is_closed()).then_some(pass)
    }

    /// Closes the gate and waits until nobody is inside. Not from inside.
    pub(crate) fn close(&self) {
        self.close_now();
        while self.inside.load(Ordering::SeqCst) != 0 {
            std::thread::yield_now();
        }
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
    use super::Gate;

    #[test]
    fn closing_waits_for_those_inside_and_keeps_others_out() {
        let gate = Gate::default();
        let pass = gate.try_enter().expect("open");
        std::thread::scope(|s| {
            let closer = s.spawn(|| gate.close());
            std::thread::sleep(std::time::Duration::from_millis(20));
            assert!(!closer.is_finished(), "close returned with one inside");
            drop(pass);
            closer.join().unwrap();
        });
        assert!(gate.try_enter().is_none());
        gate.open();
        assert!(gate.try_enter().is_some());
    }
}
