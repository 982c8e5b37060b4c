//! Agreement on which levels of an epoch are complete: a level counts only
//! once every process's part of it is durable. Each process tells process 0
//! the levels it finished; process 0 keeps those every process finished, and
//! records them (the runtime rewrites the epoch's manifest).

use std::io;

use crate::transport::{tag, Transport};
use crate::Level;

const WORK: u32 = 4;

/// Process 0 (the recorder) learns the levels of epoch `epoch` that every
/// process finished, given this process's `finished`; other processes get
/// `None` once they told it.
pub fn agree(t: &dyn Transport, epoch: u64, finished: &[Level]) -> io::Result<Option<Vec<Level>>> {
    let tag = tag(WORK, epoch);
    let mine: Vec<u8> = finished.iter().map(|l| l.number()).collect();
    if t.me() != 0 {
        t.send(0, tag, &mine)?;
        return Ok(None);
    }
    let mut common: Vec<Level> = finished.to_vec();
    for p in 1..t.processes() {
        let theirs = t.receive(p, tag)?;
        common.retain(|l| theirs.contains(&l.number()));
    }
    common.sort_unstable();
    Ok(Some(common))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::MemoryNetwork;
    use Level::*;

    #[test]
    fn a_level_is_complete_only_where_every_process_finished_it() {
        let ends = MemoryNetwork::new(3);
        let finished = [
            vec![Local, Partner, Global],
            vec![Local, Global, Partner],
            vec![Local, Partner],
        ];
        let results: Vec<_> = std::thread::scope(|s| {
            let hs: Vec<_> = ends
                .iter()
                .zip(&finished)
                .map(|(t, f)| s.spawn(move || agree(t, 5, f).unwrap()))
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(results[0], Some(vec![Local, Partner]));
        assert_eq!(results[1], None);
        assert_eq!(results[2], None);
    }
}
