//! The MPI-3.1 functions mpcrs does not provide yet (dynamic processes,
//! parallel I/O). They exist so that
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
    // Parallel I/O.
    "parallel I/O is not built yet" => {
        fn File_call_errhandler(_fh: MPI_File, _errorcode: c_int) -> c_int;
        fn File_close(_fh: *mut MPI_File) -> c_int;
        fn File_create_errhandler(_file_errhandler_fn: Option<FileErrhandlerFn>, _errhandler: *mut MPI_Errhandler) -> c_int;
        fn File_delete(_filename: *const c_char, _info: MPI_Info) -> c_int;
        fn File_get_amode(_fh: MPI_File, _amode: *mut c_int) -> c_int;
        fn File_get_atomicity(_fh: MPI_File, _flag: *mut c_int) -> c_int;
        fn File_get_byte_offset(_fh: MPI_File, _offset: MPI_Offset, _disp: *mut MPI_Offset) -> c_int;
        fn File_get_errhandler(_file: MPI_File, _errhandler: *mut MPI_Errhandler) -> c_int;
        fn File_get_group(_fh: MPI_File, _group: *mut MPI_Group) -> c_int;
        fn File_get_info(_fh: MPI_File, _info_used: *mut MPI_Info) -> c_int;
        fn File_get_position(_fh: MPI_File, _offset: *mut MPI_Offset) -> c_int;
        fn File_get_position_shared(_fh: MPI_File, _offset: *mut MPI_Offset) -> c_int;
        fn File_get_size(_fh: MPI_File, _size: *mut MPI_Offset) -> c_int;
        fn File_get_type_extent(_fh: MPI_File, _datatype: MPI_Datatype, _extent: *mut MPI_Aint) -> c_int;
        fn File_get_view(_fh: MPI_File, _disp: *mut MPI_Offset, _etype: *mut MPI_Datatype, _filetype: *mut MPI_Datatype, _datarep: *mut c_char) -> c_int;
        fn File_iread(_fh: MPI_File, _buf: *mut c_void, _count: c_int, _datatype: MPI_Datatype, _request: *mut MPI_Request) -> c_int;
        fn File_iread_all(_fh: MPI_File, _buf: *mut c_void, _count: c_int, _datatype: MPI_Datatype, _request: *mut MPI_Request) -> c_int;
        fn File_iread_at(_fh: MPI_File, _offset: MPI_Offset, _buf: *mut c_void, _count: c_int, _datatype: MPI_Datatype, _request: *mut MPI_Request) -> c_int;
        fn File_iread_at_all(_fh: MPI_File, _offset: MPI_Offset, _buf: *mut c_void, _count: c_int, _datatype: MPI_Datatype, _request: *mut MPI_Request) -> c_int;
        fn File_iread_shared(_fh: MPI_File, _buf: *mut c_void, _count: c_int, _datatype: MPI_Datatype, _request: *mut MPI_Request) -> c_int;
        fn File_iwrite(_fh: MPI_File, _buf: *const c_void, _count: c_int, _datatype: MPI_Datatype, _request: *mut MPI_Request) -> c_int;
        fn File_iwrite_all(_fh: MPI_File, _buf: *const c_void, _count: c_int, _datatype: MPI_Datatype, _request: *mut MPI_Request) -> c_int;
        fn File_iwrite_at(_fh: MPI_File, _offset: MPI_Offset, _buf: *const c_void, _count: c_int, _datatype: MPI_Datatype, _request: *mut MPI_Request) -> c_int;
        fn File_iwrite_at_all(_fh: MPI_File, _offset: MPI_Offset, _buf: *const c_void, _count: c_int, _datatype: MPI_Datatype, _request: *mut MPI_Request) -> c_int;
        fn File_iwrite_shared(_fh: MPI_File, _buf: *const c_void, _count: c_int, _datatype: MPI_Datatype, _request: *mut MPI_Request) -> c_int;
        fn File_open(comm: MPI_Comm, _filename: *const c_char, _amode: c_int, _info: MPI_Info, _fh: *mut MPI_File) -> c_int @comm;
        fn File_preallocate(_fh: MPI_File, _size: MPI_Offset) -> c_int;
        fn File_read(_fh: MPI_File, _buf: *mut c_void, _count: c_int, _datatype: MPI_Datatype, _status: *mut MPI_Status) -> c_int;
        fn File_read_all(_fh: MPI_File, _buf: *mut c_void, _count: c_int, _datatype: MPI_Datatype, _status: *mut MPI_Status) -> c_int;
        fn File_read_all_begin(_fh: MPI_File, _buf: *mut c_void, _count: c_int, _datatype: MPI_Datatype) -> c_int;
        fn File_read_all_end(_fh: MPI_File, _buf: *mut c_void, _status: *mut MPI_Status) -> c_int;
        fn File_read_at(_fh: MPI_File, _offset: MPI_Offset, _buf: *mut c_void, _count: c_int, _datatype: MPI_Datatype, _status: *mut MPI_Status) -> c_int;
        fn File_read_at_all(_fh: MPI_File, _offset: MPI_Offset, _buf: *mut c_void, _count: c_int, _datatype: MPI_Datatype, _status: *mut MPI_Status) -> c_int;
        fn File_read_at_all_begin(_fh: MPI_File, _offset: MPI_Offset, _buf: *mut c_void, _count: c_int, _datatype: MPI_Datatype) -> c_int;
        fn File_read_at_all_end(_fh: MPI_File, _buf: *mut c_void, _status: *mut MPI_Status) -> c_int;
        fn File_read_ordered(_fh: MPI_File, _buf: *mut c_void, _count: c_int, _datatype: MPI_Datatype, _status: *mut MPI_Status) -> c_int;
        fn File_read_ordered_begin(_fh: MPI_File, _buf: *mut c_void, _count: c_int, _datatype: MPI_Datatype) -> c_int;
        fn File_read_ordered_end(_fh: MPI_File, _buf: *mut c_void, _status: *mut MPI_Status) -> c_int;
        fn File_read_shared(_fh: MPI_File, _buf: *mut c_void, _count: c_int, _datatype: MPI_Datatype, _status: *mut MPI_Status) -> c_int;
        fn File_seek(_fh: MPI_File, _offset: MPI_Offset, _whence: c_int) -> c_int;
        fn File_seek_shared(_fh: MPI_File, _offset: MPI_Offset, _whence: c_int) -> c_int;
        fn File_set_atomicity(_fh: MPI_File, _flag: c_int) -> c_int;
        fn File_set_errhandler(_file: MPI_File, _errhandler: MPI_Errhandler) -> c_int;
        fn File_set_info(_fh: MPI_File, _info: MPI_Info) -> c_int;
        fn File_set_size(_fh: MPI_File, _size: MPI_Offset) -> c_int;
        fn File_set_view(_fh: MPI_File, _disp: MPI_Offset, _etype: MPI_Datatype, _filetype: MPI_Datatype, _datarep: *const c_char, _info: MPI_Info) -> c_int;
        fn File_sync(_fh: MPI_File) -> c_int;
        fn File_write(_fh: MPI_File, _buf: *const c_void, _count: c_int, _datatype: MPI_Datatype, _status: *mut MPI_Status) -> c_int;
        fn File_write_all(_fh: MPI_File, _buf: *const c_void, _count: c_int, _datatype: MPI_Datatype, _status: *mut MPI_Status) -> c_int;
        fn File_write_all_begin(_fh: MPI_File, _buf: *const c_void, _count: c_int, _datatype: MPI_Datatype) -> c_int;
        fn File_write_all_end(_fh: MPI_File, _buf: *const c_void, _status: *mut MPI_Status) -> c_int;
        fn File_write_at(_fh: MPI_File, _offset: MPI_Offset, _buf: *const c_void, _count: c_int, _datatype: MPI_Datatype, _status: *mut MPI_Status) -> c_int;
        fn File_write_at_all(_fh: MPI_File, _offset: MPI_Offset, _buf: *const c_void, _count: c_int, _datatype: MPI_Datatype, _status: *mut MPI_Status) -> c_int;
        fn File_write_at_all_begin(_fh: MPI_File, _offset: MPI_Offset, _buf: *const c_void, _count: c_int, _datatype: MPI_Datatype) -> c_int;
        fn File_write_at_all_end(_fh: MPI_File, _buf: *const c_void, _status: *mut MPI_Status) -> c_int;
        fn File_write_ordered(_fh: MPI_File, _buf: *const c_void, _count: c_int, _datatype: MPI_Datatype, _status: *mut MPI_Status) -> c_int;
        fn File_write_ordered_begin(_fh: MPI_File, _buf: *const c_void, _count: c_int, _datatype: MPI_Datatype) -> c_int;
        fn File_write_ordered_end(_fh: MPI_File, _buf: *const c_void, _status: *mut MPI_Status) -> c_int;
        fn File_write_shared(_fh: MPI_File, _buf: *const c_void, _count: c_int, _datatype: MPI_Datatype, _status: *mut MPI_Status) -> c_int;
        fn Register_datarep(_datarep: *const c_char, _read_conversion_fn: Option<DatarepConversionFn>, _write_conversion_fn: Option<DatarepConversionFn>, _dtype_file_extent_fn: Option<DatarepExtentFn>, _extra_state: *mut c_void) -> c_int;
    }
}
