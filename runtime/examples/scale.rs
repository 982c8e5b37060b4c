//! Per-rank costs at a given rank count, for scripts/bench/scale.sh: start-up,
//! barrier, allreduce, bcast and alltoall of 8 bytes, communicator dup and split,
//! a token's lap of the ring, and resident memory per rank.
//! Usage: scale [iters] [alltoall_max_ranks]
//! Prints one line of `key=value` fields; times in microseconds per call (the
//! slowest rank's), start-up in seconds since `SCALE_T0` (seconds since the epoch,
//! set by the caller just before the launch).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use mpcrs::{Communicator, Op};

/// The first rank of each process to finish reports that process's memory.
static RSS_TAKEN: AtomicBool = AtomicBool::new(false);

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

fn rss_kib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0.0)
}

/// The slowest rank's microseconds per call of `body`, run `iters` times after
/// a barrier.
fn per_call(
    world: &Communicator,
    iters: usize,
    mut body: impl FnMut() -> mpcrs::Result<()>,
) -> mpcrs::Result<f64> {
    body()?;
    world.barrier()?;
    let t0 = mpcrs::wtime();
    for _ in 0..iters {
        body()?;
    }
    let mine = [(mpcrs::wtime() - t0) / iters as f64 * 1e6];
    let mut slowest = [0.0];
    world.all_reduce(&mine, &mut slowest, &Op::Max)?;
    Ok(slowest[0])
}

fn main() -> std::process::ExitCode {
    let arg = |i: usize, default: usize| {
        std::env::args()
            .nth(i)
            .and_then(|s| s.parse().ok())
            .unwrap_or(default)
    };
    let iters = arg(1, 20).max(1);
    let alltoall_max = arg(2, 4096);
    let t_launch: Option<f64> = std::env::var("SCALE_T0").ok().and_then(|s| s.parse().ok());
    mpcrs::run(|world| -> mpcrs::Result<i32> {
        let (me, n) = (world.rank(), world.size());
        world.barrier()?;
        let started = [unix_now()];
        let mut last_start = [0.0];
        world.all_reduce(&started, &mut last_start, &Op::Max)?;

        let barrier = per_call(&world, iters, || world.barrier())?;
        let input = [me as f64];
        let mut sum = [0.0];
        let allreduce = per_call(&world, iters, || {
            world.all_reduce(&input, &mut sum, &Op::Sum)
        })?;
        let sum_ok = sum[0] == n as f64 * (n as f64 - 1.0) / 2.0;
        let mut word = [0u64];
        let bcast = per_call(&world, iters, || {
            word[0] = if me == 0 { 0x5ca1e } else { 0 };
            world.broadcast(&mut word, 0)
        })?;
        let bcast_ok = word[0] == 0x5ca1e;
        let alltoall = if n as usize <= alltoall_max {
            let send: Vec<u64> = (0..n as u64).map(|j| me as u64 * n as u64 + j).collect();
            let mut recv = vec![0u64; n as usize];
            let t = per_call(&world, iters.div_ceil(4), || {
                world.all_to_all(&send, &mut recv)
            })?;
            let ok = recv
                .iter()
                .enumerate()
                .all(|(j, &v)| v == j as u64 * n as u64 + me as u64);
            Some((t, ok))
        } else {
            None
        };
        let dup = per_call(&world, iters.div_ceil(4), || world.dup().map(drop))?;
        let split = per_call(&world, iters.div_ceil(4), || {
            world.split(Some(me % 2), -me).map(drop)
        })?;

        // A token's lap: n hops one after another.
        let (next, prev) = ((me + 1) % n, (me + n - 1) % n);
        let mut token = [0u64];
        let laps = 2;
        world.barrier()?;
        let t0 = mpcrs::wtime();
        for _ in 0..laps {
            if me == 0 {
                token[0] += 1;
                world.send(&token, next, 9)?;
                world.recv(&mut token, prev, 9)?;
            } else {
                world.recv(&mut token, prev, 9)?;
                token[0] += 1;
                world.send(&token, next, 9)?;
            }
        }
        let lap = (mpcrs::wtime() - t0) / laps as f64 * 1e6;
        let ring_ok = me != 0 || token[0] == laps * n as u64;

        world.barrier()?;
        let rss = if RSS_TAKEN.swap(true, Ordering::AcqRel) {
            0.0
        } else {
            rss_kib()
        };
        let mut total_rss = [0.0];
        world.reduce(&[rss], (me == 0).then_some(&mut total_rss[..]), &Op::Sum, 0)?;
        let ok = [(sum_ok && bcast_ok && ring_ok && alltoall.is_none_or(|a| a.1)) as i32];
        let mut all_ok = [0];
        world.reduce(
            &ok,
            (me == 0).then_some(&mut all_ok[..]),
            &Op::LogicalAnd,
            0,
        )?;
        if me == 0 {
            let startup = t_launch.map_or("-".into(), |t| format!("{:.3}", last_start[0] - t));
            let alltoall = alltoall.map_or("-".into(), |(t, _)| format!("{t:.1}"));
            println!(
                "ranks={n} startup_s={startup} barrier_us={barrier:.1} allreduce_us={allreduce:.1} \
                 bcast_us={bcast:.1} alltoall_us={alltoall} dup_us={dup:.1} split_us={split:.1} \
                 ring_lap_us={lap:.1} rss_kib_per_rank={:.1} {}",
                total_rss[0] / n as f64,
                if all_ok[0] == 1 { "ok" } else { "WRONG" }
            );
            return Ok(if all_ok[0] == 1 { 0 } else { 1 });
        }
        Ok(0)
    })
}
