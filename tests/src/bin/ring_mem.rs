//! A token goes once around a ring of all ranks; then every rank waits in a
//! barrier while rank 0 reads the process's resident memory. Prints
//! "rss_kib <n>" so a harness can derive the memory per idle rank.

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .expect("VmRSS")
}

fn main() -> std::process::ExitCode {
    mpcrs::run(|world| -> mpcrs::Result<()> {
        let (me, n) = (world.rank(), world.size());
        let mut token = [0u64];
        if n > 1 {
            if me == 0 {
                world.send(&[1u64], 1, 0)?;
                world.recv(&mut token, n - 1, 0)?;
                assert_eq!(token[0], n as u64, "token lost its way");
            } else {
                world.recv(&mut token, me - 1, 0)?;
                token[0] += 1;
                world.send(&token, (me + 1) % n, 0)?;
            }
        }
        if me == 0 {
            // Everyone else is parked in the barrier below (or about to be).
            mpcrs::sleep(std::time::Duration::from_millis(100));
            println!("ranks {n} rss_kib {}", rss_kib());
        }
        world.barrier()?;
        Ok(())
    })
}
