//! CRaaS end to end (tests/c/craas_matmul.c, seed 003's tiled matrix
//! multiply): a process killed mid-run (SIGKILL), the job started again by
//! `--max-restarts`, each rank's data restored from the checkpoint
//! service's memory (or from the files of the last flush), and the final
//! checksum of an uninterrupted run; in threads, at -p 2 and -p 4. Plus a
//! kill between staging and commit, three kills in a row, the service
//! itself killed, a restart on fewer processes, a service running on its own
//! that outlives the job, and bad input.

use std::path::{Path, PathBuf};
use std::time::Duration;

use mpcrs_tests::{build_c, c_source, descendants, expect_success, run_job, text, BackgroundJob};

const LIMIT: Duration = Duration::from_secs(120);

fn scratch(name: &str) -> PathBuf {
    mpcrs_tests::scratch_dir("craas", name)
}

use mpcrs_tests::{craas_matmul as matmul, printed_checksum as checksum};

/// The checksum of an uninterrupted run of `ranks` ranks (N 256, tiles of 32).
fn uninterrupted(ranks: &str) -> String {
    let dir = scratch(&format!("whole-{ranks}"));
    let ck = dir.join("ck");
    let o = run_job(
        &[
            "-n",
            ranks,
            "--checkpoint",
            ck.to_str().unwrap(),
            matmul().to_str().unwrap(),
            "256",
            "32",
        ],
        LIMIT,
    );
    let out = expect_success(&o, "uninterrupted run");
    assert!(!out.contains("resumed"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
    checksum(&out)
}

/// Runs the multiply in `layout` with `extra` options, the checkpoint
/// directory under `dir`; returns standard output and error.
fn run(dir: &Path, layout: &[&str], extra: &[&str], tail: &[&str]) -> (String, String, bool) {
    let ck = dir.join("ck");
    let mm = matmul();
    let mut args: Vec<&str> = layout.to_vec();
    args.extend(["--checkpoint", ck.to_str().unwrap()]);
    args.extend(extra);
    args.extend([mm.to_str().unwrap(), "256", "32"]);
    args.extend(tail);
    let o = run_job(&args, LIMIT);
    let (out, err) = text(&o);
    (out, err, o.status.success())
}

#[test]
fn a_killed_process_resumes_from_the_service_memory() {
    let whole = uninterrupted("8");
    for (name, layout) in [
        ("threads", &["-n", "8"][..]),
        ("p2", &["-n", "8", "-p", "2"][..]),
        ("p4", &["-n", "8", "-p", "4"][..]),
    ] {
        let dir = scratch(name);
        let (out, err, ok) = run(
            &dir,
            layout,
            &[
                "--ckpt-service",
                "localhost",
                "--ckpt-service-flush",
                "never",
                "--max-restarts",
                "1",
            ],
            &["3"],
        );
        assert!(ok, "{name}: {out}\n{err}");
        assert!(err.contains("killed by signal 9"), "{name}: {err}");
        assert!(
            err.contains("restored from the memory of the checkpoint service at 127.0.0.1:"),
            "{name}: {err}"
        );
        assert!(
            !err.contains("restored from /"),
            "{name}: nothing was flushed: {err}"
        );
        for r in 0..8 {
            assert!(
                out.contains(&format!("rank {r} resumed at tile row 3")),
                "{name}: {out}"
            );
        }
        assert_eq!(checksum(&out), whole, "{name}");
        // The service flushed everything at the end.
        for r in 0..8 {
            assert!(
                dir.join(format!("ck/craas/rank-{r}/mm-1.craas")).is_file(),
                "{name}"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn three_kills_in_a_row_and_a_kill_between_staging_and_commit() {
    let whole = uninterrupted("8");
    let dir = scratch("three");
    let (out, err, ok) = run(
        &dir,
        &["-n", "8", "-p", "2"],
        &["--ckpt-service", "localhost", "--max-restarts", "3"],
        &["2,4,6"],
    );
    assert!(ok, "{out}\n{err}");
    assert_eq!(err.matches("killed by signal 9").count(), 3, "{err}");
    for t in [2, 4, 6] {
        assert!(
            out.contains(&format!("rank 0 resumed at tile row {t}")),
            "{out}"
        );
    }
    assert_eq!(checksum(&out), whole);
    let _ = std::fs::remove_dir_all(&dir);

    // Killed after CRaaS_Ckpt_array and CRaaS_Ckpt_index of tile row 3 but
    // before CRaaS_Commit: rank 1 restores commit 2 whole (its index and
    // arrays from one commit, or "acc" would count a tile row twice).
    let dir = scratch("mid");
    let (out, err, ok) = run(
        &dir,
        &["-n", "8", "-p", "4"],
        &["--ckpt-service", "localhost", "--max-restarts", "1"],
        &["3", "mid"],
    );
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("rank 1 resumed at tile row 2"), "{out}");
    assert_eq!(checksum(&out), whole);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn without_a_service_processes_flush_and_a_run_on_fewer_processes_resumes() {
    let whole = uninterrupted("8");
    let dir = scratch("files");
    // Every commit flushed; the killed run is not restarted by the launcher.
    let (out, err, ok) = run(
        &dir,
        &["-n", "8", "-p", "4"],
        &["--ckpt-service-flush", "1"],
        &["3"],
    );
    assert!(!ok, "{out}\n{err}");
    // The same job again, on two processes: each rank finds its files.
    let (out, err, ok) = run(&dir, &["-n", "8", "-p", "2"], &[], &[]);
    assert!(ok, "{out}\n{err}");
    assert!(err.contains("restored from /"), "{err}");
    assert!(out.contains("rank 5 resumed at tile row 3"), "{out}");
    assert_eq!(checksum(&out), whole);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_service_killed_mid_run_leaves_the_job_going_and_its_data_in_files() {
    let whole = uninterrupted("8");
    let dir = scratch("lost");
    let ck = dir.join("ck");
    let mm = matmul();
    let mut cmd = std::process::Command::new(mpcrs_tests::mpcrs_run());
    cmd.args(["-n", "8", "-p", "2", "--checkpoint", ck.to_str().unwrap()])
        .args([
            "--ckpt-service",
            "localhost",
            "--ckpt-service-flush",
            "never",
        ])
        .args([mm.to_str().unwrap(), "256", "32"])
        .env("CRAAS_MM_SLEEP_MS", "150");
    let job = BackgroundJob::spawn(&mut cmd);
    // Some commits reached the service.
    std::thread::sleep(Duration::from_millis(600));
    let launcher = job.job_processes();
    let service: Vec<i32> = launcher
        .iter()
        .copied()
        .chain(launcher.iter().flat_map(|&p| descendants(p)))
        .filter(|&p| {
            std::fs::read_to_string(format!("/proc/{p}/comm"))
                .is_ok_and(|c| c.trim() == "mpcrs-ckptd")
        })
        .collect();
    assert_eq!(service.len(), 1, "one service among {launcher:?}");
    // SAFETY: kill(2) of a process of this test's job.
    unsafe { libc::kill(service[0], libc::SIGKILL) };
    let o = job.finish(LIMIT);
    let out = expect_success(&o, "the job whose service was killed");
    let err = text(&o).1;
    assert!(
        err.contains("the checkpoint service at 127.0.0.1:"),
        "{err}"
    );
    assert!(err.contains("is lost"), "{err}");
    assert_eq!(checksum(&out), whole);
    // A later run finds each rank's last commit in files.
    let (out, err, ok) = run(&dir, &["-n", "8", "-p", "2"], &[], &[]);
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("rank 7 resumed at tile row 8"), "{out}");
    assert_eq!(checksum(&out), whole);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_gets_a_named_code_and_one_line() {
    let errs = build_c(
        &c_source("craas_errors.c"),
        "craas_errors",
        None,
        &["-lcraas"],
    );
    for layout in [&["-n", "2"][..], &["-n", "4", "-p", "2"][..]] {
        let dir = scratch("errors");
        let ck = dir.join("ck");
        let mut args = layout.to_vec();
        args.extend(["--checkpoint", ck.to_str().unwrap(), errs.to_str().unwrap()]);
        let o = run_job(&args, LIMIT);
        let out = expect_success(&o, "craas_errors");
        assert!(out.contains("codes ok"), "{out}");
        let err = text(&o).1;
        for line in [
            "mpcrs: CRaaS_Commit: rank 1: called outside MPI_Init ... MPI_Finalize",
            "mpcrs: CRaaS_Ckpt_array: rank 1: array \"x\": NULL data for 8 bytes",
            "mpcrs: CRaaS_Rst_array: rank 0: rank 0 has no committed checkpoint \"none\"",
            "mpcrs: CRaaS_Rst_array: rank 1: array \"x\" of checkpoint \"c\" holds 32 bytes, the buffer 24",
            "the name is 65 bytes long; the limit is 64",
        ] {
            assert!(err.contains(line), "{line}: {err}");
        }
        assert!(!err.contains("panicked"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn on_two_hosts_with_the_service_on_a_third() {
    let hosts = mpcrs_tests::netns::Hosts::new(3, 0);
    let whole = uninterrupted("8");
    let dir = scratch("hosts");
    let list = format!("{}:2,{}:2", hosts.host(1), hosts.host(2));
    let agent = hosts.agent_command();
    let service = hosts.host(3);
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
        &["--ckpt-service", &service, "--max-restarts", "1"],
        &["3"],
    );
    assert!(ok, "{out}\n{err}");
    assert!(
        err.contains(&format!(
            "restored from the memory of the checkpoint service at {service}:"
        )),
        "{err}"
    );
    assert!(out.contains("rank 6 resumed at tile row 3"), "{out}");
    assert_eq!(checksum(&out), whole);
    let started = std::fs::read_to_string(&hosts.log).unwrap();
    assert!(started.lines().any(|h| h == service), "{started}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_rust_api_recovers_the_same_way_and_computes_what_c_does() {
    // The same multiply in Rust: its uninterrupted checksum is C's.
    let whole = uninterrupted("8");
    let bin = mpcrs_tests::program("craas_rust");
    for (name, layout) in [
        ("rust-threads", &["-n", "8"][..]),
        ("rust-p2", &["-n", "8", "-p", "2"][..]),
    ] {
        let dir = scratch(name);
        let ck = dir.join("ck");
        let mut args = layout.to_vec();
        args.extend(["--checkpoint", ck.to_str().unwrap()]);
        args.extend(["--ckpt-service", "localhost", "--max-restarts", "1"]);
        args.extend([bin.to_str().unwrap(), "256", "32", "5"]);
        let o = run_job(&args, LIMIT);
        let out = expect_success(&o, name);
        let err = text(&o).1;
        assert!(err.contains("killed by signal 9"), "{name}: {err}");
        assert!(
            err.contains("restored from the memory of the checkpoint service"),
            "{name}: {err}"
        );
        assert!(
            out.contains("rank 7 resumed at tile row 5"),
            "{name}: {out}"
        );
        assert_eq!(checksum(&out), whole, "{name}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn a_service_running_on_its_own_outlives_the_job_and_its_launcher() {
    use std::io::BufRead;
    use std::os::unix::fs::PermissionsExt;
    let whole = uninterrupted("8");
    let dir = scratch("own");
    let secret = dir.join("secret");
    let mut service = std::process::Command::new(mpcrs_tests::profile_dir().join("mpcrs-ckptd"))
        .args([
            "--secret-file",
            secret.to_str().unwrap(),
            "--flush",
            "never",
        ])
        .args([
            "--dir",
            dir.join("ck").to_str().unwrap(),
            "--listen",
            "127.0.0.1",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(service.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let port = first.trim().rsplit(' ').next().unwrap().to_string();
    let addr = format!("127.0.0.1:{port}");
    assert_eq!(
        std::fs::metadata(&secret).unwrap().permissions().mode() & 0o777,
        0o600,
        "the secret file is made private"
    );
    let with = |s: &Path| -> Vec<String> {
        [
            "--ckpt-service",
            &addr,
            "--ckpt-service-secret",
            s.to_str().unwrap(),
        ]
        .map(String::from)
        .to_vec()
    };
    let args = with(&secret);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    // A secret others may read is refused, naming the file.
    let open = dir.join("open-secret");
    std::fs::copy(&secret, &open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o644)).unwrap();
    let refused = with(&open);
    let refused: Vec<&str> = refused.iter().map(String::as_str).collect();
    let (_, err, ok) = run(&dir, &["-n", "2"], &refused, &[]);
    assert!(!ok && err.contains("may be read by others"), "{err}");
    // The job killed, its launcher gone: a new mpcrs-run restores from the
    // service's memory.
    let (out, err, ok) = run(&dir, &["-n", "8", "-p", "2"], &args, &["3"]);
    assert!(!ok, "{out}\n{err}");
    let (out, err, ok) = run(&dir, &["-n", "8", "-p", "2"], &args, &[]);
    assert!(ok, "{out}\n{err}");
    assert!(
        err.contains(&format!(
            "restored from the memory of the checkpoint service at {addr}"
        )),
        "{err}"
    );
    assert!(out.contains("rank 4 resumed at tile row 3"), "{out}");
    assert_eq!(checksum(&out), whole);
    // SIGTERM: it flushes what it holds and exits.
    // SAFETY: kill(2) of this test's child.
    unsafe { libc::kill(service.id() as i32, libc::SIGTERM) };
    assert!(service.wait().unwrap().success());
    for r in 0..8 {
        assert!(
            dir.join(format!("ck/craas/rank-{r}/mm-1.craas")).is_file(),
            "rank {r}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
