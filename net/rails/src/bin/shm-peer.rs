//! Test peer of the shm driver (tests/shm.rs): opens the ring named by its first
//! argument, publishes the address of a 1 MiB buffer for a cross-memory read, then
//! sends 1000 frames, and stays alive until the reader is done.

use std::time::Duration;

use mpcrs_rails::shm::ShmRing;

/// The frames the test expects, in order.
fn frame(i: usize) -> Vec<u8> {
    (0..(i * 131) % 3000).map(|j| (i * 7 + j) as u8).collect()
}

fn main() {
    let name = std::env::args().nth(1).expect("usage: shm-peer RING_NAME");
    let ring = ShmRing::open(&name).expect("open ring");
    let big: Vec<u8> = (0..(1 << 20)).map(|i| (i % 251) as u8).collect();
    let hello = format!(
        "{} {} {}",
        std::process::id(),
        big.as_ptr() as usize,
        big.len()
    );
    assert!(ring.push(hello.as_bytes()));
    for i in 0..1000 {
        while !ring.push(&frame(i)) {
            std::thread::yield_now();
        }
    }
    std::thread::sleep(Duration::from_secs(2));
    drop(big);
}
