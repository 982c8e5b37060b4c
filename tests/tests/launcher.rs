//! mpcrs-run and job-level behaviour: exit statuses, fatal errors, failed ranks,
//! bad command lines, and the examples.

use std::process::Command;
use std::time::Duration;

use mpcrs_tests::{
    build_c, c_source, example, expect_success, mpcrs_run, process_report, profile_dir, program,
    run_command, run_job, run_with_input, text, BackgroundJob,
};

fn errors(scenario: &str) -> (i32, String, String) {
    let prog = program("errors");
    let o = run_job(
        &["-n", "4", prog.to_str().unwrap(), scenario],
        Duration::from_secs(60),
    );
    let (out, err) = text(&o);
    (o.status.code().unwrap_or(-1), out, err)
}

/// mpcrs-run ARGS is refused before anything starts: exit status 2, and
/// stderr says `says`.
fn assert_refused(args: &[&str], says: &str) {
    let o = run_job(args, Duration::from_secs(10));
    let err = text(&o).1;
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(says), "{args:?}: {err}");
}

#[test]
fn fatal_error_names_call_rank_and_class() {
    let (code, _, err) = errors("fatal-rank");
    assert_eq!(code, mpcrs::FATAL_EXIT_CODE, "{err}");
    assert!(
        err.contains("fatal error in MPI_Send on rank 0: MPI_ERR_RANK"),
        "stderr: {err}"
    );
    let (code, _, err) = errors("fatal-root");
    assert_eq!(code, mpcrs::FATAL_EXIT_CODE);
    assert!(
        err.contains("MPI_Bcast") && err.contains("MPI_ERR_ROOT"),
        "stderr: {err}"
    );
}

#[test]
fn errors_return_the_standard_classes() {
    let (code, out, err) = errors("returned");
    assert_eq!(code, 0, "stderr: {err}");
    assert!(out.contains("returned ok"));
}

#[test]
fn a_panicking_rank_ends_the_job() {
    let (code, _, err) = errors("panic");
    assert_eq!(code, 101, "stderr: {err}");
    assert!(
        err.contains("rank 1 panicked") && err.contains("deliberate failure"),
        "{err}"
    );
}

#[test]
fn a_failing_rank_ends_the_job_with_its_status() {
    let (code, _, err) = errors("exit-status");
    assert_eq!(code, 3, "stderr: {err}");
    assert!(err.contains("rank 2 exited with status 3"), "{err}");
}

/// A rank's status of 256 is 0 to the kernel: the process must still fail, so
/// that the launcher ends the job instead of waiting (with -p 2) for the other
/// process, whose rank waits for the failed one's message.
#[test]
fn a_rank_status_that_is_zero_modulo_256_still_fails_the_job() {
    let prog = program("errors");
    for args in [&["-n", "2"][..], &["-n", "2", "-p", "2"][..]] {
        let mut a = args.to_vec();
        a.extend([prog.to_str().unwrap(), "exit-status-256"]);
        let o = run_job(&a, Duration::from_secs(30));
        let err = text(&o).1;
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("rank 1 exited with status 256"), "{err}");
    }
}

#[test]
fn bad_command_lines_are_refused_clearly() {
    let o = run_job(&["-n", "0", "true"], Duration::from_secs(10));
    assert!(!o.status.success());
    assert!(text(&o).1.contains("-n"), "{}", text(&o).1);
    let o = run_job(
        &["-n", "2", "/nonexistent/program"],
        Duration::from_secs(10),
    );
    assert_eq!(o.status.code(), Some(127));
    assert!(text(&o).1.contains("cannot execute /nonexistent/program"));
    let o = run_job(&["-n", "2"], Duration::from_secs(10));
    assert!(!o.status.success());
    assert_refused(
        &["--epoch", "3", "-n", "1", "true"],
        "--epoch K chooses the epoch of --restart DIR",
    );
}

#[test]
fn a_program_killed_by_a_signal_is_reported() {
    // Processes of two ranks each (-p given: a program that is no MPI
    // program otherwise runs as one process per rank).
    let o = run_command(
        Command::new(mpcrs_run()).args(["-n", "4", "-p", "2", "sh", "-c", "kill -SEGV $$"]),
        Duration::from_secs(10),
    );
    assert_eq!(o.status.code(), Some(128 + 11));
    let err = text(&o).1;
    assert!(
        (err.contains("ranks 0-1") || err.contains("ranks 2-3")) && err.contains("signal 11"),
        "{err}"
    );
}

/// A Rust program's ranks write through one stdout per process: its lines
/// carry the process's ranks.
#[test]
fn tag_output_labels_a_rust_program_s_lines_with_its_process_s_ranks() {
    let o = run_job(
        &[
            "-n",
            "3",
            "--tag-output",
            example("hello").to_str().unwrap(),
        ],
        Duration::from_secs(30),
    );
    let out = expect_success(&o, "hello --tag-output");
    assert!(
        out.lines().count() == 3
            && out
                .lines()
                .all(|l| l.starts_with("[1,0-2]<stdout>:hello from rank")),
        "{out}"
    );
}

/// The lines tests/c/output_lines.c writes, as `label(rank, stream)`
/// labels them: (stdout lines, stderr lines) of every rank of `ranks`.
fn output_lines(ranks: usize, label: impl Fn(usize, &str) -> String) -> (Vec<String>, Vec<String>) {
    let mut out = Vec::new();
    let mut err = Vec::new();
    for r in 0..ranks {
        let o = label(r, "stdout");
        out.push(format!("{o}first line of rank {r}"));
        out.push(format!("{o}second line of rank {r}"));
        out.push(format!("{o}unfinished line of rank {r}"));
        err.push(format!("{}error line of rank {r}", label(r, "stderr")));
    }
    out.sort();
    (out, err)
}

