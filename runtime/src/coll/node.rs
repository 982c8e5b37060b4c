//! Collectives among the processes of one node through a shared-memory area per
//! communicator: each process's speaker (see [`super::tiers`]) has a slot of the
//! area where it announces its arrival at a round and leaves its data; the others
//! read it there. One arrival per process and round instead of ⌈log2 P⌉ message
//! exchanges: where processes outnumber CPUs each needs to run once, not once per
//! exchange.
//!
//! Used for communicators all of whose processes are on this node and whose
//! network has a shared-memory rail, in jobs that take no checkpoints (a snapshot
//! could stop a rank in the middle of a round whose other slots are in no image);
//! the area is named after the job and the communicator's context, and leaves
//! /dev/shm once every process mapped it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mpcrs_scheduler::bell::Doorbell;
use mpcrs_scheduler::sync::{poll_until, spin_until, DEFAULT_POLL};

use super::{temp, Reduction};

/// Bytes of data a slot holds per round; larger operations go by messages.
pub(crate) const DATA_MAX: usize = 4096;
/// Data up to this size travels in the cache line that announces the arrival.
const INLINE_MAX: usize = 48;

/// Looks at the other processes' lines this many times before driving the
/// network in between (a look costs a cache line, a network round much more).
const SPINS: u32 = 4096;
/// After this long waiting for the other processes, check between short sleeps.
const PATIENCE: Duration = Duration::from_millis(2);
const NAP: Duration = Duration::from_micros(50);
/// After this long (a process is held elsewhere: a checkpoint, file I/O), the
/// naps grow to at most a two-hundredth of the wait so far, and the CPU goes
/// to whoever can use it (on a 2-CPU machine, the kernel's writeback threads).
const LONG_WAIT: Duration = Duration::from_millis(100);
const LONG_NAP: Duration = Duration::from_micros(500);
/// Where processes share CPUs, the longest sleep on the bell: what a missed
/// ring costs at most.
const BELL_NAP: Duration = Duration::from_millis(1);

/// Rounds this process went through in node areas (`--net-stats`). A load and
/// a store: a count lost when two areas count at once does not matter there.
static ROUNDS_HERE: AtomicU64 = AtomicU64::new(0);

/// Rounds this process went through in node areas.
pub(crate) fn rounds() -> u64 {
    ROUNDS_HERE.load(Ordering::Relaxed)
}

/// A process's announcement of a round, one line per parity: a reader may still
/// look at round r's while the process arrives at r + 1, never at r + 2 (no one
/// writes round r + 2 before everyone arrived at r + 1).
#[repr(C, align(64))]
struct RoundLine {
    /// The last round of this parity the process arrived at.
    round: AtomicU64,
    /// Length of its data for that round.
    len: AtomicU64,
    /// The data itself when it fits, so that one line transfer carries both.
    inline: [u8; INLINE_MAX],
}

/// The head of a slot: when the process mapped the area, then its round lines
/// (each on a line of its own: `RoundLine` is 64-byte aligned).
#[repr(C, align(64))]
struct SlotHead {
    opened: AtomicU64,
    /// What the process's ULTs waiting for the others' arrivals sleep on
    /// (see mpcrs_scheduler::bell): an arriving process rings every other
    /// slot's.
    doorbell: Doorbell,
    rounds: [RoundLine; 2],
}

/// Bytes of one process's slot: its head, then data for two rounds, by parity.
const SLOT_BYTES: usize = std::mem::size_of::<SlotHead>() + 2 * DATA_MAX;

/// One communicator's area, mapped in this process. Its memory is reached
/// through atomics (round lines) and by the round protocol (data: one writer per
/// slot and round, readers after its arrival is published).
pub(crate) struct NodeArea {
    /// The communicator's context (what a deadlock report names).
    context: u64,
    map: mpcrs_rails::shm::SharedMapping,
    /// Processes meeting here, and this one's slot.
    processes: usize,
    mine: usize,
    /// The last round this process is through with (its speaker read what it
    /// needed). Speakers of consecutive rounds may be different threads: the
    /// next one arrives only after this, since its arrival lets the others
    /// reuse the buffers of the round before.
    done: AtomicU64,
}

