//! mpcrs-run's command line, declared once: every option with its default and
//! help line (the README's table lists them, `mpcrs-run --help` prints them with
//! every environment variable), and the checks of option values.

use clap::Parser;

#[derive(Parser, Debug, Clone)]
#[command(
    name = "mpcrs-run",
    version,
    about = "Run an MPI job with ranks as user-level threads",
    trailing_var_arg = true,
    group = clap::ArgGroup::new("checkpoints").args(["checkpoint", "restart"]).multiple(false),
    after_help = mpcrs_settings::variables::help_text()
)]
pub struct Options {
    /// Number of MPI ranks.
    #[arg(short = 'n', long = "np", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=MAX_RANKS))]
    pub ranks: u32,

    /// Number of processes; ranks are spread over them in contiguous blocks.
    #[arg(short = 'p', long = "processes", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=MAX_RANKS))]
    pub processes: u32,

    /// One rank per process (as -p equal to -n), for code that cannot share a
    /// process with other ranks.
    #[arg(long = "process-mode", conflicts_with = "processes")]
    pub process_mode: bool,

    /// At the end, each process prints its endpoints, messages and bytes per
    /// rail, and the control messages it routed with their hop counts.
    #[arg(long = "net-stats")]
    pub net_stats: bool,

    /// When every rank waits in MPI and nothing is in flight: on (name each
    /// rank's call and what it waits for, end the job with status 85) or off
    /// (wait until killed).
    #[arg(long = "deadlock-check", value_name = "ON|OFF", default_value = "on", value_parser = ["on", "off"])]
    pub deadlock_check: String,

    /// Hosts to start processes on: NAME[:SLOTS],... (others through the launch agent).
    #[arg(long = "host", value_name = "HOSTS", conflicts_with = "hostfile")]
    pub host: Option<String>,

    /// Ranks per host (MPICH's -ppn): with --host or --hostfile, each host
    /// takes one process of N ranks (with --process-mode, N processes), in
    /// host order, as many hosts as the ranks need.
    #[arg(long = "ppn", value_name = "N", conflicts_with = "processes", value_parser = clap::value_parser!(u32).range(1..))]
    pub ppn: Option<u32>,

    /// How processes are laid on the hosts (as Open MPI's mpirun): slot,
    /// core or socket (each host's slots in order), or node (one process per
    /// host in turn); `:PE=n` gives each process n worker threads (as -c n).
    #[arg(long = "map-by", value_name = "POLICY[:PE=n]", value_parser = parse_map_by)]
    pub map_by: Option<MapSpec>,

    /// File naming the hosts, one per line: NAME [slots=N] or NAME:N.
    #[arg(long = "hostfile", value_name = "FILE")]
    pub hostfile: Option<std::path::PathBuf>,

    /// Command that runs a shell command on another host, given the host and the
    /// command (default: $MPCRS_LAUNCH_AGENT, else "ssh -o BatchMode=yes").
    #[arg(long = "launch-agent", value_name = "CMD")]
    pub launch_agent: Option<String>,

    /// Worker threads per process (default: one per CPU of the cpuset).
    #[arg(short = 'c', long = "cores", value_parser = clap::value_parser!(u32).range(1..))]
    pub workers: Option<u32>,

    /// End the job after SECONDS with status 124 (as Open MPI's mpirun; MPICH's
    /// MPIEXEC_TIMEOUT does the same).
    #[arg(long = "timeout", value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: Option<u64>,

    /// Directory the processes start in (as Open MPI's --wdir and MPICH's
    /// -wdir); paths given to mpcrs-run stay relative to where it was started.
    #[arg(long = "wdir", value_name = "DIR")]
    pub wdir: Option<std::path::PathBuf>,

    /// Where worker threads run: core (each on its own CPU), socket (on the
    /// CPUs of its package) or none (where the kernel puts them; processes
    /// get no CPU share either), as Open MPI's mpirun.
    #[arg(long = "bind-to", value_name = "core|socket|none", value_parser = ["core", "socket", "none"])]
    pub bind_to: Option<String>,

    /// Each process prints, at start, the CPUs each of its worker threads may
    /// run on.
    #[arg(long = "report-bindings")]
    pub report_bindings: bool,

    /// Label every line of output with the rank that wrote it, as Open MPI's
    /// mpirun: [1,RANK]<stdout>: or [1,RANK]<stderr>: (-tag-output too).
    #[arg(long, conflicts_with = "prepend_rank")]
    pub tag_output: bool,

