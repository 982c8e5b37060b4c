//! Typed collective calls of the Rust API. Buffer sizes are checked here, so the
//! byte-level algorithms never see a buffer shorter than its published length.

use super::{Layout, Pattern, Reduction};
use crate::comm::Communicator;
use crate::datatype::{bytes_of, bytes_of_mut, Equivalence, Kind};
use crate::error::{ErrorClass, Result};
use crate::op::Op;

fn elems_to_bytes<T>(v: &[usize]) -> Vec<usize> {
    v.iter().map(|&c| c * std::mem::size_of::<T>()).collect()
}

impl Communicator {
    fn me(&self) -> usize {
        self.rank as usize
    }

    fn n(&self) -> usize {
        self.size() as usize
    }

    fn reduction<'a, T: Equivalence>(
        &self,
        call: &'static str,
        op: &'a Op,
    ) -> Result<Reduction<'a>> {
        // Whole elements of T: chunks of a parallel reduction never split one.
        self.reduction_of(call, op, T::KIND, std::mem::size_of::<T>())
    }

    /// `op` over elements of `kind` and `elem` bytes, or the call's error.
    pub(crate) fn reduction_of<'a>(
        &self,
        call: &'static str,
        op: &'a Op,
        kind: Kind,
        elem: usize,
    ) -> Result<Reduction<'a>> {
        if let Err((class, detail)) = op.check(kind) {
            return self.fail(call, class, detail);
        }
        Ok(Reduction { op, kind, elem })
    }

    /// MPI_ERR_TRUNCATE when a collective found buffers that did not fit.
    pub(crate) fn truncated(&self, call: &'static str, t: bool) -> Result<()> {
        if t {
            self.fail(
                call,
                ErrorClass::Truncate,
                "buffer sizes differ between ranks: data did not fit (counts must match)",
            )
        } else {
            Ok(())
        }
    }

    fn root_buffer_missing<T>(&self, call: &'static str, which: &str) -> Result<T> {
        self.fail(
            call,
            ErrorClass::Buffer,
            format!("the root needs a {which} buffer"),
        )
    }

    fn length_check(&self, call: &'static str, what: &str, have: usize, need: usize) -> Result<()> {
        if have < need {
            self.fail(
                call,
                ErrorClass::Count,
                format!("{what} holds {have} elements, {need} are needed"),
            )
        } else {
            Ok(())
        }
    }

    fn counts_check(
        &self,
        call: &'static str,
        counts: &[usize],
        displs: &[usize],
        len: usize,
    ) -> Result<()> {
        if counts.len() != self.n() || displs.len() != self.n() {
            return self.fail(
                call,
                ErrorClass::Arg,
                format!("counts and displacements need {} entries each", self.n()),
            );
        }
        for (i, (&c, &d)) in counts.iter().zip(displs).enumerate() {
            if d + c > len {
                return self.fail(
                    call,
                    ErrorClass::Count,
                    format!("block {i} ({c} elements at {d}) exceeds the buffer of {len} elements"),
                );
            }
        }
        Ok(())
    }

    /// MPI_Barrier.
    pub fn barrier(&self) -> Result<()> {
        super::barrier(&self.shared, self.me());
        Ok(())
    }

    /// MPI_Bcast: `buf` of `root` is copied into `buf` of every rank.
    pub fn broadcast<T: Equivalence>(&self, buf: &mut [T], root: i32) -> Result<()> {
        let root = self.check(self.check_root("MPI_Bcast", root))?;
        let b = bytes_of_mut(buf);
        // SAFETY: `b` is exclusively borrowed for the call.
        let t = unsafe { super::bcast(&self.shared, self.me(), root, b.as_mut_ptr(), b.len()) };
        self.truncated("MPI_Bcast", t)
    }

    /// MPI_Allreduce.
    pub fn all_reduce<T: Equivalence>(&self, send: &[T], recv: &mut [T], op: &Op) -> Result<()> {
        let red = self.reduction::<T>("MPI_Allreduce", op)?;
        self.length_check("MPI_Allreduce", "receive buffer", recv.len(), send.len())?;
        let s = bytes_of(send);
        // SAFETY: both buffers are borrowed for the call and hold `s.len()` bytes.
        let t = unsafe {
            super::reduce(
                &self.shared,
                self.me(),
                None,
                s.as_ptr(),
                bytes_of_mut(recv).as_mut_ptr(),
                s.len(),
                red,
            )
        };
        self.truncated("MPI_Allreduce", t)
    }

    /// MPI_Allreduce with MPI_IN_PLACE.
    pub fn all_reduce_in_place<T: Equivalence>(&self, buf: &mut [T], op: &Op) -> Result<()> {
        let red = self.reduction::<T>("MPI_Allreduce", op)?;
        let b = bytes_of_mut(buf);
        // SAFETY: `b` is exclusively borrowed; in-place reduction is supported.
        let t = unsafe {
            super::reduce(
                &self.shared,
                self.me(),
                None,
                b.as_ptr(),
                b.as_mut_ptr(),
                b.len(),
                red,
            )
        };
        self.truncated("MPI_Allreduce", t)
    }

    /// MPI_Reduce: `recv` is required at the root and ignored elsewhere.
    pub fn reduce<T: Equivalence>(
        &self,
        send: &[T],
        recv: Option<&mut [T]>,
        op: &Op,
        root: i32,
    ) -> Result<()> {
        let root = self.check(self.check_root("MPI_Reduce", root))?;
        let red = self.reduction::<T>("MPI_Reduce", op)?;
        let recv_ptr = match recv {
            Some(r) => {
                self.length_check("MPI_Reduce", "receive buffer", r.len(), send.len())?;
                bytes_of_mut(r).as_mut_ptr()
            }
            None if self.me() == root => {
                return self.root_buffer_missing("MPI_Reduce", "receive");
            }
            None => std::ptr::null_mut(),
        };
        let s = bytes_of(send);
        // SAFETY: buffers borrowed for the call; non-roots' null receive is never used.
        let t = unsafe {
            super::reduce(
                &self.shared,
                self.me(),
                Some(root),
                s.as_ptr(),
                recv_ptr,
                s.len(),
                red,
            )
        };
        self.truncated("MPI_Reduce", t)
    }

    /// MPI_Reduce with MPI_IN_PLACE at the root (`buf` is the root's input and
    /// output; other ranks pass their input).
    pub fn reduce_in_place<T: Equivalence>(&self, buf: &mut [T], op: &Op, root: i32) -> Result<()> {
        let root = self.check(self.check_root("MPI_Reduce", root))?;
        let red = self.reduction::<T>("MPI_Reduce", op)?;
        let b = bytes_of_mut(buf);
        // SAFETY: `b` exclusively borrowed; only the root's copy is written.
        let t = unsafe {
            super::reduce(
                &self.shared,
                self.me(),
                Some(root),
                b.as_ptr(),
                b.as_mut_ptr(),
                b.len(),
                red,
            )
        };
        self.truncated("MPI_Reduce", t)
    }

    /// MPI_Reduce_scatter_block: rank i gets block i (of `recv.len()` elements) of
    /// the reduction of every rank's `send` (`size * recv.len()` elements).
    pub fn reduce_scatter_block<T: Equivalence>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: &Op,
    ) -> Result<()> {
        let counts = vec![recv.len(); self.n()];
        self.reduce_scatter_impl("MPI_Reduce_scatter_block", send, recv, &counts, op)
    }

    /// MPI_Reduce_scatter: rank i gets `counts[i]` elements of the reduction.
    pub fn reduce_scatter<T: Equivalence>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
        op: &Op,
    ) -> Result<()> {
        self.reduce_scatter_impl("MPI_Reduce_scatter", send, recv, counts, op)
    }

    fn reduce_scatter_impl<T: Equivalence>(
        &self,
        call: &'static str,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
        op: &Op,
    ) -> Result<()> {
        let red = self.reduction::<T>(call, op)?;
        if counts.len() != self.n() {
            return self.fail(
                call,
                ErrorClass::Arg,
                format!("counts need {} entries", self.n()),
            );
        }
        self.length_check(call, "send buffer", send.len(), counts.iter().sum())?;
        self.length_check(call, "receive buffer", recv.len(), counts[self.me()])?;
        let bytes = elems_to_bytes::<T>(counts);
        // SAFETY: lengths checked above; buffers borrowed for the call.
        let t = unsafe {
            super::reduce_scatter(
                &self.shared,
                self.me(),
                bytes_of(send).as_ptr(),
                bytes_of_mut(recv).as_mut_ptr(),
                &bytes,
                red,
            )
        };
        self.truncated(call, t)
    }

    /// MPI_Scan: inclusive prefix reduction in rank order.
    pub fn scan<T: Equivalence>(&self, send: &[T], recv: &mut [T], op: &Op) -> Result<()> {
        self.scan_impl("MPI_Scan", send, recv, op, false)
    }

    /// MPI_Exscan: exclusive prefix reduction; rank 0's `recv` is left untouched.
    pub fn exscan<T: Equivalence>(&self, send: &[T], recv: &mut [T], op: &Op) -> Result<()> {
        self.scan_impl("MPI_Exscan", send, recv, op, true)
    }

    fn scan_impl<T: Equivalence>(
        &self,
        call: &'static str,
        send: &[T],
        recv: &mut [T],
        op: &Op,
        ex: bool,
    ) -> Result<()> {
        let red = self.reduction::<T>(call, op)?;
        self.length_check(call, "receive buffer", recv.len(), send.len())?;
        let s = bytes_of(send);
        // SAFETY: buffers borrowed for the call, lengths checked.
        let t = unsafe {
            super::scan(
                &self.shared,
                self.me(),
                s.as_ptr(),
                bytes_of_mut(recv).as_mut_ptr(),
                s.len(),
                red,
                ex,
            )
        };
        self.truncated(call, t)
    }

    fn exchange_impl<T: Equivalence>(
        &self,
        call: &'static str,
        pattern: Pattern,
        send: &[T],
        send_layout: Layout<'_>,
        recv: *mut T,
        recv_layout: Layout<'_>,
    ) -> Result<()> {
        // SAFETY: callers checked every layout against its buffer and borrow both
        // buffers for the call.
        let t = unsafe {
            super::exchange(
                &self.shared,
                self.me(),
                pattern,
                bytes_of(send).as_ptr(),
                send_layout,
                recv.cast::<u8>(),
                recv_layout,
            )
        };
        self.truncated(call, t)
    }

    /// MPI_Gather: the root's `recv` gets every rank's `send` in rank order.
    pub fn gather<T: Equivalence>(
        &self,
        send: &[T],
        recv: Option<&mut [T]>,
        root: i32,
    ) -> Result<()> {
        let root = self.check(self.check_root("MPI_Gather", root))?;
        let sz = std::mem::size_of::<T>();
        let (ptr, block) = match recv {
            Some(r) if self.me() == root => {
                self.length_check(
                    "MPI_Gather",
                    "receive buffer",
                    r.len(),
                    send.len() * self.n(),
                )?;
                (r.as_mut_ptr(), r.len() / self.n())
            }
            None if self.me() == root => return self.root_buffer_missing("MPI_Gather", "receive"),
            _ => (std::ptr::null_mut(), 0),
        };
        self.exchange_impl(
            "MPI_Gather",
            Pattern::Gather { root },
            send,
            Layout::Uniform(std::mem::size_of_val(send)),
            ptr,
            Layout::Uniform(block * sz),
        )
    }

    /// MPI_Gatherv: block i (from rank i) lands at `displs[i]` with `counts[i]`
    /// elements of the root's `recv`.
    pub fn gather_varcount<T: Equivalence>(
        &self,
        send: &[T],
        recv: Option<(&mut [T], &[usize], &[usize])>,
        root: i32,
    ) -> Result<()> {
        let root = self.check(self.check_root("MPI_Gatherv", root))?;
        let mut cb = Vec::new();
        let mut db = Vec::new();
        let ptr = match recv {
            Some((r, counts, displs)) if self.me() == root => {
                self.counts_check("MPI_Gatherv", counts, displs, r.len())?;
                cb = elems_to_bytes::<T>(counts);
                db = elems_to_bytes::<T>(displs);
                r.as_mut_ptr()
            }
            None if self.me() == root => return self.root_buffer_missing("MPI_Gatherv", "receive"),
            _ => std::ptr::null_mut(),
        };
        let layout = if self.me() == root {
            Layout::Varying {
                counts: &cb,
                displs: &db,
            }
        } else {
            Layout::Uniform(0)
        };
        self.exchange_impl(
            "MPI_Gatherv",
            Pattern::Gather { root },
            send,
            Layout::Uniform(std::mem::size_of_val(send)),
            ptr,
            layout,
        )
    }

    /// MPI_Scatter: block i of the root's `send` goes to rank i's `recv`.
    pub fn scatter<T: Equivalence>(
        &self,
        send: Option<&[T]>,
        recv: &mut [T],
        root: i32,
    ) -> Result<()> {
        let root = self.check(self.check_root("MPI_Scatter", root))?;
        let sz = std::mem::size_of::<T>();
        let (s, block): (&[T], usize) = match send {
            Some(s) if self.me() == root => {
                self.length_check("MPI_Scatter", "send buffer", s.len(), recv.len() * self.n())?;
                (s, s.len() / self.n())
            }
            None if self.me() == root => return self.root_buffer_missing("MPI_Scatter", "send"),
            _ => (&[], 0),
        };
        let rl = std::mem::size_of_val(recv);
        self.exchange_impl(
            "MPI_Scatter",
            Pattern::Scatter { root },
            s,
            Layout::Uniform(block * sz),
            recv.as_mut_ptr(),
            Layout::Uniform(rl),
        )
    }

    /// MPI_Scatterv: rank i gets `counts[i]` elements at `displs[i]` of the root's `send`.
    pub fn scatter_varcount<T: Equivalence>(
        &self,
        send: Option<(&[T], &[usize], &[usize])>,
        recv: &mut [T],
        root: i32,
    ) -> Result<()> {
        let root = self.check(self.check_root("MPI_Scatterv", root))?;
        let mut cb = Vec::new();
        let mut db = Vec::new();
        let s: &[T] = match send {
            Some((s, counts, displs)) if self.me() == root => {
                self.counts_check("MPI_Scatterv", counts, displs, s.len())?;
                cb = elems_to_bytes::<T>(counts);
                db = elems_to_bytes::<T>(displs);
                s
            }
            None if self.me() == root => return self.root_buffer_missing("MPI_Scatterv", "send"),
            _ => &[],
        };
        let layout = if self.me() == root {
            Layout::Varying {
                counts: &cb,
                displs: &db,
            }
        } else {
            Layout::Uniform(0)
        };
        let rl = std::mem::size_of_val(recv);
        self.exchange_impl(
            "MPI_Scatterv",
            Pattern::Scatter { root },
            s,
            layout,
            recv.as_mut_ptr(),
            Layout::Uniform(rl),
        )
    }

    /// MPI_Allgather: every rank's `recv` gets every rank's `send` in rank order.
    pub fn all_gather<T: Equivalence>(&self, send: &[T], recv: &mut [T]) -> Result<()> {
        self.length_check(
            "MPI_Allgather",
            "receive buffer",
            recv.len(),
            send.len() * self.n(),
        )?;
        let sz = std::mem::size_of::<T>();
        let block = recv.len() / self.n();
        self.exchange_impl(
            "MPI_Allgather",
            Pattern::AllGather,
            send,
            Layout::Uniform(std::mem::size_of_val(send)),
            recv.as_mut_ptr(),
            Layout::Uniform(block * sz),
        )
    }

    /// MPI_Allgatherv.
    pub fn all_gather_varcount<T: Equivalence>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
        displs: &[usize],
    ) -> Result<()> {
        self.counts_check("MPI_Allgatherv", counts, displs, recv.len())?;
        let (cb, db) = (elems_to_bytes::<T>(counts), elems_to_bytes::<T>(displs));
        self.exchange_impl(
            "MPI_Allgatherv",
            Pattern::AllGather,
            send,
            Layout::Uniform(std::mem::size_of_val(send)),
            recv.as_mut_ptr(),
            Layout::Varying {
                counts: &cb,
                displs: &db,
            },
        )
    }

    /// MPI_Alltoall: block j of rank i's `send` goes to block i of rank j's `recv`.
    pub fn all_to_all<T: Equivalence>(&self, send: &[T], recv: &mut [T]) -> Result<()> {
        let n = self.n();
        if !send.len().is_multiple_of(n) {
            return self.fail(
                "MPI_Alltoall",
                ErrorClass::Count,
                format!(
                    "send buffer of {} elements is not {n} equal blocks",
                    send.len()
                ),
            );
        }
        self.length_check("MPI_Alltoall", "receive buffer", recv.len(), send.len())?;
        let sz = std::mem::size_of::<T>();
        let block = send.len() / n * sz;
        let rblock = recv.len() / n * sz;
        self.exchange_impl(
            "MPI_Alltoall",
            Pattern::AllToAll,
            send,
            Layout::Uniform(block),
            recv.as_mut_ptr(),
            Layout::Uniform(rblock),
        )
    }

    /// MPI_Alltoallv.
    #[allow(clippy::too_many_arguments)]
    pub fn all_to_all_varcount<T: Equivalence>(
        &self,
        send: &[T],
        send_counts: &[usize],
        send_displs: &[usize],
        recv: &mut [T],
        recv_counts: &[usize],
        recv_displs: &[usize],
    ) -> Result<()> {
        self.counts_check("MPI_Alltoallv", send_counts, send_displs, send.len())?;
        self.counts_check("MPI_Alltoallv", recv_counts, recv_displs, recv.len())?;
        let (sc, sd) = (
            elems_to_bytes::<T>(send_counts),
            elems_to_bytes::<T>(send_displs),
        );
        let (rc, rd) = (
            elems_to_bytes::<T>(recv_counts),
            elems_to_bytes::<T>(recv_displs),
        );
        self.exchange_impl(
            "MPI_Alltoallv",
            Pattern::AllToAll,
            send,
            Layout::Varying {
                counts: &sc,
                displs: &sd,
            },
            recv.as_mut_ptr(),
            Layout::Varying {
                counts: &rc,
                displs: &rd,
            },
        )
    }
}
