//! What configures a job, as the launcher and its processes both read it: every
//! environment variable declared once with its default and meaning
//! ([`variables`]), the layout of ranks over processes ([`layout`]), the job
//! manifest that records a job in a checkpoint epoch so that it can be started
//! again ([`manifest`]), how the ranks' output is labelled or filed
//! ([`output`]), the variables that tell a rank its place
//! ([`rank_identity`]), the diagnostics switch ([`diagnostics`],
//! `MPCRS_LOG`), how the configuration files users name are read
//! ([`files`]), and sizes as users write them ([`size`]).
//!
//! Owns: the names and defaults of the `MPCRS_*` variables, the rank blocks of
//! each process, the manifest's format, how diagnostics are written.
//!
//! Must not touch: starting processes (mpcrs-launch), MPI semantics (mpcrs),
//! process images (mpcrs-cr). Every crate may depend on this one, so it depends
//! on none of them.

pub mod diagnostics;
pub mod files;
pub mod layout;
pub mod manifest;
pub mod output;
pub mod rank_identity;
pub mod size;
pub mod variables;

pub use layout::{local_hostname, rank_blocks};
pub use manifest::{JobManifest, LOADER_VARIABLES};
pub use size::parse_size;
pub use variables::Variable;