    /// Label every line of output with the rank that wrote it, as MPICH's
    /// mpiexec: [RANK] (-prepend-rank too).
    #[arg(short = 'l', long = "prepend-rank")]
    pub prepend_rank: bool,

    /// Write each rank's stdout and stderr to DIR/1/rank.RANK/stdout and
    /// DIR/1/rank.RANK/stderr instead of the terminal, as Open MPI's mpirun
    /// (-output-filename too).
    #[arg(long = "output-filename", value_name = "DIR")]
    pub output_filename: Option<std::path::PathBuf>,

    /// Network option of the rails configuration (one of its <cli_option> names).
    #[arg(long = "net", value_name = "NAME", default_value = mpcrs_rails::DEFAULT_OPTION)]
    pub net: String,

    /// Rails configuration (default: the project's config/rails.xml).
    #[arg(long = "config", value_name = "FILE")]
    pub config: Option<std::path::PathBuf>,

    /// Pass an environment variable to the job: VAR (its value here) or VAR=VALUE.
    #[arg(short = 'x', value_name = "VAR[=VAL]")]
    pub export: Vec<String>,

    /// Enable checkpoints into DIR: MPIX_Checkpoint writes an epoch there (without
    /// it, MPIX_Checkpoint returns IGNORE).
    #[arg(long = "checkpoint", value_name = "DIR")]
    pub checkpoint: Option<std::path::PathBuf>,

    /// Also checkpoint every SECONDS, wherever the program is (as SIGUSR1 to
    /// mpcrs-run does): unmodified programs get checkpoints too. `auto`: at
    /// the interval the job's measured checkpoint cost and the MTBF call for
    /// (Daly's optimum, never more than 1% of the time in checkpoints).
    #[arg(long = "checkpoint-interval", value_name = "SECONDS|auto", requires = "checkpoint", value_parser = parse_interval)]
    pub checkpoint_interval: Option<String>,

    /// With --checkpoint-interval auto: the job's mean time between failures
    /// (SECONDS, or with a suffix s, m, h, d; default: five years over the
    /// job's nodes).
    #[arg(long = "mtbf", value_name = "DURATION", requires = "checkpoint_interval", value_parser = parse_duration)]
    pub mtbf: Option<f64>,

