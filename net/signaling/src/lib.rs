//! Signaling network of mpcrs (DESIGN.md section 5, seed 002 section 5.2.2).
//!
//! Owns: the ring bootstrap through the launcher's key-value store (only
//! `rank:host:port` entries, and the job's secret where the launcher gave none), and control messages (on-demand connect requests,
//! rendezvous notices, checkpoint coordination) routed hop by hop to the connected
//! process minimizing |rank - destination|; topologies ring, none and fully.
//!
//! Must not touch: MPI semantics, payload data of MPI messages (those go over the
//! elected rail), checkpoint images.
//!
//! State now: the routing rule, the start-up links of each topology, the ring
//! entries, the control-message format, and the network itself over a tcp rail
//! (bootstrap from a key-value store, hop-by-hop forwarding, on-demand links).

pub mod control;
pub mod hello;
pub mod network;
pub mod route;
mod secret;

pub use control::{Control, ControlKind};
pub use mpcrs_pmi::KeyValueStore;
pub use network::{DataSink, Signaling, SignalingStats, Vanished, SIGNALING_RAIL};
pub use route::{initial_peers, next_hop, parse_ring_entry, ring_entry, RingEntry, StaticTopology};
pub use secret::job_secret;
