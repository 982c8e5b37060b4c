//! C programs through the C ABI: built with mpcrs-cc (and with MPICH's mpicc),
//! run thread-based by mpcrs-run.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use mpcrs_tests::{
    build_c, c_source, c_suite_lines, expect_success, heat_checksum, profile_dir, run_command,
    run_job, run_openmpi, shared_bench, text,
};

fn run(bin: &Path, ranks: usize, args: &[&str]) -> std::process::Output {
    let n = ranks.to_string();
    let mut a = vec!["-n", &n, "-c", "2", bin.to_str().unwrap()];
    a.extend_from_slice(args);
    run_job(&a, Duration::from_secs(300))
}

#[test]
fn globals_and_statics_are_private_per_rank() {
    let bin = build_c(&c_source("globals.c"), "globals", None, &[]);
    let out = expect_success(&run(&bin, 16, &[]), "globals");
    assert_eq!(out.trim(), "globals private on 16 ranks: yes");
}

#[test]
fn basics_at_1_4_7_and_64_ranks() {
    let bin = build_c(&c_source("basics.c"), "basics", None, &[]);
    for n in [1, 4, 7, 64] {
        let out = expect_success(&run(&bin, n, &[]), &format!("basics at -n {n}"));
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            c_suite_lines("basics"),
            "at -n {n}"
        );
    }
}

#[test]
fn derived_datatypes_v_collectives_and_reduce_scatter() {
    let bin = build_c(&c_source("datatypes.c"), "datatypes", None, &[]);
    for n in [1, 4, 7, 64] {
        let out = expect_success(&run(&bin, n, &[]), &format!("datatypes at -n {n}"));
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            c_suite_lines("datatypes"),
            "at -n {n}"
        );
    }
}

#[test]
fn ready_buffered_persistent_matched_probe_cancel_and_test_families() {
    let bin = build_c(&c_source("p2p_more.c"), "p2p_more", None, &[]);
    for n in [1, 4, 7, 64] {
        let out = expect_success(&run(&bin, n, &[]), &format!("p2p_more at -n {n}"));
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            c_suite_lines("p2p_more"),
            "at -n {n}"
        );
    }
}

#[test]
fn groups_communicators_attributes_and_cartesian_topologies() {
    let bin = build_c(&c_source("comms.c"), "comms", None, &[]);
    for n in [1, 4, 7, 64] {
        let out = expect_success(&run(&bin, n, &[]), &format!("comms at -n {n}"));
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            c_suite_lines("comms"),
            "at -n {n}"
        );
    }
}

#[test]
fn nonblocking_collectives_overlap_and_keep_their_order() {
    let bin = build_c(&c_source("nbc.c"), "nbc", None, &[]);
    for n in [1, 2, 4, 7, 64] {
        let out = expect_success(&run(&bin, n, &[]), &format!("nbc at -n {n}"));
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            c_suite_lines("nbc"),
            "at -n {n}"
        );
    }
}

#[test]
fn info_conversions_error_handlers_and_invalid_handles() {
    let bin = build_c(&c_source("misc.c"), "misc", None, &[]);
    for n in [1, 4, 7, 64] {
        let out = expect_success(&run(&bin, n, &[]), &format!("misc at -n {n}"));
        assert_eq!(out.trim(), "misc ok");
    }
}

/// Even and odd ranks as the two groups of an intercommunicator: point-to-point,
/// every blocking collective both ways, dup/split/create/compare, merge; built
/// with mpcrs-cc and with MPICH's mpicc.
#[test]
fn intercommunicators_in_threads() {
    let ours = build_c(&c_source("intercomm.c"), "intercomm", None, &[]);
    let mpich = build_c(
        &c_source("intercomm.c"),
        "intercomm.mpich",
        Some("mpicc.mpich"),
        &[],
    );
    for (bin, sizes) in [(&ours, &[2, 3, 7, 64][..]), (&mpich, &[4][..])] {
        for &n in sizes {
            let out = expect_success(&run(bin, n, &[]), &format!("intercomm at -n {n}"));
            assert_eq!(
                out.lines().collect::<Vec<_>>(),
                c_suite_lines("intercomm"),
                "{} at -n {n}",
                bin.display()
            );
        }
    }
}

