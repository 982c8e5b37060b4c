//! Collective operations among the ranks of a communicator that live in this
//! process, on bytes. Every operation publishes its buffers in the communicator's
//! [`arena::Arena`]; small operations are then done entirely by the last rank to
//! arrive while the others are held (one barrier, data copied once, straight between
//! user buffers), large ones are split among all ranks between two barriers.
//! Reductions fold contributions in rank order, so results are the same on every
//! run and for non-commutative operations.

pub(crate) mod arena;
pub(crate) mod inter;
pub(crate) mod messages;
pub(crate) mod node;
pub(crate) mod spanning;
pub(crate) mod tiers;

use std::ops::Range;

use arena::{Arena, Round, Slot, INLINE_MAX};

use crate::comm::CommShared;
use crate::datatype::Kind;
use crate::op::Op;

/// Above this many bytes moved, work is split among the ranks instead of being
/// done by the leader alone.
pub const SMALL_LIMIT: usize = 64 * 1024;
/// Reductions are split in chunks of at least this many bytes.
const MIN_CHUNK: usize = 16 * 1024;
/// A broadcast of at most this many bytes is delivered by the leader alone at
/// any rank count: a second barrier costs every rank more than the leader's
/// copy into its buffer.
const TINY: usize = 256;

/// A reduction's operator and element type.
#[derive(Clone, Copy)]
pub(crate) struct Reduction<'a> {
    pub(crate) op: &'a Op,
    pub(crate) kind: Kind,
    /// Bytes per element.
    pub(crate) elem: usize,
}

/// Copies `len` bytes; the ranges may be identical (in-place operations).
///
/// # Safety
/// Both pointers valid for `len` bytes.
#[inline]
unsafe fn copy(src: *const u8, dst: *mut u8, len: usize) {
    if len > 0 && !std::ptr::eq(src, dst) {
        // SAFETY: guaranteed by the caller; `copy` tolerates overlap.
        unsafe { std::ptr::copy(src, dst, len) };
    }
}

/// Where each block of `counts` starts when the blocks follow one another.
fn displacements(counts: &[usize]) -> Vec<usize> {
    counts
        .iter()
        .scan(0, |acc, &c| {
            let d = *acc;
            *acc += c;
            Some(d)
        })
        .collect()
}

/// An aligned temporary for reductions outside the arena.
fn temp(len: usize) -> Vec<u128> {
    vec![0u128; len.div_ceil(16)]
}

/// `len` bytes of slot `i`'s send buffer from offset `lo`.
///
/// # Safety
/// The round's slots hold pointers valid for the published lengths.
unsafe fn send_bytes<'x>(r: &Round<'_>, i: usize, lo: usize, len: usize) -> &'x [u8] {
    // SAFETY: forwarded to the caller.
    unsafe { std::slice::from_raw_parts(r.slot(i).send.add(lo), len) }
}

/// Folds bytes `range` of every rank's send buffer, in rank order, into `dst`
/// (which holds `range.len()` bytes and aliases no send buffer).
///
/// # Safety
/// Slots valid for the range; `dst` valid for `range.len()` bytes.
unsafe fn fold_range(r: &Round<'_>, red: Reduction<'_>, range: Range<usize>, dst: *mut u8) {
    let n = r.size();
    let len = range.len();
    if len == 0 {
        return;
    }
    // SAFETY: forwarded to the caller.
    unsafe {
        copy(r.slot(n - 1).send.add(range.start), dst, len);
        let acc = std::slice::from_raw_parts_mut(dst, len);
        // MPI's user functions compute inout = in op inout: fold from the right so the
        // result is x0 op (x1 op (... op x(n-1))), rank order for any associative op.
        for i in (0..n - 1).rev() {
            red.op
                .apply(red.kind, send_bytes(r, i, range.start, len), acc);
        }
    }
}

/// The smallest `send_len` among ranks, recorded for the round's parties
/// ([`min_len`]); ranks whose length differs are flagged. Leader's action only.
fn common_len(r: &Round<'_>, len_of: impl Fn(&Slot) -> usize) -> usize {
    let m = (0..r.size()).map(|i| len_of(&r.slot(i))).min().unwrap_or(0);
    for i in 0..r.size() {
        if len_of(&r.slot(i)) != m {
            r.set_truncated(i);
        }
    }
    r.set_common_len(m);
    m
}

