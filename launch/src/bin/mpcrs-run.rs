//! mpcrs-run: starts an MPI job whose ranks run as user-level threads.
//!
//! `mpcrs-run -n N [-p P] [-c C] PROGRAM [ARGS...]` runs PROGRAM (a C program
//! linked against libmpi, or built on the mpcrs Rust API) with N ranks in P
//! processes of C worker threads each, forwards its output and exits with the
//! worst status. `--checkpoint DIR` enables checkpoints; `mpcrs-run --restart
//! DIR [--epoch K]` starts the checkpointed job again from an epoch.

use std::process::{Command, ExitCode};
use std::time::SystemTime;

use clap::Parser;
use mpcrs_launch::options::{exports, rails_config, Options};
use mpcrs_launch::processes::{place, Launch};
use mpcrs_launch::program::{directly_runnable, mpich_abi_dir, resolve_program};
use mpcrs_launch::relaunch;
use mpcrs_launch::restart::restart_specs;
use mpcrs_launch::supervise;
use mpcrs_settings::variables as env;

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
    mpcrs_settings::diagnostics::init("mpcrs-run");
    let argv = mpcrs_launch::spellings::normalize(std::env::args_os().collect());
    let argv = match mpcrs_launch::checkpoint_config::expand(argv) {
        Ok(a) => a,
        Err(e) => {
            mpcrs_settings::report!(error, "mpcrs-run: {e}");
            return ExitCode::from(2);
        }
    };
    let mut args = Options::parse_from(argv);
    // clap does not enforce `requires` here (the option's group): said once.
    if args.epoch.is_some() && args.restart.is_none() {
        mpcrs_settings::report!(
            error,
            "mpcrs-run: --epoch K chooses the epoch of --restart DIR; give --restart"
        );
        return ExitCode::from(2);
    }
    if let Some(dir) = &args.restart {
        if !args.command.is_empty() {
            mpcrs_settings::report!(
                error,
                "mpcrs-run: --restart runs the checkpointed program again; drop {:?}",
                args.command.join(" ")
            );
            return ExitCode::from(2);
        }
        if let Some(task) = mpcrs_launch::task::of_another_launcher() {
            let e = mpcrs_launch::task::restore_in_place(&args, dir, task);
            mpcrs_settings::report!(
                error,
                "mpcrs-run: --restart {}: process {}: {e}",
                dir.display(),
                task.rank
            );
            return ExitCode::from(2);
        }
        let _claim =
            match mpcrs_cr::claim::claim(dir, &format!("mpcrs-run pid {}", std::process::id())) {
                Ok(c) => c,
                Err(e) => {
                    mpcrs_settings::report!(error, "mpcrs-run: --restart {}: {e}", dir.display());
                    return ExitCode::from(2);
                }
            };
        return match restart_specs(&args, dir, args.epoch) {
            Ok(plan) => {
                mpcrs_settings::report!(info, "{}", plan.announcement);
                let first = Run {
                    specs: plan.specs,
                    resumed_from: Some(plan.epoch),
                };
                run_with_restarts(&args, first, &plan.program, None, None)
            }
            Err(e) => {
                mpcrs_settings::report!(error, "mpcrs-run: --restart {}: {e}", dir.display());
                ExitCode::from(2)
            }
        };
    }
    // A program that is no MPI program (hostname, a script, `sh -c ./app`,
    // `valgrind ./app`) runs once per rank, each copy a process of one rank.
    let kind = args
        .command
        .first()
        .and_then(|c| mpcrs_launch::program::resolve_program(c))
        .and_then(|p| mpcrs_launch::program::kind_of(&p));
    // (-p given as a number of processes is taken as it is.)
    if !args.process_mode && args.processes == 1 && kind == Some(mpcrs_launch::program::Kind::Other)
    {
        args.process_mode = true;
    }
    if args.process_mode {
        args.processes = args.ranks;
    }
    // A Python interpreter is one per process: its ranks cannot share one.
    if kind == Some(mpcrs_launch::program::Kind::Other)
        && args.processes != args.ranks
        && mpcrs_launch::program::python_interpreter(&args.command[0])
    {
        mpcrs_settings::report!(
            error,
            "mpcrs-run: {}: a Python interpreter runs one interpreter per process, and \
             an interpreter can be only one rank (mpi4py loads libmpi into it): \
             -n {} -p {} would put several ranks in one; run it with --process-mode \
             (or -p {})",
            args.command[0],
            args.ranks,
            args.processes,
            args.ranks
        );
        return ExitCode::from(2);
    }
    if let Some(pe) = args.map_by.and_then(|m| m.workers) {
        if args.workers.is_some_and(|c| c != pe) {
            mpcrs_settings::report!(
                error,
                "mpcrs-run: --map-by ...:PE={pe} and -c {} both set the workers of each process; give one",
                args.workers.unwrap_or_default()
            );
            return ExitCode::from(2);
        }
        args.workers = Some(pe);
    }
    if let Some(n) = args.ppn {
        if args.host.is_none() && args.hostfile.is_none() {
            mpcrs_settings::report!(
                error,
                "mpcrs-run: --ppn {n} places ranks on the hosts of --host or --hostfile; give one"
            );
            return ExitCode::from(2);
        }
        args.processes = mpcrs_launch::options::processes_for_ppn(args.ranks, n, args.process_mode);
    }
    if args.processes > args.ranks {
        mpcrs_settings::report!(
            error,
            "mpcrs-run: -p {} asks for more processes than the {} ranks of -n",
            args.processes,
            args.ranks
        );
        return ExitCode::from(2);
    }
    if let Err(e) = check_recover(&args) {
        mpcrs_settings::report!(error, "mpcrs-run: --recover in-place: {e}");
        return ExitCode::from(2);
    }
    // Everything is checked before any process starts.
    if let Err(e) = check_output(&mut args) {
        mpcrs_settings::report!(error, "mpcrs-run: {e}");
        return ExitCode::from(2);
    }
    if let Some(levels) = &args.levels {
        use mpcrs_levels::Level;
        for l in [Level::Partner, Level::Erasure] {
            if args.processes == 1 && levels.every(l).is_some() {
                mpcrs_settings::report!(
                    error,
                    "mpcrs-run: --levels {levels}: {l} needs a job of several processes (-p), one per partner or group member"
                );
                return ExitCode::from(2);
            }
        }
    }
    // Claimed for as long as the job runs, restarts included; a directory
    // made by the claim goes again if the job is refused.
    let made = args.checkpoint.as_ref().filter(|d| !d.exists()).cloned();
    let claim = match &args.checkpoint {
        Some(dir) => {
            match mpcrs_cr::claim::claim(dir, &format!("mpcrs-run pid {}", std::process::id())) {
                Ok(c) => Some(c),
                Err(e) => {
                    mpcrs_settings::report!(
                        error,
                        "mpcrs-run: --checkpoint {}: {e}",
                        dir.display()
                    );
                    return ExitCode::from(2);
                }
            }
        }
        None => None,
    };
    // The checkpoint services live as long as this launcher: restarted runs
    // find their ranks' data in their memory.
    let services = match start_services(&args) {
        Ok(s) => s,
        Err(e) => {
            mpcrs_settings::report!(error, "mpcrs-run: {e}");
            drop(claim);
            if let Some(dir) = made {
                let _ = std::fs::remove_dir_all(dir);
            }
            return ExitCode::from(2);
        }
    };
    let services = services.map(|(s, secret)| {
        args.ckpt_service_addrs = s.addrs.clone();
        args.ckpt_service_key = Some(secret);
        s
    });
    // Recovery in place listens before the processes are made: they learn
    // where from their environment.
    let in_place = if args.recover.as_deref() == Some("in-place") {
        let max = if args.max_restarts == 0 {
            10
        } else {
            args.max_restarts
        };
        match mpcrs_launch::in_place::InPlace::start(args.processes as usize, max) {
            Ok(r) => {
                args.job_env
                    .extend(r.variables().map(|(k, v)| (k.to_string(), v)));
                Some(r)
            }
            Err(e) => {
                mpcrs_settings::report!(
                    error,
                    "mpcrs-run: --recover in-place: cannot listen for the processes: {e}"
                );
                return ExitCode::from(2);
            }
        }
    } else {
        None
    };
    let specs = match first_run(&args) {
        Ok(specs) => specs,
        Err(status) => {
            drop(services);
            drop(claim);
            if let Some(dir) = made {
                let _ = std::fs::remove_dir_all(dir);
            }
            return status;
        }
    };
    let _claim = claim;
    let first = Run {
        specs,
        resumed_from: None,
    };
    let status = run_with_restarts(&args, first, &args.command[0], Some(&first_run), in_place);
    // Each service flushes what it holds before the launcher exits.
    drop(services);
    status
}