/// Runs tests/c/output_lines.c with 4 ranks laid out as `layout` says, with
/// `options`, and checks that each line carries the label of the rank that
/// wrote it, as `label(rank, stream)` makes it.
fn assert_lines_labelled(layout: &[&str], options: &[&str], label: impl Fn(usize, &str) -> String) {
    let bin = build_c(&c_source("output_lines.c"), "output_lines", None, &[]);
    let mut args = layout.to_vec();
    args.extend(options);
    args.push(bin.to_str().unwrap());
    let o = run_job(&args, Duration::from_secs(60));
    let out = expect_success(&o, &args.join(" "));
    let err = text(&o).1;
    let (want_out, want_err) = output_lines(4, label);
    let mut got: Vec<String> = out.lines().map(str::to_string).collect();
    got.sort();
    assert_eq!(got, want_out, "{args:?}\nstdout:\n{out}\nstderr:\n{err}");
    for line in want_err {
        assert!(
            err.lines().any(|l| l == line),
            "{args:?}: no {line:?} in\n{err}"
        );
    }
}

/// The layouts of 4 ranks: threads of one process, two processes of two
/// ranks, a process per rank.
const LAYOUTS: [&[&str]; 3] = [
    &["-n", "4"],
    &["-n", "4", "-p", "2"],
    &["-n", "4", "--process-mode"],
];

/// Open MPI's `--tag-output`: every line of stdout and stderr labelled with
/// the rank that wrote it, whether ranks share a process or not.
#[test]
fn tag_output_labels_each_line_with_the_rank_that_wrote_it() {
    for layout in LAYOUTS {
        for spelling in ["--tag-output", "-tag-output"] {
            assert_lines_labelled(layout, &[spelling], |r, stream| {
                format!("[1,{r}]<{stream}>:")
            });
        }
    }
}

/// MPICH's `-prepend-rank` (`-l`): `[R] ` before every line.
#[test]
fn prepend_rank_labels_each_line_with_its_rank() {
    for layout in LAYOUTS {
        for spelling in ["-l", "-prepend-rank", "--prepend-rank"] {
            assert_lines_labelled(layout, &[spelling], |r, _| format!("[{r}] "));
        }
    }
}

/// Open MPI's `--output-filename DIR`: each rank's stdout and stderr in
/// DIR/1/rank.R/, nothing on mpcrs-run's; a directory that cannot be made
/// is refused before anything starts.
#[test]
fn output_filename_puts_each_rank_s_output_in_files_of_its_own() {
    let bin = build_c(&c_source("output_lines.c"), "output_lines", None, &[]);
    let bin = bin.to_str().unwrap();
    let dir = std::env::temp_dir().join(format!("mpcrs-output-filename-{}", std::process::id()));
    let dir_text = dir.to_str().unwrap();
    for (layout, spelling) in
        LAYOUTS
            .into_iter()
            .zip(["--output-filename", "-output-filename", "--output-filename"])
    {
        let _ = std::fs::remove_dir_all(&dir);
        let mut args = layout.to_vec();
        args.extend([spelling, dir_text, bin]);
        let o = run_job(&args, Duration::from_secs(60));
        let out = expect_success(&o, &args.join(" "));
        let err = text(&o).1;
        assert!(
            !out.contains("line of rank") && !err.contains("line of rank"),
            "{args:?}\nstdout:\n{out}\nstderr:\n{err}"
        );
        for r in 0..4 {
            let read = |stream: &str| {
                let path = dir.join(format!("1/rank.{r}/{stream}"));
                std::fs::read_to_string(&path)
                    .unwrap_or_else(|e| panic!("{args:?}: {}: {e}", path.display()))
            };
            assert_eq!(
                read("stdout"),
                format!(
                    "first line of rank {r}\nsecond line of rank {r}\nunfinished line of rank {r}"
                ),
                "{args:?}"
            );
            assert_eq!(
                read("stderr"),
                format!("error line of rank {r}\n"),
                "{args:?}"
            );
        }
    }
    // Below a regular file no directory can be made.
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::write(&dir, "a file").unwrap();
    let below = format!("{dir_text}/out");
    assert_refused(
        &["-n", "2", "--output-filename", &below, bin],
        &format!("--output-filename {below}: cannot create {below}/1"),
    );
    std::fs::remove_file(&dir).unwrap();
}