/// Element-aligned chunks of `bytes` for parallel folding, and which rank owns each.
fn chunks(bytes: usize, elem: usize, ranks: usize) -> impl Iterator<Item = (usize, Range<usize>)> {
    let elems = bytes / elem.max(1);
    let wanted = bytes.div_ceil(MIN_CHUNK).clamp(1, ranks);
    let per = elems.div_ceil(wanted).max(1);
    let nchunks = elems.div_ceil(per);
    (0..nchunks).map(move |c| {
        let lo = c * per * elem;
        let hi = ((c + 1) * per).min(elems) * elem;
        // Spread chunk owners over the rank range, hence over workers.
        (c * ranks / nchunks.max(1), lo..hi)
    })
}

pub(crate) fn barrier(comm: &CommShared, me: usize) {
    if comm.spanning() {
        return spanning::barrier(comm, me);
    }
    comm.arena.barrier();
}

/// MPI_Bcast of `len` bytes at `buf` from `root`. Returns whether the caller's
/// part was truncated.
///
/// # Safety
/// `buf` valid for `len` bytes until return.
pub(crate) unsafe fn bcast(
    comm: &CommShared,
    me: usize,
    root: usize,
    buf: *mut u8,
    len: usize,
) -> bool {
    // SAFETY: forwarded.
    unsafe {
        if comm.spanning() {
            spanning::bcast(comm, me, root, buf, len)
        } else {
            bcast_here(&comm.arena, me, root, buf, len)
        }
    }
}

/// MPI_Bcast among the ranks meeting in `arena` (`me` and `root` are slots).
///
/// # Safety
/// As [`bcast`].
unsafe fn bcast_here(arena: &Arena, me: usize, root: usize, buf: *mut u8, len: usize) -> bool {
    arena.publish(
        me,
        Slot {
            recv: buf,
            recv_len: len,
            ..Slot::default()
        },
    );
    let deliver = |r: &Round<'_>, i: usize| {
        let src = r.slot(root);
        let dst = r.slot(i);
        if dst.recv_len < src.recv_len {
            r.set_truncated(i);
        }
        // SAFETY: both published buffers are valid for their lengths this round.
        unsafe { copy(src.recv, dst.recv, src.recv_len.min(dst.recv_len)) };
    };
    arena.run(
        |r| {
            let len = r.slot(root).recv_len;
            let small = len <= TINY || len.saturating_mul(r.size()) <= SMALL_LIMIT;
            if small {
                (0..r.size())
                    .filter(|&i| i != root)
                    .for_each(|i| deliver(r, i));
            }
            small
        },
        |r| {
            if me != root {
                deliver(r, me)
            }
        },
    );
    arena.take_truncated(me)
}

/// MPI_Reduce (`recv` used at `root` only) and MPI_Allreduce (`root` = None) of
/// `len` bytes. For MPI_IN_PLACE pass `send == recv`.
///
/// # Safety
/// `send` valid for `len` bytes, `recv` for `len` bytes where it is written.
pub(crate) unsafe fn reduce(
    comm: &CommShared,
    me: usize,
    root: Option<usize>,
    send: *const u8,
    recv: *mut u8,
    len: usize,
    red: Reduction<'_>,
) -> bool {
    // SAFETY: forwarded.
    unsafe {
        if comm.spanning() {
            spanning::reduce(comm, me, root, send, recv, len, red)
        } else {
            reduce_here(&comm.arena, me, root, send, recv, len, red)
        }
    }
}

