//! `--report-bindings`: what a process says, at start, of where its worker
//! threads may run, read back from the kernel (each worker's allowed CPUs),
//! not from what was asked.

use crate::config::JobConfig;

/// Every worker thread of this process and the CPUs the kernel lets it run
/// on (`Cpus_allowed_list`), by worker index.
fn worker_cpus() -> Vec<(usize, String)> {
    let mut found: Vec<(usize, String)> = std::fs::read_dir("/proc/self/task")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|task| {
            let path = task.path();
            let comm = std::fs::read_to_string(path.join("comm")).ok()?;
            let index = comm.trim().strip_prefix("mpcrs-worker-")?.parse().ok()?;
            let status = std::fs::read_to_string(path.join("status")).ok()?;
            let cpus = status
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?
                .trim()
                .to_string();
            Some((index, cpus))
        })
        .collect();
    found.sort();
    found
}

/// Prints one line for this process: its ranks, host, and each worker's CPUs.
pub(crate) fn report(cfg: &JobConfig) {
    let ranks = cfg.local_ranks();
    let workers: Vec<String> = worker_cpus()
        .into_iter()
        .map(|(w, cpus)| format!("worker {w} on CPUs {cpus}"))
        .collect();
    mpcrs_settings::report!(
        info,
        "mpcrs: bindings: process {} (ranks {}-{}) on {}: {}",
        cfg.process,
        ranks.start,
        ranks.end.saturating_sub(1),
        mpcrs_settings::local_hostname(),
        workers.join(", ")
    );
}
