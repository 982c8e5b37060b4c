//! Only the job's own peers get in: strangers on this host that connect to a
//! running job's tcp ports (signaling and tcp rails) and send a hello, a bogus
//! process number, garbage after a forged hello, data before any hello, or a
//! handshake with another secret, are closed and counted while the job goes on
//! to the right answer; a peer that knows the secret and breaks the protocol
//! ends the job with one line naming what it sent, never a panic.

use std::io::Write;
use std::net::TcpStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use mpcrs_tests::{
    build_c, environment_variable, expect_success, heat_checksum, listening_ports, run_job,
    shared_bench, text, BackgroundJob,
};

const LIMIT: Duration = Duration::from_secs(300);
/// Heat's grid per rank (KiB) and iterations: a few seconds at -n 4 -p 2,
/// long past the strangers' last connection.
const HEAT: [&str; 2] = ["256", "30000"];
/// Ports of each process under multirail_tcp: the signaling network's (which
/// carries the ring rail tcp_mpi too) and tcp_large's.
const PORTS: usize = 2;

fn heat() -> PathBuf {
    build_c(&shared_bench("heat.c"), "heat", None, &["-lm"])
}

/// Heat at -n 4 -p 2 over tcp rails for `iterations`, with `extra` options.
fn heat_over_tcp(bin: &str, iterations: &str, extra: &[&str]) -> BackgroundJob {
    let mut args = vec!["-n", "4", "-p", "2", "--net", "multirail_tcp"];
    args.extend_from_slice(extra);
    args.extend([bin, HEAT[0], iterations]);
    BackgroundJob::start(&args)
}

/// The job's processes and the ports each listens on, once every process
/// listens on at least `ports` of them.
fn ports_of(job: &BackgroundJob, processes: usize, ports: usize) -> Vec<(i32, Vec<u16>)> {
    let start = Instant::now();
    loop {
        let found: Vec<(i32, Vec<u16>)> = job
            .job_processes()
            .into_iter()
            .map(|pid| (pid, listening_ports(pid)))
            .collect();
        if found.len() == processes && found.iter().all(|(_, p)| p.len() >= ports) {
            return found;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the job's processes never listened: {found:?}\n{:?}",
            job.output()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A frame as the tcp rail carries it: length, then bytes.
fn framed(bytes: &[u8]) -> Vec<u8> {
    let mut f = (bytes.len() as u32).to_le_bytes().to_vec();
    f.extend_from_slice(bytes);
    f
}

/// A hello of the job's links (tag 0, then the process number).
fn hello(process: u32) -> Vec<u8> {
    let mut h = vec![0u8];
    h.extend_from_slice(&process.to_le_bytes());
    framed(&h)
}

/// The strangers, each a connection that stays open until the caller drops
/// it: the number of strangers is the number of connections.
fn strangers(port: u16) -> Vec<TcpStream> {
    let connect = || TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut all = Vec::new();
    // Says hello and nothing more.
    let mut s = connect();
    s.write_all(&hello(1)).unwrap();
    all.push(s);
    // A process number of no job.
    let mut s = connect();
    s.write_all(&hello(0x7fff_fff0)).unwrap();
    all.push(s);
    // Garbage after a forged hello.
    let mut s = connect();
    s.write_all(&hello(0)).unwrap();
    s.write_all(&[0xa5; 4096]).unwrap();
    all.push(s);
    // Data before any hello (tag 2: a data frame).
    let mut s = connect();
    s.write_all(&framed(&[2, 1, 2, 3, 4, 5, 6, 7, 8])).unwrap();
    all.push(s);
    // The handshake itself, with a secret of its own.
    let mut s = connect();
    let refused = mpcrs_auth::over_stream(
        &mut s,
        &mpcrs_auth::JobSecret::generate().unwrap(),
        mpcrs_auth::Role::Connector,
    );
    assert!(refused.is_err(), "a stranger's handshake was accepted");
    all.push(s);
    all
}

/// The total of `connections refused: N` over the --net-stats lines.
fn refused(err: &str) -> u64 {
    err.lines()
        .filter_map(|l| l.split("connections refused: ").nth(1))
        .map(|rest| {
            rest.split_whitespace()
                .next()
                .unwrap()
                .parse::<u64>()
                .unwrap()
        })
        .sum()
}

#[test]
fn strangers_at_every_port_of_a_running_job_are_refused_and_change_nothing() {
    let bin = heat();
    let bin = bin.to_str().unwrap();
    let reference = heat_checksum(&expect_success(
        &run_job(&["-n", "4", bin, HEAT[0], HEAT[1]], LIMIT),
        "heat without strangers",
    ));
    let job = heat_over_tcp(bin, HEAT[1], &["--net-stats"]);
    let found = ports_of(&job, 2, PORTS);
    let mut connections = Vec::new();
    for (_, ports) in &found {
        for &port in ports {
            connections.extend(strangers(port));
        }
    }
    let expected = connections.len() as u64;
    drop(connections);
    let out = job.finish(LIMIT);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "the job failed\n{stdout}\n{stderr}");
    assert_eq!(heat_checksum(&stdout), reference);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(expected, 2 * PORTS as u64 * 5);
    assert_eq!(refused(&stderr), expected, "strangers refused\n{stderr}");
}

#[test]
fn a_peer_with_the_secret_that_breaks_the_protocol_ends_the_job_with_one_line() {
    let bin = heat();
    let bin = bin.to_str().unwrap();
    // Each port of process 1 in a job of its own (the signaling network's,
    // then the tcp rail's): a hello naming a process the job does not have
    // ends the job.
    for port_index in 0..PORTS {
        let job = heat_over_tcp(bin, "100000", &[]);
        let found = ports_of(&job, 2, PORTS);
        let (pid, ports) = &found[1];
        let secret = environment_variable(*pid, mpcrs_pmi::ENV_SECRET)
            .expect("the job's processes have the secret");
        let secret = mpcrs_auth::JobSecret::from_hex(&secret).unwrap();
        let mut s = TcpStream::connect(("127.0.0.1", ports[port_index])).unwrap();
        mpcrs_auth::over_stream(&mut s, &secret, mpcrs_auth::Role::Connector)
            .expect("the job lets in a peer that knows its secret");
        s.write_all(&hello(99)).unwrap();
        let out = job.finish(LIMIT);
        let (_, stderr) = text(&out);
        assert!(!out.status.success(), "the job went on\n{stderr}");
        assert!(stderr.contains("a hello naming process 99"), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}
