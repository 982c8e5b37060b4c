//! Heat diffusion checkpointed with `mpcrs::ft` (the Rust side of FTI's
//! model): the iteration, the grid and a history that grows at every
//! checkpoint are protected; after a restart they are recovered, the history
//! at its stored length. Usage: heat_ft CONFIG LEVEL ITERATIONS EVERY [DIE_AT]
//! With DIE_AT, rank 1 kills its own process (SIGKILL) once iteration DIE_AT
//! is done. Prints "recovered at iteration I" after a restart, then
//! "checksum X" (rank 0), X covering the grid and the history.

use std::path::Path;
use std::process::ExitCode;

use mpcrs::ft::{Ft, Var};
use mpcrs::{Communicator, Op, PROC_NULL};

const COLS: usize = 64;
const ROWS: usize = 32;

struct Args {
    config: String,
    level: i32,
    iterations: u64,
    every: u64,
    die_at: Option<u64>,
}

fn args() -> Option<Args> {
    let a: Vec<String> = std::env::args().skip(1).collect();
    Some(Args {
        config: a.first()?.clone(),
        level: a.get(1)?.parse().ok()?,
        iterations: a.get(2)?.parse().ok()?,
        every: a.get(3)?.parse().ok()?,
        die_at: a.get(4).and_then(|d| d.parse().ok()),
    })
}

fn heat(world: Communicator, a: &Args) -> Result<(), String> {
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let mut ft = Ft::init(Path::new(&a.config), &world).map_err(|x| e(&x))?;
    let (rank, size) = (world.rank(), world.size());
    let mut g = vec![0f64; (ROWS + 2) * COLS];
    let mut h = g.clone();
    for i in 1..=ROWS {
        for j in 0..COLS {
            g[i * COLS + j] = ((rank as usize * ROWS + i + j) % 11) as f64;
        }
    }
    let mut done = 0u64;
    let mut history: Vec<f64> = Vec::new();
    if ft.status().is_some() {
        ft.recover_value(0, &mut done).map_err(|x| e(&x))?;
        ft.recover_slice(1, &mut g).map_err(|x| e(&x))?;
        history = ft.recover_vec(2).map_err(|x| e(&x))?;
        if rank == 0 {
            println!("recovered at iteration {done}");
        }
    }
    let up = if rank > 0 { rank - 1 } else { PROC_NULL };
    let down = if rank < size - 1 { rank + 1 } else { PROC_NULL };
    while done < a.iterations {
        let (top, rest) = g.split_at_mut(COLS);
        let (inner, bottom) = rest.split_at_mut(ROWS * COLS);
        world
            .sendrecv(&inner[..COLS], up, 0, bottom, down, 0)
            .map_err(|x| e(&x))?;
        world
            .sendrecv(&inner[(ROWS - 1) * COLS..], down, 1, top, up, 1)
            .map_err(|x| e(&x))?;
        if rank == 0 {
            g[..COLS].fill(100.0);
        }
        for i in 1..=ROWS {
            for j in 1..COLS - 1 {
                h[i * COLS + j] = 0.25
                    * (g[(i - 1) * COLS + j]
                        + g[(i + 1) * COLS + j]
                        + g[i * COLS + j - 1]
                        + g[i * COLS + j + 1]);
            }
        }
        for i in 1..=ROWS {
            g[i * COLS + 1..(i + 1) * COLS - 1]
                .copy_from_slice(&h[i * COLS + 1..(i + 1) * COLS - 1]);
        }
        done += 1;
        if done.is_multiple_of(a.every) && done < a.iterations {
            history.push(g[COLS + COLS / 2]);
            let vars = [
                Var::value(0, &done),
                Var::slice(1, &g),
                Var::slice(2, &history),
            ];
            ft.checkpoint(&vars, a.level).map_err(|x| e(&x))?;
            if rank == 0 {
                println!("checkpoint after iteration {done}");
            }
        }
        if Some(done) == a.die_at && rank == 1 {
            // SAFETY: raise has no memory preconditions.
            unsafe { libc::raise(libc::SIGKILL) };
        }
    }
    let mut local = history.iter().sum::<f64>();
    for i in 1..=ROWS {
        for j in 0..COLS {
            local += g[i * COLS + j] * (1 + (rank as usize * ROWS + i) % 7) as f64;
        }
    }
    let mut sum = [0f64];
    let root = (rank == 0).then_some(&mut sum[..]);
    world
        .reduce(&[local], root, &Op::Sum, 0)
        .map_err(|x| e(&x))?;
    if rank == 0 {
        println!("checksum {:.12e} history {}", sum[0], history.len());
    }
    ft.finalize().map_err(|x| e(&x))
}

fn main() -> ExitCode {
    let Some(a) = args() else {
        eprintln!("usage: heat_ft CONFIG LEVEL ITERATIONS EVERY [DIE_AT]");
        return ExitCode::from(2);
    };
    mpcrs::run(|world| heat(world, &a))
}
