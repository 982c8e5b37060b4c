//! The shm driver between two real processes: frames through the ring and one
//! cross-memory copy of a large buffer out of the other process.

use std::process::Command;
use std::sync::atomic::AtomicU32;
use std::time::{Duration, Instant};

use mpcrs_rails::shm::{read_remote, ShmRing};

fn frame(i: usize) -> Vec<u8> {
    (0..(i * 131) % 3000).map(|j| (i * 7 + j) as u8).collect()
}

#[test]
fn frames_and_a_large_single_copy_between_two_processes() {
    let name = format!("mpcrs-test-xproc-{}", std::process::id());
    let ring = ShmRing::create(&name, 1 << 16).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_shm-peer"))
        .arg(&name)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let next = || loop {
        if let Some(f) = ring.pop() {
            return f;
        }
        assert!(Instant::now() < deadline, "the peer process sent nothing");
        std::thread::sleep(Duration::from_micros(50));
    };
    let hello = String::from_utf8(next()).unwrap();
    let parts: Vec<usize> = hello.split(' ').map(|p| p.parse().unwrap()).collect();
    let mut big = vec![0u8; parts[2]];
    read_remote(parts[0] as i32, parts[1], &mut big).unwrap();
    assert!(big.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8));
    for i in 0..1000 {
        assert_eq!(next(), frame(i), "frame {i}");
    }
    ring.unlink().unwrap();
    assert!(child.wait().unwrap().success());
}

/// A reader asleep on its ring's bell (mpcrs_scheduler::bell) is woken by
/// the other process's first frame, long before its sleep would end.
#[test]
fn a_frame_from_another_process_rings_the_bell_of_a_sleeping_reader() {
    let name = format!("mpcrs-test-bell-{}", std::process::id());
    let ring = ShmRing::create(&name, 1 << 16).unwrap();
    // SAFETY (both arms): `ring` outlives every bell armed here.
    let mut bell = unsafe { ring.doorbell().arm() };
    let mut child = Command::new(env!("CARGO_BIN_EXE_shm-peer"))
        .arg(&name)
        .spawn()
        .unwrap();
    let own = AtomicU32::new(0);
    let t0 = Instant::now();
    while !ring.has_frame() {
        mpcrs_scheduler::bell::wait(&own, 0, &[bell], Some(Duration::from_secs(60)));
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "the other process's frames did not ring the bell"
        );
        // Armed again with the bell's new value (a return may be spurious).
        ring.doorbell().disarm();
        bell = unsafe { ring.doorbell().arm() };
    }
    ring.doorbell().disarm();
    // The peer sends on: take everything, or it never ends.
    let deadline = Instant::now() + Duration::from_secs(20);
    for _ in 0..1001 {
        while ring.pop().is_none() {
            assert!(
                Instant::now() < deadline,
                "the peer process stopped sending"
            );
            std::thread::yield_now();
        }
    }
    ring.unlink().unwrap();
    assert!(child.wait().unwrap().success());
}
