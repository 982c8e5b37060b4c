//! Idle: every rank but 0 blocks in a receive while rank 0 sleeps for `seconds`;
//! rank 0 reads the process's CPU time from /proc before and after and prints the
//! share of one core the job used meanwhile. Usage: idle_wait [seconds]

fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..]
        .split_whitespace()
        .collect();
    // utime and stime, in clock ticks of 1/100 s (USER_HZ).
    (fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap()) / 100.0
}

fn main() -> std::process::ExitCode {
    let secs: f64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2.0);
    mpcrs::run(|world| -> mpcrs::Result<()> {
        let n = world.size();
        if world.rank() == 0 {
            // Let every other rank reach its receive and park.
            mpcrs::sleep(std::time::Duration::from_millis(200));
            let (c0, t0) = (cpu_seconds(), mpcrs::wtime());
            mpcrs::sleep(std::time::Duration::from_secs_f64(secs));
            let used = (cpu_seconds() - c0) / (mpcrs::wtime() - t0);
            println!(
                "idle cpu share: {:.4} cores over {secs} s with {} ranks blocked",
                used,
                n - 1
            );
            for r in 1..n {
                world.send(&[1u8], r, 0)?;
            }
        } else {
            let mut b = [0u8];
            world.recv(&mut b, 0, 0)?;
        }
        Ok(())
    })
}