impl NodeArea {
    /// Maps the area `name` for `processes` processes, this one in slot `mine`,
    /// creating it if this process is the first. Every process gives the same
    /// name and count.
    pub(crate) fn open(
        name: &str,
        processes: usize,
        mine: usize,
        context: u64,
    ) -> std::io::Result<NodeArea> {
        let map = mpcrs_rails::shm::map_shared(name, processes * SLOT_BYTES)?;
        let area = NodeArea {
            context,
            map,
            processes,
            mine,
            done: AtomicU64::new(0),
        };
        area.head(mine).opened.store(1, Ordering::Release);
        area.wait(|| (0..processes).all(|k| area.head(k).opened.load(Ordering::Acquire) != 0));
        // Everyone has it mapped: the name is no longer needed (another process
        // may have removed it first).
        let _ = mpcrs_rails::shm::unlink_shared(name);
        Ok(area)
    }

    fn head(&self, k: usize) -> &SlotHead {
        debug_assert!(k < self.processes);
        // SAFETY: slot k lies inside the mapping and starts with its head, 64-byte
        // aligned (the mapping is page-aligned, slots a multiple of 64 bytes).
        unsafe { &*self.map.as_ptr().add(k * SLOT_BYTES).cast::<SlotHead>() }
    }

    fn line(&self, k: usize, round: u64) -> &RoundLine {
        &self.head(k).rounds[(round % 2) as usize]
    }

    /// Where slot `k` keeps `len` bytes of data for `round`: in its round line
    /// if they fit, in the round's buffer otherwise.
    fn data(&self, k: usize, round: u64, len: usize) -> *mut u8 {
        if len <= INLINE_MAX {
            return self.line(k, round).inline.as_ptr().cast_mut();
        }
        let parity = (round % 2) as usize;
        // SAFETY: inside slot k of the mapping.
        unsafe {
            self.map
                .as_ptr()
                .add(k * SLOT_BYTES + std::mem::size_of::<SlotHead>() + parity * DATA_MAX)
        }
    }

    /// Polls `cond` (other processes' lines): spinning first where nothing else
    /// wants the CPU, then driving this process's network and letting other ULTs
    /// run in between; after a while, between naps. Where processes share
    /// CPUs, the naps are sleeps on this process's bell, which arrivals ring.
    fn wait(&self, mut cond: impl FnMut() -> bool) {
        if spin_until(&mut cond, SPINS) {
            return;
        }
        let _waiting = crate::waits::waiting(crate::waits::Wait::Collective {
            context: self.context,
        });
        let start = Instant::now();
        let sharing = mpcrs_scheduler::yields_when_idle();
        while !poll_until(&mut cond, DEFAULT_POLL) {
            if sharing {
                // The worker drives the network while this ULT sleeps: no
                // round of polls between two sleeps (one cost more CPU than
                // the whole sleep's wake-up).
                while !cond() {
                    self.sleep_on_bell(&mut cond, BELL_NAP);
                }
                return;
            }
            let waited = start.elapsed();
            if waited > LONG_WAIT {
                mpcrs_scheduler::sleep(LONG_NAP);
            } else if waited > PATIENCE {
                mpcrs_scheduler::sleep(NAP);
            }
        }
    }

    /// Sleeps until an arrival rings this process's bell, or `most`, unless
    /// `cond` holds once the sleep is announced.
    fn sleep_on_bell(&self, cond: &mut impl FnMut() -> bool, most: Duration) {
        let door = &self.head(self.mine).doorbell;
        // SAFETY: the doorbell lies in the area's mapping, which `self` holds
        // past the sleep.
        let bell = unsafe { door.arm() };
        if !cond() {
            mpcrs_scheduler::bell::wait_in_ult(bell, most);
        }
        door.disarm();
    }