/// What each rank finds in its environment about its place, under Open
/// MPI's and MPICH's names: in threads of one process (its private
/// environment), in processes of two ranks, and in a process per rank.
#[test]
fn rank_variables_tell_each_rank_its_place_as_mpirun_and_mpiexec_do() {
    let bin = build_c(&c_source("rank_env.c"), "rank_env", None, &[]);
    for layout in LAYOUTS {
        let mut args = layout.to_vec();
        args.push(bin.to_str().unwrap());
        let out = expect_success(&run_job(&args, Duration::from_secs(60)), &args.join(" "));
        for r in 0..4 {
            let want = format!(
                "rank {r} of 4: PMI_RANK={r} PMI_SIZE=4 OMPI_COMM_WORLD_RANK={r} \
                 OMPI_COMM_WORLD_SIZE=4 OMPI_COMM_WORLD_LOCAL_RANK={r} \
                 OMPI_COMM_WORLD_LOCAL_SIZE=4 MPI_LOCALRANKID={r} MPI_LOCALNRANKS=4"
            );
            assert!(
                out.lines().any(|l| l == want),
                "{args:?}: no {want:?} in\n{out}"
            );
        }
    }
    // Uneven blocks: process 1 holds rank 2 alone, yet its PMI-2 identity
    // stays process 1's (it joins the job as such).
    let out = expect_success(
        &run_job(
            &["-n", "3", "-p", "2", bin.to_str().unwrap()],
            Duration::from_secs(60),
        ),
        "rank_env at -n 3 -p 2",
    );
    for r in 0..3 {
        let want = format!("rank {r} of 3: PMI_RANK={r} PMI_SIZE=3 OMPI_COMM_WORLD_RANK={r} ");
        assert!(
            out.lines().any(|l| l.starts_with(&want)),
            "no {want:?} in\n{out}"
        );
    }
    // A program that is no MPI program: a process per rank.
    let o = run_job(
        &[
            "-n",
            "3",
            "sh",
            "-c",
            "echo $OMPI_COMM_WORLD_RANK/$OMPI_COMM_WORLD_SIZE $MPI_LOCALRANKID/$MPI_LOCALNRANKS",
        ],
        Duration::from_secs(30),
    );
    let out = expect_success(&o, "sh -c echo");
    let mut lines: Vec<&str> = out.lines().collect();
    lines.sort();
    assert_eq!(lines, ["0/3 0/3", "1/3 1/3", "2/3 2/3"], "{out}");
}

/// A rank that writes through a null pointer is named, with the function
/// of the program it faulted in (from the program's own symbol table: it is
/// not linked with -rdynamic), whether ranks share a process or not.
#[test]
fn a_segfault_names_the_rank_and_the_function_it_happened_in() {
    let bin = build_c(&c_source("crash_here.c"), "crash_here", None, &[]);
    let bin = bin.to_str().unwrap();
    for procs in ["1", "2"] {
        let o = run_job(&["-n", "4", "-p", procs, bin], Duration::from_secs(60));
        let err = text(&o).1;
        assert_eq!(o.status.code(), Some(128 + 11), "-p {procs}: {err}");
        let line = err
            .lines()
            .find(|l| {
                l.starts_with(
                    "mpcrs: rank 2 died of SIGSEGV (segmentation fault at address 0x0) at 0x",
                )
            })
            .unwrap_or_else(|| panic!("-p {procs}: no report of rank 2 in\n{err}"));
        assert!(
            line.contains(" in crash_here+0x") && line.ends_with(&format!("({bin})")),
            "-p {procs}: {line}"
        );
    }
}

#[test]
fn interrupting_the_launcher_ends_the_job_and_its_children() {
    // mpcrs-run runs a shell that starts a long sleep; SIGTERM to mpcrs-run must end both.
    let marker = std::env::temp_dir().join(format!("mpcrs-term-{}", std::process::id()));
    let script = format!("sleep 60 & echo $! > {}; wait", marker.display());
    let mut child = Command::new(mpcrs_run())
        .args(["-n", "2", "sh", "-c", &script])
        .spawn()
        .unwrap();
    // The shell makes the file before it writes the pid: wait for a number.
    let t0 = std::time::Instant::now();
    let read = || {
        std::fs::read_to_string(&marker)
            .ok()
            .and_then(|s| s.trim().parse::<i32>().ok())
    };
    while read().is_none() && t0.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let sleeper = read().expect("the job's shell wrote its sleeper's pid");
    let _ = std::fs::remove_file(&marker);
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(128 + libc::SIGTERM));
    std::thread::sleep(Duration::from_millis(100));
    let state = std::fs::read_to_string(format!("/proc/{sleeper}/stat")).unwrap_or_default();
    let running = state
        .rsplit_once(')')
        .is_some_and(|(_, r)| !r.trim_start().starts_with('Z'));
    assert!(!running, "the job's grandchild {sleeper} survived");
}

#[test]
fn network_options_are_checked_before_anything_starts() {
    let bad = std::env::temp_dir().join(format!("mpcrs-bad-rails-{}.xml", std::process::id()));
    std::fs::write(&bad, "<mpcrs>\n  <networks>\n    <configs><config><name>x</name><driver><carrier/></driver></config></configs>\n  </networks>\n</mpcrs>\n").unwrap();
    let o = run_job(
        &["--config", bad.to_str().unwrap(), "-n", "2", "true"],
        Duration::from_secs(10),
    );
    let _ = std::fs::remove_file(&bad);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o).1;
    assert!(
        err.contains(&format!("{}:3:", bad.display())) && err.contains("unknown driver <carrier>"),
        "{err}"
    );
    let o = run_job(&["--net", "smoke_signals", "true"], Duration::from_secs(10));
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o).1;
    assert!(
        err.contains("unknown network option \"smoke_signals\"") && err.contains("multirail_tcp"),
        "{err}"
    );
    let o = run_job(
        &["--net", "multirail_tcp", "sh", "-c", "echo $MPCRS_NET"],
        Duration::from_secs(10),
    );
    assert_eq!(
        expect_success(&o, "--net multirail_tcp").trim(),
        "multirail_tcp"
    );
}

