//! The tiled multiply of tests/c/craas_matmul.c on the Rust API
//! (`mpcrs::craas`): two checkpoints taking turns by tile row ("mm-0",
//! "mm-1"), each holding the next tile row ("t"), C, and a running sum of
//! C's rows ("acc"); after a restart the ranks agree on the smallest tile
//! row any of them reached and restore the checkpoint that holds it.
//! Usage: craas_rust N TILE [DIE_AT]: with DIE_AT, every rank's commit of
//! that tile row is made durable (`craas::wait`), then rank 1 kills its own
//! process (SIGKILL). Prints "rank R resumed at tile row T" after a restore,
//! then "checksum X" (rank 0).

use std::process::ExitCode;

use mpcrs::{bytes_of, bytes_of_mut, craas, Communicator, Op};

fn name(t: u64) -> &'static str {
    if t % 2 == 1 {
        "mm-1"
    } else {
        "mm-0"
    }
}

fn multiply(world: Communicator, n: usize, tile: usize, die_at: Option<u64>) -> Result<(), String> {
    let e = |x: &dyn std::fmt::Display| x.to_string();
    let rank = world.rank() as usize;
    let a: Vec<f64> = (0..n * n)
        .map(|i| ((i * 7 + rank) % 13) as f64 / 13.0)
        .collect();
    let b: Vec<f64> = (0..n * n)
        .map(|i| ((i * 3 + 2 * rank) % 11) as f64 / 11.0)
        .collect();
    let mut c = vec![0f64; n * n];
    let mut acc = vec![0f64; n];
    let mut newest = 0i64;
    for k in [name(0), name(1)] {
        newest = newest.max(craas::rst_index(k, "t").map_err(|x| e(&x))?.unwrap_or(0));
    }
    let mut t = [0i64];
    world
        .all_reduce(&[newest], &mut t, &Op::Min)
        .map_err(|x| e(&x))?;
    let mut t = t[0] as u64;
    let restored = t;
    if t > 0 {
        let from = name(t);
        craas::rst_array(from, "C", bytes_of_mut(&mut c[..])).map_err(|x| e(&x))?;
        craas::rst_array(from, "acc", bytes_of_mut(&mut acc[..])).map_err(|x| e(&x))?;
        println!("rank {rank} resumed at tile row {t}");
    }
    while t < (n / tile) as u64 {
        let rows = t as usize * tile..(t as usize + 1) * tile;
        for i in rows {
            for j in 0..n {
                let s: f64 = (0..n).map(|k| a[i * n + k] * b[k * n + j]).sum();
                c[i * n + j] = s;
                acc[j] += s;
            }
        }
        t += 1;
        let ck = name(t);
        craas::ckpt_array(ck, "C", bytes_of(&c[..])).map_err(|x| e(&x))?;
        craas::ckpt_array(ck, "acc", bytes_of(&acc[..])).map_err(|x| e(&x))?;
        craas::ckpt_index(ck, "t", t as i64).map_err(|x| e(&x))?;
        craas::commit(ck).map_err(|x| e(&x))?;
        let dying = die_at == Some(t) && t > restored;
        if dying {
            craas::wait(ck).map_err(|x| e(&x))?;
        }
        world.barrier().map_err(|x| e(&x))?;
        if dying && rank == 1 {
            // SAFETY: kill(2) of this process.
            unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
        }
    }
    // Summed in the C program's order, so the checksums match.
    let mut local = 0f64;
    for (j, v) in acc.iter().enumerate() {
        local += v * (j % 5 + 1) as f64;
    }
    for (i, v) in c.iter().enumerate() {
        local += v * (i % 3) as f64;
    }
    let mut total = [0f64];
    let root = (rank == 0).then_some(&mut total[..]);
    world
        .reduce(&[local], root, &Op::Sum, 0)
        .map_err(|x| e(&x))?;
    if rank == 0 {
        println!("checksum {:.6}", total[0]);
    }
    Ok(())
}

fn main() -> ExitCode {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let (Some(n), Some(tile)) = (
        a.first().and_then(|x| x.parse().ok()),
        a.get(1).and_then(|x| x.parse().ok()),
    ) else {
        eprintln!("usage: craas_rust N TILE [DIE_AT]");
        return ExitCode::from(2);
    };
    let die_at = a.get(2).and_then(|x| x.parse().ok());
    mpcrs::run(|world| multiply(world, n, tile, die_at))
}
