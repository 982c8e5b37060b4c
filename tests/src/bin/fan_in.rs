//! Fan-in: every rank but 0 sends `count` small messages to rank 0 (tags 0-2,
//! every fifth one synchronous), each carrying its sender's sequence number for
//! its tag. Rank 0 takes them with blocking receives into a small buffer, the
//! receives that wait in the mailbox itself while senders race to fill it:
//! first from MPI_ANY_SOURCE, then naming one source after another with
//! MPI_ANY_TAG (the other senders' messages pile up meanwhile). Every message
//! must come in its sender's order for its tag, none lost or duplicated.
//! Usage: fan_in [count]

use mpcrs::{ANY_SOURCE, ANY_TAG};

const TAGS: i32 = 3;

fn main() -> std::process::ExitCode {
    let count: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(5000);
    mpcrs::run(|world| -> Result<(), String> {
        let (me, n) = (world.rank(), world.size());
        let e = |e: mpcrs::Error| e.to_string();
        if me != 0 {
            let mut next = [0u64; TAGS as usize];
            for i in 0..count {
                let tag = (i % TAGS as u64) as i32;
                let msg = [me as u64, tag as u64, next[tag as usize]];
                next[tag as usize] += 1;
                if i % 5 == 4 {
                    world.ssend(&msg, 0, tag).map_err(e)?;
                } else {
                    world.send(&msg, 0, tag).map_err(e)?;
                }
            }
            return world.barrier().map_err(e);
        }
        let senders = (n - 1) as u64;
        let mut next = vec![[0u64; TAGS as usize]; n as usize];
        let take =
            |next: &mut Vec<[u64; TAGS as usize]>, source: i32, tag: i32| -> Result<i32, String> {
                let mut msg = [0u64; 3];
                let st = world.recv(&mut msg, source, tag).map_err(e)?;
                let (from, t, seq) = (msg[0] as usize, msg[1] as usize, msg[2]);
                if from != st.source as usize || t != st.tag as usize {
                    return Err(format!(
                        "status says {} tag {}, message {from} tag {t}",
                        st.source, st.tag
                    ));
                }
                if seq != next[from][t] {
                    return Err(format!(
                        "from {from} tag {t}: message {seq} arrived when {} was due",
                        next[from][t]
                    ));
                }
                next[from][t] += 1;
                Ok(st.source)
            };
        // Half from anyone, then the rest source by source.
        for _ in 0..senders * count / 2 {
            take(&mut next, ANY_SOURCE, ANY_TAG)?;
        }
        for source in 1..n {
            let got: u64 = next[source as usize].iter().sum();
            for _ in got..count {
                take(&mut next, source, ANY_TAG)?;
            }
        }
        world.barrier().map_err(e)?;
        println!(
            "fan_in ok: {} messages from {senders} ranks in order",
            senders * count
        );
        Ok(())
    })
}
