//! The shared file pointer (MPI-3.1 13.4.4): one counter of etypes kept by
//! the file's rank 0 in a window of its own, moved by fetch-and-add under a
//! shared lock: ranks of rank 0's process reach it with an atomic access,
//! others through its agent, with the rails' ordering and the checkpoint
//! protocol of every window.

use mpcrs::raw::{Memory, Window};
use mpcrs::{Communicator, Kind, Op, Result};

pub(crate) struct SharedPointer {
    window: Window,
}

const CALL: &str = "MPI_File (shared file pointer)";

impl SharedPointer {
    /// Makes the counter, starting at `start` (collective over `comm`).
    pub(crate) fn create(comm: &Communicator, start: u64) -> Result<SharedPointer> {
        let size = if comm.rank() == 0 { 8 } else { 0 };
        let window = Window::create(comm, CALL, Memory::Allocate { size }, 8)?;
        if comm.rank() == 0 {
            // SAFETY: rank 0's window is 8 bytes of its own, aligned by the
            // allocation, and no rank accesses it before creation returns
            // everywhere (the barrier below).
            unsafe { window.base().cast::<u64>().write(start) };
        }
        mpcrs::raw::barrier(comm);
        Ok(SharedPointer { window })
    }

    /// Adds `n` and returns the value before.
    pub(crate) fn fetch_add(&self, n: u64) -> Result<u64> {
        self.update(n, &Op::Sum, false)
    }

    /// Sets the counter to `v` and returns the value before.
    pub(crate) fn set(&self, v: u64) -> Result<u64> {
        self.update(v, &Op::Replace, true)
    }

    fn update(&self, v: u64, op: &Op, exclusive: bool) -> Result<u64> {
        let w = &self.window;
        let mut old = 0u64;
        w.lock(CALL, exclusive, 0, 0)?;
        // SAFETY: `v` and `old` live until the unlock below completes the
        // operation; the block is rank 0's 8 bytes.
        let r = unsafe {
            w.accumulate(
                CALL,
                (&v as *const u64).cast(),
                None,
                Kind::U64,
                8,
                op,
                0,
                0,
                &[(0, 8)],
                Some(((&mut old as *mut u64).cast(), None)),
            )
        };
        let unlocked = w.unlock(CALL, 0);
        r?;
        unlocked?;
        Ok(old)
    }

    /// Frees the window (collective).
    pub(crate) fn free(self) -> Result<()> {
        self.window.free(CALL).map_err(|b| b.1)
    }
}
