//! Every MPI function is exported twice: `PMPI_x` holds the body and `MPI_x` calls
//! it, so profiling tools can interpose on `MPI_x` (the MPI profiling interface).

/// `mpi_fn! { fn Name(args) -> Ret { body } ... }` defines `PMPI_Name` and `MPI_Name`.
/// Bodies run with the C caller's pointers: each function's safety contract is
/// the one the MPI standard gives its arguments.
macro_rules! mpi_fn {
    ($(
        fn $name:ident ( $($arg:ident : $ty:ty),* $(,)? ) -> $ret:ty $body:block
    )*) => {
        $(
            const _: () = {
                #[export_name = concat!("PMPI_", stringify!($name))]
                unsafe extern "C" fn pmpi( $($arg : $ty),* ) -> $ret $body

                #[export_name = concat!("MPI_", stringify!($name))]
                unsafe extern "C" fn mpi( $($arg : $ty),* ) -> $ret {
                    // SAFETY: same contract as the PMPI entry point.
                    unsafe { pmpi( $($arg),* ) }
                }
            };
        )*
    };
}

pub(crate) use mpi_fn;
