//! Collectives of communicators whose members live in several processes, in two
//! tiers: the members of each process meet in the communicator's arena as in a
//! communicator of one process, and one member per process (its speaker) carries
//! the process's part over the network with the algorithms of [`messages`].
//!
//! Reductions fold each process's members in rank order, then the processes in the
//! order of their lowest ranks: rank order when every process holds consecutive
//! ranks (as MPI_COMM_WORLD does). Otherwise a non-commutative operation goes
//! through one binomial tree over all members in rank order.

use super::arena::Slot;
use super::messages::{self, irecv, isend, mismatch, wait_all, Members, TAG_EXCHANGE, TAG_SCAN};
use super::tiers::Tiers;
use super::{displacements, temp, Layout, Pattern, Reduction};
use crate::comm::CommShared;
use crate::error::ErrorClass;
use crate::request::Pending;

fn tiers(c: &CommShared) -> &Tiers {
    c.tiers().expect("a communicator spanning processes")
}

pub(crate) fn barrier(c: &CommShared, me: usize) {
    let t = tiers(c);
    let round = t.next_area_round(me);
    let shared = t.here.len() > 1;
    if shared {
        c.arena.barrier();
    }
    if me == t.here[0] {
        match t.node_area(c.context) {
            Some(area) => area.barrier(round),
            None => messages::barrier(c, &Members::new(&t.leaders, me)),
        }
    }
    if shared {
        c.arena.barrier();
    }
}

/// Returns whether the caller's part was truncated.
///
/// # Safety
/// `buf` valid for `len` bytes until return.
pub(crate) unsafe fn bcast(
    c: &CommShared,
    me: usize,
    root: usize,
    buf: *mut u8,
    len: usize,
) -> bool {
    let t = tiers(c);
    let round = t.next_area_round(me);
    let speaker = t.speaker(root);
    let mut truncated = false;
    if me == speaker {
        // SAFETY: by contract.
        truncated = unsafe {
            let area = t.node_area(c.context);
            match area.and_then(|a| a.bcast(round, t.process_slot(root), buf, len)) {
                Some(truncated) => truncated,
                None => {
                    let speakers = t.speakers(root);
                    let m = Members::new(&speakers, me);
                    messages::bcast(c, &m, m.position(root), buf, len)
                }
            }
        };
    }
    if t.here.len() > 1 {
        // SAFETY: by contract.
        truncated |= unsafe { super::bcast_here(&c.arena, t.slot(me), t.slot(speaker), buf, len) };
    }
    truncated
}

/// Reduce (to `root`) or allreduce (`root` = None) of `len` bytes.
///
/// # Safety
/// As `coll::reduce`.
pub(crate) unsafe fn reduce(
    c: &CommShared,
    me: usize,
    root: Option<usize>,
    send: *const u8,
    recv: *mut u8,
    len: usize,
    red: Reduction<'_>,
) -> bool {
    let t = tiers(c);
    if !t.blocks && !red.op.is_commutative() {
        let all: Vec<usize> = (0..c.group.size()).collect();
        let m = Members::new(&all, me);
        // SAFETY: by contract; at an allreduce `recv` is valid on every rank.
        return unsafe {
            let mut truncated = messages::reduce(c, &m, root.unwrap_or(0), send, recv, len, red);
            if root.is_none() {
                truncated |= messages::bcast(c, &m, 0, recv, len);
            }
            truncated
        };
    }
    // Every member takes this path alike: it may meet in the area.
    let round = t.next_area_round(me);
    let speaker = t.speaker(root.unwrap_or(t.here[0]));
    let shared = t.here.len() > 1;
    // Where the speaker gathers its process's fold: the result buffer, unless the
    // speaker is not the root of a rooted reduction.
    let mut spare = Vec::new();
    let gather = if me == speaker && root.is_some_and(|r| r != me) {
        spare = temp(len);
        spare.as_mut_ptr().cast::<u8>()
    } else {
        recv
    };
    let mut truncated = false;
    // The process's fold, at the speaker (in `gather`), or the speaker's own
    // contribution when it is alone here.
    let (from, at) = if shared {
        // SAFETY: `gather` holds `len` bytes at the speaker, the only slot written.
        truncated |= unsafe {
            super::reduce_here(
                &c.arena,
                t.slot(me),
                Some(t.slot(speaker)),
                send,
                gather,
                len,
                red,
            )
        };
        (gather.cast_const(), gather)
    } else {
        (send, gather)
    };
    if me == speaker {
        let area = t.node_area(c.context);
        // SAFETY: `from` holds `len` bytes, `at` (the root's `recv` or a temporary)
        // as many.
        truncated |= unsafe {
            // The area says when the data is too large for it, to every process.
            let wants = root.is_none_or(|r| r == me);
            match area.and_then(|a| a.reduce(round, from, at, len, red, wants)) {
                Some(differs) => differs,
                None => match root {
                    None => {
                        super::copy(from, at, len);
                        messages::allreduce(c, &Members::new(&t.leaders, me), at, len, red)
                    }
                    Some(r) => {
                        let speakers = t.speakers(r);
                        let m = Members::new(&speakers, me);
                        messages::reduce(c, &m, m.position(r), from, at, len, red)
                    }
                },
            }
        };
    }
    drop(spare);
    if root.is_none() && shared {
        // SAFETY: `recv` holds `len` bytes on every rank of an allreduce.
        truncated |= unsafe { super::bcast_here(&c.arena, t.slot(me), t.slot(speaker), recv, len) };
    }
    truncated
}