/// Non-blocking collectives among the rank's other collectives: blocking
/// collectives, dup and split issued while non-blocking ones on the same
/// communicator pend (a dup interleaved with a pending idup panicked, blocking
/// collectives overtook pending ones), ops, types and communicators freed right
/// after the start (invalid handle errors before), user ops on a strided type
/// (the function got packed data: wrong sums, heap corruption), v-collectives
/// on intercommunicators with groups of different sizes (arrays copied with
/// the local size: truncation, bad types) and threads of a rank starting them
/// (a panic: no worker for the helper).
#[test]
fn nonblocking_collectives_keep_issue_order_handles_and_layouts() {
    let bin = build_c(&c_source("nbc_order.c"), "nbc_order", None, &[]);
    for n in [1, 2, 5, 8] {
        let out = expect_success(&run(&bin, n, &[]), &format!("nbc_order at -n {n}"));
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            c_suite_lines("nbc_order"),
            "at -n {n}"
        );
    }
}

/// Predefined datatypes and reductions (tests/c/types_ops.c): every
/// operation MPI defines on long double, the complex types, booleans, bytes
/// and the pair types, the undefined pairs refused with MPI_ERR_OP; pair
/// sizes and extents, type names, C alignment of structures, external32,
/// datatype handles freed and reused, the large-count (_c) calls.
#[test]
fn predefined_types_reductions_names_alignment_and_external32() {
    let bin = build_c(&c_source("types_ops.c"), "types_ops", None, &[]);
    for n in [1, 2, 8, 13] {
        let out = expect_success(&run(&bin, n, &[]), &format!("types_ops at -n {n}"));
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            c_suite_lines("types_ops"),
            "at -n {n}"
        );
    }
}

/// MPI-4: the persistent collectives (started again and again, handles freed
/// after the init, inactive requests freed), MPI_Isendrecv(_replace) and
/// MPI_Comm_idup_with_info.
#[test]
fn persistent_collectives_isendrecv_and_idup_with_info() {
    let bin = build_c(&c_source("mpi4_coll.c"), "mpi4_coll", None, &[]);
    for n in [1, 2, 5, 8] {
        let out = expect_success(&run(&bin, n, &[]), &format!("mpi4_coll at -n {n}"));
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            c_suite_lines("mpi4_coll"),
            "at -n {n}"
        );
    }
}

/// MPI_Send_c/MPI_Recv_c of INT_MAX + 4097 bytes between two ranks of one
/// process (about 4 GiB of buffers).
#[test]
fn a_message_of_more_than_int_max_elements_in_threads() {
    let bin = build_c(&c_source("types_ops.c"), "types_ops", None, &[]);
    let out = expect_success(&run(&bin, 2, &["huge"]), "types_ops huge at -n 2");
    assert_eq!(
        out.lines().last(),
        Some("huge message ok"),
        "types_ops huge:\n{out}"
    );
}

/// MPI-4.0's large-count calls and MPI-4.1's additions (mpi41_surface.c):
/// counts that fit an int, counts beyond it carried by a type or refused
/// with MPI_ERR_COUNT, handles as ints, status fields, the
/// MPI_Request_get_status_* family, value-index pairs, error removal,
/// session error handlers, communicator buffers, persistent neighbourhood
/// collectives and the unsupported calls; 8 ranks as threads of 2 and of 4
/// processes.
#[test]
fn large_counts_and_mpi_4_1_calls_at_8_ranks_over_2_and_4_processes() {
    let bin = build_c(&c_source("mpi41_surface.c"), "mpi41_surface", None, &[]);
    for processes in ["2", "4"] {
        let o = run_job(
            &["-n", "8", "-p", processes, "-c", "2", bin.to_str().unwrap()],
            Duration::from_secs(300),
        );
        let out = expect_success(&o, &format!("mpi41_surface at -n 8 -p {processes}"));
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            c_suite_lines("mpi41_surface"),
            "-n 8 -p {processes}"
        );
    }
}

/// Alltoallv/Alltoallw with zero counts and MPI_IN_PLACE (NULL send arrays,
/// MPI_DATATYPE_NULL send type: a panic before), and a user op over a
/// 3-double type on vectors split among ranks (wrong answers before: chunks
/// started inside an element).
#[test]
fn collective_edge_cases_in_place_zero_counts_and_user_ops_on_long_vectors() {
    let bin = build_c(&c_source("coll_edges.c"), "coll_edges", None, &[]);
    for n in [1, 4, 11, 16] {
        let out = expect_success(&run(&bin, n, &[]), &format!("coll_edges at -n {n}"));
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            c_suite_lines("coll_edges"),
            "at -n {n}"
        );
    }
}

