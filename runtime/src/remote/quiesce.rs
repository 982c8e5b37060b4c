//! The network's part in a checkpoint of a job of several processes: counters
//! that tell when every frame and control message sent has been taken in by its
//! receiver (the drain), the coordination messages of the processes' leaders,
//! closing the shared-memory rail, holding progress still while the image is
//! taken, and joining the job's network again in a process restored from one.

use std::io;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use mpcrs_signaling::ControlKind;

use super::wire::HEADER_BYTES;
use super::{Deferred, Fabric, Joining, Net};

/// Sequence numbers of checkpoints asked from outside (process 0 names them)
/// have this bit; those of `MPIX_Checkpoint` count apart, in every process alike.
pub(crate) const REQUESTED: u64 = 1 << 63;

/// What one process has put on the network and taken from it. Summed over the
/// job, sent equals taken once nothing is in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Traffic {
    pub(crate) frames_sent: u64,
    pub(crate) frames_taken: u64,
    pub(crate) control_sent: u64,
    pub(crate) control_taken: u64,
}

impl Fabric {
    pub(crate) fn processes(&self) -> u32 {
        self.blocks.len() as u32
    }

    /// Number of ranks of the job.
    pub(crate) fn ranks(&self) -> usize {
        self.blocks.iter().map(|b| b.len()).sum()
    }

    /// Number of ranks this process runs.
    pub(crate) fn local_ranks(&self) -> usize {
        self.blocks[self.me as usize].len()
    }

    /// This process's traffic counters. A frame counts as sent before it is
    /// written and as taken once it is acted upon (or held for its turn in this
    /// process's memory), so one in a socket or a ring counts as sent only.
    pub(crate) fn traffic(&self) -> Traffic {
        let frames_taken = self.inbound.iter().map(|r| r.lock().unwrap().taken()).sum();
        let frames_sent = self
            .next_seq
            .iter()
            .map(|s| s.load(Ordering::Acquire))
            .sum();
        let stats = self.net().signaling.stats();
        Traffic {
            frames_sent,
            frames_taken,
            control_sent: stats
                .sent
                .saturating_sub(self.checkpoint_sent.load(Ordering::Acquire)),
            control_taken: self.control_handled.load(Ordering::Acquire),
        }
    }

    /// Sends a checkpoint coordination message to process `to`.
    pub(crate) fn send_checkpoint(
        &self,
        to: u32,
        sequence: u64,
        step: u8,
        counters: Vec<(u32, u64)>,
    ) -> io::Result<()> {
        self.checkpoint_sent.fetch_add(1, Ordering::AcqRel);
        self.net().signaling.send(
            to,
            ControlKind::Checkpoint {
                epoch: sequence,
                step,
                counters,
            },
        )
    }

    /// Waits, driving progress, for a checkpoint message of one of `steps` of checkpoint
    /// `sequence` from `from` (any process: `None`); returns its sender and
    /// counters. `pause` runs between rounds that found nothing (a yield for a
    /// rank, a short sleep for a thread).
    pub(crate) fn wait_checkpoint(
        &self,
        sequence: u64,
        steps: &[u8],
        from: Option<u32>,
        pause: &dyn Fn(),
    ) -> (u32, Vec<(u32, u64)>) {
        let started = Instant::now();
        let mut warned = false;
        loop {
            {
                let mut inbox = self.checkpoint_inbox.lock().unwrap();
                let hit = inbox.iter().position(|c| match &c.kind {
                    ControlKind::Checkpoint { epoch, step: s, .. } => {
                        *epoch == sequence
                            && steps.contains(s)
                            && from.is_none_or(|f| f == c.source)
                    }
                    _ => false,
                });
                if let Some(i) = hit {
                    let c = inbox.remove(i);
                    if let ControlKind::Checkpoint { counters, .. } = c.kind {
                        return (c.source, counters);
                    }
                }
            }
            if !self.progress() {
                pause();
            }
            if !warned && started.elapsed() > Duration::from_secs(60) {
                warned = true;
                eprintln!(
                    "mpcrs: process {}: checkpoint {sequence} has waited a minute for step {steps:?}{}",
                    self.me,
                    from.map(|f| format!(" of process {f}")).unwrap_or_default()
                );
            }
        }
    }

    /// Drops coordination messages of earlier checkpoints of `sequence`'s kind
    /// (those of a checkpoint that failed on the way).
    pub(crate) fn forget_checkpoints_before(&self, sequence: u64) {
        let kind = sequence & REQUESTED;
        self.checkpoint_inbox.lock().unwrap().retain(|c| {
            matches!(c.kind, ControlKind::Checkpoint { epoch, .. }
                if epoch & REQUESTED != kind || epoch >= sequence)
        });
    }