/// What users of Open MPI's mpirun and MPICH's mpiexec type works as they
/// expect (see mpcrs_launch::spellings).
#[test]
fn mpirun_and_mpiexec_spellings_are_understood() {
    let hello = example("hello");
    let hello = hello.to_str().unwrap();
    let hosts = std::env::temp_dir().join(format!("mpcrs-machinefile-{}", std::process::id()));
    std::fs::write(&hosts, "localhost slots=2\n").unwrap();
    let hosts = hosts.to_str().unwrap();
    for line in [
        vec!["-np", "2", "--oversubscribe", hello],
        vec!["-np", "2", "-host", "localhost:2", hello],
        vec!["-np", "2", "-H", "localhost:2", hello],
        vec!["-np", "2", "-machinefile", hosts, hello],
        vec!["-np", "2", "-hostfile", hosts, hello],
    ] {
        let out = expect_success(&run_job(&line, Duration::from_secs(30)), &line.join(" "));
        for r in 0..2 {
            assert!(
                out.contains(&format!("hello from rank {r} of 2")),
                "{line:?}: {out}"
            );
        }
    }
    let _ = std::fs::remove_file(hosts);
    // MPICH's -genv VAR VALUE.
    let o = run_job(
        &[
            "-np",
            "1",
            "-genv",
            "MPCRS_TEST_G",
            "five",
            "sh",
            "-c",
            "echo \"$MPCRS_TEST_G\"",
        ],
        Duration::from_secs(10),
    );
    assert_eq!(expect_success(&o, "-genv").trim(), "five");
    // The program's own arguments are its own.
    let o = run_job(
        &["-n", "1", "sh", "-c", "echo \"$0 $1\"", "-np", "-genv"],
        Duration::from_secs(10),
    );
    assert_eq!(expect_success(&o, "program arguments").trim(), "-np -genv");
}

/// `--bind-to` and `--report-bindings`, as Open MPI's mpirun: each process
/// says where its workers may run, as the kernel holds it.
#[test]
fn workers_are_bound_as_asked_and_reported() {
    let hello = example("hello");
    let hello = hello.to_str().unwrap();
    let all = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim()
        .to_string();
    let cpus_of = |extra: &[&str]| -> Vec<String> {
        let mut args = vec!["-n", "4", "-p", "2", "--report-bindings"];
        args.extend_from_slice(extra);
        args.push(hello);
        let o = run_job(&args, Duration::from_secs(30));
        expect_success(&o, &args.join(" "));
        let err = text(&o).1;
        let mut lines: Vec<String> = (0..2)
            .map(|p| {
                let prefix = format!(
                    "mpcrs: bindings: process {p} (ranks {}-{}) on ",
                    2 * p,
                    2 * p + 1
                );
                let line = err
                    .lines()
                    .find(|l| l.starts_with(&prefix))
                    .unwrap_or_else(|| panic!("no {prefix:?} in:\n{err}"));
                line.rsplit_once("worker 0 on CPUs ")
                    .unwrap_or_else(|| panic!("{line}"))
                    .1
                    .to_string()
            })
            .collect();
        lines.dedup();
        lines
    };
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    // By default each process has its share: a CPU of its own.
    let default = cpus_of(&[]);
    if cpus >= 2 {
        assert_eq!(default.len(), 2, "{default:?}");
        assert!(default.iter().all(|c| *c != all), "{default:?} vs {all}");
    }
    // None: every worker may run anywhere the launcher could.
    assert_eq!(cpus_of(&["--bind-to", "none"]), vec![all.clone()]);
    assert_eq!(cpus_of(&["-bind-to", "none"]), vec![all]);
    assert_refused(&["--bind-to", "numa", "true"], "--bind-to");
}

/// `--wdir DIR` (MPICH's `-wdir`): every rank starts in DIR, in threads and
/// across processes; a program named by a relative path is still found
/// from where mpcrs-run was started.
#[test]
fn ranks_start_in_the_directory_wdir_names() {
    let bin = build_c(&c_source("cwd.c"), "cwd", None, &[]);
    let here = bin.parent().unwrap();
    let wdir = std::env::temp_dir().join(format!("mpcrs-wdir-{}", std::process::id()));
    std::fs::create_dir_all(&wdir).unwrap();
    let wdir = wdir.canonicalize().unwrap();
    let w = wdir.to_str().unwrap();
    for (flag, layout) in [
        ("--wdir", &["-n", "2"][..]),
        ("-wdir", &["-n", "2", "-p", "2"]),
    ] {
        let mut args = vec![flag, w];
        args.extend_from_slice(layout);
        args.push("./cwd");
        let o = run_command(
            Command::new(mpcrs_run()).current_dir(here).args(&args),
            Duration::from_secs(30),
        );
        let out = expect_success(&o, &args.join(" "));
        for r in 0..2 {
            assert!(
                out.contains(&format!("rank {r} in {w}\n")),
                "{args:?}: {out}"
            );
        }
    }
    assert_refused(
        &["--wdir", "/nonexistent-mpcrs", "true"],
        "--wdir /nonexistent-mpcrs: not a directory",
    );
    std::fs::remove_dir_all(&wdir).unwrap();
}

#[test]
fn exported_environment_reaches_the_job() {
    let o = run_job(
        &[
            "-x",
            "MPCRS_TEST_A=one two",
            "-x",
            "PATH",
            "sh",
            "-c",
            "echo \"$MPCRS_TEST_A\"",
        ],
        Duration::from_secs(10),
    );
    assert_eq!(expect_success(&o, "-x").trim(), "one two");
    assert_refused(
        &["-x", "MPCRS_SURELY_UNSET_VARIABLE", "true"],
        "MPCRS_SURELY_UNSET_VARIABLE is not set",
    );
}

#[test]
fn an_rdma_network_without_a_device_is_refused_before_start() {
    let has_device = std::fs::read_dir("/sys/class/infiniband")
        .map(|mut d| d.next().is_some())
        .unwrap_or(false);
    let marker = std::env::temp_dir().join(format!("mpcrs-ib-started-{}", std::process::id()));
    let touch = format!("touch {}", marker.display());
    let o = run_job(
        &["--net", "ib", "sh", "-c", &touch],
        Duration::from_secs(10),
    );
    let started = marker.exists();
    let _ = std::fs::remove_file(&marker);
    let err = text(&o).1;
    let not_built =
        err.contains("rail ib_mpi (ibverbs): this build of mpcrs has no ibverbs support");
    if has_device && !not_built {
        assert!(o.status.success() && started, "{err}");
    } else {
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(!started, "the job started despite: {err}");
        assert!(
            not_built
                || err.contains("mpcrs-run: --net ib: rail ib_mpi (ibverbs): no RDMA device: "),
            "{err}"
        );
    }
}

