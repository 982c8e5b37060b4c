//! The agent of a window member: a ULT acting for the member's rank that
//! serves what origins in other processes ask of its memory, and every
//! origin's lock requests. It runs from the window's creation to its free,
//! parked in a receive on the request communicator while nothing comes, so
//! operations progress while the member computes or waits elsewhere (passive
//! target) as long as its worker gets to run it.
//!
//! Requests of one origin are served in the order they were sent (MPI's
//! ordering of messages between two ranks on one communicator), so an
//! acknowledgement of a flush or an unlock tells the origin that every
//! earlier operation is done. An operation that does not fit the target's
//! window (dynamic windows: no region attached there) is dropped and reported
//! to its origin in the next acknowledgement.

use std::collections::HashMap;
use std::sync::Arc;

use super::locks::LockTable;
use super::memory::Target;
use super::wire::{self, Request, Verb};
use crate::comm::Communicator;
use crate::error::ErrorClass;
use crate::raw::{self, Completer};
use crate::ANY_SOURCE;

const CALL: &str = "MPI_Win (target agent)";

pub(crate) struct Agent {
    pub(crate) requests: Arc<Communicator>,
    pub(crate) replies: Arc<Communicator>,
    pub(crate) shared: Arc<super::memory::Shared>,
    pub(crate) rank: usize,
    pub(crate) stopped: Completer,
}

impl Agent {
    fn target(&self) -> &Target {
        self.shared
            .target(self.rank)
            .expect("a member exposes its memory before its agent starts")
    }

    /// Serves requests until its own rank sends `Stop`.
    pub(crate) fn serve(self) {
        // Its answers may leave while this process waits in a checkpoint
        // for the others (remote/quiesce.rs).
        crate::process::mark_agent();
        let mut locks = LockTable::default();
        // Errors to report to each origin at its next acknowledgement.
        let mut errors: HashMap<i32, String> = HashMap::new();
        loop {
            let msg = raw::mprobe(&self.requests, CALL, ANY_SOURCE, wire::HEADER, true)
                .ok()
                .flatten()
                .expect("a blocking matched probe returns a message");
            let st = msg.status();
            let mut buf = vec![0u8; st.bytes];
            // SAFETY: `buf` holds the message's bytes.
            unsafe { msg.receive(buf.as_mut_ptr(), buf.len()) };
            let origin = st.source;
            let req = match Request::decode(&buf) {
                Ok(r) => r,
                Err(why) => {
                    // Only this runtime's origins send here: a bug, not input.
                    eprintln!(
                        "mpcrs: window agent of rank {}: malformed request from rank {origin}: {why}",
                        self.requests.world_rank()
                    );
                    crate::abort_job(crate::FATAL_EXIT_CODE);
                }
            };
            match req.verb {
                Verb::Stop => break,
                Verb::Flush => self.acknowledge(origin, req.reply_tag, errors.remove(&origin)),
                Verb::LockShared | Verb::LockExclusive => {
                    let exclusive = req.verb == Verb::LockExclusive;
                    if locks.request(origin, exclusive, req.reply_tag) {
                        self.acknowledge(origin, req.reply_tag, None);
                    }
                }
                Verb::Unlock => {
                    let (granted, held) = locks.release(origin);
                    let mut error = errors.remove(&origin);
                    if !held {
                        error.get_or_insert_with(|| {
                            format!("rank {origin} unlocked a lock it did not hold")
                        });
                    }
                    self.acknowledge(origin, req.reply_tag, error);
                    for (o, tag) in granted {
                        self.acknowledge(o, tag, None);
                    }
                }
                _ => {
                    if let Err(why) = self.operate(origin, &req) {
                        errors.entry(origin).or_insert(why);
                    }
                }
            }
        }
        self.stopped.complete(crate::Status::empty());
    }

