//! A token of `words` numbers travels around the ring of ranks `laps` times;
//! each rank adds 1 to every number. Tokens over 4096 words (32 KiB) go by
//! rendezvous between processes.
//! Usage: ring [laps] [words]

fn main() -> std::process::ExitCode {
    let arg = |i: usize, default: u64| {
        std::env::args()
            .nth(i)
            .and_then(|s| s.parse().ok())
            .unwrap_or(default)
    };
    let laps = arg(1, 1);
    let words = arg(2, 1).max(1) as usize;
    mpcrs::run(|world| -> mpcrs::Result<()> {
        let (me, n) = (world.rank(), world.size());
        let next = (me + 1) % n;
        let prev = (me + n - 1) % n;
        let mut token = vec![0u64; words];
        let add_one = |t: &mut [u64]| t.iter_mut().for_each(|w| *w += 1);
        for _ in 0..laps {
            if me == 0 {
                add_one(&mut token);
                world.send(&token, next, 7)?;
                world.recv(&mut token, prev, 7)?;
            } else {
                world.recv(&mut token, prev, 7)?;
                add_one(&mut token);
                world.send(&token, next, 7)?;
            }
        }
        if me == 0 {
            println!("token after {laps} laps of {n} ranks: {}", token[0]);
            assert!(token.iter().all(|&w| w == laps * n as u64));
        }
        Ok(())
    })
}
