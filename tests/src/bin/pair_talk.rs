//! Only two ranks talk: `pair_talk A B` makes ranks A and B exchange messages of
//! 1 KB and 100 KB both ways (contents checked); every other rank does nothing.
//! Run with one rank per process to see which links the network opens.

fn main() -> std::process::ExitCode {
    let args: Vec<i32> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("rank numbers"))
        .collect();
    let (a, b) = (args[0], args[1]);
    mpcrs::run(|world| -> Result<(), String> {
        let me = world.rank();
        if me != a && me != b {
            return Ok(());
        }
        let peer = if me == a { b } else { a };
        for (round, len) in [1024usize, 100 * 1024]
            .into_iter()
            .cycle()
            .take(10)
            .enumerate()
        {
            let out: Vec<u8> = (0..len).map(|i| (i + round + me as usize) as u8).collect();
            let mut inp = vec![0u8; len];
            world
                .sendrecv(&out, peer, round as i32, &mut inp, peer, round as i32)
                .map_err(|e| e.to_string())?;
            if inp
                .iter()
                .enumerate()
                .any(|(i, &x)| x != (i + round + peer as usize) as u8)
            {
                return Err(format!("rank {me}: round {round} from {peer} differs"));
            }
        }
        if me == a {
            println!("ranks {a} and {b} exchanged 10 rounds");
        }
        Ok(())
    })
}
