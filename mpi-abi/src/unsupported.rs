//! The MPI-3.1 functions mpcrs does not provide yet (dynamic processes,
//! user-defined data representations). They exist so that
//! every program links, and each call fails with MPI_ERR_UNSUPPORTED_OPERATION
//! through the error handler of its communicator (MPI_COMM_WORLD's for the
//! others), naming the function: a program is never told a call succeeded when
//! it did nothing.

use std::os::raw::{c_char, c_int, c_void};

use mpcrs::ErrorClass;

use crate::ctypes::*;
use crate::export::{mpi_fn, tri};
use crate::handles::*;

/// Raises MPI_ERR_UNSUPPORTED_OPERATION for `call` on `comm`'s handler.
fn raise(call: &'static str, reason: &str, comm: MPI_Comm) -> c_int {
    let c = tri!(comm_for(call, comm));
    fail(&c, call, ErrorClass::UnsupportedOperation, reason.into())
}

/// `unsupported! { "reason" => { fn Name(args) -> c_int [@comm]; ... } ... }`
/// defines `MPI_Name` and `PMPI_Name` failing with the reason; `@comm` raises
/// the error on the function's `comm` argument.
macro_rules! unsupported {
    ($( $reason:literal => {
        $( fn $name:ident ( $($arg:ident : $ty:ty),* $(,)? ) -> c_int $(@ $comm:ident)? ; )*
    } )*) => {
        $( $(
            mpi_fn! {
                fn $name($($arg: $ty),*) -> c_int {
                    #[allow(unused_variables)]
                    let on = MPI_COMM_WORLD;
                    $( let on = $comm; )?
                    raise(concat!("MPI_", stringify!($name)), $reason, on)
                }
            }
        )* )*
    };
}

unsupported! {
    // Dynamic processes: spawning, ports, name publishing.
    "dynamic process management is not built yet" => {
        fn Close_port(_port_name: *const c_char) -> c_int;
        fn Comm_accept(_port_name: *const c_char, _info: MPI_Info, _root: c_int, comm: MPI_Comm, _newcomm: *mut MPI_Comm) -> c_int @comm;
        fn Comm_connect(_port_name: *const c_char, _info: MPI_Info, _root: c_int, comm: MPI_Comm, _newcomm: *mut MPI_Comm) -> c_int @comm;
        fn Comm_disconnect(_comm: *mut MPI_Comm) -> c_int;
        fn Comm_join(_fd: c_int, _intercomm: *mut MPI_Comm) -> c_int;
        fn Comm_spawn(_command: *const c_char, _argv: *mut *mut c_char, _maxprocs: c_int, _info: MPI_Info, _root: c_int, comm: MPI_Comm, _intercomm: *mut MPI_Comm, _array_of_errcodes: *mut c_int) -> c_int @comm;
        fn Comm_spawn_multiple(_count: c_int, _array_of_commands: *mut *mut c_char, _array_of_argv: *mut *mut *mut c_char, _array_of_maxprocs: *const c_int, _array_of_info: *const MPI_Info, _root: c_int, comm: MPI_Comm, _intercomm: *mut MPI_Comm, _array_of_errcodes: *mut c_int) -> c_int @comm;
        fn Lookup_name(_service_name: *const c_char, _info: MPI_Info, _port_name: *mut c_char) -> c_int;
        fn Open_port(_info: MPI_Info, _port_name: *mut c_char) -> c_int;
        fn Publish_name(_service_name: *const c_char, _info: MPI_Info, _port_name: *const c_char) -> c_int;
        fn Unpublish_name(_service_name: *const c_char, _info: MPI_Info, _port_name: *const c_char) -> c_int;
    }
    // MPI-IO's data representations of the program's own.
    "user-defined data representations are not supported (\"native\" and \"internal\" are)" => {
        fn Register_datarep(_datarep: *const c_char, _read_conversion_fn: Option<DatarepConversionFn>, _write_conversion_fn: Option<DatarepConversionFn>, _dtype_file_extent_fn: Option<DatarepExtentFn>, _extra_state: *mut c_void) -> c_int;
    }
}
