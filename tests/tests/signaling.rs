//! The signaling network across real processes: start-up through the launcher's
//! PMI-2 key-value store, control messages forwarded hop by hop, on-demand links.

use std::collections::BTreeMap;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::process::{Command, Stdio};
use std::sync::Arc;

use mpcrs_pmi::{Ending, Server, ENV_FD, ENV_RANK};

/// Runs `count` signal_node processes on one PMI-2 store; returns each
/// process's report line, by process.
fn job(count: usize, topology: &str, dest: u32) -> BTreeMap<u32, String> {
    let server = Arc::new(Server::new(count, "signaling-test"));
    let mut children = Vec::new();
    let mut serving = Vec::new();
    for rank in 0..count {
        let (ours, theirs) = UnixStream::pair().unwrap();
        let fd = theirs.as_raw_fd();
        // SAFETY: fcntl on a descriptor this test owns; clearing FD_CLOEXEC lets
        // the child inherit it as its PMI connection.
        assert!(unsafe { libc::fcntl(fd, libc::F_SETFD, 0) } == 0);
        let child = Command::new(env!("CARGO_BIN_EXE_signal_node"))
            .args([topology, &dest.to_string()])
            .env(ENV_FD, fd.to_string())
            .env(ENV_RANK, rank.to_string())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        drop(theirs);
        children.push(child);
        let server = server.clone();
        serving.push(std::thread::spawn(move || {
            let mut s = ours;
            server.serve(rank, &mut s).unwrap()
        }));
    }
    let mut lines = BTreeMap::new();
    for (rank, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
        assert!(out.status.success(), "process {rank} failed: {text}");
        lines.insert(rank as u32, text);
    }
    for s in serving {
        assert!(matches!(s.join().unwrap(), Ending::Finalized));
    }
    lines
}

/// The value after `key ` in a report line.
fn field<'a>(line: &'a str, key: &str) -> &'a str {
    let at = line
        .find(&format!(" {key} "))
        .unwrap_or_else(|| panic!("{key} in {line}"));
    let rest = &line[at + key.len() + 2..];
    if rest.starts_with('[') {
        &rest[..=rest.find(']').unwrap()]
    } else {
        rest.split(' ').next().unwrap()
    }
}

#[test]
fn ring_start_up_then_an_on_demand_link_requested_over_several_hops() {
    let lines = job(8, "ring", 4);
    let p0 = &lines[&0];
    assert_eq!(field(p0, "static"), "2", "{p0}");
    assert_eq!(field(p0, "ondemand"), "1", "{p0}");
    assert_eq!(field(p0, "connected"), "[1, 4, 7]", "{p0}");
    let p4 = &lines[&4];
    assert_eq!(field(p4, "connected"), "[0, 3, 5]", "{p4}");
    assert_eq!(field(p4, "ondemand"), "1", "{p4}");
    // The request walked the ring 0-1-2-3-4; the note after it used the new link.
    let got: Vec<&str> = field(p4, "received").split(',').collect();
    assert_eq!(got, ["connect/0/4", "epoch1/0/1", "epoch99/0/1"], "{p4}");
    for p in [1, 2, 3] {
        let l = &lines[&p];
        assert_eq!(field(l, "static"), "2", "{l}");
        assert_eq!(field(l, "ondemand"), "0", "{l}");
        assert!(field(l, "forwarded").parse::<u32>().unwrap() >= 1, "{l}");
    }
    // Every process got its end notice, and nothing was lost on the way.
    for (p, l) in &lines {
        if *p != 0 {
            assert!(field(l, "received").contains("epoch99/0/"), "{l}");
        }
    }
}

#[test]
fn fully_connected_start_up_needs_no_forwarding() {
    let lines = job(5, "fully", 3);
    for (p, l) in &lines {
        assert_eq!(field(l, "static"), "4", "{l}");
        assert_eq!(field(l, "forwarded"), "0", "{l}");
        if *p != 0 {
            assert_eq!(field(l, "hops_max"), "1", "{l}");
        }
    }
    assert_eq!(field(&lines[&0], "ondemand"), "0");
}

#[test]
fn without_start_up_links_there_is_no_route() {
    let lines = job(3, "none", 2);
    assert!(lines[&1].contains("static 0 ") && lines[&2].ends_with("received"));
    assert!(
        lines[&0].contains("error: process 0: no route to process 2"),
        "{}",
        lines[&0]
    );
}
