//! The network's part in a checkpoint of a job of several processes: counters
//! that tell when every frame and control message sent has been taken in by its
//! receiver (the drain), the coordination messages of the processes' leaders,
//! closing the shared-memory rail, holding progress still while the image is
//! taken, and joining the job's network again in a process restored from one.

use std::io;
use std::sync::atomic::Ordering;

use mpcrs_signaling::ControlKind;

use super::wire::HEADER_BYTES;
use super::{Deferred, Fabric, Joining, Net};
use crate::checkpoint::network::{JobNetwork, Message, Traffic};
use crate::config::JobConfig;

impl JobNetwork for Fabric {
    fn me(&self) -> u32 {
        self.me
    }

    fn processes(&self) -> u32 {
        self.blocks.len() as u32
    }

    /// Number of ranks of the job.
    fn ranks(&self) -> usize {
        self.blocks.iter().map(|b| b.len()).sum()
    }

    /// Number of ranks this process runs.
    fn local_ranks(&self) -> usize {
        self.blocks[self.me as usize].len()
    }

    /// This process's traffic counters. A frame counts as sent before it is
    /// written and as taken once it is acted upon (or held for its turn in this
    /// process's memory), so one in a socket or a ring counts as sent only.
    fn traffic(&self) -> Traffic {
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
    fn send_message(
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

    fn take_message(&self, wanted: &dyn Fn(u64, u8, u32) -> bool) -> Option<Message> {
        let mut inbox = self.checkpoint_inbox.lock().unwrap();
        let i = inbox.iter().position(|c| match &c.kind {
            ControlKind::Checkpoint { epoch, step, .. } => wanted(*epoch, *step, c.source),
            _ => false,
        })?;
        let c = inbox.remove(i);
        match c.kind {
            ControlKind::Checkpoint {
                epoch, counters, ..
            } => Some(Message {
                from: c.source,
                sequence: epoch,
                counters,
            }),
            _ => None,
        }
    }

    fn retain_messages(&self, keep: &dyn Fn(u64, u8, u32) -> bool) {
        self.checkpoint_inbox
            .lock()
            .unwrap()
            .retain(|c| match &c.kind {
                ControlKind::Checkpoint { epoch, step, .. } => keep(*epoch, *step, c.source),
                _ => false,
            });
    }

    fn progress(&self) -> bool {
        Fabric::progress(self)
    }

    /// Closes the gate of outgoing frames and waits for those inside to leave.
    /// From then on ranks that send wait at the gate; the window agents' frames
    /// and the answers to messages under way (`flush_deferred`) leave until the
    /// agents are held too, and then stay queued (memory, so part of an image):
    /// nothing but control messages leaves.
    fn hold(&self) {
        self.send_gate.close();
    }

    /// Closes the gate of the window agents' frames and waits for those
    /// inside to leave.
    fn hold_agents(&self) {
        self.agent_gate.close();
    }

    /// Opens the gates of outgoing frames again.
    fn release(&self) {
        self.agent_gate.open();
        self.send_gate.open();
    }

    /// Makes sure every queued answer has an endpoint to leave by: answers are
    /// sent from progress, which cannot wait for a connection, and the queue may
    /// name processes whose endpoints a checkpoint closed or a restart lost.
    /// Called with the gate held, so nobody else takes from the queue.
    fn reconnect_deferred(&self, progress: &dyn Fn()) {
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
    fn close_high_speed_rails(&self) -> usize {
        self.net().links.close_high_speed()
    }

    /// Stops network progress and waits for the rounds under way: a snapshot must
    /// not find a thread inside a driver.
    fn suspend(&self) {
        self.progress_gate.close();
    }

    fn resume(&self) {
        self.progress_gate.open();
    }

    /// In a process restored from an image: joins the network of the new run
    /// (the launcher, addresses and rings are new; sockets and rings of the
    /// image's run are gone) and resumes progress. What the image holds of the
    /// old network is left as it is: its descriptors may be reused by now.
    fn rejoin(&self, cfg: &JobConfig, var: &dyn Fn(&str) -> Option<String>) -> Result<(), String> {
        let net = Net::join(&Joining {
            cfg,
            var,
            sched: &self.sched,
        })?;
        // Control messages are counted per run (the new signaling network counts
        // from zero); frames go on in sequence across runs.
        self.checkpoint_sent.store(0, Ordering::Release);
        self.control_handled.store(0, Ordering::Release);
        self.replace_net(net);
        self.generation.fetch_add(1, Ordering::AcqRel);
        self.progress_gate.renew();
        self.send_gate.renew();
        self.agent_gate.renew();
        self.checkpoint_inbox.lock().unwrap().clear();
        self.finishing.store(false, Ordering::Release);
        self.net().open_data_path();
        self.resume();
        Ok(())
    }
}
