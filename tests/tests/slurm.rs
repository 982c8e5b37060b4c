//! Jobs started by a real Slurm (`srun --mpi=pmi2`, see mpcrs_tests::slurm):
//! the processes Slurm starts join one mpcrs job through Slurm's PMI-2 server,
//! one rank each, or several ranks each as threads with `mpcrs-exec` and
//! `MPCRS_RANKS`, and compute what mpcrs-run's jobs compute; their
//! checkpoints restart with mpcrs-run, or under srun with `mpcrs-run
//! --restart` as each task. Across two nodes (network-namespace hosts, one
//! slurmd each), the processes learn their nodes from Slurm's PMI.

use std::time::Duration;

use mpcrs_tests::netns::Hosts;
use mpcrs_tests::slurm::Slurm;
use mpcrs_tests::{
    build_c, environment_variable, expect_success, heat_checksum, latest_epoch, mpcrs_run,
    net_stats_line, numbers, restarted_after, run_job, shared_bench, BackgroundJob,
};

const LIMIT: Duration = Duration::from_secs(120);
const HEAT: [&str; 2] = ["256", "400"];

#[test]
fn processes_started_by_srun_are_one_job_with_ranks_as_threads() {
    let slurm = Slurm::start(16);
    let heat = build_c(&shared_bench("heat.c"), "heat", None, &["-lm"]);
    let heat = heat.to_str().unwrap();
    let exec = mpcrs_run().with_file_name("mpcrs-exec");
    let exec = exec.to_str().unwrap();
    let reference = |ranks: &str| {
        heat_checksum(&expect_success(
            &run_job(&["-n", ranks, heat, HEAT[0], HEAT[1]], LIMIT),
            &format!("heat at -n {ranks} under mpcrs-run"),
        ))
    };
    let (two, eight) = (reference("2"), reference("8"));
    let stats = ("MPCRS_NET_STATS", "1");
    // One rank per process: the program started directly.
    let o = slurm.srun(
        &[stats],
        &["--mpi=pmi2", "-n", "2", heat, HEAT[0], HEAT[1]],
        LIMIT,
    );
    let out = expect_success(&o, "srun --mpi=pmi2 -n 2 heat");
    assert_eq!(heat_checksum(&out), two);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("net-stats process 1:"),
        "one job of two processes:\n{err}"
    );
    // Eight ranks as threads of two and of four processes.
    for processes in ["2", "4"] {
        let o = slurm.srun(
            &[stats, ("MPCRS_RANKS", "8")],
            &["--mpi=pmi2", "-n", processes, exec, heat, HEAT[0], HEAT[1]],
            LIMIT,
        );
        let out = expect_success(
            &o,
            &format!("srun --mpi=pmi2 -n {processes} mpcrs-exec heat"),
        );
        assert!(out.contains("ranks 8 "), "{out}");
        assert_eq!(
            heat_checksum(&out),
            eight,
            "8 ranks in {processes} processes"
        );
        let err = String::from_utf8_lossy(&o.stderr);
        let last = processes.parse::<u32>().unwrap() - 1;
        assert!(err.contains(&format!("net-stats process {last}:")), "{err}");
    }

    // Checkpoints under srun, restarted by mpcrs-run in the allocation:
    // mpcrs-exec made the processes restorable itself.
    let heatx = build_c(
        &shared_bench("heat.c"),
        "heat-mpix",
        None,
        &["-lm", "-DWITH_MPIX"],
    );
    let dir = slurm.dir.join("checkpoints");
    let o = slurm.srun(
        &[
            ("MPCRS_RANKS", "8"),
            ("MPCRS_CHECKPOINT_DIR", dir.to_str().unwrap()),
        ],
        &[
            "--mpi=pmi2",
            "-n",
            "2",
            exec,
            heatx.to_str().unwrap(),
            HEAT[0],
            HEAT[1],
            "150",
        ],
        LIMIT,
    );
    let out = expect_success(&o, "heat with checkpoints under srun");
    assert_eq!(heat_checksum(&out), eight);
    let o = run_job(&["--restart", dir.to_str().unwrap()], LIMIT);
    let out = expect_success(&o, "mpcrs-run --restart of srun's checkpoints");
    assert!(out.contains("restarted after iteration 300"), "{out}");
    assert_eq!(heat_checksum(&out), eight);
    // A batch job: sbatch runs the script on the allocation's first node,
    // whose srun starts the tasks (the environment passes through).
    let log = slurm.dir.join("batch.out");
    let o = slurm
        .command("sbatch")
        .args(["--wait", "-n", "2", "-o", log.to_str().unwrap(), "--wrap"])
        .arg(format!(
            "MPCRS_RANKS=8 srun --mpi=pmi2 {exec} {heat} {} {}",
            HEAT[0], HEAT[1]
        ))
        .output()
        .unwrap();
    let out = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        o.status.success(),
        "sbatch: {}\n{out}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(heat_checksum(&out), eight, "8 ranks in a batch job");

    // Checkpoints asked from outside under srun: every interval, and on
    // SIGUSR1 to srun (which passes it to every task).
    let asked = slurm.dir.join("asked");
    let mut job = slurm.command("srun");
    job.args(["--mpi=pmi2", "-n", "2", exec, heat, "1024", "3000"])
        .envs([
            ("MPCRS_RANKS", "8"),
            ("MPCRS_CHECKPOINT_DIR", asked.to_str().unwrap()),
            (
                "MPCRS_CHECKPOINT_LOCAL",
                asked.join("node-local").to_str().unwrap(),
            ),
            ("MPCRS_CHECKPOINT_INTERVAL", "0.5"),
        ]);
    let job = BackgroundJob::spawn(&mut job);
    job.wait_for("a checkpoint on the interval", LIMIT, |_, err| {
        err.contains("checkpoint taken on --checkpoint-interval")
    });
    job.signal_launcher(libc::SIGUSR1);
    job.wait_for("a checkpoint on SIGUSR1", LIMIT, |_, err| {
        err.contains("checkpoint taken on SIGUSR1")
    });
    let out = expect_success(&job.finish(LIMIT), "heat under srun with checkpoints asked");
    assert_eq!(heat_checksum(&out), reference_of(heat, "1024", "3000"));
    assert!(latest_epoch(&asked).is_some_and(|k| k >= 2));
    assert_nothing_left(&slurm);
}

