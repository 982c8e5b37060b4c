//! FTI's C API end to end (tests/c/heat_fti.c, written in FTI's style): a
//! run killed with SIGKILL after a checkpoint, then a new run of the program
//! (no image restored) that finds the checkpoint, recovers its data with
//! FTI_Recover, and ends with the checksum of an uninterrupted run; at each
//! level, with the files of the levels below removed as FTI's disrupt tests
//! remove them. And bad input answered with FTI_NSCS and one line.

use std::path::{Path, PathBuf};
use std::time::Duration;

use mpcrs_tests::{build_c, c_source, expect_success, heat_checksum, run_job, text};

const LIMIT: Duration = Duration::from_secs(120);

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mpcrs-fti-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A configuration with its directories under `dir`; `head` 1 makes the
/// levels in helper tasks.
fn config(dir: &Path, head: u8, extra: &str) -> PathBuf {
    let path = dir.join("config.fti");
    std::fs::write(
        &path,
        format!(
            "[basic]\nHead = {head}\nNode_size = 1\nCkpt_dir = {0}/local\nGlbl_dir = {0}/global\n\
             Meta_dir = {0}/meta\nGroup_size = 2\nKeep_last_ckpt = 0\nVerbosity = 2\n{extra}",
            dir.display()
        ),
    )
    .unwrap();
    path
}

fn heat_fti() -> PathBuf {
    build_c(&c_source("heat_fti.c"), "heat_fti", None, &["-lfti"])
}

/// Every file named `name` under `dir`, at any depth.
fn files_named(dir: &Path, name: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files_named(&p, name));
        } else if p.file_name().is_some_and(|n| n == name) {
            out.push(p);
        }
    }
    out
}

/// Runs `bin` (heat_fti or heat_ft) at `level` in `layout`: uninterrupted,
/// then killed after iteration 120 (checkpoints every 50), `disrupt`ed, and
/// run again; the second run recovers at iteration 100 with the
/// uninterrupted checksum. Returns the second run's standard error.
fn kill_disrupt_recover(
    name: &str,
    bin: &Path,
    layout: &[&str],
    level: u8,
    head: u8,
    disrupt: impl Fn(&Path),
) -> String {
    let dir = scratch(name);
    let cfg = config(&dir, head, "");
    let run = |extra: &[&str]| {
        let mut args: Vec<&str> = layout.to_vec();
        let level = level.to_string();
        args.extend([
            bin.to_str().unwrap(),
            cfg.to_str().unwrap(),
            &level,
            "200",
            "50",
        ]);
        args.extend(extra);
        run_job(&args, LIMIT)
    };
    let whole = heat_checksum(&expect_success(&run(&[]), "uninterrupted run"));
    assert!(
        files_named(&dir.join("global"), "MANIFEST").is_empty(),
        "FTI_Finalize removes the checkpoints (keep_last_ckpt = 0)"
    );
    let killed = run(&["120"]);
    assert!(
        !killed.status.success(),
        "the killed run failed: {:?}",
        text(&killed)
    );
    disrupt(&dir);
    let o = run(&[]);
    let out = expect_success(&o, "recovering run");
    assert!(out.contains("recovered at iteration 100"), "{out}");
    assert_eq!(heat_checksum(&out), whole);
    let _ = std::fs::remove_dir_all(&dir);
    text(&o).1
}

#[test]
fn l1_in_threads_and_processes() {
    for (name, layout) in [
        ("l1-threads", &["-n", "8"][..]),
        ("l1-p2", &["-n", "8", "-p", "2"][..]),
        ("l1-process-mode", &["-n", "4", "--process-mode"][..]),
    ] {
        let err = kill_disrupt_recover(name, &heat_fti(), layout, 1, 1, |_| {});
        assert!(!err.contains("application checkpoint"), "{err}");
    }
}

