//! L2 over the in-memory transport: four processes on two hosts send their
//! images to their partners, who keep byte-exact copies.

use mpcrs_levels::memory::MemoryNetwork;
use mpcrs_levels::partner::{kept_by, receive_copy, send_copy, CHUNK};
use mpcrs_levels::placement::partners;
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
