//! How a level moves data between the processes of a job. The runtime
//! implements it over its fabric (the processes' images go to partners and
//! encoding groups through it); [`crate::memory`] implements it between threads.

use std::io;

/// Point-to-point byte messages between the processes of a job, matched by
/// sender and tag, in order per sender and tag.
pub trait Transport: Send + Sync {
    /// This process's index and the number of processes.
    fn me(&self) -> usize;
    fn processes(&self) -> usize;
    /// Sends `data` to process `to` with `tag`; returns once `data` may be
    /// reused.
    fn send(&self, to: usize, tag: u32, data: &[u8]) -> io::Result<()>;
    /// Receives the next message with `tag` from process `from`, whatever its
    /// length.
    fn receive(&self, from: usize, tag: u32) -> io::Result<Vec<u8>>;

    /// Runs `f`, which makes blocking system calls (file I/O), where it holds
    /// up no thread that runs the application (the runtime: its blocking pool).
    fn blocking(&self, f: &mut dyn FnMut()) {
        f()
    }

    /// Called between pieces of a level's work, so that what else shares the
    /// thread can run (the runtime: a yield of the helper ULT).
    fn pause(&self) {}
}

/// Tag of the messages of one level's work on one epoch: the work in the top
/// bits, the epoch below (epochs 2^24 apart share tags, never at once).
pub(crate) fn tag(work: u32, epoch: u64) -> u32 {
    debug_assert!(work < 64);
    (work << 24) | (epoch as u32 & 0x00ff_ffff)
}