/// The checksum of heat at -n 8 under mpcrs-run.
fn reference_of(heat: &str, size: &str, iterations: &str) -> String {
    heat_checksum(&expect_success(
        &run_job(&["-n", "8", heat, size, iterations], LIMIT),
        "heat at -n 8 under mpcrs-run",
    ))
}

/// Nothing of the cluster's jobs is left in /dev/shm (named after Slurm's
/// job ids, JOB.STEP; no mpcrs-run is there to clean up).
fn assert_nothing_left(slurm: &Slurm) {
    let ours = slurm.first_job_id..slurm.first_job_id + 1000;
    let left: Vec<String> = std::fs::read_dir("/dev/shm")
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| {
            n.strip_prefix("mpcrs-")
                .and_then(|rest| rest.split('-').next())
                .and_then(|id| id.split_once('.'))
                .and_then(|(job, _)| job.parse::<u64>().ok())
                .is_some_and(|job| ours.contains(&job))
        })
        .collect();
    assert!(left.is_empty(), "left in /dev/shm: {left:?}");
}

/// Messages process `p` sent over `rail` (its `--net-stats` line).
/// The pid of process `p` (PMI_RANK) of the job whose processes `of_job`
/// tells apart, if it runs.
fn job_process(p: u32, of_job: impl Fn(i32) -> bool) -> Option<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .find(|&pid| {
            environment_variable(pid, "PMI_RANK").as_deref() == Some(&p.to_string()) && of_job(pid)
        })
}

fn messages(err: &str, p: u32, rail: &str) -> u64 {
    numbers(net_stats_line(err, p, rail))[3]
}

