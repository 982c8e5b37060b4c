//! Rail-level ping-pong between the two processes of `mpcrs-run -n 2 -p 2`: raw
//! frames over the shm rail and over the tcp rail (no MPI matching on top).
//! Prints one-way latency for 8-byte frames and bandwidth for 256 KiB frames.
//! Usage: rail_pingpong [iterations]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mpcrs_rails::shm_rail::ShmRail;
use mpcrs_rails::tcp::TcpRail;
use mpcrs_signaling::{ControlKind, StaticTopology};
use mpcrs_tests::{join_job, JobProcess};

const WAIT: Duration = Duration::from_secs(30);

type Inbox = Arc<Mutex<VecDeque<Vec<u8>>>>;

/// One rail as the measurement sees it: send to the peer, poll for a frame.
trait Link {
    fn send(&self, frame: &[u8]);
    fn poll(&self) -> Option<Vec<u8>>;
    fn recv(&self) -> Vec<u8> {
        loop {
            if let Some(f) = self.poll() {
                return f;
            }
        }
    }
}

struct Shm(Arc<ShmRail>, u32, Inbox);
impl Link for Shm {
    fn send(&self, frame: &[u8]) {
        self.0.send(self.1, frame).unwrap()
    }
    fn poll(&self) -> Option<Vec<u8>> {
        self.0.progress();
        self.2.lock().unwrap().pop_front()
    }
}

struct Tcp(TcpRail, usize, Inbox);
impl Link for Tcp {
    fn send(&self, frame: &[u8]) {
        self.0.send(self.1, frame).unwrap()
    }
    fn poll(&self) -> Option<Vec<u8>> {
        self.0.progress().unwrap();
        self.2.lock().unwrap().pop_front()
    }
}

fn measure(name: &str, me: u32, link: &dyn Link, iters: usize) {
    let small = [7u8; 8];
    let big = vec![1u8; 256 * 1024];
    for (what, frame, n) in [("latency", &small[..], iters), ("bandwidth", &big[..], 400)] {
        // Warm up, then time n round trips.
        for round in 0..2 {
            let count = if round == 0 { n / 10 + 1 } else { n };
            let t0 = Instant::now();
            for _ in 0..count {
                if me == 0 {
                    link.send(frame);
                    link.recv();
                } else {
                    link.recv();
                    link.send(frame);
                }
            }
            let secs = t0.elapsed().as_secs_f64();
            if round == 1 && me == 0 {
                if what == "latency" {
                    println!(
                        "{name} latency 8 B one-way {:.2} us",
                        secs / count as f64 / 2.0 * 1e6
                    );
                } else {
                    let mb = (2 * count * frame.len()) as f64 / 1e6;
                    println!("{name} bandwidth 256 KiB frames {:.0} MB/s", mb / secs);
                }
            }
        }
    }
}

fn main() {
    let iters: usize = std::env::args()
        .nth(1)
        .map_or(20_000, |a| a.parse().unwrap());
    let JobProcess {
        mut kvs,
        secret,
        me,
        host,
        net,
        ..
    } = join_job(StaticTopology::Ring, WAIT);
    let peer = 1 - me;
    let job = kvs.job_id().unwrap();

    let shm_inbox: Inbox = Arc::default();
    let sink = shm_inbox.clone();
    let shm = Arc::new(ShmRail::new(
        &job,
        me,
        2,
        Box::new(move |_, f| sink.lock().unwrap().push_back(f.to_vec())),
    ));
    let tcp_inbox: Inbox = Arc::default();
    let sink = tcp_inbox.clone();
    let tcp = TcpRail::bind(
        host,
        &secret,
        Box::new(move |_, f| sink.lock().unwrap().push_back(f)),
    )
    .unwrap();
    // Offer both: our shm ring, and (from process 0) the tcp address to connect to.
    let ring = shm.create_outgoing(peer).unwrap();
    net.send(
        peer,
        ControlKind::ConnectRequest {
            rail: 1,
            address: ring,
        },
    )
    .unwrap();
    net.send(
        peer,
        ControlKind::ConnectRequest {
            rail: 2,
            address: tcp.address().to_string(),
        },
    )
    .unwrap();
    let mut tcp_peer = None;
    for _ in 0..2 {
        match net.receive(WAIT).unwrap().kind {
            ControlKind::ConnectRequest { rail: 1, address } => {
                shm.accept_incoming(peer, &address).unwrap()
            }
            ControlKind::ConnectRequest { rail: 2, address } => tcp_peer = Some(address),
            other => panic!("unexpected {other:?}"),
        }
    }
    // Process 0 opens the tcp connection; process 1 uses the one it accepts.
    // Both drive the rail until the link's handshake is over.
    let tcp_ep = if me == 0 {
        tcp.connect(tcp_peer.unwrap().parse().unwrap()).unwrap()
    } else {
        0
    };
    while tcp.endpoints() == 0 {
        tcp.progress().unwrap();
    }
    kvs.fence().unwrap();
    measure("shm", me, &Shm(shm.clone(), peer, shm_inbox), iters);
    measure("tcp", me, &Tcp(tcp, tcp_ep, tcp_inbox), iters / 4);
    kvs.fence().unwrap();
    kvs.finalize().unwrap();
}