    /// Rings the doorbells of the other processes (after an arrival).
    fn ring_sleepers(&self) {
        for k in (0..self.processes).filter(|&k| k != self.mine) {
            self.head(k).doorbell.ring_if_sleeping();
        }
    }

    fn arrived(&self, k: usize, round: u64) -> bool {
        self.line(k, round).round.load(Ordering::Acquire) >= round
    }

    fn all_arrived(&self, round: u64) -> bool {
        (0..self.processes).all(|k| self.arrived(k, round))
    }

    /// Starts `round` (1, 2, ...: the caller numbers the operations, the same
    /// way in every process; see `Tiers::next_area_round`): returns once this
    /// process may write its data. The process is through with the round
    /// (and the next may begin) when the returned guard is dropped, after the
    /// caller read what it needed.
    fn begin(&self, round: u64) -> Through<'_> {
        ROUNDS_HERE.store(ROUNDS_HERE.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        if self.done.load(Ordering::Acquire) + 1 < round {
            self.wait(|| self.done.load(Ordering::Acquire) + 1 >= round);
        }
        // Whoever is not yet past the round before may still read this parity's
        // line and buffer as of two rounds ago.
        if round > 1 && !self.all_arrived(round - 1) {
            self.wait(|| self.all_arrived(round - 1));
        }
        Through { area: self, round }
    }

    /// Publishes this process's arrival at `round` with `len` bytes of data
    /// (written before, at [`Self::data`]).
    fn arrive(&self, round: u64, len: usize) {
        let line = self.line(self.mine, round);
        line.len.store(len as u64, Ordering::Relaxed);
        line.round.store(round, Ordering::Release);
        self.ring_sleepers();
    }

    /// Length of slot `k`'s data for `round`, once it arrived there.
    fn len(&self, k: usize, round: u64) -> usize {
        self.line(k, round).len.load(Ordering::Relaxed) as usize
    }

    pub(crate) fn barrier(&self, round: u64) {
        let _through = self.begin(round);
        self.arrive(round, 0);
        self.wait(|| self.all_arrived(round));
    }

    /// Broadcast of `len` bytes from the process in slot `root`. Returns whether
    /// the root's data did not fit in `len`, or None when the root's data is
    /// larger than [`DATA_MAX`]: the root's length decides, so every process then
    /// goes by messages alike, whatever its own length.
    ///
    /// # Safety
    /// `buf` valid for `len` bytes.
    pub(crate) unsafe fn bcast(
        &self,
        round: u64,
        root: usize,
        buf: *mut u8,
        len: usize,
    ) -> Option<bool> {
        let _through = self.begin(round);
        if self.mine == root {
            if len <= DATA_MAX {
                // SAFETY: our place for this round's data holds `len` bytes.
                unsafe { std::ptr::copy_nonoverlapping(buf, self.data(root, round, len), len) };
            }
            self.arrive(round, len);
            return (len <= DATA_MAX).then_some(false);
        }
        self.arrive(round, len);
        self.wait(|| self.arrived(root, round));
        let sent = self.len(root, round);
        if sent > DATA_MAX {
            return None;
        }
        // SAFETY: the root wrote `sent` bytes there before publishing its arrival;
        // it rewrites them only after everyone is past this round.
        unsafe { std::ptr::copy_nonoverlapping(self.data(root, round, sent), buf, sent.min(len)) };
        Some(sent != len)
    }

