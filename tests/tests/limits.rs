//! The limits around many ranks: a stack overflow reported by rank whether the
//! stack has a guard page or a canary, and a kernel limit answered in one line.

use std::process::Command;
use std::time::Duration;

use mpcrs_tests::{build_c, c_source, example, mpcrs_run, program, run_command, text};

/// Lines of stderr that come from mpcrs (the process) rather than mpcrs-run.
fn runtime_lines(err: &str) -> Vec<&str> {
    err.lines().filter(|l| l.starts_with("mpcrs:")).collect()
}

/// The one line of stderr that comes from mpcrs (asserted to be one).
fn the_runtime_line<'a>(err: &'a str, case: &str) -> &'a str {
    let lines = runtime_lines(err);
    assert_eq!(lines.len(), 1, "{case}: {err}");
    lines[0]
}

/// The overflowing rank is named, the job ends with the fault's status, and
/// no rank runs on over a corrupted stack: with a guard page (the default at
/// this size), without one (MPCRS_STACK_GUARDS=0: a runaway recursion runs into
/// its chunk's floor guard; a bounded one is caught by the canary when the
/// rank next switches), in threads and over two and four processes.
#[test]
fn a_stack_overflow_is_reported_by_rank() {
    let prog = program("errors");
    for guards in [None, Some("0")] {
        for procs in ["1", "2", "4"] {
            for scenario in ["overflow", "overflow-return"] {
                let mut cmd = Command::new(mpcrs_run());
                cmd.args([
                    "-n",
                    "8",
                    "-p",
                    procs,
                    "--stack-size",
                    "64K",
                    prog.to_str().unwrap(),
                    scenario,
                ]);
                if let Some(g) = guards {
                    cmd.env("MPCRS_STACK_GUARDS", g);
                }
                let o = run_command(&mut cmd, Duration::from_secs(60));
                let err = text(&o).1;
                let case = format!("guards {guards:?}, -p {procs}, {scenario}");
                assert_eq!(o.status.code(), Some(128 + 11), "{case}: {err}");
                let line = the_runtime_line(&err, &case);
                assert!(
                    line.starts_with("mpcrs: rank 7 overflowed its stack (65536 bytes")
                        && line.contains("raise --stack-size"),
                    "{case}: {err}"
                );
                if guards.is_some() && scenario == "overflow-return" {
                    assert!(line.contains("canary"), "{case}: {err}");
                }
                assert!(
                    !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
                    "{case}: {err}"
                );
            }
        }
    }
}

/// The same in a C program: the faulting rank is named, for a bad pointer
/// and for an overflow, in threads and over two processes.
#[test]
fn a_fault_in_a_c_rank_names_the_rank() {
    let bin = build_c(&c_source("faults.c"), "faults", None, &[]);
    for procs in ["1", "2"] {
        for (scenario, want) in [
            (
                "segv",
                "mpcrs: rank 2 died of SIGSEGV (segmentation fault at address 0x10) at 0x",
            ),
            (
                "overflow",
                "mpcrs: rank 2 overflowed its stack (262144 bytes)",
            ),
        ] {
            let o = run_command(
                Command::new(mpcrs_run()).args([
                    "-n",
                    "4",
                    "-p",
                    procs,
                    "--stack-size",
                    "256K",
                    bin.to_str().unwrap(),
                    scenario,
                ]),
                Duration::from_secs(60),
            );
            let err = text(&o).1;
            assert_eq!(
                o.status.code(),
                Some(128 + 11),
                "-p {procs} {scenario}: {err}"
            );
            let case = format!("-p {procs} {scenario}");
            let line = the_runtime_line(&err, &case);
            assert!(line.starts_with(want), "{case}: {err}");
        }
    }
}

/// A job whose stacks do not fit the address-space limit ends with one line
/// naming RLIMIT_AS and what to change, a non-zero status, no backtrace, and
/// no hang: refused by mpcrs-run before it starts, and by the runtime of a
/// program started directly with that many ranks.
#[test]
fn an_address_space_limit_is_named_in_one_line() {
    let ring = example("ring");
    // 40,000 stacks of 1 MiB reserve 40 GiB; allow 3 GiB.
    let script = format!(
        "ulimit -v 3000000 && exec {} -n 40000 {}",
        mpcrs_run().display(),
        ring.display()
    );
    let o = run_command(
        Command::new("sh").args(["-c", &script]),
        Duration::from_secs(120),
    );
    let err = text(&o).1;
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("mpcrs-run: -n 40000 in 1 process")
            && err.contains("RLIMIT_AS")
            && err.contains("--stack-size"),
        "{err}"
    );
    let script = format!("ulimit -v 3000000 && exec {}", ring.display());
    let o = run_command(
        Command::new("sh")
            .args(["-c", &script])
            .env(mpcrs_settings::variables::RANKS.name, "40000"),
        Duration::from_secs(120),
    );
    let err = text(&o).1;
    assert!(!o.status.success(), "{err}");
    let line = the_runtime_line(&err, "RLIMIT_AS");
    assert!(
        line.contains("RLIMIT_AS") && line.contains("--stack-size"),
        "{err}"
    );
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "{err}"
    );
}

/// A C program whose ranks' copies would not fit under vm.max_map_count in
/// one process ends with one line naming the limit and what to change, at
/// once (after the first copy, not thousands of copies later with the
/// dynamic loader's words), with a non-zero status.
#[test]
fn too_many_copies_of_a_c_program_for_the_mapping_limit_are_named_in_one_line() {
    let bin = build_c(&c_source("basics.c"), "basics-limits", None, &[]);
    let max: usize = std::fs::read_to_string("/proc/sys/vm/max_map_count")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // Each copy takes several mappings: a quarter of the limit in ranks is
    // more than the limit allows.
    let n = (max / 4 + 1000).to_string();
    let o = run_command(
        Command::new(mpcrs_run()).args(["-n", &n, bin.to_str().unwrap()]),
        Duration::from_secs(120),
    );
    let err = text(&o).1;
    assert!(!o.status.success(), "{err}");
    let line = the_runtime_line(&err, "vm.max_map_count");
    assert!(
        line.contains(&format!("{n} ranks of"))
            && line.contains("vm.max_map_count")
            && line.contains("-p"),
        "{err}"
    );
    assert!(
        !err.contains("panicked") && !err.contains("failed to map"),
        "{err}"
    );
}