#[test]
fn hello_prints_every_rank_in_order() {
    let o = run_job(
        &["-n", "5", example("hello").to_str().unwrap()],
        Duration::from_secs(30),
    );
    let out = expect_success(&o, "hello");
    let lines: Vec<&str> = out.lines().collect();
    let expected: Vec<String> = (0..5)
        .map(|r| format!("hello from rank {r} of 5"))
        .collect();
    assert_eq!(lines, expected);
}

#[test]
fn ring_and_allreduce_examples_are_correct() {
    let o = run_job(
        &[
            "-n",
            "33",
            "-c",
            "2",
            example("ring").to_str().unwrap(),
            "10",
        ],
        Duration::from_secs(30),
    );
    assert!(expect_success(&o, "ring").contains("token after 10 laps of 33 ranks: 330"));
    let o = run_job(
        &[
            "-n",
            "64",
            example("allreduce").to_str().unwrap(),
            "4",
            "200",
        ],
        Duration::from_secs(30),
    );
    let out = expect_success(&o, "allreduce");
    assert!(
        out.starts_with("64 4 ") && out.trim_end().ends_with("ok"),
        "{out}"
    );
}

#[test]
fn program_run_without_launcher_is_a_singleton() {
    let o = run_command(&mut Command::new(example("hello")), Duration::from_secs(10));
    assert_eq!(
        expect_success(&o, "singleton hello").trim(),
        "hello from rank 0 of 1"
    );
}

#[test]
fn processes_find_each_other_through_the_launchers_key_value_store() {
    let node = program("signal_node");
    let o = run_job(
        &["-n", "8", "-p", "8", node.to_str().unwrap(), "ring", "4"],
        Duration::from_secs(60),
    );
    let out = expect_success(&o, "signal_node under mpcrs-run -p 8");
    let line = |p: u32| process_report(&out, p);
    assert_eq!(out.lines().count(), 8, "{out}");
    assert!(
        line(0).contains("ondemand 1 ") && line(0).contains("connected [1, 4, 7]"),
        "{out}"
    );
    assert!(
        line(4).ends_with("received connect/0/4,epoch1/0/1,epoch99/0/1"),
        "{out}"
    );
}

#[test]
fn mpi_programs_span_processes_and_more_processes_than_ranks_is_refused() {
    let o = run_job(
        &["-n", "5", "-p", "2", example("hello").to_str().unwrap()],
        Duration::from_secs(30),
    );
    assert!(o.status.success(), "{:?}", text(&o));
    let mut lines: Vec<String> = text(&o).0.lines().map(str::to_string).collect();
    lines.sort();
    let want: Vec<String> = (0..5)
        .map(|r| format!("hello from rank {r} of 5"))
        .collect();
    assert_eq!(lines, want);
    let o = run_job(&["-n", "2", "-p", "3", "true"], Duration::from_secs(10));
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o)
        .1
        .contains("-p 3 asks for more processes than the 2 ranks"));
}

#[test]
fn a_killed_process_ends_a_multi_process_job_within_two_seconds() {
    let marker = format!("31.{}", std::process::id() % 1000);
    let script =
        format!("if [ \"$PMI_RANK\" = 2 ]; then sleep 0.3; kill -9 $$; fi; exec sleep {marker}");
    let started = std::time::Instant::now();
    let o = run_job(
        &["-n", "8", "-p", "4", "sh", "-c", &script],
        Duration::from_secs(30),
    );
    let took = started.elapsed();
    assert_eq!(o.status.code(), Some(128 + 9));
    let err = text(&o).1;
    assert!(
        err.contains("process 2 (ranks 4-5, host ")
            && err.contains("was killed by signal 9 (Killed)"),
        "{err}"
    );
    // 0.3 s before the kill, then at most the 2 s the job may take to end.
    assert!(
        took < Duration::from_millis(2300),
        "the job took {took:?} to end"
    );
    let left = Command::new("pgrep")
        .args(["-f", &format!("sleep {marker}")])
        .output()
        .unwrap();
    assert!(
        left.stdout.is_empty(),
        "left running: {}",
        String::from_utf8_lossy(&left.stdout)
    );
}

/// MPIEXEC_TIMEOUT (seconds, as MPICH's mpiexec reads it) and `--timeout`
/// (Open MPI's mpirun) end a job that runs past it, in threads and across
/// processes, with a message saying so and a non-zero status; a value that
/// is not a number is refused.
#[test]
fn mpiexec_timeout_ends_a_job_that_runs_too_long() {
    let bin = build_c(&c_source("spin.c"), "spin", None, &[]);
    // The job is ended past its limit, with status 124 and a message naming
    // what set the limit.
    let ended = |args: &[&str], variable: &str, says: &str| {
        let t = std::time::Instant::now();
        let o = run_command(
            Command::new(mpcrs_run())
                .args(args)
                .env("MPIEXEC_TIMEOUT", variable),
            Duration::from_secs(60),
        );
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(124), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    };
    let bin = bin.to_str().unwrap();
    for layout in [&["-n", "2"][..], &["-n", "2", "-p", "2"]] {
        let mut args = layout.to_vec();
        args.push(bin);
        ended(
            &args,
            "2",
            "ran past its time limit of 2 s (MPIEXEC_TIMEOUT)",
        );
    }
    // Open MPI's --timeout, which wins over the variable.
    ended(
        &["--timeout", "1", "-n", "2", "-p", "2", bin],
        "30",
        "ran past its time limit of 1 s (--timeout)",
    );
    assert_refused(&["--timeout", "0", "true"], "--timeout");
    let o = run_command(
        Command::new(mpcrs_run())
            .args(["-n", "1", bin])
            .env("MPIEXEC_TIMEOUT", "soon"),
        Duration::from_secs(60),
    );
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("MPIEXEC_TIMEOUT=soon is not a number of seconds"),
        "{err}"
    );
}

