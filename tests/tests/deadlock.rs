//! Deadlock reports (tests/c/deadlock.c): a job whose every rank waits in MPI
//! with nothing in flight names each rank's call and what it waits for and
//! ends with status 85, in threads and across processes; a rank that waits
//! long for a peer that computes is not reported; `--deadlock-check off`
//! leaves a deadlocked job waiting.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use mpcrs_tests::{build_c, c_source, run_job, text, BackgroundJob};

const LIMIT: Duration = Duration::from_secs(120);
/// The exit status of a job ended by a deadlock report.
const DEADLOCK_STATUS: i32 = 85;
const LAYOUTS: [&[&str]; 3] = [
    &["-n", "4"],
    &["-n", "8", "-p", "2"],
    &["-n", "8", "-p", "4"],
];

fn program() -> PathBuf {
    build_c(&c_source("deadlock.c"), "deadlock", None, &[])
}

fn ranks(layout: &[&str]) -> usize {
    layout[1].parse().unwrap()
}

/// Runs the program in `mode` at `layout`, which must end with a deadlock
/// report (and no panic); its standard error.
fn reported(bin: &std::path::Path, layout: &[&str], mode: &str) -> String {
    let mut args = layout.to_vec();
    args.extend([bin.to_str().unwrap(), mode]);
    let o = run_job(&args, LIMIT);
    let (out, err) = text(&o);
    assert_eq!(
        o.status.code(),
        Some(DEADLOCK_STATUS),
        "{mode} at {layout:?}\n{out}\n{err}"
    );
    assert!(
        err.contains("nothing is in flight; ending the job"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    err
}

#[test]
fn a_ring_of_receives_is_reported_rank_by_rank_in_threads_and_across_processes() {
    let bin = program();
    for layout in LAYOUTS {
        let err = reported(&bin, layout, "deadlock");
        let n = ranks(layout);
        for r in 0..n {
            let line = format!(
                "mpcrs: deadlock: rank {r}: in MPI_Recv waits for a message from rank {} with tag 7 on MPI_COMM_WORLD",
                (r + 1) % n
            );
            assert_eq!(err.matches(&line).count(), 1, "{layout:?}: {line}\n{err}");
        }
    }
}

#[test]
fn ranks_in_a_collective_and_in_receives_are_reported_with_their_calls() {
    let bin = program();
    for layout in LAYOUTS {
        let err = reported(&bin, layout, "mixed");
        for r in (1..ranks(layout)).step_by(2) {
            let line = format!(
                "mpcrs: deadlock: rank {r}: in MPI_Barrier waits for the other members of a collective on MPI_COMM_WORLD"
            );
            assert!(err.contains(&line), "{layout:?}: {line}\n{err}");
        }
        assert!(
            err.contains("rank 0: in MPI_Recv waits for a message from rank 1"),
            "{err}"
        );
    }
}

#[test]
fn a_communicator_the_program_named_is_reported_by_its_name() {
    let bin = program();
    for layout in LAYOUTS {
        let err = reported(&bin, layout, "named");
        let n = ranks(layout);
        for r in 0..n {
            let wait = if r % 2 == 0 {
                format!(
                    "in MPI_Recv waits for a message from rank {} with tag 9 on halo (context ",
                    (r + 1) % n
                )
            } else {
                "in MPI_Barrier waits for the other members of a collective on halo (context "
                    .to_string()
            };
            let line = format!("mpcrs: deadlock: rank {r}: {wait}");
            assert!(err.contains(&line), "{layout:?}: {line}\n{err}");
        }
    }
}

#[test]
fn ranks_waiting_for_their_requests_are_reported_with_their_calls() {
    let bin = program();
    for layout in LAYOUTS {
        let err = reported(&bin, layout, "requests");
        let n = ranks(layout);
        for r in 0..n {
            let line = format!(
                "mpcrs: deadlock: rank {r}: in MPI_Waitall waits for its receive from rank {} with tag 5 on MPI_COMM_WORLD to finish",
                (r + 1) % n
            );
            assert!(err.contains(&line), "{layout:?}: {line}\n{err}");
        }
    }
}

#[test]
fn ranks_waiting_long_for_a_peer_that_computes_are_not_reported() {
    let bin = program();
    for layout in LAYOUTS {
        let mut args = layout.to_vec();
        args.extend([bin.to_str().unwrap(), "slow", "3"]);
        let o = run_job(&args, LIMIT);
        let (out, err) = text(&o);
        assert!(o.status.success(), "{layout:?}\n{out}\n{err}");
        assert!(
            out.contains(&format!(
                "slow peer: all {} ranks received 42",
                ranks(layout)
            )),
            "{out}"
        );
        assert!(!err.contains("deadlock"), "{layout:?}: {err}");
    }
}

fn job_started(job: &BackgroundJob) -> bool {
    job.job_processes().len() == 2
}

#[test]
fn with_the_check_off_a_deadlocked_job_waits_until_it_is_killed() {
    let bin = program();
    let job = BackgroundJob::start(&[
        "-n",
        "8",
        "-p",
        "2",
        "--deadlock-check",
        "off",
        bin.to_str().unwrap(),
        "deadlock",
    ]);
    job.wait_for("the job's processes", LIMIT, |_, _| job_started(&job));
    // Ten times as long as a report takes with the check on.
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(5) {
        let (_, err) = job.output();
        assert!(!err.contains("deadlock"), "{err}");
        assert_eq!(job.job_processes().len(), 2, "the job ended: {err}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let (status, _, err) = job.kill_processes();
    assert!(!status.success());
    assert!(!err.contains("mpcrs: deadlock"), "{err}");
}
