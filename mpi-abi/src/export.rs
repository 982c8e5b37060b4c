//! Every MPI function is exported twice: `PMPI_x` holds the body and `MPI_x` calls
//! it, so profiling tools can interpose on `MPI_x` (the MPI profiling interface).
//! Both are public Rust items named like their symbols, so the signatures can be
//! checked against mpi.h (see mpi-abi/check).

/// `mpi_fn! { fn Name(args) -> Ret { body } ... }` defines `PMPI_Name` and `MPI_Name`.
/// Bodies run with the C caller's pointers: each function's safety contract is
/// the one the MPI standard gives its arguments.
///
/// `fn Name(args) -> Ret, fast { ... } { body }` adds a fast path, an
/// `Option<Ret>` run before the call's frame: `Some` returns at once. It must
/// neither block, switch ULTs, allocate nor change errno (what the frame is
/// for); `None` leaves the call to the body. One-sided calls between ranks
/// a process reaches by stores cost less than the frame without it.
macro_rules! mpi_fn {
    ($(
        fn $name:ident ( $($arg:ident : $ty:ty),* $(,)? ) -> $ret:ty $(, fast $fast:block)? $body:block
    )*) => {
        $(
            paste::paste! {
                #[doc = concat!("`PMPI_", stringify!($name), "` of the MPI standard.")]
                ///
                /// # Safety
                /// Called from C with the arguments MPI specifies for this function.
                #[no_mangle]
                #[allow(unreachable_code)]
                pub unsafe extern "C-unwind" fn [<PMPI_ $name>]( $($arg : $ty),* ) -> $ret {
                    // A rank of a job recovered in place leaves here for its
                    // new run (its stack unwinds through the program's frames).
                    ::mpcrs::recovery::leave_if_recovering();
                    // SAFETY: as this function's.
                    let framed = move || unsafe { [<framed_ $name:snake>]( $($arg),* ) };
                    $(
                        // SAFETY: as the body's.
                        #[allow(unused_unsafe, clippy::redundant_closure_call)]
                        if let Some(code) = unsafe { (|| -> Option<$ret> $fast)() } {
                            return code;
                        }
                        // Out of line: the fast path keeps a small frame.
                        return crate::export::out_of_line(framed);
                    )?
                    framed()
                }

                /// The body in the call's frame.
                ///
                /// # Safety
                /// As the PMPI entry point.
                #[inline(always)]
                #[allow(clippy::too_many_arguments)]
                unsafe fn [<framed_ $name:snake>]( $($arg : $ty),* ) -> $ret {
                    // What it allocates is the runtime's, not the program's.
                    let _heap = crate::rank_heap::in_runtime();
                    // One lookup of the caller serves what follows.
                    let caller = ::mpcrs_scheduler::Caller::current();
                    // A blocking call runs other ranks' ULTs on this thread, whose
                    // errno is shared: the caller finds its own as it left it.
                    let _errno = crate::export::KeepErrno::at(caller.errno());
                    // The call a deadlock report names.
                    static CALL: &str = concat!("MPI_", stringify!($name));
                    let _call = ::mpcrs::deadlock::CallNote::enter(&caller, &CALL);
                    // SAFETY: the body's contract is the function's. The
                    // closure lets the body `return` its code.
                    #[allow(unused_unsafe, clippy::redundant_closure_call)]
                    unsafe { (|| -> $ret $body)() }
                }

                crate::export::profiling_alias!($name ( $($arg : $ty),* ) -> $ret);
            }
        )*
    };
}

/// Entry points that neither block, allocate, call back into the program nor
/// fail (MPI_Wtime, MPI_Wtick): without the frame of [`mpi_fn`], since
/// programs time single operations with them and the frame costs more than
/// the clock.
macro_rules! mpi_leaf_fn {
    ($(
        fn $name:ident ( $($arg:ident : $ty:ty),* $(,)? ) -> $ret:ty $body:block
    )*) => {
        $(
            paste::paste! {
                #[doc = concat!("`PMPI_", stringify!($name), "` of the MPI standard.")]
                ///
                /// # Safety
                /// Called from C with the arguments MPI specifies for this function.
                #[no_mangle]
                pub unsafe extern "C-unwind" fn [<PMPI_ $name>]( $($arg : $ty),* ) -> $ret $body

                crate::export::profiling_alias!($name ( $($arg : $ty),* ) -> $ret);
            }
        )*
    };
}

/// `MPI_Name`, which calls `PMPI_Name` (the profiling interface's pair),
/// for [`mpi_fn`] and [`mpi_leaf_fn`].
macro_rules! profiling_alias {
    ($name:ident ( $($arg:ident : $ty:ty),* ) -> $ret:ty) => {
        paste::paste! {
            #[doc = concat!("`MPI_", stringify!($name), "`: calls `PMPI_", stringify!($name), "`.")]
            ///
            /// # Safety
            /// As the PMPI entry point.
            #[no_mangle]
            pub unsafe extern "C-unwind" fn [<MPI_ $name>]( $($arg : $ty),* ) -> $ret {
                // SAFETY: same contract as the PMPI entry point.
                unsafe { [<PMPI_ $name>]( $($arg),* ) }
            }
        }
    };
}

/// Runs `f` in a frame of its own (see the fast paths of [`mpi_fn`]).
#[inline(never)]
pub(crate) fn out_of_line<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// Restores the thread's errno when dropped to what it was when made.
pub(crate) struct KeepErrno(*mut libc::c_int, libc::c_int);

impl KeepErrno {
    /// `errno` is the calling thread's (`Caller::errno`).
    #[inline]
    pub(crate) fn at(errno: *mut libc::c_int) -> KeepErrno {
        // SAFETY: the calling thread's errno, which outlives the call.
        KeepErrno(errno, unsafe { *errno })
    }
}

impl Drop for KeepErrno {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: as above; a ULT resumes on its home worker, so the thread
        // (and its errno) is the one the call entered on.
        unsafe { *self.0 = self.1 };
    }
}

/// `tri!(expr)`: the value of an `Ok`, or return the MPI code of an `Err`.
macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(code) => return code,
        }
    };
}

pub(crate) use {mpi_fn, mpi_leaf_fn, profiling_alias, tri};