    /// A data operation: receives its data, applies it, sends its result.
    fn operate(&self, origin: i32, req: &Request) -> Result<(), String> {
        let t = self.target();
        let fits = t.check(req.at, &req.blocks);
        let len = req.len as usize;
        // One block of a put that fits: the data lands in the window itself.
        if let (Verb::Put, Ok(()), [(o, _)]) = (req.verb, &fits, req.blocks.as_slice()) {
            // SAFETY: the block was checked to lie in the exposed memory.
            unsafe { self.receive_data(origin, t.addr(req.at, *o), len) };
            return Ok(());
        }
        let mut data = vec![0u8; if req.verb.carries_data() { len } else { 0 }];
        if req.verb.carries_data() {
            // SAFETY: `data` holds `len` bytes.
            unsafe { self.receive_data(origin, data.as_mut_ptr(), len) };
        }
        let op_result = match req.verb {
            Verb::Get => req.len as usize,
            Verb::GetAccumulate => len,
            Verb::CompareAndSwap => len / 2,
            _ => 0,
        };
        let mut result = vec![0u8; op_result];
        let answers = matches!(
            req.verb,
            Verb::Get | Verb::GetAccumulate | Verb::CompareAndSwap
        );
        if let Err(why) = fits {
            // The origin waits for a result all the same: send zeros.
            if answers {
                self.send_result(origin, &result);
            }
            return Err(why);
        }
        match req.verb {
            Verb::Put => {
                // SAFETY: checked layout; `data` holds its bytes.
                unsafe { t.scatter(req.at, &req.blocks, &data) }
            }
            Verb::Get => {
                if let [(o, _)] = req.blocks.as_slice() {
                    // SAFETY: checked block inside the exposed memory.
                    let from = unsafe { std::slice::from_raw_parts(t.addr(req.at, *o), len) };
                    self.send_result(origin, from);
                    return Ok(());
                }
                // SAFETY: checked layout.
                unsafe { t.gather(req.at, &req.blocks, &mut result) }
            }
            Verb::Accumulate | Verb::GetAccumulate => {
                let op = wire::op_of_code(req.op).ok_or("unknown accumulate operation")?;
                let old = (req.verb == Verb::GetAccumulate).then_some(&mut result[..]);
                // SAFETY: checked layout; `data` holds whole elements.
                unsafe { t.accumulate(req.at, &req.blocks, &data, req.kind, &op, old) }
            }
            Verb::CompareAndSwap => {
                let (new, compare) = data.split_at(len / 2);
                // SAFETY: the element was checked.
                unsafe { t.compare_and_swap(req.at, new, compare, &mut result) }
            }
            _ => unreachable!("control requests are served in serve()"),
        }
        if answers {
            self.send_result(origin, &result);
        }
        Ok(())
    }

    /// # Safety
    /// `into` valid for `len` bytes.
    unsafe fn receive_data(&self, origin: i32, into: *mut u8, len: usize) {
        // SAFETY: forwarded.
        let _ = unsafe { raw::recv(&self.requests, CALL, into, len, origin, wire::DATA) };
    }

    fn send_result(&self, origin: i32, bytes: &[u8]) {
        send(&self.replies, bytes, origin, wire::RESULT);
    }

    /// An acknowledgement or grant: a class (0 for success) and what went wrong.
    fn acknowledge(&self, origin: i32, tag: i32, error: Option<String>) {
        let mut b = Vec::new();
        match error {
            None => b.extend_from_slice(&0i32.to_le_bytes()),
            Some(why) => {
                b.extend_from_slice(&(ErrorClass::RmaRange as i32).to_le_bytes());
                b.extend_from_slice(why.as_bytes());
            }
        }
        send(&self.replies, &b, origin, tag);
    }
}

/// A blocking send of `bytes` (waits until the receiver has them or they are
/// buffered).
pub(crate) fn send(comm: &Communicator, bytes: &[u8], to: i32, tag: i32) {
    // SAFETY: `bytes` lives until the send completed (waited here).
    let r = unsafe { raw::isend(comm, CALL, bytes.as_ptr(), bytes.len(), to, tag, false) };
    if let Ok(r) = r {
        r.wait();
    }
}

/// Reads an acknowledgement: `Ok` or the class and message it carries.
pub(crate) fn acknowledged(bytes: &[u8]) -> Result<(), (ErrorClass, String)> {
    let class = bytes
        .get(..4)
        .map_or(0, |b| i32::from_le_bytes(b.try_into().unwrap()));
    if class == 0 {
        return Ok(());
    }
    let why = String::from_utf8_lossy(&bytes[4..]).into_owned();
    Err((ErrorClass::RmaRange, why))
}
