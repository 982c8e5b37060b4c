//! A token travels around the ring of ranks `laps` times; each rank adds 1.
//! Usage: ring [laps]

fn main() -> std::process::ExitCode {
    let laps: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    mpcrs::run(|world| -> mpcrs::Result<()> {
        let (me, n) = (world.rank(), world.size());
        let next = (me + 1) % n;
        let prev = (me + n - 1) % n;
        let mut token = [0u64];
        for _ in 0..laps {
            if me == 0 {
                token[0] += 1;
                world.send(&token, next, 7)?;
                world.recv(&mut token, prev, 7)?;
            } else {
                world.recv(&mut token, prev, 7)?;
                token[0] += 1;
                world.send(&token, next, 7)?;
            }
        }
        if me == 0 {
            println!("token after {laps} laps of {n} ranks: {}", token[0]);
            assert_eq!(token[0], laps * n as u64);
        }
        Ok(())
    })
}