/// Whether the job can be recovered in place, if asked.
fn check_recover(args: &Options) -> Result<(), String> {
    if args.recover.as_deref() != Some("in-place") {
        return Ok(());
    }
    if args.processes < 2 {
        return Err(
            "needs a job of several processes (-p 2 or more): the survivors of a failure run on"
                .into(),
        );
    }
    if args.restart.is_some() {
        return Err("recovers a running job from the application's checkpoints (CRaaS, FTI); --restart relaunches from images (--max-restarts)".into());
    }
    Ok(())
}

/// Starts the services of --ckpt-service, if any.
fn start_services(
    args: &Options,
) -> Result<Option<(mpcrs_launch::service::Services, mpcrs_auth::JobSecret)>, String> {
    if args.ckpt_service.is_empty() {
        return Ok(None);
    }
    let job_hosts: Vec<String> = match mpcrs_launch::options::hosts(args) {
        Some(h) => h?.into_iter().map(|h| h.name).collect(),
        None => Vec::new(),
    };
    let dir = args
        .checkpoint
        .as_ref()
        .map(|d| std::path::absolute(d).unwrap_or_else(|_| d.clone()));
    let running = args.ckpt_service.iter().any(|h| h.contains(':'));
    let secret = match &args.ckpt_service_secret {
        Some(f) => mpcrs_launch::service::secret_from_file(f, false)
            .map_err(|e| format!("--ckpt-service-secret: {e}"))?,
        None if running => {
            return Err(
                "--ckpt-service HOST:PORT uses a service running on its own: give --ckpt-service-secret FILE, the file its mpcrs-ckptd --secret-file reads".into(),
            )
        }
        None => mpcrs_launch::processes::service_secret()
            .map_err(|e| format!("the checkpoint services' secret: {e}"))?,
    };
    mpcrs_launch::service::start(
        &args.ckpt_service,
        &job_hosts,
        &mpcrs_launch::options::launch_agent(args),
        dir.as_deref(),
        args.ckpt_service_flush,
        &secret,
        args.net_stats,
    )
    .map(|s| Some((s, secret)))
}

