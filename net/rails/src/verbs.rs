//! The ibverbs driver: reliable-connection queue pairs on an RDMA device, built
//! only with the cargo feature `ibverbs` (it links the system's libibverbs).
//!
//! Untested without an RDMA device: the machines mpcrs is developed and tested on
//! have none, so CI compiles this driver and checks that the absence of a device is
//! reported cleanly, but never moves bytes through it.
//!
//! Frames are cut into `CHUNK`-byte sends; the first chunk carries the frame's
//! length. A reliable connection keeps them in order, and the receiver re-posts
//! every receive slot as soon as it has copied it out. Senders rely on the
//! device's receiver-not-ready retry (set to "retry forever") when every slot of
//! the peer is in use.

use std::io;

/// Why the ibverbs rail cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum VerbsError {
    #[error(
        "this build of mpcrs has no ibverbs support (rebuild with `--features mpcrs-rails/ibverbs`)"
    )]
    NotBuilt,
    #[error("no RDMA device: {0}")]
    NoDevice(String),
    #[error("RDMA device {device}: {what}: {source}")]
    Device {
        device: String,
        what: &'static str,
        source: io::Error,
    },
    #[error("malformed ibverbs endpoint address ({0} bytes)")]
    BadAddress(usize),
    #[error("no ibverbs queue pair to process {0}")]
    NotConnected(u32),
    #[error(
        "RDMA device {device}: work completion failed with status {status} (vendor error {vendor})"
    )]
    Completion {
        device: String,
        status: u32,
        vendor: u32,
    },
}

/// The RDMA devices of this machine, by name; `NoDevice` when there are none.
pub fn device_names() -> Result<Vec<String>, VerbsError> {
    imp::device_names()
}

#[cfg(feature = "ibverbs")]
pub use imp::{PendingEndpoint, VerbsEndpoint, VerbsRail};

/// Payload bytes per RDMA send; frames longer than this go out in several.
pub const CHUNK: usize = 64 * 1024;

#[cfg(not(feature = "ibverbs"))]
mod imp {
    use super::VerbsError;

    pub fn device_names() -> Result<Vec<String>, VerbsError> {
        Err(VerbsError::NotBuilt)
    }
}

#[cfg(feature = "ibverbs")]
mod imp {
    use super::{VerbsError, CHUNK};
    use ibverbs::{CompletionQueue, Context, MemoryRegion, ProtectionDomain, QueuePair};
    use std::collections::VecDeque;
    use std::io;

    /// Receive slots posted per endpoint.
    const RECV_SLOTS: usize = 16;
    /// Length prefix of a frame's first chunk.
    const HEADER: usize = 8;

    fn no_device(e: &io::Error) -> bool {
        // ENOSYS: the kernel has no uverbs support at all (containers, VMs).
        matches!(e.raw_os_error(), Some(libc::ENOSYS) | Some(libc::ENODEV))
    }

