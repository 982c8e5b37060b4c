//! The settings of a job as this process reads them from the environment
//! mpcrs-run gives it (or from the one a restorer hands over).

use mpcrs_settings::variables as env;

/// Variable `name` of `var` as a positive integer, if set.
fn positive(var: &dyn Fn(&str) -> Option<String>, name: &str) -> Result<Option<usize>, String> {
    match var(name) {
        Some(v) => v
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|&x| x > 0)
            .map(Some)
            .ok_or_else(|| format!("{name}={v:?} is not a positive integer")),
        None => Ok(None),
    }
}

/// Workers of a task of a Slurm job step: the CPUs Slurm gave the task
/// (`srun -c N`, 1 by default), as an OpenMP program takes
/// `SLURM_CPUS_PER_TASK` threads; `None` outside a step.
fn slurm_cpus_per_task(var: &dyn Fn(&str) -> Option<String>) -> Result<Option<usize>, String> {
    if var("SLURM_STEP_ID").is_none() {
        return Ok(None);
    }
    Ok(Some(positive(var, "SLURM_CPUS_PER_TASK")?.unwrap_or(1)))
}

/// Where the processes of a job started by another PMI launcher (srun) run,
/// as this process learned it from that launcher on joining the job (see
/// `remote::launcher`): mpcrs-run says so in `MPCRS_NODES` instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Node of every process.
    pub(crate) nodes: Vec<u32>,
    /// Name of every node.
    pub(crate) node_names: Vec<String>,
}

/// The latest layout learned (a restart under another launcher learns a new one).
static LEARNED: std::sync::Mutex<Option<Layout>> = std::sync::Mutex::new(None);

pub(crate) fn set_learned_layout(layout: Layout) {
    *LEARNED.lock().unwrap_or_else(|e| e.into_inner()) = Some(layout);
}

