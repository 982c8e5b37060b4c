//! Deadlock reports: when every rank of the job waits in MPI and nothing is
//! in flight between processes, each rank is named with the call it is in and
//! what it waits for, and the job ends with [`DEADLOCK_STATUS`].
//!
//! Two parts: [`crate::waits`] (the base of the runtime, below this), what each rank of this process waits for, marked by
//! the blocking waits of p2p, requests and collectives (a rank that waits
//! anywhere else counts as running, so a wait that is not marked can only
//! delay a report, never make a false one); and [`detector`], the check: a
//! thread of process 0 (or of the only process) that looks every
//! [`detector::PERIOD`], and across processes asks every process for its
//! ranks' state and its frame counts in a round over the signaling network.
//! Two quiet rounds in a row with nothing changed anywhere in between (every
//! rank waiting or finished, every frame sent also handled, and no rank's
//! count of waits moved) are a deadlock: no rank can ever be woken.

pub(crate) mod detector;

pub use crate::waits::CallNote;

/// The exit status of a job ended by a deadlock report.
pub const DEADLOCK_STATUS: i32 = 85;