/// Reduce-scatter: the reduction of `counts`' total, block i to rank i.
///
/// # Safety
/// As `coll::reduce_scatter`.
pub(crate) unsafe fn reduce_scatter(
    c: &CommShared,
    me: usize,
    send: *const u8,
    recv: *mut u8,
    counts: &[usize],
    red: Reduction<'_>,
) -> bool {
    let total: usize = counts.iter().sum();
    let mut whole = temp(if me == 0 { total } else { 0 });
    let whole_p = whole.as_mut_ptr().cast::<u8>();
    // SAFETY: `whole` holds `total` bytes at rank 0, the only one it is written at.
    let mut truncated = unsafe { reduce(c, me, Some(0), send, whole_p, total, red) };
    let recv_layout = Layout::Uniform(counts[me]);
    let displs = displacements(counts);
    let send_layout = Layout::Varying {
        counts,
        displs: &displs,
    };
    // SAFETY: rank 0's `whole` holds every block; `recv` holds `counts[me]` bytes.
    truncated |= unsafe {
        exchange(
            c,
            me,
            Pattern::Scatter { root: 0 },
            whole_p,
            send_layout,
            recv,
            recv_layout,
        )
    };
    truncated
}

/// Scan and exscan: the prefix travels along the ranks.
///
/// # Safety
/// As `coll::scan`.
pub(crate) unsafe fn scan(
    c: &CommShared,
    me: usize,
    send: *const u8,
    recv: *mut u8,
    len: usize,
    red: Reduction<'_>,
    exclusive: bool,
) -> bool {
    let n = c.group.size();
    let mut prefix = temp(len);
    let mut cur = temp(len);
    let prefix_p = prefix.as_mut_ptr().cast::<u8>();
    let cur_p = cur.as_mut_ptr().cast::<u8>();
    // Our input first: `recv` may be the same memory (MPI_IN_PLACE).
    // SAFETY: `send` and the temporary hold `len` bytes.
    unsafe { std::ptr::copy(send, cur_p, len) };
    let mut truncated = false;
    if me > 0 {
        // SAFETY: `prefix` holds `len` bytes.
        let st = unsafe { irecv(c, me, me - 1, TAG_SCAN, prefix_p, len) }.wait();
        truncated = mismatch(st, len);
        // SAFETY: both temporaries hold `len` bytes, 16-byte aligned.
        unsafe {
            red.op.apply(
                red.kind,
                std::slice::from_raw_parts(prefix_p, len),
                std::slice::from_raw_parts_mut(cur_p, len),
            )
        };
    }
    if me + 1 < n {
        // SAFETY: `cur` lives until the send finished.
        unsafe { isend(c, me, me + 1, TAG_SCAN, cur_p, len) }.wait();
    }
    // SAFETY: `recv` holds `len` bytes.
    unsafe {
        if !exclusive {
            std::ptr::copy(cur_p, recv, len);
        } else if me > 0 {
            std::ptr::copy(prefix_p, recv, len);
        }
    }
    truncated
}

/// (offset, length) of block `j` of a layout.
fn block(l: &Layout<'_>, j: usize) -> (usize, usize) {
    match *l {
        Layout::Uniform(len) => (j * len, len),
        Layout::Varying { counts, displs } => (displs[j], counts[j]),
    }
}

