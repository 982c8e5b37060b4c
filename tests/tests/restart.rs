//! Checkpoint, kill -9, restart, compare: jobs killed after an epoch commits
//! resume from it (`mpcrs-run --restart DIR`) and end with the results of an
//! uninterrupted run; bad images, missing images and changed executables are
//! refused naming the file; a writer killed mid-dump leaves the previous epoch.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::time::Duration;

use mpcrs_tests::{
    build_c, c_source, child_processes, example, expect_success, heat_checksum, latest_epoch,
    program, restarted_after, run_job, shared_bench, BackgroundJob,
};

const LIMIT: Duration = Duration::from_secs(120);

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mpcrs-restart-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// How a heat run is laid out and sized: mpcrs-run's layout options, then KiB
/// per rank, iterations and iterations between checkpoints.
struct HeatRun {
    layout: &'static [&'static str],
    kib: &'static str,
    iterations: &'static str,
    every: u64,
}

/// One process of 8 ranks on 2 workers.
const ONE_PROCESS: HeatRun = HeatRun {
    layout: &["-n", "8", "-c", "2"],
    kib: "256",
    iterations: "16000",
    every: 1000,
};

/// The checksum of heat `bin` for `run`'s ranks and size, in one process,
/// not interrupted.
fn uninterrupted_checksum(bin: &Path, run: &HeatRun) -> String {
    let n = run.layout[run.layout.iter().position(|&a| a == "-n").unwrap() + 1];
    heat_checksum(&expect_success(
        &run_job(
            &[
                "-n",
                n,
                "-c",
                "2",
                bin.to_str().unwrap(),
                run.kib,
                run.iterations,
            ],
            LIMIT,
        ),
        "uninterrupted heat",
    ))
}

/// Waits until an epoch above `above` commits in `dir`, then kills the job's
/// processes; returns mpcrs-run's status and standard error.
fn kill_after_epoch(job: BackgroundJob, dir: &Path, above: u64) -> (ExitStatus, String) {
    job.wait_for("an epoch to commit", LIMIT, |_, _| {
        latest_epoch(dir).is_some_and(|k| k > above)
    });
    let (status, _, err) = job.kill_processes();
    (status, err)
}

/// Starts `mpcrs-run ARGS`, waits until an epoch above `above` commits, and
/// kills the job's processes; returns the latest epoch then.
fn run_until_epoch_then_kill(args: &[&str], dir: &Path, above: u64) -> u64 {
    let (status, err) = kill_after_epoch(BackgroundJob::start(args), dir, above);
    assert!(!status.success(), "a killed job must fail: {err}");
    assert!(err.contains("killed by signal 9"), "{err}");
    // Read once the job is gone: an epoch may have committed meanwhile.
    latest_epoch(dir).unwrap()
}

/// Kill after an epoch, restart, kill again after a later epoch, restart again:
/// the last run's checksum is the uninterrupted one.
fn killed_twice_and_restarted(bin: &Path, name: &str, run: &HeatRun) {
    killed_twice_and_restarted_with(bin, name, run, &[], |_| ());
}

/// [`killed_twice_and_restarted`] with more options for every run and a
/// check of the progress lines of the last run (the others are killed as
/// soon as an epoch commits, maybe before its line is printed).
fn killed_twice_and_restarted_with(
    bin: &Path,
    name: &str,
    run: &HeatRun,
    options: &[&str],
    check_progress: impl Fn(&str),
) {
    let dir = scratch(name);
    let d = dir.to_str().unwrap();
    let every = run.every.to_string();
    let reference = uninterrupted_checksum(bin, run);
    let mut first = run.layout.to_vec();
    first.extend_from_slice(options);
    first.extend_from_slice(&["--checkpoint", d, bin.to_str().unwrap()]);
    first.extend_from_slice(&[run.kib, run.iterations, &every]);
    let k1 = run_until_epoch_then_kill(&first, &dir, 0);

    let restart: Vec<&str> = options.iter().copied().chain(["--restart", d]).collect();
    // First restart: resumes from epoch k1, then is killed after a later one.
    let job = BackgroundJob::start(&restart);
    job.wait_for("the restart and a later epoch", LIMIT, |out, _| {
        restarted_after(out).is_some() && latest_epoch(&dir).is_some_and(|k| k > k1)
    });
    let resumed1 = restarted_after(&job.output().0).unwrap();
    assert_eq!(
        resumed1,
        k1 * run.every,
        "epoch {k1} was taken after iteration {}",
        k1 * run.every
    );
    let (status, _, err) = job.kill_processes();
    assert!(!status.success(), "{err}");
    assert!(
        err.contains("restarting") && err.contains(&format!("epoch-{k1}")),
        "{err}"
    );
    let k2 = latest_epoch(&dir).unwrap();

    // Second restart, to the end.
    let o = run_job(&restart, LIMIT);
    let out = expect_success(&o, "second restart");
    check_progress(&String::from_utf8_lossy(&o.stderr));
    let resumed2 = restarted_after(&out).unwrap();
    assert!(resumed2 > resumed1, "{out}");
    assert!(k2 > k1);
    assert_eq!(heat_checksum(&out), reference, "{out}");
    // mpcrs-ckpt ls says what the latest epoch cost, as its progress line did.
    let listed = expect_success(&mpcrs_tests::mpcrs_ckpt(&["ls", d]), "mpcrs-ckpt ls");
    let latest = listed
        .lines()
        .find(|l| l.contains("latest"))
        .unwrap_or_default();
    assert!(
        latest.contains("stall ") && latest.contains("cost to the program at most"),
        "{listed}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn rust_heat_killed_twice_restarts_with_the_uninterrupted_checksum() {
    killed_twice_and_restarted(&example("heat"), "rust-heat", &ONE_PROCESS);
}

fn c_heat_with_mpix() -> PathBuf {
    build_c(
        &shared_bench("heat.c"),
        "heat-restart",
        None,
        &["-DWITH_MPIX", "-lm"],
    )
}

#[test]
fn c_heat_killed_twice_restarts_with_the_uninterrupted_checksum() {
    killed_twice_and_restarted(&c_heat_with_mpix(), "c-heat", &ONE_PROCESS);
}

#[test]
fn c_heat_across_4_processes_killed_twice_restarts_with_the_uninterrupted_checksum() {
    let run = HeatRun {
        layout: &["-n", "16", "-p", "4"],
        kib: "256",
        iterations: "4000",
        every: 400,
    };
    killed_twice_and_restarted(&c_heat_with_mpix(), "c-heat-p4", &run);
}

/// Grids of 2 MiB per rank: regions large enough to be copied in the
/// checkpoint's stall instead of shared with the image writer (staging).
fn staged_heat(layout: &'static [&'static str]) -> HeatRun {
    HeatRun {
        layout,
        kib: "2048",
        iterations: "2400",
        every: 150,
    }
}

