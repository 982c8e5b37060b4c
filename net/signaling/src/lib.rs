//! Signaling network of mpcrs (DESIGN.md section 5, seed 002 section 5.2.2).
//!
//! Owns: the ring bootstrap through the launcher's key-value store (only
//! `rank:host:port` entries), and control messages (on-demand connect requests,
//! rendezvous notices, checkpoint coordination) routed hop by hop to the connected
//! process minimizing |rank - destination|; topologies ring, none and fully.
//!
//! Must not touch: MPI semantics, payload data of MPI messages (those go over the
//! elected rail), checkpoint images.
//!
//! State now: the routing rule, the start-up connections of each topology, the
//! key-value entries of the ring, and the control-message format; the transport
//! comes with multi-process jobs.

pub mod control;
pub mod route;

pub use control::{Control, ControlKind};
pub use route::{initial_peers, next_hop, parse_ring_entry, ring_entry, RingEntry, StaticTopology};
