//! The Rust heat example against the C benchmark it mirrors, run with Open MPI:
//! the same size and iteration count must give the same checksum.

use std::process::Command;
use std::time::Duration;

use mpcrs_tests::{
    example, expect_success, heat_checksum, profile_dir, run_command, run_job, run_openmpi,
    shared_bench,
};

fn openmpi_checksum(ranks: usize, kib: &str, iters: &str) -> String {
    let src = shared_bench("heat.c");
    assert!(
        src.exists(),
        "{} is missing (../shared beside the repository)",
        src.display()
    );
    // One binary per caller: tests run at once and must not rebuild a binary
    // another one is starting.
    let bin = profile_dir().join(format!("heat-openmpi-{ranks}"));
    let o = run_command(
        Command::new("mpicc.openmpi").args([
            "-O2",
            src.to_str().unwrap(),
            "-o",
            bin.to_str().unwrap(),
            "-lm",
        ]),
        Duration::from_secs(120),
    );
    expect_success(
        &o,
        "mpicc.openmpi heat.c (installed by scripts/setup-system.sh)",
    );
    let o = run_openmpi(&bin, ranks, &[kib, iters]);
    heat_checksum(&expect_success(&o, "heat under Open MPI"))
}

fn heat_matches_open_mpi(ranks: usize) {
    let (kib, iters) = ("64", "60");
    let o = run_job(
        &[
            "-n",
            &ranks.to_string(),
            "-c",
            "2",
            example("heat").to_str().unwrap(),
            kib,
            iters,
        ],
        Duration::from_secs(120),
    );
    let ours = heat_checksum(&expect_success(&o, "heat under mpcrs"));
    let theirs = openmpi_checksum(ranks, kib, iters);
    assert_eq!(ours, theirs, "checksums differ at -n {ranks}");
}

#[test]
fn heat_checksum_equals_open_mpi_at_4_ranks() {
    heat_matches_open_mpi(4);
}

#[test]
fn heat_checksum_equals_open_mpi_at_16_ranks() {
    heat_matches_open_mpi(16);
}

#[test]
fn heat_checkpointing_through_the_rust_api_keeps_the_checksum() {
    let dir = std::env::temp_dir().join(format!("mpcrs-rust-heat-ckpt-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let heat = example("heat");
    let heat = heat.to_str().unwrap();
    let plain = run_job(
        &["-n", "8", heat, "64", "30", "10"],
        Duration::from_secs(60),
    );
    let plain = expect_success(&plain, "heat without --checkpoint");
    assert!(
        plain.contains("checkpoint state 2 after iteration 10\n"),
        "{plain}"
    );
    let o = run_job(
        &[
            "-n",
            "8",
            "--checkpoint",
            dir.to_str().unwrap(),
            heat,
            "64",
            "30",
            "10",
        ],
        Duration::from_secs(60),
    );
    let out = expect_success(&o, "heat with --checkpoint");
    assert!(
        out.contains("checkpoint after iteration 10\ncheckpoint after iteration 20\n"),
        "{out}"
    );
    assert_eq!(heat_checksum(&out), heat_checksum(&plain));
    assert_eq!(
        std::fs::read_to_string(dir.join("latest")).unwrap(),
        "epoch-2\n"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
