//! `mpcrs-run --max-restarts N`: a job whose process fails starts again by
//! itself, from the newest epoch of its checkpoint directory that can be
//! recovered at any level (from the beginning while it has none), up to N
//! times. Which failures are restarted, and the line that says so.
//!
//! Restarted: a process killed by a signal (kill -9, a lost host, a crash),
//! or one that exited with a failure status while the others ran. Not
//! restarted: a job the user stopped (SIGINT/SIGTERM), one past its time
//! limit, and a run that failed with the same exit status of the same
//! process after resuming from the same epoch as the run before it: a status
//! the program chose (MPI_Abort, a fatal MPI error) comes back every time.

use std::time::{Duration, SystemTime};

use crate::supervise::Outcome;

/// How a failed run ended, to tell a failure that repeats itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub process: usize,
    pub signal: Option<i32>,
    pub code: i32,
    /// The epoch the failed run had resumed from (`None`: from the start).
    pub resumed_from: Option<u64>,
}

/// Whether the job is restarted after a run that ended with `outcome`,
/// having resumed from `resumed_from`; `previous` is the failure before it.
/// `Err` says why not (`None` when the run did not fail).
pub fn decide(
    outcome: &Outcome,
    resumed_from: Option<u64>,
    previous: Option<&Failure>,
) -> Result<Failure, Option<String>> {
    let Outcome::Failed {
        index,
        signal,
        code,
        ..
    } = outcome
    else {
        return Err(None);
    };
    let failure = Failure {
        process: *index,
        signal: *signal,
        code: *code,
        resumed_from,
    };
    if failure.signal.is_none() && previous == Some(&failure) {
        return Err(Some(format!(
            "process {index} failed with status {code} again after resuming from the same {}: \
             the program ends itself there; not restarted again",
            match resumed_from {
                Some(k) => mpcrs_cr::commit::epoch_name(k),
                None => "start".into(),
            }
        )));
    }
    Ok(failure)
}

/// Whether the next run can do without `host`, where a process failed: the
/// hosts of --host/--hostfile all give their slots, and those left, without
/// it and the ones left out before, have enough for `processes`.
pub fn can_leave_out(args: &crate::options::Options, host: &str, processes: usize) -> bool {
    let Some(Ok(hosts)) = crate::options::hosts(args) else {
        return false;
    };
    let spare: Option<usize> = hosts
        .iter()
        .filter(|h| h.name != host && !args.left_out.contains(&h.name))
        .map(|h| h.slots)
        .sum();
    hosts.iter().any(|h| h.name == host) && spare.is_some_and(|s| s >= processes)
}

/// The work a failure at `failed` lost: the time since `since` (the epoch's
/// commit, or the start of the run), if known.
pub fn work_lost(since: Option<SystemTime>, failed: SystemTime) -> Option<Duration> {
    failed.duration_since(since?).ok()
}

/// The line of a restart: its number, where it resumes, the work lost.
pub fn restart_line(
    restart: u32,
    max: u32,
    from: Option<(u64, &str)>,
    lost: Option<Duration>,
) -> String {
    let lost = lost
        .map(|d| format!("; {} of work lost", seconds(d)))
        .unwrap_or_default();
    match from {
        Some((k, levels)) => format!(
            "restart {restart} of {max}: resuming from {} ({levels}){lost}",
            mpcrs_cr::commit::epoch_name(k)
        ),
        None => format!(
            "restart {restart} of {max}: no epoch to resume from yet; starting the job again (what the program checkpointed itself, through CRaaS or FTI, it restores){lost}"
        ),
    }
}

fn seconds(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(index: usize, signal: Option<i32>, code: i32) -> Outcome {
        Outcome::Failed {
            index,
            ranks: 0..1,
            host: "localhost".into(),
            reason: "test".into(),
            signal,
            code,
        }
    }

    #[test]
    fn success_and_interruptions_are_not_restarted() {
        assert_eq!(decide(&Outcome::Success, None, None), Err(None));
        assert_eq!(
            decide(&Outcome::Interrupted { signal: 2 }, Some(3), None),
            Err(None)
        );
    }

    #[test]
    fn a_killed_process_is_restarted_even_twice_from_the_same_epoch() {
        let first = decide(&failed(2, Some(9), 137), Some(4), None).unwrap();
        let again = decide(&failed(2, Some(9), 137), Some(4), Some(&first));
        assert!(again.is_ok());
    }

    #[test]
    fn the_same_exit_status_from_the_same_epoch_stops_the_loop() {
        let first = decide(&failed(1, None, 3), Some(4), None).unwrap();
        let again = decide(&failed(1, None, 3), Some(4), Some(&first)).unwrap_err();
        assert!(again.unwrap().contains("status 3 again"));
        // From a newer epoch it made progress: restarted.
        assert!(decide(&failed(1, None, 3), Some(5), Some(&first)).is_ok());
        // Another process: restarted.
        assert!(decide(&failed(0, None, 3), Some(4), Some(&first)).is_ok());
    }

    fn options(extra: &[&str]) -> crate::options::Options {
        use clap::Parser;
        let mut argv = vec!["mpcrs-run", "-n", "4", "-p", "4"];
        argv.extend_from_slice(extra);
        argv.push("./app");
        crate::options::Options::parse_from(argv)
    }

    #[test]
    fn a_host_is_left_out_only_where_spare_slots_take_its_processes() {
        let spares = options(&["--host", "a:2,b:2,c:2"]);
        assert!(can_leave_out(&spares, "b", 4));
        assert!(!can_leave_out(&spares, "d", 4), "not a host of the job");
        let mut once = spares.clone();
        once.left_out.push("b".into());
        assert!(!can_leave_out(&once, "c", 4), "a and c alone have 4 slots");
        assert!(!can_leave_out(&options(&["--host", "a:2,b:2"]), "b", 4));
        assert!(
            !can_leave_out(&options(&["--host", "a,b,c"]), "b", 4),
            "no slots given"
        );
        assert!(!can_leave_out(&options(&[]), "localhost", 4));
    }

    #[test]
    fn the_line_names_the_epoch_the_levels_and_the_work_lost() {
        let t = SystemTime::now();
        let lost = work_lost(Some(t - Duration::from_millis(2500)), t);
        let line = restart_line(1, 3, Some((4, "L1")), lost);
        assert!(line.starts_with("restart 1 of 3: resuming from "), "{line}");
        assert!(line.contains("(L1); 2.5 s of work lost"), "{line}");
        let line = restart_line(2, 3, None, None);
        assert!(line.contains("starting the job again"), "{line}");
    }
}