#[test]
fn l2_partner_copy_replaces_a_lost_file() {
    for layout in [&["-n", "8", "-p", "2"][..], &["-n", "8", "-p", "4"][..]] {
        let err = kill_disrupt_recover("l2", &heat_fti(), layout, 2, 1, |dir| {
            let lost = files_named(&dir.join("local"), "process-1.img");
            assert_eq!(lost.len(), 1, "{lost:?}");
            std::fs::remove_file(&lost[0]).unwrap();
        });
        assert!(err.contains("process 1: L1 image missing"), "{err}");
        assert!(err.contains("partner copy"), "{err}");
    }
}

#[test]
fn l3_parity_rebuilds_a_file_and_its_copy_lost_or_damaged() {
    let err = kill_disrupt_recover("l3", &heat_fti(), &["-n", "8", "-p", "2"], 3, 0, |dir| {
        let lost = files_named(&dir.join("local"), "process-0.img");
        std::fs::remove_file(&lost[0]).unwrap();
    });
    assert!(
        err.contains("rebuilt from the Reed-Solomon parity"),
        "{err}"
    );
    let err = kill_disrupt_recover(
        "l3-flip",
        &heat_fti(),
        &["-n", "8", "-p", "4"],
        3,
        1,
        |dir| {
            let f = &files_named(&dir.join("local"), "process-2.img")[0];
            let mut bytes = std::fs::read(f).unwrap();
            let n = bytes.len();
            bytes[n - 100] ^= 0x10;
            std::fs::write(f, bytes).unwrap();
        },
    );
    assert!(
        err.contains("process 2: L1 image checksum mismatch"),
        "{err}"
    );
}

#[test]
fn l4_recovers_when_every_local_directory_is_lost() {
    let err = kill_disrupt_recover("l4", &heat_fti(), &["-n", "8", "-p", "2"], 4, 1, |dir| {
        std::fs::remove_dir_all(dir.join("local")).unwrap();
    });
    assert!(err.contains("restoring it from L4"), "{err}");
    let err = kill_disrupt_recover("l4-threads", &heat_fti(), &["-n", "8"], 4, 0, |dir| {
        std::fs::remove_dir_all(dir.join("local")).unwrap();
    });
    assert!(err.contains("restoring it from L4"), "{err}");
}

#[test]
fn a_binary_built_by_mpich_mpicc_recovers_too() {
    if which("mpicc.mpich").is_none() {
        panic!("mpicc.mpich is not installed: scripts/setup-system.sh installs it");
    }
    let lib = scratch("mpich-lib");
    std::os::unix::fs::symlink(
        mpcrs_tests::profile_dir().join("libmpi.so"),
        lib.join("libfti.so"),
    )
    .unwrap();
    let include = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../mpi-abi/include");
    let bin = mpcrs_tests::profile_dir().join("c-tests/heat_fti_mpich");
    let o = std::process::Command::new("mpicc.mpich")
        .args([
            "-O2",
            "-o",
            bin.to_str().unwrap(),
            c_source("heat_fti.c").to_str().unwrap(),
        ])
        .arg(format!("-I{}", include.display()))
        .arg(format!("-L{}", lib.display()))
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-lfti")
        .output()
        .unwrap();
    expect_success(&o, "mpicc.mpich");
    let dir = scratch("mpich");
    let cfg = config(&dir, 1, "");
    let args = |extra: &[&'static str]| {
        let mut a = vec!["-n".to_string(), "4".into(), "-p".into(), "2".into()];
        a.extend([
            bin.display().to_string(),
            cfg.display().to_string(),
            "2".into(),
            "200".into(),
            "50".into(),
        ]);
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let run = |extra: &[&'static str]| {
        let a = args(extra);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        run_job(&a, LIMIT)
    };
    let whole = heat_checksum(&expect_success(&run(&[]), "uninterrupted"));
    assert!(!run(&["120"]).status.success());
    let out = expect_success(&run(&[]), "recovering run");
    assert!(out.contains("recovered at iteration 100"), "{out}");
    assert_eq!(heat_checksum(&out), whole);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&lib);
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
}

