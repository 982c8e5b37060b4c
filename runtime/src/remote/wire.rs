//! The frames MPI messages travel in between processes: a fixed header, then the
//! payload (eager data or a chunk of a rendezvous).
//!
//! - `Eager`: the whole message; `id` != 0 asks for a `Fin` once it matched
//!   (synchronous sends).
//! - `Rts` (ready to send): a large or synchronous message waiting in the
//!   sender's memory at `addr` of process `pid` on node `node`; the receiver reads
//!   it there (same node) or asks for it with a `Cts`.
//! - `Cts` (clear to send): the matched receive `token` wants rendezvous `id`.
//! - `Data`: bytes of a rendezvous at offset `addr` of receive `token` (`id`).
//! - `Fin`: the receiver matched (and, for an `Rts`, copied) send `id`.
//! - `Cancel`: the sender cancels send `id` to rank `dest` of `context`
//!   (MPI_Cancel); the receiver withdraws it if it has not matched yet.
//! - `Cancelled`: send `id` was withdrawn unmatched: no `Cts` or `Fin` follows.

/// Kind of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Kind {
    Eager = 1,
    Rts = 2,
    Cts = 3,
    Data = 4,
    Fin = 5,
    Cancel = 6,
    Cancelled = 7,
}

/// The header of every frame. Fields a kind does not use are zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header {
    pub(crate) kind: Kind,
    /// Order of the frame among those from the same sending process.
    pub(crate) seq: u64,
    pub(crate) context: u64,
    /// Communicator ranks of the destination and the source, and the tag.
    pub(crate) dest: u32,
    pub(crate) source: i32,
    pub(crate) tag: i32,
    /// Length of the whole message.
    pub(crate) len: u64,
    pub(crate) id: u64,
    pub(crate) token: u64,
    pub(crate) addr: u64,
    pub(crate) pid: u32,
    pub(crate) node: u32,
}

/// Bytes of a header at most.
pub(crate) const HEADER_BYTES: usize = 72;
/// Bytes of a short header: one whose rendezvous fields (`id` on) are all zero,
/// such as a standard eager message's. With a small payload, such a frame fits
/// one cache line of the shm ring.
const SHORT_BYTES: usize = 40;
/// Flag of byte 1: the header is short.
const SHORT: u8 = 1;

impl Header {
    pub(crate) fn new(kind: Kind) -> Header {
        Header {
            kind,
            seq: 0,
            context: 0,
            dest: 0,
            source: 0,
            tag: 0,
            len: 0,
            id: 0,
            token: 0,
            addr: 0,
            pid: 0,
            node: 0,
        }
    }

    /// The header's bytes, of which the first `n` (returned) are sent.
    pub(crate) fn encode(&self) -> ([u8; HEADER_BYTES], usize) {
        let mut b = [0u8; HEADER_BYTES];
        b[0] = self.kind as u8;
        let short = (self.id | self.token | self.addr) == 0 && (self.pid | self.node) == 0;
        if short {
            b[1] = SHORT;
        }
        b[4..8].copy_from_slice(&self.tag.to_le_bytes());
        b[8..16].copy_from_slice(&self.seq.to_le_bytes());
        b[16..24].copy_from_slice(&self.context.to_le_bytes());
        b[24..28].copy_from_slice(&self.dest.to_le_bytes());
        b[28..32].copy_from_slice(&self.source.to_le_bytes());
        b[32..40].copy_from_slice(&self.len.to_le_bytes());
        b[40..48].copy_from_slice(&self.id.to_le_bytes());
        b[48..56].copy_from_slice(&self.token.to_le_bytes());
        b[56..64].copy_from_slice(&self.addr.to_le_bytes());
        b[64..68].copy_from_slice(&self.pid.to_le_bytes());
        b[68..72].copy_from_slice(&self.node.to_le_bytes());
        (b, if short { SHORT_BYTES } else { HEADER_BYTES })
    }