    /// Node-local storage for checkpoints (L1): each node writes its
    /// processes' images under DIR/node-N/ (default: $MPCRS_CHECKPOINT_LOCAL,
    /// else a directory under TMPDIR named after the user and the checkpoint
    /// directory). The checkpoint
    /// directory gets a copy of each (L4), made by helper tasks while the job
    /// goes on.
    #[arg(
        long = "checkpoint-local",
        value_name = "DIR",
        requires = "checkpoints"
    )]
    pub checkpoint_local: Option<std::path::PathBuf>,

    /// Which levels each checkpoint gets: LEVEL:EVERY,... as FTI's ckpt_l1..l4,
    /// counted in checkpoints (1:1,2:2,3:4,4:8: every checkpoint L1, every 2nd
    /// L2 partner copy, every 4th L3 Reed-Solomon parity, every 8th L4 global
    /// copy). Default: 1:1,4:1 on one host, 1:1,2:1,4:1 on several.
    #[arg(long = "levels", value_name = "LEVEL:EVERY,...", requires = "checkpoint", value_parser = parse_schedule)]
    pub levels: Option<mpcrs_levels::Schedule>,

    /// Processes per Reed-Solomon group (L3), on distinct hosts where the
    /// job's hosts allow; any half of a group can be lost and rebuilt.
    #[arg(long = "group-size", value_name = "G", default_value_t = 4, requires = "checkpoint", value_parser = clap::value_parser!(u32).range(2..))]
    pub group_size: u32,

    /// Who makes levels L2-L4 after a checkpoint: helpers (helper tasks while
    /// the ranks go on) or inline (the checkpoint returns once they are made).
    #[arg(long = "post-processing", value_name = "HOW", default_value = "helpers", requires = "checkpoint", value_parser = ["helpers", "inline"])]
    pub post_processing: String,

    /// Checkpoint settings from FILE: lines "option = value" naming the long
    /// options above without their dashes (checkpoint, checkpoint-interval,
    /// checkpoint-local, levels, group-size, post-processing, keep, full-every,
    /// max-restarts);
    /// "#"
    /// starts a comment. Options on the command line win.
    #[arg(long = "checkpoint-config", value_name = "FILE")]
    pub checkpoint_config: Option<std::path::PathBuf>,

    /// Complete epochs kept in the checkpoint directory.
    #[arg(long = "keep", value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..))]
    pub keep: u32,

    /// Images in a chain: a full image, then up to N-1 incremental ones that
    /// store only the pages written since the image before (1: every image
    /// full, writes not tracked). Epochs an incremental one needs are kept.
    #[arg(long = "full-every", value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..))]
    pub full_every: u32,

    /// Compression of what images store: none, zstd (level 3) or zstd:LEVEL
    /// (-7 to 19; negative levels are faster).
    #[arg(long, value_name = "none|zstd[:LEVEL]", value_parser = parse_compression)]
    pub compress: Option<String>,

    /// Memory each process keeps for copying, in a checkpoint's stall, the
    /// large regions the program rewrites, so that its writes after the
    /// checkpoint take no copy-on-write fault: auto (half the memory
    /// available at each checkpoint, shared by the host's processes), off,
    /// or a size (K, M, G).
    #[arg(long, value_name = "auto|off|SIZE", value_parser = parse_staging)]
    pub checkpoint_staging: Option<String>,

    /// Stack size of each rank, in bytes (suffixes K, M, G accepted).
    #[arg(long, value_parser = parse_size)]
    pub stack_size: Option<u64>,

    /// Restart the job checkpointed in DIR from its latest complete epoch (or
    /// --epoch K): same program, arguments, ranks and processes; on this host,
    /// or on those of --host/--hostfile (DIR at the same path on each).
    #[arg(long = "restart", value_name = "DIR", conflicts_with_all = ["checkpoint", "ranks", "processes"])]
    pub restart: Option<std::path::PathBuf>,

    /// With --restart: the epoch to restart from (default: the latest).
    #[arg(long = "epoch", value_name = "K", requires = "restart")]
    pub epoch: Option<u64>,

    /// When a process of the job fails (killed, crashed, or exited with a
    /// failure status while others ran), end the others and start the job
    /// again from the newest recoverable epoch of its checkpoint directory
    /// (from the beginning while it has none), up to N times.
    #[arg(long = "max-restarts", value_name = "N", default_value_t = 0)]
    pub max_restarts: u32,

    /// How a failed process is recovered. relaunch (the default, with
    /// --max-restarts): the job is ended and started again. in-place: the
    /// other processes run on, a replacement starts in the failed one's
    /// place, and every rank starts again from main in a fresh copy of the
    /// program, finding its data with CRaaS_Rst_* or FTI_Recover; up to
    /// --max-restarts times (10 if not given). Needs -p 2 or more.
    #[arg(long = "recover", value_name = "in-place|relaunch", value_parser = ["in-place", "relaunch"])]
    pub recover: Option<String>,

    /// Variables every process of the job gets that no option sets (set by
    /// mpcrs-run itself: where recovery in place reaches it).
    #[arg(skip)]
    pub job_env: Vec<(String, String)>,

    /// Hosts of checkpoint services (mpcrs-ckptd, one per host given; "localhost"
    /// for this one): they hold the ranks' CRaaS checkpoints (craas.h) in
    /// memory for the whole of mpcrs-run, restarts included, and flush them
    /// to the checkpoint directory. HOST:PORT uses a service running on its
    /// own (with --ckpt-service-secret), which outlives the job. Without it,
    /// each process keeps its ranks' checkpoints and flushes them itself.
    #[arg(
        long = "ckpt-service",
        value_name = "HOST[,HOST]",
        value_delimiter = ','
    )]
    pub ckpt_service: Vec<String>,

    /// The secret file of services given as HOST:PORT to --ckpt-service,
    /// running on their own (mpcrs-ckptd --secret-file FILE).
    #[arg(long = "ckpt-service-secret", value_name = "FILE")]
    pub ckpt_service_secret: Option<std::path::PathBuf>,

    /// When CRaaS checkpoints are flushed to the checkpoint directory: after K
    /// commits of a checkpoint, T seconds after its first unflushed commit
    /// (Ts), both (K,Ts), or never (only at the end of the job).
    #[arg(long = "ckpt-service-flush", value_name = "K|Ts|K,Ts|never", default_value = "10,30s", value_parser = mpcrs_craas::FlushPolicy::parse)]
    pub ckpt_service_flush: mpcrs_craas::FlushPolicy,

    /// The program to run, and its arguments.
    #[arg(required_unless_present = "restart", value_name = "PROGRAM [ARGS]...")]
    pub command: Vec<String>,

    /// Hosts of --host/--hostfile a failed run left out of the next one
    /// (relaunch.rs): spares take their processes.
    #[arg(skip)]
    pub left_out: Vec<String>,

    /// The addresses of the services of --ckpt-service once started.
    #[arg(skip)]
    pub ckpt_service_addrs: Vec<String>,

    /// The secret the job's processes prove to those services.
    #[arg(skip)]
    pub ckpt_service_key: Option<mpcrs_auth::JobSecret>,
}

