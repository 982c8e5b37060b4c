//! `mpcrs-run --max-restarts N`: a job whose processes are killed with
//! SIGKILL at random moments (computing, checkpointing, being restored)
//! finishes by itself with the checksum of an uninterrupted run, in threads
//! and across processes; a program that fails the same way again from the
//! same place is not restarted for ever; without the option nothing restarts.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mpcrs_tests::{
    build_c, expect_success, heat_checksum, run_job, shared_bench, text, BackgroundJob,
};

const LIMIT: Duration = Duration::from_secs(240);

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mpcrs-autorestart-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// A number in `0..n`, different at every call and every test run.
fn random_below(n: u64) -> u64 {
    RandomState::new().hash_one(std::time::Instant::now()) % n
}

fn heat() -> PathBuf {
    build_c(
        &shared_bench("heat.c"),
        "heat-autorestart",
        None,
        &["-DWITH_MPIX", "-lm"],
    )
}

/// The lines mpcrs-run wrote about restarts.
fn restart_lines(err: &str) -> Vec<&str> {
    err.lines()
        .filter(|l| l.contains("mpcrs-run: restart "))
        .collect()
}

/// Runs heat with `layout`, checkpoints every `every` iterations and
/// `--max-restarts kills`, SIGKILLs one of its processes, chosen at random,
/// at a random moment of each run `kills` times; the job must end by itself
/// with the uninterrupted checksum, each restart said in one line.
fn killed_at_random_moments_finishes_by_itself(name: &str, layout: &[&str], kills: u32) {
    // Each run must outlast the kill's random moment (up to 1.3 s): a run
    // resumed half-way through 3,000 iterations once ended within 1.2 s.
    let (kib, iterations, every) = ("256", "6000", "600");
    let bin = heat();
    let b = bin.to_str().unwrap();
    let n = layout[layout.iter().position(|&a| a == "-n").unwrap() + 1];
    let reference = heat_checksum(&expect_success(
        &run_job(&["-n", n, "-c", "2", b, kib, iterations], LIMIT),
        "uninterrupted heat",
    ));
    let dir = scratch(name);
    let d = dir.to_str().unwrap();
    let max = kills.to_string();
    let mut args = layout.to_vec();
    args.extend_from_slice(&["--checkpoint", d, "--max-restarts", &max]);
    args.extend_from_slice(&[b, kib, iterations, every]);
    let job = BackgroundJob::start(&args);
    let mut moments = Vec::new();
    for k in 0..kills as usize {
        job.wait_for("the run's processes", LIMIT, |_, err| {
            restart_lines(err).len() == k && !job.job_processes().is_empty()
        });
        let wait = 100 + random_below(1200);
        std::thread::sleep(Duration::from_millis(wait));
        let procs = job.job_processes();
        assert!(
            !procs.is_empty(),
            "run {k} ended within {wait} ms: make the run longer\n{}",
            job.output().1
        );
        let victim = procs[random_below(procs.len() as u64) as usize];
        moments.push(format!("run {k}: process {victim} after {wait} ms"));
        // SAFETY: kill only sends a signal.
        unsafe { libc::kill(victim, libc::SIGKILL) };
        job.wait_for("the restart", LIMIT, |_, err| {
            restart_lines(err).len() > k || err.contains("not restarted")
        });
    }
    let o = job.finish(LIMIT);
    let (out, err) = text(&o);
    let context = format!("kills: {moments:?}\n--- stdout\n{out}\n--- stderr\n{err}");
    assert!(o.status.success(), "{context}");
    assert_eq!(heat_checksum(&out), reference, "{context}");
    let lines = restart_lines(&err);
    assert_eq!(lines.len(), kills as usize, "{context}");
    for (i, l) in lines.iter().enumerate() {
        assert!(
            l.contains(&format!("restart {} of {kills}: ", i + 1)),
            "{l}\n{context}"
        );
        assert!(
            l.contains("resuming from epoch-") || l.contains("starting the job again"),
            "{l}\n{context}"
        );
    }
    assert!(
        err.matches("killed by signal 9").count() >= kills as usize,
        "{context}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_job_of_4_processes_killed_three_times_at_random_finishes_by_itself() {
    killed_at_random_moments_finishes_by_itself("p4", &["-n", "16", "-p", "4"], 3);
}

#[test]
fn a_job_of_2_processes_killed_twice_at_random_finishes_by_itself() {
    killed_at_random_moments_finishes_by_itself("p2", &["-n", "8", "-p", "2"], 2);
}

#[test]
fn a_job_in_threads_killed_twice_at_random_finishes_by_itself() {
    killed_at_random_moments_finishes_by_itself("threads", &["-n", "8", "-c", "2"], 2);
}

/// A program whose rank 1 calls MPI_Abort(MPI_COMM_WORLD, 3) at once.
fn aborting() -> PathBuf {
    let src = std::env::temp_dir().join(format!("mpcrs-aborting-{}.c", std::process::id()));
    std::fs::write(
        &src,
        "#include <mpi.h>\n\
         int main(int argc, char **argv) {\n\
             int rank;\n\
             MPI_Init(&argc, &argv);\n\
             MPI_Comm_rank(MPI_COMM_WORLD, &rank);\n\
             if (rank == 1) MPI_Abort(MPI_COMM_WORLD, 3);\n\
             MPI_Barrier(MPI_COMM_WORLD);\n\
             MPI_Finalize();\n\
             return 0;\n\
         }\n",
    )
    .unwrap();
    let bin = build_c(&src, "aborting", None, &[]);
    std::fs::remove_file(&src).unwrap();
    bin
}

fn run_aborting(layout: &[&str], dir: &Path, max: &str) -> (i32, String) {
    let bin = aborting();
    let mut args = layout.to_vec();
    args.extend_from_slice(&["--checkpoint", dir.to_str().unwrap(), "--max-restarts", max]);
    args.push(bin.to_str().unwrap());
    let o = run_job(&args, LIMIT);
    let (_, err) = text(&o);
    (o.status.code().unwrap_or(-1), err)
}

#[test]
fn a_program_that_aborts_again_from_the_same_place_is_not_restarted_for_ever() {
    for (name, layout) in [
        ("abort-threads", &["-n", "4"][..]),
        ("abort-p2", &["-n", "4", "-p", "2"][..]),
    ] {
        let dir = scratch(name);
        let (status, err) = run_aborting(layout, &dir, "5");
        assert_eq!(status, 3, "{err}");
        let lines = restart_lines(&err);
        assert_eq!(lines.len(), 1, "one restart, then the same failure:\n{err}");
        assert!(
            lines[0].contains("restart 1 of 5: no epoch to resume from yet"),
            "{err}"
        );
        assert!(
            err.contains("failed with status 3 again after resuming from the same start"),
            "{err}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn without_max_restarts_a_failed_job_is_not_restarted() {
    let dir = scratch("abort-none");
    let (status, err) = run_aborting(&["-n", "4", "-p", "2"], &dir, "0");
    assert_eq!(status, 3, "{err}");
    assert!(restart_lines(&err).is_empty(), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
