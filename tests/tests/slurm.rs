//! Jobs started by a real Slurm (`srun --mpi=pmi2`, see mpcrs_tests::slurm):
//! the processes Slurm starts join one mpcrs job through Slurm's PMI-2 server,
//! one rank each, or several ranks each as threads with `mpcrs-exec` and
//! `MPCRS_RANKS`, and compute what mpcrs-run's jobs compute; their
//! checkpoints restart with mpcrs-run.

use std::time::Duration;

use mpcrs_tests::slurm::Slurm;
use mpcrs_tests::{build_c, expect_success, heat_checksum, mpcrs_run, run_job, shared_bench};

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
    // Nothing of Slurm's jobs is left in /dev/shm (named after Slurm's job
    // ids, JOB.STEP; no mpcrs-run is there to clean up).
    let left: Vec<String> = std::fs::read_dir("/dev/shm")
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| {
            n.strip_prefix("mpcrs-")
                .and_then(|rest| rest.split('-').next())
                .is_some_and(|id| {
                    id.contains('.') && id.split('.').all(|p| p.parse::<u64>().is_ok())
                })
        })
        .collect();
    assert!(left.is_empty(), "left in /dev/shm: {left:?}");
}
