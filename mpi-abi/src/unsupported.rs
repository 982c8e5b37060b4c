//! The MPI-3.1 functions mpcrs does not provide yet (one-sided communication,
//! dynamic processes, parallel I/O). They exist so that
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
    // One-sided communication (windows, RMA operations).
    "one-sided communication is not built yet" => {
        fn Accumulate(_origin_addr: *const c_void, _origin_count: c_int, _origin_datatype: MPI_Datatype, _target_rank: c_int, _target_disp: MPI_Aint, _target_count: c_int, _target_datatype: MPI_Datatype, _op: MPI_Op, _win: MPI_Win) -> c_int;
        fn Compare_and_swap(_origin_addr: *const c_void, _compare_addr: *const c_void, _result_addr: *mut c_void, _datatype: MPI_Datatype, _target_rank: c_int, _target_disp: MPI_Aint, _win: MPI_Win) -> c_int;
        fn Fetch_and_op(_origin_addr: *const c_void, _result_addr: *mut c_void, _datatype: MPI_Datatype, _target_rank: c_int, _target_disp: MPI_Aint, _op: MPI_Op, _win: MPI_Win) -> c_int;
        fn Get(_origin_addr: *mut c_void, _origin_count: c_int, _origin_datatype: MPI_Datatype, _target_rank: c_int, _target_disp: MPI_Aint, _target_count: c_int, _target_datatype: MPI_Datatype, _win: MPI_Win) -> c_int;
        fn Get_accumulate(_origin_addr: *const c_void, _origin_count: c_int, _origin_datatype: MPI_Datatype, _result_addr: *mut c_void, _result_count: c_int, _result_datatype: MPI_Datatype, _target_rank: c_int, _target_disp: MPI_Aint, _target_count: c_int, _target_datatype: MPI_Datatype, _op: MPI_Op, _win: MPI_Win) -> c_int;
        fn Put(_origin_addr: *const c_void, _origin_count: c_int, _origin_datatype: MPI_Datatype, _target_rank: c_int, _target_disp: MPI_Aint, _target_count: c_int, _target_datatype: MPI_Datatype, _win: MPI_Win) -> c_int;
        fn Raccumulate(_origin_addr: *const c_void, _origin_count: c_int, _origin_datatype: MPI_Datatype, _target_rank: c_int, _target_disp: MPI_Aint, _target_count: c_int, _target_datatype: MPI_Datatype, _op: MPI_Op, _win: MPI_Win, _request: *mut MPI_Request) -> c_int;
        fn Rget(_origin_addr: *mut c_void, _origin_count: c_int, _origin_datatype: MPI_Datatype, _target_rank: c_int, _target_disp: MPI_Aint, _target_count: c_int, _target_datatype: MPI_Datatype, _win: MPI_Win, _request: *mut MPI_Request) -> c_int;
        fn Rget_accumulate(_origin_addr: *const c_void, _origin_count: c_int, _origin_datatype: MPI_Datatype, _result_addr: *mut c_void, _result_count: c_int, _result_datatype: MPI_Datatype, _target_rank: c_int, _target_disp: MPI_Aint, _target_count: c_int, _target_datatype: MPI_Datatype, _op: MPI_Op, _win: MPI_Win, _request: *mut MPI_Request) -> c_int;
        fn Rput(_origin_addr: *const c_void, _origin_count: c_int, _origin_datatype: MPI_Datatype, _target_rank: c_int, _target_disp: MPI_Aint, _target_count: c_int, _target_datatype: MPI_Datatype, _win: MPI_Win, _request: *mut MPI_Request) -> c_int;
        fn Win_allocate(_size: MPI_Aint, _disp_unit: c_int, _info: MPI_Info, comm: MPI_Comm, _baseptr: *mut c_void, _win: *mut MPI_Win) -> c_int @comm;
        fn Win_allocate_shared(_size: MPI_Aint, _disp_unit: c_int, _info: MPI_Info, comm: MPI_Comm, _baseptr: *mut c_void, _win: *mut MPI_Win) -> c_int @comm;
        fn Win_attach(_win: MPI_Win, _base: *mut c_void, _size: MPI_Aint) -> c_int;
        fn Win_call_errhandler(_win: MPI_Win, _errorcode: c_int) -> c_int;
        fn Win_complete(_win: MPI_Win) -> c_int;
        fn Win_create(_base: *mut c_void, _size: MPI_Aint, _disp_unit: c_int, _info: MPI_Info, comm: MPI_Comm, _win: *mut MPI_Win) -> c_int @comm;
        fn Win_create_dynamic(_info: MPI_Info, comm: MPI_Comm, _win: *mut MPI_Win) -> c_int @comm;
        fn Win_create_errhandler(_win_errhandler_fn: Option<WinErrhandlerFn>, _errhandler: *mut MPI_Errhandler) -> c_int;
        fn Win_create_keyval(_win_copy_attr_fn: Option<WinCopyAttrFn>, _win_delete_attr_fn: Option<WinDeleteAttrFn>, _win_keyval: *mut c_int, _extra_state: *mut c_void) -> c_int;
        fn Win_delete_attr(_win: MPI_Win, _win_keyval: c_int) -> c_int;
        fn Win_detach(_win: MPI_Win, _base: *const c_void) -> c_int;
        fn Win_fence(_assert: c_int, _win: MPI_Win) -> c_int;
        fn Win_flush(_rank: c_int, _win: MPI_Win) -> c_int;
        fn Win_flush_all(_win: MPI_Win) -> c_int;
        fn Win_flush_local(_rank: c_int, _win: MPI_Win) -> c_int;
        fn Win_flush_local_all(_win: MPI_Win) -> c_int;
        fn Win_free(_win: *mut MPI_Win) -> c_int;
        fn Win_free_keyval(_win_keyval: *mut c_int) -> c_int;
        fn Win_get_attr(_win: MPI_Win, _win_keyval: c_int, _attribute_val: *mut c_void, _flag: *mut c_int) -> c_int;
        fn Win_get_errhandler(_win: MPI_Win, _errhandler: *mut MPI_Errhandler) -> c_int;
        fn Win_get_group(_win: MPI_Win, _group: *mut MPI_Group) -> c_int;
        fn Win_get_info(_win: MPI_Win, _info_used: *mut MPI_Info) -> c_int;
        fn Win_get_name(_win: MPI_Win, _win_name: *mut c_char, _resultlen: *mut c_int) -> c_int;
        fn Win_lock(_lock_type: c_int, _rank: c_int, _assert: c_int, _win: MPI_Win) -> c_int;
        fn Win_lock_all(_assert: c_int, _win: MPI_Win) -> c_int;
        fn Win_post(_group: MPI_Group, _assert: c_int, _win: MPI_Win) -> c_int;
        fn Win_set_attr(_win: MPI_Win, _win_keyval: c_int, _attribute_val: *mut c_void) -> c_int;
        fn Win_set_errhandler(_win: MPI_Win, _errhandler: MPI_Errhandler) -> c_int;
        fn Win_set_info(_win: MPI_Win, _info: MPI_Info) -> c_int;
        fn Win_set_name(_win: MPI_Win, _win_name: *const c_char) -> c_int;
        fn Win_shared_query(_win: MPI_Win, _rank: c_int, _size: *mut MPI_Aint, _disp_unit: *mut c_int, _baseptr: *mut c_void) -> c_int;
        fn Win_start(_group: MPI_Group, _assert: c_int, _win: MPI_Win) -> c_int;
        fn Win_sync(_win: MPI_Win) -> c_int;
        fn Win_test(_win: MPI_Win, _flag: *mut c_int) -> c_int;
        fn Win_unlock(_rank: c_int, _win: MPI_Win) -> c_int;
        fn Win_unlock_all(_win: MPI_Win) -> c_int;
        fn Win_wait(_win: MPI_Win) -> c_int;
    }
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