/// `--output-filename DIR`: made ready (and from now on absolute), and
/// refused for a program whose processes of several ranks cannot tell their
/// ranks' output apart (one on the mpcrs Rust API).
fn check_output(args: &mut Options) -> Result<(), String> {
    let Some(dir) = &args.output_filename else {
        return Ok(());
    };
    let plan = mpcrs_launch::output::OutputPlan::new(None, Some(dir), &args.command[0])?;
    if !plan.ranks_label_themselves && args.processes < args.ranks {
        return Err(format!(
            "--output-filename {}: {} is no C program whose ranks run as threads, so the \
             output of ranks sharing a process cannot be told apart: add --process-mode",
            dir.display(),
            args.command[0]
        ));
    }
    args.output_filename = plan.dir;
    Ok(())
}

/// The processes of the job's first run (and of a restart from its
/// beginning), or the status to exit with after saying what is wrong.
fn first_run(args: &Options) -> Result<Vec<supervise::ProcessSpec>, ExitCode> {
    // Paths the processes get are absolute: --wdir starts them elsewhere.
    let config_file = rails_config(args.config.clone());
    let config_file = std::path::absolute(&config_file).unwrap_or(config_file);
    if let Some(w) = &args.wdir {
        if !w.is_dir() {
            mpcrs_settings::report!(error, "mpcrs-run: --wdir {}: not a directory", w.display());
            return Err(ExitCode::from(2));
        }
    }
    let absolute_program;
    let program: &str = match &args.wdir {
        Some(_) if args.command[0].contains('/') => {
            absolute_program = std::path::absolute(&args.command[0])
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_else(|_| args.command[0].clone());
            &absolute_program
        }
        _ => &args.command[0],
    };
    let rails = match mpcrs_rails::NetConfig::load(&config_file).and_then(|c| c.select(&args.net)) {
        Ok(r) => r,
        Err(e) => {
            mpcrs_settings::report!(error, "mpcrs-run: {e}");
            return Err(ExitCode::from(2));
        }
    };
    if let Err(e) = check_drivers(&rails) {
        mpcrs_settings::report!(error, "mpcrs-run: --net {}: {e}", rails.option);
        return Err(ExitCode::from(2));
    }
    let exported = match exports(&args.export) {
        Ok(x) => x,
        Err(e) => {
            mpcrs_settings::report!(error, "mpcrs-run: {e}");
            return Err(ExitCode::from(2));
        }
    };
    let here = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(|d| d.to_path_buf()));
    let c_program =
        resolve_program(program).and_then(|p| mpcrs_elf::mpi_program(&p).map(|kind| (p, kind)));
    let default_stack = match &c_program {
        Some(_) => env::C_STACK_SIZE,
        None => mpcrs_scheduler::DEFAULT_STACK_SIZE as u64,
    };
    let stack = args.stack_size.unwrap_or(default_stack);
    if let Err(e) =
        mpcrs_launch::options::check_stack_space(args.ranks as u64, args.processes as u64, stack)
    {
        mpcrs_settings::report!(error, "mpcrs-run: {e}");
        return Err(ExitCode::from(2));
    }
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
                    mpcrs_settings::report!(error, "mpcrs-run: {}: {e}", path.display());
                    return Err(ExitCode::from(2));
                }
                match mpich_abi_dir(dir) {
                    Ok(d) => paths.insert(0, d),
                    Err(e) => {
                        mpcrs_settings::report!(error, "mpcrs-run: {e}");
                        return Err(ExitCode::from(1));
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
        // Anything else that is no Rust program on the runtime: a script or
        // an interpreter may load libmpi by name (mpi4py dlopens libmpi.so,
        // libmpi.so.12), so ours comes first on its library path, as for
        // programs linked against MPICH's library.
        (None, Some(dir))
            if resolve_program(program)
                .and_then(|p| mpcrs_launch::program::kind_of(&p))
                .is_none_or(|k| k == mpcrs_launch::program::Kind::Other) =>
        {
            let mut paths = vec![dir.clone()];
            if let Some(prefix) = dir.parent() {
                paths.push(prefix.join("lib"));
            }
            // (Without a libmpi beside us, such a program has none to load.)
            if let Ok(d) = mpich_abi_dir(dir) {
                paths.insert(0, d);
            }
            let old = std::env::var_os("LD_LIBRARY_PATH").unwrap_or_default();
            paths.extend(std::env::split_paths(&old));
            let mut c = Command::new(program);
            c.env(
                "LD_LIBRARY_PATH",
                std::env::join_paths(paths).expect("library path"),
            );
            c
        }
        _ => Command::new(program),
    };
    cmd.args(&args.command[1..]);
    if let Some(w) = &args.wdir {
        cmd.current_dir(w);
    }
    cmd.env(env::RANKS.name, args.ranks.to_string());
    cmd.envs(args.job_env.iter().map(|(k, v)| (k, v)));
    match args.workers {
        Some(c) => cmd.env(env::WORKERS.name, c.to_string()),
        None => cmd.env_remove(env::WORKERS.name),
    };
    if let Some(s) = args.stack_size {
        cmd.env(env::STACK_SIZE.name, s.to_string());
    }
    for (k, v) in &exported {
        cmd.env(k, v);
    }
    let names: Vec<&str> = exported.iter().map(|(k, _)| k.as_str()).collect();
    cmd.env(env::EXPORTED.name, names.join(","));
    if let Some(dir) = &args.checkpoint {
        let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.clone());
        cmd.env(env::CHECKPOINT_DIR.name, &dir);
        cmd.env(
            env::JOB_KEY.name,
            format!("{:x}", mpcrs_launch::processes::job_key()),
        );
        cmd.env(env::CHECKPOINT_KEEP.name, args.keep.to_string());
        cmd.env(env::FULL_EVERY.name, args.full_every.to_string());
        if let Some(c) = &args.compress {
            cmd.env(env::COMPRESS.name, c);
        }
        if let Some(s) = &args.checkpoint_staging {
            cmd.env(env::CHECKPOINT_STAGING.name, s);
        }
        cmd.env(
            env::CHECKPOINT_LOCAL.name,
            mpcrs_launch::options::local_root(args.checkpoint_local.as_deref(), &dir),
        );
        if let Some(s) = &args.checkpoint_interval {
            cmd.env(env::CHECKPOINT_INTERVAL.name, s);
        }
        if let Some(m) = args.mtbf {
            cmd.env(env::MTBF.name, m.to_string());
        }
        if let Some(levels) = &args.levels {
            cmd.env(env::CHECKPOINT_LEVELS.name, levels.to_string());
        }
        cmd.env(env::CHECKPOINT_GROUP_SIZE.name, args.group_size.to_string());
        cmd.env(env::POST_PROCESSING.name, &args.post_processing);
    }
    if !args.ckpt_service_addrs.is_empty() {
        cmd.env(env::CKPT_SERVICE.name, args.ckpt_service_addrs.join(","));
        if let Some(s) = &args.ckpt_service_key {
            cmd.env(env::CKPT_SERVICE_SECRET.name, s.to_hex());
        }
    }
    cmd.env(
        env::CKPT_SERVICE_FLUSH.name,
        args.ckpt_service_flush.to_arg(),
    );
    // The network the job's processes use between them.
    cmd.env(env::NET.name, &rails.option);
    cmd.env(env::NET_CONFIG.name, &config_file);
    if args.net_stats {
        cmd.env(env::NET_STATS.name, "1");
    }
    if let Some(b) = &args.bind_to {
        cmd.env(env::BIND_TO.name, b);
    }
    if args.report_bindings {
        cmd.env(env::REPORT_BINDINGS.name, "1");
    }
    cmd.env(env::DEADLOCK_CHECK.name, &args.deadlock_check);
    // Read by processes of several ranks, which label or file their ranks'
    // output themselves (output.rs).
    let output = mpcrs_launch::output::OutputPlan {
        labels: mpcrs_launch::options::output_labels(args),
        dir: args.output_filename.clone(),
        ranks_label_themselves: true,
    };
    cmd.envs(output.variables());
    // Images of a job recovered in place are refused: its processes need
    // not be restorable (a second exec, with ASLR off).
    let images = args.checkpoint.is_some() && args.recover.as_deref() != Some("in-place");
    let launch = Launch::first_run(images);
    place(
        args,
        cmd,
        args.processes as usize,
        args.ranks as usize,
        &launch,
    )
    .map_err(|(status, e)| {
        mpcrs_settings::report!(error, "mpcrs-run: {e}");
        ExitCode::from(status)
    })
}

