//! Control messages of the signaling network and their wire format: a fixed
//! header (source, destination, hop count, kind) and a kind-specific body.

/// What a control message asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ControlKind {
    /// Open an endpoint on rail `rail` to the sender, which listens at `address`.
    ConnectRequest { rail: u16, address: String },
    /// The endpoint requested is ready (or refused, with the reason).
    ConnectReply {
        rail: u16,
        accepted: bool,
        reason: String,
    },
    /// Checkpoint coordination: a step of the leaders' agreement, with byte
    /// counters of the channels being drained.
    Checkpoint {
        epoch: u64,
        step: u8,
        counters: Vec<(u32, u64)>,
    },
    /// A round of the deadlock check (process 0 asks, the others answer
    /// with what their ranks wait for, or report them): `values` by `step`.
    Deadlock {
        round: u64,
        step: u8,
        values: Vec<u64>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Control {
    pub source: u32,
    pub dest: u32,
    /// Hops taken so far (incremented by each forwarder; net-stats reports it).
    pub hops: u16,
    pub kind: ControlKind,
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

struct Cursor<'a>(&'a [u8]);

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn u16(&mut self) -> Option<u16> {
        self.take(2)
            .map(|b| u16::from_le_bytes(b.try_into().unwrap()))
    }
    fn u32(&mut self) -> Option<u32> {
        self.take(4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
    }
    fn u64(&mut self) -> Option<u64> {
        self.take(8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
    }
    fn str(&mut self) -> Option<String> {
        let n = self.u32()? as usize;
        self.take(n)
            .and_then(|b| String::from_utf8(b.to_vec()).ok())
    }
}

impl Control {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&self.source.to_le_bytes());
        out.extend_from_slice(&self.dest.to_le_bytes());
        out.extend_from_slice(&self.hops.to_le_bytes());
        match &self.kind {
            ControlKind::ConnectRequest { rail, address } => {
                out.push(1);
                out.extend_from_slice(&rail.to_le_bytes());
                put_str(&mut out, address);
            }
            ControlKind::ConnectReply {
                rail,
                accepted,
                reason,
            } => {
                out.push(2);
                out.extend_from_slice(&rail.to_le_bytes());
                out.push(*accepted as u8);
                put_str(&mut out, reason);
            }
            ControlKind::Checkpoint {
                epoch,
                step,
                counters,
            } => {
                out.push(3);
                out.extend_from_slice(&epoch.to_le_bytes());
                out.push(*step);
                out.extend_from_slice(&(counters.len() as u32).to_le_bytes());
                for (p, c) in counters {
                    out.extend_from_slice(&p.to_le_bytes());
                    out.extend_from_slice(&c.to_le_bytes());
                }
            }
            ControlKind::Deadlock {
                round,
                step,
                values,
            } => {
                out.push(4);
                out.extend_from_slice(&round.to_le_bytes());
                out.push(*step);
                out.extend_from_slice(&(values.len() as u32).to_le_bytes());
                for v in values {
                    out.extend_from_slice(&v.to_le_bytes());
                }
            }
        }
        out
    }

    /// Decodes a message; `None` if the bytes are not one (truncated, unknown kind).
    pub fn decode(bytes: &[u8]) -> Option<Control> {
        let mut c = Cursor(bytes);
        let source = c.u32()?;
        let dest = c.u32()?;
        let hops = c.u16()?;
        let kind = match c.u8()? {
            1 => ControlKind::ConnectRequest {
                rail: c.u16()?,
                address: c.str()?,
            },
            2 => ControlKind::ConnectReply {
                rail: c.u16()?,
                accepted: c.u8()? != 0,
                reason: c.str()?,
            },
            3 => {
                let epoch = c.u64()?;
                let step = c.u8()?;
                let n = c.u32()? as usize;
                let mut counters = Vec::with_capacity(n.min(1 << 16));
                for _ in 0..n {
                    counters.push((c.u32()?, c.u64()?));
                }
                ControlKind::Checkpoint {
                    epoch,
                    step,
                    counters,
                }
            }
            4 => {
                let round = c.u64()?;
                let step = c.u8()?;
                let n = c.u32()? as usize;
                let mut values = Vec::with_capacity(n.min(1 << 16));
                for _ in 0..n {
                    values.push(c.u64()?);
                }
                ControlKind::Deadlock {
                    round,
                    step,
                    values,
                }
            }
            _ => return None,
        };
        c.0.is_empty().then_some(Control {
            source,
            dest,
            hops,
            kind,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_round_trips_and_garbage_is_refused() {
        let msgs = [
            Control {
                source: 0,
                dest: 7,
                hops: 3,
                kind: ControlKind::ConnectRequest {
                    rail: 1,
                    address: "10.0.0.2:4100".into(),
                },
            },
            Control {
                source: 7,
                dest: 0,
                hops: 1,
                kind: ControlKind::ConnectReply {
                    rail: 1,
                    accepted: false,
                    reason: "no device".into(),
                },
            },
            Control {
                source: 2,
                dest: 5,
                hops: 0,
                kind: ControlKind::Checkpoint {
                    epoch: 9,
                    step: 2,
                    counters: vec![(1, 4096), (3, 0)],
                },
            },
            Control {
                source: 3,
                dest: 0,
                hops: 2,
                kind: ControlKind::Deadlock {
                    round: 4,
                    step: 1,
                    values: vec![1, 7, u64::MAX],
                },
            },
        ];
        for m in &msgs {
            assert_eq!(Control::decode(&m.encode()).as_ref(), Some(m));
        }
        let bytes = msgs[0].encode();
        assert_eq!(Control::decode(&bytes[..bytes.len() - 1]), None);
        let mut bad = bytes.clone();
        bad[10] = 99;
        assert_eq!(Control::decode(&bad), None);
    }
}
