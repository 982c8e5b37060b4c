//! Collectives of communicators whose members live in several processes, over
//! point-to-point messages with the runtime's own (negative) tags, which user
//! receives never match. Reductions fold in rank order (a binomial tree over
//! contiguous rank ranges), so results match the one-process algorithms for
//! non-commutative operations too.

use super::{displacements, temp, Layout, Pattern, Reduction};
use crate::comm::CommShared;
use crate::error::ErrorClass;
use crate::p2p::{self, SendMode};
use crate::request::{Pending, Status};

const TAG_BARRIER: i32 = -100;
const TAG_BCAST: i32 = -101;
const TAG_REDUCE: i32 = -102;
const TAG_SCAN: i32 = -103;
const TAG_EXCHANGE: i32 = -104;

/// # Safety
/// `buf` valid and unmodified for `len` bytes until the operation finishes.
unsafe fn isend(
    c: &CommShared,
    me: usize,
    to: usize,
    tag: i32,
    buf: *const u8,
    len: usize,
) -> Pending {
    // SAFETY: forwarded.
    unsafe {
        p2p::send_to(
            c,
            to,
            p2p::Outgoing {
                source: me as i32,
                tag,
                buf,
                len,
                mode: SendMode::Standard,
            },
        )
    }
}

/// # Safety
/// `buf` valid for `cap` bytes, used by nobody else, until the operation finishes.
unsafe fn irecv(
    c: &CommShared,
    me: usize,
    from: usize,
    tag: i32,
    buf: *mut u8,
    cap: usize,
) -> Pending {
    // SAFETY: forwarded.
    unsafe { p2p::recv(&c.mailboxes[me], from as i32, tag, buf, cap) }
}

/// Whether a collective's message did not have the length the receiver expected.
fn mismatch(st: Status, want: usize) -> bool {
    st.error == ErrorClass::Truncate || st.bytes != want
}

fn wait_all(ops: Vec<Pending>) {
    for op in ops {
        op.wait();
    }
}

pub(crate) fn barrier(c: &CommShared, me: usize) {
    let n = c.group.size();
    let mut k = 1;
    while k < n {
        // SAFETY: zero-byte messages.
        let r = unsafe {
            irecv(
                c,
                me,
                (me + n - k) % n,
                TAG_BARRIER,
                std::ptr::null_mut(),
                0,
            )
        };
        // SAFETY: as above.
        let s = unsafe { isend(c, me, (me + k) % n, TAG_BARRIER, std::ptr::null(), 0) };
        r.wait();
        s.wait();
        k <<= 1;
    }
}

/// Binomial tree from `root`. Returns whether the caller's part was truncated.
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
    let n = c.group.size();
    let rel = (me + n - root) % n;
    let mut truncated = false;
    let mut mask = 1;
    while mask < n {
        if rel & mask != 0 {
            let from = (rel - mask + root) % n;
            // SAFETY: by contract.
            let st = unsafe { irecv(c, me, from, TAG_BCAST, buf, len) }.wait();
            truncated = mismatch(st, len);
            break;
        }
        mask <<= 1;
    }
    let mut sends = Vec::new();
    mask >>= 1;
    while mask > 0 {
        if rel + mask < n {
            let to = (rel + mask + root) % n;
            // SAFETY: by contract; waited for below.
            sends.push(unsafe { isend(c, me, to, TAG_BCAST, buf, len) });
        }
        mask >>= 1;
    }
    wait_all(sends);
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
    let n = c.group.size();
    let mut acc = temp(len);
    let mut other = temp(len);
    let acc_bytes = |v: &mut Vec<u128>| v.as_mut_ptr().cast::<u8>();
    // SAFETY: `send` holds `len` bytes; the temporary as many.
    unsafe { std::ptr::copy(send, acc_bytes(&mut acc), len) };
    let mut truncated = false;
    // After the step of `mask`, this rank holds the fold of ranks [me, me + mask).
    let mut mask = 1;
    while mask < n {
        if me & mask != 0 {
            // SAFETY: `acc` lives until the send finished (waited here).
            unsafe { isend(c, me, me - mask, TAG_REDUCE, acc_bytes(&mut acc), len) }.wait();
            break;
        }
        if me + mask < n {
            // SAFETY: `other` holds `len` bytes.
            let st =
                unsafe { irecv(c, me, me + mask, TAG_REDUCE, acc_bytes(&mut other), len) }.wait();
            truncated |= mismatch(st, len);
            // SAFETY: both temporaries hold `len` bytes, 16-byte aligned.
            unsafe {
                let left = std::slice::from_raw_parts(acc_bytes(&mut acc), len);
                let right = std::slice::from_raw_parts_mut(acc_bytes(&mut other), len);
                // right = left op right: the lower ranks' fold on the left.
                red.op.apply(red.kind, left, right);
            }
            std::mem::swap(&mut acc, &mut other);
        }
        mask <<= 1;
    }
    match root {
        Some(0) | None if me == 0 => {
            // SAFETY: `recv` holds `len` bytes at the root.
            unsafe { std::ptr::copy(acc_bytes(&mut acc), recv, len) };
        }
        Some(r) if me == 0 => {
            // SAFETY: `acc` lives until the send finished.
            unsafe { isend(c, me, r, TAG_REDUCE, acc_bytes(&mut acc), len) }.wait();
        }
        Some(r) if me == r => {
            // SAFETY: `recv` holds `len` bytes at the root.
            let st = unsafe { irecv(c, me, 0, TAG_REDUCE, recv, len) }.wait();
            truncated |= mismatch(st, len);
        }
        _ => {}
    }
    if root.is_none() {
        // SAFETY: `recv` holds `len` bytes on every rank of an allreduce.
        truncated |= unsafe { bcast(c, me, 0, recv, len) };
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