fn learned_layout() -> Option<Layout> {
    LEARNED.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Settings of a job, normally read from the environment `mpcrs-run` sets.
#[derive(Debug, Clone)]
pub struct JobConfig {
    /// Ranks of the whole job.
    pub ranks: usize,
    /// Processes of the job and this one's index among them.
    pub processes: usize,
    pub process: usize,
    /// Node of every process (all 0 in a one-node job).
    pub nodes: Vec<u32>,
    /// Host name of every node (by node number).
    pub node_names: Vec<String>,
    /// `None`: one worker per CPU of the process's cpuset.
    pub workers: Option<usize>,
    /// Workers stay where the kernel puts them: another launcher left the
    /// process all of a node's CPUs but gave it fewer workers (`srun -c`), so
    /// the node's other processes have the same CPUs, and pinned, every
    /// process's worker 0 would share the first one.
    pub unpinned: bool,
    /// Another PMI-2 launcher (srun) started the process, not mpcrs-run.
    pub foreign_launcher: bool,
    /// `--bind-to` (MPCRS_BIND_TO); `None`: the scheduler's default.
    pub binding: Option<mpcrs_scheduler::Binding>,
    /// `--report-bindings`: the process prints its workers' CPUs at start.
    pub report_bindings: bool,
    pub stack_size: usize,
    /// Stacks given a guard page (MPCRS_STACK_GUARDS); the scheduler's default if unset.
    pub stack_guards: Option<usize>,
    /// `None`: the scheduler's default (see [`env::YIELD_WHEN_IDLE`]).
    pub yield_when_idle: Option<bool>,
    /// The job takes checkpoints (it was given a checkpoint directory).
    pub checkpoints: bool,
    /// A deadlock ends the job with a report (see [`env::DEADLOCK_CHECK`]).
    pub deadlock_check: bool,
    /// `--recover in-place`: a process's death starts a new run of every
    /// rank in the surviving processes (see recovery/).
    pub recover_in_place: bool,
    /// The run of the job this process starts in ([`env::RUN`]).
    pub run: u64,
}

impl JobConfig {
    /// World ranks of each process (contiguous blocks).
    pub fn blocks(&self) -> Vec<std::ops::Range<usize>> {
        mpcrs_settings::rank_blocks(self.ranks, self.processes)
    }

    /// World ranks of this process.
    pub fn local_ranks(&self) -> std::ops::Range<usize> {
        self.blocks()[self.process].clone()
    }

    /// Reads the job's settings; a program started without `mpcrs-run` is a job of
    /// one rank (as an MPI singleton).
    pub fn from_env() -> Result<JobConfig, String> {
        JobConfig::from_variables(|k| std::env::var(k).ok())
    }

    /// [`JobConfig::from_env`] with the variables of `var`.
    pub fn from_variables(var: impl Fn(&str) -> Option<String>) -> Result<JobConfig, String> {
        let read = |name: &str| positive(&var, name);
        // A process started by another PMI-2 launcher (Slurm's srun, hydra)
        // learns its place from PMI's variables, and runs one rank unless
        // MPCRS_RANKS asks for more.
        let by_pmi = var(mpcrs_pmi::ENV_FD).is_some() || var(mpcrs_pmi::ENV_PORT).is_some();
        let foreign_launcher = by_pmi && var(env::PROCESSES.name).is_none();
        let (processes_var, process_var) = match var(env::PROCESSES.name) {
            None if by_pmi => (mpcrs_pmi::ENV_SIZE, mpcrs_pmi::ENV_RANK),
            _ => (env::PROCESSES.name, env::PROCESS.name),
        };
        let processes = read(processes_var)?.unwrap_or(1);
        let ranks = read(env::RANKS.name)?.unwrap_or(processes);
        let process = match var(process_var) {
            Some(v) => v
                .trim()
                .parse::<usize>()
                .ok()
                .filter(|&p| p < processes)
                .ok_or_else(|| format!("{process_var}={v:?} is not in 0..{processes}"))?,
            None => 0,
        };
        if processes > ranks {
            return Err(format!("{processes} processes for {ranks} ranks"));
        }
        let learned = learned_layout().filter(|l| foreign_launcher && l.nodes.len() == processes);
        let nodes = match var(env::NODES.name) {
            Some(v) => {
                let nodes: Vec<u32> = v
                    .split(',')
                    .map(|x| x.trim().parse::<u32>())
                    .collect::<Result<_, _>>()
                    .map_err(|_| {
                        format!("{}={v:?} is not a list of node numbers", env::NODES.name)
                    })?;
                if nodes.len() != processes {
                    return Err(format!(
                        "{}={v:?} names {} nodes for {processes} processes",
                        env::NODES.name,
                        nodes.len()
                    ));
                }
                nodes
            }
            // Under another launcher, what this process learned from it
            // when it joined the job (one node until then).
            None => match &learned {
                Some(l) => l.nodes.clone(),
                None => vec![0; processes],
            },
        };
        let node_names = match var(env::NODE_NAMES.name) {
            Some(v) => v.split(',').map(|n| n.trim().to_string()).collect(),
            None => match learned {
                Some(l) => l.node_names,
                None => vec![mpcrs_settings::local_hostname()],
            },
        };
        if let Some(n) = nodes.iter().find(|&&n| n as usize >= node_names.len()) {
            return Err(format!(
                "{}={:?} names no host for node {n}",
                env::NODE_NAMES.name,
                node_names.join(",")
            ));
        }
        let yield_when_idle = match var(env::YIELD_WHEN_IDLE.name).as_deref().map(str::trim) {
            None => None,
            Some("1") => Some(true),
            Some("0") => Some(false),
            Some(v) => {
                return Err(format!(
                    "{}={v:?} is neither 0 nor 1",
                    env::YIELD_WHEN_IDLE.name
                ))
            }
        };
        let deadlock_check = match var(env::DEADLOCK_CHECK.name).as_deref().map(str::trim) {
            None | Some("on") => true,
            Some("off") => false,
            Some(v) => {
                return Err(format!(
                    "{}={v:?} is neither on nor off",
                    env::DEADLOCK_CHECK.name
                ))
            }
        };
        let recover_in_place = match var(env::RECOVER.name).as_deref().map(str::trim) {
            None | Some("") | Some("relaunch") => false,
            Some("in-place") => true,
            Some(v) => {
                return Err(format!(
                    "{}={v:?} is neither in-place nor relaunch",
                    env::RECOVER.name
                ))
            }
        };
        // A check across processes cannot tell a dead process from a
        // deadlocked one: recovery in place answers the first.
        let deadlock_check = deadlock_check && !recover_in_place;
        let run = read(env::RUN.name)?.unwrap_or(1) as u64;
        let workers = match read(env::WORKERS.name)? {
            Some(w) => Some(w),
            None if foreign_launcher => slurm_cpus_per_task(&var)?,
            None => None,
        };
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let unpinned = foreign_launcher && workers.is_some_and(|w| w < cpus);
        let binding = match var(env::BIND_TO.name) {
            None => None,
            Some(v) => Some(
                mpcrs_scheduler::Binding::parse(v.trim())
                    .map_err(|e| format!("{}: {e}", env::BIND_TO.name))?,
            ),
        };
        Ok(JobConfig {
            binding,
            report_bindings: var(env::REPORT_BINDINGS.name).is_some(),
            deadlock_check,
            recover_in_place,
            run,
            ranks,
            processes,
            process,
            nodes,
            node_names,
            yield_when_idle,
            checkpoints: var(env::CHECKPOINT_DIR.name).is_some(),
            workers,
            unpinned,
            foreign_launcher,
            stack_size: read(env::STACK_SIZE.name)?.unwrap_or(mpcrs_scheduler::DEFAULT_STACK_SIZE),
            stack_guards: match var(env::STACK_GUARDS.name) {
                Some(v) => Some(v.trim().parse::<usize>().map_err(|_| {
                    format!("{}={v:?} is not a number of stacks", env::STACK_GUARDS.name)
                })?),
                None => None,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::JobConfig;

    fn config(vars: &[(&str, &str)]) -> Result<JobConfig, String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        JobConfig::from_variables(move |k| {
            vars.iter()
                .find(|(name, _)| name == k)
                .map(|(_, v)| v.clone())
        })
    }

    /// A task of a Slurm step: PMI's connection and place, Slurm's step.
    const TASK: [(&str, &str); 4] = [
        ("PMI_FD", "7"),
        ("PMI_RANK", "1"),
        ("PMI_SIZE", "2"),
        ("SLURM_STEP_ID", "0"),
    ];

    #[test]
    fn a_slurm_task_takes_its_place_from_pmi_and_its_workers_from_its_cpus() {
        let c = config(&TASK).unwrap();
        assert_eq!((c.process, c.processes, c.ranks), (1, 2, 2));
        assert!(c.foreign_launcher);
        // One CPU per task unless srun -c says otherwise.
        assert_eq!(c.workers, Some(1));
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(c.unpinned, cpus > 1);
        let mut with_c = TASK.to_vec();
        with_c.push(("SLURM_CPUS_PER_TASK", "3"));
        assert_eq!(config(&with_c).unwrap().workers, Some(3));
        with_c.push(("MPCRS_WORKERS", "2"));
        assert_eq!(
            config(&with_c).unwrap().workers,
            Some(2),
            "MPCRS_WORKERS wins"
        );
        with_c.retain(|(k, _)| *k != "MPCRS_WORKERS" && *k != "SLURM_CPUS_PER_TASK");
        with_c.push(("SLURM_CPUS_PER_TASK", "none"));
        let e = config(&with_c).unwrap_err();
        assert!(e.contains("SLURM_CPUS_PER_TASK=\"none\""), "{e}");
    }

    #[test]
    fn processes_of_mpcrs_run_keep_its_settings() {
        let c = config(&[
            ("PMI_FD", "7"),
            ("MPCRS_PROCESSES", "2"),
            ("MPCRS_PROCESS", "1"),
            ("MPCRS_RANKS", "8"),
            ("SLURM_STEP_ID", "0"),
        ])
        .unwrap();
        assert!(!c.foreign_launcher);
        assert!(!c.unpinned);
        assert_eq!(
            c.workers, None,
            "mpcrs-run inside an allocation sets its own"
        );
    }
}