/// `errors SCENARIO` at -n 4 -p 2 with `MPCRS_LOG` set to `filter` (unset if None).
fn errors_logged(scenario: &str, filter: Option<&str>) -> (i32, String) {
    let prog = program("errors");
    let mut cmd = Command::new(mpcrs_run());
    cmd.args(["-n", "4", "-p", "2", prog.to_str().unwrap(), scenario]);
    match filter {
        Some(f) => cmd.env("MPCRS_LOG", f),
        None => cmd.env_remove("MPCRS_LOG"),
    };
    let o = run_command(&mut cmd, Duration::from_secs(60));
    (o.status.code().unwrap_or(-1), text(&o).1)
}

#[test]
fn diagnostics_are_off_by_default_and_name_module_process_and_rank_when_asked() {
    let user_line = "mpcrs: fatal error in MPI_Send on rank 0: MPI_ERR_RANK";
    // Off: the user-facing message alone, with its exact text.
    let (code, err) = errors_logged("fatal-rank", None);
    assert_eq!(code, mpcrs::FATAL_EXIT_CODE, "{err}");
    assert!(err.lines().any(|l| l.starts_with(user_line)), "{err}");
    assert!(
        !err.contains("mpcrs ERROR") && !err.contains("mpcrs DEBUG"),
        "{err}"
    );

    // On for every module: the same message as an event of rank 0 in process 0,
    // and the debug events of the launcher and of both processes.
    let (code, err) = errors_logged("fatal-rank", Some("debug"));
    assert_eq!(code, mpcrs::FATAL_EXIT_CODE, "{err}");
    assert!(err.lines().any(|l| l.starts_with(user_line)), "{err}");
    assert!(
        err.lines().any(
            |l| l.starts_with("mpcrs ERROR mpcrs::error process=0 rank=0: ")
                && l.contains(user_line)
                && l.contains("user=true")
        ),
        "{err}"
    );
    assert!(
        err.contains("mpcrs DEBUG mpcrs_launch::supervise: process started process=1"),
        "{err}"
    );
    for p in 0..2 {
        assert!(
            err.contains(&format!(
                "mpcrs DEBUG mpcrs::remote process={p}: joined the job's network"
            )),
            "{err}"
        );
    }

    // Per module: only the fabric's events.
    let (_, err) = errors_logged("fatal-rank", Some("mpcrs::remote=debug"));
    assert!(
        err.contains("mpcrs DEBUG mpcrs::remote process=1: joined"),
        "{err}"
    );
    assert!(
        !err.contains("mpcrs DEBUG mpcrs::run") && !err.contains("mpcrs_launch"),
        "{err}"
    );
    assert!(!err.contains("mpcrs ERROR"), "{err}");

    // A filter that does not parse is named, and the job runs as without one.
    let (code, err) = errors_logged("returned", Some("mpcrs=loud"));
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("mpcrs-run: MPCRS_LOG=\"mpcrs=loud\" is not a diagnostics filter"),
        "{err}"
    );
}

#[test]
fn help_lists_every_option_and_every_variable_and_the_readme_does_too() {
    let o = run_command(
        Command::new(mpcrs_run()).arg("--help"),
        Duration::from_secs(30),
    );
    let (help, _) = text(&o);
    assert!(o.status.success(), "{help}");
    let readme = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"),
    )
    .unwrap();
    for v in mpcrs_settings::variables::ALL {
        assert!(
            help.contains(v.name),
            "--help does not name {}:\n{help}",
            v.name
        );
        assert!(
            readme.contains(&format!("| `{}` |", v.name)),
            "README.md's settings table has no row for {}",
            v.name
        );
    }
    use clap::CommandFactory;
    for arg in mpcrs_launch::options::Options::command().get_arguments() {
        let Some(long) = arg.get_long() else { continue };
        assert!(
            help.contains(&format!("--{long}")),
            "--help does not show --{long}"
        );
        assert!(
            readme.contains(&format!("`--{long}")),
            "README.md's option table does not show --{long}"
        );
    }
}

