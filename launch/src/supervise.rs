//! Supervision of a job's processes by the launcher: start them, forward their
//! output (optionally tagged), and end the whole job as soon as one of them fails,
//! naming it. Unless the launcher reads a terminal, every process runs in its own
//! process group, so ending the job ends whatever the processes started too.

use std::io::Write;
use std::ops::Range;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

/// One process of a job.
pub struct ProcessSpec {
    pub index: usize,
    pub ranks: Range<usize>,
    pub host: String,
    pub command: Command,
    /// Written to the process's standard input, which is then closed: what a
    /// process on another host must not see on a command line (the job's
    /// secret, read by the launch agent's shell).
    pub first_input: Option<String>,
    /// The CPUs it runs on (its share of this host's), if bound.
    pub cpus: Option<libc::cpu_set_t>,
}

/// What replaces a failed process instead of ending the job (recovery in
/// place, in_place.rs).
pub trait Recover {
    /// Process `failed` failed (`outcome` says how): the spec of its
    /// replacement, or `None` to end the job with `outcome`.
    fn replace(&mut self, failed: &ProcessSpec, outcome: &Outcome) -> Option<ProcessSpec>;
    /// Called every round of the supervision, to serve the processes.
    fn tick(&mut self);
}

/// How a job ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Every process exited 0.
    Success,
    /// A process failed first; the others were ended.
    Failed {
        index: usize,
        ranks: Range<usize>,
        host: String,
        /// "exited with status 3" or "was killed by signal 9 (Killed)".
        reason: String,
        /// The signal that killed it, if one did.
        signal: Option<i32>,
        /// The status the launcher should exit with.
        code: i32,
    },
    /// The launcher was asked to stop (SIGINT, SIGTERM) and ended the job.
    Interrupted { signal: i32 },
    /// The job ran longer than its time limit and was ended.
    /// Ran past `limit`, set by `by` (`--timeout`, `MPIEXEC_TIMEOUT`).
    TimedOut { limit: Duration, by: &'static str },
}

/// The status of a job ended for running out of time (as timeout(1) exits).
pub const TIMED_OUT_EXIT_CODE: i32 = 124;

impl Outcome {
    pub fn exit_code(&self) -> i32 {
        match self {
            Outcome::Success => 0,
            Outcome::Failed { code, .. } => *code,
            Outcome::Interrupted { signal } => 128 + signal,
            Outcome::TimedOut { .. } => TIMED_OUT_EXIT_CODE,
        }
    }

    /// The message naming the failed process, if any.
    pub fn message(&self) -> Option<String> {
        match self {
            Outcome::Success => None,
            Outcome::Failed {
                index,
                ranks,
                host,
                reason,
                ..
            } => Some(format!(
                "process {index} (ranks {}-{}, host {host}) {reason}; ending the job",
                ranks.start,
                ranks.end.saturating_sub(1)
            )),
            Outcome::Interrupted { signal } => Some(format!(
                "interrupted by {}; ending the job",
                signal_name(*signal)
            )),
            Outcome::TimedOut { limit, by } => Some(format!(
                "the job ran past its time limit of {} s ({by}); ending the job",
                limit.as_secs_f64()
            )),
        }
    }
}

/// The name of a signal, as strsignal gives it.
pub fn signal_name(sig: i32) -> String {
    // SAFETY: strsignal returns a pointer to a static or thread-local string.
    let p = unsafe { libc::strsignal(sig) };
    if p.is_null() {
        format!("signal {sig}")
    } else {
        // SAFETY: non-null NUL-terminated string from libc.
        let s = unsafe { std::ffi::CStr::from_ptr(p) }.to_string_lossy();
        format!("signal {sig} ({s})")
    }
}

fn describe(status: ExitStatus) -> (String, i32) {
    match (status.code(), status.signal()) {
        (Some(c), _) => (format!("exited with status {c}"), c),
        (None, Some(s)) => (format!("was killed by {}", signal_name(s)), 128 + s),
        _ => ("ended in an unknown way".into(), 1),
    }
}

/// The last SIGINT/SIGTERM the launcher received (0: none).
static STOP_SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_stop(sig: libc::c_int) {
    STOP_SIGNAL.store(sig, Ordering::SeqCst);
}

fn install_stop_handlers() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only stores to an atomic (async-signal-safe).
        unsafe { libc::signal(sig, on_stop as *const () as libc::sighandler_t) };
    }
}

/// Whether children get process groups of their own. Not when the launcher reads
/// a terminal: a process outside the terminal's foreground group that reads it is
/// stopped (SIGTTIN), and Ctrl-C reaches the whole foreground group anyway.
fn own_groups() -> bool {
    // SAFETY: isatty only queries the descriptor.
    unsafe { libc::isatty(0) == 0 }
}

