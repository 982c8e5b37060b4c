//! mpcrs-run, the launcher: its command line, the placement of processes on
//! hosts, starting and supervising them, the PMI-2 key-value store they meet
//! through (served with mpcrs-pmi), and the restart of a checkpointed job.
//!
//! Owns: the options of mpcrs-run, host lists and placement, the environment
//! each process starts with, process supervision (output, signals, exit
//! status, time limit), the restart policy (which epoch, which checks, which
//! failures restart the job by themselves), recovery in place (`in_place`:
//! a replacement process and a new run for the survivors), and the restart
//! of one process of a job another launcher (srun) started (`task`).
//!
//! Must not touch: MPI semantics or the fabric (it does not link the runtime:
//! it talks to processes only through their environment, PMI-2 and signals),
//! or the contents of images (it reads their headers through mpcrs-cr).

pub mod checkpoint_config;
pub mod elsewhere;
pub mod hosts;
pub mod in_place;
pub mod options;
pub mod output;
pub mod processes;
pub mod program;
pub mod relaunch;
pub mod restart;
pub mod service;
pub mod spellings;
pub mod supervise;
pub mod task;
pub mod verifier;