/// Gather, scatter, allgather and alltoall: every receive posted first, then every
/// send, one message per block.
///
/// # Safety
/// As `coll::exchange`.
pub(crate) unsafe fn exchange(
    c: &CommShared,
    me: usize,
    pattern: Pattern,
    send: *const u8,
    send_layout: Layout<'_>,
    recv: *mut u8,
    recv_layout: Layout<'_>,
) -> bool {
    if let (Pattern::AllToAll, Layout::Uniform(send_len), Layout::Uniform(recv_len)) =
        (pattern, send_layout, recv_layout)
    {
        // SAFETY: forwarded.
        return unsafe { alltoall_by_process(c, me, send, send_len, recv, recv_len) };
    }
    let n = c.group.size();
    // (peer, block of ours) for receives and for sends.
    let (receives, sends): (Vec<(usize, usize)>, Vec<(usize, usize)>) = match pattern {
        Pattern::Gather { root } => (
            if me == root {
                (0..n).map(|j| (j, j)).collect()
            } else {
                Vec::new()
            },
            vec![(root, 0)],
        ),
        Pattern::Scatter { root } => (
            vec![(root, 0)],
            if me == root {
                (0..n).map(|j| (j, j)).collect()
            } else {
                Vec::new()
            },
        ),
        Pattern::AllGather => (
            (0..n).map(|j| (j, j)).collect(),
            (0..n).map(|j| (j, 0)).collect(),
        ),
        Pattern::AllToAll => (
            (0..n).map(|j| (j, j)).collect(),
            (0..n).map(|j| (j, j)).collect(),
        ),
    };
    let posted: Vec<(usize, Pending)> = receives
        .iter()
        .map(|&(from, b)| {
            let (off, len) = block(&recv_layout, b);
            // SAFETY: the receive layout lies inside `recv` (checked by the callers).
            (len, unsafe {
                irecv(c, me, from, TAG_EXCHANGE, recv.add(off), len)
            })
        })
        .collect();
    let started: Vec<Pending> = sends
        .iter()
        .map(|&(to, b)| {
            let (off, len) = block(&send_layout, b);
            // SAFETY: the send layout lies inside `send`, valid until the waits below.
            unsafe { isend(c, me, to, TAG_EXCHANGE, send.add(off), len) }
        })
        .collect();
    let mut truncated = false;
    for (len, op) in posted {
        let st = op.wait();
        // A shorter block is fine (v-variants); a longer one did not fit.
        truncated |= st.error == ErrorClass::Truncate || st.bytes > len;
    }
    wait_all(started);
    truncated
}

/// MPI_Alltoall (every block of a member the same length): the members of
/// this process publish their buffers in the arena, and the lowest of them
/// carries all the blocks from this process to each other process in one
/// message, receives one from each, and copies the blocks between members of
/// this process directly. A message per pair of members made 16.7 million
/// messages of 4,096 ranks over 4 processes (36 s per call). Returns whether
/// the caller's receive was truncated.
///
/// # Safety
/// As `coll::exchange`: `send` and `recv` hold a block of `send_len` and
/// `recv_len` bytes per member.
unsafe fn alltoall_by_process(
    c: &CommShared,
    me: usize,
    send: *const u8,
    send_len: usize,
    recv: *mut u8,
    recv_len: usize,
) -> bool {
    let t = tiers(c);
    let mine = Slot {
        send,
        recv,
        send_len,
        recv_len,
        ..Slot::default()
    };
    let shared = t.here.len() > 1;
    if shared {
        c.arena.publish(t.slot(me), mine);
    }
    let round = shared.then(|| c.arena.barrier());
    let mut truncated = false;
    if me == t.here[0] {
        let slots: Vec<Slot> = match &round {
            Some(r) => (0..t.here.len()).map(|i| r.slot(i)).collect(),
            None => vec![mine],
        };
        // SAFETY: every slot's buffers stay valid until the barrier below.
        let cut = unsafe { carry_alltoall(c, me, t, &slots) };
        for (i, &cut) in cut.iter().enumerate().filter(|(_, &cut)| cut) {
            match &round {
                Some(r) => r.set_truncated(i),
                None => truncated = cut,
            }
        }
    }
    if shared {
        c.arena.barrier();
        truncated = c.arena.take_truncated(t.slot(me));
    }
    truncated
}

