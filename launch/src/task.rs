//! mpcrs-run as one task of a job that another launcher started:
//! `srun --mpi=pmi2 -n P mpcrs-run --restart DIR`. There is no job for
//! mpcrs-run to launch: srun started P tasks and serves their PMI-2. Every
//! task decides the same restart from the same checkpoint directory
//! ([`crate::restart::prepare`]) and becomes, in place, the process of its own
//! image, which keeps srun's PMI connection and joins the job through it.
//! Node-local files of other nodes that a task cannot see (private disks)
//! it asks of those nodes with srun, and brings over those its own process
//! needs.

use std::path::Path;

use mpcrs_settings::variables as env;

use crate::elsewhere::{Agent, OtherHosts};
use crate::options::Options;
use crate::restart::prepare;

/// This task's place in the job its launcher started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Task {
    pub rank: usize,
    pub size: usize,
}

/// The task this process is, if another PMI-2 launcher started it (a PMI
/// connection and `PMI_RANK`/`PMI_SIZE`, but none of mpcrs-run's variables).
pub fn of_another_launcher() -> Option<Task> {
    let var = |k: &str| std::env::var(k).ok();
    if var(env::PROCESSES.name).is_some()
        || (var(mpcrs_pmi::ENV_FD).is_none() && var(mpcrs_pmi::ENV_PORT).is_none())
    {
        return None;
    }
    let rank = var(mpcrs_pmi::ENV_RANK)?.trim().parse().ok()?;
    let size = var(mpcrs_pmi::ENV_SIZE)?.trim().parse().ok()?;
    (rank < size).then_some(Task { rank, size })
}

/// Becomes the process of `task`'s image of the job checkpointed in `dir`;
/// returns only to say why it cannot.
pub fn restore_in_place(args: &Options, dir: &Path, task: Task) -> String {
    use std::os::unix::process::CommandExt;
    if task.rank == 0 {
        // A job still checkpointing into the directory is refused; the
        // restored process 0 claims the directory for the new run.
        let holder = format!("mpcrs-run pid {}", std::process::id());
        if let Err(e) = mpcrs_cr::claim::claim(dir, &holder) {
            return e;
        }
    }
    // Tasks that rebuild an image from parity each write their own copy.
    let rebuilt = format!("rebuilt-task-{}", task.rank);
    // Inside a Slurm job, srun reaches the job's other nodes.
    let others = std::env::var("SLURM_JOB_ID").is_ok().then(|| OtherHosts {
        agent: Agent::Srun,
        own: std::env::var("SLURMD_NODENAME").unwrap_or_else(|_| mpcrs_settings::local_hostname()),
    });
    let mut prepared = match prepare(args, dir, args.epoch, &rebuilt, others.as_ref()) {
        Ok(p) => p,
        Err(e) => return e,
    };
    let processes = prepared.manifest.processes;
    if processes != task.size {
        return format!(
            "the launcher started {} tasks, but the checkpoint is of a job of {processes} \
             processes: start {processes} (srun -n {processes})",
            task.size
        );
    }
    if task.rank == 0 {
        mpcrs_settings::report!(
            info,
            "{} (each task restores its process)",
            prepared.announcement
        );
    }
    if let Some(others) = others.as_ref().filter(|_| prepared.reads_node_local()) {
        let into = match prepared.rebuilt_dir(dir, &rebuilt) {
            Ok(d) => d,
            Err(e) => return e,
        };
        let own = Some(others.own.clone());
        let rank = task.rank;
        let runs_on = |_| own.clone();
        if let Err(e) =
            prepared.bring_to(rank..rank + 1, &runs_on, &others.own, &others.agent, &into)
        {
            return e;
        }
    }
    let level = prepared.level(task.rank);
    if level != mpcrs_levels::Level::Local {
        mpcrs_settings::report!(info, "mpcrs-run: process {}: image from {level}", task.rank);
    }
    let own = prepared.own_env(task.rank);
    let cmd = &mut prepared.command;
    cmd.envs(own);
    if std::env::var_os(mpcrs_pmi::ENV_FD).is_some() {
        // The launcher's connection goes on in the restored process.
        cmd.env(mpcrs_cr::restore::CARRY_FDS_ENV, mpcrs_pmi::ENV_FD);
    }
    crate::processes::restorable(cmd);
    let e = cmd.exec();
    format!("cannot run {}: {e}", cmd.get_program().to_string_lossy())
}
