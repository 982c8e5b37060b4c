//! Messages from other processes meeting the receives of this one: the
//! fabric hands each message, in its sender's order, to the communicator it is
//! for ([`Endpoint`]), which matches it against the destination rank's posted
//! receives or queues it as unexpected, as a send of this process would.

use super::mailbox::{Mailbox, Payload, PostedRecv, Unexpected};
use crate::comm::CommShared;
use crate::remote::{Arrival, Endpoint, Fabric, Finish, InlineReceiver};
use crate::request::Status;

impl Endpoint for CommShared {
    fn withdraw(&self, dest: u32, from: u32, id: u64) -> bool {
        let Some(mailbox) = self.mailboxes.get(dest as usize) else {
            return false;
        };
        mailbox
            .lock()
            .withdraw_unexpected(|p| matches!(p, Payload::Remote(inc) if inc.is(from, id)))
    }

    fn arrive(&self, msg: Arrival<'_>) {
        let (dest, source, tag) = (msg.dest(), msg.source(), msg.tag());
        let Some(mailbox) = self.mailboxes.get(dest as usize) else {
            panic!(
                "message for rank {dest} of a communicator of {}",
                self.mailboxes.len()
            );
        };
        let fabric = Fabric::expect();
        let mut q = mailbox.lock();
        if let Some(fast) = mailbox.claim_fast(&q, source, tag) {
            if msg.is_eager() {
                // Small: copied under the lock, as a sender of this process does.
                // SAFETY: the receiver keeps its buffer valid until the status is
                // published (inline receive contract).
                let status = unsafe { fabric.receive_now(&msg, fast.buf, fast.capacity) };
                mailbox.hand_off(q, status);
                return;
            }
            drop(q);
            let inline: *const dyn InlineReceiver = mailbox as *const Mailbox;
            // SAFETY: as above, until `finish_inline`.
            unsafe { fabric.receive(msg.keep(), fast.buf, fast.capacity, Finish::Inline(inline)) };
            return;
        }
        if let Some(recv) = q.take_posted(source, tag) {
            drop(q);
            let PostedRecv {
                buf,
                capacity,
                done,
                ..
            } = recv;
            if msg.is_eager() {
                // SAFETY: a posted receive's buffer is valid for `capacity` bytes
                // until its completion is set (PostedRecv contract).
                let status = unsafe { fabric.receive_now(&msg, buf, capacity) };
                done.complete(status);
                return;
            }
            // SAFETY: as above.
            unsafe { fabric.receive(msg.keep(), buf, capacity, Finish::Request(done)) };
            return;
        }
        q.unexpected.push_back(Unexpected {
            source,
            tag,
            payload: Payload::Remote(msg.keep()),
        });
        drop(q);
        mailbox.arrivals.notify_all();
    }
}

impl InlineReceiver for Mailbox {
    fn finish_inline(&self, status: Status) {
        self.finish_fast(status);
    }
}