/// One run of the job: its processes and the epoch it resumes from.
struct Run {
    specs: Vec<supervise::ProcessSpec>,
    resumed_from: Option<u64>,
}

/// Runs the job, and with --max-restarts starts it again after a failure
/// (see relaunch.rs): from the newest recoverable epoch of its checkpoint
/// directory, else from its beginning with `from_start` (none for a job
/// restarted from a directory, which always has an epoch). Returns the
/// status of the last run.
fn run_with_restarts(
    args: &Options,
    first: Run,
    program: &str,
    from_start: Option<&dyn Fn(&Options) -> Result<Vec<supervise::ProcessSpec>, ExitCode>>,
    mut in_place: Option<mpcrs_launch::in_place::InPlace>,
) -> ExitCode {
    let checkpoints = args.checkpoint.is_some() || args.restart.is_some();
    let dir = args.checkpoint.as_ref().or(args.restart.as_ref());
    // Hosts left out of later runs are added to a copy.
    let mut args = args.clone();
    let mut run = first;
    let mut previous: Option<relaunch::Failure> = None;
    let mut restarts = 0;
    loop {
        let resumed_from = run.resumed_from;
        let processes = run.specs.len();
        let started = SystemTime::now();
        let output = match mpcrs_launch::output::OutputPlan::new(
            mpcrs_launch::options::output_labels(&args),
            args.output_filename.as_deref(),
            program,
        ) {
            Ok(o) => o,
            Err(e) => {
                mpcrs_settings::report!(error, "mpcrs-run: {e}");
                return ExitCode::from(2);
            }
        };
        let specs = run.specs;
        // Recovered in place, the job runs once, however many processes fail.
        let recover: Option<Box<dyn supervise::Recover>> = match in_place.take() {
            Some(mut r) => match r.prepare(&specs) {
                Ok(()) => Some(Box::new(r)),
                Err(e) => {
                    mpcrs_settings::report!(error, "mpcrs-run: --recover in-place: {e}");
                    return ExitCode::from(2);
                }
            },
            None => None,
        };
        let in_place = recover.is_some();
        let outcome =
            match supervise_job(specs, args.timeout, output, checkpoints, program, recover) {
                Ok(o) => o,
                Err(status) => return status,
            };
        let failed_at = SystemTime::now();
        let status = ExitCode::from(outcome.exit_code().clamp(0, 255) as u8);
        // Recovered in place as long as it could be: not relaunched.
        if restarts >= args.max_restarts || in_place {
            return status;
        }
        let failure = match relaunch::decide(&outcome, resumed_from, previous.as_ref()) {
            Ok(f) => f,
            Err(why) => {
                if let Some(why) = why {
                    mpcrs_settings::report!(error, "mpcrs-run: {why}");
                }
                return status;
            }
        };
        restarts += 1;
        if let supervise::Outcome::Failed { host, .. } = &outcome {
            if relaunch::can_leave_out(&args, host, processes) {
                mpcrs_settings::report!(
                    warn,
                    "mpcrs-run: host {host} is left out of the next runs; spare slots take its processes"
                );
                args.left_out.push(host.clone());
            }
        }
        let newest = dir
            .filter(|d| has_epoch(d))
            .map(|d| restart_specs(&args, d, None));
        run = match newest {
            Some(Ok(plan)) => {
                // Lost: what the failed run did after the epoch, or all of it.
                let since = plan.committed.map_or(started, |c| c.max(started));
                let line = relaunch::restart_line(
                    restarts,
                    args.max_restarts,
                    Some((plan.epoch, &plan.levels_used())),
                    relaunch::work_lost(Some(since), failed_at),
                );
                mpcrs_settings::report!(warn, "mpcrs-run: {line}");
                Run {
                    specs: plan.specs,
                    resumed_from: Some(plan.epoch),
                }
            }
            Some(Err(e)) if from_start.is_none() => {
                mpcrs_settings::report!(
                    error,
                    "mpcrs-run: cannot restart: {}: {e}",
                    dir.map(|d| d.display().to_string()).unwrap_or_default()
                );
                return status;
            }
            newest => {
                let Some(again) = from_start else {
                    return status;
                };
                if let Some(Err(e)) = newest {
                    mpcrs_settings::report!(warn, "mpcrs-run: no epoch can be recovered ({e})");
                }
                let lost = relaunch::work_lost(Some(started), failed_at);
                let line = relaunch::restart_line(restarts, args.max_restarts, None, lost);
                mpcrs_settings::report!(warn, "mpcrs-run: {line}");
                match again(&args) {
                    Ok(specs) => Run {
                        specs,
                        resumed_from: None,
                    },
                    Err(status) => return status,
                }
            }
        };
        previous = Some(failure);
    }
}

