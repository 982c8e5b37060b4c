//! ULT-aware mutex: contended lockers park instead of blocking their worker.

use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};

use super::WaitList;

pub struct Mutex<T: ?Sized> {
    locked: AtomicBool,
    waiters: WaitList,
    value: UnsafeCell<T>,
}

// SAFETY: the lock gives exclusive access to `value`; sending the mutex sends T.
unsafe impl<T: ?Sized + Send> Send for Mutex<T> {}
// SAFETY: only the lock holder reaches `value`, so sharing needs only T: Send.
unsafe impl<T: ?Sized + Send> Sync for Mutex<T> {}

impl<T> Mutex<T> {
    pub const fn new(value: T) -> Mutex<T> {
        Mutex {
            locked: AtomicBool::new(false),
            waiters: WaitList::new(),
            value: UnsafeCell::new(value),
        }
    }

    pub fn into_inner(self) -> T {
        self.value.into_inner()
    }
}

impl<T: ?Sized> Mutex<T> {
    pub fn try_lock(&self) -> Option<MutexGuard<'_, T>> {
        self.locked
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .ok()
            .map(|_| MutexGuard { mutex: self })
    }

    pub fn lock(&self) -> MutexGuard<'_, T> {
        if let Some(g) = self.try_lock() {
            return g;
        }
        let mut guard = None;
        self.waiters.wait_until(|| {
            guard = self.try_lock();
            guard.is_some()
        });
        guard.expect("wait_until returned without the lock")
    }

    pub(crate) fn unlock(&self) {
        self.locked.store(false, Ordering::Release);
        self.waiters.notify_one();
    }
}

pub struct MutexGuard<'a, T: ?Sized> {
    pub(crate) mutex: &'a Mutex<T>,
}

impl<T: ?Sized> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard proves the lock is held.
        unsafe { &*self.mutex.value.get() }
    }
}

impl<T: ?Sized> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard proves the lock is held, and `&mut self` is unique.
        unsafe { &mut *self.mutex.value.get() }
    }
}

impl<T: ?Sized> Drop for MutexGuard<'_, T> {
    fn drop(&mut self) {
        self.mutex.unlock();
    }
}
