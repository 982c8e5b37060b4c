//! Jobs across hosts (see mpcrs_tests::netns).

use std::time::Duration;

use mpcrs_tests::netns::Hosts;
use mpcrs_tests::{
    build_c, c_source, c_suite_lines, example, expect_success, heat_checksum, latest_epoch,
    net_stats_line, numbers, process_report, program, run_job, BackgroundJob,
};

#[test]
fn a_job_spans_two_hosts_over_tcp() {
    let hosts = Hosts::new(2, 0);
    let list = hosts.list(&[1, 2]);
    let agent = hosts.agent_command();
    let node = program("signal_node");
    let o = run_job(
        &[
            "-n",
            "4",
            "-p",
            "4",
            "--host",
            &list,
            "--launch-agent",
            &agent,
            node.to_str().unwrap(),
            "ring",
            "2",
        ],
        Duration::from_secs(60),
    );
    let out = expect_success(&o, "signal_node on two hosts");
    let line = |p: u32| process_report(&out, p);
    // Processes 0-1 on the first host, 2-3 on the second, each with its own address.
    for (p, k) in [(0, 1), (1, 1), (2, 2), (3, 2)] {
        assert!(
            line(p).contains(&format!(" host {} ", hosts.host(k))),
            "{out}"
        );
    }
    // The connect request crossed from one host to the other over the ring.
    assert!(
        line(2).ends_with("received connect/0/2,epoch1/0/1,epoch99/0/1"),
        "{out}"
    );
    assert!(line(0).contains("connected [1, 2, 3]"), "{out}");
}

/// Hosts that are network namespaces of one machine share its CPUs, which
/// their launcher cannot see: the processes find out from each other (their
/// notes in the machine's /dev/shm) and yield when idle, unless told not to.
#[test]
fn processes_of_hosts_on_one_machine_yield_when_their_workers_outnumber_its_cpus() {
    let hosts = Hosts::new(2, 3);
    let list = hosts.list(&[1, 2]);
    let agent = hosts.agent_command();
    let hello = example("hello");
    let run = |extra: &[&str]| {
        let mut args = vec!["-x", "MPCRS_LOG=mpcrs::remote=debug"];
        args.extend_from_slice(extra);
        args.extend([
            "-n",
            "4",
            "-p",
            "2",
            "--host",
            &list,
            "--launch-agent",
            &agent,
            hello.to_str().unwrap(),
        ]);
        let o = run_job(&args, Duration::from_secs(60));
        expect_success(&o, "hello on two hosts of one machine");
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let yielding = |err: &str, p: u32| {
        err.lines().any(|l| {
            l.contains(&format!("process={p}:"))
                && l.contains("other processes' workers share this process's CPUs")
        })
    };
    // Each process has a worker per CPU of the machine: together, twice as many.
    let err = run(&[]);
    assert!(yielding(&err, 0) && yielding(&err, 1), "{err}");
    let err = run(&["-x", "MPCRS_YIELD_WHEN_IDLE=0"]);
    assert!(!yielding(&err, 0) && !yielding(&err, 1), "{err}");
}

#[test]
fn an_mpi_job_spans_two_hosts_shared_memory_within_and_tcp_across() {
    let hosts = Hosts::new(2, 0);
    let list = hosts.list(&[1, 2]);
    let agent = hosts.agent_command();
    let prog = program("semantics");
    let o = run_job(
        &[
            "-n",
            "8",
            "-p",
            "4",
            "--net-stats",
            "--host",
            &list,
            "--launch-agent",
            &agent,
            prog.to_str().unwrap(),
        ],
        Duration::from_secs(120),
    );
    let out = expect_success(&o, "semantics on two hosts");
    for part in ["point-to-point", "collectives", "communicators"] {
        assert!(out.contains(&format!("ok {part} (ranks 8")), "{out}");
    }
    // Processes 0-1 share the first host, 2-3 the second: shared memory within a
    // host only, tcp (the ring) across.
    let err = String::from_utf8_lossy(&o.stderr);
    // process, endpoints static, on demand, messages, ...
    let messages = |p: u32, rail: &str| numbers(net_stats_line(&err, p, rail))[3];
    for p in 0..4 {
        assert!(
            messages(p, "shm_mpi") > 0,
            "process {p} used shared memory with its neighbour:\n{err}"
        );
        assert!(messages(p, "tcp_mpi") > 0, "{err}");
    }
}

/// MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) on two hosts of two processes
/// each: one communicator of the 4 ranks of each host.
#[test]
fn the_shared_memory_split_holds_the_ranks_of_one_host() {
    let hosts = Hosts::new(2, 2);
    let list = hosts.list(&[1, 2]);
    let agent = hosts.agent_command();
    let bin = build_c(&c_source("topologies.c"), "topologies", None, &[]);
    let o = run_job(
        &[
            "-n",
            "8",
            "-p",
            "4",
            "--host",
            &list,
            "--launch-agent",
            &agent,
            bin.to_str().unwrap(),
            "4",
        ],
        Duration::from_secs(120),
    );
    let out = expect_success(&o, "topologies on two hosts");
    assert_eq!(out.lines().collect::<Vec<_>>(), c_suite_lines("topologies"));
}

#[test]
fn an_unreachable_agent_host_ends_the_job_with_its_name() {
    let hosts = Hosts::new(1, 1);
    let list = format!("{},10.213.{}.99", hosts.host(1), hosts.subnet);
    let agent = hosts.agent_command();
    let o = run_job(
        &[
            "-n",
            "2",
            "-p",
            "2",
            "--host",
            &list,
            "--launch-agent",
            &agent,
            "true",
        ],
        Duration::from_secs(30),
    );
    assert_eq!(o.status.code(), Some(255));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!(
            "process 1 (ranks 1-1, host 10.213.{}.99) exited with status 255",
            hosts.subnet
        )),
        "{err}"
    );
}