    pub fn device_names() -> Result<Vec<String>, VerbsError> {
        let list = match ibverbs::devices() {
            Ok(l) => l,
            Err(e) if no_device(&e) => {
                return Err(VerbsError::NoDevice(format!(
                    "the kernel offers no RDMA verbs ({e})"
                )))
            }
            Err(e) => {
                return Err(VerbsError::Device {
                    device: "(list)".into(),
                    what: "ibv_get_device_list",
                    source: e,
                })
            }
        };
        let names: Vec<String> = list
            .iter()
            .map(|d| {
                d.name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "(unnamed)".into())
            })
            .collect();
        if names.is_empty() {
            return Err(VerbsError::NoDevice(
                "libibverbs lists no device (see /sys/class/infiniband)".into(),
            ));
        }
        Ok(names)
    }

    /// An opened device with its protection domain. It lives as long as the
    /// process: queue pairs borrow it, so it is leaked once on open.
    pub struct VerbsRail {
        device: String,
        ctx: &'static Context,
        pd: ProtectionDomain<'static>,
    }

    impl VerbsRail {
        /// Opens the first RDMA device.
        pub fn open() -> Result<&'static VerbsRail, VerbsError> {
            let device = device_names()?.remove(0);
            let fail = |what, source| VerbsError::Device {
                device: device.clone(),
                what,
                source,
            };
            let list = ibverbs::devices().map_err(|e| fail("ibv_get_device_list", e))?;
            let dev = list
                .get(0)
                .ok_or_else(|| VerbsError::NoDevice("the device list emptied".into()))?;
            let ctx: &'static Context = Box::leak(Box::new(
                dev.open().map_err(|e| fail("ibv_open_device", e))?,
            ));
            let pd = ctx.alloc_pd().map_err(|e| fail("ibv_alloc_pd", e))?;
            Ok(Box::leak(Box::new(VerbsRail { device, ctx, pd })))
        }

        pub fn device(&self) -> &str {
            &self.device
        }

        fn fail(&self, what: &'static str, source: io::Error) -> VerbsError {
            VerbsError::Device {
                device: self.device.clone(),
                what,
                source,
            }
        }

        /// Creates a queue pair; its address goes to the peer through signaling and
        /// the peer's address comes back to `PendingEndpoint::connect`.
        pub fn prepare(&'static self) -> Result<PendingEndpoint, VerbsError> {
            // Queue pairs borrow their completion queues for 'static: an endpoint
            // lives for the whole job, so its two queues are leaked with it.
            let cq = |id| -> Result<&'static CompletionQueue<'static>, VerbsError> {
                let q = self
                    .ctx
                    .create_cq(2 * RECV_SLOTS as i32, id)
                    .map_err(|e| self.fail("ibv_create_cq", e))?;
                Ok(Box::leak(Box::new(q)))
            };
            let (send_cq, recv_cq) = (cq(0)?, cq(1)?);
            let qp = self
                .pd
                .create_qp(send_cq, recv_cq, ibverbs::ibv_qp_type::IBV_QPT_RC)
                .set_max_recv_wr(RECV_SLOTS as u32)
                .set_rnr_retry(7)
                .build()
                .map_err(|e| self.fail("ibv_create_qp", e))?;
            let send_mr = self
                .pd
                .allocate::<u8>(HEADER + CHUNK)
                .map_err(|e| self.fail("ibv_reg_mr", e))?;
            let recv_mr = self
                .pd
                .allocate::<u8>(RECV_SLOTS * (HEADER + CHUNK))
                .map_err(|e| self.fail("ibv_reg_mr", e))?;
            Ok(PendingEndpoint {
                rail: self,
                qp,
                send_cq,
                recv_cq,
                send_mr,
                recv_mr,
            })
        }
    }

    pub struct PendingEndpoint {
        rail: &'static VerbsRail,
        qp: ibverbs::PreparedQueuePair<'static>,
        send_cq: &'static CompletionQueue<'static>,
        recv_cq: &'static CompletionQueue<'static>,
        send_mr: MemoryRegion<u8>,
        recv_mr: MemoryRegion<u8>,
    }

    /// Wire form of a queue-pair address: qp number, lid, then the gid if any.
    fn encode(ep: &ibverbs::QueuePairEndpoint) -> Vec<u8> {
        let mut out = Vec::with_capacity(23);
        out.extend_from_slice(&ep.num.to_le_bytes());
        out.extend_from_slice(&ep.lid.to_le_bytes());
        match ep.gid {
            Some(gid) => {
                out.push(1);
                let raw: ibverbs_sys::ibv_gid = gid.into();
                // SAFETY: every bit pattern of the 16-byte union is a valid `raw`.
                out.extend_from_slice(unsafe { &raw.raw });
            }
            None => out.push(0),
        }
        out
    }

    fn decode(bytes: &[u8]) -> Result<ibverbs::QueuePairEndpoint, VerbsError> {
        let bad = || VerbsError::BadAddress(bytes.len());
        if bytes.len() != 7 && bytes.len() != 23 {
            return Err(bad());
        }
        let num = u32::from_le_bytes(bytes[0..4].try_into().unwrap());
        let lid = u16::from_le_bytes(bytes[4..6].try_into().unwrap());
        let gid = match (bytes[6], bytes.len()) {
            (0, 7) => None,
            (1, 23) => {
                let raw = ibverbs_sys::ibv_gid {
                    raw: bytes[7..23].try_into().unwrap(),
                };
                Some(raw.into())
            }
            _ => return Err(bad()),
        };
        Ok(ibverbs::QueuePairEndpoint { num, lid, gid })
    }

    impl PendingEndpoint {
        /// This queue pair's address, to be sent to the peer.
        pub fn address(&self) -> Vec<u8> {
            encode(&self.qp.endpoint())
        }

        /// Connects to the peer's address and posts every receive slot.
        pub fn connect(self, peer: &[u8]) -> Result<VerbsEndpoint, VerbsError> {
            let remote = decode(peer)?;
            let rail = self.rail;
            let mut qp = self
                .qp
                .handshake(remote)
                .map_err(|e| rail.fail("ibv_modify_qp", e))?;
            let mut recv_mr = self.recv_mr;
            for slot in 0..RECV_SLOTS {
                post_receive(rail, &mut qp, &mut recv_mr, slot)?;
            }
            Ok(VerbsEndpoint {
                rail,
                qp,
                send_cq: self.send_cq,
                recv_cq: self.recv_cq,
                send_mr: self.send_mr,
                recv_mr,
                partial: None,
                inbox: VecDeque::new(),
            })
        }
    }

    fn post_receive(
        rail: &VerbsRail,
        qp: &mut QueuePair<'static>,
        mr: &mut MemoryRegion<u8>,
        slot: usize,
    ) -> Result<(), VerbsError> {
        let at = slot * (HEADER + CHUNK);
        // SAFETY: slot `slot` of `mr` is not read or reposted until its completion
        // is polled in `VerbsEndpoint::try_recv`, and `mr` lives in the endpoint
        // that owns `qp`.
        unsafe { qp.post_receive(mr, at..at + HEADER + CHUNK, slot as u64) }
            .map_err(|e| rail.fail("ibv_post_recv", e))
    }

    /// A connected queue pair carrying frames in order.
    pub struct VerbsEndpoint {
        rail: &'static VerbsRail,
        qp: QueuePair<'static>,
        send_cq: &'static CompletionQueue<'static>,
        recv_cq: &'static CompletionQueue<'static>,
        send_mr: MemoryRegion<u8>,
        recv_mr: MemoryRegion<u8>,
        /// The frame being reassembled and the bytes it still expects.
        partial: Option<(Vec<u8>, usize)>,
        inbox: VecDeque<Vec<u8>>,
    }

    impl VerbsEndpoint {
        fn check(&self, wc: &ibverbs::ibv_wc) -> Result<(), VerbsError> {
            match wc.error() {
                None => Ok(()),
                Some((status, vendor)) => Err(VerbsError::Completion {
                    device: self.rail.device.clone(),
                    status,
                    vendor,
                }),
            }
        }

        /// Sends one frame; returns when the device has taken every chunk.
        pub fn send(&mut self, frame: &[u8]) -> Result<(), VerbsError> {
            let mut first = true;
            let mut chunks = frame.chunks(CHUNK).peekable();
            // A zero-length frame is one empty chunk carrying just its header.
            let empty: &[u8] = &[];
            if chunks.peek().is_none() {
                return self.send_chunk(Some(0), empty);
            }
            for chunk in chunks {
                let header = first.then_some(frame.len() as u64);
                first = false;
                self.send_chunk(header, chunk)?;
            }
            Ok(())
        }

        fn send_chunk(&mut self, header: Option<u64>, chunk: &[u8]) -> Result<(), VerbsError> {
            let mut len = 0;
            if let Some(total) = header {
                self.send_mr[..HEADER].copy_from_slice(&total.to_le_bytes());
                len = HEADER;
            }
            self.send_mr[len..len + chunk.len()].copy_from_slice(chunk);
            len += chunk.len();
            // SAFETY: the send buffer is not touched again until the completion
            // below has been polled.
            unsafe { self.qp.post_send(&mut self.send_mr, ..len, 0) }
                .map_err(|e| self.rail.fail("ibv_post_send", e))?;
            let mut wc = [ibverbs::ibv_wc::default(); 1];
            loop {
                let done = self
                    .send_cq
                    .poll(&mut wc)
                    .map_err(|e| self.rail.fail("ibv_poll_cq", e))?;
                if let Some(c) = done.first() {
                    return self.check(c);
                }
                // The peer may be sending to us as well, with every one of our
                // slots full: taking frames in frees them, so both sends end.
                self.take_in()?;
                std::hint::spin_loop();
            }
        }

        /// The next complete frame, if one has arrived.
        pub fn try_recv(&mut self) -> Result<Option<Vec<u8>>, VerbsError> {
            self.take_in()?;
            Ok(self.inbox.pop_front())
        }

        /// Moves the frames that arrived into the inbox and posts their slots
        /// again.
        fn take_in(&mut self) -> Result<(), VerbsError> {
            let mut wcs = [ibverbs::ibv_wc::default(); RECV_SLOTS];
            let n = self
                .recv_cq
                .poll(&mut wcs)
                .map_err(|e| self.rail.fail("ibv_poll_cq", e))?
                .len();
            for wc in &wcs[..n] {
                self.check(wc)?;
                let slot = wc.wr_id() as usize;
                let at = slot * (HEADER + CHUNK);
                let bytes = &self.recv_mr[at..at + wc.len()];
                // A frame's first chunk starts with its length.
                let (mut buf, missing, body) = match self.partial.take() {
                    Some((buf, missing)) => (buf, missing, bytes),
                    None => {
                        let total = u64::from_le_bytes(bytes[..HEADER].try_into().unwrap());
                        let total = total as usize;
                        (Vec::with_capacity(total), total, &bytes[HEADER..])
                    }
                };
                buf.extend_from_slice(body);
                let missing = missing - body.len();
                if missing == 0 {
                    self.inbox.push_back(buf);
                } else {
                    self.partial = Some((buf, missing));
                }
                post_receive(self.rail, &mut self.qp, &mut self.recv_mr, slot)?;
            }
            Ok(())
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn endpoint_addresses_round_trip() {
            let plain = ibverbs::QueuePairEndpoint {
                num: 0x1234_5678,
                lid: 42,
                gid: None,
            };
            assert_eq!(decode(&encode(&plain)).unwrap(), plain);
            let raw = ibverbs_sys::ibv_gid { raw: [7u8; 16] };
            let global = ibverbs::QueuePairEndpoint {
                gid: Some(raw.into()),
                ..plain
            };
            let wire = encode(&global);
            assert_eq!(wire.len(), 23);
            assert_eq!(decode(&wire).unwrap(), global);
            assert!(matches!(
                decode(&wire[..10]),
                Err(VerbsError::BadAddress(10))
            ));
        }
    }
}
