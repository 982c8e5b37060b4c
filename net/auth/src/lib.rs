//! Proof that a connection belongs to an mpcrs job.
//!
//! Owns: the job's secret ([`JobSecret`]: 32 random bytes made by the launcher,
//! handed to the job's processes through their environment, never through a
//! command line or over the wire) and the handshake every link of the job runs
//! before anything it carries is read ([`Handshake`]; [`over_stream`] for
//! blocking streams such as the PMI-2 port).
//!
//! The handshake: each side sends a fresh random challenge; each answers the
//! other's with HMAC-SHA-256 over its own role and both challenges, keyed by the
//! secret; each trusts the link once the other's answer checks. The roles keep
//! a side's answer from being replayed to it, the fresh challenges keep an old
//! answer from serving twice. What a link carries afterwards is neither
//! encrypted nor authenticated frame by frame: the handshake keeps strangers
//! out, not someone on the path between two hosts.
//!
//! Must not touch: sockets and their progress (the tcp rail drives a
//! [`Handshake`] with its own framing), or anything a link carries after it.

mod handshake;
mod secret;
mod stream;

pub use handshake::{Handshake, Refusal, Reply, Role, MAX_FRAME};
pub use secret::JobSecret;
pub use stream::over_stream;