/// Every checkpoint's progress line says the grids were copied in the stall
/// (at least `mb` MB: staging leaves to copy-on-write a region that holds
/// what the writer reads, such as one the kernel merged with a thread's
/// stack) and what the rest cost.
fn staged_at_least(mb: u64) -> impl Fn(&str) {
    move |err: &str| {
        let lines: Vec<&str> = err
            .lines()
            .filter(|l| l.contains("checkpoint epoch") && l.contains("application stall"))
            .collect();
        assert!(!lines.is_empty(), "no progress line: {err}");
        for l in lines {
            let copied = l
                .split(" MB copied in the stall")
                .next()
                .and_then(|h| h.rsplit(' ').next())
                .and_then(|n| n.parse::<u64>().ok());
            assert!(copied.is_some_and(|c| c >= mb), "{l}");
            assert!(l.contains("cost to the program at most"), "{l}");
        }
    }
}

/// The kill -9 and restart cycle with the ranks' grids staged: in threads,
/// in processes of one rank, at -n 8 -p 2 and -n 8 -p 4. Each image holds
/// the grids as they were at the fork although the ranks rewrote them while
/// it was written, and each restart, itself checkpointing again, ends with
/// the uninterrupted checksum.
#[test]
fn staged_c_heat_in_threads_killed_twice_restarts_with_the_uninterrupted_checksum() {
    let run = staged_heat(&["-n", "8", "-c", "2"]);
    // 8 ranks of two 2 MiB grids: 33 MB.
    killed_twice_and_restarted_with(
        &c_heat_with_mpix(),
        "staged-threads",
        &run,
        &[],
        staged_at_least(16),
    );
}

#[test]
fn staged_c_heat_in_process_mode_killed_twice_restarts_with_the_uninterrupted_checksum() {
    let run = staged_heat(&["-n", "4", "--process-mode"]);
    killed_twice_and_restarted_with(
        &c_heat_with_mpix(),
        "staged-pm",
        &run,
        &[],
        staged_at_least(8),
    );
}

#[test]
fn staged_c_heat_across_2_processes_killed_twice_restarts_with_the_uninterrupted_checksum() {
    let run = staged_heat(&["-n", "8", "-p", "2"]);
    killed_twice_and_restarted_with(
        &c_heat_with_mpix(),
        "staged-p2",
        &run,
        &[],
        staged_at_least(16),
    );
}

#[test]
fn staged_c_heat_across_4_processes_killed_twice_restarts_with_the_uninterrupted_checksum() {
    let run = staged_heat(&["-n", "8", "-p", "4"]);
    killed_twice_and_restarted_with(
        &c_heat_with_mpix(),
        "staged-p4",
        &run,
        &[],
        staged_at_least(16),
    );
}

/// With staging off, nothing is copied in the stall and the images are
/// right all the same.
#[test]
fn unstaged_c_heat_killed_twice_restarts_with_the_uninterrupted_checksum() {
    let run = staged_heat(&["-n", "8", "-p", "2"]);
    killed_twice_and_restarted_with(
        &c_heat_with_mpix(),
        "unstaged-p2",
        &run,
        &["--checkpoint-staging", "off"],
        |err: &str| {
            let lines: Vec<&str> = err
                .lines()
                .filter(|l| l.contains("checkpoint epoch") && l.contains("application stall"))
                .collect();
            assert!(!lines.is_empty(), "{err}");
            assert!(
                lines
                    .iter()
                    .all(|l| l.contains(" 0 MB copied in the stall")),
                "{err}"
            );
        },
    );
}

/// Heat whose halos travel by MPI_Put between fences, with a passive-target
/// accumulate every 10 iterations (tests/c/heat_rma.c): checkpointed with its
/// windows open between epochs.
fn c_heat_with_windows() -> PathBuf {
    build_c(&c_source("heat_rma.c"), "heat-rma", None, &[])
}

#[test]
fn c_heat_with_windows_killed_twice_restarts_with_the_uninterrupted_checksum() {
    killed_twice_and_restarted(&c_heat_with_windows(), "c-heat-rma", &ONE_PROCESS);
}