    /// Reduction of every process's `len` bytes, folded in slot order into `out`
    /// where `wants` is true. `send` and `out` may be the same. Returns whether
    /// lengths differed, or None when one is larger than [`DATA_MAX`]: every
    /// process sees every length, so all then go by messages alike.
    ///
    /// # Safety
    /// `send` valid for `len` bytes; `out` too where `wants`.
    pub(crate) unsafe fn reduce(
        &self,
        round: u64,
        send: *const u8,
        out: *mut u8,
        len: usize,
        red: Reduction<'_>,
        wants: bool,
    ) -> Option<bool> {
        let _through = self.begin(round);
        if len <= DATA_MAX {
            // SAFETY: our place for this round's data holds `len` bytes.
            unsafe { std::ptr::copy_nonoverlapping(send, self.data(self.mine, round, len), len) };
        }
        self.arrive(round, len);
        self.wait(|| self.all_arrived(round));
        if (0..self.processes).any(|k| self.len(k, round) > DATA_MAX) {
            return None;
        }
        let differs = (0..self.processes).any(|k| self.len(k, round) != len);
        if differs || !wants {
            return Some(differs);
        }
        let last = self.processes - 1;
        // An aligned accumulator: on the stack for the usual few elements.
        let mut small = [0u128; 16];
        let mut large: Vec<u128>;
        let acc = if len <= std::mem::size_of_val(&small) {
            small.as_mut_ptr().cast::<u8>()
        } else {
            large = temp(len);
            large.as_mut_ptr().cast::<u8>()
        };
        // SAFETY: every slot's data of this round holds `len` bytes, written
        // before its arrival and not rewritten before everyone is past this round;
        // `acc` is an aligned temporary of `len` bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(self.data(last, round, len), acc, len);
            let acc_bytes = std::slice::from_raw_parts_mut(acc, len);
            // inout = in op inout: from the right, x0 op (x1 op (...)).
            for k in (0..last).rev() {
                red.op.apply(
                    red.kind,
                    std::slice::from_raw_parts(self.data(k, round, len), len),
                    acc_bytes,
                );
            }
            std::ptr::copy_nonoverlapping(acc, out, len);
        }
        Some(false)
    }
}

/// Marks its round as one this process is through with when dropped.
struct Through<'a> {
    area: &'a NodeArea,
    round: u64,
}

