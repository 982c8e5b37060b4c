//! Incremental images end to end (tests/c/dirty_pages.c rewrites a known set
//! of pages before each checkpoint): after a full image, epochs store only
//! what changed; a restart from any epoch of the chain ends with the
//! uninterrupted checksum; pruning keeps what a kept epoch needs; a damaged
//! base makes a restart fall back to an epoch whose chain is intact.

use std::path::{Path, PathBuf};
use std::time::Duration;

use mpcrs_tests::{build_c, c_source, expect_success, heat_checksum, run_job, text};

/// Every checkpoint fsyncs its image, manifest and directories: beside
/// tests that load the disk, one fsync may wait tens of seconds.
const LIMIT: Duration = Duration::from_secs(300);

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mpcrs-incremental-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn dirty_pages() -> PathBuf {
    build_c(&c_source("dirty_pages.c"), "dirty_pages", None, &[])
}

/// Parent epoch of an image (0: a full image).
fn parent_of(image: &Path) -> u64 {
    let (_, h) = mpcrs_cr::image::read_header(image).unwrap();
    h.parent.map_or(0, |p| p.epoch)
}

/// A run of dirty_pages in `layout` checkpointed 9 times (epoch 1 full,
/// 2-9 incremental), in `dir`; returns the checkpoint directory.
fn checkpointed(dir: &Path, layout: &[&str], bin: &Path) -> PathBuf {
    let (ck, local) = (dir.join("ck"), dir.join("local"));
    let mut args = layout.to_vec();
    args.extend([
        "--checkpoint",
        ck.to_str().unwrap(),
        "--checkpoint-local",
        local.to_str().unwrap(),
        "--keep",
        "2",
        "--full-every",
        "9",
        // Node-local images only: the test is about chains, and it runs
        // beside others that load the disk.
        "--levels",
        "1:1",
    ]);
    args.extend([bin.to_str().unwrap(), "4", "128", "9"]);
    expect_success(&run_job(&args, LIMIT), "checkpointed");
    // Each applies to the one before; --keep 2 keeps 8 and 9 and the chain.
    let l1 = |k: u64| local.join(format!("node-0/epoch-{k}/process-0.img"));
    assert_eq!(parent_of(&l1(1)), 0);
    for k in 2..=9 {
        assert_eq!(parent_of(&l1(k)), k - 1, "{layout:?} epoch {k}");
        assert!(
            ck.join(format!("epoch-{k}/MANIFEST")).is_file(),
            "epoch {k} pruned"
        );
    }
    ck
}

#[test]
fn restarts_from_the_first_third_and_seventh_incremental_epoch_match_an_uninterrupted_run() {
    let bin = dirty_pages();
    for layout in [
        &["-n", "4"][..],
        &["-n", "8", "-p", "2"][..],
        &["-n", "8", "-p", "4"][..],
    ] {
        let mut args = layout.to_vec();
        args.extend([bin.to_str().unwrap(), "4", "128", "9"]);
        let whole = heat_checksum(&expect_success(&run_job(&args, LIMIT), "uninterrupted"));
        // A restarted run checkpoints on (and prunes): one run per restart.
        for k in [2u64, 4, 8] {
            let dir = scratch(&format!("chain-{}-{k}", layout.len()));
            let ck = checkpointed(&dir, layout, &bin);
            let o = run_job(
                &["--restart", ck.to_str().unwrap(), "--epoch", &k.to_string()],
                LIMIT,
            );
            let out = expect_success(&o, &format!("restart from epoch {k}"));
            assert!(out.contains(&format!("restarted at {k}")), "{out}");
            assert_eq!(heat_checksum(&out), whole, "{layout:?} epoch {k}");
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

#[test]
fn a_damaged_base_falls_back_to_an_epoch_whose_chain_is_intact() {
    let bin = dirty_pages();
    let dir = scratch("damaged");
    let (ck, local) = (dir.join("ck"), dir.join("local"));
    let program = [bin.to_str().unwrap(), "8", "64", "6"];
    let mut args = vec!["-n", "4", "-p", "2"];
    args.extend(&program);
    let whole = heat_checksum(&expect_success(&run_job(&args, LIMIT), "uninterrupted"));
    let mut args = vec![
        "-n",
        "4",
        "-p",
        "2",
        "--checkpoint",
        ck.to_str().unwrap(),
        "--checkpoint-local",
        local.to_str().unwrap(),
        "--keep",
        "6",
        "--full-every",
        "3",
    ];
    args.extend(&program);
    expect_success(&run_job(&args, LIMIT), "checkpointed");
    // Chains: 1 <- 2 <- 3, 4 <- 5 <- 6. Epoch 4's image of process 1 lost at
    // every level: 6, 5 and 4 cannot be restored; 3 can.
    let lost = [
        local.join("node-0/epoch-4/process-1.img"),
        ck.join("epoch-4/process-1.img"),
    ];
    for f in &lost {
        if f.exists() {
            std::fs::remove_file(f).unwrap();
        }
    }
    let o = run_job(&["--restart", ck.to_str().unwrap()], LIMIT);
    let out = expect_success(&o, "restart after a lost base");
    let (_, err) = text(&o);
    assert!(out.contains("restarted at 3"), "{out}\n{err}");
    assert_eq!(heat_checksum(&out), whole);
    assert!(
        err.contains("epoch-6 cannot be restored") && err.contains("epoch-4"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
