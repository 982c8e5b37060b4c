//! Checkpoints with messages in flight. Each round, every rank sends its right
//! neighbour two messages (WORDS 8-byte words, 1024 by default, and 8 bytes)
//! that the neighbour receives only after the checkpoint, so both are unmatched
//! when the image is taken; the neighbour checks every byte. The large one is
//! sent without waiting (a rendezvous between processes when it is over the
//! eager limit). Rank 0 prints each round's checkpoint state and a total that
//! does not depend on where the job was restarted.
//!
//! Usage: ckpt_pending ROUNDS PAUSE_MS [WORDS]

use std::time::Duration;

use mpcrs::{CrState, Op};

fn payload(from: i32, round: u64, words: u64) -> Vec<u64> {
    (0..words)
        .map(|i| (from as u64) * 1_000_003 + round * 7_919 + i)
        .collect()
}

fn main() -> std::process::ExitCode {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| {
            a.parse()
                .expect("usage: ckpt_pending ROUNDS PAUSE_MS [WORDS]")
        })
        .collect();
    let (rounds, pause) = (args[0], Duration::from_millis(args[1]));
    let words = args.get(2).copied().unwrap_or(1024);
    mpcrs::run(|world| -> mpcrs::Result<()> {
        let (me, n) = (world.rank(), world.size());
        let (right, left) = ((me + 1) % n, (me + n - 1) % n);
        let mut total = 0u64;
        for round in 0..rounds {
            let big = payload(me, round, words);
            let mut got = vec![0u64; words as usize];
            let mut small = [0u64];
            mpcrs::scope(|s| -> mpcrs::Result<()> {
                let pending = world.isend(s, &big, right, round as i32)?;
                world.send(&[round], right, 100_000 + round as i32)?;
                let state = world.checkpoint();
                if me == 0 {
                    let what = match state {
                        CrState::Checkpoint => "checkpoint",
                        CrState::Restart => "restarted",
                        CrState::Ignore => "ignore",
                        CrState::Error => "error",
                    };
                    println!("round {round}: {what}");
                }
                world.recv(&mut got, left, round as i32)?;
                world.recv(&mut small, left, 100_000 + round as i32)?;
                pending.wait()?;
                Ok(())
            })?;
            assert!(
                got == payload(left, round, words),
                "round {round}: payload from {left} differs"
            );
            assert_eq!(small[0], round);
            total += got.iter().sum::<u64>() + small[0];
            std::thread::sleep(pause);
        }
        let mut sum = [0u64];
        world.all_reduce(&[total], &mut sum, &Op::Sum)?;
        if me == 0 {
            println!("total {}", sum[0]);
        }
        Ok(())
    })
}
