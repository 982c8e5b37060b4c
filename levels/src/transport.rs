//! How a level moves data between the processes of a job. The runtime
//! implements it over its fabric (the processes' images go to partners and
//! encoding groups through it); [`crate::memory`] implements it between threads.

use std::io;

/// How a level's work runs where it shares threads with the application.
pub trait Io {
    /// Runs `f`, which makes blocking system calls (file I/O), where it holds
    /// up no thread that runs the application (the runtime: its blocking pool).
    fn blocking(&self, f: &mut dyn FnMut()) {
        f()
    }

    /// Called between pieces of a level's work, so that what else shares the
    /// thread can run (the runtime: a yield of the helper ULT).
    fn pause(&self) {}

    /// Whether the work must stop now (the runtime: the next checkpoint
    /// begins); it then ends with an error of kind `Interrupted`, leaving no
    /// file under its final name.
    fn stopped(&self) -> bool {
        false
    }
}

/// The error of work stopped through [`Io::stopped`].
pub(crate) fn stopped_error() -> io::Error {
    io::Error::new(
        io::ErrorKind::Interrupted,
        "stopped: the next checkpoint began",
    )
}

/// Plain threads: blocking calls in place, no pauses.
pub struct PlainIo;

impl Io for PlainIo {}

/// Point-to-point byte messages between the processes of a job, matched by
/// sender and tag, in order per sender and tag.
pub trait Transport: Io + Send + Sync {
    /// This process's index and the number of processes.
    fn me(&self) -> usize;
    fn processes(&self) -> usize;
    /// Sends `data` to process `to` with `tag`; returns once `data` may be
    /// reused.
    fn send(&self, to: usize, tag: u32, data: &[u8]) -> io::Result<()>;
    /// Receives the next message with `tag` from process `from`, whatever its
    /// length.
    fn receive(&self, from: usize, tag: u32) -> io::Result<Vec<u8>>;
    /// Receives the next message with `tag` from process `from` into `buf`;
    /// returns its length. A message longer than `buf` is an error. Bulk
    /// transfers use it to receive into one reused buffer.
    fn receive_into(&self, from: usize, tag: u32, buf: &mut [u8]) -> io::Result<usize> {
        let m = self.receive(from, tag)?;
        let Some(to) = buf.get_mut(..m.len()) else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "a message of {} bytes from process {from} for a buffer of {}",
                    m.len(),
                    buf.len()
                ),
            ));
        };
        to.copy_from_slice(&m);
        Ok(m.len())
    }
}

/// Tag of the messages of one level's work on one epoch: the work in the top
/// bits, the epoch below (epochs 2^24 apart share tags, never at once).
pub(crate) fn tag(work: u32, epoch: u64) -> u32 {
    debug_assert!(work < 64);
    (work << 24) | (epoch as u32 & 0x00ff_ffff)
}

/// Runs `f` through `io.blocking` and returns what it returned.
pub fn blocking<T>(io: &(impl Io + ?Sized), f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
    let mut f = Some(f);
    let mut out = None;
    io.blocking(&mut || out = f.take().map(|f| f()));
    out.unwrap_or_else(|| Err(io::Error::other("a blocking call did not run")))
}
