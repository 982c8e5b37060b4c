//! Incremental images end to end (tests/c/dirty_pages.c rewrites a known set
//! of pages before each checkpoint): after a full image, epochs store only
//! what changed, within 1.05 times the pages written plus 1 MiB; a restart
//! from any epoch of the chain ends with the uninterrupted checksum, also
//! when memory was mapped and given back or a child forked between epochs,
//! and after kills during incremental epochs; pruning keeps what a kept
//! epoch needs; a damaged base makes a restart fall back to an epoch whose
//! chain is intact.

use std::path::{Path, PathBuf};
use std::time::Duration;

use mpcrs_tests::{
    build_c, c_source, expect_success, heat_checksum, latest_epoch, restarted_after, run_job,
    shared_bench, text, BackgroundJob,
};

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

/// mpcrs-run's arguments for `program` in `layout`, checkpointing into `ck`
/// with node-local images in `local` only (`--levels 1:1`: these tests are
/// about chains, and run beside others that load the disk), and `extra`.
fn local_only<'a>(
    layout: &[&'a str],
    ck: &'a Path,
    local: &'a Path,
    extra: &[&'a str],
    program: &[&'a str],
) -> Vec<&'a str> {
    let mut args = layout.to_vec();
    args.extend([
        "--checkpoint",
        ck.to_str().unwrap(),
        "--checkpoint-local",
        local.to_str().unwrap(),
        "--levels",
        "1:1",
    ]);
    args.extend(extra);
    args.extend(program);
    args
}

/// The checksum `program` ends with in `layout`, run without checkpoints.
fn uninterrupted(layout: &[&str], program: &[&str]) -> String {
    let mut args = layout.to_vec();
    args.extend(program);
    heat_checksum(&expect_success(&run_job(&args, LIMIT), "uninterrupted"))
}

/// A run of dirty_pages in `layout` checkpointed 9 times (epoch 1 full,
/// 2-9 incremental), in `dir`; returns the checkpoint directory.
fn checkpointed(dir: &Path, layout: &[&str], bin: &Path) -> PathBuf {
    let (ck, local) = (dir.join("ck"), dir.join("local"));
    let args = local_only(
        layout,
        &ck,
        &local,
        &["--keep", "2", "--full-every", "9"],
        &[bin.to_str().unwrap(), "4", "128", "9"],
    );
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

/// The three layouts every feature is tested in.
const LAYOUTS: [&[&str]; 3] = [
    &["-n", "4"],
    &["-n", "8", "-p", "2"],
    &["-n", "8", "-p", "4"],
];

/// The value of `flag` in a layout (1 if absent).
fn layout_arg(layout: &[&str], flag: &str) -> u64 {
    layout
        .iter()
        .position(|a| *a == flag)
        .map_or(1, |i| layout[i + 1].parse().unwrap())
}

#[test]
fn incremental_epochs_store_the_pages_written_within_five_percent_plus_a_mebibyte() {
    // 32 MiB per rank, 600 pages rewritten per epoch at a stride of 131:
    // more written ranges in one mapping than the kernel reports in one pass.
    let bin = dirty_pages();
    let pages = 600u64;
    for layout in LAYOUTS {
        let dir = scratch(&format!("size-{}", layout.len()));
        let (ck, local) = (dir.join("ck"), dir.join("local"));
        let args = local_only(
            layout,
            &ck,
            &local,
            &["--keep", "5", "--full-every", "8"],
            &[bin.to_str().unwrap(), "32", "600", "5"],
        );
        expect_success(&run_job(&args, LIMIT), "checkpointed");
        let processes = layout_arg(layout, "-p");
        let written = layout_arg(layout, "-n") / processes * pages * 4096;
        let bound = written + written / 20 + (1 << 20);
        for k in 2..=5u64 {
            for p in 0..processes {
                let image = local.join(format!("node-0/epoch-{k}/process-{p}.img"));
                assert_eq!(parent_of(&image), k - 1, "{layout:?} epoch {k}");
                let size = std::fs::metadata(&image).unwrap().len();
                assert!(
                    size <= bound,
                    "{layout:?} epoch {k} process {p}: {size} bytes stored for {written} written \
                     (bound {bound})"
                );
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn memory_mapped_and_given_back_or_a_forked_child_between_epochs_restarts_exactly() {
    let bin = dirty_pages();
    for mode in ["map", "fork"] {
        for layout in LAYOUTS {
            let program = [bin.to_str().unwrap(), "4", "64", "5", mode];
            let whole = uninterrupted(layout, &program);
            let dir = scratch(&format!("{mode}-{}", layout.len()));
            let (ck, local) = (dir.join("ck"), dir.join("local"));
            let args = local_only(layout, &ck, &local, &["--keep", "5"], &program);
            expect_success(&run_job(&args, LIMIT), "checkpointed");
            let image = local.join("node-0/epoch-4/process-0.img");
            assert_eq!(parent_of(&image), 3, "{mode} {layout:?}");
            let o = run_job(&["--restart", ck.to_str().unwrap(), "--epoch", "4"], LIMIT);
            let out = expect_success(&o, &format!("{mode} {layout:?}: restart from epoch 4"));
            assert!(out.contains("restarted at 4"), "{out}");
            assert_eq!(heat_checksum(&out), whole, "{mode} {layout:?}");
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

#[test]
fn killed_while_incremental_epochs_are_written_restarts_from_the_last_committed_one() {
    // 4 MiB of each rank's 16 MiB rewritten before each of 16 checkpoints:
    // the kill lands at some point of an incremental epoch's writing.
    let bin = dirty_pages();
    let program = [bin.to_str().unwrap(), "16", "1024", "16"];
    for (i, layout) in LAYOUTS.iter().enumerate() {
        let whole = uninterrupted(layout, &program);
        let dir = scratch(&format!("kill-{i}"));
        let ck = dir.join("ck");
        let mut args = layout.to_vec();
        args.extend(["--checkpoint", ck.to_str().unwrap(), "--keep", "3"]);
        args.extend(program);
        let job = BackgroundJob::start(&args);
        // Past the full image and one incremental epoch, then a pause that
        // differs per layout, so the kill falls at different moments.
        job.wait_for("two epochs", LIMIT, |_, _| {
            latest_epoch(&ck).is_some_and(|k| k >= 2)
        });
        std::thread::sleep(Duration::from_millis(37 * (i as u64 + 1)));
        let (status, _, err) = job.kill_processes();
        assert!(!status.success(), "{err}");
        let k = latest_epoch(&ck).unwrap();
        let o = run_job(&["--restart", ck.to_str().unwrap()], LIMIT);
        let out = expect_success(&o, &format!("{layout:?}: restart after a kill"));
        let (_, err) = text(&o);
        assert!(
            out.contains(&format!("restarted at {k}")),
            "{layout:?}: latest was epoch {k}\n{out}\n{err}"
        );
        assert_eq!(heat_checksum(&out), whole, "{layout:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn heat_across_4_processes_killed_twice_restarts_from_incremental_epochs() {
    let heat = build_c(
        &shared_bench("heat.c"),
        "heat-incremental",
        None,
        &["-DWITH_MPIX", "-lm"],
    );
    let program = [heat.to_str().unwrap(), "256", "6000", "300"];
    let layout = ["-n", "16", "-p", "4"];
    let whole = uninterrupted(&layout, &program);
    let dir = scratch("heat-p4");
    let (ck, local) = (dir.join("ck"), dir.join("local"));
    let c = ck.to_str().unwrap();
    let image = |k: u64| local.join(format!("node-0/epoch-{k}/process-3.img"));
    let args = local_only(&layout, &ck, &local, &[], &program);

    // Killed after its third epoch: the latest is incremental.
    let job = BackgroundJob::start(&args);
    job.wait_for("three epochs", LIMIT, |_, _| {
        latest_epoch(&ck).is_some_and(|k| k >= 3)
    });
    let (status, _, err) = job.kill_processes();
    assert!(!status.success(), "{err}");
    let k1 = latest_epoch(&ck).unwrap();
    assert_eq!(parent_of(&image(k1)), k1 - 1);

    // Restarted, killed two epochs later: a restored process's first image
    // is full, the next incremental.
    let job = BackgroundJob::start(&["--restart", c]);
    job.wait_for("the restart and two epochs", LIMIT, |out, _| {
        restarted_after(out).is_some() && latest_epoch(&ck).is_some_and(|k| k >= k1 + 2)
    });
    let (status, _, err) = job.kill_processes();
    assert!(!status.success(), "{err}");
    let k2 = latest_epoch(&ck).unwrap();
    assert_eq!(parent_of(&image(k2)), k2 - 1);
    assert_eq!(
        parent_of(&image(k1 + 1)),
        0,
        "the first image after a restore is full"
    );

    let o = run_job(&["--restart", c], LIMIT);
    let out = expect_success(&o, "second restart");
    assert_eq!(
        restarted_after(&out),
        Some(k2 * 300),
        "restarted from epoch {k2}\n{out}"
    );
    assert_eq!(heat_checksum(&out), whole);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_corrupted_base_is_detected_by_verify_and_restart_falls_back() {
    let bin = dirty_pages();
    let dir = scratch("corrupted");
    let (ck, local) = (dir.join("ck"), dir.join("local"));
    let program = [bin.to_str().unwrap(), "8", "64", "6"];
    let layout = ["-n", "8", "-p", "4"];
    let whole = uninterrupted(&layout, &program);
    let args = local_only(
        &layout,
        &ck,
        &local,
        &["--keep", "6", "--full-every", "3"],
        &program,
    );
    expect_success(&run_job(&args, LIMIT), "checkpointed");
    let ckpt = mpcrs_tests::mpcrs_ckpt;
    let listed = expect_success(&ckpt(&["ls", ck.to_str().unwrap()]), "mpcrs-ckpt ls");
    assert!(listed.contains("epoch-4  full"), "{listed}");
    assert!(
        listed.contains("epoch-6  latest  incremental on epoch-5 (chain epoch-4..epoch-6)"),
        "{listed}"
    );
    assert!(
        expect_success(&ckpt(&["verify", ck.to_str().unwrap()]), "verify").contains("applies to")
    );
    // One byte of process 2's full image of epoch 4 flipped (its last page
    // is memory contents): epochs 4-6 cannot be restored, 3 can.
    let base = local.join("node-0/epoch-4/process-2.img");
    let mut bytes = std::fs::read(&base).unwrap();
    let at = bytes.len() - 100;
    bytes[at] ^= 0x40;
    std::fs::write(&base, bytes).unwrap();
    let o = ckpt(&["verify", ck.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(!o.status.success(), "{out}");
    assert!(
        err.contains("epoch-4") && err.contains("process-2.img"),
        "{out}\n{err}"
    );
    let o = run_job(&["--restart", ck.to_str().unwrap()], LIMIT);
    let out = expect_success(&o, "restart after a corrupted base");
    let (_, err) = text(&o);
    assert!(out.contains("restarted at 3"), "{out}\n{err}");
    assert!(
        err.contains("epoch-6 cannot be restored") && err.contains("checksum mismatch"),
        "{err}"
    );
    assert_eq!(heat_checksum(&out), whole);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn compressed_images_store_less_and_restart_exactly() {
    let bin = dirty_pages();
    for layout in LAYOUTS {
        let program = [bin.to_str().unwrap(), "8", "64", "5"];
        let whole = uninterrupted(layout, &program);
        let stored = |compress: &str| {
            let dir = scratch(&format!("zstd-{compress}-{}", layout.len()));
            let (ck, local) = (dir.join("ck"), dir.join("local"));
            let args = local_only(
                layout,
                &ck,
                &local,
                &["--keep", "5", "--compress", compress],
                &program,
            );
            expect_success(&run_job(&args, LIMIT), "checkpointed");
            let image = |k: u64| local.join(format!("node-0/epoch-{k}/process-0.img"));
            let (_, h) = mpcrs_cr::image::read_header(&image(1)).unwrap();
            let compressed = h
                .regions
                .iter()
                .filter(|r| r.flags & mpcrs_cr::image::COMPRESSED != 0)
                .count();
            let bytes = |k: u64| std::fs::metadata(image(k)).unwrap().len();
            (dir, ck, compressed, bytes(1), bytes(3))
        };
        let (plain_dir, _, none, plain_full, plain_incremental) = stored("none");
        let (dir, ck, compressed, full, incremental) = stored("zstd:1");
        assert_eq!(none, 0);
        assert!(compressed > 0, "{layout:?}: no region stored compressed");
        assert!(
            full * 2 < plain_full && incremental < plain_incremental,
            "{layout:?}: compressed {full} and {incremental} bytes, uncompressed {plain_full} and \
             {plain_incremental}"
        );
        let ckpt = mpcrs_tests::mpcrs_ckpt(&["verify", ck.to_str().unwrap()]);
        assert!(
            ckpt.status.success(),
            "{}",
            String::from_utf8_lossy(&ckpt.stdout)
        );
        let o = run_job(&["--restart", ck.to_str().unwrap(), "--epoch", "3"], LIMIT);
        let out = expect_success(&o, &format!("{layout:?}: restart from a compressed chain"));
        assert!(out.contains("restarted at 3"), "{out}");
        assert_eq!(heat_checksum(&out), whole, "{layout:?}");
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(&plain_dir);
    }
}

#[test]
fn memory_given_back_after_a_restart_from_full_images_reads_as_zeros() {
    // Full images only: a restored region is anonymous memory, so the half
    // of a region the program gives back after the restart reads as zeros,
    // as it did in the uninterrupted run (not as the image's contents).
    let bin = dirty_pages();
    for layout in [&["-n", "4"][..], &["-n", "8", "-p", "2"][..]] {
        let program = [bin.to_str().unwrap(), "4", "64", "5", "map"];
        let whole = uninterrupted(layout, &program);
        let dir = scratch(&format!("given-back-{}", layout.len()));
        let (ck, local) = (dir.join("ck"), dir.join("local"));
        let args = local_only(
            layout,
            &ck,
            &local,
            &["--keep", "5", "--full-every", "1"],
            &program,
        );
        expect_success(&run_job(&args, LIMIT), "checkpointed");
        let o = run_job(&["--restart", ck.to_str().unwrap(), "--epoch", "4"], LIMIT);
        let out = expect_success(&o, &format!("{layout:?}: restart from a full epoch 4"));
        assert_eq!(heat_checksum(&out), whole, "{layout:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
