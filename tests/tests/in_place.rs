//! Recovery in place (`mpcrs-run --recover in-place`) end to end, with the
//! tiled multiply on CRaaS (tests/c/craas_matmul.c): a process killed with
//! SIGKILL is replaced while the others run on, every rank starts again
//! from main and resumes from its last commit (survivors from their own
//! memory, the replacement's ranks from the service or files), and the job
//! ends with the checksum of an uninterrupted run. At -p 2 and -p 4, three
//! kills in a row, a kill between staging and commit, without a service,
//! the Rust API, the memory of ten recoveries, and what is refused.

use std::path::{Path, PathBuf};
use std::time::Duration;

use mpcrs_tests::{build_c, c_source, expect_success, run_job, text};

const LIMIT: Duration = Duration::from_secs(120);

fn scratch(name: &str) -> PathBuf {
    mpcrs_tests::scratch_dir("in-place", name)
}

use mpcrs_tests::{craas_matmul as matmul, printed_checksum as checksum};

/// The checksum of an uninterrupted run of `ranks` ranks, N and TILE of `size`.
fn uninterrupted(ranks: &str, size: [&str; 2]) -> String {
    let dir = scratch(&format!("whole-{ranks}-{}", size[1]));
    let ck = dir.join("ck");
    let mm = matmul();
    let o = run_job(
        &[
            "-n",
            ranks,
            "--checkpoint",
            ck.to_str().unwrap(),
            mm.to_str().unwrap(),
            size[0],
            size[1],
        ],
        LIMIT,
    );
    let out = expect_success(&o, "uninterrupted run");
    let _ = std::fs::remove_dir_all(&dir);
    checksum(&out)
}

/// Runs the multiply recovered in place: `layout`, then `extra` options,
/// then the program's own arguments `tail` after N 256 and tiles of 32.
fn run(dir: &Path, layout: &[&str], extra: &[&str], tail: &[&str]) -> (String, String, bool) {
    let ck = dir.join("ck");
    let mm = matmul();
    let mut args: Vec<&str> = layout.to_vec();
    args.extend([
        "--checkpoint",
        ck.to_str().unwrap(),
        "--recover",
        "in-place",
    ]);
    args.extend(extra);
    args.extend([mm.to_str().unwrap(), "256", "32"]);
    args.extend(tail);
    let o = run_job(&args, LIMIT);
    let (out, err) = text(&o);
    (out, err, o.status.success())
}

/// The recovery lines of a run: one per failure, naming the new run.
fn recoveries(err: &str) -> Vec<&str> {
    err.lines()
        .filter(|l| l.contains("mpcrs-run: recovered in place in"))
        .collect()
}

