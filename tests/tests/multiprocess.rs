//! MPI between the processes of a job: the semantics suites (Rust and C) with
//! several ranks per process and with one rank per process, under the default
//! network (shared memory, then the tcp ring) and under multirail_tcp; what
//! `--net-stats` shows of the rails and of on-demand links.

use std::path::{Path, PathBuf};
use std::time::Duration;

use mpcrs_tests::{
    build_c, c_source, c_suite_lines, expect_success, heat_checksum, net_stats_line, numbers,
    program, run_job, shared_bench, text,
};

const LIMIT: Duration = Duration::from_secs(300);

/// Layouts of every suite: ranks and processes.
const LAYOUTS: [(&str, &str); 4] = [("8", "2"), ("8", "4"), ("7", "3"), ("4", "4")];

fn run(layout: (&str, &str), net: &str, extra: &[&str], prog: &Path, args: &[&str]) -> String {
    let (n, p) = layout;
    let mut a = vec!["-n", n, "-p", p, "-c", "2", "--net", net];
    a.extend_from_slice(extra);
    a.push(prog.to_str().unwrap());
    a.extend_from_slice(args);
    expect_success(
        &run_job(&a, LIMIT),
        &format!("{} at -n {n} -p {p} --net {net}", prog.display()),
    )
}

fn rust_semantics(net: &str) {
    let prog = program("semantics");
    for layout in LAYOUTS {
        let out = run(layout, net, &[], &prog, &[]);
        for part in ["point-to-point", "collectives", "communicators"] {
            assert!(
                out.contains(&format!("ok {part} (ranks {}", layout.0)),
                "missing '{part}' at -n {} -p {} --net {net}:\n{out}",
                layout.0,
                layout.1
            );
        }
    }
}

#[test]
fn rust_semantics_across_processes_default_network() {
    rust_semantics("default");
}

#[test]
fn rust_semantics_across_processes_multirail_tcp() {
    rust_semantics("multirail_tcp");
}

/// Each C suite and the lines it prints when every check passed.
fn c_suites() -> Vec<(PathBuf, &'static [&'static str])> {
    [
        "basics",
        "datatypes",
        "p2p_more",
        "comms",
        "nbc",
        "misc",
        "intercomm",
        "coll_edges",
        "request_edges",
        "nbc_order",
        "mpi4_coll",
        "rma",
        "io",
    ]
    .into_iter()
    .map(|name| {
        let bin = build_c(&c_source(&format!("{name}.c")), name, None, &[]);
        (bin, c_suite_lines(name))
    })
    .collect()
}

fn c_semantics(net: &str) {
    for (bin, lines) in c_suites() {
        for layout in LAYOUTS {
            let out = run(layout, net, &[], &bin, &[]);
            assert_eq!(
                out.lines().collect::<Vec<_>>(),
                lines,
                "{} at -n {} -p {} --net {net}",
                bin.display(),
                layout.0,
                layout.1
            );
        }
    }
}

#[test]
fn c_semantics_across_processes_default_network() {
    c_semantics("default");
}

#[test]
fn c_semantics_across_processes_multirail_tcp() {
    c_semantics("multirail_tcp");
}

/// The MPI-3.1 surface (tests/c/surface.c) across processes.
#[test]
fn mpi_3_1_surface_across_processes() {
    let bin = build_c(&c_source("surface.c"), "surface", None, &[]);
    for layout in [("8", "2"), ("8", "4")] {
        let out = run(layout, "default", &[], &bin, &[]);
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            c_suite_lines("surface"),
            "surface at -n {} -p {}",
            layout.0,
            layout.1
        );
    }
}

/// Predefined datatypes and reductions (tests/c/types_ops.c) across
/// processes: long double, complex and pair types reduced and moved between
/// processes as within one.
#[test]
fn predefined_types_and_reductions_across_processes() {
    let bin = build_c(&c_source("types_ops.c"), "types_ops", None, &[]);
    for layout in [("8", "2"), ("8", "4")] {
        let out = run(layout, "default", &[], &bin, &[]);
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            c_suite_lines("types_ops"),
            "types_ops at -n {} -p {}",
            layout.0,
            layout.1
        );
    }
}

