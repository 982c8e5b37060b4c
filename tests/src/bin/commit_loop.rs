//! Commits checkpoint epochs in a loop until killed: each epoch holds three
//! 1 MiB "images" filled with the epoch number and a manifest naming it.
//! Usage: commit_loop DIR

use mpcrs_cr::commit::{write_durably, CheckpointDir};

fn main() {
    let root = std::env::args().nth(1).expect("usage: commit_loop DIR");
    let dir = CheckpointDir::create(std::path::Path::new(&root)).unwrap();
    loop {
        let k = dir.next_epoch().unwrap();
        let e = dir.begin(k).unwrap();
        let fill = vec![(k % 251) as u8; 1 << 20];
        for p in 0..3 {
            write_durably(e.dir(), &format!("process-{p}.img"), &fill).unwrap();
        }
        e.commit(format!("epoch {k}\n").as_bytes()).unwrap();
        dir.prune(2).unwrap();
    }
}