/// The empty status of null and inactive requests (MPI_PROC_NULL was
/// reported as the source), and a synchronous send freed before its receive
/// exists (MPI_Request_free waited for it: a send to itself hung).
#[test]
fn inactive_request_status_and_freed_synchronous_sends() {
    let bin = build_c(&c_source("request_edges.c"), "request_edges", None, &[]);
    for n in [1, 4, 7] {
        let out = expect_success(&run(&bin, n, &[]), &format!("request_edges at -n {n}"));
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            c_suite_lines("request_edges"),
            "at -n {n}"
        );
    }
}

/// The MPI-3.1 surface beyond the everyday calls (tests/c/surface.c).
#[test]
fn mpi_3_1_surface_at_1_4_and_7_ranks() {
    let bin = build_c(&c_source("surface.c"), "surface", None, &[]);
    for n in [1, 4, 7] {
        let out = expect_success(&run(&bin, n, &[]), &format!("surface at -n {n}"));
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            c_suite_lines("surface"),
            "surface at -n {n}"
        );
    }
}

/// Graph and distributed-graph topologies, neighbourhood collectives and
/// the shared-memory split (tests/c/topologies.c).
#[test]
fn topologies_and_neighbourhood_collectives_at_1_4_and_7_ranks() {
    let bin = build_c(&c_source("topologies.c"), "topologies", None, &[]);
    for n in [1, 4, 7] {
        let out = expect_success(&run(&bin, n, &[]), &format!("topologies at -n {n}"));
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            c_suite_lines("topologies"),
            "topologies at -n {n}"
        );
    }
}

/// Persistent buffered and ready sends, user error handlers, generalized
/// requests completed by other threads (tests/c/handlers.c).
#[test]
fn handlers_and_generalized_requests_at_1_4_and_7_ranks() {
    let bin = build_c(&c_source("handlers.c"), "handlers", None, &[]);
    for n in [1, 4, 7] {
        let out = expect_success(&run(&bin, n, &[]), &format!("handlers at -n {n}"));
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            c_suite_lines("handlers"),
            "handlers at -n {n}"
        );
    }
}

/// One-sided communication (tests/c/rma.c): fence, post/start/complete/wait,
/// locks, flushes, every operation and request variant, derived datatypes at
/// both ends, dynamic, allocated and shared windows, attributes and the RMA
/// error classes; built with mpcrs-cc and with MPICH's mpicc.
#[test]
fn one_sided_communication_in_threads() {
    let ours = build_c(&c_source("rma.c"), "rma", None, &[]);
    let mpich = build_c(&c_source("rma.c"), "rma.mpich", Some("mpicc.mpich"), &[]);
    for (bin, sizes) in [(&ours, &[1, 2, 7, 16, 64][..]), (&mpich, &[4][..])] {
        for &n in sizes {
            let out = expect_success(&run(bin, n, &[]), &format!("rma at -n {n}"));
            assert_eq!(
                out.lines().collect::<Vec<_>>(),
                c_suite_lines("rma"),
                "{} at -n {n}",
                bin.display()
            );
        }
    }
}

/// MPI-IO (tests/c/io.c): explicit offsets, views, collective, non-blocking
/// and split accesses, both file pointers, atomic mode, file error handlers;
/// built with mpcrs-cc and with MPICH's mpicc.
#[test]
fn parallel_io_in_threads() {
    let ours = build_c(&c_source("io.c"), "io", None, &[]);
    let mpich = build_c(&c_source("io.c"), "io.mpich", Some("mpicc.mpich"), &[]);
    for (bin, sizes) in [(&ours, &[1, 2, 7, 16][..]), (&mpich, &[4][..])] {
        for &n in sizes {
            let out = expect_success(&run(bin, n, &[]), &format!("io at -n {n}"));
            assert_eq!(
                out.lines().collect::<Vec<_>>(),
                c_suite_lines("io"),
                "{} at -n {n}",
                bin.display()
            );
        }
    }
}

/// Debian's parallel HDF5 for MPICH (libhdf5-mpich-dev, installed by
/// scripts/setup-system.sh).
const HDF5_MPICH_INCLUDE: &str = "/usr/include/hdf5/mpich";
const HDF5_MPICH_LIB: &str = "/usr/lib/x86_64-linux-gnu/hdf5/mpich";

