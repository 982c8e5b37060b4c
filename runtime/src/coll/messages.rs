//! Collective algorithms among a list of members of a communicator, by
//! point-to-point messages with the runtime's own (negative) tags, which user
//! receives never match. Every member passes the same list ([`Members`]).
//!
//! Reductions keep the list's order: the result is the fold of the members'
//! contributions in list order, with whatever grouping the algorithm uses, so it
//! is right for any associative operation when the list follows rank order, and
//! the same bytes on every member.

use super::{temp, Reduction};
use crate::comm::CommShared;
use crate::error::ErrorClass;
use crate::p2p::{self, SendMode};
use crate::request::{Pending, Status};

pub(crate) const TAG_BARRIER: i32 = -100;
pub(crate) const TAG_BCAST: i32 = -101;
pub(crate) const TAG_REDUCE: i32 = -102;
pub(crate) const TAG_SCAN: i32 = -103;
pub(crate) const TAG_EXCHANGE: i32 = -104;
const TAG_ALLREDUCE: i32 = -105;

/// The communicator ranks taking part, in the order the algorithms use, and the
/// caller's position among them.
pub(crate) struct Members<'a> {
    list: &'a [usize],
    i: usize,
}

impl<'a> Members<'a> {
    /// `list` as seen by its member `me`.
    pub(crate) fn new(list: &'a [usize], me: usize) -> Members<'a> {
        Members {
            i: Self::position_in(list, me),
            list,
        }
    }

    fn position_in(list: &[usize], rank: usize) -> usize {
        list.iter()
            .position(|&r| r == rank)
            .expect("a member of the list")
    }

    /// Position of member `rank`.
    pub(crate) fn position(&self, rank: usize) -> usize {
        Self::position_in(self.list, rank)
    }
}

/// # Safety
/// `buf` valid and unmodified for `len` bytes until the operation finishes.
pub(crate) unsafe fn isend(
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
pub(crate) unsafe fn irecv(
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
pub(crate) fn mismatch(st: Status, want: usize) -> bool {
    st.error == ErrorClass::Truncate || st.bytes != want
}

pub(crate) fn wait_all(ops: Vec<Pending>) {
    for op in ops {
        op.wait();
    }
}

/// Dissemination barrier: ⌈log2 n⌉ rounds of one zero-byte message each way.
pub(crate) fn barrier(c: &CommShared, m: &Members<'_>) {
    let (members, i) = (m.list, m.i);
    let n = members.len();
    let me = members[i];
    let mut k = 1;
    while k < n {
        // SAFETY: zero-byte messages.
        let r = unsafe {
            irecv(
                c,
                me,
                members[(i + n - k) % n],
                TAG_BARRIER,
                std::ptr::null_mut(),
                0,
            )
        };
        // SAFETY: as above.
        let s = unsafe {
            isend(
                c,
                me,
                members[(i + k) % n],
                TAG_BARRIER,
                std::ptr::null(),
                0,
            )
        };
        r.wait();
        s.wait();
        k <<= 1;
    }
}

/// Binomial tree from the member at position `root`. Returns whether the caller's part was truncated.
///
/// # Safety
/// `buf` valid for `len` bytes until return.
pub(crate) unsafe fn bcast(
    c: &CommShared,
    m: &Members<'_>,
    root: usize,
    buf: *mut u8,
    len: usize,
) -> bool {
    let (members, i) = (m.list, m.i);
    let n = members.len();
    let me = members[i];
    let rel = (i + n - root) % n;
    let mut truncated = false;
    let mut mask = 1;
    while mask < n {
        if rel & mask != 0 {
            let from = members[(rel - mask + root) % n];
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
            let to = members[(rel + mask + root) % n];
            // SAFETY: by contract; waited for below.
            sends.push(unsafe { isend(c, me, to, TAG_BCAST, buf, len) });
        }
        mask >>= 1;
    }
    wait_all(sends);
    truncated
}

/// `right = left op right` on two temporaries of `len` bytes.
///
/// # Safety
/// Both pointers valid for `len` bytes, 16-byte aligned, not overlapping.
unsafe fn combine(red: Reduction<'_>, left: *const u8, right: *mut u8, len: usize) {
    // SAFETY: by contract.
    unsafe {
        red.op.apply(
            red.kind,
            std::slice::from_raw_parts(left, len),
            std::slice::from_raw_parts_mut(right, len),
        )
    }
}

/// Reduction of `len` bytes to the member at position `root` (the fold of the whole list);
/// `recv` is written there only. Binomial tree over consecutive ranges of the list.
///
/// # Safety
/// `send` valid for `len` bytes; `recv` for `len` bytes at the root (it may be
/// `send`: in place).
pub(crate) unsafe fn reduce(
    c: &CommShared,
    m: &Members<'_>,
    root: usize,
    send: *const u8,
    recv: *mut u8,
    len: usize,
    red: Reduction<'_>,
) -> bool {
    let (members, i) = (m.list, m.i);
    let n = members.len();
    let me = members[i];
    let mut acc = temp(len);
    let mut other = temp(len);
    let acc_bytes = |v: &mut Vec<u128>| v.as_mut_ptr().cast::<u8>();
    // SAFETY: `send` holds `len` bytes; the temporary as many.
    unsafe { std::ptr::copy(send, acc_bytes(&mut acc), len) };
    let mut truncated = false;
    // After the step of `mask`, this member holds the fold of [i, i + mask).
    let mut mask = 1;
    while mask < n {
        if i & mask != 0 {
            let to = members[i - mask];
            // SAFETY: `acc` lives until the send finished (waited here).
            unsafe { isend(c, me, to, TAG_REDUCE, acc_bytes(&mut acc), len) }.wait();
            break;
        }
        if i + mask < n {
            let from = members[i + mask];
            // SAFETY: `other` holds `len` bytes.
            let st = unsafe { irecv(c, me, from, TAG_REDUCE, acc_bytes(&mut other), len) }.wait();
            truncated |= mismatch(st, len);
            // SAFETY: both temporaries hold `len` bytes; the lower members' fold on
            // the left.
            unsafe { combine(red, acc_bytes(&mut acc), acc_bytes(&mut other), len) };
            std::mem::swap(&mut acc, &mut other);
        }
        mask <<= 1;
    }
    if i == 0 && root == 0 {
        // SAFETY: `recv` holds `len` bytes at the root.
        unsafe { std::ptr::copy(acc_bytes(&mut acc), recv, len) };
    } else if i == 0 {
        // SAFETY: `acc` lives until the send finished.
        unsafe { isend(c, me, members[root], TAG_REDUCE, acc_bytes(&mut acc), len) }.wait();
    } else if i == root {
        // SAFETY: `recv` holds `len` bytes at the root.
        let st = unsafe { irecv(c, me, members[0], TAG_REDUCE, recv, len) }.wait();
        truncated |= mismatch(st, len);
    }
    truncated
}

/// Allreduce in place by recursive doubling: ⌈log2 n⌉ exchanges (two more when n
/// is not a power of two), every member ending with the same bytes.
///
/// # Safety
/// `buf` valid for `len` bytes until return, holding the caller's contribution.
pub(crate) unsafe fn allreduce(
    c: &CommShared,
    m: &Members<'_>,
    buf: *mut u8,
    len: usize,
    red: Reduction<'_>,
) -> bool {
    let (members, i) = (m.list, m.i);
    let n = members.len();
    if n == 1 {
        return false;
    }
    let me = members[i];
    let mut mine = temp(len);
    let mut theirs = temp(len);
    let mine_p = mine.as_mut_ptr().cast::<u8>();
    let theirs_p = theirs.as_mut_ptr().cast::<u8>();
    // SAFETY: both hold `len` bytes; aligned temporaries so typed ops run on them.
    unsafe { std::ptr::copy(buf, mine_p, len) };
    let mut truncated = false;
    let pof2 = 1usize << n.ilog2();
    let extra = n - pof2;
    // The first 2·extra members pair up; the even one of each pair hands its data
    // to the odd one and sits the doubling out.
    let index = if i < 2 * extra {
        if i.is_multiple_of(2) {
            // SAFETY: `mine` lives until the send finished.
            unsafe { isend(c, me, members[i + 1], TAG_ALLREDUCE, mine_p, len) }.wait();
            None
        } else {
            // SAFETY: `theirs` holds `len` bytes.
            let st = unsafe { irecv(c, me, members[i - 1], TAG_ALLREDUCE, theirs_p, len) }.wait();
            truncated |= mismatch(st, len);
            // SAFETY: temporaries of `len` bytes; the lower member on the left.
            unsafe {
                combine(red, theirs_p, mine_p, len);
            }
            Some(i / 2)
        }
    } else {
        Some(i - extra)
    };
    if let Some(v) = index {
        let member_of = |v: usize| if v < extra { 2 * v + 1 } else { v + extra };
        let mut mask = 1;
        while mask < pof2 {
            let peer = members[member_of(v ^ mask)];
            // SAFETY: `theirs` holds `len` bytes, `mine` is not written until both
            // operations are over.
            let (st, _) = unsafe {
                let r = irecv(c, me, peer, TAG_ALLREDUCE, theirs_p, len);
                let s = isend(c, me, peer, TAG_ALLREDUCE, mine_p, len);
                (r.wait(), s.wait())
            };
            truncated |= mismatch(st, len);
            // SAFETY: temporaries of `len` bytes. The group of lower members goes
            // on the left, so both sides compute the same bytes.
            unsafe {
                if v & mask != 0 {
                    combine(red, theirs_p, mine_p, len);
                } else {
                    combine(red, mine_p, theirs_p, len);
                    std::ptr::copy_nonoverlapping(theirs_p, mine_p, len);
                }
            }
            mask <<= 1;
        }
    }
    if i < 2 * extra {
        if i.is_multiple_of(2) {
            // SAFETY: `buf` holds `len` bytes.
            let st = unsafe { irecv(c, me, members[i + 1], TAG_ALLREDUCE, buf, len) }.wait();
            truncated |= mismatch(st, len);
            return truncated;
        }
        // SAFETY: `mine` lives until the send finished.
        unsafe { isend(c, me, members[i - 1], TAG_ALLREDUCE, mine_p, len) }.wait();
    }
    // SAFETY: both hold `len` bytes.
    unsafe { std::ptr::copy_nonoverlapping(mine_p, buf, len) };
    truncated
}
