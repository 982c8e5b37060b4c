//! Frames between a process of the job and a service, over a stream that
//! ran the job's handshake first (mpcrs-auth). A frame is a header and a
//! payload: a 4-byte little-endian header length, the header (bincode), an
//! 8-byte payload length, then the payload's bytes as they are (the changed
//! blocks of a commit, or the arrays of a fetched checkpoint), so arrays are
//! never copied into a serialization buffer.
//!
//! Each request gets one response, in order.

use std::io::{self, Read, Write};

use serde::{de::DeserializeOwned, Deserialize, Serialize};

use crate::data::Change;

/// The largest header: a change names its blocks (4 bytes per 64 KiB).
pub const MAX_HEADER: u32 = 64 << 20;
/// The largest payload.
pub const MAX_PAYLOAD: u64 = 1 << 40;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Request {
    /// Commit `change` to checkpoint `ckpt` of world rank `rank`; the payload
    /// is the change's blocks. A `fresh` change replaces what the service
    /// holds (it carries every array whole); any other must follow the commit
    /// the service holds, or it is refused and the sender sends it fresh.
    Commit {
        rank: u32,
        ckpt: String,
        fresh: bool,
        change: Change,
    },
    /// The number of the last commit of `ckpt` of `rank` the service holds.
    Latest { rank: u32, ckpt: String },
    /// The committed state of `ckpt` of `rank`.
    Fetch { rank: u32, ckpt: String },
    /// Forget `ckpt` of `rank`.
    Delete { rank: u32, ckpt: String },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Response {
    Done,
    /// The last commit held, if any.
    Latest(Option<u64>),
    /// The committed checkpoint as a change from nothing (payload: its
    /// arrays whole), or `None` when the service holds none.
    Fetched(Option<Change>),
    /// The request was not carried out, and why.
    Refused(String),
}

fn invalid(what: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what)
}

/// The bytes of a frame before its payload: the header's length, the
/// header, and the length of `payload`'s concatenation.
pub fn frame_start(header: &impl Serialize, payload: &[&[u8]]) -> io::Result<Vec<u8>> {
    let head = bincode::serialize(header).map_err(|e| invalid(e.to_string()))?;
    let total: u64 = payload.iter().map(|p| p.len() as u64).sum();
    let mut start = Vec::with_capacity(head.len() + 12);
    start.extend_from_slice(&(head.len() as u32).to_le_bytes());
    start.extend_from_slice(&head);
    start.extend_from_slice(&total.to_le_bytes());
    Ok(start)
}

/// Writes a frame: `header`, then the concatenation of `payload`.
pub fn send(w: &mut impl Write, header: &impl Serialize, payload: &[&[u8]]) -> io::Result<()> {
    w.write_all(&frame_start(header, payload)?)?;
    for p in payload {
        w.write_all(p)?;
    }
    w.flush()
}

/// Reads a frame; a header or payload over the limits, or a header that does
/// not decode, is an error of kind `InvalidData`.
pub fn receive<T: DeserializeOwned>(r: &mut impl Read) -> io::Result<(T, Vec<u8>)> {
    let mut payload = Vec::new();
    let (header, len) = receive_into(r, &mut payload)?;
    payload.truncate(len);
    Ok((header, payload))
}

/// Reads a frame whose payload goes to the front of `buf`, which grows when
/// it is too short and is otherwise reused as it is (no page of it touched
/// again but by the payload); returns the header and the payload's length.
pub fn receive_into<T: DeserializeOwned>(
    r: &mut impl Read,
    buf: &mut Vec<u8>,
) -> io::Result<(T, usize)> {
    let mut n = [0u8; 4];
    r.read_exact(&mut n)?;
    let n = u32::from_le_bytes(n);
    if n > MAX_HEADER {
        return Err(invalid(format!("a frame header of {n} bytes")));
    }
    let mut head = vec![0u8; n as usize];
    r.read_exact(&mut head)?;
    let header =
        bincode::deserialize(&head).map_err(|e| invalid(format!("a frame header: {e}")))?;
    let mut len = [0u8; 8];
    r.read_exact(&mut len)?;
    let len = u64::from_le_bytes(len);
    if len > MAX_PAYLOAD {
        return Err(invalid(format!("a payload of {len} bytes")));
    }
    let len = len as usize;
    if buf.len() < len {
        buf.resize(len, 0);
    }
    r.read_exact(&mut buf[..len])?;
    Ok((header, len))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::ArrayChange;

    #[test]
    fn frames_round_trip_and_forged_lengths_are_refused() {
        let req = Request::Commit {
            rank: 3,
            ckpt: "mm".into(),
            fresh: false,
            change: Change {
                commit: 2,
                indices: vec![("k".into(), -4)],
                arrays: vec![ArrayChange {
                    name: "a".into(),
                    len: 6,
                    blocks: vec![0],
                }],
            },
        };
        let mut buf = Vec::new();
        send(&mut buf, &req, &[b"abc", b"def"]).unwrap();
        let (back, payload): (Request, _) = receive(&mut buf.as_slice()).unwrap();
        assert_eq!(back, req);
        assert_eq!(payload, b"abcdef");
        let mut forged = buf.clone();
        forged[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        let e = receive::<Request>(&mut forged.as_slice()).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        let e = receive::<Request>(&mut &buf[..buf.len() - 1]).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
    }
}