/// For a heat job with checkpoints across hosts: a fresh checkpoint
/// directory, the heat example, and the checksum of heat -n 8 256 16000 run
/// uninterrupted in one process.
fn checkpointed_heat_setup(name: &str) -> (std::path::PathBuf, String, String) {
    let dir = std::env::temp_dir().join(format!("mpcrs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let heat = example("heat").to_str().unwrap().to_string();
    let reference = heat_checksum(&expect_success(
        &run_job(
            &["-n", "8", "-c", "2", &heat, "256", "16000"],
            Duration::from_secs(120),
        ),
        "uninterrupted heat",
    ));
    (dir, heat, reference)
}

/// A job of 4 processes on two hosts, checkpointed and killed, restarts on two
/// other hosts (the checkpoint directory is at the same path on all, as on a
/// shared file system) and ends with the checksum of an uninterrupted run.
#[test]
fn a_job_checkpointed_on_two_hosts_restarts_on_two_others() {
    let hosts = Hosts::new(4, 2);
    let agent = hosts.agent_command();
    let (dir, heat, reference) = checkpointed_heat_setup("hosts-ckpt");
    let (d, heat) = (dir.to_str().unwrap(), heat.as_str());
    let limit = Duration::from_secs(120);
    let first = hosts.list(&[1, 2]);
    let job = BackgroundJob::start(&[
        "-n",
        "8",
        "-p",
        "4",
        "--host",
        &first,
        "--launch-agent",
        &agent,
        "--checkpoint",
        d,
        heat,
        "256",
        "16000",
        // An epoch every 1000 iterations, each copied to a partner on the other
        // host while the ranks wait on the network.
        "1000",
    ]);
    job.wait_for("an epoch to commit", limit, |_, _| {
        latest_epoch(&dir).is_some_and(|k| k >= 1)
    });
    let (status, _, err) = job.kill_processes();
    assert!(!status.success(), "{err}");
    let started = std::fs::read_to_string(&hosts.log).unwrap();
    assert_eq!(started.lines().count(), 4, "{started}");
    std::fs::remove_file(&hosts.log).unwrap();

    let then = hosts.list(&[3, 4]);
    let o = run_job(
        &["--restart", d, "--host", &then, "--launch-agent", &agent],
        limit,
    );
    let out = expect_success(&o, "restart on two other hosts");
    assert!(out.contains("restarted after iteration"), "{out}");
    assert_eq!(heat_checksum(&out), reference, "{out}");
    let started = std::fs::read_to_string(&hosts.log).unwrap();
    let mut on: Vec<&str> = started.lines().collect();
    on.sort_unstable();
    let (h3, h4) = (hosts.host(3), hosts.host(4));
    assert_eq!(on, [h3.as_str(), &h3, &h4, &h4], "{started}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--max-restarts` with a spare host: a process killed on host 2 (as if the
/// host were lost) ends the run; the next one leaves host 2 out, its
/// processes going to host 3's slots, and ends with the uninterrupted result.
#[test]
fn a_host_that_lost_a_process_is_left_out_and_a_spare_takes_its_place() {
    let hosts = Hosts::new(3, 4);
    let agent = hosts.agent_command();
    let (dir, heat, reference) = checkpointed_heat_setup("spare");
    let (d, heat) = (dir.to_str().unwrap(), heat.as_str());
    let limit = Duration::from_secs(120);
    let (h1, h2, h3) = (hosts.host(1), hosts.host(2), hosts.host(3));
    let list = format!("{h1}:2,{h2}:2,{h3}:2");
    let job = BackgroundJob::start(&[
        "-n",
        "8",
        "-p",
        "4",
        "--host",
        &list,
        "--launch-agent",
        &agent,
        "--checkpoint",
        d,
        "--max-restarts",
        "1",
        heat,
        "256",
        "16000",
        "1000",
    ]);
    job.wait_for("an epoch to commit", limit, |_, _| {
        latest_epoch(&dir).is_some_and(|k| k >= 1)
    });
    let started = std::fs::read_to_string(&hosts.log).unwrap();
    let mut first: Vec<&str> = started.lines().collect();
    first.sort_unstable();
    assert_eq!(first, [h1.as_str(), &h1, &h2, &h2], "{started}");
    // Process 2, the first on host 2 (processes start in order).
    let procs = job.job_processes();
    assert_eq!(procs.len(), 4, "{procs:?}");
    // SAFETY: kill only sends a signal.
    unsafe { libc::kill(procs[2], libc::SIGKILL) };
    let o = job.finish(limit);
    let out = expect_success(&o, "the job, restarted without host 2");
    let (_, err) = mpcrs_tests::text(&o);
    assert!(
        err.contains(&format!("host {h2} is left out of the next runs")),
        "{err}"
    );
    assert!(
        err.contains("restart 1 of 1: resuming from epoch-"),
        "{err}"
    );
    assert_eq!(heat_checksum(&out), reference, "{out}\n{err}");
    let started = std::fs::read_to_string(&hosts.log).unwrap();
    let mut then: Vec<&str> = started.lines().skip(4).collect();
    then.sort_unstable();
    assert_eq!(then, [h1.as_str(), &h1, &h3, &h3], "{started}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Processes on other hosts get the job's secret through the launch agent's
/// standard input: it is in their environment, and on no command line of
/// either side (where any user could read it with ps).
#[test]
fn the_job_s_secret_reaches_other_hosts_on_no_command_line() {
    let hosts = Hosts::new(2, 0);
    let list = hosts.list(&[1, 2]);
    let agent = hosts.agent_command();
    let heat = build_c(&mpcrs_tests::shared_bench("heat.c"), "heat", None, &["-lm"]);
    let job = BackgroundJob::start(&[
        "-n",
        "4",
        "-p",
        "2",
        "--host",
        &list,
        "--launch-agent",
        &agent,
        heat.to_str().unwrap(),
        "256",
        "30000",
    ]);
    let start = std::time::Instant::now();
    let (secrets, processes) = loop {
        let tree: Vec<i32> = job
            .job_processes()
            .into_iter()
            .flat_map(|p| std::iter::once(p).chain(mpcrs_tests::descendants(p)))
            .collect();
        let secrets: Vec<String> = tree
            .iter()
            .filter_map(|&p| mpcrs_tests::environment_variable(p, mpcrs_pmi::ENV_SECRET))
            .collect();
        if secrets.len() == 2 {
            break (secrets, tree);
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the job's processes never had the secret: {secrets:?}\n{:?}",
            job.output()
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(secrets[0], secrets[1], "one secret per job");
    assert_eq!(secrets[0].len(), 64);
    let on_a_command_line: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(&secrets[0]))
        .collect();
    assert!(on_a_command_line.is_empty(), "{on_a_command_line:?}");
    assert!(processes.len() >= 2);
    let out = job.finish(Duration::from_secs(300));
    expect_success(&out, "heat on two hosts");
}

/// MPICH's `-ppn N`: N ranks per host, one process of N ranks on each (N
/// processes of one rank with --process-mode), hosts taken in order.
#[test]
fn ppn_puts_n_ranks_on_each_host_in_order() {
    let hosts = Hosts::new(3, 6);
    let agent = hosts.agent_command();
    let list = hosts.list(&[1, 2, 3]);
    let hello = example("hello");
    let hello = hello.to_str().unwrap();
    let expected: Vec<String> = (0..6)
        .map(|r| format!("hello from rank {r} of 6"))
        .collect();
    for (mode, started) in [
        (&[][..], vec![hosts.host(1), hosts.host(2)]),
        (
            &["--process-mode"][..],
            vec![
                hosts.host(1),
                hosts.host(1),
                hosts.host(1),
                hosts.host(2),
                hosts.host(2),
                hosts.host(2),
            ],
        ),
    ] {
        let _ = std::fs::remove_file(&hosts.log);
        let mut args = vec![
            "-n",
            "6",
            "-ppn",
            "3",
            "--host",
            &list,
            "--launch-agent",
            &agent,
        ];
        args.extend_from_slice(mode);
        args.push(hello);
        let o = run_job(&args, Duration::from_secs(60));
        let out = expect_success(&o, "-ppn 3");
        let mut lines: Vec<&str> = out.lines().collect();
        lines.sort_unstable();
        assert_eq!(lines, expected, "{mode:?}");
        let log = std::fs::read_to_string(&hosts.log).unwrap();
        let mut on: Vec<&str> = log.lines().collect();
        on.sort_unstable();
        assert_eq!(on, started, "{mode:?}");
    }
    // Without hosts to spread over, -ppn is refused by name.
    let o = run_job(&["-n", "4", "-ppn", "2", hello], Duration::from_secs(30));
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--ppn 2 places ranks on the hosts of --host"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Open MPI's `--map-by node`: processes go to the hosts in turn; `:PE=n`
/// gives each n workers; an unknown policy, or PE=n against -c, is refused.
#[test]
fn map_by_node_deals_processes_to_hosts_in_turn() {
    let hosts = Hosts::new(2, 9);
    let agent = hosts.agent_command();
    let list = hosts.list(&[1, 2]);
    let script = "echo $PMI_RANK $MPCRS_WORKERS $(ip -o -4 addr show | grep -o '10\\.213\\.[0-9]*\\.[0-9]*' | head -1)";
    let o = run_job(
        &[
            "-n",
            "4",
            "-map-by",
            "node:PE=2",
            "--host",
            &list,
            "--launch-agent",
            &agent,
            "sh",
            "-c",
            script,
        ],
        Duration::from_secs(60),
    );
    let out = expect_success(&o, "--map-by node");
    let mut lines: Vec<&str> = out.lines().collect();
    lines.sort_unstable();
    let (h1, h2) = (hosts.host(1), hosts.host(2));
    assert_eq!(
        lines,
        [
            format!("0 2 {h1}"),
            format!("1 2 {h2}"),
            format!("2 2 {h1}"),
            format!("3 2 {h2}")
        ],
        "{out}"
    );
    for (args, says) in [
        (
            &["--map-by", "numa"][..],
            "\"numa\" is not a mapping policy here",
        ),
        (&["--map-by", "node:PE=0"][..], "is not PE=n"),
        (
            &["--map-by", "slot:PE=2", "-c", "1"][..],
            "both set the workers of each process",
        ),
    ] {
        let mut all = vec!["-n", "2"];
        all.extend_from_slice(args);
        all.push("true");
        let o = run_job(&all, Duration::from_secs(30));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}
