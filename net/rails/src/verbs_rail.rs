//! The ibverbs rail of one process: a reliable-connection queue pair per peer
//! process, made on demand. The side that needs one prepares its queue pair and
//! sends its address in a connect request (over signaling); the peer prepares
//! its own, connects it to that address and answers with its address, which
//! connects the first side. When both ask at once, each connects its own queue
//! pair to the address it received: the same pair results. Polled by progress
//! like the other drivers.
//!
//! Untested without an RDMA device (see [`crate::verbs`]): without the cargo
//! feature `ibverbs` the rail cannot be made and says so.

use crate::verbs::VerbsError;

/// Where incoming frames go: (sending process, frame).
pub type VerbsSink = Box<dyn Fn(u32, Vec<u8>) + Send + Sync>;

/// Queue-pair addresses travel as text in connect requests: hex digits.
pub fn address_to_text(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The bytes of an address made by [`address_to_text`].
pub fn address_from_text(text: &str) -> Result<Vec<u8>, VerbsError> {
    let bad = || VerbsError::BadAddress(text.len() / 2);
    if !text.len().is_multiple_of(2) {
        return Err(bad());
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2).ok_or_else(bad)?, 16).map_err(|_| bad()))
        .collect()
}

pub use imp::VerbsPeers;

#[cfg(not(feature = "ibverbs"))]
mod imp {
    use super::VerbsSink;
    use crate::verbs::VerbsError;

    /// Without the feature no value of this type exists: `new` refuses.
    pub struct VerbsPeers(std::convert::Infallible);

    impl VerbsPeers {
        pub fn new(_sink: VerbsSink) -> Result<VerbsPeers, VerbsError> {
            Err(VerbsError::NotBuilt)
        }

        pub fn offer(&self, _to: u32) -> Result<Option<String>, VerbsError> {
            match self.0 {}
        }

        pub fn accept(&self, _from: u32, _address: &str) -> Result<Option<String>, VerbsError> {
            match self.0 {}
        }

        pub fn is_connected(&self, _to: u32) -> bool {
            match self.0 {}
        }

        pub fn send_parts(&self, _to: u32, _parts: &[&[u8]]) -> Result<(), VerbsError> {
            match self.0 {}
        }

        pub fn progress(&self) -> Result<bool, VerbsError> {
            match self.0 {}
        }

        pub fn close_all(&self) -> usize {
            match self.0 {}
        }

        pub fn device(&self) -> &str {
            match self.0 {}
        }
    }
}

