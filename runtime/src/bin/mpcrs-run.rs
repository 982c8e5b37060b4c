//! mpcrs-run: starts an MPI job whose ranks run as user-level threads.
//!
//! `mpcrs-run -n N [-p P] [-c C] PROGRAM [ARGS...]` runs PROGRAM (a C program
//! linked against libmpi, or built on the mpcrs Rust API) with N ranks in P
//! processes of C worker threads each, forwards its output and exits with the
//! worst status. `--checkpoint DIR` enables checkpoints; `mpcrs-run --restart
//! DIR [--epoch K]` starts the checkpointed job again from an epoch.

use std::process::{Command, ExitCode};

use clap::Parser;
use mpcrs::launch::processes::Launch;
use mpcrs::launch::supervise;
use mpcrs::run::env;

#[derive(Parser, Debug)]
#[command(
    name = "mpcrs-run",
    version,
    about = "Run an MPI job with ranks as user-level threads",
    trailing_var_arg = true
)]
struct Args {
    /// Number of MPI ranks.
    #[arg(short = 'n', long = "np", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    ranks: u32,

    /// Number of processes; ranks are spread over them in contiguous blocks.
    #[arg(short = 'p', long = "processes", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    processes: u32,

    /// One rank per process (as -p equal to -n), for code that cannot share a
    /// process with other ranks.
    #[arg(long = "process-mode", conflicts_with = "processes")]
    process_mode: bool,

    /// At the end, each process prints its endpoints, messages and bytes per
    /// rail, and the control messages it routed with their hop counts.
    #[arg(long = "net-stats")]
    net_stats: bool,

    /// Hosts to start processes on: NAME[:SLOTS],... (others through the launch agent).
    #[arg(long = "host", value_name = "HOSTS", conflicts_with = "hostfile")]
    host: Option<String>,

    /// File naming the hosts, one per line: NAME [slots=N] or NAME:N.
    #[arg(long = "hostfile", value_name = "FILE")]
    hostfile: Option<std::path::PathBuf>,

    /// Command that runs a shell command on another host, given the host and the
    /// command (default: $MPCRS_LAUNCH_AGENT, else "ssh -o BatchMode=yes").
    #[arg(long = "launch-agent", value_name = "CMD")]
    launch_agent: Option<String>,

    /// Worker threads per process (default: one per CPU of the cpuset).
    #[arg(short = 'c', long = "cores", value_parser = clap::value_parser!(u32).range(1..))]
    workers: Option<u32>,

    /// Prefix every output line with the process and its ranks, as [process,first-last].
    #[arg(long)]
    tag_output: bool,

    /// Network option of the rails configuration (one of its <cli_option> names).
    #[arg(long = "net", value_name = "NAME", default_value = mpcrs_rails::DEFAULT_OPTION)]
    net: String,

    /// Rails configuration (default: the project's config/rails.xml).
    #[arg(long = "config", value_name = "FILE")]
    config: Option<std::path::PathBuf>,

    /// Pass an environment variable to the job: VAR (its value here) or VAR=VALUE.
    #[arg(short = 'x', value_name = "VAR[=VAL]")]
    export: Vec<String>,

    /// Enable checkpoints into DIR: MPIX_Checkpoint writes an epoch there (without
    /// it, MPIX_Checkpoint returns IGNORE).
    #[arg(long = "checkpoint", value_name = "DIR")]
    checkpoint: Option<std::path::PathBuf>,

    /// Also checkpoint every SECONDS, wherever the program is (as SIGUSR1 to
    /// mpcrs-run does): unmodified programs get checkpoints too.
    #[arg(long = "checkpoint-interval", value_name = "SECONDS", requires = "checkpoint", value_parser = parse_seconds)]
    checkpoint_interval: Option<f64>,

    /// Complete epochs kept in the checkpoint directory.
    #[arg(long = "keep", value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..))]
    keep: u32,

    /// Stack size of each rank, in bytes (suffixes K, M, G accepted).
    #[arg(long, value_parser = parse_size)]
    stack_size: Option<u64>,

    /// Restart the job checkpointed in DIR from its latest complete epoch (or
    /// --epoch K): same program, arguments, ranks and processes; on this host,
    /// or on those of --host/--hostfile (DIR at the same path on each).
    #[arg(long = "restart", value_name = "DIR", conflicts_with_all = ["checkpoint", "ranks", "processes"])]
    restart: Option<std::path::PathBuf>,