#[test]
fn c_heat_with_windows_across_4_processes_killed_twice_restarts_with_the_uninterrupted_checksum() {
    let run = HeatRun {
        layout: &["-n", "8", "-p", "4"],
        kib: "128",
        iterations: "3000",
        every: 300,
    };
    killed_twice_and_restarted(&c_heat_with_windows(), "c-heat-rma-p4", &run);
}

#[test]
fn c_heat_with_windows_across_2_processes_killed_twice_restarts_with_the_uninterrupted_checksum() {
    let run = HeatRun {
        layout: &["-n", "8", "-p", "2"],
        kib: "128",
        iterations: "3000",
        every: 300,
    };
    killed_twice_and_restarted(&c_heat_with_windows(), "c-heat-rma-p2", &run);
}

/// The checksum tests/c/rma_during_checkpoint.c prints for `size` ranks and
/// `rounds` rounds: what each upper rank got back, every round, plus what its
/// last round left in the lower rank's window (integers: exact in doubles).
fn transfers_checksum(size: u32, rounds: u32) -> f64 {
    let row = |u: u32, r: u32| -> f64 {
        (0..1u32 << 17)
            .step_by(4096)
            .map(|i| u as f64 * 1e6 + r as f64 * 1e3 + (i % 997) as f64)
            .sum()
    };
    (size / 2..size)
        .map(|u| (0..rounds).map(|r| row(u, r)).sum::<f64>() + row(u, rounds - 1))
        .sum()
}

