//! What checkpoint coordination needs of the inter-process fabric, and nothing
//! more: the job's shape, progress, traffic counters (the drain), coordination
//! messages between the processes' leaders, the gates that hold sends and
//! progress still around a snapshot, and joining a new run's network after a
//! restore. The fabric implements it (remote/quiesce.rs); the runtime hands it
//! over when the process joins a job of several processes ([`set`]).
//!
//! The meaning of the messages (steps, sequence numbers) is the protocol's
//! (across.rs): the fabric only carries and queues them.

use std::io;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::config::JobConfig;

/// What one process has put on the network and taken from it. Summed over the
/// job, sent equals taken once nothing is in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Traffic {
    pub(crate) frames_sent: u64,
    pub(crate) frames_taken: u64,
    pub(crate) control_sent: u64,
    pub(crate) control_taken: u64,
}

/// A coordination message of checkpoint `sequence` from process `from`, with
/// its counters.
pub(crate) struct Message {
    pub(crate) from: u32,
    pub(crate) sequence: u64,
    pub(crate) counters: Vec<(u32, u64)>,
}

/// The fabric as checkpoint coordination sees it.
pub(crate) trait JobNetwork: Sync {
    /// This process's index, the job's processes, ranks, and ranks here.
    fn me(&self) -> u32;
    fn processes(&self) -> u32;
    fn ranks(&self) -> usize;
    fn local_ranks(&self) -> usize;

    /// One round of network progress; whether anything moved.
    fn progress(&self) -> bool;
    /// This process's traffic counters. A frame counts as sent before it is
    /// written and as taken once it is acted upon (or held for its turn in this
    /// process's memory).
    fn traffic(&self) -> Traffic;

    /// Sends a coordination message to process `to` (not counted as traffic).
    fn send_message(
        &self,
        to: u32,
        sequence: u64,
        step: u8,
        counters: Vec<(u32, u64)>,
    ) -> io::Result<()>;
    /// Takes the first coordination message received that `wanted` accepts
    /// (given sequence, step and sender) out of the inbox.
    fn take_message(&self, wanted: &dyn Fn(u64, u8, u32) -> bool) -> Option<Message>;
    /// Drops the coordination messages received that `keep` refuses.
    fn retain_messages(&self, keep: &dyn Fn(u64, u8, u32) -> bool);

    /// Closes the gate of outgoing frames and waits for those inside to leave:
    /// ranks that send wait at the gate, answers stay queued in memory.
    fn hold(&self);
    /// Closes the gate of the window agents' frames (they answer ranks of
    /// other processes until every process holds) and waits for those inside.
    fn hold_agents(&self);
    /// Opens both gates again.
    fn release(&self);
    /// Makes sure every queued answer has an endpoint to leave by (with the
    /// gate held); `progress` runs while connections are made.
    fn reconnect_deferred(&self, progress: &dyn Fn());
    /// Closes the rails whose state is not in images (shared memory); returns
    /// how many endpoints it closed.
    fn close_high_speed_rails(&self) -> usize;
    /// Stops network progress and waits for the rounds under way; [`resume`]
    /// starts it again.
    ///
    /// [`resume`]: JobNetwork::resume
    fn suspend(&self);
    fn resume(&self);
    /// In a process restored from an image: joins the new run's network as
    /// `cfg` and `var` (the restorer's environment) say, and resumes progress.
    fn rejoin(&self, cfg: &JobConfig, var: &dyn Fn(&str) -> Option<String>) -> Result<(), String>;
}

static NETWORK: OnceLock<&'static dyn JobNetwork> = OnceLock::new();

/// Hands over the network of this process's job (once, when it joins).
pub(crate) fn set(network: &'static dyn JobNetwork) {
    let _ = NETWORK.set(network);
}

/// The network of a job of several processes; `None` in a job of one.
pub(crate) fn get() -> Option<&'static dyn JobNetwork> {
    NETWORK.get().copied()
}

/// The network, in code that runs only in a job of several processes.
pub(crate) fn expect() -> &'static dyn JobNetwork {
    get().expect("the checkpoint of a job of several processes runs over its network")
}

/// A network failure during a checkpoint ends the job: the processes could
/// no longer agree on an epoch.
pub(crate) fn fail(network: &dyn JobNetwork, e: io::Error) -> ! {
    mpcrs_settings::report!(
        error,
        "mpcrs: process {}: checkpoint: network: {e}",
        network.me()
    );
    crate::process::abort_job(1)
}

/// Waits, driving progress, for a message of one of `steps` of checkpoint
/// `sequence` from `from` (any process: `None`); returns its sender and
/// counters. `pause` runs between rounds that found nothing (a short sleep).
pub(crate) fn wait_message(
    network: &dyn JobNetwork,
    sequence: u64,
    steps: &[u8],
    from: Option<u32>,
    pause: &dyn Fn(),
) -> (u32, Vec<(u32, u64)>) {
    let started = Instant::now();
    let mut warned = false;
    let wanted = |seq: u64, step: u8, sender: u32| {
        seq == sequence && steps.contains(&step) && from.is_none_or(|f| f == sender)
    };
    loop {
        if let Some(m) = network.take_message(&wanted) {
            return (m.from, m.counters);
        }
        if !network.progress() {
            pause();
        }
        if !warned && started.elapsed() > Duration::from_secs(60) {
            warned = true;
            mpcrs_settings::report!(
                warn,
                "mpcrs: process {}: checkpoint {sequence} has waited a minute for step {steps:?}{}",
                network.me(),
                from.map(|f| format!(" of process {f}")).unwrap_or_default()
            );
        }
    }
}