    /// With --restart: the epoch to restart from (default: the latest).
    #[arg(long = "epoch", value_name = "K", requires = "restart")]
    epoch: Option<u64>,

    /// The program to run, and its arguments.
    #[arg(required_unless_present = "restart", value_name = "PROGRAM [ARGS]...")]
    command: Vec<String>,
}

/// The rails configuration to use: --config, else the installed copy
/// (PREFIX/share/mpcrs/rails.xml beside PREFIX/bin), else the source tree's.
fn rails_config(explicit: Option<std::path::PathBuf>) -> std::path::PathBuf {
    if let Some(p) = explicit {
        return p;
    }
    let installed = std::env::current_exe().ok().and_then(|e| {
        e.parent()
            .and_then(|d| d.parent())
            .map(|p| p.join("share/mpcrs/rails.xml"))
    });
    match installed {
        Some(p) if p.exists() => p,
        _ => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/rails.xml"),
    }
}

/// The environment -x passes: (name, value) pairs, or what is wrong.
fn exports(list: &[String]) -> Result<Vec<(String, String)>, String> {
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

fn parse_seconds(s: &str) -> Result<f64, String> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.01)
        .ok_or_else(|| format!("{s:?} is not a number of seconds of at least 0.01"))
}

fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1u64 << 10),
        Some('m' | 'M') => (&t[..t.len() - 1], 1 << 20),
        Some('g' | 'G') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    num.parse::<u64>()
        .ok()
        .and_then(|v| v.checked_mul(mult))
        .filter(|&v| v >= 64 << 10)
        .ok_or_else(|| format!("{s:?} is not a size of at least 64K (e.g. 8M)"))
}

/// The file `program` names, as the shell would find it (a path, or a name on PATH).
fn resolve_program(program: &str) -> Option<std::path::PathBuf> {
    if program.contains('/') {
        return Some(std::path::PathBuf::from(program));
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(program))
            .find(|p| p.is_file())
    })
}

