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
//! State now: empty; it is filled together with the multi-process launcher.
