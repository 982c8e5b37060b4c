//! 2-D heat diffusion (Jacobi) split by rows across ranks, as
//! ../shared/bench/heat.c: halo exchange with non-blocking calls, a max-residual
//! allreduce every 10 iterations, and a final checksum identical to the C version's
//! for the same size and iteration count. With a third argument it checkpoints
//! every that many iterations (`Communicator::checkpoint`, as heat.c built with
//! -DWITH_MPIX calls MPIX_Checkpoint), printing the same lines.
//! Usage: heat <kib_per_rank> <iterations> [checkpoint_every]

use mpcrs::{CrState, Op, PROC_NULL};

const COLS: usize = 512;

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: heat <kib_per_rank> <iterations> [checkpoint_every]");
        return std::process::ExitCode::from(2);
    }
    let kib: usize = args[1].parse().expect("kib_per_rank");
    let iters: usize = args[2].parse().expect("iterations");
    let every: usize = args
        .get(3)
        .map_or(0, |e| e.parse().expect("checkpoint_every"));
    mpcrs::run(|world| -> mpcrs::Result<()> {
        let (rank, size) = (world.rank(), world.size());
        let rows = (kib * 1024 / (COLS * 8)).max(1);
        let mut g = vec![0.0f64; (rows + 2) * COLS];
        let mut h = vec![0.0f64; (rows + 2) * COLS];
        for i in 1..=rows {
            for j in 0..COLS {
                g[i * COLS + j] =
                    ((rank as usize * rows + i) % 17) as f64 / 17.0 + (j % 13) as f64 / 13.0;
            }
        }
        if rank == 0 {
            g[..COLS].fill(100.0);
        }
        let up = if rank > 0 { rank - 1 } else { PROC_NULL };
        let down = if rank < size - 1 { rank + 1 } else { PROC_NULL };
        let t0 = mpcrs::wtime();
        for it in 0..iters {
            {
                let (top_halo, rest) = g.split_at_mut(COLS);
                let (interior, bottom_halo) = rest.split_at_mut(rows * COLS);
                let first_row = &interior[..COLS];
                let last_row = &interior[(rows - 1) * COLS..];
                mpcrs::scope(|s| -> mpcrs::Result<()> {
                    let reqs = vec![
                        world.irecv(s, top_halo, up, 0)?,
                        world.irecv(s, bottom_halo, down, 1)?,
                        world.isend(s, first_row, up, 1)?,
                        world.isend(s, last_row, down, 0)?,
                    ];
                    mpcrs::wait_all(reqs)?;
                    Ok(())
                })?;
            }
            if rank == 0 {
                g[..COLS].fill(100.0);
            }
            let mut local = 0.0f64;
            for i in 1..=rows {
                // Row slices of exactly COLS elements: no bounds checks in the loop.
                let above = &g[(i - 1) * COLS..i * COLS];
                let row = &g[i * COLS..(i + 1) * COLS];
                let below = &g[(i + 1) * COLS..(i + 2) * COLS];
                let out = &mut h[i * COLS..(i + 1) * COLS];
                for j in 1..COLS - 1 {
                    let v = 0.25 * (above[j] + below[j] + row[j - 1] + row[j + 1]);
                    out[j] = v;
                    let d = (v - row[j]).abs();
                    if d > local {
                        local = d;
                    }
                }
                out[0] = row[0];
                out[COLS - 1] = row[COLS - 1];
            }
            std::mem::swap(&mut g, &mut h);
            if it % 10 == 0 {
                let mut global = [0.0];
                world.all_reduce(&[local], &mut global, &Op::Max)?;
            }
            if every > 0 && (it + 1) % every == 0 && it + 1 < iters {
                let state = world.checkpoint();
                if rank == 0 {
                    match state {
                        CrState::Checkpoint => println!("checkpoint after iteration {}", it + 1),
                        CrState::Restart => println!("restarted after iteration {}", it + 1),
                        other => println!(
                            "checkpoint state {} after iteration {}",
                            other as i32,
                            it + 1
                        ),
                    }
                }
            }
        }
        let elapsed = mpcrs::wtime() - t0;
        let mut local_sum = 0.0f64;
        for i in 1..=rows {
            for j in 0..COLS {
                local_sum += g[i * COLS + j] * ((i + j) % 7 + 1) as f64;
            }
        }
        let mut sum = [0.0];
        world.reduce(
            &[local_sum],
            (rank == 0).then_some(&mut sum[..]),
            &Op::Sum,
            0,
        )?;
        if rank == 0 {
            println!("ranks {size} rows_per_rank {rows} iterations {iters} seconds {elapsed:.3}");
            println!("checksum {}", c_exp(sum[0]));
        }
        Ok(())
    })
}

/// Formats like C's `%.12e` (two-digit signed exponent), so outputs compare as text.
fn c_exp(x: f64) -> String {
    let s = format!("{x:.12e}");
    let (mantissa, exp) = s.split_once('e').expect("exponent");
    let e: i32 = exp.parse().expect("exponent digits");
    format!("{mantissa}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
}
