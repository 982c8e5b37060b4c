//! The MPI functions mpcrs does not provide yet (dynamic processes,
//! user-defined data representations, partitioned communication, session
//! buffers, hardware resource queries, the MPI-5 ABI's information). They exist so that
//! every program links, and each call fails with MPI_ERR_UNSUPPORTED_OPERATION
//! through the error handler of its communicator (MPI_COMM_WORLD's for the
//! others), naming the function: a program is never told a call succeeded when
//! it did nothing.

use std::os::raw::{c_char, c_int, c_void};

use mpcrs::ErrorClass;

use crate::ctypes::*;
use crate::export::{mpi_fn, tri};
use crate::handles::*;
use crate::sessions::MPI_Session;

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
    "user-defined data representations are not supported (\"native\" and \"internal\" are)" => {
        fn Register_datarep_c(_datarep: *const c_char, _read_conversion_fn: Option<DatarepConversionFnC>, _write_conversion_fn: Option<DatarepConversionFnC>, _dtype_file_extent_fn: Option<DatarepExtentFn>, _extra_state: *mut c_void) -> c_int;
    }
    // MPI-4.0 partitioned point-to-point communication.
    "partitioned communication is not built yet" => {
        fn Psend_init(_buf: *const c_void, _partitions: c_int, _count: MPI_Count, _datatype: MPI_Datatype, _dest: c_int, _tag: c_int, comm: MPI_Comm, _info: MPI_Info, _request: *mut MPI_Request) -> c_int @comm;
        fn Precv_init(_buf: *mut c_void, _partitions: c_int, _count: MPI_Count, _datatype: MPI_Datatype, _source: c_int, _tag: c_int, comm: MPI_Comm, _info: MPI_Info, _request: *mut MPI_Request) -> c_int @comm;
        fn Pready(_partition: c_int, _request: MPI_Request) -> c_int;
        fn Pready_range(_partition_low: c_int, _partition_high: c_int, _request: MPI_Request) -> c_int;
        fn Pready_list(_length: c_int, _array_of_partitions: *const c_int, _request: MPI_Request) -> c_int;
        fn Parrived(_request: MPI_Request, _partition: c_int, _flag: *mut c_int) -> c_int;
    }
    // MPI-4.1 buffers of sessions: communicators are not traced back to the
    // session whose process set made their group, so no send could use one.
    "buffers attached to sessions are not supported (MPI_Comm_attach_buffer and MPI_Buffer_attach are)" => {
        fn Session_attach_buffer(_session: MPI_Session, _buffer: *mut c_void, _size: c_int) -> c_int;
        fn Session_attach_buffer_c(_session: MPI_Session, _buffer: *mut c_void, _size: MPI_Count) -> c_int;
        fn Session_detach_buffer(_session: MPI_Session, _buffer_addr: *mut c_void, _size: *mut c_int) -> c_int;
        fn Session_detach_buffer_c(_session: MPI_Session, _buffer_addr: *mut c_void, _size: *mut MPI_Count) -> c_int;
        fn Session_flush_buffer(_session: MPI_Session) -> c_int;
        fn Session_iflush_buffer(_session: MPI_Session, _request: *mut MPI_Request) -> c_int;
    }
    "hardware resource information is not provided" => {
        fn Get_hw_resource_info(_hw_info: *mut MPI_Info) -> c_int;
    }
    // MPI-5.0's standard ABI, which this library does not implement (it
    // implements MPICH's: MPI_Abi_get_version says so).
    "this library implements MPICH's ABI, not the MPI standard ABI" => {
        fn Abi_get_info(_info: *mut MPI_Info) -> c_int;
        fn Abi_get_fortran_info(_info: *mut MPI_Info) -> c_int;
    }
}

mpi_fn! {
    // Callable at any time, as MPI_Get_version (mpi4py asks it before
    // MPI_Init to choose its binding): -1.-1 says the library implements no
    // version of the standard ABI.
    fn Abi_get_version(abi_major: *mut c_int, abi_minor: *mut c_int) -> c_int {
        // SAFETY: writable by contract.
        unsafe { (*abi_major, *abi_minor) = (-1, -1) };
        MPI_SUCCESS
    }
}