#[test]
fn a_job_srun_spreads_over_two_nodes_checkpoints_ends_when_a_process_dies_and_restarts_under_srun()
{
    let hosts = Hosts::new(2, 5);
    // Each node keeps its node-local images on a disk of its own.
    let local = std::env::temp_dir().join(format!("mpcrs-slurm-local-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&local);
    let slurm = Slurm::start_on_private_disks(&hosts, 2, 4, &local);
    let heat = build_c(
        &shared_bench("heat.c"),
        "heat-mpix",
        None,
        &["-lm", "-DWITH_MPIX"],
    );
    let heat = heat.to_str().unwrap();
    let exec = mpcrs_run().with_file_name("mpcrs-exec");
    let exec = exec.to_str().unwrap();
    let eight = [("MPCRS_RANKS", "8"), ("MPCRS_NET_STATS", "1")];
    let two_per_node = ["--mpi=pmi2", "-N", "2", "--ntasks-per-node=2"];

    // Two processes per node: processes 0-1 on n1, 2-3 on n2. Process 1
    // meets process 0 over shared memory and process 2 over tcp.
    let small = reference_of(heat, HEAT[0], HEAT[1]);
    let mut args = two_per_node.to_vec();
    args.extend([exec, heat, HEAT[0], HEAT[1]]);
    let o = slurm.srun(&eight, &args, LIMIT);
    let out = expect_success(&o, "heat over two nodes");
    assert_eq!(heat_checksum(&out), small);
    let err = String::from_utf8_lossy(&o.stderr);
    for p in [1, 2] {
        assert!(messages(&err, p, "shm_mpi") > 0, "process {p}:\n{err}");
        assert!(messages(&err, p, "tcp_mpi") > 0, "process {p}:\n{err}");
    }
    // Cyclic: processes alternate between the nodes, and none of them is
    // next to a process of its node.
    let o = slurm.srun(
        &eight,
        &[
            "--mpi=pmi2",
            "-N",
            "2",
            "-n",
            "4",
            "-m",
            "cyclic",
            exec,
            heat,
            HEAT[0],
            HEAT[1],
        ],
        LIMIT,
    );
    let out = expect_success(&o, "heat over two nodes, cyclic");
    assert_eq!(heat_checksum(&out), small);
    let err = String::from_utf8_lossy(&o.stderr);
    for p in 0..4 {
        assert!(messages(&err, p, "tcp_mpi") > 0, "process {p}:\n{err}");
    }

    // Checkpoints under srun; while the job runs its directory is claimed.
    let dir = slurm.dir.join("checkpoints");
    let d = dir.to_str().unwrap();
    let big = reference_of(heat, "1024", "1500");
    // Without -K (--kill-on-bad-exit): Slurm does not end the step when a
    // task dies; the job's processes do.
    let mut job = slurm.command("srun");
    job.args(two_per_node)
        .args([exec, heat, "1024", "1500", "250"])
        .envs([
            ("MPCRS_RANKS", "8"),
            ("MPCRS_CHECKPOINT_DIR", d),
            ("MPCRS_CHECKPOINT_LOCAL", local.to_str().unwrap()),
        ]);
    let job = BackgroundJob::spawn(&mut job);
    job.wait_for("epoch 2", LIMIT, |_, _| {
        latest_epoch(&dir).is_some_and(|k| k >= 2)
    });
    let o = run_job(&["-n", "2", "--checkpoint", d, heat, "16", "10"], LIMIT);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("another job (process 0 of a job started by another launcher, pid"),
        "{err}"
    );
    // A crash: process 2 killed.
    let victim = job_process(2, |pid| {
        environment_variable(pid, "MPCRS_CHECKPOINT_DIR").as_deref() == Some(d)
    })
    .expect("process 2 of the job");
    // SAFETY: kill only sends a signal.
    unsafe { libc::kill(victim, libc::SIGKILL) };
    let o = job.finish(Duration::from_secs(30));
    assert!(!o.status.success(), "srun succeeded after a kill -9");
    // A process killed while the others wait in receives for a rank that
    // sleeps: no one sends to it, and its links' ends without a goodbye end
    // the job (before, the others waited for ever).
    let idle = mpcrs_tests::program("idle_wait");
    let mut idle_job = slurm.command("srun");
    idle_job
        .args(two_per_node)
        .args([idle.to_str().unwrap(), "600"])
        .env("MPCRS_TEST_MARK", "idle");
    let idle_job = BackgroundJob::spawn(&mut idle_job);
    let marked = |pid: i32| environment_variable(pid, "MPCRS_TEST_MARK").as_deref() == Some("idle");
    idle_job.wait_for("every process", LIMIT, |_, _| {
        (0..4).all(|p| job_process(p, marked).is_some())
    });
    // Every process joined the job (the bootstrap's fence) and waits.
    std::thread::sleep(Duration::from_secs(2));
    let victim = job_process(2, marked).expect("process 2 of the idle job");
    // SAFETY: kill only sends a signal.
    unsafe { libc::kill(victim, libc::SIGKILL) };
    let o = idle_job.finish(Duration::from_secs(30));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains("network: process 2 is gone: its link closed without a goodbye"),
        "{err}"
    );
    // Without -K: a process that fails asks srun, through PMI's abort, to
    // end the step; the others wait in a barrier and would wait for ever.
    let errors = mpcrs_tests::program("errors");
    let mut args = two_per_node.to_vec();
    args.extend([errors.to_str().unwrap(), "fatal-rank"]);
    let o = slurm.srun(&[], &args, Duration::from_secs(30));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("fatal error in MPI_Send on rank 0"), "{err}");
    // Restarted under srun: each task restores its own process.
    let run = mpcrs_run();
    let run = run.to_str().unwrap();
    let mut args = two_per_node.to_vec();
    args.extend([run, "--restart", d]);
    // The node-local images are only on their nodes' disks: each task asks
    // the other node (srun) about its images, and restores its own process
    // from its node's image in place.
    assert_eq!(std::fs::read_dir(&local).unwrap().count(), 0);
    for k in [1, 2] {
        assert!(Hosts::disk(&local, k)
            .join(format!("node-{}", k - 1))
            .is_dir());
    }
    let o = slurm.srun(&[], &args, LIMIT);
    let out = expect_success(&o, "srun mpcrs-run --restart");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("(each task restores its process)"), "{err}");
    assert!(!err.contains("image from"), "{err}");
    assert!(!err.contains("brought from"), "{err}");
    assert!(restarted_after(&out).is_some_and(|i| i >= 500), "{out}");
    assert_eq!(heat_checksum(&out), big);
    // Node n2's disk lost: its processes from the copies their partners keep
    // on n1 (L2, made by default on several nodes), which the tasks on n2
    // bring over with srun.
    let latest = latest_epoch(&dir).unwrap();
    let m =
        mpcrs_settings::JobManifest::read(&dir.join(format!("epoch-{latest}/MANIFEST"))).unwrap();
    assert!(m.complete.contains(&2), "{m:?}");
    std::fs::remove_dir_all(Hosts::disk(&local, 2)).unwrap();
    std::fs::create_dir_all(Hosts::disk(&local, 2)).unwrap();
    let o = slurm.srun(&[], &args, LIMIT);
    let out = expect_success(&o, "srun mpcrs-run --restart, n2's disk lost");
    let err = String::from_utf8_lossy(&o.stderr);
    for p in [2, 3] {
        assert!(
            err.contains(&format!("mpcrs-run: process {p}: image from L2")),
            "{err}"
        );
    }
    assert!(
        err.contains("brought from host n1 (it restarts on n2)"),
        "{err}"
    );
    assert_eq!(heat_checksum(&out), big);
    // A restart with another number of tasks is refused, naming both.
    let o = slurm.srun(
        &[],
        &["--mpi=pmi2", "-N", "1", "-n", "2", run, "--restart", d],
        LIMIT,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("the launcher started 2 tasks, but the checkpoint is of a job of 4 processes: start 4 (srun -n 4)"),
        "{err}"
    );
    // Not even the job killed left its files.
    assert_nothing_left(&slurm);
    drop(slurm);
    let _ = std::fs::remove_dir_all(&local);
}