/// Refuses, before anything starts, a network option whose rails need a driver
/// this build or this machine lacks.
fn check_drivers(rails: &mpcrs_rails::RailSet) -> Result<(), String> {
    for rail in &rails.rails {
        if rail.driver == mpcrs_rails::Driver::Ibverbs {
            mpcrs_rails::verbs::device_names()
                .map_err(|e| format!("rail {} (ibverbs): {e}", rail.name))?;
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let mut args = Args::parse();
    if let Some(dir) = &args.restart {
        if !args.command.is_empty() {
            eprintln!(
                "mpcrs-run: --restart runs the checkpointed program again; drop {:?}",
                args.command.join(" ")
            );
            return ExitCode::from(2);
        }
        return match restart_specs(&args, dir) {
            Ok((specs, program)) => supervise_job(specs, args.tag_output, true, &program),
            Err(e) => {
                eprintln!("mpcrs-run: --restart {}: {e}", dir.display());
                ExitCode::from(2)
            }
        };
    }
    if args.process_mode {
        args.processes = args.ranks;
    }
    if args.processes > args.ranks {
        eprintln!(
            "mpcrs-run: -p {} asks for more processes than the {} ranks of -n",
            args.processes, args.ranks
        );
        return ExitCode::from(2);
    }
    // Everything is checked before any process starts.
    let config_file = rails_config(args.config.clone());
    let rails = match mpcrs_rails::NetConfig::load(&config_file).and_then(|c| c.select(&args.net)) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("mpcrs-run: {e}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = check_drivers(&rails) {
        eprintln!("mpcrs-run: --net {}: {e}", rails.option);
        return ExitCode::from(2);
    }
    let exported = match exports(&args.export) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("mpcrs-run: {e}");
            return ExitCode::from(2);
        }
    };
    let program = &args.command[0];
    let here = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(|d| d.to_path_buf()));
    let c_program =
        resolve_program(program).and_then(|p| mpcrs::elf::mpi_program(&p).map(|kind| (p, kind)));
    let mut cmd = match (c_program, &here) {
        // A C/C++ program linked against libmpi (ours or MPICH's): its ranks run as
        // threads of mpcrs-exec, which loads one copy of the program per rank.
        (Some((path, kind)), Some(dir)) => {
            // libmpi.so: beside us (build layout) or in ../lib (installed layout).
            let mut paths = vec![dir.clone()];
            if let Some(prefix) = dir.parent() {
                paths.push(prefix.join("lib"));
            }
            let mut c = if kind.position_independent {
                let mut c = Command::new(dir.join("mpcrs-exec"));
                c.arg(&path);
                c
            } else {
                // One copy per process only: the program runs directly, its
                // MPI_Init making its thread the process's rank, and links
                // against libmpi under MPICH's name too.
                if let Err(e) = directly_runnable(&args) {
                    eprintln!("mpcrs-run: {}: {e}", path.display());
                    return ExitCode::from(2);
                }
                match mpich_abi_dir(dir) {
                    Ok(d) => paths.insert(0, d),
                    Err(e) => {
                        eprintln!("mpcrs-run: {e}");
                        return ExitCode::from(1);
                    }
                }
                Command::new(&path)
            };
            let old = std::env::var_os("LD_LIBRARY_PATH").unwrap_or_default();
            paths.extend(std::env::split_paths(&old));
            c.env(
                "LD_LIBRARY_PATH",
                std::env::join_paths(paths).expect("library path"),
            );
            c
        }
        _ => Command::new(program),
    };
    cmd.args(&args.command[1..]);
    cmd.env(env::RANKS, args.ranks.to_string());
    match args.workers {
        Some(c) => cmd.env(env::WORKERS, c.to_string()),
        None => cmd.env_remove(env::WORKERS),
    };
    if let Some(s) = args.stack_size {
        cmd.env(env::STACK_SIZE, s.to_string());
    }
    for (k, v) in &exported {
        cmd.env(k, v);
    }
    let names: Vec<&str> = exported.iter().map(|(k, _)| k.as_str()).collect();
    cmd.env(env::EXPORTED, names.join(","));
    if let Some(dir) = &args.checkpoint {
        let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.clone());
        cmd.env(env::CHECKPOINT_DIR, &dir);
        cmd.env(env::CHECKPOINT_KEEP, args.keep.to_string());
        if let Some(s) = args.checkpoint_interval {
            cmd.env(env::CHECKPOINT_INTERVAL, s.to_string());
        }
    }
    // The network the job's processes use between them.
    cmd.env(env::NET, &rails.option);
    cmd.env(env::NET_CONFIG, &config_file);
    if args.net_stats {
        cmd.env(env::NET_STATS, "1");
    }
    let checkpoints = args.checkpoint.is_some();
    let launch = Launch::first_run(checkpoints);
    let specs = match place(
        &args,
        cmd,
        args.processes as usize,
        args.ranks as usize,
        &launch,
    ) {
        Ok(specs) => specs,
        Err((status, e)) => {
            eprintln!("mpcrs-run: {e}");
            return ExitCode::from(status);
        }
    };
    supervise_job(specs, args.tag_output, checkpoints, program)
}

/// Runs the processes of a job to their end and returns the job's status.
fn supervise_job(
    specs: Vec<supervise::ProcessSpec>,
    tag_output: bool,
    checkpoints: bool,
    program: &str,
) -> ExitCode {
    // Supervised like every process of a job: own process group (nothing it starts
    // outlives the job), Ctrl-C/SIGTERM end it, a failure is reported by name;
    // SIGUSR1 asks a job with checkpoints for one.
    // MPIEXEC_TIMEOUT (seconds), as MPICH's mpiexec: the job is ended past it.
    let time_limit = match supervise::time_limit_from_env() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("mpcrs-run: {e}");
            return ExitCode::from(2);
        }
    };
    let how = supervise::Supervision {
        tag_output,
        grace: std::time::Duration::from_secs(1),
        forward_checkpoint_requests: checkpoints,
        time_limit,
    };
    let outcome = supervise::run(specs, how);
    // Every process is gone: rings offered but never opened go too.
    mpcrs_rails::shm_rail::remove_job_rings(&mpcrs::launch::processes::job_id());
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            eprintln!("mpcrs-run: cannot execute {program}: {e}");
            return ExitCode::from(127);
        }
    };
    if let Some(msg) = outcome.message() {
        eprintln!("mpcrs-run: {msg} ({program})");
    }
    ExitCode::from(outcome.exit_code().clamp(0, 255) as u8)
}