/// The lowest member's part of [`alltoall_by_process`]: `slots` are this
/// process's members' buffers (by arena slot). Returns, per slot, whether a
/// block did not fit its receive.
///
/// # Safety
/// The slots' buffers hold a block per member of the communicator, valid
/// until return.
unsafe fn carry_alltoall(c: &CommShared, me: usize, t: &Tiers, slots: &[Slot]) -> Vec<bool> {
    let here = &t.here;
    let mut cut = vec![false; slots.len()];
    // Blocks travel `stride` bytes apart; a receive longer than its block
    // leaves the rest as it was, a shorter one is truncated.
    let stride = slots.iter().map(|s| s.send_len).max().unwrap_or(0);
    let cap = slots.iter().map(|s| s.recv_len).max().unwrap_or(0);
    let others: Vec<(usize, &[usize])> = t.other_processes().collect();
    let mut inbox: Vec<Vec<u8>> = others
        .iter()
        .map(|(_, members)| vec![0u8; members.len() * here.len() * cap])
        .collect();
    let posted: Vec<Pending> = others
        .iter()
        .zip(inbox.iter_mut())
        .map(|((leader, _), buf)| {
            // SAFETY: `buf` is not touched until the receive completed below.
            unsafe { irecv(c, me, *leader, TAG_EXCHANGE, buf.as_mut_ptr(), buf.len()) }
        })
        .collect();
    // To each other process: for each member here, its blocks for that
    // process's members, in rank order.
    let outbox: Vec<Vec<u8>> = others
        .iter()
        .map(|(_, members)| {
            let mut out = vec![0u8; here.len() * members.len() * stride];
            for (a, s) in slots.iter().enumerate() {
                let len = s.send_len.min(stride);
                for (b, &j) in members.iter().enumerate() {
                    let at = (a * members.len() + b) * stride;
                    // SAFETY: block j of member a's send buffer holds send_len bytes.
                    let block =
                        unsafe { std::slice::from_raw_parts(s.send.add(j * s.send_len), len) };
                    out[at..at + len].copy_from_slice(block);
                }
            }
            out
        })
        .collect();
    let sent: Vec<Pending> = others
        .iter()
        .zip(&outbox)
        .map(|((leader, _), out)| {
            // SAFETY: `outbox` lives until the sends completed below.
            unsafe { isend(c, me, *leader, TAG_EXCHANGE, out.as_ptr(), out.len()) }
        })
        .collect();
    // Between the members here, directly.
    for (a, from) in slots.iter().enumerate() {
        for (b, to) in slots.iter().enumerate() {
            let len = from.send_len.min(to.recv_len);
            cut[b] |= from.send_len > to.recv_len;
            // SAFETY: block here[b] of a's send and block here[a] of b's
            // receive, each as long as published; distinct buffers or the
            // same block of one member's (MPI forbids overlap otherwise).
            unsafe {
                std::ptr::copy(
                    from.send.add(here[b] * from.send_len),
                    to.recv.add(here[a] * to.recv_len),
                    len,
                )
            };
        }
    }
    for (((_, members), buf), op) in others.iter().zip(&inbox).zip(posted) {
        let status = op.wait();
        let blocks = members.len() * here.len();
        if status.error == ErrorClass::Truncate || blocks == 0 {
            cut.iter_mut().for_each(|c| *c = true);
            continue;
        }
        // The sender's stride, from what it sent.
        let theirs = status.bytes / blocks;
        for (b, &i) in members.iter().enumerate() {
            for (a, to) in slots.iter().enumerate() {
                let len = theirs.min(to.recv_len);
                cut[a] |= theirs > to.recv_len;
                let at = (b * here.len() + a) * theirs;
                // SAFETY: block i of member a's receive holds recv_len bytes;
                // the inbox is this call's own.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        buf[at..at + len].as_ptr(),
                        to.recv.add(i * to.recv_len),
                        len,
                    )
                };
            }
        }
    }
    wait_all(sent);
    cut
}

/// Among the speakers (the lowest member of each process): fills the entries
/// of every other process's members in `all` (one `T` per communicator rank),
/// each speaker having filled those of its own process. One message to and
/// from every other process, with that process's entries in rank order: an
/// allgather through every member was O(ranks^2) messages.
pub(crate) fn speakers_allgather<T: Copy + Default>(c: &CommShared, me: usize, all: &mut [T]) {
    let t = tiers(c);
    let size = std::mem::size_of::<T>();
    let mine: Vec<T> = t.here.iter().map(|&r| all[r]).collect();
    let others: Vec<(usize, &[usize])> = t.other_processes().collect();
    let mut inbox: Vec<Vec<T>> = others
        .iter()
        .map(|(_, members)| vec![T::default(); members.len()])
        .collect();
    let posted: Vec<Pending> = others
        .iter()
        .zip(inbox.iter_mut())
        .map(|((leader, _), buf)| {
            // SAFETY: `buf` is not touched until the receive completed below.
            unsafe {
                irecv(
                    c,
                    me,
                    *leader,
                    TAG_EXCHANGE,
                    buf.as_mut_ptr().cast(),
                    buf.len() * size,
                )
            }
        })
        .collect();
    let sent: Vec<Pending> = others
        .iter()
        .map(|(leader, _)| {
            // SAFETY: `mine` lives until the sends completed below.
            unsafe {
                isend(
                    c,
                    me,
                    *leader,
                    TAG_EXCHANGE,
                    mine.as_ptr().cast(),
                    mine.len() * size,
                )
            }
        })
        .collect();
    wait_all(posted);
    wait_all(sent);
    for ((_, members), got) in others.iter().zip(inbox) {
        for (&r, v) in members.iter().zip(got) {
            all[r] = v;
        }
    }
}