/// The most ranks a job has: MPI numbers them with C ints.
pub const MAX_RANKS: i64 = i32::MAX as i64;

/// The address space the ranks of one process reserve for their stacks is
/// checked before the job starts: beyond the process's limit (ulimit -v) or
/// the half of x86-64's 128 TiB user space left for everything else, the
/// processes would fail one by one mapping stacks, or first spend minutes
/// making millions of ranks' tables. `stack`: each rank's stack.
pub fn check_stack_space(ranks: u64, processes: u64, stack: u64) -> Result<(), String> {
    let per_process = ranks.div_ceil(processes);
    // Each stack has a guard page.
    let needed = per_process.saturating_mul(stack.saturating_add(4096));
    let mut limit = (
        64u64 << 40,
        "half of the 128 TiB a process can address".to_string(),
    );
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit fills the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut rl) } == 0
        && rl.rlim_cur != libc::RLIM_INFINITY
        && rl.rlim_cur < limit.0
    {
        limit = (
            rl.rlim_cur,
            "the address-space limit of a process (ulimit -v, RLIMIT_AS)".into(),
        );
    }
    if needed <= limit.0 {
        return Ok(());
    }
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    Err(format!(
        "-n {ranks} in {processes} process{} puts {per_process} ranks in a process, whose stacks of {} KiB need {:.1} GiB of address space; {} is {:.1} GiB: lower -n or --stack-size, or use more processes (-p)",
        if processes == 1 { "" } else { "es" },
        stack >> 10,
        gib(needed),
        limit.1,
        gib(limit.0)
    ))
}

/// The hosts of --host or --hostfile, if given.
pub fn hosts(args: &Options) -> Option<Result<Vec<crate::hosts::Host>, String>> {
    let hosts = match (&args.host, &args.hostfile) {
        (Some(list), _) => crate::hosts::parse_host_list(list),
        (None, Some(file)) => crate::hosts::parse_hostfile(file),
        (None, None) => return None,
    };
    // --ppn: the processes each host takes, whatever its slots.
    let slots = args.ppn.map(|n| match args.process_mode {
        true => n as usize,
        false => 1,
    });
    Some(hosts.map(|hosts| {
        hosts
            .into_iter()
            .map(|h| crate::hosts::Host {
                slots: slots.or(h.slots),
                ..h
            })
            .collect()
    }))
}

/// The processes of a job of `--ppn N` ranks per host: one per N ranks (a
/// process per rank with --process-mode).
pub fn processes_for_ppn(ranks: u32, ppn: u32, process_mode: bool) -> u32 {
    match process_mode {
        true => ranks,
        false => ranks.div_ceil(ppn),
    }
}

/// The rails configuration to use: --config, else the installed copy
/// (PREFIX/share/mpcrs/rails.xml beside PREFIX/bin), else the source tree's.
pub fn rails_config(explicit: Option<std::path::PathBuf>) -> std::path::PathBuf {
    explicit.unwrap_or_else(mpcrs_rails::default_config_path)
}

/// The node-local root of a job whose checkpoint directory is `global`: the
/// one given, else the default for that directory; absolute.
pub fn local_root(given: Option<&std::path::Path>, global: &std::path::Path) -> std::path::PathBuf {
    let root = match (given, mpcrs_settings::variables::CHECKPOINT_LOCAL.get_os()) {
        (Some(d), _) => d.to_path_buf(),
        (None, Some(d)) => std::path::PathBuf::from(d),
        (None, None) => mpcrs_levels::store::default_local_root(global),
    };
    std::path::absolute(&root).unwrap_or(root)
}

/// How each line of output is labelled: --tag-output or --prepend-rank.
pub fn output_labels(args: &Options) -> Option<mpcrs_settings::output::Labels> {
    use mpcrs_settings::output::Labels;
    match (args.tag_output, args.prepend_rank) {
        (true, _) => Some(Labels::Tag),
        (false, true) => Some(Labels::Rank),
        (false, false) => None,
    }
}