/// The processes that restart the job checkpointed in `dir`, in the layout of
/// the first run (one image each; several processes get a new key-value store)
/// on this host or on the hosts given, and the program's name. Everything that can be checked before a process
/// starts is: the epoch is complete, its manifest reads, every image is there
/// with a sound header, and the executable is the one that wrote them.
fn restart_specs(
    args: &Args,
    dir: &std::path::Path,
) -> Result<(Vec<supervise::ProcessSpec>, String), String> {
    use mpcrs_cr::commit::{epoch_name, MANIFEST};
    use std::os::unix::process::CommandExt;
    let store = mpcrs_cr::CheckpointDir::open(dir).map_err(|e| e.to_string())?;
    let epochs = store.epochs().map_err(|e| e.to_string())?;
    let k = match args.epoch {
        Some(k) if epochs.contains(&k) => k,
        Some(k) => {
            let list: Vec<String> = epochs.iter().map(|k| k.to_string()).collect();
            return Err(format!(
                "epoch {k} is not a complete epoch (complete: {})",
                if list.is_empty() {
                    "none".into()
                } else {
                    list.join(", ")
                }
            ));
        }
        None => store
            .latest()
            .map_err(|e| e.to_string())?
            .ok_or("no complete epoch to restart from")?,
    };
    let epoch_dir = store.epoch_dir(k);
    let m = mpcrs::manifest::JobManifest::read(&epoch_dir.join(MANIFEST))?;
    if m.processes == 0 || m.processes > m.ranks {
        return Err(format!(
            "{}: {} processes for {} ranks",
            epoch_dir.join(MANIFEST).display(),
            m.processes,
            m.ranks
        ));
    }
    let now = mpcrs_cr::image::ExeIdentity::of(&m.executable)
        .map_err(|e| format!("{}: {e}", m.executable.display()))?;
    let images: Vec<std::path::PathBuf> = (0..m.processes)
        .map(|p| epoch_dir.join(format!("process-{p}.img")))
        .collect();
    for (p, image) in images.iter().enumerate() {
        if !image.is_file() {
            return Err(format!(
                "{}: missing: {} has no image of process {p}",
                image.display(),
                epoch_name(k)
            ));
        }
        let (_, header) = mpcrs_cr::image::read_header(image).map_err(|e| e.to_string())?;
        if !now.same_file(&header.exe) {
            return Err(format!(
                "{}: written by a different executable: {} is {} bytes with CRC-32C {:08x} now, \
                 {} bytes with CRC-32C {:08x} in the image",
                image.display(),
                m.executable.display(),
                now.size,
                now.crc,
                header.exe.size,
                header.exe.crc
            ));
        }
    }
    let mut cmd = Command::new(&m.executable);
    cmd.arg0(&m.args[0]).args(&m.args[1..]).current_dir(&m.cwd);
    cmd.env(env::RANKS, m.ranks.to_string());
    for (k, v) in &m.env {
        cmd.env(k, v);
    }
    let names: Vec<&str> = m.env.iter().map(|(k, _)| k.as_str()).collect();
    cmd.env(env::EXPORTED, names.join(","));
    if let Some(net) = &m.net {
        cmd.env(env::NET, net);
    }
    if let Some(c) = &m.net_config {
        cmd.env(env::NET_CONFIG, c);
    }
    let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    cmd.env(env::CHECKPOINT_DIR, &dir);
    cmd.env(env::CHECKPOINT_KEEP, args.keep.to_string());
    // The loader lays the process out as in the first run only with the same
    // settings: exactly those, none added or missing.
    for var in mpcrs::manifest::LOADER_VARIABLES {
        match m.loader_env.iter().find(|(k, _)| k == var) {
            Some((_, v)) => cmd.env(var, v),
            None => cmd.env_remove(var),
        };
    }
    // C programs run inside mpcrs-exec: name the program, not the host.
    let program = match (m.executable.file_name(), m.args.get(1)) {
        (Some(name), Some(p)) if name == "mpcrs-exec" => p.clone(),
        _ => m.args[0].clone(),
    };
    eprintln!(
        "mpcrs-run: restarting {program} ({} ranks{}) from {}",
        m.ranks,
        if m.processes > 1 {
            format!(", {} processes", m.processes)
        } else {
            String::new()
        },
        epoch_dir.display()
    );
    let own_env = |p: usize| {
        let image = std::path::absolute(&images[p]).unwrap_or_else(|_| images[p].clone());
        vec![(
            mpcrs_cr::restore::RESTORE_ENV.to_string(),
            image.to_string_lossy().into_owned(),
        )]
    };
    let launch = Launch {
        restorable: true,
        own_env: &own_env,
    };
    if m.processes > 1 {
        // The restored processes reach the new key-value store through the
        // descriptor the restorer carries over for them (on this host).
        cmd.env(
            mpcrs_cr::restore::CARRY_FDS_ENV,
            mpcrs::launch::pmi2::ENV_FD,
        );
    }
    // Hosts may differ from the first run's; the checkpoint directory must then be
    // at the same path on each (a shared file system).
    let specs = place(args, cmd, m.processes, m.ranks, &launch).map_err(|(_, e)| e)?;
    Ok((specs, program))
}

