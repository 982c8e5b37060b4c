//! Progress hooks: the network layer registers one per driver; workers poll them
//! between ULTs and while idle.

/// Something that makes communication progress when polled.
pub trait Progress: Send + Sync {
    /// Does a bounded amount of work on behalf of worker `worker`; returns true if
    /// anything happened (which keeps the worker from going to sleep).
    fn poll(&self, worker: usize) -> bool;
}
