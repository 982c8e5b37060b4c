//! Rail drivers between real processes of one job.

use std::time::Duration;

use mpcrs_tests::{expect_success, program, run_job};

#[test]
fn shm_rail_carries_frames_both_ways_and_lends_large_buffers() {
    let o = run_job(
        &["-n", "2", "-p", "2", program("shm_node").to_str().unwrap()],
        Duration::from_secs(120),
    );
    let out = expect_success(&o, "shm_node under mpcrs-run -p 2");
    assert!(
        out.contains("process 0: received 2000 frames (") && out.contains("; lent 4194304 bytes"),
        "{out}"
    );
    assert!(
        out.contains("process 1: received 2000 frames (")
            && out.contains("; copied 4194304 bytes once"),
        "{out}"
    );
    // Both sides had the rings mapped before the names were removed. Rings are
    // named mpcrs-mpcrs-LAUNCHER_PID-FROM-TO: those of jobs that still run (other
    // tests) may exist; none of a finished job may.
    let left: Vec<String> = std::fs::read_dir("/dev/shm")
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| {
            n.strip_prefix("mpcrs-mpcrs-")
                .and_then(|rest| rest.split('-').next())
                .is_some_and(|pid| !std::path::Path::new("/proc").join(pid).exists())
        })
        .collect();
    assert!(left.is_empty(), "left in /dev/shm: {left:?}");
}

#[test]
fn rail_pingpong_measures_both_rails() {
    let o = run_job(
        &[
            "-n",
            "2",
            "-p",
            "2",
            program("rail_pingpong").to_str().unwrap(),
            "200",
        ],
        Duration::from_secs(120),
    );
    let out = expect_success(&o, "rail_pingpong");
    for rail in ["shm", "tcp"] {
        for what in ["latency 8 B one-way", "bandwidth 256 KiB frames"] {
            let line = out
                .lines()
                .find(|l| l.starts_with(&format!("{rail} {what} ")))
                .unwrap_or_else(|| panic!("no {rail} {what} in {out}"));
            let value: f64 = line.split(' ').rev().nth(1).unwrap().parse().unwrap();
            assert!(value > 0.0, "{line}");
        }
    }
}