/// Whether checkpoint directory `dir` has a complete epoch.
fn has_epoch(dir: &std::path::Path) -> bool {
    mpcrs_cr::CheckpointDir::open(dir)
        .and_then(|s| s.latest())
        .is_ok_and(|l| l.is_some())
}

/// Runs the processes of a job to their end and returns how it ended, or
/// the status to exit with when it could not start.
fn supervise_job(
    specs: Vec<supervise::ProcessSpec>,
    timeout: Option<u64>,
    output: mpcrs_launch::output::OutputPlan,
    checkpoints: bool,
    program: &str,
    recover: Option<Box<dyn supervise::Recover>>,
) -> Result<supervise::Outcome, ExitCode> {
    // Supervised like every process of a job: own process group (nothing it starts
    // outlives the job), Ctrl-C/SIGTERM end it, a failure is reported by name;
    // SIGUSR1 asks a job with checkpoints for one.
    // --timeout or MPIEXEC_TIMEOUT (seconds, as Open MPI's mpirun and MPICH's
    // mpiexec): the job is ended past it.
    let time_limit = match supervise::time_limit(timeout) {
        Ok(t) => t,
        Err(e) => {
            mpcrs_settings::report!(error, "mpcrs-run: {e}");
            return Err(ExitCode::from(2));
        }
    };
    let how = supervise::Supervision {
        output,
        grace: std::time::Duration::from_secs(1),
        forward_checkpoint_requests: checkpoints,
        time_limit,
        recover,
    };
    let outcome = supervise::run(specs, how);
    // Every process is gone: rings offered but never opened go too.
    mpcrs_rails::shm_rail::remove_job_rings(&mpcrs_launch::processes::job_id());
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            mpcrs_settings::report!(error, "mpcrs-run: cannot execute {program}: {e}");
            return Err(ExitCode::from(127));
        }
    };
    if let Some(msg) = outcome.message() {
        mpcrs_settings::report!(error, "mpcrs-run: {msg} ({program})");
    }
    Ok(outcome)
}
