//! What an origin sends a target's agent (rma/agent.rs), as bytes: one header
//! message per operation (tag [`HEADER`] on the window's request
//! communicator), followed, for operations that carry origin data, by that data
//! in one message of its own (tag [`DATA`]) so that it can land straight in the
//! window when the target's layout is one block.
//!
//! On the reply communicator the agent answers with get results (tag
//! [`RESULT`], matched in the order the origin posted its receives, which is
//! the order it sent the requests) and with acknowledgements and lock grants
//! under the tag the origin named in the request (`reply_tag`). The ranks
//! themselves exchange the notices of post/start/complete/wait there.

use crate::datatype::{Kind, Num};
use crate::op::Op;

/// Tags on the request communicator.
pub(crate) const HEADER: i32 = 1;
pub(crate) const DATA: i32 = 2;
/// Tags on the reply communicator.
pub(crate) const RESULT: i32 = 1;
pub(crate) const POST: i32 = 2;
pub(crate) const COMPLETE: i32 = 3;
/// Acknowledgements and grants use tags from here on, one per request, so that
/// threads of one rank waiting on one target each get their own.
pub(crate) const FIRST_REPLY_TAG: i32 = 16;

/// What an origin asks of a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Verb {
    Put = 1,
    Get = 2,
    Accumulate = 3,
    /// Accumulate that returns the target's values from before it.
    GetAccumulate = 4,
    CompareAndSwap = 5,
    /// Acknowledge once every earlier operation of this origin is done.
    Flush = 6,
    LockShared = 7,
    LockExclusive = 8,
    Unlock = 9,
    /// Ends the agent (its own rank sends it, at MPI_Win_free).
    Stop = 10,
}

impl Verb {
    fn from_u8(b: u8) -> Option<Verb> {
        Some(match b {
            1 => Verb::Put,
            2 => Verb::Get,
            3 => Verb::Accumulate,
            4 => Verb::GetAccumulate,
            5 => Verb::CompareAndSwap,
            6 => Verb::Flush,
            7 => Verb::LockShared,
            8 => Verb::LockExclusive,
            9 => Verb::Unlock,
            10 => Verb::Stop,
            _ => return None,
        })
    }

    /// Whether a data message follows the header.
    pub(crate) fn carries_data(self) -> bool {
        matches!(
            self,
            Verb::Put | Verb::Accumulate | Verb::GetAccumulate | Verb::CompareAndSwap
        )
    }
}

/// An operation's header and the target's layout.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Request {
    pub(crate) verb: Verb,
    /// Accumulate operation and element kind (zero for other verbs).
    pub(crate) op: u8,
    pub(crate) kind: Kind,
    pub(crate) elem: u32,
    /// Tag of the acknowledgement or grant this request asks for.
    pub(crate) reply_tag: i32,
    /// Where the layout starts: a byte offset into the window, or an address
    /// in a dynamic window.
    pub(crate) at: i64,
    /// Bytes of the data message (or of the result).
    pub(crate) len: u64,
    /// (offset from `at`, bytes) of each block of the target's layout.
    pub(crate) blocks: Vec<(i64, u64)>,
}

const FIXED: usize = 32;

impl Request {
    pub(crate) fn control(verb: Verb, reply_tag: i32) -> Request {
        Request {
            verb,
            op: 0,
            kind: Kind::Byte,
            elem: 1,
            reply_tag,
            at: 0,
            len: 0,
            blocks: Vec::new(),
        }
    }

    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(FIXED + 16 * self.blocks.len());
        b.push(self.verb as u8);
        b.push(self.op);
        b.extend_from_slice(&kind_code(self.kind).to_le_bytes());
        b.extend_from_slice(&self.elem.to_le_bytes());
        b.extend_from_slice(&self.reply_tag.to_le_bytes());
        b.extend_from_slice(&(self.blocks.len() as u32).to_le_bytes());
        b.extend_from_slice(&self.at.to_le_bytes());
        b.extend_from_slice(&self.len.to_le_bytes());
        debug_assert_eq!(b.len(), FIXED);
        for &(o, l) in &self.blocks {
            b.extend_from_slice(&o.to_le_bytes());
            b.extend_from_slice(&l.to_le_bytes());
        }
        b
    }

    /// The request in `b`, or why it is malformed.
    pub(crate) fn decode(b: &[u8]) -> Result<Request, String> {
        if b.len() < FIXED {
            return Err(format!(
                "request of {} bytes, shorter than a header",
                b.len()
            ));
        }
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap());
        let verb = Verb::from_u8(b[0]).ok_or_else(|| format!("unknown request kind {}", b[0]))?;
        let code = u16::from_le_bytes([b[2], b[3]]);
        let kind = kind_of_code(code).ok_or_else(|| format!("unknown element kind {code}"))?;
        let n = u32_at(12) as usize;
        if b.len() != FIXED + 16 * n {
            return Err(format!("request of {} bytes announces {n} blocks", b.len()));
        }
        let blocks = (0..n)
            .map(|i| {
                let at = FIXED + 16 * i;
                (u64_at(at) as i64, u64_at(at + 8))
            })
            .collect();
        Ok(Request {
            verb,
            op: b[1],
            kind,
            elem: u32_at(4),
            reply_tag: u32_at(8) as i32,
            at: u64_at(16) as i64,
            len: u64_at(24),
            blocks,
        })
    }
}