/// MPI_Send_c/MPI_Recv_c of INT_MAX + 4097 bytes from one process to another.
#[test]
fn a_message_of_more_than_int_max_elements_across_processes() {
    let bin = build_c(&c_source("types_ops.c"), "types_ops", None, &[]);
    let out = run(("2", "2"), "default", &[], &bin, &["huge"]);
    assert_eq!(
        out.lines().last(),
        Some("huge message ok"),
        "types_ops huge at -n 2 -p 2:\n{out}"
    );
}

/// Topologies, neighbourhood collectives and the shared-memory split
/// (tests/c/topologies.c) across processes: one node communicator of 8.
#[test]
fn topologies_across_processes() {
    let bin = build_c(&c_source("topologies.c"), "topologies", None, &[]);
    for layout in [("8", "2"), ("8", "4")] {
        let out = run(layout, "default", &[], &bin, &[]);
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            c_suite_lines("topologies"),
            "topologies at -n {} -p {}",
            layout.0,
            layout.1
        );
    }
}

/// Persistent buffered and ready sends, user error handlers and generalized
/// requests (tests/c/handlers.c) across processes.
#[test]
fn handlers_across_processes() {
    let bin = build_c(&c_source("handlers.c"), "handlers", None, &[]);
    for layout in [("8", "2"), ("8", "4")] {
        let out = run(layout, "default", &[], &bin, &[]);
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            c_suite_lines("handlers"),
            "handlers at -n {} -p {}",
            layout.0,
            layout.1
        );
    }
}

#[test]
fn process_mode_runs_one_rank_per_process() {
    let (bin, lines) = c_suites().swap_remove(0);
    let o = run_job(
        &[
            "-n",
            "4",
            "--process-mode",
            "--tag-output",
            bin.to_str().unwrap(),
        ],
        LIMIT,
    );
    let out = expect_success(&o, "basics --process-mode");
    // Rank 0 prints; the tag names it (Open MPI's form: job 1, rank 0).
    let got: Vec<&str> = out
        .lines()
        .map(|l| {
            l.strip_prefix("[1,0]<stdout>:")
                .unwrap_or_else(|| panic!("untagged line {l:?}"))
        })
        .collect();
    assert_eq!(got, lines);
    let o = run_job(&["-n", "2", "--process-mode", "-p", "2", "true"], LIMIT);
    assert_eq!(
        o.status.code(),
        Some(2),
        "--process-mode with -p is refused"
    );
}

#[test]
fn heat_checksum_is_the_same_in_one_process_and_across_processes() {
    let bin = build_c(&shared_bench("heat.c"), "heat", None, &["-lm"]);
    let one = expect_success(
        &run_job(
            &["-n", "8", "-c", "2", bin.to_str().unwrap(), "64", "40"],
            LIMIT,
        ),
        "heat in one process",
    );
    for layout in [("8", "2"), ("8", "8")] {
        let out = run(layout, "default", &[], &bin, &["64", "40"]);
        assert_eq!(heat_checksum(&out), heat_checksum(&one), "at {layout:?}");
    }
}

#[test]
fn multirail_tcp_carries_large_frames_on_tcp_large_and_small_ones_on_the_ring() {
    let prog = program("semantics");
    let o = run_job(
        &[
            "-n",
            "4",
            "-p",
            "2",
            "--net",
            "multirail_tcp",
            "--net-stats",
            prog.to_str().unwrap(),
        ],
        LIMIT,
    );
    expect_success(&o, "semantics with --net-stats");
    let err = String::from_utf8_lossy(&o.stderr);
    for p in 0..2 {
        // process, endpoints static, on demand, messages, bytes, smallest, largest
        let large = numbers(net_stats_line(&err, p, "tcp_large"));
        let ring = numbers(net_stats_line(&err, p, "tcp_mpi"));
        assert!(
            large[3] > 0 && ring[3] > 0,
            "both rails carry messages:\n{err}"
        );
        assert!(
            large[5] >= 32 * 1024,
            "tcp_large carried a frame under 32KB:\n{err}"
        );
        assert!(
            ring[6] < 32 * 1024,
            "tcp_mpi carried a frame of 32KB or more:\n{err}"
        );
        assert_eq!(large[1], 0, "tcp_large has no start-up endpoints:\n{err}");
        // No shared-memory rail: collectives go by messages.
        let node = numbers(net_stats_line(&err, p, "collectives"));
        assert_eq!(node[1], 0, "node area used without shm:\n{err}");
    }
}

