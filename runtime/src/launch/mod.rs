//! What the launcher (mpcrs-run) shares with the processes it starts: the PMI-2
//! key-value store through which a job's processes find each other.

pub mod pmi2;