#[cfg(feature = "ibverbs")]
mod imp {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};

    use super::{address_from_text, address_to_text, VerbsSink};
    use crate::verbs::{PendingEndpoint, VerbsEndpoint, VerbsError, VerbsRail};

    pub struct VerbsPeers {
        rail: &'static VerbsRail,
        /// Queue pairs prepared and offered, waiting for the peer's address.
        pending: Mutex<HashMap<u32, PendingEndpoint>>,
        /// Connected queue pairs by process; each behind its own lock (a send
        /// and a poll of one queue pair do not overlap).
        connected: Mutex<HashMap<u32, Arc<Mutex<VerbsEndpoint>>>>,
        /// The same, as a list polled by progress without the map's lock held
        /// while frames go to the sink.
        polled: Mutex<Vec<(u32, Arc<Mutex<VerbsEndpoint>>)>>,
        sink: VerbsSink,
    }

    impl VerbsPeers {
        /// Opens the first RDMA device.
        pub fn new(sink: VerbsSink) -> Result<VerbsPeers, VerbsError> {
            Ok(VerbsPeers {
                rail: VerbsRail::open()?,
                pending: Mutex::new(HashMap::new()),
                connected: Mutex::new(HashMap::new()),
                polled: Mutex::new(Vec::new()),
                sink,
            })
        }

        pub fn device(&self) -> &str {
            self.rail.device()
        }

        /// Prepares a queue pair towards `to`; returns the address to send it in
        /// a connect request, or None if one is already offered or connected.
        pub fn offer(&self, to: u32) -> Result<Option<String>, VerbsError> {
            let mut pending = self.pending.lock().unwrap();
            if pending.contains_key(&to) || self.is_connected(to) {
                return Ok(None);
            }
            let ep = self.rail.prepare()?;
            let address = address_to_text(&ep.address());
            pending.insert(to, ep);
            Ok(Some(address))
        }

        /// Takes `from`'s address: connects the queue pair offered to it, or a
        /// new one, whose address is returned to be sent back.
        pub fn accept(&self, from: u32, address: &str) -> Result<Option<String>, VerbsError> {
            let peer = address_from_text(address)?;
            let mut pending = self.pending.lock().unwrap();
            if self.is_connected(from) {
                return Ok(None);
            }
            let (ep, answer) = match pending.remove(&from) {
                Some(ep) => (ep, None),
                None => {
                    let ep = self.rail.prepare()?;
                    let mine = address_to_text(&ep.address());
                    (ep, Some(mine))
                }
            };
            let ep = Arc::new(Mutex::new(ep.connect(&peer)?));
            self.connected.lock().unwrap().insert(from, ep.clone());
            self.polled.lock().unwrap().push((from, ep));
            Ok(answer)
        }

        pub fn is_connected(&self, to: u32) -> bool {
            self.connected.lock().unwrap().contains_key(&to)
        }

        /// Sends the frame made of `parts` to `to` over its queue pair.
        pub fn send_parts(&self, to: u32, parts: &[&[u8]]) -> Result<(), VerbsError> {
            let ep = self
                .connected
                .lock()
                .unwrap()
                .get(&to)
                .cloned()
                .ok_or(VerbsError::NotConnected(to))?;
            let frame = parts.concat();
            let mut ep = ep.lock().unwrap();
            ep.send(&frame)
        }

        /// Hands every frame that arrived to the sink; whether any did.
        pub fn progress(&self) -> Result<bool, VerbsError> {
            let Ok(polled) = self.polled.try_lock() else {
                return Ok(false);
            };
            let mut moved = false;
            for (from, ep) in polled.iter() {
                loop {
                    // A queue pair in use is sending, and takes frames in meanwhile.
                    let Ok(mut ep) = ep.try_lock() else { break };
                    let frame = ep.try_recv()?;
                    drop(ep);
                    let Some(frame) = frame else { break };
                    moved = true;
                    (self.sink)(*from, frame);
                }
            }
            Ok(moved)
        }

        /// Drops every queue pair (a checkpoint: images hold no device state);
        /// they are made again on demand. Returns how many there were.
        pub fn close_all(&self) -> usize {
            let mut polled = self.polled.lock().unwrap();
            let n = polled.len();
            polled.clear();
            self.connected.lock().unwrap().clear();
            self.pending.lock().unwrap().clear();
            n
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_survive_the_text_of_a_connect_request() {
        let bytes: Vec<u8> = (0..23).map(|i| i * 11).collect();
        let text = address_to_text(&bytes);
        assert_eq!(text.len(), 46);
        assert_eq!(address_from_text(&text).unwrap(), bytes);
        assert!(matches!(
            address_from_text("abc"),
            Err(VerbsError::BadAddress(_))
        ));
        assert!(matches!(
            address_from_text("zz"),
            Err(VerbsError::BadAddress(_))
        ));
    }

    /// The rail opens exactly where a device is listed, and says why not
    /// elsewhere (on these machines: no device, or a build without the feature).
    #[test]
    fn the_rail_opens_where_a_device_is_listed_and_says_why_not_elsewhere() {
        let listed = crate::verbs::device_names();
        match (VerbsPeers::new(Box::new(|_, _| {})), listed) {
            (Ok(p), Ok(names)) => assert_eq!(p.device(), names[0]),
            (Err(e), Err(why)) => assert_eq!(e.to_string(), why.to_string()),
            (Ok(p), Err(why)) => panic!("opened {} although: {why}", p.device()),
            (Err(e), Ok(names)) => panic!("devices {names:?} listed, yet: {e}"),
        }
    }
}
