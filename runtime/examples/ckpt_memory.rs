//! Checkpoint and restore of a given amount of rank memory, for measuring the
//! application stall, the image write rate and the restore time.
//!
//! Usage: ckpt_memory <MiB in total over all ranks> [checkpoints]
//! Every rank fills its share with data that does not compress to holes, takes
//! the checkpoints (default one), and after a restart reads all of it back and
//! checks it.

use mpcrs::CrState;

fn value(rank: i32, i: usize) -> u64 {
    (rank as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)
        ^ (i as u64).wrapping_mul(0xbf58_476d_1ce4_e5b9)
}

fn main() -> std::process::ExitCode {
    let mib: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("usage: ckpt_memory <MiB in total> [checkpoints]");
    let count: usize = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    mpcrs::run(|world| {
        let me = world.rank();
        let words = (mib << 20) / 8 / world.size() as usize;
        let data: Vec<u64> = (0..words).map(|i| value(me, i)).collect();
        let mut state = CrState::Ignore;
        for _ in 0..count {
            state = world.checkpoint();
            if state == CrState::Restart {
                break;
            }
        }
        let started = std::time::Instant::now();
        let good = data.iter().enumerate().all(|(i, &v)| v == value(me, i));
        assert!(good, "rank {me}: memory differs after {state:?}");
        world.barrier().unwrap();
        if me == 0 {
            match state {
                CrState::Restart => println!(
                    "restarted: {mib} MiB checked in {:.3} s",
                    started.elapsed().as_secs_f64()
                ),
                other => println!("{other:?}: {mib} MiB"),
            }
        }
    })
}