/// `--checkpoint` naming what cannot hold checkpoints is refused before any
/// process starts, naming the path and why; a directory another job
/// checkpoints into is refused naming that job, and free again once it ended.
#[test]
fn checkpoint_directories_are_checked_and_claimed_before_start() {
    let bin = build_c(&c_source("spin.c"), "spin", None, &[]);
    let scratch = std::env::temp_dir().join(format!("mpcrs-claim-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    let file = scratch.join("a-file");
    std::fs::write(&file, b"x").unwrap();
    for (dir, why) in [
        ("/dev/null", "not a directory"),
        (file.to_str().unwrap(), "not a directory"),
        ("/proc/self", "cannot write there"),
    ] {
        let o = run_job(
            &["-n", "2", "--checkpoint", dir, bin.to_str().unwrap()],
            Duration::from_secs(30),
        );
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{dir}: {err}");
        assert!(
            err.contains(&format!("mpcrs-run: --checkpoint {dir}: {why}")),
            "{dir}: {err}"
        );
        assert!(out.is_empty(), "{dir}: the job ran: {out}");
    }
    let dir = scratch.join("ckpt");
    let d = dir.to_str().unwrap();
    let first = mpcrs_tests::BackgroundJob::start(&[
        "-n",
        "2",
        "-p",
        "2",
        "--checkpoint",
        d,
        bin.to_str().unwrap(),
    ]);
    first.wait_for(
        "the first job to claim its directory",
        Duration::from_secs(30),
        |_, _| dir.join(mpcrs_cr::claim::LOCK_FILE).is_file() && first.job_processes().len() == 2,
    );
    let o = run_job(
        &["-n", "2", "--checkpoint", d, bin.to_str().unwrap()],
        Duration::from_secs(30),
    );
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "mpcrs-run: --checkpoint {d}: another job (mpcrs-run pid"
        )),
        "{err}"
    );
    let (status, _, _) = first.kill_processes();
    assert!(!status.success());
    // The launcher's claim went with it: a job starts there again.
    let o = run_command(
        Command::new(mpcrs_run())
            .args(["-n", "1", "--checkpoint", d, bin.to_str().unwrap()])
            .env("MPIEXEC_TIMEOUT", "1"),
        Duration::from_secs(60),
    );
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(124), "{err}");
    std::fs::remove_dir_all(&scratch).unwrap();
}

/// SIGUSR1 asks for a checkpoint: a job without `--checkpoint` answers with
/// one line and runs on, its launcher alive (it used to die, leaving the
/// processes behind).
#[test]
fn a_checkpoint_request_to_a_job_without_checkpoints_is_answered_not_fatal() {
    let bin = build_c(&c_source("spin.c"), "spin", None, &[]);
    let job = mpcrs_tests::BackgroundJob::spawn(
        Command::new(mpcrs_run())
            .args(["-n", "2", "-p", "2", bin.to_str().unwrap()])
            .env("MPIEXEC_TIMEOUT", "4"),
    );
    job.wait_for("the job's processes", Duration::from_secs(30), |_, _| {
        job.job_processes().len() == 2
    });
    job.signal_launcher(libc::SIGUSR1);
    let o = job.finish(Duration::from_secs(60));
    let (_, err) = text(&o);
    assert!(
        err.contains(
            "SIGUSR1 asks for a checkpoint, but this job runs without --checkpoint DIR; ignored"
        ),
        "{err}"
    );
    // Still supervising: the time limit ends the job, as without the signal.
    assert_eq!(o.status.code(), Some(124), "{err}");
}

/// Inputs beyond what a job can be: each refused before anything starts, in
/// one line naming the option and the limit, with status 2; never a panic.
#[test]
fn huge_counts_intervals_and_files_that_are_not_files_are_refused_by_name() {
    let hello = mpcrs_tests::example("hello");
    let h = hello.to_str().unwrap();
    let ckpt = std::env::temp_dir().join(format!("mpcrs-huge-{}", std::process::id()));
    let c = ckpt.to_str().unwrap();
    let cases: [(&[&str], &str); 7] = [
        (&["-n", "4294967295", h], "4294967295 is not in 1..=2147483647"),
        (&["-n", "4", "-p", "4294967295", h], "4294967295 is not in 1..=2147483647"),
        (
            &["--checkpoint", c, "--checkpoint-interval", "1e300", "-n", "2", h],
            "\"1e300\" is not a number of seconds from 0.01 to 1e9",
        ),
        (&["--config", "/dev/zero", "-n", "2", h], "/dev/zero: cannot read: not a regular file"),
        (&["--checkpoint-config", "/dev/zero", "-n", "2", h], "/dev/zero: not a regular file"),
        (&["--hostfile", "/dev/zero", "-n", "2", h], "/dev/zero: not a regular file"),
        (
            &["--stack-size", "1000G", "-n", "100000", h],
            "-n 100000 in 1 process puts 100000 ranks in a process, whose stacks of 1048576000 KiB need",
        ),
    ];
    for (args, expected) in cases {
        let o = run_job(args, Duration::from_secs(20));
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(expected), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    // Ten million ranks under an address-space limit of 8 GB.
    let o = mpcrs_tests::run_command(
        std::process::Command::new("sh").args([
            "-c",
            &format!(
                "ulimit -v 8000000 && exec {} -n 10000000 {h}",
                mpcrs_tests::mpcrs_run().display()
            ),
        ]),
        Duration::from_secs(20),
    );
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("the address-space limit of a process (ulimit -v, RLIMIT_AS) is 7.5 GiB")
            || err
                .contains("the address-space limit of a process (ulimit -v, RLIMIT_AS) is 7.6 GiB"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    let _ = std::fs::remove_dir_all(&ckpt);
}

/// The harness names what every thread of a job that outran its limit was
/// doing (state and kernel wait), so that a hang seen once can be read.
#[test]
fn a_job_past_its_limit_is_reported_with_its_threads_states() {
    let bin = build_c(&c_source("deadlock.c"), "deadlock", None, &[]);
    let job = BackgroundJob::start(&[
        "-n",
        "2",
        "--deadlock-check",
        "off",
        bin.to_str().unwrap(),
        "deadlock",
    ]);
    let outran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        job.finish(Duration::from_millis(1500))
    }));
    let message = match outran {
        Ok(o) => panic!("the deadlocked job ended: {o:?}"),
        Err(p) => p.downcast_ref::<String>().cloned().unwrap_or_default(),
    };
    assert!(message.contains("--- threads then"), "{message}");
    assert!(message.contains(": mpcrs-worker-0 "), "{message}");
}