/// MPI_Reduce and MPI_Allreduce among the ranks meeting in `arena` (`me` and
/// `root` are slots), folded in slot order.
///
/// # Safety
/// As [`reduce`].
unsafe fn reduce_here(
    arena: &Arena,
    me: usize,
    root: Option<usize>,
    send: *const u8,
    recv: *mut u8,
    len: usize,
    red: Reduction<'_>,
) -> bool {
    let n = arena.size();
    if len <= INLINE_MAX && n <= INLINE_RANKS {
        // SAFETY: forwarded from this function's contract.
        return unsafe { reduce_inline(arena, me, root, send, recv, len, red) };
    }
    if len <= INLINE_MAX && n >= SMALL_FOLD_RANKS {
        // SAFETY: forwarded from this function's contract.
        return unsafe { reduce_small(arena, me, root, send, recv, len, red) };
    }
    arena.publish(me, Slot::reduction(send, recv, len));
    // Slots may be rewritten by faster ranks once the last barrier is passed:
    // whatever is needed afterwards is read before it.
    let mut common = 0;
    let (r1, finished) = arena.run(
        |r| {
            let m = common_len(r, |s| s.send_len);
            // SAFETY: leader action: every slot is live and the scratch is ours.
            unsafe {
                let acc = r.reserve_scratch(m);
                // Up to MIN_CHUNK there is one chunk to fold: the leader folds it
                // now rather than one rank between two barriers.
                if m > MIN_CHUNK && m.saturating_mul(r.size()) > SMALL_LIMIT {
                    return false;
                }
                fold_range(r, red, 0..m, acc);
            }
            true
        },
        |r| {
            common = min_len(r);
            for (owner, range) in chunks(common, red.elem, n) {
                if owner == me {
                    // SAFETY: chunks are disjoint ranges of the scratch the leader
                    // sized to `common`; sources stay live until the second barrier.
                    unsafe { fold_range(r, red, range.clone(), r.scratch().add(range.start)) };
                }
            }
        },
    );
    let truncated = arena.take_truncated(me);
    // Every receiver copies the result out of the scratch itself: its buffer stays
    // in its own cache. A rank whose length differed gets only the error.
    if !truncated && (root.is_none() || root == Some(me)) {
        let len = if finished { len } else { common };
        // SAFETY: the scratch of round r1 is complete and is not reused before every
        // rank reached the next collective of the same parity.
        unsafe { copy(r1.scratch(), recv, len) };
    }
    truncated
}

/// Tiny reductions among few ranks: every rank publishes its contribution by value
/// and each receiver folds them itself after one barrier, so no rank reads another's
/// buffers and nobody waits for a leader's work.
///
/// # Safety
/// As [`reduce`].
unsafe fn reduce_inline(
    arena: &Arena,
    me: usize,
    root: Option<usize>,
    send: *const u8,
    recv: *mut u8,
    len: usize,
    red: Reduction<'_>,
) -> bool {
    // SAFETY: `send` is valid for `len` bytes by contract.
    let generation = arena.publish_inline(me, unsafe { std::slice::from_raw_parts(send, len) });
    arena.barrier();
    let n = arena.size();
    let mismatch = (0..n).any(|i| arena.inline(i, generation).len != len);
    if mismatch || !(root.is_none() || root == Some(me)) {
        return mismatch;
    }
    let mut acc = [0u128; INLINE_MAX.div_ceil(16)];
    // SAFETY: `acc` holds INLINE_MAX >= len bytes, 16-byte aligned.
    let acc = unsafe { std::slice::from_raw_parts_mut(acc.as_mut_ptr().cast::<u8>(), len) };
    fold_inline(arena, generation, red, acc);
    // SAFETY: `recv` is valid for `len` bytes by contract.
    unsafe { copy(acc.as_ptr(), recv, len) };
    false
}

/// Folds the contributions every rank published by value for round
/// `generation` into `acc` (as long as each of them), in rank order as
/// `fold_range` does.
fn fold_inline(arena: &Arena, generation: u64, red: Reduction<'_>, acc: &mut [u8]) {
    let (n, len) = (arena.size(), acc.len());
    acc.copy_from_slice(&arena.inline(n - 1, generation).bytes[..len]);
    for i in (0..n - 1).rev() {
        red.op
            .apply(red.kind, &arena.inline(i, generation).bytes[..len], acc);
    }
}

