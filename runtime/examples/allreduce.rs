//! Time per MPI_Allreduce of `count` doubles (sum), as ../shared/bench/allreduce.c.
//! Usage: allreduce [count] [iters]; prints "ranks count us_per_call ok|WRONG".

use mpcrs::Op;

fn main() -> std::process::ExitCode {
    let mut args = std::env::args().skip(1);
    let count: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    let iters: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1000);
    mpcrs::run(|world| -> mpcrs::Result<i32> {
        let (me, n) = (world.rank(), world.size());
        let input: Vec<f64> = (0..count).map(|i| (me as usize + i) as f64).collect();
        let mut out = vec![0.0; count];
        for _ in 0..iters / 10 + 1 {
            world.all_reduce(&input, &mut out, &Op::Sum)?;
        }
        world.barrier()?;
        let t0 = mpcrs::wtime();
        for _ in 0..iters {
            world.all_reduce(&input, &mut out, &Op::Sum)?;
        }
        let t = (mpcrs::wtime() - t0) / iters as f64 * 1e6;
        let mut tmax = [0.0];
        world.reduce(&[t], (me == 0).then_some(&mut tmax[..]), &Op::Max, 0)?;
        let expect = n as f64 * (n as f64 - 1.0) / 2.0;
        let ok = [(out[0] == expect) as i32];
        let mut all_ok = [0];
        world.reduce(
            &ok,
            (me == 0).then_some(&mut all_ok[..]),
            &Op::LogicalAnd,
            0,
        )?;
        if me == 0 {
            println!(
                "{n} {count} {:.3} {}",
                tmax[0],
                if all_ok[0] == 1 { "ok" } else { "WRONG" }
            );
            return Ok(if all_ok[0] == 1 { 0 } else { 1 });
        }
        Ok(0)
    })
}
