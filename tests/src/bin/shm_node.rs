//! One of two processes exchanging frames over the shm rail (started by
//! `mpcrs-run -n 2 -p 2`): the rings are offered through the signaling network,
//! 2,000 frames of 0-200 KB go each way at once and are checked in order and
//! content, then process 0 lends a 4 MiB buffer that process 1 copies once with
//! a cross-memory read and acknowledges with a checksum.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mpcrs_rails::shm::read_remote;
use mpcrs_rails::shm_rail::ShmRail;
use mpcrs_signaling::{ControlKind, StaticTopology};
use mpcrs_tests::{join_job, JobProcess};

const WAIT: Duration = Duration::from_secs(30);
const FRAMES: usize = 2000;
const SHM_RAIL: u16 = 1;

fn frame(from: u32, i: usize) -> Vec<u8> {
    let len = (i * 7919 + from as usize * 104_729) % 200_000;
    (0..len)
        .map(|j| (j * 31 + i + from as usize) as u8)
        .collect()
}

fn big() -> Vec<u8> {
    (0..4 << 20).map(|i: usize| (i % 253) as u8).collect()
}

fn checksum(b: &[u8]) -> u64 {
    b.iter()
        .fold(0u64, |a, &x| a.wrapping_mul(31).wrapping_add(x as u64))
}

fn main() {
    let JobProcess {
        mut kvs,
        me,
        count,
        net,
        ..
    } = join_job(StaticTopology::Ring, WAIT);
    assert_eq!(count, 2);
    let peer = 1 - me;
    let job = kvs.job_id().unwrap();
    let inbox: Arc<Mutex<VecDeque<Vec<u8>>>> = Arc::default();
    let sink_inbox = inbox.clone();
    let rail = Arc::new(ShmRail::new(
        &job,
        me,
        count,
        Box::new(move |_from, f| sink_inbox.lock().unwrap().push_back(f.to_vec())),
    ));
    // Offer our ring, accept the peer's.
    let name = rail.create_outgoing(peer).unwrap();
    net.send(
        peer,
        ControlKind::ConnectRequest {
            rail: SHM_RAIL,
            address: name,
        },
    )
    .unwrap();
    match net.receive(WAIT).unwrap().kind {
        ControlKind::ConnectRequest {
            rail: SHM_RAIL,
            address,
        } => rail.accept_incoming(peer, &address).unwrap(),
        other => panic!("expected the peer's shm ring, got {other:?}"),
    }
    let stop = Arc::new(AtomicBool::new(false));
    let progress = {
        let (rail, stop) = (rail.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Acquire) {
                if !rail.progress() {
                    std::thread::yield_now();
                }
            }
        })
    };
    let next = || {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(f) = inbox.lock().unwrap().pop_front() {
                return f;
            }
            assert!(Instant::now() < deadline, "process {me}: nothing arrived");
            std::thread::yield_now();
        }
    };
    let sender = {
        let rail = rail.clone();
        std::thread::spawn(move || {
            for i in 0..FRAMES {
                rail.send(peer, &frame(me, i)).unwrap();
            }
        })
    };
    let mut bytes = 0;
    for i in 0..FRAMES {
        let f = next();
        assert!(
            f == frame(peer, i),
            "process {me}: frame {i} from {peer} differs"
        );
        bytes += f.len();
    }
    sender.join().unwrap();
    // One copy of a large buffer, by reference.
    let verdict = if me == 0 {
        let buf = big();
        let note = format!(
            "{} {} {}",
            std::process::id(),
            buf.as_ptr() as usize,
            buf.len()
        );
        rail.send(peer, note.as_bytes()).unwrap();
        let ack = String::from_utf8(next()).unwrap();
        assert_eq!(ack, format!("ack {}", checksum(&buf)));
        drop(buf);
        "lent 4194304 bytes"
    } else {
        let note = String::from_utf8(next()).unwrap();
        let v: Vec<usize> = note.split(' ').map(|x| x.parse().unwrap()).collect();
        let mut copy = vec![0u8; v[2]];
        read_remote(v[0] as i32, v[1], &mut copy).unwrap();
        assert!(copy == big(), "the cross-memory copy differs");
        rail.send(peer, format!("ack {}", checksum(&copy)).as_bytes())
            .unwrap();
        "copied 4194304 bytes once"
    };
    kvs.fence().unwrap();
    stop.store(true, Ordering::Release);
    progress.join().unwrap();
    println!("process {me}: received {FRAMES} frames ({bytes} bytes) in order; {verdict}");
    kvs.finalize().unwrap();
}