/// The environment -x passes: (name, value) pairs, or what is wrong.
pub fn exports(list: &[String]) -> Result<Vec<(String, String)>, String> {
    list.iter()
        .map(|item| match item.split_once('=') {
            Some(("", _)) => Err(format!("-x {item:?}: empty variable name")),
            Some((k, v)) => Ok((k.to_string(), v.to_string())),
            None => std::env::var(item).map(|v| (item.clone(), v)).map_err(|_| {
                format!("-x {item}: {item} is not set in this environment (use -x {item}=VALUE)")
            }),
        })
        .collect()
}

fn parse_schedule(s: &str) -> Result<mpcrs_levels::Schedule, String> {
    s.parse()
        .map_err(|e: mpcrs_levels::schedule::ScheduleError| e.to_string())
}

/// The longest checkpoint interval (about 31 years).
const MAX_INTERVAL: f64 = 1e9;

fn parse_seconds(s: &str) -> Result<f64, String> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && (0.01..=MAX_INTERVAL).contains(v))
        .ok_or_else(|| format!("{s:?} is not a number of seconds from 0.01 to {MAX_INTERVAL:e}"))
}

/// `--checkpoint-interval`: "auto", or seconds (as the runtime reads them).
fn parse_interval(s: &str) -> Result<String, String> {
    if s.trim() == "auto" {
        return Ok("auto".into());
    }
    parse_seconds(s).map(|v| v.to_string())
}

/// `--mtbf`: seconds, or a number with a suffix s, m, h or d.
fn parse_duration(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, unit) = match t.chars().last() {
        Some('s') => (&t[..t.len() - 1], 1.0),
        Some('m') => (&t[..t.len() - 1], 60.0),
        Some('h') => (&t[..t.len() - 1], 3600.0),
        Some('d') => (&t[..t.len() - 1], 86400.0),
        _ => (t, 1.0),
    };
    num.parse::<f64>()
        .ok()
        .map(|v| v * unit)
        .filter(|v| v.is_finite() && (1.0..=1e12).contains(v))
        .ok_or_else(|| {
            format!("{s:?} is not a duration from 1 s to 1e12 s (e.g. 3600, 90m, 24h, 7d)")
        })
}

/// `--map-by`: where processes go, and the workers each gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MapSpec {
    pub by: crate::hosts::MapBy,
    pub workers: Option<u32>,
}

fn parse_map_by(s: &str) -> Result<MapSpec, String> {
    use crate::hosts::MapBy;
    let (policy, modifier) = match s.split_once(':') {
        Some((p, m)) => (p, Some(m)),
        None => (s, None),
    };
    let by = match policy.to_ascii_lowercase().as_str() {
        "slot" | "core" | "socket" | "hwthread" => MapBy::Slot,
        "node" => MapBy::Node,
        _ => {
            return Err(format!(
                "{policy:?} is not a mapping policy here (slot, core, socket or node)"
            ))
        }
    };
    let workers = match modifier {
        None => None,
        Some(m) => {
            let n = m
                .strip_prefix("PE=")
                .or_else(|| m.strip_prefix("pe="))
                .and_then(|n| n.parse::<u32>().ok())
                .filter(|&n| n >= 1)
                .ok_or_else(|| format!("{m:?} is not PE=n (worker threads per process, n >= 1)"))?;
            Some(n)
        }
    };
    Ok(MapSpec { by, workers })
}

/// `--stack-size`: a size of at least 64K.
fn parse_size(s: &str) -> Result<u64, String> {
    match mpcrs_settings::parse_size(s)? {
        v if v >= 64 << 10 => Ok(v),
        _ => Err(format!("{s:?} is not a size of at least 64K (e.g. 8M)")),
    }
}

/// `--checkpoint-staging`: checked here, passed on as written.
fn parse_staging(s: &str) -> Result<String, String> {
    mpcrs_settings::size::SizeOrAuto::parse(s).map(|_| s.to_string())
}

/// The command that starts processes on other hosts, as words.
pub fn launch_agent(args: &Options) -> Vec<String> {
    args.launch_agent
        .clone()
        .or_else(|| mpcrs_settings::variables::LAUNCH_AGENT.get())
        .unwrap_or_else(|| "ssh -o BatchMode=yes".into())
        .split_whitespace()
        .map(String::from)
        .collect()
}

/// `--compress`: checked here, passed on as written.
fn parse_compression(s: &str) -> Result<String, String> {
    mpcrs_cr::Compression::parse(s).map(|_| s.to_string())
}