/// The processes of a job: on the hosts of `--host`/`--hostfile`, or on this
/// one. An error comes with mpcrs-run's exit status: 2 for hosts it cannot use,
/// 1 for a key-value store that cannot start.
fn place(
    args: &Args,
    cmd: Command,
    processes: usize,
    ranks: usize,
    launch: &Launch,
) -> Result<Vec<supervise::ProcessSpec>, (u8, String)> {
    let host = mpcrs::launch::hosts::local_hostname();
    let hosts = match (&args.host, &args.hostfile) {
        (Some(list), _) => Some(mpcrs::launch::hosts::parse_host_list(list)),
        (None, Some(file)) => Some(mpcrs::launch::hosts::parse_hostfile(file)),
        (None, None) => None,
    };
    match hosts {
        Some(hosts) => hosts
            .and_then(|h| {
                mpcrs::launch::processes::across_hosts(
                    &cmd,
                    processes,
                    ranks,
                    &h,
                    &launch_agent(args),
                    &host,
                    launch,
                )
            })
            .map_err(|e| (2, e)),
        None => mpcrs::launch::processes::on_this_host(cmd, processes, ranks, &host, launch)
            .map_err(|e| (1, format!("cannot start the key-value store: {e}"))),
    }
}

/// Whether a program that is not position-independent can run in this job: one
/// rank per process, and no checkpoints (a restart needs the loader's layout).
fn directly_runnable(args: &Args) -> Result<(), String> {
    if args.processes != args.ranks {
        return Err(format!(
            "not a position-independent executable, so its ranks cannot share a process: \
             run it with --process-mode (one rank per process), or rebuild it with -fPIE -pie \
             (mpcrs-cc and Debian's compilers do by default) to run {} ranks in {} process(es)",
            args.ranks, args.processes
        ));
    }
    if args.checkpoint.is_some() {
        return Err(
            "not a position-independent executable: checkpoints need one; \
                    rebuild it with -fPIE -pie"
                .into(),
        );
    }
    Ok(())
}

/// A directory where `libmpich.so.12` is libmpi.so of `dir` (or of `dir`/../lib),
/// for programs linked by MPICH's compilers; made once per user, atomically.
fn mpich_abi_dir(dir: &std::path::Path) -> Result<std::path::PathBuf, String> {
    let lib = [dir.join("libmpi.so"), dir.join("../lib/libmpi.so")]
        .into_iter()
        .find(|p| p.exists())
        .ok_or_else(|| format!("libmpi.so is neither in {} nor in ../lib", dir.display()))?;
    let lib = std::fs::canonicalize(&lib).map_err(|e| format!("{}: {e}", lib.display()))?;
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let abi = std::env::temp_dir().join(format!("mpcrs-mpich-abi-{uid}"));
    std::fs::create_dir_all(&abi).map_err(|e| format!("{}: {e}", abi.display()))?;
    {
        use std::os::unix::fs::MetadataExt;
        let meta =
            std::fs::symlink_metadata(&abi).map_err(|e| format!("{}: {e}", abi.display()))?;
        if meta.uid() != uid || !meta.is_dir() {
            return Err(format!("{} is not a directory of this user", abi.display()));
        }
    }
    let link = abi.join("libmpich.so.12");
    if std::fs::read_link(&link).ok().as_deref() != Some(lib.as_path()) {
        let tmp = abi.join(format!("libmpich.so.12.{}", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        std::os::unix::fs::symlink(&lib, &tmp)
            .and_then(|_| std::fs::rename(&tmp, &link))
            .map_err(|e| format!("{}: {e}", link.display()))?;
    }
    Ok(abi)
}

/// The command that starts processes on other hosts, as words.
fn launch_agent(args: &Args) -> Vec<String> {
    args.launch_agent
        .clone()
        .or_else(|| std::env::var("MPCRS_LAUNCH_AGENT").ok())
        .unwrap_or_else(|| "ssh -o BatchMode=yes".into())
        .split_whitespace()
        .map(String::from)
        .collect()
}
