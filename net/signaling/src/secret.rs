//! The job's secret, as a process of the job learns it: from its launcher
//! ([`JOB_SECRET`](mpcrs_settings::variables::JOB_SECRET), mpcrs-run), or,
//! under a launcher that makes none (Slurm's srun, MPICH's hydra), from
//! process 0 through the PMI-2 key-value store. The second way is only as
//! private as that launcher's own channels.

use std::io;

use mpcrs_auth::JobSecret;
use mpcrs_pmi::KeyValueStore;
use mpcrs_settings::variables as env;

/// The key-value store's key for a secret made by process 0.
const KEY: &str = "mpcrs-job-secret";

/// The job's secret for process `me`: the variable `var` gives, or the one
/// process 0 makes and shares through `kvs` (a collective of the job).
pub fn job_secret(
    var: &dyn Fn(&str) -> Option<String>,
    me: u32,
    kvs: &mut dyn KeyValueStore,
) -> io::Result<JobSecret> {
    if let Some(text) = var(env::JOB_SECRET.name) {
        return JobSecret::from_hex(&text).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{}: {e}", env::JOB_SECRET.name),
            )
        });
    }
    if me == 0 {
        kvs.put(KEY, &JobSecret::generate()?.to_hex())?;
    }
    kvs.fence()?;
    let text = kvs.get(KEY)?.ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::NotFound,
            "process 0 shared no job secret through the key-value store",
        )
    })?;
    JobSecret::from_hex(&text).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}
