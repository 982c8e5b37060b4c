//! Collective access aggregated per process: the ranks of a process that
//! share an opening hand their pieces (file offset, bytes, buffer) to a
//! round; the last to arrive sorts them, joins pieces that meet into runs
//! and moves each run with one vectored call straight between the file and
//! the ranks' buffers. Ranks of one process share an address space, so no
//! byte is copied or sent between them; processes access the file
//! independently of one another.
//!
//! Rounds are numbered by each rank's count of collective calls on the
//! file: a rank's calls meet the same calls of the other ranks, also when a
//! non-blocking one runs in a helper after the rank went on.

use std::collections::HashMap;

use mpcrs::ErrorClass;
use mpcrs_scheduler::sync::{Condvar, Mutex};

use crate::sys;

/// A contiguous piece of one rank's access.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Piece {
    pub(crate) at: u64,
    pub(crate) len: u64,
    /// The rank's buffer for these bytes.
    pub(crate) buf: usize,
}

/// What a round did, as every rank of it sees it.
#[derive(Clone, Debug)]
pub(crate) struct Outcome {
    pub(crate) result: Result<(), (ErrorClass, String)>,
    /// The file's size after a read: where a rank's data stopped.
    pub(crate) end: u64,
}

#[derive(Default)]
struct Round {
    pieces: Vec<Piece>,
    arrived: usize,
    outcome: Option<Outcome>,
    left: usize,
}

/// The rounds of one opening in this process.
pub(crate) struct Rounds {
    members_here: usize,
    open: Mutex<HashMap<u64, Round>>,
    finished: Condvar,
}

/// What one access does and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Read,
    Write,
}

/// Runs at least this large leave the worker to the blocking pool: the
/// other ranks of the worker run meanwhile.
const BLOCKING_BYTES: u64 = 1 << 20;

/// Rounds this large are moved by one thread per CPU, each a share of at
/// least this much: one thread copies into the page cache at about a GB/s
/// here, where several processes of a peer MPI would each copy their own.
const SHARE_BYTES: u64 = 16 << 20;

impl Rounds {
    pub(crate) fn new(members_here: usize) -> Rounds {
        Rounds {
            members_here,
            open: Mutex::new(HashMap::new()),
            finished: Condvar::new(),
        }
    }

    /// Takes part in round `number` with `pieces`; returns once the round's
    /// access is done (by whichever rank arrived last).
    pub(crate) fn take_part(
        &self,
        number: u64,
        pieces: &[Piece],
        dir: Direction,
        fd: i32,
        atomic: Option<&Mutex<()>>,
    ) -> Outcome {
        let mut open = self.open.lock();
        let r = open.entry(number).or_default();
        r.pieces.extend_from_slice(pieces);
        r.arrived += 1;
        if r.arrived == self.members_here {
            let all = std::mem::take(&mut r.pieces);
            drop(open);
            let outcome = perform(&all, dir, fd, atomic);
            open = self.open.lock();
            let r = open
                .get_mut(&number)
                .expect("the round waits for its outcome");
            r.outcome = Some(outcome);
            r.left = self.members_here;
            self.finished.notify_all();
        }
        let mut open = self.finished.wait_while(open, |o| {
            o.get(&number).is_some_and(|r| r.outcome.is_none())
        });
        let r = open
            .get_mut(&number)
            .expect("the round is kept until every rank left");
        let outcome = r.outcome.clone().expect("waited for");
        r.left -= 1;
        if r.left == 0 {
            open.remove(&number);
        }
        outcome
    }
}

/// A piece's buffer, handed to the blocking pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Io(u64, u64, usize);
// SAFETY: the buffers belong to ranks waiting for the round: nothing else
// touches them until it ends.
unsafe impl Send for Io {}

