//! L2 over the in-memory transport: four processes on two hosts send their
//! images to their partners, who keep byte-exact copies.

use mpcrs_levels::memory::MemoryNetwork;
use mpcrs_levels::partner::{kept_by, receive_copy, send_copy, CHUNK};
use mpcrs_levels::placement::partners;
use std::sync::atomic::{AtomicU32, Ordering};

use mpcrs_levels::Transport;

fn image(p: usize) -> Vec<u8> {
    // Sizes around the chunk: empty, smaller, exact, larger.
    let len = [0, 1000, CHUNK, 3 * CHUNK + 17][p];
    (0..len).map(|i| (i * 13 + p) as u8).collect()
}

#[test]
fn partners_keep_byte_exact_copies() {
    let dir = std::env::temp_dir().join(format!("mpcrs-levels-partner-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let hosts = [0u32, 0, 1, 1];
    let partner = partners(&hosts);
    let ends = MemoryNetwork::new(4);
    std::thread::scope(|s| {
        for t in &ends {
            let (dir, partner) = (&dir, &partner);
            s.spawn(move || {
                let me = t.me();
                let own = dir
                    .join(format!("h{}", hosts[me]))
                    .join(format!("process-{me}.img"));
                std::fs::create_dir_all(own.parent().unwrap()).unwrap();
                std::fs::write(&own, image(me)).unwrap();
                std::thread::scope(|s2| {
                    // Receiving apart from sending, as two helpers would.
                    let r = s2.spawn(|| {
                        for from in kept_by(partner, me) {
                            let dest = own.with_file_name(format!("partner-of-{from}.img"));
                            let n = receive_copy(t, from, 7, &dest).unwrap();
                            assert_eq!(n, image(from).len() as u64);
                        }
                    });
                    send_copy(t, partner[me].unwrap(), 7, &own).unwrap();
                    r.join().unwrap();
                });
            });
        }
    });
    for p in 0..4 {
        let q = partner[p].unwrap();
        assert_ne!(hosts[p], hosts[q]);
        let copy = dir
            .join(format!("h{}", hosts[q]))
            .join(format!("partner-of-{p}.img"));
        assert_eq!(
            std::fs::read(&copy).unwrap(),
            image(p),
            "copy of {p} kept by {q}"
        );
        assert!(!copy.with_extension("partial").exists());
    }
    // A missing image is an error naming it.
    let e = send_copy(&ends[0], 1, 8, &dir.join("nothing.img")).unwrap_err();
    assert!(e.to_string().contains("nothing.img"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Stops after the first chunk, as helpers do when the next checkpoint begins.
struct StopsEarly<'a>(&'a mpcrs_levels::memory::MemoryTransport, AtomicU32);

impl mpcrs_levels::Io for StopsEarly<'_> {
    fn pause(&self) {
        self.1.fetch_add(1, Ordering::Relaxed);
    }
    fn stopped(&self) -> bool {
        self.1.load(Ordering::Relaxed) >= 1
    }
}

impl Transport for StopsEarly<'_> {
    fn me(&self) -> usize {
        self.0.me()
    }
    fn processes(&self) -> usize {
        self.0.processes()
    }
    fn send(&self, to: usize, tag: u32, data: &[u8]) -> std::io::Result<()> {
        self.0.send(to, tag, data)
    }
    fn receive(&self, from: usize, tag: u32) -> std::io::Result<Vec<u8>> {
        self.0.receive(from, tag)
    }
}

#[test]
fn a_stopped_copy_leaves_nothing_under_its_name_on_either_side() {
    let dir = std::env::temp_dir().join(format!("mpcrs-levels-stop-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let img = dir.join("process-0.img");
    std::fs::write(&img, vec![7u8; 3 * CHUNK]).unwrap();
    let ends = MemoryNetwork::new(2);
    let dest = dir.join("partner-of-0.img");
    std::thread::scope(|s| {
        let r = s.spawn(|| receive_copy(&ends[1], 0, 1, &dest));
        let sender = StopsEarly(&ends[0], AtomicU32::new(0));
        let e = send_copy(&sender, 1, 1, &img).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::Interrupted);
        let e = r.join().unwrap().unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::Interrupted);
    });
    assert!(!dest.exists() && !dest.with_extension("partial").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