#[test]
fn bad_input_is_answered_with_fti_nscs_and_one_line_and_keeps_the_last_checkpoint() {
    let dir = scratch("bad");
    let bin = build_c(&c_source("fti_errors.c"), "fti_errors", None, &[]);
    let cfg = config(&dir, 1, "fancy_key = 3\n");
    let local = dir.join("local");
    let (b, c, l) = (
        bin.to_str().unwrap(),
        cfg.to_str().unwrap(),
        local.to_str().unwrap(),
    );
    let o = run_job(&["-n", "2", b, c, "break", l], LIMIT);
    expect_success(&o, "fti_errors break");
    let (_, err) = text(&o);
    for want in [
        "mpcrs: FTI_Checkpoint: rank 0: called before FTI_Init",
        "mpcrs: FTI_Protect: rank 0: variable 3: NULL pointer with count 10",
        "mpcrs: FTI_Checkpoint: rank 0: level 7 is not one of 1",
        "not implemented by mpcrs, ignored: [basic] fancy_key = 3",
        "mpcrs: FTI_Checkpoint: rank 0: ",
    ] {
        assert!(err.contains(want), "no {want:?} in:\n{err}");
    }
    assert!(
        err.contains(&format!("{}/node-0", local.display())),
        "the failed checkpoint names its directory:\n{err}"
    );
    std::fs::remove_file(&local).unwrap();
    let o = run_job(&["-n", "2", b, c, "recover"], LIMIT);
    let out = expect_success(&o, "fti_errors recover");
    assert!(
        out.contains("recovered 42 after a failed checkpoint"),
        "{out}\n{}",
        text(&o).1
    );
    // A configuration that is not one: file and line.
    std::fs::write(&cfg, "[basic]\nckpt_dir = x\nthis line is wrong\n").unwrap();
    let o = run_job(&["-n", "2", b, c, "break", l], LIMIT);
    let (_, err) = text(&o);
    assert!(
        err.contains(&format!(
            "{}:3: neither a [section] nor key = value",
            cfg.display()
        )),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The Rust API (tests/src/bin/heat_ft.rs: a value, a slice and a vector
/// that grows at every checkpoint) over the same files and levels.
#[test]
fn the_rust_api_recovers_values_slices_and_grown_vectors_at_every_level() {
    let bin = mpcrs_tests::program("heat_ft");
    let err = kill_disrupt_recover("rust-l1", &bin, &["-n", "8"], 1, 1, |_| {});
    assert!(!err.contains("application checkpoint"), "{err}");
    let err = kill_disrupt_recover("rust-l2", &bin, &["-n", "8", "-p", "2"], 2, 1, |dir| {
        std::fs::remove_file(&files_named(&dir.join("local"), "process-0.img")[0]).unwrap();
    });
    assert!(err.contains("process 0: L1 image missing"), "{err}");
    let err = kill_disrupt_recover("rust-l3", &bin, &["-n", "8", "-p", "4"], 3, 1, |dir| {
        std::fs::remove_file(&files_named(&dir.join("local"), "process-3.img")[0]).unwrap();
    });
    assert!(
        err.contains("rebuilt from the Reed-Solomon parity"),
        "{err}"
    );
    let err = kill_disrupt_recover("rust-l4", &bin, &["-n", "8", "-p", "2"], 4, 0, |dir| {
        std::fs::remove_dir_all(dir.join("local")).unwrap();
    });
    assert!(err.contains("restoring it from L4"), "{err}");
}

/// tests/c/fti_calls.c: a list that grows every step is recovered after a
/// kill with FTI_RecoverVar, FTI_GetStoredSize and FTI_Realloc; a composite
/// type with it; and FTI_Snapshot's first call after a restart recovers.
#[test]
fn recover_var_realloc_stored_size_and_snapshot_recover_after_a_kill() {
    let bin = build_c(&c_source("fti_calls.c"), "fti_calls", None, &["-lfti"]);
    for (mode, layout, stored) in [
        ("var", &["-n", "8", "-p", "2"][..], "stored 48"),
        ("var", &["-n", "8", "-p", "4"][..], "stored 48"),
        ("var", &["-n", "8"][..], "stored 48"),
        ("snapshot", &["-n", "8", "-p", "2"][..], "stored 0"),
    ] {
        let dir = scratch(&format!("calls-{mode}-{}", layout.len()));
        let cfg = config(&dir, 1, "");
        let run = |extra: &[&str]| {
            let mut a = layout.to_vec();
            a.extend([bin.to_str().unwrap(), cfg.to_str().unwrap(), mode]);
            a.extend(extra);
            run_job(&a, LIMIT)
        };
        let whole = heat_checksum(&expect_success(&run(&[]), "uninterrupted fti_calls"));
        assert!(!run(&["die"]).status.success(), "the killed run failed");
        let o = run(&[]);
        let out = expect_success(&o, "recovering fti_calls");
        assert!(
            out.contains(&format!("recovered steps 6 n 6 {stored}")),
            "{mode} {layout:?}: {out}"
        );
        assert_eq!(heat_checksum(&out), whole, "{mode} {layout:?}");
        if mode == "var" {
            let (_, err) = text(&o);
            assert!(
                err.contains("FTI_RecoverVar: rank 0: variable 2: 0 bytes protected, 48 stored"),
                "recovering before FTI_Realloc is refused: {err}"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// L2 and L3 place data on other processes: a job of one process says so
/// once and keeps its checkpoints at L1, from which it recovers.
#[test]
fn l2_and_l3_in_a_job_of_one_process_say_they_need_two() {
    for level in [2u8, 3] {
        let err = kill_disrupt_recover(
            &format!("one-process-l{level}"),
            &heat_fti(),
            &["-n", "4"],
            level,
            1,
            |_| {},
        );
        assert!(!err.contains("not complete"), "{err}");
        let dir = scratch(&format!("one-process-say-l{level}"));
        let cfg = config(&dir, 1, "");
        let o = run_job(
            &[
                "-n",
                "4",
                heat_fti().to_str().unwrap(),
                cfg.to_str().unwrap(),
                &level.to_string(),
                "200",
                "50",
            ],
            LIMIT,
        );
        expect_success(&o, "one process");
        let (_, err) = text(&o);
        let want = format!(
            "L{level} needs two processes or more (run with -p 2 or more); this job has one, so its checkpoints get L1 only"
        );
        assert_eq!(err.matches(&want).count(), 1, "{err}");
        assert!(!err.contains("not complete"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn the_memory_level_recovers_from_the_service_and_from_its_flushed_files() {
    let dir = scratch("memory");
    let cfg = config(&dir, 0, "");
    let ck = dir.join("ck");
    let bin = heat_fti();
    let run = |extra: &[&str], tail: &[&str]| {
        let mut args = vec!["-n", "8", "-p", "2", "--checkpoint", ck.to_str().unwrap()];
        args.extend(["--ckpt-service", "localhost"]);
        args.extend(extra);
        args.extend([
            bin.to_str().unwrap(),
            cfg.to_str().unwrap(),
            "5",
            "200",
            "50",
        ]);
        args.extend(tail);
        run_job(&args, LIMIT)
    };
    let whole = heat_checksum(&expect_success(&run(&[], &[]), "uninterrupted run"));
    // Killed after iteration 120, started again by the launcher: from the
    // service's memory.
    let o = run(&["--max-restarts", "1"], &["120"]);
    let out = expect_success(&o, "a run restarted by the launcher");
    let err = text(&o).1;
    assert!(err.contains("killed by signal 9"), "{err}");
    assert!(
        err.contains("restored from the memory of the checkpoint service"),
        "{err}"
    );
    assert!(out.contains("recovered at iteration 100"), "{out}");
    assert_eq!(heat_checksum(&out), whole);
    // Killed, and the job ends: its service flushes what it held; a new
    // run (a new service) recovers from those files.
    let killed = run(&[], &["120"]);
    assert!(!killed.status.success(), "{:?}", text(&killed));
    let o = run(&[], &[]);
    let out = expect_success(&o, "a new run");
    let err = text(&o).1;
    assert!(err.contains("restored from /"), "{err}");
    assert!(out.contains("recovered at iteration 100"), "{out}");
    assert_eq!(heat_checksum(&out), whole);
    let _ = std::fs::remove_dir_all(&dir);
}