fn kill_group(child: &Child, sig: i32) {
    let target = if own_groups() {
        -(child.id() as i32)
    } else {
        child.id() as i32
    };
    // SAFETY: signalling the child (or the process group we created for it).
    unsafe { libc::kill(target, sig) };
}

/// Ends every process still running: SIGTERM to each group, SIGKILL after `grace`.
fn end_all(children: &mut [(ProcessSpec, Child)], grace: Duration) {
    for (_, c) in children.iter() {
        kill_group(c, libc::SIGTERM);
    }
    let deadline = Instant::now() + grace;
    loop {
        let running = children
            .iter_mut()
            .filter_map(|(_, c)| matches!(c.try_wait(), Ok(None)).then_some(()))
            .count();
        if running == 0 || Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    for (_, c) in children.iter_mut() {
        kill_group(c, libc::SIGKILL);
        let _ = c.wait();
    }
}

/// SIGUSR1 received by the launcher and not yet passed on.
static CHECKPOINT_ASKED: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_checkpoint_request(_sig: libc::c_int) {
    CHECKPOINT_ASKED.store(1, Ordering::SeqCst);
}

/// The job's time limit and what set it: `--timeout SECONDS` (`option`, as
/// Open MPI's mpirun), else MPIEXEC_TIMEOUT in whole seconds as MPICH's
/// mpiexec reads it (unset, empty or 0 is none).
pub fn time_limit(option: Option<u64>) -> Result<Option<(Duration, &'static str)>, String> {
    if let Some(s) = option {
        return Ok(Some((Duration::from_secs(s), "--timeout")));
    }
    let Some(v) = std::env::var_os("MPIEXEC_TIMEOUT") else {
        return Ok(None);
    };
    let v = v.to_string_lossy();
    match v.trim().parse::<u64>() {
        Ok(0) => Ok(None),
        Ok(s) => Ok(Some((Duration::from_secs(s), "MPIEXEC_TIMEOUT"))),
        Err(_) if v.trim().is_empty() => Ok(None),
        Err(_) => Err(format!("MPIEXEC_TIMEOUT={v} is not a number of seconds")),
    }
}

/// How the launcher supervises a job.
pub struct Supervision {
    /// Labels or files for the ranks' output (output.rs).
    pub output: crate::output::OutputPlan,
    /// How long processes get to end after SIGTERM before SIGKILL.
    pub grace: Duration,
    /// Pass SIGUSR1 on to every process (a checkpoint request; only for jobs
    /// with checkpoints, whose processes handle it).
    pub forward_checkpoint_requests: bool,
    /// End the job once it has run this long, and what set the limit
    /// (`--timeout`, MPIEXEC_TIMEOUT).
    pub time_limit: Option<(Duration, &'static str)>,
    /// Replaces failed processes (`--recover in-place`).
    pub recover: Option<Box<dyn Recover>>,
}

/// How long after a process fails with a status the others are watched for
/// one killed by a signal, the likelier cause.
const CAUSE_WINDOW: Duration = Duration::from_millis(100);

/// A process's failure as the job's outcome.
fn failure(spec: &ProcessSpec, status: ExitStatus) -> Outcome {
    let (reason, code) = describe(status);
    Outcome::Failed {
        index: spec.index,
        ranks: spec.ranks.clone(),
        host: spec.host.clone(),
        reason,
        signal: status.signal(),
        code,
    }
}

/// Starts one process of the job and the forwarding of its output.
#[allow(clippy::type_complexity)]
fn start(
    mut spec: ProcessSpec,
    output: &crate::output::OutputPlan,
) -> std::io::Result<(ProcessSpec, Child, Vec<std::thread::JoinHandle<()>>)> {
    let handling = output.handling(&spec.ranks);
    output.prepare(&handling, &mut spec.command)?;
    // Standard input goes to process 0 only (rank 0's), as with mpirun:
    // the others read none.
    if spec.first_input.is_some() {
        spec.command.stdin(Stdio::piped());
    } else if spec.index != 0 {
        spec.command.stdin(Stdio::null());
    }
    if own_groups() {
        // SAFETY: setpgid in the child before exec only changes its own group.
        unsafe {
            spec.command.pre_exec(|| {
                libc::setpgid(0, 0);
                Ok(())
            });
        }
    }
    if let Some(set) = spec.cpus {
        // SAFETY: sched_setaffinity is async-signal-safe and binds only the
        // child.
        unsafe {
            spec.command.pre_exec(move || {
                if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let mut child = spec.command.spawn()?;
    if let (Some(line), Some(mut stdin)) = (spec.first_input.take(), child.stdin.take()) {
        // A few bytes into an empty pipe: the write does not block. A
        // process gone already is reported as it ends.
        let _ = stdin.write_all(line.as_bytes());
        if spec.index == 0 {
            // Process 0 on another host: the launcher's standard input
            // follows the line, through the agent.
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut std::io::stdin().lock(), &mut stdin);
            });
        }
    }
    let forwarders = crate::output::forward_labelled(&handling, &mut child);
    tracing::debug!(
        process = spec.index,
        pid = child.id(),
        host = ?spec.host,
        ranks = ?spec.ranks,
        "process started"
    );
    Ok((spec, child, forwarders))
}

/// Runs the processes to completion; the first failure ends the others (within
/// the `grace` period) and is reported.
pub fn run(specs: Vec<ProcessSpec>, how: Supervision) -> std::io::Result<Outcome> {
    let Supervision {
        output,
        grace,
        forward_checkpoint_requests,
        time_limit,
        mut recover,
    } = how;
    let deadline = time_limit.map(|(t, by)| (Instant::now() + t, t, by));
    install_stop_handlers();
    // Caught whether or not the job takes checkpoints: without, a request is
    // answered with a line, not the launcher's death (its processes would
    // run on without it).
    // SAFETY: the handler only stores to an atomic (async-signal-safe).
    unsafe {
        libc::signal(
            libc::SIGUSR1,
            on_checkpoint_request as *const () as libc::sighandler_t,
        )
    };
    let mut children = Vec::with_capacity(specs.len());
    let mut forwarders = Vec::new();
    for spec in specs {
        match start(spec, &output) {
            Ok((spec, child, f)) => {
                forwarders.extend(f);
                children.push((spec, child));
            }
            Err(e) => {
                end_all(&mut children, grace);
                return Err(e);
            }
        }
    }
    let mut done = vec![false; children.len()];
    let outcome = loop {
        let sig = STOP_SIGNAL.swap(0, Ordering::SeqCst);
        if sig != 0 {
            end_all(&mut children, grace);
            break Outcome::Interrupted { signal: sig };
        }
        let asked = CHECKPOINT_ASKED.swap(0, Ordering::SeqCst) != 0;
        if asked && !forward_checkpoint_requests {
            mpcrs_settings::report!(
                warn,
                "mpcrs-run: SIGUSR1 asks for a checkpoint, but this job runs without --checkpoint DIR; ignored"
            );
        } else if asked {
            for (i, (_, child)) in children.iter().enumerate() {
                if !done[i] {
                    // SAFETY: signalling a child of ours that has not been reaped.
                    unsafe { libc::kill(child.id() as i32, libc::SIGUSR1) };
                }
            }
        }
        let mut failed = None;
        for (i, (spec, child)) in children.iter_mut().enumerate() {
            if done[i] {
                continue;
            }
            if let Some(status) = child.try_wait()? {
                done[i] = true;
                tracing::debug!(process = spec.index, %status, "process ended");
                if !status.success() {
                    failed = Some(failure(spec, status));
                    break;
                }
            }
        }
        // A process that exits with a failure status may only be the first
        // to notice another's death (its peer's connection reset): a process
        // killed by a signal within the next moments is the cause, named
        // instead (and the host a restart leaves out).
        // (Under recovery in place the others do not end on a death.)
        if let (Some(Outcome::Failed { signal: None, .. }), None) = (&failed, &recover) {
            let until = Instant::now() + CAUSE_WINDOW;
            'look: while Instant::now() < until {
                for (i, (spec, child)) in children.iter_mut().enumerate() {
                    if done[i] {
                        continue;
                    }
                    if let Some(status) = child.try_wait()? {
                        done[i] = true;
                        if status.signal().is_some() {
                            failed = Some(failure(spec, status));
                            break 'look;
                        }
                    }
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        if let Some(f) = failed {
            let i = match &f {
                Outcome::Failed { index, .. } => {
                    children.iter().position(|(s, _)| s.index == *index)
                }
                _ => None,
            };
            let replacement = match (&mut recover, i) {
                (Some(r), Some(i)) => r.replace(&children[i].0, &f).map(|spec| (i, spec)),
                _ => None,
            };
            match replacement.map(|(i, spec)| (i, start(spec, &output))) {
                Some((i, Ok((spec, child, f)))) => {
                    forwarders.extend(f);
                    children[i] = (spec, child);
                    done[i] = false;
                }
                Some((_, Err(e))) => {
                    mpcrs_settings::report!(
                        error,
                        "mpcrs-run: cannot start a replacement process: {e}"
                    );
                    end_all(&mut children, grace);
                    break f;
                }
                None => {
                    end_all(&mut children, grace);
                    break f;
                }
            }
        }
        if let Some(r) = &mut recover {
            r.tick();
        }
        if let Some((at, limit, by)) = deadline {
            if Instant::now() >= at && !done.iter().all(|&d| d) {
                end_all(&mut children, grace);
                break Outcome::TimedOut { limit, by };
            }
        }
        if done.iter().all(|&d| d) {
            break Outcome::Success;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    // The processes' output is read to its end; a pipe that an orphan of a
    // killed process holds open (its checkpoint's writer, still writing) is
    // waited for only a moment, or the launcher would outlive its job by the
    // length of that write.
    let until = Instant::now() + OUTPUT_DRAIN;
    for f in forwarders {
        while !f.is_finished() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(2));
        }
        if f.is_finished() {
            let _ = f.join();
        }
    }
    Ok(outcome)
}

/// How long the output of a job that ended is still read when a pipe stays
/// open (see above).
const OUTPUT_DRAIN: Duration = Duration::from_secs(2);

#[cfg(test)]
mod tests {
    fn quiet(grace: Duration) -> Supervision {
        Supervision {
            output: Default::default(),
            grace,
            forward_checkpoint_requests: false,
            time_limit: None,
            recover: None,
        }
    }
    use super::*;

    fn sh(index: usize, script: &str) -> ProcessSpec {
        let mut c = Command::new("sh");
        c.args(["-c", script]);
        ProcessSpec {
            index,
            ranks: index * 2..index * 2 + 2,
            host: "localhost".into(),
            command: c,
            first_input: None,
            cpus: None,
        }
    }

    /// Running (a zombie waiting for its reaper counts as gone).
    fn alive(pid: i32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| {
                s.rsplit_once(')')
                    .map(|(_, rest)| rest.trim_start().starts_with('Z'))
            })
            .is_some_and(|zombie| !zombie)
    }

    #[test]
    fn a_killed_process_ends_the_job_quickly_and_nothing_is_left() {
        let marker = std::env::temp_dir().join(format!("mpcrs-supervise-{}", std::process::id()));
        let pidfile = marker.display().to_string();
        // Processes 0 and 2 run long and start a grandchild each; process 1 dies.
        let specs = vec![
            sh(0, &format!("sleep 60 & echo $! >> {pidfile}; wait")),
            sh(1, "sleep 0.3; kill -9 $$"),
            sh(2, &format!("sleep 60 & echo $! >> {pidfile}; wait")),
        ];
        let t0 = Instant::now();
        let out = run(specs, quiet(Duration::from_millis(500))).unwrap();
        assert!(
            t0.elapsed() < Duration::from_secs(2),
            "took {:?}",
            t0.elapsed()
        );
        assert_eq!(out.exit_code(), 128 + 9);
        let msg = out.message().unwrap();
        assert!(
            msg.starts_with("process 1 (ranks 2-3, host localhost) was killed by signal 9"),
            "{msg}"
        );
        let pids: Vec<i32> = std::fs::read_to_string(&marker)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        let _ = std::fs::remove_file(&marker);
        assert_eq!(pids.len(), 2, "grandchildren recorded");
        std::thread::sleep(Duration::from_millis(50));
        for p in pids {
            assert!(!alive(p), "grandchild {p} survived the job");
        }
    }

    #[test]
    fn a_job_past_its_time_limit_is_ended_and_reported() {
        let how = || {
            let mut how = quiet(Duration::from_millis(200));
            how.time_limit = Some((Duration::from_secs(1), "MPIEXEC_TIMEOUT"));
            how
        };
        let t = Instant::now();
        let out = run(vec![sh(0, "sleep 30"), sh(1, "exit 0")], how()).unwrap();
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
        assert_eq!(
            out,
            Outcome::TimedOut {
                limit: Duration::from_secs(1),
                by: "MPIEXEC_TIMEOUT"
            }
        );
        assert_eq!(out.exit_code(), TIMED_OUT_EXIT_CODE);
        assert!(out
            .message()
            .unwrap()
            .contains("time limit of 1 s (MPIEXEC_TIMEOUT)"));
        let quick = run(vec![sh(0, "exit 0")], how()).unwrap();
        assert_eq!(quick, Outcome::Success);
    }

    #[test]
    fn exit_statuses_and_success() {
        let ok = run(
            vec![sh(0, "exit 0"), sh(1, "true")],
            quiet(Duration::from_millis(200)),
        )
        .unwrap();
        assert_eq!(ok, Outcome::Success);
        let bad = run(
            vec![sh(0, "sleep 5"), sh(1, "exit 3")],
            quiet(Duration::from_millis(200)),
        )
        .unwrap();
        assert_eq!(bad.exit_code(), 3);
        assert!(bad
            .message()
            .unwrap()
            .contains("process 1 (ranks 2-3, host localhost) exited with status 3"));
    }
}
