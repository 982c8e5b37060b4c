//! Checkpoint epochs: a commit killed with SIGKILL at any moment leaves `latest`
//! on a complete, intact epoch; MPIX_Checkpoint refuses programs with threads of
//! their own and is ignored without --checkpoint.

use std::process::Command;
use std::time::Duration;

use mpcrs_cr::CheckpointDir;
use mpcrs_tests::program;
use rand::Rng;

#[test]
fn kill_9_during_commits_never_loses_the_restart_point() {
    let root = std::env::temp_dir().join(format!("mpcrs-commit-kill-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let mut rng = rand::rng();
    let mut last_seen = 0;
    for round in 0..12 {
        let mut child = Command::new(program("commit_loop"))
            .arg(&root)
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(rng.random_range(5..120)));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        if !root.exists() {
            // Killed before it made its directory (a loaded machine).
            assert_eq!(last_seen, 0, "round {round}: the directory vanished");
            continue;
        }
        let dir = CheckpointDir::open(&root).unwrap();
        let Some(latest) = dir.latest().unwrap() else {
            assert_eq!(last_seen, 0, "round {round}: latest vanished");
            continue;
        };
        assert!(
            latest >= last_seen,
            "round {round}: latest went back to {latest}"
        );
        last_seen = latest;
        let epoch = dir.epoch_dir(latest);
        assert_eq!(
            std::fs::read_to_string(epoch.join("MANIFEST")).unwrap(),
            format!("epoch {latest}\n")
        );
        for p in 0..3 {
            let img = std::fs::read(epoch.join(format!("process-{p}.img"))).unwrap();
            assert_eq!(
                img.len(),
                1 << 20,
                "round {round}: epoch {latest} process {p}"
            );
            assert!(img.iter().all(|&b| b == (latest % 251) as u8));
        }
    }
    assert!(last_seen > 0, "no epoch was ever committed");
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_program_with_threads_of_its_own_gets_an_error_and_goes_on() {
    let root = std::env::temp_dir().join(format!("mpcrs-ckpt-threads-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let o = mpcrs_tests::run_job(
        &[
            "-n",
            "3",
            "--checkpoint",
            root.to_str().unwrap(),
            program("ckpt_threads").to_str().unwrap(),
        ],
        Duration::from_secs(60),
    );
    let out = mpcrs_tests::expect_success(&o, "ckpt_threads");
    for r in 0..3 {
        assert!(
            out.contains(&format!("rank {r} states Error Checkpoint\n")),
            "{out}"
        );
    }
    let err = mpcrs_tests::text(&o).1;
    assert!(
        err.contains("checkpoint refused: the program runs threads of its own (")
            && err.contains("(app-helper)"),
        "{err}"
    );
    // The refused checkpoint took no epoch number; the next one is epoch 1.
    assert_eq!(
        std::fs::read_to_string(root.join("latest")).unwrap(),
        "epoch-1\n"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn without_checkpoint_the_call_is_ignored() {
    let o = mpcrs_tests::run_job(
        &["-n", "2", program("ckpt_threads").to_str().unwrap()],
        Duration::from_secs(60),
    );
    let out = mpcrs_tests::expect_success(&o, "ckpt_threads without --checkpoint");
    assert!(out.contains("rank 1 states Ignore Ignore\n"), "{out}");
}

/// Every directory and file a job with checkpoints writes (the global
/// directory with its epochs, manifests and `latest`, the node-local L1
/// images, partner copies and parity) is this user's only: directories 0700,
/// files 0600, even under umask 000. Images hold the processes' memory and
/// manifests their environment.
#[test]
fn checkpoint_data_is_private_whatever_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let root = std::env::temp_dir().join(format!("mpcrs-ckpt-private-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let (global, local) = (root.join("global"), root.join("local"));
    let heat = mpcrs_tests::build_c(
        &mpcrs_tests::shared_bench("heat.c"),
        "heat-private",
        None,
        &["-DWITH_MPIX", "-lm"],
    );
    let mut cmd = Command::new(mpcrs_tests::mpcrs_run());
    cmd.args([
        "-n",
        "4",
        "-p",
        "2",
        "--checkpoint",
        global.to_str().unwrap(),
        "--checkpoint-local",
        local.to_str().unwrap(),
        "--levels",
        "1:1,2:1,4:1",
        "--post-processing",
        "inline",
        heat.to_str().unwrap(),
        "64",
        "200",
        "100",
    ]);
    // SAFETY: umask in the child before exec changes only the child.
    unsafe {
        cmd.pre_exec(|| {
            libc::umask(0);
            Ok(())
        });
    }
    let o = mpcrs_tests::run_command(&mut cmd, Duration::from_secs(120));
    mpcrs_tests::expect_success(&o, "heat with checkpoints under umask 000");
    let mut seen = (0, 0);
    let mut stack = vec![global.clone(), local.clone()];
    while let Some(dir) = stack.pop() {
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{} is {mode:o}", dir.display());
        seen.0 += 1;
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let m = e.metadata().unwrap();
            if m.is_dir() {
                stack.push(e.path());
            } else {
                let mode = m.permissions().mode() & 0o777;
                assert_eq!(mode, 0o600, "{} is {mode:o}", e.path().display());
                seen.1 += 1;
            }
        }
    }
    assert!(
        seen.0 >= 4 && seen.1 >= 6,
        "only {seen:?} directories and files"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

/// `--checkpoint-interval auto`: the interval follows the measured cost of
/// the job's checkpoints: a job with 256 times the memory per rank checkpoints
/// less often, each interval said in a line with the cost it comes from.
#[test]
fn the_auto_interval_grows_with_the_cost_of_the_images() {
    let heat = mpcrs_tests::build_c(
        &mpcrs_tests::shared_bench("heat.c"),
        "heat-interval",
        None,
        &["-DWITH_MPIX", "-lm"],
    );
    let measured_interval = |kib: &str| -> f64 {
        let dir = std::env::temp_dir().join(format!("mpcrs-auto-{kib}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let job = mpcrs_tests::BackgroundJob::start(&[
            "-n",
            "4",
            "--checkpoint",
            dir.to_str().unwrap(),
            "--checkpoint-interval",
            "auto",
            "--mtbf",
            "5",
            heat.to_str().unwrap(),
            kib,
            "100000000",
            "1000000000",
        ]);
        let line = |err: &str| {
            err.lines()
                .find(|l| l.contains("auto: checkpoints cost ") && !l.contains("not measured"))
                .map(String::from)
        };
        job.wait_for(
            "an interval from a measured cost",
            Duration::from_secs(60),
            |_, err| line(err).is_some(),
        );
        let (_, err) = job.output();
        let (status, _, _) = job.kill_processes();
        assert!(!status.success());
        let _ = std::fs::remove_dir_all(&dir);
        let line = line(&err).unwrap();
        assert!(
            err.contains(
                "checkpoint interval 0.5 s (auto: checkpoints cost not measured yet, MTBF 5 s)"
            ),
            "{err}"
        );
        line.split("checkpoint interval ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{line}"))
    };
    // 256 times the memory: a small image's fixed costs (fsyncs, the
    // commit) vary with the machine's load, and once came to 0.35 s.
    let small = measured_interval("512");
    let large = measured_interval("131072");
    assert!(
        large > 2.0 * small,
        "{large} s for 128 MiB per rank, {small} s for 512 KiB"
    );
}
