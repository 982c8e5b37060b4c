//! Collectives on intercommunicators (MPI-3.1 section 5.2.2): the data goes
//! from one group to the other. Between the groups, messages on the bridge
//! with the runtime's negative tags; within a group, the byte-level
//! collectives of its private local intracommunicator. The leaders are the
//! local ranks 0.
//!
//! Rooted operations: the root passes MPI_ROOT, the rest of its group
//! MPI_PROC_NULL (they take no part), the other group the root's rank.

use super::messages::{irecv, isend, mismatch, wait_all};
use super::{Layout, Pattern, Reduction};
use crate::comm::Communicator;
use crate::consts::PROC_NULL;
use crate::intercomm::{Inter, ROOT};
use crate::request::Pending;

const TAG_BARRIER: i32 = -130;
const TAG_BCAST: i32 = -131;
const TAG_REDUCE: i32 = -132;
const TAG_EXCHANGE: i32 = -133;

fn parts(c: &Communicator) -> (&Inter, usize) {
    let i = c.inter.as_ref().expect("an intercommunicator");
    (i, i.local.rank as usize)
}

/// Sends `len` bytes to remote rank `to` on the bridge.
///
/// # Safety
/// `buf` valid for `len` bytes until the returned operation finished.
unsafe fn send(c: &Communicator, to: usize, tag: i32, buf: *const u8, len: usize) -> Pending {
    let (i, _) = parts(c);
    // SAFETY: forwarded.
    unsafe { isend(&c.shared, i.me_at(), i.remote_at[to], tag, buf, len) }
}

/// Receives up to `len` bytes from remote rank `from` on the bridge.
///
/// # Safety
/// `buf` valid for `len` bytes, used by nobody else, until the operation finished.
unsafe fn recv(c: &Communicator, from: usize, tag: i32, buf: *mut u8, len: usize) -> Pending {
    let (i, _) = parts(c);
    // SAFETY: forwarded. Internal sends carry their bridge member as source.
    unsafe { irecv(&c.shared, i.me_at(), i.remote_at[from], tag, buf, len) }
}

/// Waits for a receive of `want` bytes; whether it was truncated or short.
fn short(p: Pending, want: usize) -> bool {
    mismatch(p.wait(), want)
}

/// Every rank of both groups arrives before any leaves.
pub(crate) fn barrier(c: &Communicator) {
    let (i, me) = parts(c);
    let local = &i.local.shared;
    super::barrier(local, me);
    if me == 0 {
        // SAFETY: zero-byte messages.
        let (r, s) = unsafe {
            (
                recv(c, 0, TAG_BARRIER, std::ptr::null_mut(), 0),
                send(c, 0, TAG_BARRIER, std::ptr::null(), 0),
            )
        };
        s.wait();
        r.wait();
    }
    super::barrier(local, me);
}

/// Broadcast of `len` bytes from the root to every rank of the other group.
///
/// # Safety
/// `buf` valid for `len` bytes until return.
pub(crate) unsafe fn bcast(c: &Communicator, root: i32, buf: *mut u8, len: usize) -> bool {
    let (i, me) = parts(c);
    match root {
        PROC_NULL => false,
        ROOT => {
            // SAFETY: forwarded.
            unsafe { send(c, 0, TAG_BCAST, buf, len) }.wait();
            false
        }
        root => {
            let mut t = false;
            if me == 0 {
                // SAFETY: forwarded.
                t = short(unsafe { recv(c, root as usize, TAG_BCAST, buf, len) }, len);
            }
            // SAFETY: forwarded.
            t | unsafe { super::bcast(&i.local.shared, me, 0, buf, len) }
        }
    }
}

/// Reduce (`root` Some) and Allreduce (`root` None): the result at a rank is
/// the reduction of the other group's contributions.
///
/// # Safety
/// `send` valid for `len` bytes; `recv` for `len` bytes where written.
pub(crate) unsafe fn reduce(
    c: &Communicator,
    root: Option<i32>,
    send_buf: *const u8,
    recv_buf: *mut u8,
    len: usize,
    red: Reduction<'_>,
) -> bool {
    let (i, me) = parts(c);
    let local = &i.local.shared;
    match root {
        Some(PROC_NULL) => false,
        Some(ROOT) => {
            // SAFETY: forwarded.
            short(unsafe { recv(c, 0, TAG_REDUCE, recv_buf, len) }, len)
        }
        Some(root) => {
            let mut folded = vec![0u8; if me == 0 { len } else { 0 }];
            // SAFETY: `folded` holds `len` bytes at the leader, which alone gets the result.
            let t = unsafe {
                super::reduce(local, me, Some(0), send_buf, folded.as_mut_ptr(), len, red)
            };
            if me == 0 {
                // SAFETY: `folded` lives until the wait.
                unsafe { send(c, root as usize, TAG_REDUCE, folded.as_ptr(), len) }.wait();
            }
            t
        }
        None => {
            let mut folded = vec![0u8; if me == 0 { len } else { 0 }];
            // SAFETY: as above.
            let mut t = unsafe {
                super::reduce(local, me, Some(0), send_buf, folded.as_mut_ptr(), len, red)
            };
            if me == 0 {
                // SAFETY: both buffers live until the waits.
                let (r, s) = unsafe {
                    (
                        recv(c, 0, TAG_REDUCE, recv_buf, len),
                        send(c, 0, TAG_REDUCE, folded.as_ptr(), len),
                    )
                };
                s.wait();
                t |= short(r, len);
            }
            // SAFETY: forwarded.
            t | unsafe { super::bcast(local, me, 0, recv_buf, len) }
        }
    }
}