/// Tiny reductions among many ranks: every rank publishes its contribution by
/// value, and the last to arrive folds them, in rank order, from the slots,
/// which lie side by side: following each rank's pointer to its buffer (on
/// its stack, a page of its own) cost a cache and a TLB miss per rank.
///
/// # Safety
/// As [`reduce`].
unsafe fn reduce_small(
    arena: &Arena,
    me: usize,
    root: Option<usize>,
    send: *const u8,
    recv: *mut u8,
    len: usize,
    red: Reduction<'_>,
) -> bool {
    // SAFETY: `send` is valid for `len` bytes by contract.
    let generation = arena.publish_inline(me, unsafe { std::slice::from_raw_parts(send, len) });
    let (r1, _) = arena.run(
        |r| {
            let n = r.size();
            let m = (0..n)
                .map(|i| arena.inline(i, generation).len)
                .min()
                .unwrap_or(0);
            for i in (0..n).filter(|&i| arena.inline(i, generation).len != m) {
                r.set_truncated(i);
            }
            r.set_common_len(m);
            // SAFETY: leader action: the scratch is ours; it holds m bytes.
            let acc = unsafe { std::slice::from_raw_parts_mut(r.reserve_scratch(m), m) };
            fold_inline(arena, generation, red, acc);
            true
        },
        |_| {},
    );
    let truncated = arena.take_truncated(me);
    if !truncated && (root.is_none() || root == Some(me)) {
        // SAFETY: the scratch of round r1 is complete and is not reused before every
        // rank reached the next collective of the same parity.
        unsafe { copy(r1.scratch(), recv, min_len(&r1)) };
    }
    truncated
}

/// From this many ranks on, tiny reductions use [`reduce_small`]: below, the
/// ranks' buffers stay in the caches, and copying them into the slots cost
/// more than it saved (allreduce 8 B at 64 ranks: 8.0 us against 7.2).
const SMALL_FOLD_RANKS: usize = 2048;

/// Up to this many ranks, tiny reductions use [`reduce_inline`].
const INLINE_RANKS: usize = 16;

/// The common send length of a reduction round, as its leader found it
/// with `common_len(r, |s| s.send_len)`.
fn min_len(r: &Round<'_>) -> usize {
    r.common_len()
}

/// MPI_Reduce_scatter: the element-wise reduction of every rank's `send` (the sum
/// of `counts` bytes), of which rank i receives bytes [displ(i), displ(i)+counts[i]).
///
/// # Safety
/// `send` valid for the total, `recv` for `counts[me]` bytes; `counts` has one entry
/// per rank and is the same on every rank.
pub(crate) unsafe fn reduce_scatter(
    comm: &CommShared,
    me: usize,
    send: *const u8,
    recv: *mut u8,
    counts: &[usize],
    red: Reduction<'_>,
) -> bool {
    if comm.spanning() {
        // SAFETY: forwarded.
        return unsafe { spanning::reduce_scatter(comm, me, send, recv, counts, red) };
    }
    let arena = &comm.arena;
    let n = arena.size();
    let total: usize = counts.iter().sum();
    let displs = displacements(counts);
    arena.publish(
        me,
        Slot {
            send,
            recv,
            send_len: total,
            recv_len: counts[me],
            ..Slot::default()
        },
    );
    // Read before the last barrier (see `reduce`).
    let mut mine = 0..0;
    let block_of = |r: &Round<'_>, i: usize, m: usize| -> Range<usize> {
        let lo = displs[i].min(m);
        lo..(displs[i] + r.slot(i).recv_len).min(m)
    };
    let (r1, finished) = arena.run(
        |r| {
            let m = common_len(r, |s| s.send_len);
            // SAFETY: leader action.
            unsafe {
                let acc = r.reserve_scratch(m);
                if m.saturating_mul(n) > SMALL_LIMIT {
                    return false;
                }
                fold_range(r, red, 0..m, acc);
                for i in 0..n {
                    let b = block_of(r, i, m);
                    copy(acc.add(b.start), r.slot(i).recv, b.len());
                }
            }
            true
        },
        |r| {
            // Each rank folds its own block; blocks are disjoint.
            mine = block_of(r, me, min_len(r));
            // SAFETY: disjoint range of the scratch sized by the leader; sources live
            // until the second barrier.
            unsafe { fold_range(r, red, mine.clone(), r.scratch().add(mine.start)) };
        },
    );
    if !finished {
        // SAFETY: our block of the round's scratch is complete.
        unsafe { copy(r1.scratch().add(mine.start), recv, mine.len()) };
    }
    arena.take_truncated(me)
}