/// Moves the pieces: sorted by file offset, those that meet as one run.
fn perform(pieces: &[Piece], dir: Direction, fd: i32, atomic: Option<&Mutex<()>>) -> Outcome {
    let mut io: Vec<Io> = pieces
        .iter()
        .filter(|p| p.len > 0)
        .map(|p| Io(p.at, p.len, p.buf))
        .collect();
    // Stable: pieces at one offset keep their ranks' order.
    io.sort_by_key(|p| p.0);
    let total: u64 = io.iter().map(|p| p.1).sum();
    let _held = atomic.map(|m| m.lock());
    let span = io
        .first()
        .map(|f| (f.0, io.iter().map(|p| p.0 + p.1).max().unwrap() - f.0));
    let locked = match (atomic, span) {
        (Some(_), Some((at, len))) => {
            Some(sys::record_lock(fd, dir == Direction::Write, at, len, true).map(|()| (at, len)))
        }
        _ => None,
    };
    if let Some(Err(e)) = locked {
        return Outcome {
            result: Err(e),
            end: 0,
        };
    }
    let shares = split(io, total);
    let work = move || match shares.as_slice() {
        [one] => move_runs(one, dir, fd),
        _ => std::thread::scope(|s| {
            let movers: Vec<_> = shares
                .iter()
                .map(|share| s.spawn(move || move_runs(share, dir, fd)))
                .collect();
            movers
                .into_iter()
                .map(|m| m.join().expect("a mover thread does not panic"))
                .collect()
        }),
    };
    let result = if total >= BLOCKING_BYTES {
        mpcrs_scheduler::run_blocking(work)
    } else {
        work()
    };
    if let Some(Ok((at, len))) = locked {
        let _ = sys::record_lock(fd, false, at, len, false);
    }
    let end = match (dir, &result) {
        (Direction::Read, Ok(())) => sys::size_of(fd).unwrap_or(u64::MAX),
        _ => u64::MAX,
    };
    Outcome { result, end }
}

/// The pieces cut into shares of about equal bytes, one per CPU, each at
/// least [`SHARE_BYTES`] (a single share below that).
fn split(io: Vec<Io>, total: u64) -> Vec<Vec<Io>> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let k = cpus.min(total / SHARE_BYTES).max(1);
    if k == 1 {
        return vec![io];
    }
    let per = total.div_ceil(k);
    let mut shares = vec![Vec::new()];
    let mut room = per;
    for Io(mut at, mut len, mut buf) in io {
        while len > 0 {
            if room == 0 {
                shares.push(Vec::new());
                room = per;
            }
            let take = len.min(room);
            shares
                .last_mut()
                .expect("one share at least")
                .push(Io(at, take, buf));
            at += take;
            buf += take as usize;
            len -= take;
            room -= take;
        }
    }
    shares
}

fn move_runs(io: &[Io], dir: Direction, fd: i32) -> Result<(), (ErrorClass, String)> {
    let mut i = 0;
    while i < io.len() {
        let start = io[i].0;
        let mut end = start + io[i].1;
        let mut j = i + 1;
        while j < io.len() && io[j].0 == end {
            end += io[j].1;
            j += 1;
        }
        let how = match dir {
            Direction::Read => sys::Transfer::Read,
            Direction::Write => sys::Transfer::Write,
        };
        let v: Vec<(*mut u8, usize)> = io[i..j]
            .iter()
            .map(|p| (p.2 as *mut u8, p.1 as usize))
            .collect();
        // SAFETY: each piece names a waiting rank's buffer of its length.
        unsafe { sys::transfer_all(fd, how, &v, start)? };
        i = j;
    }
    Ok(())
}

/// Bytes of a rank's read pieces that lie before the file's end `end`, in
/// stream order until the first that does not.
pub(crate) fn bytes_read(pieces: &[Piece], end: u64) -> u64 {
    let mut n = 0;
    for p in pieces {
        let here = end.saturating_sub(p.at).min(p.len);
        n += here;
        if here < p.len {
            break;
        }
    }
    n
}

/// An independent access: the rank's own pieces, by the same means.
pub(crate) fn alone(
    pieces: &[Piece],
    dir: Direction,
    fd: i32,
    atomic: Option<&Mutex<()>>,
) -> Outcome {
    perform(pieces, dir, fd, atomic)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_cover_every_byte_once_in_order() {
        let io: Vec<Io> = (0..5)
            .map(|i| Io(i * 40 << 20, 40 << 20, 0x1000 + (i as usize) * (40 << 20)))
            .collect();
        let total = 200 << 20;
        let shares = split(io.clone(), total);
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(shares.len(), cpus.min(12));
        let flat: Vec<Io> = shares.concat();
        assert_eq!(flat.iter().map(|p| p.1).sum::<u64>(), total);
        // Cut pieces continue one another in the file and in memory.
        let mut at = 0;
        for p in &flat {
            assert_eq!(p.0, at);
            assert_eq!(p.2 as u64, 0x1000 + at);
            at += p.1;
        }
        assert_eq!(split(io[..1].to_vec(), 8 << 20).len(), 1);
    }
}
