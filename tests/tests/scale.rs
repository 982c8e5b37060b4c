//! Scale and load: 65,536 ranks in one process, semantics at 16,384, a
//! 4096-rank ring with its memory per idle rank, the 100,000-message stress,
//! and idle CPU use of blocked ranks.

use std::time::Duration;

use mpcrs_tests::{example, expect_success, program, run_job};

fn rss_kib(ranks: usize) -> u64 {
    let n = ranks.to_string();
    let prog = program("ring_mem");
    let o = run_job(
        &["-n", &n, "-c", "2", prog.to_str().unwrap()],
        Duration::from_secs(120),
    );
    let out = expect_success(&o, &format!("ring of {ranks} ranks"));
    out.split_whitespace()
        .skip_while(|w| *w != "rss_kib")
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no rss_kib in output: {out}"))
}

#[test]
fn ring_allreduce_bcast_and_communicators_at_65536_ranks_in_one_process() {
    let prog = example("scale");
    let o = run_job(
        &["-n", "65536", prog.to_str().unwrap(), "2", "0"],
        Duration::from_secs(300),
    );
    let out = expect_success(&o, "scale at 65,536 ranks");
    println!("{out}");
    assert!(
        out.contains("ranks=65536 ") && out.trim_end().ends_with(" ok"),
        "{out}"
    );
    let ring = example("ring");
    let o = run_job(
        &["-n", "65536", ring.to_str().unwrap(), "2"],
        Duration::from_secs(300),
    );
    let out = expect_success(&o, "ring of 65,536 ranks");
    assert!(
        out.contains("token after 2 laps of 65536 ranks: 131072"),
        "{out}"
    );
}

#[test]
fn semantics_at_16384_ranks_in_one_process() {
    let prog = program("semantics");
    let o = run_job(
        &["-n", "16384", prog.to_str().unwrap()],
        Duration::from_secs(600),
    );
    let out = expect_success(&o, "semantics at 16,384 ranks");
    println!("{out}");
    for part in ["point-to-point", "collectives", "communicators"] {
        assert!(out.contains(&format!("ok {part} (ranks 16384")), "{out}");
    }
}

#[test]
fn ring_of_4096_ranks_and_memory_per_idle_rank() {
    let one = rss_kib(1);
    let many = rss_kib(4096);
    let per_rank = (many.saturating_sub(one)) as f64 / 4095.0;
    println!("resident memory: {one} KiB with 1 rank, {many} KiB with 4096: {per_rank:.1} KiB per idle rank");
    // An idle rank costs its touched stack pages and matching state, not a stack.
    assert!(per_rank < 64.0, "{per_rank:.1} KiB per idle rank");
}

#[test]
fn stress_100000_messages_64_ranks() {
    let prog = program("stress");
    let o = run_job(
        &[
            "-n",
            "64",
            "-c",
            "2",
            prog.to_str().unwrap(),
            "100000",
            "1048576",
            "7",
        ],
        Duration::from_secs(600),
    );
    let out = expect_success(&o, "stress");
    assert!(out.contains("stress ok: 100000 messages"), "{out}");
    println!("{out}");
}

/// Senders racing to fill one rank's blocking receives, which wait in its
/// mailbox: in one process (two workers) and across processes, every message
/// comes in order, none lost (see the program). One rank per process, the
/// receiver meets each sender's first synchronous message right after the
/// sender's ring was offered: its answer must find the way back already open
/// (it did not, about one run in two, while rings were read before the ring
/// back was made).
#[test]
fn fan_in_to_blocking_receives_keeps_every_senders_order() {
    let prog = program("fan_in");
    for (procs, count) in [
        ("1", 5000),
        ("4", 5000),
        ("8", 20000),
        ("8", 20000),
        ("8", 20000),
    ] {
        let o = run_job(
            &[
                "-n",
                "8",
                "-p",
                procs,
                prog.to_str().unwrap(),
                &count.to_string(),
            ],
            Duration::from_secs(120),
        );
        let out = expect_success(&o, &format!("fan_in -p {procs}"));
        let all = format!("fan_in ok: {} messages from 7 ranks in order", 7 * count);
        assert!(out.contains(&all), "-p {procs}: {out}");
    }
}

/// The stress program between processes: over shared memory with one rank
/// per process pair, and over tcp (messages up to 256 KiB: eager, cross-memory
/// copies and data frames, every byte and the order per (source, tag) checked).
#[test]
fn stress_5000_messages_across_processes() {
    let prog = program("stress");
    for net in [
        &["-n", "16", "-p", "8"][..],
        &["-n", "8", "-p", "4", "--net", "tcp"],
    ] {
        let mut args = net.to_vec();
        args.extend([prog.to_str().unwrap(), "5000", "262144", "11"]);
        let o = run_job(&args, Duration::from_secs(120));
        let out = expect_success(&o, &format!("stress {net:?}"));
        assert!(out.contains("stress ok: 5000 messages"), "{net:?}: {out}");
    }
}

#[test]
fn blocked_ranks_leave_the_cpu_idle() {
    let prog = program("idle_wait");
    let o = run_job(
        &["-n", "64", "-c", "2", prog.to_str().unwrap(), "2"],
        Duration::from_secs(60),
    );
    let out = expect_success(&o, "idle job");
    let share: f64 = out
        .split_whitespace()
        .nth(3)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("unexpected output: {out}"));
    println!("{out}");
    assert!(
        share < 0.05,
        "blocked job used {:.1}% of a core",
        share * 100.0
    );
}