impl Drop for Through<'_> {
    fn drop(&mut self) {
        self.area.done.store(self.round, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::Kind;
    use crate::op::Op;

    const PROCESSES: usize = 3;
    const ROUNDS: i64 = 100;

    /// What process `k` contributes at round `r`: `n` values.
    fn values(k: usize, r: i64, n: usize) -> Vec<i64> {
        (0..n as i64)
            .map(|i| r * 1000 + k as i64 * 100 + i)
            .collect()
    }

    /// Three threads stand for three processes of a node: every round, in turn, a
    /// reduction small enough for the round lines, one that needs the buffers, a
    /// broadcast from a rotating root and a barrier; both parities are reused
    /// many times over while the threads run at their own pace.
    #[test]
    fn processes_agree_round_after_round_on_lines_and_buffers() {
        let name = format!("mpcrs-test-node-area-{}", std::process::id());
        let threads: Vec<_> = (0..PROCESSES)
            .map(|mine| {
                let name = name.clone();
                std::thread::spawn(move || {
                    let area = NodeArea::open(&name, PROCESSES, mine, 0).unwrap();
                    let mut rounds = 0u64;
                    let mut next = || {
                        rounds += 1;
                        rounds
                    };
                    let red = Reduction {
                        op: &Op::Sum,
                        kind: Kind::I64,
                        elem: 8,
                    };
                    for r in 0..ROUNDS {
                        for n in [2usize, 100] {
                            let send = values(mine, r, n);
                            let mut out = vec![0i64; n];
                            let expect: Vec<i64> = (0..n)
                                .map(|i| (0..PROCESSES).map(|k| values(k, r, n)[i]).sum())
                                .collect();
                            // SAFETY: both vectors hold n values.
                            let differs = unsafe {
                                area.reduce(
                                    next(),
                                    send.as_ptr().cast(),
                                    out.as_mut_ptr().cast(),
                                    n * 8,
                                    red,
                                    true,
                                )
                            };
                            assert_eq!(differs, Some(false));
                            assert_eq!(out, expect, "round {r}, {n} values, process {mine}");
                        }
                        let root = r as usize % PROCESSES;
                        let mut b = if mine == root {
                            values(root, r, 10)
                        } else {
                            vec![0; 10]
                        };
                        // SAFETY: `b` holds 10 values.
                        let short = unsafe { area.bcast(next(), root, b.as_mut_ptr().cast(), 80) };
                        assert_eq!(short, Some(false));
                        assert_eq!(b, values(root, r, 10), "broadcast of round {r}");
                        area.barrier(next());
                    }
                    // Lengths that differ are reported, not folded.
                    let send = values(mine, 0, 1 + mine);
                    let mut out = vec![0i64; 1 + mine];
                    // SAFETY: both hold 1 + mine values.
                    let differing = unsafe {
                        area.reduce(
                            next(),
                            send.as_ptr().cast(),
                            out.as_mut_ptr().cast(),
                            (1 + mine) * 8,
                            red,
                            true,
                        )
                    };
                    // Too large for the area at the root only (a truncating
                    // broadcast) or at one process only: all are sent away alike.
                    let mut big = vec![0u8; 2 * DATA_MAX];
                    let len = if mine == 0 { big.len() } else { 8 };
                    // SAFETY: `big` holds at least `len` bytes.
                    let bcast = unsafe { area.bcast(next(), 0, big.as_mut_ptr(), len) };
                    let len = if mine == 1 { big.len() } else { 8 };
                    // SAFETY: as above, for `send` and `out` alike.
                    let reduce = unsafe {
                        area.reduce(next(), big.as_ptr(), big.as_mut_ptr(), len, red, true)
                    };
                    (differing, bcast, reduce)
                })
            })
            .collect();
        for t in threads {
            let (differing, bcast, reduce) = t.join().unwrap();
            assert_eq!(differing, Some(true), "a differing length is reported");
            assert_eq!(
                bcast, None,
                "a root's data over DATA_MAX sends everyone away"
            );
            assert_eq!(reduce, None, "one length over DATA_MAX sends everyone away");
        }
        // Every process mapped it: the name is gone from /dev/shm.
        assert!(!std::path::Path::new(&format!("/dev/shm/{name}")).exists());
    }

    /// Each process speaks through two threads taking turns, as two ranks of
    /// a process speak in consecutive collectives (a broadcast's root, then a
    /// reduction's lowest member): one may still read round r when the other
    /// arrives at r + 1. The other processes must not reuse round r's
    /// buffers before the first is through with them.
    #[test]
    fn two_speakers_of_a_process_taking_turns_read_their_rounds_whole() {
        let name = format!("mpcrs-test-node-speakers-{}", std::process::id());
        let areas: Vec<std::sync::Arc<NodeArea>> = {
            let opening: Vec<_> = (0..PROCESSES)
                .map(|mine| {
                    let name = name.clone();
                    std::thread::spawn(move || NodeArea::open(&name, PROCESSES, mine, 0).unwrap())
                })
                .collect();
            opening
                .into_iter()
                .map(|t| std::sync::Arc::new(t.join().unwrap()))
                .collect()
        };
        let red = Reduction {
            op: &Op::Sum,
            kind: Kind::I64,
            elem: 8,
        };
        let n = 300;
        let threads: Vec<_> = (0..PROCESSES)
            .flat_map(|mine| (0..2u64).map(move |turn| (mine, turn)))
            .map(|(mine, turn)| {
                let area = areas[mine].clone();
                std::thread::spawn(move || {
                    for r in (1..=4 * ROUNDS as u64).filter(|r| r % 2 == turn) {
                        let send = values(mine, r as i64, n);
                        let mut out = vec![0i64; n];
                        // SAFETY: both vectors hold n values.
                        let differs = unsafe {
                            area.reduce(
                                r,
                                send.as_ptr().cast(),
                                out.as_mut_ptr().cast(),
                                n * 8,
                                red,
                                true,
                            )
                        };
                        assert_eq!(differs, Some(false), "round {r}, process {mine}");
                        let expect: Vec<i64> = (0..n)
                            .map(|i| (0..PROCESSES).map(|k| values(k, r as i64, n)[i]).sum())
                            .collect();
                        assert_eq!(out, expect, "round {r}, process {mine}");
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
    }
}
