//! One process of a signaling-network job, started by a PMI-2 launcher.
//! Usage: signal_node TOPOLOGY DEST (ring, fully or none).
//! Process 0 opens an on-demand link to process DEST through the start-up links,
//! sends it one control message over the new link, then tells every process it is
//! done. Each process prints what it received and its counters on one line.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mpcrs_signaling::{ControlKind, StaticTopology};
use mpcrs_tests::{join_job, JobProcess};

const WAIT: Duration = Duration::from_secs(20);
const DONE: u64 = 99;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let topology = match args[1].as_str() {
        "ring" => StaticTopology::Ring,
        "fully" => StaticTopology::Fully,
        "none" => StaticTopology::None,
        other => panic!("unknown topology {other}"),
    };
    let dest: u32 = args[2].parse().unwrap();
    // On several hosts, `host` is this host's address as the launcher reached it.
    let JobProcess {
        mut kvs,
        me,
        count,
        host,
        net,
        ..
    } = join_job(topology, WAIT);
    let net = Arc::new(net);
    // Forwarding goes on while this process waits in the key-value store's fence.
    let stop = Arc::new(AtomicBool::new(false));
    let progress = {
        let (net, stop) = (net.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Acquire) {
                if !net.progress().unwrap() {
                    std::thread::sleep(Duration::from_micros(50));
                }
            }
        })
    };
    let mut received = Vec::new();
    if me == 0 {
        if let Err(e) = net.connect_on_demand(dest, WAIT) {
            println!("process 0: error: {e}");
            kvs.fence().unwrap();
            net.say_goodbye(WAIT);
            stop.store(true, Ordering::Release);
            progress.join().unwrap();
            kvs.finalize().unwrap();
            return;
        }
        let note = |epoch| ControlKind::Checkpoint {
            epoch,
            step: 0,
            counters: vec![],
        };
        net.send(dest, note(1)).unwrap();
        for p in 1..count {
            net.send(p, note(DONE)).unwrap();
        }
    } else if topology != StaticTopology::None {
        loop {
            let c = net.receive(WAIT).unwrap();
            let what = match &c.kind {
                ControlKind::ConnectRequest { .. } => "connect".to_string(),
                ControlKind::Checkpoint { epoch, .. } => format!("epoch{epoch}"),
                ControlKind::ConnectReply { .. } => "reply".to_string(),
                ControlKind::Deadlock { .. } => "deadlock".to_string(),
            };
            received.push(format!("{what}/{}/{}", c.source, c.hops));
            if matches!(c.kind, ControlKind::Checkpoint { epoch: DONE, .. }) {
                break;
            }
        }
    }
    kvs.fence().unwrap();
    // Leaving in order: a link's end without a goodbye is a death to the
    // others, whose progress may still be reading.
    net.say_goodbye(WAIT);
    stop.store(true, Ordering::Release);
    progress.join().unwrap();
    let s = net.stats();
    println!(
        "process {me}: host {host} static {} ondemand {} sent {} forwarded {} delivered {} hops_max {} connected {:?} received {}",
        s.static_links,
        s.ondemand_links,
        s.sent,
        s.forwarded,
        s.delivered,
        s.hops_max,
        net.connected(),
        received.join(",")
    );
    kvs.finalize().unwrap();
}
