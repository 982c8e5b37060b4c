//! The processes' transport of the storage levels: the first rank of each
//! process sends, around the ring of processes, messages of 0 B, 1 B, 1000 B
//! and SIZE bytes (default 4 MiB: a rendezvous) with distinct patterns, then
//! one small message to every other process under its own tag; each checks
//! every byte it gets. Prints "process P: transport ok (N processes)".
//! Usage: transport [SIZE]

use mpcrs_levels::Transport;

fn pattern(from: usize, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u64 * 31 + from as u64 * 7 + len as u64) as u8)
        .collect()
}

fn main() -> std::process::ExitCode {
    let big: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(4 << 20);
    mpcrs::run(|world| -> Result<(), String> {
        let cfg = mpcrs::JobConfig::from_env()?;
        if world.rank() as usize != cfg.local_ranks().start {
            return Ok(());
        }
        let t = world.process_transport();
        let (me, n) = (t.me(), t.processes());
        if (me, n) != (cfg.process, cfg.processes) {
            return Err(format!(
                "transport says {me} of {n}, the job {} of {}",
                cfg.process, cfg.processes
            ));
        }
        let sizes = [0, 1, 1000, big];
        if n > 1 {
            let (next, prev) = ((me + 1) % n, (me + n - 1) % n);
            let send = |tag: u32, len: usize| t.send(next, tag, &pattern(me, len));
            let receive = |tag: u32, len: usize| -> Result<(), String> {
                let got = t.receive(prev, tag).map_err(|e| e.to_string())?;
                if got != pattern(prev, len) {
                    return Err(format!(
                        "process {me}: message {tag} of {len} bytes from {prev} differs"
                    ));
                }
                Ok(())
            };
            for (tag, &len) in sizes.iter().enumerate() {
                // Sends wait for their receiver: even processes send first.
                if me % 2 == 0 {
                    send(tag as u32, len).map_err(|e| e.to_string())?;
                    receive(tag as u32, len)?;
                } else {
                    receive(tag as u32, len)?;
                    send(tag as u32, len).map_err(|e| e.to_string())?;
                }
            }
        }
        // Small messages to everyone (eager: sends do not wait), one tag per sender.
        for to in (0..n).filter(|&q| q != me) {
            t.send(to, 100 + me as u32, &pattern(me, 64))
                .map_err(|e| e.to_string())?;
        }
        for from in (0..n).filter(|&q| q != me) {
            let got = t
                .receive(from, 100 + from as u32)
                .map_err(|e| e.to_string())?;
            if got != pattern(from, 64) {
                return Err(format!("process {me}: small message from {from} differs"));
            }
        }
        if t.send(0, u32::MAX, b"").is_ok() {
            return Err("a tag above MPI's largest was accepted".into());
        }
        println!("process {me}: transport ok ({n} processes)");
        Ok(())
    })
}