/// A process whose ranks are all inside MPIX_Checkpoint still answers
/// one-sided transfers above the eager limit (rendezvous frames of its
/// window agents) until every process holds its ranks: a rank of another
/// process puts and gets 1 MiB through it, then enters; the last epoch
/// restarts to the same result.
fn large_transfers_answered_during_a_checkpoint(layout: &[&str], name: &str) {
    let bin = build_c(
        &c_source("rma_during_checkpoint.c"),
        "rma-during-checkpoint",
        None,
        &[],
    );
    let dir = scratch(name);
    let (b, d) = (bin.to_str().unwrap(), dir.to_str().unwrap());
    let size: u32 = layout[1].parse().unwrap();
    let rounds = 3;
    let expected = transfers_checksum(size, rounds);
    // "rounds R mismatches 0 checksum X" with X the expected sum.
    let check = |out: &str, when: &str| {
        let line = out
            .lines()
            .find(|l| l.starts_with("rounds "))
            .unwrap_or_else(|| panic!("{name} {when}: no result line in {out:?}"));
        let w: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(
            (w[1], w[2], w[3]),
            ("3", "mismatches", "0"),
            "{name} {when}: {line}"
        );
        let got: f64 = w[5].parse().unwrap();
        assert!(
            (got - expected).abs() <= expected * 1e-9,
            "{name} {when}: checksum {got}, expected {expected}"
        );
    };
    let mut args = layout.to_vec();
    args.extend(["--checkpoint", d, b, "3"]);
    check(&expect_success(&run_job(&args, LIMIT), name), "");
    check(
        &expect_success(&run_job(&["--restart", d], LIMIT), name),
        "restarted",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn large_transfers_answered_during_a_checkpoint_in_threads() {
    large_transfers_answered_during_a_checkpoint(&["-n", "8"], "rma-ckpt-n8");
}

#[test]
fn large_transfers_answered_during_a_checkpoint_at_2_processes() {
    large_transfers_answered_during_a_checkpoint(&["-n", "2", "-p", "2"], "rma-ckpt-n2p2");
}

#[test]
fn large_transfers_answered_during_a_checkpoint_at_8_ranks_in_2_processes() {
    large_transfers_answered_during_a_checkpoint(&["-n", "8", "-p", "2"], "rma-ckpt-n8p2");
}

#[test]
fn large_transfers_answered_during_a_checkpoint_at_8_ranks_in_4_processes() {
    large_transfers_answered_during_a_checkpoint(&["-n", "8", "-p", "4"], "rma-ckpt-n8p4");
}

/// Heat writing its progress through MPI-IO (tests/c/heat_io.c): explicit
/// offsets, a view with the individual pointer, the shared pointer; the
/// files are open at every checkpoint. A restart reopens them at their
/// descriptors and the pointers come back with the ranks' memory: the file
/// read back at the end sums as in an uninterrupted run.
fn c_heat_with_files() -> PathBuf {
    build_c(&c_source("heat_io.c"), "heat-io", None, &[])
}

#[test]
fn c_heat_with_open_files_killed_twice_restarts_with_the_uninterrupted_checksum() {
    killed_twice_and_restarted(&c_heat_with_files(), "c-heat-io", &ONE_PROCESS);
}

#[test]
fn c_heat_with_open_files_across_2_processes_killed_twice_restarts_with_the_uninterrupted_checksum()
{
    let run = HeatRun {
        layout: &["-n", "8", "-p", "2"],
        kib: "128",
        iterations: "3000",
        every: 300,
    };
    killed_twice_and_restarted(&c_heat_with_files(), "c-heat-io-p2", &run);
}

#[test]
fn c_heat_with_open_files_across_4_processes_killed_twice_restarts_with_the_uninterrupted_checksum()
{
    let run = HeatRun {
        layout: &["-n", "8", "-p", "4"],
        kib: "128",
        iterations: "3000",
        every: 300,
    };
    killed_twice_and_restarted(&c_heat_with_files(), "c-heat-io-p4", &run);
}

/// Ranks reading each other's memory through MPI_Win_allocate_shared
/// (tests/c/shared_rma.c).
fn c_shared_window() -> PathBuf {
    build_c(&c_source("shared_rma.c"), "shared-rma", None, &[])
}

#[test]
fn a_shared_window_in_one_process_killed_twice_restarts_with_the_uninterrupted_checksum() {
    killed_twice_and_restarted(&c_shared_window(), "shared-rma", &ONE_PROCESS);
}

/// Across processes a shared window's memory is a segment the processes
/// map: each image holds its contents, and a restart maps it shared again.
#[test]
fn a_shared_window_across_2_processes_killed_twice_restarts_with_the_uninterrupted_checksum() {
    let run = HeatRun {
        layout: &["-n", "8", "-p", "2"],
        kib: "64",
        iterations: "4000",
        every: 400,
    };
    killed_twice_and_restarted(&c_shared_window(), "shared-rma-p2", &run);
}

#[test]
fn a_shared_window_across_4_processes_killed_twice_restarts_with_the_uninterrupted_checksum() {
    let run = HeatRun {
        layout: &["-n", "8", "-p", "4"],
        kib: "64",
        iterations: "4000",
        every: 400,
    };
    killed_twice_and_restarted(&c_shared_window(), "shared-rma-p4", &run);
}

/// A checkpoint asked from outside lets the ranks run while the images are
/// taken, so they would not agree on a segment's contents: refused while a
/// shared window spans processes, saying why; the job goes on to the
/// uninterrupted result.
#[test]
fn checkpoints_from_outside_are_refused_while_a_shared_window_spans_processes() {
    let bin = c_shared_window();
    let dir = scratch("shared-rma-interval");
    let d = dir.to_str().unwrap();
    let b = bin.to_str().unwrap();
    let (kib, iterations) = ("256", "6000");
    let o = run_job(
        &[
            "-n",
            "8",
            "-p",
            "2",
            "--checkpoint",
            d,
            "--checkpoint-interval",
            "0.3",
            b,
            kib,
            iterations,
        ],
        LIMIT,
    );
    let out = expect_success(&o, "shared window across processes, interval checkpoints");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("checkpoint refused: 1 window(s) of MPI_Win_allocate_shared span processes"),
        "{err}"
    );
    assert_eq!(latest_epoch(&dir), None, "no epoch may commit");
    let reference = heat_checksum(&expect_success(
        &run_job(&["-n", "8", "-c", "2", b, kib, iterations], LIMIT),
        "uninterrupted",
    ));
    assert_eq!(heat_checksum(&out), reference);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn c_heat_64_ranks_across_2_processes_killed_twice_restarts_with_the_uninterrupted_checksum() {
    let run = HeatRun {
        layout: &["-n", "64", "-p", "2"],
        kib: "128",
        iterations: "4000",
        every: 400,
    };
    killed_twice_and_restarted(&c_heat_with_mpix(), "c-heat-n64-p2", &run);
}

#[test]
fn rust_heat_across_3_processes_over_tcp_killed_twice_restarts_with_the_uninterrupted_checksum() {
    let run = HeatRun {
        layout: &["-n", "6", "-p", "3", "--net", "tcp"],
        kib: "256",
        iterations: "8000",
        every: 800,
    };
    killed_twice_and_restarted(&example("heat"), "rust-heat-p3-tcp", &run);
}

/// ckpt_pending in `layout` with messages of `words` words: killed after its
/// second epoch, restarted, it ends with the total of an uninterrupted run.
fn unmatched_messages_survive_a_restart(name: &str, layout: &[&str], words: &str) {
    let dir = scratch(name);
    let d = dir.to_str().unwrap();
    let bin = program("ckpt_pending");
    let b = bin.to_str().unwrap();
    let mut plain_args = layout.to_vec();
    plain_args.extend_from_slice(&[b, "10", "0", words]);
    let plain = expect_success(&run_job(&plain_args, LIMIT), "ckpt_pending");
    let total = plain
        .lines()
        .find(|l| l.starts_with("total "))
        .unwrap()
        .to_string();
    let mut args = layout.to_vec();
    args.extend_from_slice(&["--checkpoint", d, b, "10", "150", words]);
    let k = run_until_epoch_then_kill(&args, &dir, 1);
    let restart = run_job(&["--restart", d], LIMIT);
    let out = expect_success(&restart, "restart");
    assert!(
        out.contains(&format!("round {}: restarted", k - 1)),
        "latest was epoch-{k} after the kill\n{out}\n{}",
        String::from_utf8_lossy(&restart.stderr)
    );
    assert!(out.contains(&total), "expected {total}:\n{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn unmatched_messages_at_the_checkpoint_survive_a_restart() {
    unmatched_messages_survive_a_restart("pending", &["-n", "6"], "1024");
}

/// Across processes the large messages are rendezvous whose notice waits,
/// unmatched, in the receiver's image while the data is in the sender's.
#[test]
fn unmatched_messages_and_rendezvous_across_processes_survive_a_restart() {
    unmatched_messages_survive_a_restart("pending-p3", &["-n", "6", "-p", "3"], "16384");
}

/// The writer of a checkpoint: a child of the job's process.
fn writer_of(job: &BackgroundJob) -> Option<i32> {
    let app = *job.job_processes().first()?;
    child_processes(app).first().copied()
}

#[test]
fn a_writer_killed_mid_dump_leaves_the_previous_epoch_to_restart_from() {
    let dir = scratch("writer");
    let d = dir.to_str().unwrap();
    let bin = example("heat");
    let b = bin.to_str().unwrap();
    let reference = uninterrupted_checksum(&bin, &ONE_PROCESS);
    let job = BackgroundJob::start(&[
        "-n",
        "8",
        "-c",
        "2",
        "--checkpoint",
        d,
        b,
        "256",
        "16000",
        "1000",
    ]);
    job.wait_for("epoch 1", LIMIT, |_, _| latest_epoch(&dir).is_some());
    let before = latest_epoch(&dir).unwrap();
    // The next writer, killed while it writes.
    job.wait_for("the next writer", LIMIT, |_, _| match writer_of(&job) {
        Some(w) => {
            // SAFETY: kill only sends a signal.
            unsafe { libc::kill(w, libc::SIGKILL) };
            true
        }
        None => false,
    });
    job.wait_for("the failed epoch", LIMIT, |_, err| {
        err.contains("failed, the previous one stays")
    });
    let (_, _, err) = job.kill_processes();
    assert!(err.contains("the writer was killed by signal 9"), "{err}");
    let latest = latest_epoch(&dir).unwrap();
    assert!(
        latest == before || latest == before + 1,
        "latest moved from {before} to {latest}"
    );
    assert!(
        dir.join(format!("epoch-{}.partial", latest + 1)).exists()
            || !dir.join(format!("epoch-{}", latest + 1)).exists(),
        "the killed writer's epoch must not be complete"
    );
    let out = expect_success(&run_job(&["--restart", d], LIMIT), "restart");
    assert_eq!(restarted_after(&out), Some(latest * 1000), "{out}");
    assert_eq!(heat_checksum(&out), reference);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A short checkpointed run of a private copy of the heat example; returns
/// the directory and the copy.
fn checkpointed_copy(name: &str) -> (PathBuf, PathBuf) {
    checkpointed_heat(name, &["-n", "4"])
}

/// Heat (a copy of the example's executable, in the scratch directory) run
/// to its end in `layout` with an epoch every 100 iterations, the last two
/// kept: the scratch directory and the checkpoint directory, its node-local
/// storage in `local/`.
fn checkpointed_heat(name: &str, layout: &[&str]) -> (PathBuf, PathBuf) {
    let dir = scratch(name);
    std::fs::create_dir_all(&dir).unwrap();
    let exe = dir.join("heat-copy");
    std::fs::copy(example("heat"), &exe).unwrap();
    let ckpt = dir.join("ckpt");
    let local = dir.join("local");
    let mut args = layout.to_vec();
    args.extend_from_slice(&[
        "--checkpoint",
        ckpt.to_str().unwrap(),
        "--checkpoint-local",
        local.to_str().unwrap(),
        exe.to_str().unwrap(),
        "64",
        "300",
        "100",
    ]);
    expect_success(&run_job(&args, LIMIT), "checkpointed heat");
    (dir, ckpt)
}

fn refused(ckpt: &Path, extra: &[&str]) -> String {
    let mut a = vec!["--restart", ckpt.to_str().unwrap()];
    a.extend_from_slice(extra);
    let o = run_job(&a, LIMIT);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(!o.status.success(), "a restart must be refused: {err}");
    err
}

/// Flips one byte inside the data of the image at `image`; returns its bytes
/// as they were.
fn corrupt(image: &Path) -> Vec<u8> {
    let (_, header) = mpcrs_cr::image::read_header(image).unwrap();
    let r = header
        .regions
        .iter()
        .find(|r| r.has_data() && r.len() > 8192)
        .unwrap();
    let mut bytes = std::fs::read(image).unwrap();
    let good = bytes.clone();
    bytes[(r.data_offset + 4100) as usize] ^= 0x20;
    std::fs::write(image, &bytes).unwrap();
    good
}

#[test]
fn bad_images_missing_images_and_changed_executables_are_refused_by_name() {
    let (dir, ckpt) = checkpointed_copy("refused");
    let latest = latest_epoch(&ckpt).unwrap();
    let epoch = latest.to_string();
    let l1 = dir.join(format!("local/node-0/epoch-{latest}/process-0.img"));
    let l4 = ckpt.join(format!("epoch-{latest}/process-0.img"));
    assert!(l1.is_file() && l4.is_file());

    // One byte flipped in both levels' images: refused, naming both.
    let good = corrupt(&l1);
    corrupt(&l4);
    let err = refused(&ckpt, &["--epoch", &epoch]);
    for image in [&l1, &l4] {
        assert!(err.contains(image.to_str().unwrap()), "{err}");
    }
    assert!(err.contains("checksum mismatch"), "{err}");
    // Truncated.
    std::fs::write(&l1, &good[..good.len() / 2]).unwrap();
    let err = refused(&ckpt, &["--epoch", &epoch]);
    assert!(
        err.contains(l1.to_str().unwrap()) && err.contains("truncated"),
        "{err}"
    );
    // Missing at both levels.
    std::fs::remove_file(&l1).unwrap();
    std::fs::remove_file(&l4).unwrap();
    let err = refused(&ckpt, &["--epoch", &epoch]);
    assert!(
        err.contains("no level recovers process 0: L1 image missing")
            && err.contains(&format!("L4 image missing ({})", l4.display())),
        "{err}"
    );
    std::fs::write(&l1, &good).unwrap();
    // An epoch that does not exist.
    let err = refused(&ckpt, &["--epoch", "99"]);
    assert!(err.contains("epoch 99 is not a complete epoch"), "{err}");
    // The executable changed since.
    let exe = dir.join("heat-copy");
    let mut f = std::fs::OpenOptions::new().append(true).open(&exe).unwrap();
    std::io::Write::write_all(&mut f, b"\0").unwrap();
    drop(f);
    let err = refused(&ckpt, &["--epoch", &epoch]);
    assert!(err.contains("written by a different executable"), "{err}");
    assert!(err.contains(l1.to_str().unwrap()), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Restarts the job checkpointed in `ckpt`; returns stderr and the iteration
/// the restarted run resumed after.
fn restarted(ckpt: &Path) -> (String, Option<u64>) {
    let o = run_job(&["--restart", ckpt.to_str().unwrap()], LIMIT);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let out = expect_success(&o, "restart");
    (err, restarted_after(&out))
}

#[test]
fn a_damaged_level_falls_back_to_the_next_and_a_damaged_epoch_to_the_one_before() {
    let (dir, ckpt) = checkpointed_copy("levels");
    let latest = latest_epoch(&ckpt).unwrap();
    let l1 = dir.join(format!("local/node-0/epoch-{latest}/process-0.img"));
    let l4 = ckpt.join(format!("epoch-{latest}/process-0.img"));
    // Intact: from node-local storage, silently.
    let (err, after) = restarted(&ckpt);
    assert_eq!(after, Some(latest * 100), "{err}");
    assert!(!err.contains("restoring it from"), "{err}");
    // L1 corrupt: from the global directory, saying why.
    let good = corrupt(&l1);
    let (err, after) = restarted(&ckpt);
    assert_eq!(after, Some(latest * 100), "{err}");
    assert!(
        err.contains("process 0: L1 image region ")
            && err.contains(&format!("({})", l1.display()))
            && err.contains("checksum mismatch")
            && err.contains(&format!("restoring it from L4 ({})", l4.display())),
        "{err}"
    );
    // L1 missing: the same.
    std::fs::remove_file(&l1).unwrap();
    let (err, after) = restarted(&ckpt);
    assert_eq!(after, Some(latest * 100), "{err}");
    assert!(
        err.contains("missing") && err.contains("restoring it from L4"),
        "{err}"
    );
    // Both levels gone: the epoch before, saying so.
    std::fs::remove_file(&l4).unwrap();
    let (err, after) = restarted(&ckpt);
    assert_eq!(after, Some((latest - 1) * 100), "{err}");
    assert!(
        err.contains(&format!("epoch-{latest} cannot be restored"))
            && err.contains("trying the epoch before"),
        "{err}"
    );
    std::fs::write(&l1, &good).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_older_epoch_restarts_with_epoch() {
    let (dir, ckpt) = checkpointed_copy("older");
    let latest = latest_epoch(&ckpt).unwrap();
    let o = run_job(
        &[
            "--restart",
            ckpt.to_str().unwrap(),
            "--epoch",
            &(latest - 1).to_string(),
        ],
        LIMIT,
    );
    let out = expect_success(&o, "restart from the older epoch");
    assert_eq!(restarted_after(&out), Some((latest - 1) * 100), "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unprivileged_user_checkpoints_and_restarts() {
    // As root, the job runs as nobody; otherwise the suite already is unprivileged.
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let dir = scratch("unprivileged");
    std::fs::create_dir_all(&dir).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let ckpt = dir.join("ckpt");
    let as_user = |args: &[&str]| {
        let mut c = if root {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"]);
            c.arg(mpcrs_tests::mpcrs_run());
            c
        } else {
            Command::new(mpcrs_tests::mpcrs_run())
        };
        c.args(args);
        c
    };
    let heat = example("heat");
    let mut first = as_user(&[
        "-n",
        "4",
        "--checkpoint",
        ckpt.to_str().unwrap(),
        heat.to_str().unwrap(),
        "256",
        "16000",
        "1000",
    ]);
    let (status, err) = kill_after_epoch(BackgroundJob::spawn(&mut first), &ckpt, 0);
    assert!(!status.success(), "{err}");
    let o = mpcrs_tests::run_command(&mut as_user(&["--restart", ckpt.to_str().unwrap()]), LIMIT);
    let out = expect_success(&o, "restart as an unprivileged user");
    assert!(restarted_after(&out).is_some(), "{out}");
    if root {
        use std::os::unix::fs::MetadataExt;
        let img = ckpt.join(format!(
            "epoch-{}/process-0.img",
            latest_epoch(&ckpt).unwrap()
        ));
        assert_eq!(std::fs::metadata(img).unwrap().uid(), 65534);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An unmodified program (no MPIX_Checkpoint) checkpointed from outside,
/// killed, restarted: the uninterrupted checksum.
fn unmodified_program_checkpointed_from_outside(
    bin: &Path,
    name: &str,
    run: &HeatRun,
    interval: bool,
) {
    // Checkpoints every 0.3 s: the job must outlast two epochs however fast
    // the machine runs it (with 16,000 iterations a -p 3 run over tcp once
    // ended before its second epoch).
    let longer = HeatRun {
        iterations: "48000",
        ..*run
    };
    let run = if interval { &longer } else { run };
    let dir = scratch(name);
    let d = dir.to_str().unwrap();
    let b = bin.to_str().unwrap();
    let reference = uninterrupted_checksum(bin, run);
    let mut args = run.layout.to_vec();
    args.extend_from_slice(&["--checkpoint", d]);
    if interval {
        args.extend_from_slice(&["--checkpoint-interval", "0.3"]);
    }
    args.extend_from_slice(&[b, run.kib, run.iterations]);
    let job = BackgroundJob::start(&args);
    let why = if interval {
        "--checkpoint-interval"
    } else {
        std::thread::sleep(Duration::from_millis(500));
        job.signal_launcher(libc::SIGUSR1);
        "SIGUSR1"
    };
    let wanted = if interval { 2 } else { 1 };
    let (status, err) = kill_after_epoch(job, &dir, wanted - 1);
    assert!(!status.success());
    assert!(err.contains(&format!("checkpoint taken on {why}")), "{err}");
    let o = run_job(&["--restart", d], LIMIT);
    let out = expect_success(&o, "restart");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("restarted from a checkpoint taken on {why}")),
        "{err}"
    );
    assert_eq!(heat_checksum(&out), reference);
    std::fs::remove_dir_all(&dir).unwrap();
}

fn plain_c_heat() -> PathBuf {
    build_c(&shared_bench("heat.c"), "heat-plain", None, &["-lm"])
}

#[test]
fn an_unmodified_c_program_checkpointed_on_sigusr1_restarts_correctly() {
    unmodified_program_checkpointed_from_outside(&plain_c_heat(), "usr1-c", &ONE_PROCESS, false);
}

#[test]
fn an_unmodified_rust_program_checkpointed_every_interval_restarts_correctly() {
    unmodified_program_checkpointed_from_outside(
        &example("heat"),
        "interval-rust",
        &ONE_PROCESS,
        true,
    );
}

/// Ranks of 4 processes stopped wherever they are: those that send wait at the
/// network's gate while the job drains, then every process takes its image.
#[test]
fn an_unmodified_c_program_across_4_processes_checkpointed_on_sigusr1_restarts_correctly() {
    unmodified_program_checkpointed_from_outside(
        &plain_c_heat(),
        "usr1-c-p4",
        &HeatRun {
            layout: &["-n", "8", "-p", "4"],
            ..ONE_PROCESS
        },
        false,
    );
}

#[test]
fn an_unmodified_rust_program_across_3_processes_over_tcp_checkpointed_every_interval_restarts_correctly(
) {
    unmodified_program_checkpointed_from_outside(
        &example("heat"),
        "interval-rust-p3",
        &HeatRun {
            layout: &["-n", "6", "-p", "3", "--net", "tcp"],
            ..ONE_PROCESS
        },
        true,
    );
}

/// A token of 128 KiB (rendezvous between processes) goes round 6 ranks while
/// checkpoints are taken every 0.15 s wherever the ranks are: notices, answers
/// and data frames are caught at every stage. Killed after the third epoch and
/// restarted, the token is whole. (12000 laps: the job must outlast three
/// epochs on a loaded machine.)
fn ring_checkpointed_every_interval(name: &str, layout: &[&str]) {
    let dir = scratch(name);
    let d = dir.to_str().unwrap();
    let ring = example("ring");
    let mut args = layout.to_vec();
    args.extend_from_slice(&[
        "--checkpoint",
        d,
        "--checkpoint-interval",
        "0.15",
        ring.to_str().unwrap(),
        "12000",
        "16384",
    ]);
    let (status, err) = kill_after_epoch(BackgroundJob::start(&args), &dir, 2);
    assert!(!status.success(), "{err}");
    assert!(
        err.contains("checkpoint taken on --checkpoint-interval"),
        "{err}"
    );
    let o = run_job(&["--restart", d], LIMIT);
    let out = expect_success(&o, "restart");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("restarted from a checkpoint taken on --checkpoint-interval"),
        "{err}"
    );
    assert!(
        out.contains("token after 12000 laps of 6 ranks: 72000"),
        "{out}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn rendezvous_across_3_processes_checkpointed_every_interval_survive_a_restart() {
    ring_checkpointed_every_interval("ring-shm", &["-n", "6", "-p", "3"]);
}

#[test]
fn rendezvous_across_3_processes_over_tcp_checkpointed_every_interval_survive_a_restart() {
    ring_checkpointed_every_interval("ring-tcp", &["-n", "6", "-p", "3", "--net", "tcp"]);
}

#[test]
fn a_process_that_lost_its_node_local_image_restarts_from_its_partners_copy() {
    let dir = scratch("partner");
    std::fs::create_dir_all(&dir).unwrap();
    let ckpt = dir.join("ckpt");
    let local = dir.join("local");
    let o = run_job(
        &[
            "-n",
            "4",
            "-p",
            "2",
            "--checkpoint",
            ckpt.to_str().unwrap(),
            "--checkpoint-local",
            local.to_str().unwrap(),
            "--levels",
            "1:1,2:1,4:1",
            example("heat").to_str().unwrap(),
            "64",
            "300",
            "100",
        ],
        LIMIT,
    );
    expect_success(&o, "checkpointed heat in 2 processes");
    let latest = latest_epoch(&ckpt).unwrap();
    let at = |name: &str| local.join(format!("node-0/epoch-{latest}/{name}"));
    // Each process keeps the other's copy (one host: the partner is the other process).
    for p in 0..2 {
        assert!(at(&format!("partner-of-{p}.img")).is_file());
    }
    std::fs::remove_file(at("process-1.img")).unwrap();
    let (err, after) = restarted(&ckpt);
    assert_eq!(after, Some(latest * 100), "{err}");
    assert!(
        err.contains("process 1: ")
            && err.contains("restoring it from the partner copy")
            && err.contains("partner-of-1.img"),
        "{err}"
    );
    // Its copy gone too: the global directory.
    std::fs::remove_file(at("partner-of-1.img")).unwrap();
    let (err, after) = restarted(&ckpt);
    assert_eq!(after, Some(latest * 100), "{err}");
    assert!(err.contains("restoring it from L4"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A job restarted from a copy of its checkpoint directory (the original
/// moved away, or kept as it was) writes its new epochs into the copy: the
/// original's epochs stay as they were, the copy's go on, and the run ends
/// with the uninterrupted checksum. In one process and across two.
#[test]
fn a_job_restarted_from_a_copy_of_its_directory_checkpoints_into_the_copy() {
    let bin = c_heat_with_mpix();
    for (name, layout) in [
        ("copy-threads", &["-n", "8", "-c", "2"][..]),
        ("copy-p2", &["-n", "8", "-p", "2"][..]),
    ] {
        let run = HeatRun {
            layout,
            kib: "256",
            iterations: "6000",
            every: 500,
        };
        let reference = uninterrupted_checksum(&bin, &run);
        let dir = scratch(name);
        let original = dir.join("original");
        let copy = dir.join("copy");
        let mut args = layout.to_vec();
        let o = original.to_str().unwrap();
        args.extend_from_slice(&[
            "--checkpoint",
            o,
            bin.to_str().unwrap(),
            "256",
            "6000",
            "500",
        ]);
        let k = run_until_epoch_then_kill(&args, &original, 0);
        let status = Command::new("cp")
            .args(["-a", o, copy.to_str().unwrap()])
            .status()
            .unwrap();
        assert!(status.success());
        let before: Vec<_> = std::fs::read_dir(&original)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        let c = copy.to_str().unwrap();
        let out = expect_success(&run_job(&["--restart", c], LIMIT), "restart from the copy");
        assert_eq!(heat_checksum(&out), reference, "{out}");
        assert!(
            latest_epoch(&copy).is_some_and(|l| l > k),
            "the copy has no epoch after {k}"
        );
        assert_eq!(latest_epoch(&original), Some(k), "the original moved on");
        let after: Vec<_> = std::fs::read_dir(&original)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            before, after,
            "the restart wrote into the original directory"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

fn checkpointed_pair(name: &str) -> (PathBuf, PathBuf) {
    checkpointed_heat(name, &["-n", "4", "-p", "2"])
}

/// An image put in the place of another keeps valid checksums; its header
/// names its job, epoch and process, and `mpcrs-ckpt verify` and a restart
/// refuse it naming the file: images of two processes swapped, an epoch's
/// image copied into the next, another job's image. The restart falls back to
/// the epoch before, whose images are whole, and ends the job.
#[test]
fn images_of_another_process_epoch_or_job_are_refused_by_name() {
    fn swap(a: &Path, b: &Path) {
        let t = a.with_extension("swap");
        std::fs::rename(a, &t).unwrap();
        std::fs::rename(b, a).unwrap();
        std::fs::rename(&t, b).unwrap();
    }
    type Damage = fn(&Path, &Path, u64);
    let cases: [(&str, Damage, &str); 3] = [
        (
            "swapped",
            |dir, ckpt, k| {
                swap(
                    &dir.join(format!("local/node-0/epoch-{k}/process-0.img")),
                    &dir.join(format!("local/node-0/epoch-{k}/process-1.img")),
                );
                swap(
                    &ckpt.join(format!("epoch-{k}/process-0.img")),
                    &ckpt.join(format!("epoch-{k}/process-1.img")),
                );
            },
            "is process 1's image of epoch {k}, not process 0's of epoch {k}",
        ),
        (
            "mixed",
            |dir, ckpt, k| {
                for (from, to) in [
                    (
                        dir.join(format!("local/node-0/epoch-{}/process-0.img", k - 1)),
                        dir.join(format!("local/node-0/epoch-{k}/process-0.img")),
                    ),
                    (
                        // Epoch k-1's L4 copy may not be made: its L1 image.
                        dir.join(format!("local/node-0/epoch-{}/process-0.img", k - 1)),
                        ckpt.join(format!("epoch-{k}/process-0.img")),
                    ),
                ] {
                    std::fs::copy(from, to).unwrap();
                }
            },
            "is process 0's image of epoch {j}, not process 0's of epoch {k}",
        ),
        (
            "foreign",
            |dir, ckpt, k| {
                let (other, other_ckpt) = checkpointed_pair("owners-other");
                assert_eq!(latest_epoch(&other_ckpt), Some(k));
                std::fs::copy(
                    other.join(format!("local/node-0/epoch-{k}/process-0.img")),
                    dir.join(format!("local/node-0/epoch-{k}/process-0.img")),
                )
                .unwrap();
                std::fs::copy(
                    other_ckpt.join(format!("epoch-{k}/process-0.img")),
                    ckpt.join(format!("epoch-{k}/process-0.img")),
                )
                .unwrap();
                std::fs::remove_dir_all(&other).unwrap();
            },
            "is an image of another job",
        ),
    ];
    for (name, damage, why) in cases {
        let (dir, ckpt) = checkpointed_pair(&format!("owners-{name}"));
        let k = latest_epoch(&ckpt).unwrap();
        let why = why
            .replace("{k}", &k.to_string())
            .replace("{j}", &(k - 1).to_string());
        damage(&dir, &ckpt, k);
        let v = mpcrs_tests::mpcrs_ckpt(&["verify", ckpt.to_str().unwrap()]);
        let (out, err) = mpcrs_tests::text(&v);
        assert!(!v.status.success(), "{name}: verify passed\n{out}{err}");
        let l1 = dir.join(format!("local/node-0/epoch-{k}/process-0.img"));
        assert!(
            out.contains(&format!(
                "{}: wrong image (L1 (local)): {why}",
                l1.display()
            )),
            "{name}:\n{out}{err}"
        );
        let (err, resumed) = restarted(&ckpt);
        assert!(
            err.contains(&format!("epoch-{k} cannot be restored"))
                && err.contains(&why)
                && err.contains(l1.to_str().unwrap()),
            "{name}:\n{err}"
        );
        assert_eq!(resumed, Some((k - 1) * 100), "{name}:\n{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
