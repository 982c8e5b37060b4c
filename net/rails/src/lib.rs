//! Network rails of mpcrs (DESIGN.md section 5, seed 002 section 5.2.1).
//!
//! Owns: rail drivers (shared memory between processes of a node, tcp through
//! socket2, ibverbs behind a cargo feature), endpoints, gates (minsize, maxsize,
//! boolean, probabilistic, msgtype), the per-remote-process endpoint list sorted by
//! priority, endpoint election and on-demand endpoint creation, and the parsing of
//! config/rails.xml.
//!
//! Must not touch: MPI matching or any MPI object (the runtime hands it bytes and
//! process numbers), checkpoint images, or the scheduler's internals (it only
//! registers progress hooks and wakes workers through the scheduler's public API).
//!
//! Ranks of the same process never reach this crate: they copy directly.
//!
//! State now: the configuration (parsing and validation), gates, the election of
//! endpoints, the tcp driver, the shm driver (rings and cross-memory copy,
//! assembled per process in `shm_rail`), and the ibverbs driver (queue pairs in
//! `verbs`, assembled per process in `verbs_rail`; untested: no RDMA device
//! here).

pub mod config;
pub mod election;
pub mod gate;
mod readiness;
pub mod shm;
pub mod shm_rail;
pub mod tcp;
pub mod verbs;
pub mod verbs_rail;
mod xml;

pub use config::{ConfigError, Driver, NetConfig, Rail, RailSet, Topology, DEFAULT_OPTION};
pub use gate::{Gate, MessageInfo, MessageKind};
pub use xml::Pos;

/// The rails configuration a process uses when none is named: the installed
/// copy (PREFIX/share/mpcrs/rails.xml beside PREFIX/bin of the running
/// program, mpcrs-run or mpcrs-exec), else the source tree's.
pub fn default_config_path() -> std::path::PathBuf {
    let installed = std::env::current_exe().ok().and_then(|e| {
        e.parent()
            .and_then(|d| d.parent())
            .map(|p| p.join("share/mpcrs/rails.xml"))
    });
    match installed {
        Some(p) if p.exists() => p,
        _ => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config/rails.xml"),
    }
}