/// As with mpirun: a program that is no MPI program runs once per rank, each
/// copy a process of one rank with PMI's rank variables; a wrapper of an MPI
/// program too (each copy then one rank of the job); standard input reaches
/// process 0 only.
#[test]
fn programs_that_are_not_mpi_programs_run_once_per_rank_and_stdin_reaches_rank_0_only() {
    let limit = Duration::from_secs(30);
    let sorted = |out: &str| {
        let mut v: Vec<String> = out.lines().map(String::from).collect();
        v.sort();
        v
    };
    let o = run_job(&["-n", "3", "hostname"], limit);
    let out = expect_success(&o, "hostname");
    let host = mpcrs_settings::local_hostname();
    assert_eq!(
        sorted(&out),
        vec![host.clone(), host.clone(), host],
        "{out}"
    );
    let o = run_job(
        &["-n", "2", "sh", "-c", "echo rank $PMI_RANK of $PMI_SIZE"],
        limit,
    );
    let out = expect_success(&o, "sh -c");
    assert_eq!(sorted(&out), ["rank 0 of 2", "rank 1 of 2"], "{out}");
    // Wrappers of an MPI program: each copy is one of its ranks.
    let hello = example("hello");
    let hello = hello.to_str().unwrap();
    let expected: Vec<String> = (0..3)
        .map(|r| format!("hello from rank {r} of 3"))
        .collect();
    for wrapper in [&["env", "X=1"][..], &["nice"], &["sh", "-c", "exec \"$0\""]] {
        let mut args = vec!["-n", "3"];
        args.extend_from_slice(wrapper);
        args.push(hello);
        let o = run_job(&args, limit);
        let out = expect_success(&o, &wrapper.join(" "));
        assert_eq!(sorted(&out), expected, "{wrapper:?}: {out}");
    }
    // An MPI program itself still runs its ranks as threads of one process.
    let o = run_job(&["-n", "3", "--tag-output", hello], limit);
    let out = expect_success(&o, "hello");
    assert!(
        out.lines().all(|l| l.starts_with("[1,0-2]<stdout>:")),
        "{out}"
    );
    // Standard input: rank 0 reads it, the others read end of file.
    let script = "read line; echo \"$PMI_RANK read [$line]\"";
    let mut job = Command::new(mpcrs_run());
    job.args(["-n", "3", "sh", "-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = job.spawn().unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"to rank 0\n")
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let out = expect_success(&o, "stdin");
    assert_eq!(
        sorted(&out),
        ["0 read [to rank 0]", "1 read []", "2 read []"],
        "{out}"
    );
}

/// Standard input reaches rank 0 only when ranks are threads of one process
/// too: the others read end of file from fgets, scanf and getchar.
#[test]
fn standard_input_reaches_rank_0_only_in_threads_and_processes() {
    let bin = build_c(&c_source("stdin_ranks.c"), "stdin_ranks", None, &[]);
    for layout in [
        &["-n", "4"][..],
        &["-n", "4", "-p", "2"],
        &["-n", "3", "--process-mode"],
    ] {
        // More than rank 0 reads: a rank sharing its stream would get the rest.
        let input = b"first line\n42\nz\nsecond line\n43\ny\n";
        let out = run_with_input(&[layout, &[bin.to_str().unwrap()]].concat(), input);
        let n: usize = layout[1].parse().unwrap();
        let mut expected = vec!["rank 0 fgets first line scanf 1 42 getchar z".to_string()];
        expected.extend((1..n).map(|r| format!("rank {r} fgets EOF scanf -1 -1 getchar EOF")));
        assert_eq!(out.lines().collect::<Vec<_>>(), expected, "{layout:?}");
    }
}

/// The same through read(2) on descriptor 0: the other ranks read first
/// (highest first), so a rank sharing the descriptor would take the input.
#[test]
fn standard_input_reaches_rank_0_only_through_read_of_descriptor_0_too() {
    let bin = build_c(&c_source("stdin_read.c"), "stdin_read", None, &[]);
    for layout in [
        &["-n", "4"][..],
        &["-n", "8", "-p", "2"],
        &["-n", "8", "-p", "4"],
        &["-n", "3", "--process-mode"],
    ] {
        let out = run_with_input(
            &[layout, &[bin.to_str().unwrap()]].concat(),
            b"first line\n42\n",
        );
        let n: usize = layout[1].parse().unwrap();
        let mut expected: Vec<String> = (1..n)
            .rev()
            .map(|r| format!("rank {r} read 0 []"))
            .collect();
        expected.push("rank 0 read 14 [first line|42|]".into());
        assert_eq!(out.lines().collect::<Vec<_>>(), expected, "{layout:?}");
    }
}

/// The same through C++'s std::cin.
#[test]
fn standard_input_reaches_rank_0_only_through_std_cin_too() {
    let cxx = profile_dir().join("mpcrs-cxx");
    let bin = build_c(
        &c_source("stdin_ranks_cxx.cpp"),
        "stdin_ranks_cxx",
        Some(cxx.to_str().unwrap()),
        &[],
    );
    for layout in [&["-n", "4"][..], &["-n", "4", "-p", "2"]] {
        let out = run_with_input(
            &[layout, &[bin.to_str().unwrap()]].concat(),
            b"first 42\nsecond 43\nthird 44\n",
        );
        let mut expected = vec!["rank 0 cin ok first 42".to_string()];
        expected.extend((1..4).map(|r| format!("rank {r} cin eof none -1")));
        assert_eq!(out.lines().collect::<Vec<_>>(), expected, "{layout:?}");
    }
}