/// The accumulate operations MPI allows (predefined ones, MPI_REPLACE and
/// MPI_NO_OP) as numbers; `None` for a user operation.
pub(crate) fn op_code(op: &Op) -> Option<u8> {
    Some(match op {
        Op::Max => 1,
        Op::Min => 2,
        Op::Sum => 3,
        Op::Prod => 4,
        Op::LogicalAnd => 5,
        Op::BitAnd => 6,
        Op::LogicalOr => 7,
        Op::BitOr => 8,
        Op::LogicalXor => 9,
        Op::BitXor => 10,
        Op::MinLoc => 11,
        Op::MaxLoc => 12,
        Op::Replace => 13,
        Op::NoOp => 14,
        Op::User { .. } => return None,
    })
}

pub(crate) fn op_of_code(c: u8) -> Option<Op> {
    Some(match c {
        1 => Op::Max,
        2 => Op::Min,
        3 => Op::Sum,
        4 => Op::Prod,
        5 => Op::LogicalAnd,
        6 => Op::BitAnd,
        7 => Op::LogicalOr,
        8 => Op::BitOr,
        9 => Op::LogicalXor,
        10 => Op::BitXor,
        11 => Op::MinLoc,
        12 => Op::MaxLoc,
        13 => Op::Replace,
        14 => Op::NoOp,
        _ => return None,
    })
}

const NUMS: [Num; 6] = [Num::I16, Num::I32, Num::I64, Num::F32, Num::F64, Num::F80];

fn kind_code(k: Kind) -> u16 {
    use Kind::*;
    match k {
        I8 => 1,
        U8 => 2,
        I16 => 3,
        U16 => 4,
        I32 => 5,
        U32 => 6,
        I64 => 7,
        U64 => 8,
        F32 => 9,
        F64 => 10,
        F80 => 11,
        C32 => 12,
        C64 => 13,
        C80 => 14,
        Bool => 15,
        Logical => 16,
        Byte => 17,
        Opaque => 18,
        Pair {
            value,
            index,
            packed,
        } => {
            let n = |x: Num| NUMS.iter().position(|&y| y == x).unwrap() as u16;
            0x100 | n(value) << 4 | n(index) << 1 | packed as u16
        }
    }
}

fn kind_of_code(c: u16) -> Option<Kind> {
    use Kind::*;
    if c & 0x100 != 0 {
        let num = |i: u16| NUMS.get(i as usize).copied();
        return Some(Pair {
            value: num((c >> 4) & 0xf)?,
            index: num((c >> 1) & 0x7)?,
            packed: c & 1 == 1,
        });
    }
    Some(match c {
        1 => I8,
        2 => U8,
        3 => I16,
        4 => U16,
        5 => I32,
        6 => U32,
        7 => I64,
        8 => U64,
        9 => F32,
        10 => F64,
        11 => F80,
        12 => C32,
        13 => C64,
        14 => C80,
        15 => Bool,
        16 => Logical,
        17 => Byte,
        18 => Opaque,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_round_trip_and_malformed_ones_are_named() {
        let r = Request {
            verb: Verb::GetAccumulate,
            op: op_code(&Op::MaxLoc).unwrap(),
            kind: Kind::Pair {
                value: Num::F64,
                index: Num::I32,
                packed: true,
            },
            elem: 12,
            reply_tag: 99,
            at: -8,
            len: 24,
            blocks: vec![(0, 12), (40, 12)],
        };
        let b = r.encode();
        assert_eq!(Request::decode(&b), Ok(r));
        assert!(Request::decode(&b[..b.len() - 1])
            .unwrap_err()
            .contains("announces 2 blocks"));
        let mut bad = b.clone();
        bad[0] = 77;
        assert!(Request::decode(&bad)
            .unwrap_err()
            .contains("unknown request kind"));
        assert!(Request::decode(&b[..5]).unwrap_err().contains("shorter"));
    }

    #[test]
    fn every_kind_and_operation_has_a_code() {
        use Kind::*;
        let mut kinds = vec![
            I8, U8, I16, U16, I32, U32, I64, U64, F32, F64, F80, C32, C64, C80, Bool, Logical,
            Byte, Opaque,
        ];
        for v in NUMS {
            for i in NUMS {
                for packed in [false, true] {
                    kinds.push(Pair {
                        value: v,
                        index: i,
                        packed,
                    });
                }
            }
        }
        for k in kinds {
            assert_eq!(kind_of_code(kind_code(k)), Some(k));
        }
        for c in 1..=14 {
            assert_eq!(op_code(&op_of_code(c).unwrap()), Some(c));
        }
        assert_eq!(op_of_code(15).map(|o| o.name()), None);
    }
}
