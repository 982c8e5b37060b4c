//! Objects a rank's hot calls find by handle index without taking the lock of
//! its tables: MPI_Put or MPI_Win_flush on a window cost a few tens of
//! nanoseconds, and a lock, an unlock and a reference count (each a locked
//! instruction, and the unlock a check for parked waiters) were most of that.
//!
//! The table entry owns the object; its index publishes a pointer when the
//! entry is made and withdraws it before the entry goes. A reader gets a
//! reference for the length of one MPI call: MPI makes freeing an object
//! erroneous while another thread of the rank calls on it (a window must have
//! no epoch open when it is freed, MPI-3.1 11.2.5), so the object outlives
//! every call a correct program makes on it.

use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::OnceLock;

/// Slots per chunk; chunks are made on first use, so a rank that never makes
/// the kind of object pays for an array of empty `OnceLock`s only.
const CHUNK: usize = 64;
const CHUNKS: usize = 64;

/// Pointers by handle index, for the first `CHUNK * CHUNKS` indices (later
/// ones are found through the table).
pub(crate) struct Published<T> {
    chunks: [OnceLock<Box<[AtomicPtr<T>; CHUNK]>>; CHUNKS],
}

impl<T> Default for Published<T> {
    fn default() -> Self {
        Published {
            chunks: std::array::from_fn(|_| OnceLock::new()),
        }
    }
}

impl<T> Published<T> {
    fn slot(&self, i: usize, make: bool) -> Option<&AtomicPtr<T>> {
        let chunk = self.chunks.get(i / CHUNK)?;
        let chunk = if make {
            chunk.get_or_init(|| Box::new(std::array::from_fn(|_| AtomicPtr::default())))
        } else {
            chunk.get()?
        };
        Some(&chunk[i % CHUNK])
    }

    /// Publishes the object the entry at `i` owns.
    pub(crate) fn publish(&self, i: usize, object: &T) {
        if let Some(s) = self.slot(i, true) {
            s.store(object as *const T as *mut T, Ordering::Release);
        }
    }

    /// Withdraws index `i`, before its entry drops the object.
    pub(crate) fn withdraw(&self, i: usize) {
        if let Some(s) = self.slot(i, false) {
            s.store(std::ptr::null_mut(), Ordering::Release);
        }
    }

    /// The object at `i`, if published.
    pub(crate) fn get(&self, i: usize) -> Option<&'static T> {
        let p = self.slot(i, false)?.load(Ordering::Acquire);
        // SAFETY: a non-null slot points to an object its table entry owns
        // and withdraws before dropping; only a free of the object during this
        // call, which MPI makes erroneous (see the module), could end it.
        unsafe { p.as_ref() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn publishes_and_withdraws() {
        let index = Published::<u32>::default();
        let (a, b) = (Box::new(7u32), Box::new(9u32));
        assert!(index.get(3).is_none());
        index.publish(3, &a);
        index.publish(CHUNK * 5 + 1, &b);
        assert_eq!(index.get(3), Some(&7));
        assert_eq!(index.get(CHUNK * 5 + 1), Some(&9));
        index.withdraw(3);
        assert!(index.get(3).is_none());
        // Beyond the published range: not an error, just not found here.
        index.publish(CHUNK * CHUNKS, &a);
        assert!(index.get(CHUNK * CHUNKS).is_none());
    }
}