/// MPI_Scan (`exclusive` = false) and MPI_Exscan. Pass `send == recv` for
/// MPI_IN_PLACE. With Exscan, rank 0's `recv` is left untouched.
///
/// # Safety
/// `send` and `recv` valid for `len` bytes.
pub(crate) unsafe fn scan(
    comm: &CommShared,
    me: usize,
    send: *const u8,
    recv: *mut u8,
    len: usize,
    red: Reduction<'_>,
    exclusive: bool,
) -> bool {
    if comm.spanning() {
        // SAFETY: forwarded.
        return unsafe { spanning::scan(comm, me, send, recv, len, red, exclusive) };
    }
    let arena = &comm.arena;
    let n = arena.size();
    arena.publish(me, Slot::reduction(send, recv, len));
    // One executor computes the prefixes of a byte range for every rank, reading
    // rank i's input before writing rank i's output (they may be the same memory).
    let scan_range = |r: &Round<'_>, range: Range<usize>| {
        let len = range.len();
        if len == 0 {
            return;
        }
        let mut acc = temp(len);
        let mut cur = temp(len);
        let acc_p = acc.as_mut_ptr().cast::<u8>();
        let cur_p = cur.as_mut_ptr().cast::<u8>();
        // SAFETY: published buffers are valid for `len`-byte ranges this round; the
        // temporaries hold `len` bytes.
        unsafe {
            copy(r.slot(0).send.add(range.start), acc_p, len);
            if !exclusive {
                copy(acc_p, r.slot(0).recv.add(range.start), len);
            }
            let (mut acc_p, mut cur_p) = (acc_p, cur_p);
            for i in 1..r.size() {
                copy(r.slot(i).send.add(range.start), cur_p, len);
                if exclusive {
                    copy(acc_p, r.slot(i).recv.add(range.start), len);
                }
                // cur = acc op x_i
                red.op.apply(
                    red.kind,
                    std::slice::from_raw_parts(acc_p, len),
                    std::slice::from_raw_parts_mut(cur_p, len),
                );
                if !exclusive {
                    copy(cur_p, r.slot(i).recv.add(range.start), len);
                }
                std::mem::swap(&mut acc_p, &mut cur_p);
            }
        }
    };
    arena.run(
        |r| {
            let m = common_len(r, |s| s.send_len);
            let small = m.saturating_mul(r.size()) <= SMALL_LIMIT;
            if small {
                scan_range(r, 0..m);
            }
            small
        },
        |r| {
            for (owner, range) in chunks(min_len(r), red.elem, n) {
                if owner == me {
                    scan_range(r, range);
                }
            }
        },
    );
    arena.take_truncated(me)
}

/// Block layout of one side of a data-movement collective: where block `j` of a
/// rank's buffer starts and how long it is.
#[derive(Clone, Copy)]
pub enum Layout<'a> {
    /// `len` bytes per block, block j at j*len.
    Uniform(usize),
    /// Per-block lengths and displacements in bytes.
    Varying {
        counts: &'a [usize],
        displs: &'a [usize],
    },
}

impl Layout<'_> {
    fn publish(&self) -> (usize, *const usize, *const usize) {
        match *self {
            Layout::Uniform(len) => (len, std::ptr::null(), std::ptr::null()),
            Layout::Varying { counts, displs } => (0, counts.as_ptr(), displs.as_ptr()),
        }
    }
}

/// Reads back a published layout: (offset, length) of block `j`.
///
/// # Safety
/// The arrays of a varying layout are live and hold an entry per rank.
unsafe fn block(
    len: usize,
    counts: *const usize,
    displs: *const usize,
    j: usize,
) -> (usize, usize) {
    if counts.is_null() {
        (j * len, len)
    } else {
        // SAFETY: forwarded to the caller.
        unsafe { (*displs.add(j), *counts.add(j)) }
    }
}

