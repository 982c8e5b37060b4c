//! A message on its way, in the words both the matching of this process and the
//! fabric between processes use: what a send hands over, how it completes, and
//! the size up to which it travels eagerly.

/// Unexpected messages up to this size are copied at send time so the sender is
/// free at once; larger ones wait in the sender's buffer for a single copy.
pub const EAGER_LIMIT: usize = 32 * 1024;

/// How a send completes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SendMode {
    /// Completes when the data is delivered or staged.
    Standard,
    /// Completes only once a receive has matched (MPI_Ssend).
    Synchronous,
}

/// A message being sent: from communicator rank `source`, with `tag`, `len`
/// bytes at `buf`. Passed whole through the layers of a send (rank, mailbox or
/// network).
#[derive(Clone, Copy)]
pub(crate) struct Outgoing {
    pub(crate) source: i32,
    pub(crate) tag: i32,
    pub(crate) buf: *const u8,
    pub(crate) len: usize,
    pub(crate) mode: SendMode,
}
