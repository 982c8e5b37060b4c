//! Two-rank ping-pong, as ../shared/bench/pingpong.c: one-way latency (us) and
//! bandwidth (MB/s) per message size. Usage: pingpong [max_bytes]

fn main() -> std::process::ExitCode {
    let max: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(4 << 20);
    mpcrs::run(|world| -> mpcrs::Result<()> {
        let me = world.rank();
        if world.size() < 2 {
            eprintln!("pingpong needs 2 ranks");
            return Ok(());
        }
        let mut buf = vec![me as u8; max.max(1)];
        if me == 0 {
            println!("# bytes latency_us bandwidth_MBps");
        }
        let mut n = 0usize;
        loop {
            let iters = if n <= 65536 {
                2000
            } else if n <= 1 << 20 {
                200
            } else {
                50
            };
            let warm = iters / 10;
            let mut t0 = 0.0;
            world.barrier()?;
            for i in 0..iters + warm {
                if i == warm {
                    t0 = mpcrs::wtime();
                }
                if me == 0 {
                    world.send(&buf[..n], 1, 1)?;
                    world.recv(&mut buf[..n], 1, 1)?;
                } else if me == 1 {
                    world.recv(&mut buf[..n], 0, 1)?;
                    world.send(&buf[..n], 0, 1)?;
                }
            }
            let lat = (mpcrs::wtime() - t0) / iters as f64 / 2.0 * 1e6;
            if me == 0 {
                println!("{n} {lat:.3} {:.1}", n as f64 / lat);
            }
            if n == max {
                break;
            }
            n = if n == 0 { 1 } else { n * 4 };
            if n > max {
                n = max;
            }
        }
        Ok(())
    })
}