/// A parallel HDF5 program (tests/c/hdf5_io.c) writes a dataset collectively
/// from 8 ranks and reads it back independently and collectively: its ranks
/// as threads of one process, and spread over 2 and 4 processes.
#[test]
fn parallel_hdf5_writes_and_reads_a_dataset_from_8_ranks() {
    assert!(
        Path::new(HDF5_MPICH_INCLUDE).join("hdf5.h").is_file(),
        "parallel HDF5 for MPICH is missing: scripts/setup-system.sh installs libhdf5-mpich-dev"
    );
    let bin = build_c(
        &c_source("hdf5_io.c"),
        "hdf5_io",
        None,
        &[
            &format!("-I{HDF5_MPICH_INCLUDE}"),
            &format!("-L{HDF5_MPICH_LIB}"),
            "-lhdf5",
        ],
    );
    let dir = std::env::temp_dir().join(format!("mpcrs-hdf5-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for processes in ["1", "2", "4"] {
        let file = dir.join(format!("p{processes}.h5"));
        let o = run_job(
            &[
                "-n",
                "8",
                "-p",
                processes,
                "-c",
                "2",
                bin.to_str().unwrap(),
                file.to_str().unwrap(),
            ],
            Duration::from_secs(300),
        );
        let out = expect_success(&o, &format!("hdf5_io at -n 8 -p {processes}"));
        assert_eq!(
            out.trim(),
            "hdf5 ok: 8 ranks, dataset 32x1000",
            "-n 8 -p {processes}"
        );
        assert!(file.is_file(), "{} was not written", file.display());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Wrong arguments to the new functions, and the families not built yet,
/// end the job under MPI_ERRORS_ARE_FATAL with the call, rank and class.
#[test]
fn surface_errors_are_fatal_and_named() {
    let bin = build_c(&c_source("surface_fatal.c"), "surface_fatal", None, &[]);
    for (case, n, message) in [
        (
            "win",
            4,
            "mpcrs: fatal error in MPI_Win_fence on rank 1: MPI_ERR_WIN: invalid window handle 0x20000000",
        ),
        (
            "spawn",
            1,
            "mpcrs: fatal error in MPI_Comm_spawn on rank 0: MPI_ERR_UNSUPPORTED_OPERATION: dynamic process management is not built yet",
        ),
        (
            "hindexed_block",
            4,
            "mpcrs: fatal error in MPI_Type_create_hindexed_block on rank 1: MPI_ERR_COUNT: negative count -2",
        ),
        (
            "reduce_local",
            7,
            "mpcrs: fatal error in MPI_Reduce_local on rank 1: MPI_ERR_OP: invalid op handle 0x12345",
        ),
        (
            "graph_neighbors",
            4,
            "mpcrs: fatal error in MPI_Graph_neighbors on rank 1: MPI_ERR_TOPOLOGY: the communicator has no graph topology",
        ),
        (
            "neighbor_alltoall",
            4,
            "mpcrs: fatal error in MPI_Neighbor_alltoall on rank 1: MPI_ERR_TOPOLOGY: the communicator has no topology",
        ),
        (
            "dist_graph",
            7,
            "mpcrs: fatal error in MPI_Dist_graph_create_adjacent on rank 1: MPI_ERR_ARG: negative degree (in -1, out 0)",
        ),
        (
            "errhandler",
            4,
            "mpcrs: fatal error in MPI_Comm_create_errhandler on rank 1: MPI_ERR_ARG: the error handler function is NULL",
        ),
        (
            "grequest",
            1,
            "mpcrs: fatal error in MPI_Grequest_complete on rank 0: MPI_ERR_REQUEST: invalid request handle 0x12345",
        ),
        (
            "bsend_init",
            4,
            "mpcrs: fatal error in MPI_Bsend_init on rank 1: MPI_ERR_COUNT: negative count -1",
        ),
        (
            "null_send",
            2,
            "mpcrs: fatal error in MPI_Send on rank 1: MPI_ERR_BUFFER: the buffer is NULL for 4 elements (16 bytes)",
        ),
        (
            "null_recv",
            2,
            "mpcrs: fatal error in MPI_Recv on rank 1: MPI_ERR_BUFFER: the buffer is NULL for 4 elements (16 bytes)",
        ),
    ] {
        let o = run(&bin, n, &[case]);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(mpcrs::FATAL_EXIT_CODE), "{case}: {err}");
        assert!(err.contains(message), "{case}: {err}");
    }
    // Across processes too (a NULL buffer used to end in a segfault there).
    let o = run_job(
        &["-n", "2", "-p", "2", bin.to_str().unwrap(), "null_send"],
        Duration::from_secs(60),
    );
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(mpcrs::FATAL_EXIT_CODE), "{err}");
    assert!(err.contains("MPI_Send on rank 1: MPI_ERR_BUFFER"), "{err}");
}

#[test]
fn calls_before_init_are_fatal_and_named() {
    let bin = build_c(&c_source("before_init.c"), "before_init", None, &[]);
    let o = run(&bin, 2, &[]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(mpcrs::FATAL_EXIT_CODE), "{err}");
    assert!(
        err.contains("fatal error in MPI_Comm_rank") && err.contains("called before MPI_Init"),
        "{err}"
    );
}

#[test]
fn cxx_programs_through_mpcrs_cxx() {
    let cxx = profile_dir().join("mpcrs-cxx");
    let bin = build_c(
        &c_source("cxx.cpp"),
        "cxx",
        Some(cxx.to_str().unwrap()),
        &[],
    );
    for n in [1, 8] {
        let out = expect_success(&run(&bin, n, &[]), &format!("c++ at -n {n}"));
        assert_eq!(out.trim(), format!("c++ ranks {n}: ok"));
    }
}

/// Builds `src` with MPICH's mpicc, runs it under mpcrs-run and under MPICH's
/// launcher at 4 ranks, and requires the same output.
fn same_output_as_mpich(src: &str, args: &[&str]) {
    let bin = build_c(
        &c_source(src),
        &format!("{src}-mpich"),
        Some("mpicc.mpich"),
        &[],
    );
    let ours = expect_success(
        &run(&bin, 4, args),
        &format!("MPICH-built {src} under mpcrs-run"),
    );
    let o = run_command(
        Command::new("mpirun.mpich")
            .args(["-launcher", "fork", "-n", "4"])
            .arg(&bin)
            .args(args),
        Duration::from_secs(120),
    );
    let theirs = expect_success(&o, &format!("{src} under MPICH"));
    assert_eq!(ours, theirs);
}

#[test]
fn binaries_built_by_mpich_run_unchanged_with_the_same_output() {
    same_output_as_mpich("basics.c", &[]);
    same_output_as_mpich("datatypes.c", &[]);
    // MPICH cannot take back a send nobody receives (its MPI_Wait never returns).
    same_output_as_mpich("p2p_more.c", &["--no-send-cancel"]);
    same_output_as_mpich("comms.c", &[]);
    same_output_as_mpich("nbc.c", &[]);
    same_output_as_mpich("handlers.c", &[]);
}

#[test]
fn fatal_errors_name_call_rank_and_class() {
    let bin = build_c(&c_source("fatal.c"), "fatal", None, &[]);
    let o = run(&bin, 4, &[]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(mpcrs::FATAL_EXIT_CODE), "{err}");
    assert!(
        err.contains("fatal error in MPI_Send on rank 1: MPI_ERR_RANK"),
        "{err}"
    );
}

#[test]
fn shared_heat_benchmark_matches_open_mpi_at_4_and_64_ranks() {
    let src = shared_bench("heat.c");
    let ours = build_c(&src, "heat", None, &["-lm"]);
    let theirs = build_c(&src, "heat-openmpi-c", Some("mpicc.openmpi"), &["-lm"]);
    for n in [4usize, 64] {
        let a = heat_checksum(&expect_success(
            &run(&ours, n, &["64", "40"]),
            "heat (mpcrs)",
        ));
        let o = run_openmpi(&theirs, n, &["64", "40"]);
        let b = heat_checksum(&expect_success(&o, "heat (Open MPI)"));
        assert_eq!(a, b, "heat checksum at -n {n}");
    }
}

#[test]
fn heat_with_mpix_checkpoint_reports_ignore_without_checkpointing() {
    let bin = build_c(
        &shared_bench("heat.c"),
        "heat-mpix",
        None,
        &["-DWITH_MPIX", "-lm"],
    );
    let out = expect_success(
        &run(&bin, 4, &["16", "30", "10"]),
        "heat with MPIX_Checkpoint",
    );
    assert!(
        out.contains("checkpoint state 2 after iteration 10"),
        "{out}"
    );
}

#[test]
fn compiler_wrapper_shows_its_command_lines() {
    let cc = profile_dir().join("mpcrs-cc");
    let o = run_command(
        Command::new(&cc).args(["-show", "x.c", "-o", "x"]),
        Duration::from_secs(10),
    );
    let show = expect_success(&o, "mpcrs-cc -show");
    assert!(
        show.contains("-I") && show.contains("-lmpi") && show.contains("x.c"),
        "{show}"
    );
    let o = run_command(
        Command::new(&cc).arg("-compile-info"),
        Duration::from_secs(10),
    );
    assert!(expect_success(&o, "-compile-info").contains("mpi-abi/include"));
    let o = run_command(Command::new(&cc).arg("-link-info"), Duration::from_secs(10));
    assert!(expect_success(&o, "-link-info").contains("-lmpi"));
}

#[test]
fn heat_with_mpix_checkpoint_writes_verified_epochs_under_checkpoint() {
    let bin = build_c(
        &shared_bench("heat.c"),
        "heat-mpix-ckpt",
        None,
        &["-DWITH_MPIX", "-lm"],
    );
    let dir = std::env::temp_dir().join(format!("mpcrs-heat-ckpt-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let plain = expect_success(
        &run(&bin, 4, &["16", "40", "10"]),
        "heat without checkpoints",
    );
    let o = run_job(
        &[
            "-n",
            "4",
            "-c",
            "2",
            "--checkpoint",
            dir.to_str().unwrap(),
            "--keep",
            "2",
            "-x",
            "HEAT_NOTE=kept",
            bin.to_str().unwrap(),
            "16",
            "40",
            "10",
        ],
        Duration::from_secs(300),
    );
    let out = expect_success(&o, "heat with --checkpoint");
    for it in [10, 20, 30] {
        assert!(
            out.contains(&format!("checkpoint after iteration {it}\n")),
            "{out}"
        );
    }
    // Checkpointing changes nothing in the result.
    assert_eq!(heat_checksum(&out), heat_checksum(&plain));
    let err = text(&o).1;
    for k in 1..=3 {
        assert!(
            err.contains(&format!("mpcrs: checkpoint epoch {k}: ")) && err.contains("MB/s"),
            "{err}"
        );
    }
    // --keep 2: epochs 2 and 3 remain, and epoch 1, whose image theirs
    // (incremental) apply to; latest is 3, and every image verifies.
    assert_eq!(
        std::fs::read_to_string(dir.join("latest")).unwrap(),
        "epoch-3\n"
    );
    assert!(dir.join("epoch-1").is_dir() && dir.join("epoch-2").is_dir());
    let manifest = mpcrs_settings::JobManifest::read(&dir.join("epoch-3/MANIFEST")).unwrap();
    assert_eq!((manifest.ranks, manifest.processes), (4, 1));
    assert!(manifest.env.contains(&("HEAT_NOTE".into(), "kept".into())));
    assert!(manifest.args[1].contains("heat-mpix-ckpt"), "{manifest:?}");
    let o = mpcrs_tests::mpcrs_ckpt(&["verify", dir.to_str().unwrap()]);
    assert!(expect_success(&o, "mpcrs-ckpt verify").contains("epoch-3/process-0.img: ok"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The ways a privatized program runs: (label, mpcrs-run options): 1, 2 and
/// 64 ranks as threads, and 2 ranks in processes of their own.
const PER_RANK_RUNS: &[(&str, &[&str])] = &[
    ("-n 1", &["-n", "1", "-c", "2"]),
    ("-n 2", &["-n", "2", "-c", "2"]),
    ("-n 64", &["-n", "64", "-c", "2"]),
    ("-n 2 --process-mode", &["-n", "2", "--process-mode"]),
];

/// Runs `bin ARGS` each way of PER_RANK_RUNS; checks that the output, its lines
/// sorted, is what `expect(n)` gives for n ranks (sorted too).
fn per_rank_output(
    bin: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    expect: impl Fn(usize) -> Vec<String>,
) {
    for (label, opts) in PER_RANK_RUNS {
        let n: usize = opts[1].parse().unwrap();
        let mut a: Vec<&str> = opts.to_vec();
        a.push(bin.to_str().unwrap());
        a.extend_from_slice(args);
        let mut cmd = Command::new(mpcrs_tests::mpcrs_run());
        cmd.args(&a);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let o = run_command(&mut cmd, Duration::from_secs(300));
        let what = format!("{} {label}", bin.display());
        let out = expect_success(&o, &what);
        let mut got: Vec<&str> = out.lines().collect();
        got.sort();
        let mut want = expect(n);
        want.sort();
        assert_eq!(got, want, "{what}");
    }
}

#[test]
fn cxx_cout_and_exceptions_per_rank() {
    let cxx = profile_dir().join("mpcrs-cxx");
    // Built by our wrapper and by MPICH's.
    for (name, compiler) in [
        ("cxx_streams", cxx.to_str().unwrap()),
        ("cxx_streams-mpich", "mpicxx.mpich"),
    ] {
        let bin = build_c(&c_source("cxx_streams.cpp"), name, Some(compiler), &[]);
        per_rank_output(&bin, &[], &[], |n| {
            (0..n)
                .flat_map(|r| {
                    [
                        format!("rank {r} of {n} says hello"),
                        format!("rank {r} caught boom-{r}"),
                        format!("rank {r} caught RankError {r}"),
                    ]
                })
                .collect()
        });
    }
}

#[test]
fn getopt_parses_each_ranks_argv() {
    let bin = build_c(&c_source("getopt.c"), "getopt", None, &[]);
    per_rank_output(&bin, &["-ab", "-x", "3", "file", "-nname"], &[], |n| {
        (0..n)
            .map(|r| format!("rank {r}: x=3 name=name a=1 b=1 rest=file optind=5"))
            .collect()
    });
}

/// The program's own library is copied per rank (its variables the rank's),
/// while the code of both is the original files', one for all ranks.
#[test]
fn programs_own_shared_library_is_private_per_rank() {
    let dir = profile_dir().join("c-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let lib = dir.join("libfoo.so");
    let tmp = dir.join(format!("libfoo.so.{}.tmp", std::process::id()));
    let o = run_command(
        Command::new("gcc")
            .args(["-shared", "-fPIC", "-O2", "-o"])
            .arg(&tmp)
            .arg(c_source("foo.c")),
        Duration::from_secs(60),
    );
    expect_success(&o, "gcc -shared foo.c");
    std::fs::rename(&tmp, &lib).unwrap();
    let d = dir.to_str().unwrap();
    let bin = build_c(
        &c_source("libfoo_user.c"),
        "libfoo_user",
        None,
        &[&format!("-L{d}"), "-lfoo", &format!("-Wl,-rpath,{d}")],
    );
    let expect = |n: usize| -> Vec<String> {
        (0..n)
            .map(|r| {
                format!(
                    "rank {r}: counter {} bump {}, code of main shared, of libfoo shared",
                    r + 1,
                    r + 2
                )
            })
            .collect()
    };
    per_rank_output(&bin, &[], &[], expect);
    for layout in [&["-n", "8", "-p", "2"][..], &["-n", "8", "-p", "4"]] {
        let args = [layout, &[bin.to_str().unwrap()]].concat();
        let out = expect_success(
            &run_job(&args, Duration::from_secs(120)),
            &format!("{args:?}"),
        );
        let mut got: Vec<&str> = out.lines().collect();
        got.sort();
        let mut want = expect(8);
        want.sort();
        assert_eq!(got, want, "{layout:?}");
    }
}

extern "C" {
    fn srand48(seed: std::os::raw::c_long);
    fn lrand48() -> std::os::raw::c_long;
}

#[test]
fn strtok_rand_drand48_environment_and_errno_per_rank() {
    let bin = build_c(&c_source("libc_state.c"), "libc_state", None, &[]);
    // What one process of its own draws with each rank's seeds.
    let draws = |r: usize| {
        // SAFETY: this test's thread alone uses libc's generators here.
        unsafe {
            libc::srand(100 + r as u32);
            let a = [libc::rand(), libc::rand(), libc::rand()];
            srand48(200 + r as std::os::raw::c_long);
            (a, [lrand48(), lrand48()])
        }
    };
    let expected: Vec<_> = (0..64).map(draws).collect();
    per_rank_output(&bin, &[], &[("MPCRS_INHERITED", "yes")], |n| {
        (0..n)
            .map(|r| {
                let (a, l) = expected[r];
                format!(
                    "rank {r}: tokens r{r} a{r} b{r} c{r} | rand {} {} {} | lrand48 {} {} | env rank-{r} yes | errno {}",
                    a[0], a[1], a[2], l[0], l[1], 100 + r
                )
            })
            .collect()
    });
}

#[test]
fn exit_from_a_rank_runs_its_atexit_handlers_and_keeps_lines_whole() {
    let bin = build_c(&c_source("exit_atexit.c"), "exit_atexit", None, &[]);
    per_rank_output(&bin, &[], &[], |n| {
        (0..n)
            .flat_map(|r| {
                [
                    format!("rank {r}: first half, second half"),
                    format!("rank {r}: leavingrank {r}: atexit handler"),
                ]
            })
            .collect()
    });
}

/// Lines tests/c/attributes.c prints when every check passed.
const ATTRIBUTES_LINES: [&str; 3] = [
    "failing callbacks ok",
    "freed keyvals ok",
    "finalize deletes: 4 2 0 105 103 101; MPI usable: yes",
];

/// Attribute callbacks that fail fail their call (dup, set, delete, free) and
/// leave the attribute; keyvals freed while in use keep their callbacks;
/// MPI_Finalize deletes MPI_COMM_SELF's then MPI_COMM_WORLD's attributes
/// first, last set first, while MPI still works.
#[test]
fn attribute_callbacks_freed_keyvals_and_deletion_at_finalize() {
    let bin = build_c(&c_source("attributes.c"), "attributes", None, &[]);
    for n in [1, 4, 8] {
        let out = expect_success(&run(&bin, n, &[]), &format!("attributes at -n {n}"));
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            ATTRIBUTES_LINES,
            "at -n {n}"
        );
    }
}

/// Lines tests/c/info.c prints when every check passed.
const INFO_LINES: [&str; 4] = [
    "key order: 0,2,3,4,5,6,7,8,9,10,11,1",
    "get_string ok",
    "communicator hints ok",
    "before init and after finalize ok",
];

/// Info keys in the order first set, MPI_Info_get_string, MPI_Info_create_env,
/// info calls before MPI_Init and after MPI_Finalize, and communicators that
/// keep only the hints they understand.
#[test]
fn info_order_get_string_create_env_and_communicator_hints() {
    let bin = build_c(&c_source("info.c"), "info", None, &[]);
    for n in [1, 4, 8] {
        let out = expect_success(&run(&bin, n, &["a", "b c"]), &format!("info at -n {n}"));
        assert_eq!(out.lines().collect::<Vec<_>>(), INFO_LINES, "at -n {n}");
    }
}

/// Lines tests/c/cartesian.c prints when every check passed.
const CARTESIAN_LINES: [&str; 10] = [
    "72: 9x8",
    "240: 16x15",
    "70416: 163x9x8x6",
    "712656: 101x14x9x8x7",
    "559020: 21x20x11x11x11",
    "100: 5x5x4",
    "64: 4x4x4",
    "24: 4x3x2",
    "7: 7x1x1",
    "zero-dimensional grids ok",
];

/// MPI_Dims_create's most balanced grids (the greedy ones were off), and
/// zero-dimensional Cartesian communicators: rank 0 alone, MPI_COMM_NULL
/// for the others.
#[test]
fn balanced_dims_and_zero_dimensional_cartesian_grids() {
    let bin = build_c(&c_source("cartesian.c"), "cartesian", None, &[]);
    for n in [1, 4, 8] {
        let out = expect_success(&run(&bin, n, &[]), &format!("cartesian at -n {n}"));
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            CARTESIAN_LINES,
            "at -n {n}"
        );
    }
}

/// The tool information interface with no variables (usable before MPI_Init),
/// MPIX_Delete_error_class/_code/_string, PMPI_Message_c2f/_f2c, and the
/// MPI_ERROR field of statuses, which calls completing one request keep
/// (tests/c/tool_errors.c).
#[test]
fn tool_interface_deleted_error_classes_and_message_conversions() {
    let bin = build_c(&c_source("tool_errors.c"), "tool_errors", None, &[]);
    for n in [1, 4, 8] {
        let out = expect_success(&run(&bin, n, &[]), &format!("tool_errors at -n {n}"));
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            [
                "tool interface ok",
                "error classes deleted ok",
                "message conversions and status error fields ok"
            ],
            "at -n {n}"
        );
    }
}

/// MPI-4 sessions (tests/c/sessions.c): process sets, groups from them,
/// communicators made from groups with string tags (intra and inter),
/// without MPI_Init, beside it and after MPI_Finalize.
#[test]
fn sessions_without_beside_and_after_mpi_init() {
    let bin = build_c(&c_source("sessions.c"), "sessions", None, &[]);
    for n in [1, 4, 8] {
        let out = expect_success(&run(&bin, n, &[]), &format!("sessions at -n {n}"));
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            [
                format!("without MPI_Init: {n} ranks ok"),
                format!("beside MPI_Init: {n} ranks ok"),
                format!("after MPI_Finalize: {n} ranks ok"),
            ],
            "at -n {n}"
        );
    }
}

/// A rank that returns from main without MPI_Finalize ends the job with a
/// line naming it, in threads and across processes (the others used to wait
/// for it for ever).
#[test]
fn a_rank_returning_without_finalize_ends_the_job_naming_it() {
    let bin = build_c(&c_source("no_finalize.c"), "no_finalize", None, &[]);
    for p in ["1", "2"] {
        let o = run_job(
            &["-n", "4", "-p", p, bin.to_str().unwrap()],
            Duration::from_secs(60),
        );
        let (_, err) = text(&o);
        assert_eq!(
            o.status.code(),
            Some(mpcrs::FATAL_EXIT_CODE),
            "-p {p}: {err}"
        );
        assert!(
            err.contains(
                "mpcrs: rank 1 returned from main without calling MPI_Finalize; ending the job"
            ),
            "-p {p}: {err}"
        );
    }
}