#[test]
fn a_killed_process_is_replaced_and_every_rank_resumes_where_it_was() {
    let whole = uninterrupted("8", ["256", "32"]);
    for (name, layout, lost) in [
        ("p2", &["-n", "8", "-p", "2"][..], "ranks 0-3"),
        ("p4", &["-n", "8", "-p", "4"][..], "ranks 0-1"),
    ] {
        let dir = scratch(name);
        let (out, err, ok) = run(&dir, layout, &["--ckpt-service", "localhost"], &["3"]);
        assert!(ok, "{name}: {out}\n{err}");
        // Rank 1 killed its own process 0; the job was not relaunched.
        assert!(
            err.contains(&format!("mpcrs-run: process 0 ({lost}, "))
                && err.contains(
                    "was killed by signal 9 (Killed); recovering in place (1 of 10): run 2"
                ),
            "{name}: {err}"
        );
        assert!(!err.contains("restarting"), "{name}: relaunched: {err}");
        assert_eq!(recoveries(&err).len(), 1, "{name}: {err}");
        assert!(
            recoveries(&err)[0].contains("every process is in run 2"),
            "{name}: {err}"
        );
        // The survivors' ranks kept their commits in memory; the
        // replacement's took theirs from the service.
        assert!(
            err.contains(
                "rank 7: checkpoint \"mm-1\" commit 2 kept in this process's memory for run 2"
            ),
            "{name}: {err}"
        );
        assert!(
            err.contains("rank 1: checkpoint \"mm-1\" commit 2 restored from the memory of the checkpoint service"),
            "{name}: {err}"
        );
        for r in 0..8 {
            assert!(
                out.contains(&format!("rank {r} resumed at tile row 3")),
                "{name}: {out}"
            );
        }
        assert_eq!(checksum(&out), whole, "{name}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn three_kills_in_a_row_at_16_ranks_on_4_processes() {
    let whole = uninterrupted("16", ["256", "32"]);
    let dir = scratch("three");
    let (out, err, ok) = run(
        &dir,
        &["-n", "16", "-p", "4"],
        &["--ckpt-service", "localhost"],
        &["2,4,6"],
    );
    assert!(ok, "{out}\n{err}");
    let lines = recoveries(&err);
    assert_eq!(lines.len(), 3, "{err}");
    for (i, l) in lines.iter().enumerate() {
        assert!(
            l.contains(&format!("every process is in run {}", i + 2)),
            "{err}"
        );
    }
    for t in [2, 4, 6] {
        assert!(
            out.contains(&format!("rank 0 resumed at tile row {t}")),
            "{out}"
        );
    }
    assert_eq!(checksum(&out), whole);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_kill_between_staging_and_commit_resumes_from_whole_commits() {
    // Rank 1 dies after CRaaS_Ckpt_array of tile row 3 and before its
    // commit: every rank resumes from tile row 2, index and arrays of one
    // commit (a mix would change the checksum).
    let whole = uninterrupted("8", ["256", "32"]);
    let dir = scratch("mid");
    let (out, err, ok) = run(
        &dir,
        &["-n", "8", "-p", "2"],
        &["--ckpt-service", "localhost"],
        &["3", "mid"],
    );
    assert!(ok, "{out}\n{err}");
    assert_eq!(recoveries(&err).len(), 1, "{err}");
    for r in 0..8 {
        assert!(
            out.contains(&format!("rank {r} resumed at tile row 2")),
            "{out}"
        );
    }
    assert_eq!(checksum(&out), whole);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn without_a_service_the_replacement_resumes_from_its_process_s_files() {
    // Each process flushes every commit of its ranks (flush policy 1): the
    // replacement's ranks read the files the dead process wrote.
    let whole = uninterrupted("8", ["256", "32"]);
    let dir = scratch("files");
    let (out, err, ok) = run(
        &dir,
        &["-n", "8", "-p", "2"],
        &["--ckpt-service-flush", "1"],
        &["3"],
    );
    assert!(ok, "{out}\n{err}");
    assert_eq!(recoveries(&err).len(), 1, "{err}");
    assert!(
        err.contains("rank 1: checkpoint \"mm-1\" commit 2 restored from /"),
        "{err}"
    );
    assert!(
        err.contains("rank 6: checkpoint \"mm-1\" commit 2 kept in this process's memory"),
        "{err}"
    );
    assert_eq!(checksum(&out), whole);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_rust_program_s_closure_is_called_again() {
    let whole = uninterrupted("8", ["256", "32"]);
    let dir = scratch("rust");
    let ck = dir.join("ck");
    let bin = mpcrs_tests::program("craas_rust");
    let o = run_job(
        &[
            "-n",
            "8",
            "-p",
            "2",
            "--checkpoint",
            ck.to_str().unwrap(),
            "--ckpt-service",
            "localhost",
            "--recover",
            "in-place",
            bin.to_str().unwrap(),
            "256",
            "32",
            "5",
        ],
        LIMIT,
    );
    let out = expect_success(&o, "rust");
    let err = text(&o).1;
    assert_eq!(recoveries(&err).len(), 1, "{err}");
    for r in 0..8 {
        assert!(
            out.contains(&format!("rank {r} resumed at tile row 5")),
            "{out}"
        );
    }
    assert_eq!(checksum(&out), whole);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn what_cannot_be_recovered_in_place_is_refused_or_ends_the_job() {
    let mm = matmul();
    let mm = mm.to_str().unwrap();
    // One process: nobody survives a failure.
    let o = run_job(&["-n", "4", "--recover", "in-place", mm, "64", "16"], LIMIT);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o).1;
    assert!(
        err.contains("--recover in-place: needs a job of several processes (-p 2 or more)"),
        "{err}"
    );
    // An unknown way.
    let o = run_job(
        &["-n", "4", "-p", "2", "--recover", "reboot", mm, "64", "16"],
        LIMIT,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("reboot"), "{}", text(&o).1);
    // Two failures with one recovery allowed: the second ends the job,
    // named.
    let dir = scratch("budget");
    let (out, err, ok) = run(
        &dir,
        &["-n", "8", "-p", "2"],
        &["--ckpt-service", "localhost", "--max-restarts", "1"],
        &["2,4"],
    );
    assert!(!ok, "{out}\n{err}");
    assert_eq!(recoveries(&err).len(), 1, "{err}");
    assert!(
        err.contains(
            "was killed by signal 9 (Killed); no recovery in place left (--max-restarts 1)"
        ),
        "{err}"
    );
    assert!(!out.contains("checksum"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_memory_of_abandoned_ranks_is_reclaimed_over_ten_recoveries() {
    // Each run of the multiply at N 512 allocates 6 MiB per rank that no
    // free reaches when the run is abandoned: 24 MiB per process and
    // recovery unless the new run frees it. The process no kill hits
    // prints its resident memory at the end.
    let rss = |kills: &str| -> u64 {
        let dir = scratch(&format!("rss-{}", kills.len()));
        let ck = dir.join("ck");
        let mm = matmul();
        let mut cmd = std::process::Command::new(mpcrs_tests::mpcrs_run());
        cmd.env("CRAAS_MM_RSS", "1").args([
            "-n",
            "8",
            "-p",
            "2",
            "--checkpoint",
            ck.to_str().unwrap(),
            "--ckpt-service",
            "localhost",
            "--recover",
            "in-place",
            "--max-restarts",
            "10",
            mm.to_str().unwrap(),
            "512",
            "16",
            kills,
        ]);
        let o = mpcrs_tests::run_command(&mut cmd, LIMIT);
        let out = expect_success(&o, kills);
        let err = text(&o).1;
        let n = kills.split(',').count();
        assert_eq!(recoveries(&err).len(), n, "{err}");
        let _ = std::fs::remove_dir_all(&dir);
        out.lines()
            .find_map(|l| l.strip_prefix("rss ")?.strip_suffix(" kB")?.parse().ok())
            .unwrap_or_else(|| panic!("no rss line in {out}"))
    };
    let once = rss("2");
    let ten = rss("1,2,3,4,5,6,7,8,9,10");
    // Kept: 240 MiB more. Reclaimed: the same, give or take the
    // allocator's own.
    assert!(
        ten < once + 48 * 1024,
        "resident memory after 1 recovery {once} kB, after 10 {ten} kB"
    );
}

#[test]
fn on_two_network_namespace_hosts_a_replacement_starts_through_the_agent() {
    // Processes 0 and 1 on the first host, 2 and 3 on the second; the one
    // killed (process 0) is started again there through the launch agent,
    // with the new run's key-value store on its command line.
    let hosts = mpcrs_tests::netns::Hosts::new(2, 0);
    let whole = uninterrupted("8", ["256", "32"]);
    let dir = scratch("hosts");
    let list = format!("{}:2,{}:2", hosts.host(1), hosts.host(2));
    let agent = hosts.agent_command();
    let (out, err, ok) = run(
        &dir,
        &[
            "-n",
            "8",
            "-p",
            "4",
            "--host",
            &list,
            "--launch-agent",
            &agent,
        ],
        &["--ckpt-service", "localhost"],
        &["2,4"],
    );
    assert!(ok, "{out}\n{err}");
    assert!(
        err.contains(&format!(
            "mpcrs-run: process 0 (ranks 0-1, {}) was killed by signal 9",
            hosts.host(1)
        )),
        "{err}"
    );
    let lines = recoveries(&err);
    assert_eq!(lines.len(), 2, "{err}");
    assert!(lines[1].contains("every process is in run 3"), "{err}");
    for r in 0..8 {
        assert!(
            out.contains(&format!("rank {r} resumed at tile row 4")),
            "{out}"
        );
    }
    assert_eq!(checksum(&out), whole);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn fti_programs_recover_in_place_from_the_memory_level_and_from_files() {
    // tests/c/heat_fti.c: FTI_Init again in every rank's fresh main, and
    // FTI_Recover from the service's memory (level 5) or local files (L1).
    let bin = build_c(&c_source("heat_fti.c"), "heat_fti", None, &["-lfti"]);
    for level in ["5", "1"] {
        let dir = scratch(&format!("fti-{level}"));
        let cfg = dir.join("config.fti");
        std::fs::write(
            &cfg,
            format!(
                "[basic]\nHead = 0\nNode_size = 1\nCkpt_dir = {0}/local\nGlbl_dir = {0}/global\n\
                 Meta_dir = {0}/meta\nGroup_size = 2\nKeep_last_ckpt = 0\nVerbosity = 2\n",
                dir.display()
            ),
        )
        .unwrap();
        let ck = dir.join("ck");
        let run = |recover: bool| {
            let mut args = vec!["-n", "8", "-p", "2", "--checkpoint", ck.to_str().unwrap()];
            args.extend(["--ckpt-service", "localhost"]);
            if recover {
                args.extend(["--recover", "in-place"]);
            }
            args.extend([
                bin.to_str().unwrap(),
                cfg.to_str().unwrap(),
                level,
                "200",
                "50",
            ]);
            if recover {
                args.push("120");
            }
            run_job(&args, LIMIT)
        };
        let whole = mpcrs_tests::heat_checksum(&expect_success(&run(false), "uninterrupted"));
        for sub in ["local", "global", "meta", "ck"] {
            let _ = std::fs::remove_dir_all(dir.join(sub));
        }
        let o = run(true);
        let out = expect_success(&o, level);
        let err = text(&o).1;
        assert_eq!(recoveries(&err).len(), 1, "level {level}: {err}");
        assert!(
            out.contains("recovered at iteration 100"),
            "level {level}: {out}"
        );
        assert_eq!(mpcrs_tests::heat_checksum(&out), whole, "level {level}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn images_of_a_job_recovered_in_place_are_refused_and_the_job_goes_on() {
    // MPIX_Checkpoint in every process is vetoed alike: a replacement's
    // image would not match its survivors'. The program sees the failure
    // state and finishes.
    let bin = build_c(
        &mpcrs_tests::shared_bench("heat.c"),
        "heat-mpix",
        None,
        &["-DWITH_MPIX", "-lm"],
    );
    let dir = scratch("images");
    let ck = dir.join("ck");
    let o = run_job(
        &[
            "-n",
            "4",
            "-p",
            "2",
            "--checkpoint",
            ck.to_str().unwrap(),
            "--recover",
            "in-place",
            bin.to_str().unwrap(),
            "16",
            "30",
            "10",
        ],
        LIMIT,
    );
    let out = expect_success(&o, "heat with MPIX_Checkpoint");
    let err = text(&o).1;
    assert!(
        err.contains("checkpoint refused: a job recovered in place (--recover in-place) keeps the application's checkpoints"),
        "{err}"
    );
    assert!(!out.contains("checkpoint after iteration"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