    /// The sequence number of a checkpoint process 0 asked for (its `START`),
    /// taken out of the inbox.
    pub(crate) fn take_start(&self) -> Option<u64> {
        let mut inbox = self.checkpoint_inbox.lock().unwrap();
        let i = inbox.iter().position(|c| {
            matches!(
                c.kind,
                ControlKind::Checkpoint {
                    step: step::START,
                    ..
                }
            )
        })?;
        match inbox.remove(i).kind {
            ControlKind::Checkpoint { epoch, .. } => Some(epoch),
            _ => None,
        }
    }

    /// Closes the gate of outgoing frames and waits for those inside to leave.
    /// From then on nothing leaves this process but control messages: deferred
    /// answers stay queued (memory, so part of an image) and ranks that send
    /// wait at the gate.
    pub(crate) fn hold(&self) {
        self.send_gate.close();
    }

    /// Opens the gate of outgoing frames again.
    pub(crate) fn release(&self) {
        self.send_gate.open();
    }

    /// Makes sure every queued answer has an endpoint to leave by: answers are
    /// sent from progress, which cannot wait for a connection, and the queue may
    /// name processes whose endpoints a checkpoint closed or a restart lost.
    /// Called with the gate held, so nobody else takes from the queue.
    pub(crate) fn reconnect_deferred(&self, progress: &dyn Fn()) {
        let mut queued = Vec::new();
        while let Some(d) = self.deferred.pop() {
            queued.push(d);
        }
        let net = self.net();
        let mut done = std::collections::HashSet::new();
        for d in &queued {
            let (to, size) = match d {
                Deferred::Frame { to, .. } => (*to, 0),
                Deferred::Data { to, .. } => (*to, self.max_data),
            };
            if done.insert((to, size)) {
                net.links
                    .ensure(to, HEADER_BYTES + size, &net.signaling, progress)
                    .unwrap_or_else(|e| self.fail(e));
            }
        }
        for d in queued {
            self.deferred.push(d);
        }
    }

    /// Closes the high-speed rails (shared memory): their rings are not in
    /// images. Endpoints are made again on demand. Returns the rings closed.
    pub(crate) fn close_high_speed_rails(&self) -> usize {
        self.net().links.close_high_speed()
    }

    /// Stops network progress and waits for the rounds under way: a snapshot must
    /// not find a thread inside a driver.
    pub(crate) fn suspend(&self) {
        self.progress_gate.close();
    }

    pub(crate) fn resume(&self) {
        self.progress_gate.open();
    }

    /// In a process restored from an image: joins the network of the new run
    /// (the launcher, addresses and rings are new; sockets and rings of the
    /// image's run are gone) and resumes progress. What the image holds of the
    /// old network is left as it is: its descriptors may be reused by now.
    pub(crate) fn rejoin(&self, j: &Joining) -> Result<(), String> {
        let net = Net::join(j)?;
        // Control messages are counted per run (the new signaling network counts
        // from zero); frames go on in sequence across runs.
        self.checkpoint_sent.store(0, Ordering::Release);
        self.control_handled.store(0, Ordering::Release);
        self.replace_net(net);
        self.generation.fetch_add(1, Ordering::AcqRel);
        self.progress_gate.renew();
        self.send_gate.renew();
        self.checkpoint_inbox.lock().unwrap().clear();
        self.finishing.store(false, Ordering::Release);
        self.net().open_data_path();
        self.resume();
        Ok(())
    }
}

/// The coordination message of a checkpoint (the `step` of
/// [`ControlKind::Checkpoint`]).
pub(crate) mod step {
    /// Process 0 to all: a checkpoint asked from outside begins.
    pub(crate) const START: u8 = 7;
    /// Leader to process 0: this process's traffic counters.
    pub(crate) const COUNT: u8 = 1;
    /// Process 0 to all: count again.
    pub(crate) const AGAIN: u8 = 2;
    /// Process 0 to all: nothing is in flight; the epoch number.
    pub(crate) const DRAINED: u8 = 3;
    /// Leader to process 0: the snapshot is taken (or failed).
    pub(crate) const SNAPPED: u8 = 4;
    /// Process 0 to all: every snapshot is taken, ranks may go on.
    pub(crate) const GO: u8 = 5;
    /// To process 0: this process's image is durable (or failed), with figures.
    pub(crate) const DURABLE: u8 = 6;
}