/// Which blocks a data-movement collective moves: (from rank, its send block) to
/// (to rank, its receive block).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// Rank i's send (one block) to block i of root's receive.
    Gather { root: usize },
    /// Block i of root's send to rank i's receive (one block).
    Scatter { root: usize },
    /// Rank j's send (one block) to block j of every rank's receive.
    AllGather,
    /// Block i of rank j's send to block j of rank i's receive.
    AllToAll,
}

/// Gather, scatter, allgather and alltoall (and their v-variants) in one routine:
/// each transfer copies min(source block, destination block) bytes, flagging the
/// receiver when the source was longer.
///
/// # Safety
/// Buffers valid for their layouts; layout arrays live until return.
pub(crate) unsafe fn exchange(
    comm: &CommShared,
    me: usize,
    pattern: Pattern,
    send: *const u8,
    send_layout: Layout<'_>,
    recv: *mut u8,
    recv_layout: Layout<'_>,
) -> bool {
    if comm.spanning() {
        // SAFETY: forwarded.
        return unsafe {
            spanning::exchange(comm, me, pattern, send, send_layout, recv, recv_layout)
        };
    }
    let arena = &comm.arena;
    let n = arena.size();
    let (send_len, send_counts, send_displs) = send_layout.publish();
    let (recv_len, recv_counts, recv_displs) = recv_layout.publish();
    arena.publish(
        me,
        Slot {
            send,
            recv,
            send_len,
            recv_len,
            send_counts,
            send_displs,
            recv_counts,
            recv_displs,
            ..Slot::default()
        },
    );
    // Moves everything rank `to` receives.
    let receive_all = |r: &Round<'_>, to: usize| {
        let dst = r.slot(to);
        let transfers: Vec<(usize, usize, usize)> = match pattern {
            Pattern::Gather { root } if to == root => (0..n).map(|j| (j, 0, j)).collect(),
            Pattern::Gather { .. } => Vec::new(),
            Pattern::Scatter { root } => vec![(root, to, 0)],
            Pattern::AllGather => (0..n).map(|j| (j, 0, j)).collect(),
            Pattern::AllToAll => (0..n).map(|j| (j, to, j)).collect(),
        };
        for (from, send_block, recv_block) in transfers {
            let src = r.slot(from);
            // SAFETY: published layouts are live and sized per rank this round.
            unsafe {
                let (so, sl) = block(src.send_len, src.send_counts, src.send_displs, send_block);
                let (ro, rl) = block(dst.recv_len, dst.recv_counts, dst.recv_displs, recv_block);
                if sl > rl {
                    r.set_truncated(to);
                }
                copy(src.send.add(so), dst.recv.add(ro), sl.min(rl));
            }
        }
    };
    // Bytes the whole operation moves, from every rank's send side.
    let moved = |r: &Round<'_>| -> usize {
        (0..n)
            .map(|i| {
                let s = r.slot(i);
                let blocks = match pattern {
                    Pattern::Gather { .. } | Pattern::AllGather => 1,
                    Pattern::Scatter { root } if i != root => 0,
                    Pattern::Scatter { .. } | Pattern::AllToAll => n,
                };
                // SAFETY: published layouts are live this round.
                (0..blocks)
                    .map(|j| unsafe { block(s.send_len, s.send_counts, s.send_displs, j) }.1)
                    .sum::<usize>()
            })
            .sum::<usize>()
            .saturating_mul(if pattern == Pattern::AllGather { n } else { 1 })
    };
    arena.run(
        |r| {
            let small = moved(r) <= SMALL_LIMIT;
            if small {
                (0..n).for_each(|to| receive_all(r, to));
            }
            small
        },
        |r| match pattern {
            // The root's receive is filled by the senders in parallel.
            Pattern::Gather { root } => {
                let src = r.slot(me);
                let dst = r.slot(root);
                // SAFETY: as in `receive_all`.
                unsafe {
                    let (ro, rl) = block(dst.recv_len, dst.recv_counts, dst.recv_displs, me);
                    let (_, sl) = block(src.send_len, src.send_counts, src.send_displs, 0);
                    if sl > rl {
                        r.set_truncated(root);
                    }
                    copy(src.send, dst.recv.add(ro), sl.min(rl));
                }
            }
            _ => receive_all(r, me),
        },
    );
    arena.take_truncated(me)
}

mod api;
