//! Checkpoint/restart of mpcrs processes (DESIGN.md section 7).
//!
//! Owns: the process image (format, the fork-based in-process dumper, the
//! restorer), dirty page tracking (userfaultfd write-protect + PAGEMAP_SCAN),
//! and the checkpoint directory with the crash-safe commit of an epoch.
//!
//! Must not touch: MPI. This crate knows nothing of ranks, communicators or
//! messages; the runtime drives it at a point where communication is quiesced.
//! Where copies of images go beyond their directory (partners, parity, levels)
//! is mpcrs-levels'.
//!
//! State now: the checkpoint directory, claimed by one job at a time
//! (`claim`), and its crash-safe commit protocol (`commit`), the image format with per-region checksums (`image`), the mappings
//! an image holds (`maps`), threads stopped at signal frames (`threads`), signal
//! dispositions and open files (`kernel_state`), the fork-based dumper (`dump`),
//! the restorer (`restore`), raw system calls (`sys`) and dirty-page tracking
//! (`dirty`), incremental images over it (`incremental`), the
//! compression of what images store (`compress`), and the copy in the stall
//! of the memory the program rewrites, so that the writer shares none of
//! its pages (`staging`).

pub mod claim;
pub mod commit;
pub mod compress;
pub mod dirty;
pub mod dump;
mod holes;
pub mod image;
pub mod incremental;
pub mod kernel_state;
pub mod maps;
pub mod restore;
mod staging;
pub(crate) mod sys;
pub mod threads;

pub use commit::{CheckpointDir, PendingEpoch};
pub use compress::Compression;
pub use dump::{dump_image, start_dump, DumpOptions, DumpReport, PendingDump, Snapshot, WriteCost};
pub use image::{verify, ImageError};
pub use incremental::Incremental;
pub use staging::held as staging_held;
