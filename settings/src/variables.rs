//! Every environment variable mpcrs reads, declared once: its name, the
//! mpcrs-run option that sets it, its default and what it does. `mpcrs-run
//! --help` and the README's settings table list [`ALL`]; a test checks that
//! the README names every one.

/// One environment variable of mpcrs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Variable {
    pub name: &'static str,
    /// The mpcrs-run option that sets it, or who else does ("" when only the
    /// user sets it).
    pub set_by: &'static str,
    /// What holds when it is not set.
    pub default: &'static str,
    pub doc: &'static str,
}

impl Variable {
    /// Its value in this process's environment, if set and valid Unicode.
    pub fn get(&self) -> Option<String> {
        std::env::var(self.name).ok()
    }

    /// Its value in this process's environment, if set.
    pub fn get_os(&self) -> Option<std::ffi::OsString> {
        std::env::var_os(self.name)
    }

    pub fn is_set(&self) -> bool {
        std::env::var_os(self.name).is_some()
    }
}

macro_rules! variables {
    ($($(#[$meta:meta])* $id:ident = $name:literal, set_by $set_by:literal, default $default:literal, $doc:literal;)*) => {
        $($(#[$meta])* pub const $id: Variable = Variable {
            name: $name,
            set_by: $set_by,
            default: $default,
            doc: $doc,
        };)*
        /// Every variable, in the order of the README's table.
        pub const ALL: &[Variable] = &[$($id),*];
    };
}

variables! {
    RANKS = "MPCRS_RANKS", set_by "-n", default "1",
        "Ranks of the whole job.";
    PROCESSES = "MPCRS_PROCESSES", set_by "-p, --process-mode", default "1",
        "Processes of the job; ranks are spread over them in contiguous blocks.";
    PROCESS = "MPCRS_PROCESS", set_by "mpcrs-run, per process", default "0",
        "This process's index among the job's processes.";
    NODES = "MPCRS_NODES", set_by "mpcrs-run (--host, --hostfile)", default "all 0",
        "The node of every process, comma-separated: processes of one node may share memory.";
    NODE_NAMES = "MPCRS_NODE_NAMES", set_by "mpcrs-run", default "this host for node 0",
        "The host name of every node, comma-separated, by node number (for messages and manifests).";
    WORKERS = "MPCRS_WORKERS", set_by "-c", default "one per CPU of the cpuset",
        "Worker threads per process (mpcrs-run sets 1 when a host has more processes than CPUs).";
    STACK_SIZE = "MPCRS_STACK_SIZE", set_by "--stack-size", default "1 MiB (8 MiB for C programs)",
        "Stack size of each rank, in bytes.";
    STACK_GUARDS = "MPCRS_STACK_GUARDS", set_by "the environment", default "a quarter of vm.max_map_count",
        "Rank stacks per process given a guard page (two memory mappings each); the others get a red zone and a canary checked at every switch.";
    YIELD_WHEN_IDLE = "MPCRS_YIELD_WHEN_IDLE", set_by "mpcrs-run, when a host has more processes than CPUs", default "1 when a process has more workers than CPUs, or the job's processes on this machine do together",
        "1: waiting threads yield their CPU between polls; 0: they spin.";
    BIND_TO = "MPCRS_BIND_TO", set_by "--bind-to", default "core (none where workers share CPUs)",
        "core: each worker thread on its own CPU; socket: on the CPUs of its CPU's package; none: where the kernel puts it (and mpcrs-run gives processes no CPU share).";
    REPORT_BINDINGS = "MPCRS_REPORT_BINDINGS", set_by "--report-bindings", default "unset",
        "Set: each process prints the CPUs each of its worker threads may run on, at start.";
    NET = "MPCRS_NET", set_by "--net", default "default",
        "The network option (a <cli_option> of the rails configuration) the processes use.";
    NET_CONFIG = "MPCRS_NET_CONFIG", set_by "--config", default "the installed or source tree's config/rails.xml",
        "The rails configuration file.";
    DEADLOCK_CHECK = "MPCRS_DEADLOCK_CHECK", set_by "--deadlock-check", default "on",
        "on: when every rank waits in MPI and nothing is in flight, each rank is named with its call and what it waits for, and the job ends with status 85; off: a deadlocked job waits (idle) until it is killed.";
    NET_STATS = "MPCRS_NET_STATS", set_by "--net-stats", default "unset",
        "Set: each process prints its endpoints, messages and bytes per rail at the end.";
    OUTPUT_LABELS = "MPCRS_OUTPUT_LABELS", set_by "--tag-output, --prepend-rank", default "unset: lines as written",
        "tag: each line of a rank's stdout and stderr is prefixed [1,RANK]<stdout>: or [1,RANK]<stderr>:; rank: [RANK] (read by processes of several ranks; mpcrs-run labels the others').";
    OUTPUT_DIR = "MPCRS_OUTPUT_DIR", set_by "--output-filename", default "unset: output to mpcrs-run's",
        "Each rank's stdout and stderr go to DIR/1/rank.RANK/stdout and stderr (read by processes of several ranks; mpcrs-run redirects the others').";
    EXPORTED = "MPCRS_EXPORTED", set_by "-x", default "empty",
        "Names of the variables passed with -x (comma-separated), recorded in checkpoint manifests.";
    CHECKPOINT_DIR = "MPCRS_CHECKPOINT_DIR", set_by "--checkpoint, --restart", default "unset: MPIX_Checkpoint returns IGNORE",
        "Directory of the job's checkpoint epochs.";
    CHECKPOINT_LOCAL = "MPCRS_CHECKPOINT_LOCAL", set_by "--checkpoint-local, --restart", default "a directory under TMPDIR named after the user and the checkpoint directory",
        "Node-local storage of the checkpoints (L1): each node keeps its processes' images in node-N/ below it.";
    CHECKPOINT_KEEP = "MPCRS_CHECKPOINT_KEEP", set_by "--keep", default "2",
        "Complete epochs kept in the checkpoint directory.";
    CHECKPOINT_LEVELS = "MPCRS_CHECKPOINT_LEVELS", set_by "--levels", default "1:1,4:1 on one host, 1:1,2:1,4:1 on several",
        "Which levels each checkpoint gets: LEVEL:EVERY,... (every EVERY-th checkpoint at LEVEL; L1 at all).";
    CHECKPOINT_GROUP_SIZE = "MPCRS_CHECKPOINT_GROUP_SIZE", set_by "--group-size", default "4",
        "Processes per Reed-Solomon group (L3).";
    POST_PROCESSING = "MPCRS_POST_PROCESSING", set_by "--post-processing", default "helpers",
        "helpers: levels L2-L4 are made by helper tasks while the ranks go on; inline: the checkpoint returns once they are made.";
    CKPT_SERVICE = "MPCRS_CKPT_SERVICE", set_by "--ckpt-service", default "unset: CRaaS data is kept by each process and flushed to MPCRS_CHECKPOINT_DIR",
        "Addresses (IP:PORT, comma-separated) of the checkpoint services (mpcrs-ckptd) that hold the ranks' CRaaS checkpoints in memory; rank R uses the (R mod count)-th.";
    CKPT_SERVICE_SECRET = "MPCRS_CKPT_SERVICE_SECRET", set_by "mpcrs-run with --ckpt-service, once for all its runs (on other hosts through the launch agent's standard input)", default "unset",
        "The secret a process proves to the checkpoint services (they outlive each run's own job secret).";
    CKPT_SERVICE_FLUSH = "MPCRS_CKPT_SERVICE_FLUSH", set_by "--ckpt-service-flush", default "10,30s",
        "When committed CRaaS data goes to files in the checkpoint directory: after K commits of a checkpoint (K), T seconds after its first unflushed commit (Ts), both (K,Ts), or never (only at the end).";
    RECOVER = "MPCRS_RECOVER", set_by "--recover", default "unset: a failed process ends the run",
        "in-place: when a process of the job dies, the others are not ended; every rank starts again from main in a fresh copy of the program, with a replacement process in the failed one's place, and finds its data with CRaaS_Rst_* or FTI_Recover.";
    RECOVERY_PORT = "MPCRS_RECOVERY_PORT", set_by "mpcrs-run with --recover in-place", default "unset",
        "Where mpcrs-run tells the job's processes of a failure and of the new run they join: IP:PORT, or a port of the host of the key-value store (PMI_PORT's, else this one).";
    RUN = "MPCRS_RUN", set_by "mpcrs-run with --recover in-place", default "1",
        "The run of the job a process starts in: 1, then one more after each recovery in place.";
    CHECKPOINT_INTERVAL = "MPCRS_CHECKPOINT_INTERVAL", set_by "--checkpoint-interval", default "unset: no periodic checkpoint",
        "Seconds between checkpoints taken wherever the program is, or auto: Daly's optimum for the measured cost of the job's checkpoints and MPCRS_MTBF, never more than 1% of the time in checkpoints.";
    MTBF = "MPCRS_MTBF", set_by "--mtbf", default "five years over the job's nodes",
        "Mean time between failures, in seconds, that MPCRS_CHECKPOINT_INTERVAL=auto plans for.";
    RESTORE = "MPCRS_RESTORE", set_by "--restart, per process", default "unset",
        "The image a process restores before anything else runs.";
    RESTORE_CHAIN = "MPCRS_RESTORE_CHAIN", set_by "--restart, per process, for an incremental image", default "unset: DIR/epoch-J/ beside the image",
        "The parent images of the image to restore, newest first, one path per line.";
    RESTORE_VOUCHED = "MPCRS_RESTORE_VOUCHED", set_by "--restart, per process", default "unset: every image is checksummed",
        "Images mpcrs-run has just verified whole, one per line with the file's identity: the restore does not checksum them again unless they changed since.";
    FULL_EVERY = "MPCRS_FULL_EVERY", set_by "--full-every", default "8",
        "At most this many images in a chain: a full image, then incremental ones (1: every image full).";
    CHECKPOINT_STAGING = "MPCRS_CHECKPOINT_STAGING", set_by "--checkpoint-staging", default "auto",
        "Memory each process keeps for copying, in a checkpoint's stall, the large regions the program rewrites, so that its writes after the checkpoint take no copy-on-write fault: auto (half the memory available at each checkpoint, what staging holds included, shared by the host's processes), off, or a size (K, M, G).";
    COMPRESS = "MPCRS_COMPRESS", set_by "--compress", default "none",
        "What images store is compressed: none, zstd (level 3) or zstd:LEVEL (-7 to 19).";
    JOB_KEY = "MPCRS_JOB_KEY", set_by "mpcrs-run", default "unset: images name no job",
        "The job's key (hex), made at its first run and kept by every restart: images and manifests record it, and a restart refuses an image of another job.";
    JOB_SECRET = "MPCRS_JOB_SECRET", set_by "mpcrs-run, per launch (on other hosts through the launch agent's standard input)", default "unset: process 0 makes one and hands it out through the PMI-2 key-value store",
        "The job's secret (64 hex digits): every tcp link of the job and the PMI-2 port of a job across hosts run a challenge-response handshake keyed by it before anything else is read.";
    RESTORE_CARRY_FDS = "MPCRS_RESTORE_CARRY_FDS", set_by "--restart, several processes", default "unset",
        "Variables naming descriptors the restored process keeps (its new PMI-2 connection).";
    LAUNCH_AGENT = "MPCRS_LAUNCH_AGENT", set_by "", default "ssh -o BatchMode=yes",
        "Default of --launch-agent: the command that runs a shell command on another host.";
    CC = "MPCRS_CC", set_by "", default "cc",
        "The C compiler mpcrs-cc runs.";
    CXX = "MPCRS_CXX", set_by "", default "c++",
        "The C++ compiler mpcrs-cxx runs.";
    FC = "MPCRS_FC", set_by "", default "gfortran",
        "The Fortran compiler mpcrs-fort (mpifort, mpif90, mpif77) runs.";
    WTIME = "MPCRS_WTIME", set_by "", default "the CPU's time-stamp counter where the kernel keeps time with it (clocksource tsc)",
        "clock: MPI_Wtime reads CLOCK_MONOTONIC at every call (23-30 ns here) instead of the time-stamp counter between samples of it (10-14 ns).";
    LOG = "MPCRS_LOG", set_by "", default "unset: no diagnostics",
        "Diagnostics filter, as RUST_LOG: a level (error, warn, info, debug, trace) or module=level, comma-separated.";
    /// MPICH's mpiexec convention, honoured by mpcrs-run.
    TIMEOUT = "MPIEXEC_TIMEOUT", set_by "", default "unset: no limit",
        "Seconds after which mpcrs-run ends the job (exit status 124).";
}

/// The stack of a rank of a C program when MPCRS_STACK_SIZE does not say:
/// C programs size stack arrays for an OS thread's 8 MiB; only the pages a
/// rank touches are committed. (Rust programs: the scheduler's 1 MiB.)
pub const C_STACK_SIZE: u64 = 8 << 20;

/// [`ALL`] as mpcrs-run's `--help` shows it.
pub fn help_text() -> String {
    let mut s = String::from("Environment variables:\n");
    for v in ALL {
        let set_by = if v.set_by.is_empty() {
            String::new()
        } else {
            format!(" (set by {})", v.set_by)
        };
        s.push_str(&format!(
            "  {}{set_by}\n      {} Default: {}.\n",
            v.name, v.doc, v.default
        ));
    }
    s
}

/// [`ALL`] as a Markdown table (the README's).
pub fn markdown_table() -> String {
    let mut s = String::from("| variable | set by | default | meaning |\n|---|---|---|---|\n");
    for v in ALL {
        let set_by = if v.set_by.is_empty() { "you" } else { v.set_by };
        s.push_str(&format!(
            "| `{}` | {set_by} | {} | {} |\n",
            v.name, v.default, v.doc
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_documented() {
        let mut names: Vec<&str> = ALL.iter().map(|v| v.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ALL.len());
        assert!(ALL
            .iter()
            .all(|v| !v.doc.is_empty() && !v.default.is_empty()));
        let help = help_text();
        assert!(ALL.iter().all(|v| help.contains(v.name)));
    }
}
