//! L3 over the in-memory transport: a group of four encodes images of uneven
//! sizes; any two members' images and parity lost (or corrupted) are rebuilt
//! byte-exact from the other two; three lost is refused, naming what is short.

use std::path::PathBuf;

use mpcrs_levels::erasure::{encode, rebuild, ParityHeader, Shards, CHUNK};
use mpcrs_levels::memory::MemoryNetwork;
use mpcrs_levels::Transport;

fn image(p: usize) -> Vec<u8> {
    let len = [2 * CHUNK + 5, 17, 0, CHUNK][p];
    (0..len).map(|i| (i * 7 + p * 31 + i / 251) as u8).collect()
}

struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn encoded(tag: &str) -> Dir {
    let dir =
        Dir(std::env::temp_dir().join(format!("mpcrs-levels-l3-{tag}-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&dir.0);
    std::fs::create_dir_all(&dir.0).unwrap();
    let ends = MemoryNetwork::new(4);
    let group = [0usize, 1, 2, 3];
    std::thread::scope(|s| {
        for t in &ends {
            let d = &dir.0;
            s.spawn(move || {
                let me = t.me();
                let img = d.join(format!("process-{me}.img"));
                std::fs::write(&img, image(me)).unwrap();
                let h = encode(t, &group, 5, &img, &d.join(format!("parity-{me}.rs"))).unwrap();
                assert_eq!(h.index, me);
                assert_eq!(
                    h.sizes,
                    (0..4).map(|p| image(p).len() as u64).collect::<Vec<_>>()
                );
            });
        }
    });
    dir
}

fn rebuild_without(dir: &std::path::Path, lost: &[usize]) -> std::io::Result<()> {
    let imgs: Vec<PathBuf> = (0..4)
        .map(|p| dir.join(format!("process-{p}.img")))
        .collect();
    let pars: Vec<PathBuf> = (0..4).map(|p| dir.join(format!("parity-{p}.rs"))).collect();
    let shards: Vec<Shards> = (0..4)
        .map(|i| Shards {
            image: (!lost.contains(&i)).then_some(imgs[i].as_path()),
            parity: (!lost.contains(&i)).then_some(pars[i].as_path()),
        })
        .collect();
    rebuild(&shards, lost, &|i| dir.join(format!("rebuilt-{i}.img")))
}

#[test]
fn any_half_of_the_group_is_rebuilt_byte_exact() {
    let dir = encoded("half");
    for lost in [vec![0, 1], vec![2, 3], vec![0, 3], vec![1]] {
        rebuild_without(&dir.0, &lost).unwrap();
        for &i in &lost {
            let got = std::fs::read(dir.0.join(format!("rebuilt-{i}.img"))).unwrap();
            assert_eq!(got, image(i), "member {i} rebuilt without {lost:?}");
        }
    }
    let h = ParityHeader::read(&dir.0.join("parity-2.rs")).unwrap();
    assert_eq!(
        (h.epoch, h.members.clone(), h.chunk),
        (5, vec![0, 1, 2, 3], CHUNK)
    );
}

#[test]
fn a_corrupt_parity_chunk_is_not_used_and_too_many_losses_are_refused() {
    let dir = encoded("corrupt");
    // Members 0 and 1 lost, and a byte of member 2's parity flipped: chunk 0
    // has only three intact shards.
    let p2 = dir.0.join("parity-2.rs");
    let mut bytes = std::fs::read(&p2).unwrap();
    let at = bytes.len() - 3 * CHUNK + 10; // inside parity chunk 0
    bytes[at] ^= 0x40;
    std::fs::write(&p2, &bytes).unwrap();
    let e = rebuild_without(&dir.0, &[0, 1]).unwrap_err();
    assert!(
        e.to_string()
            .contains("chunk 0: 3 intact shards of the 4 needed"),
        "{e}"
    );
    // One lost member still rebuilds around the corrupt chunk.
    rebuild_without(&dir.0, &[0]).unwrap();
    assert_eq!(
        std::fs::read(dir.0.join("rebuilt-0.img")).unwrap(),
        image(0)
    );
    // Three of four lost: refused.
    let e = rebuild_without(&dir.0, &[0, 1, 3]).unwrap_err();
    assert!(
        e.to_string().contains("intact shards of the 4 needed"),
        "{e}"
    );
}
