//! The launcher's machinery: the PMI-2 key-value store through which a job's
//! processes find each other, and the supervision of those processes.

pub mod hosts;
pub mod pmi2;
pub mod processes;
pub mod supervise;