/// Reduce_scatter: the reduction of the other group's contributions (the sum
/// of `counts` bytes), scattered over this group by `counts`.
///
/// # Safety
/// `send` valid for the sum of `counts`, `recv` for `counts[rank]` bytes.
pub(crate) unsafe fn reduce_scatter(
    c: &Communicator,
    send_buf: *const u8,
    recv_buf: *mut u8,
    counts: &[usize],
    red: Reduction<'_>,
) -> bool {
    let (i, me) = parts(c);
    let local = &i.local.shared;
    let total: usize = counts.iter().sum();
    let leader = me == 0;
    let mut folded = vec![0u8; if leader { total } else { 0 }];
    let mut theirs = vec![0u8; if leader { total } else { 0 }];
    // SAFETY: `folded` holds the total at the leader, which alone gets the result.
    let mut t = unsafe {
        super::reduce(
            local,
            me,
            Some(0),
            send_buf,
            folded.as_mut_ptr(),
            total,
            red,
        )
    };
    if leader {
        // SAFETY: both buffers live until the waits.
        let (r, s) = unsafe {
            (
                recv(c, 0, TAG_REDUCE, theirs.as_mut_ptr(), total),
                send(c, 0, TAG_REDUCE, folded.as_ptr(), total),
            )
        };
        s.wait();
        t |= short(r, total);
    }
    let displs: Vec<usize> = counts
        .iter()
        .scan(0, |at, &n| {
            let d = *at;
            *at += n;
            Some(d)
        })
        .collect();
    // SAFETY: `theirs` holds the total at the leader (the only sender).
    t | unsafe {
        super::exchange(
            local,
            me,
            Pattern::Scatter { root: 0 },
            theirs.as_ptr(),
            Layout::Varying {
                counts,
                displs: &displs,
            },
            recv_buf,
            Layout::Uniform(counts[me]),
        )
    }
}

/// (offset, length) of block `j` of a layout.
fn block(l: &Layout<'_>, j: usize) -> (usize, usize) {
    match *l {
        Layout::Uniform(len) => (j * len, len),
        Layout::Varying { counts, displs } => (displs[j], counts[j]),
    }
}

/// Gather, scatter, allgather and alltoall (and their v-variants) between the
/// groups; a rooted pattern's root is MPI_ROOT, MPI_PROC_NULL or a remote
/// rank, as the caller passed it. Blocks of the per-rank layouts are by remote rank.
///
/// # Safety
/// Buffers valid for their layouts until return.
pub(crate) unsafe fn exchange(
    c: &Communicator,
    pattern: Pattern,
    root: i32,
    send_buf: *const u8,
    send_layout: Layout<'_>,
    recv_buf: *mut u8,
    recv_layout: Layout<'_>,
) -> bool {
    let m = c.peer_count();
    let mut receives: Vec<(Pending, usize)> = Vec::new();
    let mut sends = Vec::new();
    // SAFETY (every block below): the layouts describe the caller's buffers.
    unsafe {
        match (pattern, root) {
            (Pattern::Gather { .. } | Pattern::Scatter { .. }, PROC_NULL) => {}
            (Pattern::Gather { .. }, ROOT) => {
                for j in 0..m {
                    let (at, len) = block(&recv_layout, j);
                    receives.push((recv(c, j, TAG_EXCHANGE, recv_buf.add(at), len), len));
                }
            }
            (Pattern::Gather { .. }, root) => {
                let (at, len) = block(&send_layout, 0);
                sends.push(send(c, root as usize, TAG_EXCHANGE, send_buf.add(at), len));
            }
            (Pattern::Scatter { .. }, ROOT) => {
                for j in 0..m {
                    let (at, len) = block(&send_layout, j);
                    sends.push(send(c, j, TAG_EXCHANGE, send_buf.add(at), len));
                }
            }
            (Pattern::Scatter { .. }, root) => {
                let (at, len) = block(&recv_layout, 0);
                receives.push((
                    recv(c, root as usize, TAG_EXCHANGE, recv_buf.add(at), len),
                    len,
                ));
            }
            (Pattern::AllGather | Pattern::AllToAll, _) => {
                let all_to_all = matches!(pattern, Pattern::AllToAll);
                for j in 0..m {
                    let (at, len) = block(&recv_layout, j);
                    receives.push((recv(c, j, TAG_EXCHANGE, recv_buf.add(at), len), len));
                }
                for j in 0..m {
                    let (at, len) = block(&send_layout, if all_to_all { j } else { 0 });
                    sends.push(send(c, j, TAG_EXCHANGE, send_buf.add(at), len));
                }
            }
        }
    }
    wait_all(sends);
    receives
        .into_iter()
        .fold(false, |t, (r, want)| t | short(r, want))
}