/// Collectives among processes of one node meet in the node's shared area,
/// except in jobs that take checkpoints.
#[test]
fn collectives_use_the_node_area_unless_the_job_takes_checkpoints() {
    let prog = program("semantics");
    let dir = std::env::temp_dir().join(format!("mpcrs-node-area-ckpt-{}", std::process::id()));
    for checkpoints in [false, true] {
        let mut args = vec!["-n", "6", "-p", "3", "--net-stats"];
        let dir_arg = dir.to_str().unwrap();
        if checkpoints {
            args.extend(["--checkpoint", dir_arg]);
        }
        args.push(prog.to_str().unwrap());
        let o = run_job(&args, LIMIT);
        expect_success(&o, &format!("semantics, checkpoints {checkpoints}"));
        let err = String::from_utf8_lossy(&o.stderr);
        for p in 0..3 {
            let rounds = numbers(net_stats_line(&err, p, "collectives"))[1];
            if checkpoints {
                assert_eq!(rounds, 0, "node area in a job with checkpoints:\n{err}");
            } else {
                assert!(rounds > 10, "only {rounds} node-area rounds:\n{err}");
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs pair_talk between the ranks of processes `a` and `b` of 8 (one rank
/// per process) on network `net` with --net-stats; returns what it printed on
/// stderr.
fn pair_talk(a: u32, b: u32, net: &str) -> String {
    let prog = program("pair_talk");
    let (a, b) = (a.to_string(), b.to_string());
    let o = run_job(
        &[
            "-n",
            "8",
            "--process-mode",
            "--net",
            net,
            "--net-stats",
            prog.to_str().unwrap(),
            &a,
            &b,
        ],
        LIMIT,
    );
    let out = expect_success(&o, &format!("pair_talk {a} {b}"));
    assert_eq!(out.trim(), format!("ranks {a} and {b} exchanged 10 rounds"));
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn only_the_ring_at_start_and_one_on_demand_link_for_two_distant_talkers() {
    let err = pair_talk(0, 4, "tcp");
    for p in [0, 4] {
        let ring = numbers(net_stats_line(&err, p, "tcp_mpi"));
        assert_eq!(
            &ring[1..3],
            &[2, 1],
            "process {p}: 2 ring + 1 on-demand endpoint:\n{err}"
        );
        assert_eq!(
            ring[3], 20,
            "process {p} sent 10 messages and 10 answers:\n{err}"
        );
    }
    // The connect request went around the ring: 0-1-2-3-4 (or back), delivered
    // to whichever of the two did not send first.
    let hops = [0, 4].map(|p| numbers(net_stats_line(&err, p, "signaling"))[7]);
    assert!(
        hops.iter().any(|&h| h >= 2),
        "a connect request took more than one hop:\n{err}"
    );
    for p in [1, 2, 3, 5, 6, 7] {
        let ring = numbers(net_stats_line(&err, p, "tcp_mpi"));
        assert_eq!(
            &ring[1..4],
            &[2, 0, 0],
            "process {p} only has its ring:\n{err}"
        );
    }
}

/// Processes 0 and 7 of 8 are neighbours on the ring (it closes from the last
/// process to the first): under the default network their one on-demand
/// endpoint is the shared-memory one, asked for over their direct ring link
/// (one hop), and nobody forwards anything.
#[test]
fn the_first_and_last_processes_are_ring_neighbours() {
    let err = pair_talk(0, 7, "default");
    for p in [0, 7] {
        let shm = numbers(net_stats_line(&err, p, "shm_mpi"));
        assert_eq!(
            &shm[1..3],
            &[0, 1],
            "process {p}: one on-demand shm endpoint:\n{err}"
        );
        assert!(
            shm[3] >= 10,
            "process {p} sent its 10 messages over shm:\n{err}"
        );
        let ring = numbers(net_stats_line(&err, p, "tcp_mpi"));
        assert_eq!(
            &ring[1..4],
            &[2, 0, 0],
            "process {p}: its ring endpoints only, no data on them:\n{err}"
        );
        let signaling = numbers(net_stats_line(&err, p, "signaling"));
        assert!(
            signaling[5] >= 1,
            "process {p} got a connect request:\n{err}"
        );
        assert_eq!(
            signaling[7], 1,
            "process {p}: requests came in one hop:\n{err}"
        );
    }
    for p in 1..7 {
        let signaling = numbers(net_stats_line(&err, p, "signaling"));
        assert_eq!(signaling[4], 0, "process {p} forwarded a request:\n{err}");
    }
}

/// A program that is not position-independent cannot share a process with
/// other ranks (one copy of its image per process): under --process-mode it
/// runs directly, its MPI_Init making the program's thread its process's rank.
/// The six C suites built by MPICH's compiler with -no-pie (linked against
/// libmpich.so.12) pass so at -n 4 and -n 3, and one built by mpcrs-cc with
/// -no-pie too; several ranks per process, or checkpoints, are refused with the
/// reason before anything starts.
#[test]
fn programs_that_are_not_position_independent_run_one_rank_per_process() {
    for name in ["basics", "datatypes", "p2p_more", "comms", "nbc", "misc"] {
        let bin = build_c(
            &c_source(&format!("{name}.c")),
            &format!("{name}-no-pie"),
            Some("mpicc.mpich"),
            &["-no-pie"],
        );
        for n in ["4", "3"] {
            let out = expect_success(
                &run_job(&["-n", n, "--process-mode", bin.to_str().unwrap()], LIMIT),
                &format!("{name} (no PIE) at -n {n} --process-mode"),
            );
            assert_eq!(
                out.lines().collect::<Vec<_>>(),
                c_suite_lines(name),
                "{name} -n {n}"
            );
        }
    }
    let ours = build_c(
        &c_source("basics.c"),
        "basics-no-pie-ours",
        None,
        &["-no-pie"],
    );
    let elf = std::fs::read(&ours).unwrap();
    assert_eq!(
        elf[16], 2,
        "mpcrs-cc -no-pie builds a fixed-address executable (ET_EXEC)"
    );
    let out = expect_success(
        &run_job(
            &["-n", "4", "--process-mode", ours.to_str().unwrap()],
            LIMIT,
        ),
        "basics (mpcrs-cc -no-pie) at -n 4 --process-mode",
    );
    assert_eq!(out.lines().collect::<Vec<_>>(), c_suite_lines("basics"));
    for extra in [
        &["-p", "2"][..],
        &["-p", "4", "--checkpoint", "/tmp/mpcrs-no-pie-ckpt"][..],
    ] {
        let mut args = vec!["-n", "4"];
        args.extend_from_slice(extra);
        args.push(ours.to_str().unwrap());
        let o = run_job(&args, LIMIT);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("not a position-independent executable"),
            "{args:?}: {err}"
        );
    }
    assert!(!Path::new("/tmp/mpcrs-no-pie-ckpt").exists());
    // A call before MPI_Init, in a program whose MPI_Init makes its job.
    let early = build_c(
        &c_source("before_init.c"),
        "before_init-no-pie",
        Some("mpicc.mpich"),
        &["-no-pie"],
    );
    let o = run_job(
        &["-n", "2", "--process-mode", early.to_str().unwrap()],
        LIMIT,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(mpcrs::FATAL_EXIT_CODE), "{err}");
    assert!(
        err.contains("fatal error in MPI_Comm_rank on rank ")
            && err.contains("called before MPI_Init"),
        "{err}"
    );
}

/// Communicators made from MPI_COMM_WORLD, used at once beside it and freed,
/// 2,000 times: a member of one process could join, use and free the new
/// communicator before another member of its process had joined, dropping the
/// late member's mailbox with the messages already in it (the job hung in
/// MPI_Waitall). `split` orders by key = -rank; `interleave` puts the even
/// ranks first, so neighbours in the new communicator live in other processes.
#[test]
fn communicators_made_and_freed_in_a_loop_keep_every_message() {
    let bin = build_c(&c_source("comm_churn.c"), "comm_churn", None, &[]);
    for (n, p) in [("8", "1"), ("8", "2"), ("8", "4"), ("16", "4")] {
        for mode in ["dup", "split", "interleave"] {
            let out = expect_success(
                &run_job(
                    &["-n", n, "-p", p, bin.to_str().unwrap(), "2000", mode],
                    Duration::from_secs(60),
                ),
                &format!("comm_churn {mode} at -n {n} -p {p}"),
            );
            assert_eq!(out.trim(), format!("{mode} ok 2000"), "-n {n} -p {p}");
        }
    }
}

/// MPI_THREAD_MULTIPLE: 4 pthreads per rank send, receive and reduce at once
/// (2,000 rounds each), in one process, across processes and with several
/// ranks per process on one worker (-c 1). A thread acts for the rank that
/// started it (they were outside any rank where a process held several); a
/// rank's ULT joining its threads waits on the blocking pool, not holding its
/// worker; waiting threads drive the network themselves (they hung before).
/// The program's own thread-local variables (`__thread`) have their initial
/// values on a rank's thread and on each thread it starts, one copy per thread.
#[test]
fn thread_local_variables_of_the_program_start_initialised_on_every_thread() {
    let bin = build_c(
        &c_source("thread_locals.c"),
        "thread_locals",
        None,
        &["-lpthread"],
    );
    for args in [
        &["-n", "1"][..],
        &["-n", "8"][..],
        &["-n", "8", "-p", "2"][..],
        &["-n", "8", "-p", "4"][..],
        &["-n", "2", "--process-mode"][..],
    ] {
        let mut a = args.to_vec();
        a.push(bin.to_str().unwrap());
        let out = expect_success(&run_job(&a, LIMIT), &format!("thread_locals {args:?}"));
        assert_eq!(out.trim(), "thread locals errors 0", "{args:?}");
    }
    let big = build_c(
        &c_source("thread_locals.c"),
        "thread_locals_too_big",
        None,
        &["-lpthread", "-DTOO_BIG"],
    );
    let o = run_job(&["-n", "2", big.to_str().unwrap()], LIMIT);
    let (_, err) = text(&o);
    assert!(!o.status.success());
    assert!(
        err.contains("bytes of thread-local variables") && err.contains("--process-mode"),
        "{err}"
    );
    // One rank per process runs the program itself.
    for args in [
        &["-n", "2", "--process-mode"][..],
        &["-n", "4", "-p", "4"][..],
    ] {
        let mut a = args.to_vec();
        a.push(big.to_str().unwrap());
        let out = expect_success(&run_job(&a, LIMIT), &format!("too big {args:?}"));
        assert_eq!(out.trim(), "thread locals errors 0", "{args:?}");
    }
}

/// OpenMP's threads call MPI for their rank at every layout: each rank has its
/// own copy of libgomp (its thread pool and team state, threads started
/// through libmpi's pthread_create), at -n 64 too (the copies' static TLS).
/// Teams that only compute run at any layout.
#[test]
fn openmp_threads_call_mpi_for_their_rank() {
    let bin = build_c(
        &c_source("openmp_threads.c"),
        "openmp_threads",
        None,
        &["-fopenmp"],
    );
    for args in [
        &["-n", "1"][..],
        &["-n", "4"][..],
        &["-n", "64"][..],
        &["-n", "8", "-p", "2"][..],
        &["-n", "8", "-p", "4"][..],
        &["-n", "2", "--process-mode"][..],
    ] {
        let mut a = args.to_vec();
        a.push(bin.to_str().unwrap());
        let out = expect_success(&run_job(&a, LIMIT), &format!("openmp_threads {args:?}"));
        assert_eq!(out.trim(), "openmp threads errors 0", "{args:?}");
    }
    for args in [
        &["-n", "8"][..],
        &["-n", "8", "-p", "2"][..],
        &["-n", "8", "-p", "4"][..],
    ] {
        let mut a = args.to_vec();
        a.extend([bin.to_str().unwrap(), "funneled"]);
        let out = expect_success(&run_job(&a, LIMIT), &format!("openmp funneled {args:?}"));
        assert_eq!(out.trim(), "openmp funneled errors 0", "{args:?}");
    }
}

/// A thread libstdc++ starts (std::thread) acts for the rank where a process
/// holds one; with several it acts for none, and its MPI call ends the job
/// saying why instead of giving the call to some rank.
#[test]
fn a_std_thread_calls_mpi_for_its_rank_where_a_process_holds_one() {
    let cxx = mpcrs_tests::profile_dir().join("mpcrs-cxx");
    let bin = build_c(
        &c_source("cxx_std_thread.cpp"),
        "cxx_std_thread",
        Some(cxx.to_str().unwrap()),
        &[],
    );
    for args in [&["-n", "1"][..], &["-n", "4", "-p", "4"][..]] {
        let mut a = args.to_vec();
        a.push(bin.to_str().unwrap());
        let out = expect_success(&run_job(&a, LIMIT), &format!("cxx_std_thread {args:?}"));
        assert_eq!(out.trim(), "std::thread errors 0", "{args:?}");
    }
    for args in [&["-n", "4"][..], &["-n", "8", "-p", "2"][..]] {
        let mut a = args.to_vec();
        a.push(bin.to_str().unwrap());
        let o = run_job(&a, LIMIT);
        let (_, err) = text(&o);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(
            err.contains("called from a thread that acts for no rank")
                && err.contains("one rank per process"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn threads_of_a_rank_call_mpi_at_once_across_processes() {
    let bin = build_c(
        &c_source("threads_multiple.c"),
        "threads_multiple",
        None,
        &["-lpthread"],
    );
    for args in [
        &["-n", "1"][..],
        &["-n", "4", "-p", "4"][..],
        &["-n", "3", "--process-mode"][..],
        &["-n", "8"][..],
        &["-n", "4", "-c", "1"][..],
        &["-n", "8", "-p", "2"][..],
        &["-n", "8", "-p", "4"][..],
    ] {
        let mut a = args.to_vec();
        a.push(bin.to_str().unwrap());
        let out = expect_success(&run_job(&a, LIMIT), &format!("threads_multiple {args:?}"));
        assert_eq!(out.trim(), "thread multiple ok 0", "{args:?}");
    }
}

/// MPI_THREAD_MULTIPLE matched probes: 4 pthreads per receiving rank probe
/// (MPI_Mprobe, MPI_Improbe) and receive (MPI_Mrecv, MPI_Imrecv) their own
/// tag's messages, small and rendezvous, at once: each gets exactly its own
/// data, and the single-completion calls leave the status's MPI_ERROR as it
/// was (they set it to MPI_SUCCESS before).
#[test]
fn threads_of_a_rank_probe_and_receive_their_own_messages() {
    let bin = build_c(
        &c_source("threads_mprobe.c"),
        "threads_mprobe",
        None,
        &["-lpthread"],
    );
    for args in [
        &["-n", "2"][..],
        &["-n", "8"][..],
        &["-n", "2", "-p", "2"][..],
        &["-n", "8", "-p", "2"][..],
        &["-n", "8", "-p", "4"][..],
    ] {
        let mut a = args.to_vec();
        a.push(bin.to_str().unwrap());
        let out = expect_success(&run_job(&a, LIMIT), &format!("threads_mprobe {args:?}"));
        assert_eq!(out.trim(), "threads mprobe ok", "{args:?}");
    }
}

/// Attribute callbacks and the deletions at MPI_Finalize (tests/c/attributes.c)
/// with ranks in several processes.
#[test]
fn attributes_across_processes() {
    let bin = build_c(&c_source("attributes.c"), "attributes", None, &[]);
    for layout in [("8", "2"), ("8", "4")] {
        let out = run(layout, "default", &[], &bin, &[]);
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            [
                "failing callbacks ok",
                "freed keyvals ok",
                "finalize deletes: 4 2 0 105 103 101; MPI usable: yes",
            ],
            "attributes at -n {} -p {}",
            layout.0,
            layout.1
        );
    }
}

/// Info objects and communicator hints (tests/c/info.c) across processes.
#[test]
fn info_across_processes() {
    let bin = build_c(&c_source("info.c"), "info", None, &[]);
    for layout in [("8", "2"), ("8", "4")] {
        let out = run(layout, "default", &[], &bin, &["a"]);
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            [
                "key order: 0,2,3,4,5,6,7,8,9,10,11,1",
                "get_string ok",
                "communicator hints ok",
                "before init and after finalize ok",
            ],
            "info at -n {} -p {}",
            layout.0,
            layout.1
        );
    }
}

/// Zero-dimensional Cartesian grids and MPI_Dims_create (tests/c/cartesian.c)
/// across processes.
#[test]
fn cartesian_grids_across_processes() {
    let bin = build_c(&c_source("cartesian.c"), "cartesian", None, &[]);
    for layout in [("8", "2"), ("8", "4")] {
        let out = run(layout, "default", &[], &bin, &[]);
        let lines = out.lines().collect::<Vec<_>>();
        assert_eq!(
            lines.last(),
            Some(&"zero-dimensional grids ok"),
            "cartesian at -n {} -p {}:\n{out}",
            layout.0,
            layout.1
        );
        assert_eq!(lines.len(), 10, "{out}");
    }
}

/// MPI-4 sessions and communicators made from groups (tests/c/sessions.c)
/// with the ranks in several processes.
#[test]
fn sessions_across_processes() {
    let bin = build_c(&c_source("sessions.c"), "sessions", None, &[]);
    for layout in [("8", "2"), ("8", "4")] {
        let out = run(layout, "default", &[], &bin, &[]);
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            [
                "without MPI_Init: 8 ranks ok",
                "beside MPI_Init: 8 ranks ok",
                "after MPI_Finalize: 8 ranks ok",
            ],
            "sessions at -n {} -p {}",
            layout.0,
            layout.1
        );
    }
}

/// The storage levels' transport (`Communicator::process_transport`) between
/// the processes of hybrid jobs, and in a job of one process.
#[test]
fn the_levels_transport_carries_messages_between_processes() {
    let prog = program("transport");
    for (n, p) in [("8", "2"), ("8", "4"), ("7", "3"), ("4", "1")] {
        let o = run_job(
            &["-n", n, "-p", p, prog.to_str().unwrap()],
            Duration::from_secs(120),
        );
        let out = expect_success(&o, &format!("transport at -n {n} -p {p}"));
        for q in 0..p.parse::<u32>().unwrap() {
            assert!(
                out.contains(&format!("process {q}: transport ok ({p} processes)")),
                "-n {n} -p {p}: {out}"
            );
        }
    }
}

/// Processes that wait in a collective for a late one, on a machine whose
/// CPUs they share (4 processes, 2 CPUs), sleep on their bells: they leave
/// the CPUs to the late one. Polling and yielding in between, each used
/// 10-12% of a CPU for as long as the wait lasted.
#[test]
fn processes_waiting_for_a_late_one_leave_it_the_cpus() {
    let bin = build_c(&c_source("late_root.c"), "late_root", None, &[]);
    let late = 2.0;
    let out = expect_success(
        &run_job(
            &[
                "-n",
                "4",
                "-p",
                "4",
                bin.to_str().unwrap(),
                &late.to_string(),
            ],
            LIMIT,
        ),
        "late_root",
    );
    let waits: Vec<(f64, f64)> = out
        .lines()
        .filter(|l| l.starts_with("rank "))
        .map(|l| {
            let n: Vec<f64> = l
                .split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect();
            assert_eq!(n[3], 42.0, "a rank got the wrong value: {l}");
            (n[1], n[2])
        })
        .collect();
    assert_eq!(waits.len(), 3, "one line per waiting rank:\n{out}");
    for (waited, cpu) in waits {
        assert!(
            waited >= late * 0.9,
            "a rank did not wait for the root:\n{out}"
        );
        assert!(
            cpu < 0.06 * waited,
            "a waiting process used {:.1}% of a CPU:\n{out}",
            100.0 * cpu / waited
        );
    }
}