    /// The header at the start of `b`, and its length in bytes.
    pub(crate) fn decode(b: &[u8]) -> Option<(Header, usize)> {
        let n = match b.get(1) {
            Some(&SHORT) => SHORT_BYTES,
            Some(0) => HEADER_BYTES,
            _ => return None,
        };
        let b = b.get(..n)?;
        // Fields past a short header's end are zero.
        let u32_at = |i: usize| {
            b.get(i..i + 4)
                .map_or(0, |x| u32::from_le_bytes(x.try_into().unwrap()))
        };
        let u64_at = |i: usize| {
            b.get(i..i + 8)
                .map_or(0, |x| u64::from_le_bytes(x.try_into().unwrap()))
        };
        let kind = match b[0] {
            1 => Kind::Eager,
            2 => Kind::Rts,
            3 => Kind::Cts,
            4 => Kind::Data,
            5 => Kind::Fin,
            6 => Kind::Cancel,
            7 => Kind::Cancelled,
            _ => return None,
        };
        let h = Header {
            kind,
            tag: u32_at(4) as i32,
            seq: u64_at(8),
            context: u64_at(16),
            dest: u32_at(24),
            source: u32_at(28) as i32,
            len: u64_at(32),
            id: u64_at(40),
            token: u64_at(48),
            addr: u64_at(56),
            pid: u32_at(64),
            node: u32_at(68),
        };
        Some((h, n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip_and_bad_kinds_are_refused() {
        let h = Header {
            kind: Kind::Rts,
            seq: 7,
            context: u64::MAX - 3,
            dest: 12,
            source: -4,
            tag: -12,
            len: 1 << 40,
            id: 99,
            token: 5,
            addr: 0x7fff_0000_1000,
            pid: 4242,
            node: 3,
        };
        let (b, n) = h.encode();
        assert_eq!(n, HEADER_BYTES);
        assert_eq!(Header::decode(&b), Some((h, n)));
        assert_eq!(Header::decode(&b[..HEADER_BYTES - 1]), None);
        let mut cancel = h;
        cancel.kind = Kind::Cancel;
        let (b2, n2) = cancel.encode();
        assert_eq!(Header::decode(&b2), Some((cancel, n2)));
        let mut bad = b;
        bad[0] = 9;
        assert_eq!(Header::decode(&bad), None);
    }

    #[test]
    fn standard_eager_headers_are_short_and_read_back_whole() {
        let mut h = Header::new(Kind::Eager);
        h.seq = 1 << 33;
        h.context = 77;
        h.dest = 3;
        h.source = 1;
        h.tag = -7;
        h.len = 8;
        let (b, n) = h.encode();
        assert_eq!(n, SHORT_BYTES);
        assert_eq!(Header::decode(&b[..n]), Some((h, n)));
        assert_eq!(Header::decode(&b[..n - 1]), None);
        // A synchronous send's header carries its id: long.
        h.id = 5;
        let (b, n) = h.encode();
        assert_eq!(n, HEADER_BYTES);
        assert_eq!(Header::decode(&b[..n]), Some((h, n)));
    }

    fn kind() -> impl proptest::strategy::Strategy<Value = Kind> {
        proptest::sample::select(vec![
            Kind::Eager,
            Kind::Rts,
            Kind::Cts,
            Kind::Data,
            Kind::Fin,
            Kind::Cancel,
            Kind::Cancelled,
        ])
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(2048))]

        /// Whatever bytes a peer sends, decoding answers a header or None:
        /// never a panic, and never a length past the bytes given.
        #[test]
        fn any_bytes_decode_to_a_header_or_none(b in proptest::collection::vec(proptest::num::u8::ANY, 0..96)) {
            if let Some((_, n)) = Header::decode(&b) {
                proptest::prop_assert!(n <= b.len());
            }
        }

        /// Every header reads back as it was sent, whole or short.
        #[test]
        fn every_header_round_trips(
            kind in kind(),
            words in proptest::array::uniform8(proptest::num::u64::ANY),
            small in proptest::array::uniform4(proptest::num::u32::ANY),
            zeros in proptest::num::u8::ANY,
        ) {
            // Some headers short: the fields a short one leaves out are zero.
            let pick = |bit: u8, w: u64| if zeros & (1 << bit) != 0 { 0 } else { w };
            let h = Header {
                kind,
                seq: words[0],
                context: words[1],
                dest: small[0],
                source: small[1] as i32,
                tag: small[2] as i32,
                len: words[2],
                id: pick(0, words[3]),
                token: pick(1, words[4]),
                addr: pick(2, words[5]),
                pid: pick(3, small[3] as u64) as u32,
                node: pick(4, words[6]) as u32,
            };
            let (b, n) = h.encode();
            proptest::prop_assert_eq!(Header::decode(&b[..n]), Some((h, n)));
        }
    }
}
