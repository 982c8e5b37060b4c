//! Point-to-point and collective semantics against sequential references, at the
//! rank counts of the acceptance criteria, on 2 workers.

use std::time::Duration;

use mpcrs_tests::{expect_success, program, run_job};

fn semantics(ranks: usize) {
    let prog = program("semantics");
    let n = ranks.to_string();
    let o = run_job(
        &["-n", &n, "-c", "2", prog.to_str().unwrap()],
        Duration::from_secs(300),
    );
    let out = expect_success(&o, &format!("semantics at -n {ranks}"));
    for part in ["point-to-point", "collectives", "communicators"] {
        assert!(
            out.contains(&format!("ok {part} (ranks {ranks}")),
            "missing '{part}' report at -n {ranks}:\n{out}"
        );
    }
}

#[test]
fn semantics_1_rank() {
    semantics(1);
}

#[test]
fn semantics_2_ranks() {
    semantics(2);
}

#[test]
fn semantics_7_ranks() {
    semantics(7);
}

#[test]
fn semantics_64_ranks() {
    semantics(64);
}

#[test]
fn semantics_1024_ranks() {
    semantics(1024);
}

#[test]
fn semantics_on_one_worker() {
    // Every rank on the same worker: blocking calls must yield, never spin.
    let prog = program("semantics");
    let o = run_job(
        &["-n", "16", "-c", "1", prog.to_str().unwrap()],
        Duration::from_secs(120),
    );
    expect_success(&o, "semantics at -n 16 -c 1");
}
