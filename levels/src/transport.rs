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
}
