//! Files (MPI_File) as handles: opening and closing, size, views, file
//! pointers, info, error handlers, and every data access call (explicit
//! offsets, individual and shared pointers; blocking, non-blocking, split
//! and collective). `mpcrs_io::File` does the work; here datatypes become
//! layouts and buffers packed bytes.
//!
//! Errors on a file go to its error handler (MPI_ERRORS_RETURN unless the
//! program set another); errors of MPI_File_open and MPI_File_delete go to
//! the handler of MPI_FILE_NULL, as MPI-3.1 13.7 says.

use std::os::raw::{c_char, c_int, c_void};
use std::sync::Arc;

use mpcrs::raw::RawRequest;
use mpcrs::{Error, ErrorClass, Status};
use mpcrs_io::{Direction, File, Layout, Plan, Position};

use crate::ctypes::*;
use crate::datatype::{self, Staging, TypeInfo, MPI_BYTE};
use crate::export::{mpi_fn, tri};
use crate::handles::*;
use crate::info::Entries;

/// File handles are small numbers dressed as MPICH's pointer type: the
/// first is this, then one per entry of the rank's table.
const FILE_HANDLE_BASE: usize = 0x1000;
const MPI_DISPLACEMENT_CURRENT: MPI_Offset = -54278278;
const MPI_MAX_DATAREP_STRING: usize = 128;

/// What a file does with its errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Handler {
    Fatal,
    Return,
    User(MPI_Errhandler),
}

/// A view's types as the program gave them: the handle, and the
/// description of a derived one (the program may free its handle).
#[derive(Clone)]
struct ViewTypes {
    etype: (MPI_Datatype, Option<TypeInfo>),
    filetype: (MPI_Datatype, Option<TypeInfo>),
    datarep: String,
}

/// A split collective begun and not ended: its call and outcome.
struct Split {
    begun: &'static str,
    status: Status,
}

/// A file handle's entry in its rank's table.
pub(crate) struct FileEntry {
    file: Arc<File>,
    handler: Handler,
    info: Entries,
    view: ViewTypes,
    split: Option<Split>,
}

/// One rank's files, by handle.
pub(crate) struct Table {
    entries: Slots<FileEntry>,
    /// MPI_FILE_NULL's handler: errors of open and delete, and new files'.
    null_handler: Handler,
}

impl Default for Table {
    fn default() -> Table {
        Table {
            entries: Slots::default(),
            null_handler: Handler::Return,
        }
    }
}

fn index(h: MPI_File) -> Option<usize> {
    (h as usize).checked_sub(FILE_HANDLE_BASE)
}

impl Table {
    fn add(&mut self, e: FileEntry) -> MPI_File {
        (FILE_HANDLE_BASE + self.entries.insert(e)) as MPI_File
    }

    fn get(&self, h: MPI_File) -> Option<&FileEntry> {
        self.entries.get(index(h)?)
    }

    fn get_mut(&mut self, h: MPI_File) -> Option<&mut FileEntry> {
        self.entries.get_mut(index(h)?)
    }

    fn take(&mut self, h: MPI_File) -> Option<FileEntry> {
        self.entries.take(index(h)?)
    }
}

/// The Fortran value of a file handle (MPI_File_c2f).
pub(crate) fn to_fortran(h: MPI_File) -> MPI_Fint {
    h as usize as MPI_Fint
}

/// The file handle of a Fortran value (MPI_File_f2c).
pub(crate) fn from_fortran(f: MPI_Fint) -> MPI_File {
    f as usize as MPI_File
}

/// Raises `e` through `handler` for file handle `fh`; returns the code.
fn raise(handler: Handler, fh: MPI_File, e: Error) -> c_int {
    let code = e.class as c_int;
    match handler {
        Handler::Return => code,
        Handler::Fatal => match mpcrs::ErrorHandler::Fatal.handle::<()>(Err(e)) {
            Ok(()) => MPI_SUCCESS,
            Err(e) => e.class as c_int,
        },
        Handler::User(eh) => {
            let mut h = fh;
            crate::errhandler::call_with(eh, (&mut h as *mut MPI_File).cast(), code).unwrap_or(code)
        }
    }
}

/// An error of a call without a valid file: MPI_FILE_NULL's handler.
fn null_error(call: &'static str, class: ErrorClass, detail: String) -> c_int {
    let rank = rank_state()
        .and_then(|st| st.world())
        .map_or(0, |w| w.world_rank());
    let handler = rank_state().map_or(Handler::Return, |st| st.files.null_handler);
    raise(
        handler,
        std::ptr::null_mut(),
        Error::new(class, call, rank, detail),
    )
}

/// The file of handle `fh` with its handler, or the error (MPI_ERR_FILE on
/// MPI_FILE_NULL's handler).
fn file_for(call: &'static str, fh: MPI_File) -> Result<(Arc<File>, Handler), c_int> {
    let _world = comm_for(call, MPI_COMM_WORLD)?;
    let found = rank_state().and_then(|st| st.files.get(fh).map(|e| (e.file.clone(), e.handler)));
    found.ok_or_else(|| {
        null_error(
            call,
            ErrorClass::File,
            format!("invalid file handle {:#x}", fh as usize),
        )
    })
}

/// Raises an error of a call on file `fh`.
fn fail_on(
    fh: MPI_File,
    handler: Handler,
    call: &'static str,
    class: ErrorClass,
    detail: String,
) -> c_int {
    let rank = rank_state()
        .and_then(|st| st.world())
        .map_or(0, |w| w.world_rank());
    raise(handler, fh, Error::new(class, call, rank, detail))
}

/// A runtime result on file `fh` as a return code.
fn ret_on(fh: MPI_File, handler: Handler, r: mpcrs::Result<()>) -> c_int {
    match r {
        Ok(()) => MPI_SUCCESS,
        Err(e) => raise(handler, fh, e),
    }
}

/// A datatype as the file sees it.
fn layout_of(ti: &TypeInfo) -> Layout {
    Layout {
        size: ti.size as u64,
        extent: ti.extent as i64,
        blocks: ti
            .blocks
            .iter()
            .map(|&(o, l)| (o as i64, l as u64))
            .collect(),
    }
}

/// A C string argument.
///
/// # Safety
/// `s` NUL-terminated or null.
unsafe fn c_str(s: *const c_char) -> Option<String> {
    if s.is_null() {
        return None;
    }
    // SAFETY: by contract.
    Some(
        unsafe { std::ffi::CStr::from_ptr(s) }
            .to_string_lossy()
            .into_owned(),
    )
}

/// Hints a file reports (MPI_File_get_info): those MPI-3.1 13.2.8 reserves
/// that mean something here, with their values, and what the program set.
fn file_hints(given: &Entries, fh: &File) -> Entries {
    let mut m = Entries::default();
    m.set("filename".into(), fh.path().display().to_string());
    m.set("file_perm".into(), "0666".into());
    m.set("collective_buffering".into(), "true".into());
    m.set("cb_nodes".into(), "1".into());
    m.extend(given.clone());
    m
}

/// The outcome of an access as a status.
fn status_of(bytes: u64) -> Status {
    Status {
        bytes: bytes as usize,
        ..Status::empty()
    }
}

/// Writes a status unless ignored.
///
/// # Safety
/// `status` MPI_STATUS_IGNORE or writable.
unsafe fn put_status(status: *mut MPI_Status, st: &Status) {
    // SAFETY: forwarded.
    unsafe { write_status(status, st) };
    if !status_ignored(status) {
        // SAFETY: writable by contract.
        unsafe { (*status).MPI_ERROR = MPI_SUCCESS };
    }
}

/// A data access as the program named it.
#[derive(Clone, Copy)]
struct Access {
    call: &'static str,
    pos: Position,
    dir: Direction,
    collective: bool,
}

/// A (buffer, count, datatype) ready for the file: its packed bytes (the
/// buffer itself when contiguous) and what unpacks a read.
struct Data {
    bytes: *mut u8,
    staging: Option<Staging>,
    /// In a file viewed as external32: the converted bytes.
    converted: Option<Converted>,
}

/// The external32 bytes of an access, and for a read where they go.
struct Converted {
    bytes: Vec<u8>,
    /// (program's buffer, count, type) of a read.
    read_into: Option<(usize, usize, TypeInfo)>,
}

impl Converted {
    /// Converts the first `n` bytes read into the program's buffer.
    fn finish(self, n: u64) {
        if let Some((user, count, ti)) = self.read_into {
            let whole = n as usize / ti.size.max(1);
            let native = crate::external::from_external(&self.bytes, &ti, whole);
            // SAFETY: the program's buffer holds `count` elements of the
            // type and stays valid until the access completes (now).
            unsafe { datatype::unpack(&native, user as *mut u8, count, &ti) };
        }
    }
}

impl Data {
    /// Completes the program's side of an access that moved `n` bytes.
    fn finish(self, n: u64) {
        if let Some(c) = self.converted {
            c.finish(n);
        } else if let Some(s) = self.staging {
            s.finish(n as usize);
        }
    }
}

/// Whether file `fh`'s view is external32.
fn external32(fh: MPI_File) -> bool {
    rank_state().is_some_and(|st| {
        st.files
            .get(fh)
            .is_some_and(|e| e.view.datarep == "external32")
    })
}

/// external32 is supported for types whose external size is their native
/// one (byte order only): the file's offsets are then the same.
fn external32_refused(ti: &TypeInfo, what: &str) -> Option<String> {
    let ext = crate::external::external_size(ti);
    (ext != ti.size).then(|| {
        format!("{what}: external32 files take types whose external size is their native size ({} bytes here, {ext} in external32: MPI_LONG, MPI_UNSIGNED_LONG, MPI_WCHAR differ)", ti.size)
    })
}

/// Looks the datatype up and plans the access; errors on the file's handler.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`.
unsafe fn prepare(
    a: Access,
    fh: MPI_File,
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
) -> Result<(Arc<File>, Handler, Plan, Data), c_int> {
    let (f, handler) = file_for(a.call, fh)?;
    let (len, ti) = match datatype::describe(count, datatype) {
        Ok(v) => v,
        Err((class, detail)) => return Err(fail_on(fh, handler, a.call, class, detail)),
    };
    let plan = match f.plan(a.call, a.pos, a.dir, len as u64, a.collective) {
        Ok(p) => p,
        Err(e) => return Err(raise(handler, fh, e)),
    };
    if external32(fh) {
        if let Some(why) = external32_refused(&ti, "the buffer's datatype") {
            return Err(fail_on(
                fh,
                handler,
                a.call,
                ErrorClass::UnsupportedDatarep,
                why,
            ));
        }
        let converted = match a.dir {
            Direction::Write => {
                let mut packed = Vec::new();
                // SAFETY: `buf` holds `count` elements of the type (contract).
                unsafe { datatype::pack(buf.cast(), count as usize, &ti, &mut packed) };
                Converted {
                    bytes: crate::external::to_external(&packed, &ti, count as usize),
                    read_into: None,
                }
            }
            Direction::Read => Converted {
                bytes: vec![0; len],
                read_into: Some((buf as usize, count as usize, ti)),
            },
        };
        let mut converted = converted;
        let bytes = converted.bytes.as_mut_ptr();
        return Ok((
            f,
            handler,
            plan,
            Data {
                bytes,
                staging: None,
                converted: Some(converted),
            },
        ));
    }
    // SAFETY: `buf` holds `count` elements of the type (contract).
    let (bytes, staging) = unsafe {
        match a.dir {
            Direction::Write => {
                let (p, s) = Staging::send(buf.cast(), count as usize, &ti);
                (p as *mut u8, s)
            }
            Direction::Read => Staging::recv(buf.cast(), count as usize, &ti, false),
        }
    };
    Ok((
        f,
        handler,
        plan,
        Data {
            bytes,
            staging,
            converted: None,
        },
    ))
}

/// A blocking access (and the begin of a split one).
///
/// # Safety
/// As MPI's for the call's arguments.
unsafe fn blocking(
    a: Access,
    fh: MPI_File,
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
) -> Result<Status, c_int> {
    // SAFETY: forwarded.
    let (f, handler, plan, data) = unsafe { prepare(a, fh, buf, count, datatype)? };
    // SAFETY: the packed bytes hold the plan's length.
    match unsafe { f.perform(a.call, &plan, data.bytes) } {
        Ok(n) => {
            data.finish(n);
            Ok(status_of(n))
        }
        Err(e) => Err(raise(handler, fh, e)),
    }
}

/// # Safety
/// As MPI's for the call's arguments.
unsafe fn access(
    a: Access,
    fh: MPI_File,
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
) -> c_int {
    // SAFETY: forwarded.
    let st = tri!(unsafe { blocking(a, fh, buf, count, datatype) });
    // SAFETY: by contract.
    unsafe { put_status(status, &st) };
    MPI_SUCCESS
}

/// A pointer handed to a helper.
struct SendPtr(*mut u8);
// SAFETY: the buffer is the program's, untouched by it until the request
// completes (MPI's rule for non-blocking calls).
unsafe impl Send for SendPtr {}

/// A non-blocking access: independent ones complete here; collective ones
/// run in a helper acting as the rank, in the file's round order.
///
/// # Safety
/// As MPI's for the call's arguments.
unsafe fn nonblocking(
    a: Access,
    fh: MPI_File,
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: forwarded.
    let (f, handler, plan, data) = tri!(unsafe { prepare(a, fh, buf, count, datatype) });
    let call = a.call;
    let Data {
        bytes,
        staging,
        converted,
    } = data;
    let raw = if a.collective {
        let (r, completer) = mpcrs::raw::manual_request();
        let bytes = SendPtr(bytes);
        let file = f.clone();
        mpcrs::raw::spawn_as_rank(move || {
            let bytes = bytes;
            // SAFETY: the packed bytes (or the program's buffer) stay valid
            // until the request completes.
            let st = match unsafe { file.perform(call, &plan, bytes.0) } {
                Ok(n) => {
                    if let Some(c) = converted {
                        c.finish(n);
                    }
                    status_of(n)
                }
                Err(e) => Status {
                    error: e.class,
                    ..Status::empty()
                },
            };
            completer.complete(st);
        });
        r
    } else {
        // SAFETY: the packed bytes hold the plan's length.
        match unsafe { f.perform(call, &plan, bytes) } {
            Ok(n) => {
                if let Some(c) = converted {
                    c.finish(n);
                }
                RawRequest::completed(status_of(n))
            }
            Err(e) => return raise(handler, fh, e),
        }
    };
    let entry = RequestEntry {
        request: raw,
        comm: f.communicator_arc(),
        call,
        staging,
        persistent: None,
        active: false,
        grequest: None,
    };
    let h = rank_state().expect("inside a rank").add_request(entry);
    // SAFETY: writable by contract.
    unsafe { *request = h };
    MPI_SUCCESS
}

/// The begin of a split collective: done now, its status kept for the end.
///
/// # Safety
/// As MPI's for the call's arguments.
unsafe fn begin(
    a: Access,
    fh: MPI_File,
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
) -> c_int {
    let (_, handler) = tri!(file_for(a.call, fh));
    let pending = rank_state().and_then(|st| {
        st.files
            .get(fh)
            .and_then(|e| e.split.as_ref().map(|s| s.begun))
    });
    if let Some(other) = pending {
        return fail_on(
            fh,
            handler,
            a.call,
            ErrorClass::Other,
            format!("{other} is not ended yet: one split collective at a time per file"),
        );
    }
    // SAFETY: forwarded.
    let status = tri!(unsafe { blocking(a, fh, buf, count, datatype) });
    if let Some(e) = rank_state().expect("inside a rank").files.get_mut(fh) {
        e.split = Some(Split {
            begun: a.call,
            status,
        });
    }
    MPI_SUCCESS
}

/// The end of a split collective begun by `begun`.
///
/// # Safety
/// `status` MPI_STATUS_IGNORE or writable.
unsafe fn end(
    call: &'static str,
    begun: &'static str,
    fh: MPI_File,
    status: *mut MPI_Status,
) -> c_int {
    let (_, handler) = tri!(file_for(call, fh));
    let split = rank_state().and_then(|mut st| {
        let e = st.files.get_mut(fh)?;
        match &e.split {
            Some(s) if s.begun == begun => e.split.take(),
            _ => None,
        }
    });
    let Some(s) = split else {
        return fail_on(
            fh,
            handler,
            call,
            ErrorClass::Other,
            format!("no {begun} to end on this file"),
        );
    };
    // SAFETY: by contract.
    unsafe { put_status(status, &s.status) };
    MPI_SUCCESS
}

const fn acc(call: &'static str, pos: Position, dir: Direction, collective: bool) -> Access {
    Access {
        call,
        pos,
        dir,
        collective,
    }
}

use Direction::{Read, Write};
use Position::{Individual, Ordered, Shared};

/// `data_calls! { Name(offset?) => (pos, dir, collective) ... }`: the
/// blocking, non-blocking and split forms of the data access calls.
macro_rules! blocking_calls {
    ($( $name:ident $(@ $off:ident)? => ($pos:expr, $dir:expr, $coll:expr); )*) => {
        mpi_fn! {
            $(
                fn $name(fh: MPI_File, $($off: MPI_Offset,)? buf: *mut c_void, count: c_int, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
                    $( let $off = Position::At($off); )?
                    let a = acc(concat!("MPI_", stringify!($name)), $pos, $dir, $coll);
                    // SAFETY: forwarded from the C caller.
                    unsafe { access(a, fh, buf, count, datatype, status) }
                }
            )*
        }
    };
}

macro_rules! nonblocking_calls {
    ($( $name:ident $(@ $off:ident)? => ($pos:expr, $dir:expr, $coll:expr); )*) => {
        mpi_fn! {
            $(
                fn $name(fh: MPI_File, $($off: MPI_Offset,)? buf: *mut c_void, count: c_int, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
                    $( let $off = Position::At($off); )?
                    let a = acc(concat!("MPI_", stringify!($name)), $pos, $dir, $coll);
                    // SAFETY: forwarded from the C caller.
                    unsafe { nonblocking(a, fh, buf, count, datatype, request) }
                }
            )*
        }
    };
}

macro_rules! split_calls {
    ($( $begin:ident / $end:ident $(@ $off:ident)? => ($pos:expr, $dir:expr); )*) => {
        mpi_fn! {
            $(
                fn $begin(fh: MPI_File, $($off: MPI_Offset,)? buf: *mut c_void, count: c_int, datatype: MPI_Datatype) -> c_int {
                    $( let $off = Position::At($off); )?
                    let a = acc(concat!("MPI_", stringify!($begin)), $pos, $dir, true);
                    // SAFETY: forwarded from the C caller.
                    unsafe { begin(a, fh, buf, count, datatype) }
                }

                fn $end(fh: MPI_File, buf: *mut c_void, status: *mut MPI_Status) -> c_int {
                    let _ = buf;
                    // SAFETY: forwarded from the C caller.
                    unsafe { end(concat!("MPI_", stringify!($end)), concat!("MPI_", stringify!($begin)), fh, status) }
                }
            )*
        }
    };
}

blocking_calls! {
    File_read_at @offset => (offset, Read, false);
    File_read_at_all @offset => (offset, Read, true);
    File_read => (Individual, Read, false);
    File_read_all => (Individual, Read, true);
    File_read_shared => (Shared, Read, false);
    File_read_ordered => (Ordered, Read, true);
}

// The write calls take a `const void *` buffer; the same code serves them.
macro_rules! const_blocking_calls {
    ($( $name:ident $(@ $off:ident)? => ($pos:expr, $coll:expr); )*) => {
        mpi_fn! {
            $(
                fn $name(fh: MPI_File, $($off: MPI_Offset,)? buf: *const c_void, count: c_int, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
                    $( let $off = Position::At($off); )?
                    let a = acc(concat!("MPI_", stringify!($name)), $pos, Write, $coll);
                    // SAFETY: forwarded from the C caller; written calls only read the buffer.
                    unsafe { access(a, fh, buf as *mut c_void, count, datatype, status) }
                }
            )*
        }
    };
}

const_blocking_calls! {
    File_write_at @offset => (offset, false);
    File_write_at_all @offset => (offset, true);
    File_write => (Individual, false);
    File_write_all => (Individual, true);
    File_write_shared => (Shared, false);
    File_write_ordered => (Ordered, true);
}

nonblocking_calls! {
    File_iread_at @offset => (offset, Read, false);
    File_iread_at_all @offset => (offset, Read, true);
    File_iread => (Individual, Read, false);
    File_iread_all => (Individual, Read, true);
    File_iread_shared => (Shared, Read, false);
}

macro_rules! const_nonblocking_calls {
    ($( $name:ident $(@ $off:ident)? => ($pos:expr, $coll:expr); )*) => {
        mpi_fn! {
            $(
                fn $name(fh: MPI_File, $($off: MPI_Offset,)? buf: *const c_void, count: c_int, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
                    $( let $off = Position::At($off); )?
                    let a = acc(concat!("MPI_", stringify!($name)), $pos, Write, $coll);
                    // SAFETY: forwarded from the C caller; written calls only read the buffer.
                    unsafe { nonblocking(a, fh, buf as *mut c_void, count, datatype, request) }
                }
            )*
        }
    };
}

const_nonblocking_calls! {
    File_iwrite_at @offset => (offset, false);
    File_iwrite_at_all @offset => (offset, true);
    File_iwrite => (Individual, false);
    File_iwrite_all => (Individual, true);
    File_iwrite_shared => (Shared, false);
}

split_calls! {
    File_read_at_all_begin / File_read_at_all_end @offset => (offset, Read);
    File_read_all_begin / File_read_all_end => (Individual, Read);
    File_read_ordered_begin / File_read_ordered_end => (Ordered, Read);
}

macro_rules! const_split_calls {
    ($( $begin:ident / $end:ident $(@ $off:ident)? => $pos:expr; )*) => {
        mpi_fn! {
            $(
                fn $begin(fh: MPI_File, $($off: MPI_Offset,)? buf: *const c_void, count: c_int, datatype: MPI_Datatype) -> c_int {
                    $( let $off = Position::At($off); )?
                    let a = acc(concat!("MPI_", stringify!($begin)), $pos, Write, true);
                    // SAFETY: forwarded from the C caller; written calls only read the buffer.
                    unsafe { begin(a, fh, buf as *mut c_void, count, datatype) }
                }

                fn $end(fh: MPI_File, buf: *const c_void, status: *mut MPI_Status) -> c_int {
                    let _ = buf;
                    // SAFETY: forwarded from the C caller.
                    unsafe { end(concat!("MPI_", stringify!($end)), concat!("MPI_", stringify!($begin)), fh, status) }
                }
            )*
        }
    };
}

const_split_calls! {
    File_write_at_all_begin / File_write_at_all_end @offset => offset;
    File_write_all_begin / File_write_all_end => Individual;
    File_write_ordered_begin / File_write_ordered_end => Ordered;
}

/// The handle a view's type is reported by (MPI_File_get_view): the
/// predefined one itself, or a new handle of the derived one.
fn view_type(t: &(MPI_Datatype, Option<TypeInfo>)) -> MPI_Datatype {
    match &t.1 {
        None => t.0,
        Some(ti) => rank_state().expect("inside a rank").add_type(TypeInfo {
            committed: true,
            ..ti.clone()
        }),
    }
}

fn described(t: MPI_Datatype) -> (MPI_Datatype, Option<TypeInfo>) {
    match datatype::predefined(t) {
        Some(_) => (t, None),
        None => (t, datatype::info(t)),
    }
}

mpi_fn! {
    fn File_open(comm: MPI_Comm, filename: *const c_char, amode: c_int, info: MPI_Info, fh: *mut MPI_File) -> c_int {
        let call = "MPI_File_open";
        let c = tri!(comm_for(call, comm));
        // SAFETY: a NUL-terminated string by contract.
        let Some(name) = (unsafe { c_str(filename) }) else {
            return null_error(call, ErrorClass::BadFile, "the file name is NULL".into());
        };
        let Some(hints) = crate::info::info_entries(info) else {
            return null_error(call, ErrorClass::Info, format!("invalid info handle {info:#x}"));
        };
        let f = match File::open(&c, call, &name, amode) {
            Ok(f) => f,
            Err(e) => {
                let handler = rank_state().map_or(Handler::Return, |st| st.files.null_handler);
                return raise(handler, std::ptr::null_mut(), e);
            }
        };
        let mut st = rank_state().expect("inside a rank");
        let handler = st.files.null_handler;
        let entry = FileEntry {
            file: Arc::new(f),
            handler,
            info: hints,
            view: ViewTypes {
                etype: (MPI_BYTE, None),
                filetype: (MPI_BYTE, None),
                datarep: "native".into(),
            },
            split: None,
        };
        let h = st.files.add(entry);
        // SAFETY: writable by contract.
        unsafe { *fh = h };
        MPI_SUCCESS
    }

    fn File_close(fh: *mut MPI_File) -> c_int {
        let call = "MPI_File_close";
        // SAFETY: readable by contract.
        let h = unsafe { *fh };
        let (_, handler) = tri!(file_for(call, h));
        let entry = rank_state().expect("inside a rank").files.take(h).expect("looked up above");
        // Requests of the file hold it until they complete; MPI has them
        // complete before the close.
        let f = match Arc::try_unwrap(entry.file) {
            Ok(f) => f,
            Err(shared) => {
                let rc = fail_on(h, handler, call, ErrorClass::File, "the file still has operations in flight (complete its requests first)".into());
                rank_state().expect("inside a rank").files.entries.put_back(index(h).expect("a file handle"), FileEntry { file: shared, ..entry });
                return rc;
            }
        };
        let r = f.close(call);
        // SAFETY: writable by contract.
        unsafe { *fh = std::ptr::null_mut() };
        ret_on(h, handler, r)
    }

    fn File_delete(filename: *const c_char, info: MPI_Info) -> c_int {
        let call = "MPI_File_delete";
        let w = tri!(comm_for(call, MPI_COMM_WORLD));
        let _ = info;
        // SAFETY: a NUL-terminated string by contract.
        let Some(name) = (unsafe { c_str(filename) }) else {
            return null_error(call, ErrorClass::BadFile, "the file name is NULL".into());
        };
        match mpcrs_io::delete(call, &name, w.world_rank()) {
            Ok(()) => MPI_SUCCESS,
            Err(e) => {
                let handler = rank_state().map_or(Handler::Return, |st| st.files.null_handler);
                raise(handler, std::ptr::null_mut(), e)
            }
        }
    }

    fn File_get_size(fh: MPI_File, size: *mut MPI_Offset) -> c_int {
        let call = "MPI_File_get_size";
        let (f, handler) = tri!(file_for(call, fh));
        match f.size(call) {
            Ok(s) => {
                // SAFETY: writable by contract.
                unsafe { *size = s as MPI_Offset };
                MPI_SUCCESS
            }
            Err(e) => raise(handler, fh, e),
        }
    }

    fn File_set_size(fh: MPI_File, size: MPI_Offset) -> c_int {
        let call = "MPI_File_set_size";
        let (f, handler) = tri!(file_for(call, fh));
        ret_on(fh, handler, f.set_size(call, size))
    }

    fn File_preallocate(fh: MPI_File, size: MPI_Offset) -> c_int {
        let call = "MPI_File_preallocate";
        let (f, handler) = tri!(file_for(call, fh));
        ret_on(fh, handler, f.preallocate(call, size))
    }

    fn File_sync(fh: MPI_File) -> c_int {
        let call = "MPI_File_sync";
        let (f, handler) = tri!(file_for(call, fh));
        ret_on(fh, handler, f.sync(call))
    }

    fn File_get_amode(fh: MPI_File, amode: *mut c_int) -> c_int {
        let (f, _) = tri!(file_for("MPI_File_get_amode", fh));
        // SAFETY: writable by contract.
        unsafe { *amode = f.amode() };
        MPI_SUCCESS
    }

    fn File_get_group(fh: MPI_File, group: *mut MPI_Group) -> c_int {
        let (f, _) = tri!(file_for("MPI_File_get_group", fh));
        let h = rank_state().expect("inside a rank").add_group(f.communicator().group());
        // SAFETY: writable by contract.
        unsafe { *group = h };
        MPI_SUCCESS
    }

    fn File_set_atomicity(fh: MPI_File, flag: c_int) -> c_int {
        let call = "MPI_File_set_atomicity";
        let (f, handler) = tri!(file_for(call, fh));
        ret_on(fh, handler, f.set_atomicity(call, flag != 0))
    }

    fn File_get_atomicity(fh: MPI_File, flag: *mut c_int) -> c_int {
        let (f, _) = tri!(file_for("MPI_File_get_atomicity", fh));
        // SAFETY: writable by contract.
        unsafe { *flag = f.atomicity() as c_int };
        MPI_SUCCESS
    }

    fn File_set_view(fh: MPI_File, disp: MPI_Offset, etype: MPI_Datatype, filetype: MPI_Datatype, datarep: *const c_char, info: MPI_Info) -> c_int {
        let call = "MPI_File_set_view";
        let (f, handler) = tri!(file_for(call, fh));
        let mut layouts = Vec::with_capacity(2);
        // SAFETY: a NUL-terminated string by contract.
        let Some(rep) = (unsafe { c_str(datarep) }) else {
            return fail_on(fh, handler, call, ErrorClass::Arg, "the data representation is NULL".into());
        };
        for (what, t) in [("etype", etype), ("filetype", filetype)] {
            match datatype::describe(1, t) {
                Ok((_, ti)) => {
                    if let Some(why) = (rep == "external32").then(|| external32_refused(&ti, what)).flatten() {
                        return fail_on(fh, handler, call, ErrorClass::UnsupportedDatarep, why);
                    }
                    layouts.push(layout_of(&ti))
                }
                Err((class, detail)) => return fail_on(fh, handler, call, class, format!("{what}: {detail}")),
            }
        }
        let Some(hints) = crate::info::info_entries(info) else {
            return fail_on(fh, handler, call, ErrorClass::Info, format!("invalid info handle {info:#x}"));
        };
        let disp = (disp != MPI_DISPLACEMENT_CURRENT).then_some(disp);
        let filetype_layout = layouts.pop().expect("two layouts");
        if let Err(e) = f.set_view(call, disp, &layouts[0], filetype_layout, &rep) {
            return raise(handler, fh, e);
        }
        let view = ViewTypes { etype: described(etype), filetype: described(filetype), datarep: rep };
        if let Some(e) = rank_state().expect("inside a rank").files.get_mut(fh) {
            e.view = view;
            e.info.extend(hints);
        }
        MPI_SUCCESS
    }

    fn File_get_view(fh: MPI_File, disp: *mut MPI_Offset, etype: *mut MPI_Datatype, filetype: *mut MPI_Datatype, datarep: *mut c_char) -> c_int {
        let (f, _) = tri!(file_for("MPI_File_get_view", fh));
        let types = rank_state().and_then(|st| st.files.get(fh).map(|e| e.view.clone())).expect("looked up above");
        let (e, t) = (view_type(&types.etype), view_type(&types.filetype));
        // SAFETY: writable by contract; the representation's buffer holds
        // MPI_MAX_DATAREP_STRING bytes.
        unsafe {
            *disp = f.view().disp as MPI_Offset;
            *etype = e;
            *filetype = t;
            crate::env::write_cstr(&types.datarep, datarep, MPI_MAX_DATAREP_STRING, std::ptr::null_mut());
        }
        MPI_SUCCESS
    }

    fn File_get_type_extent(fh: MPI_File, datatype: MPI_Datatype, extent: *mut MPI_Aint) -> c_int {
        let call = "MPI_File_get_type_extent";
        let (_, handler) = tri!(file_for(call, fh));
        let Some(ti) = datatype::info(datatype) else {
            return fail_on(fh, handler, call, ErrorClass::Type, format!("invalid datatype handle {datatype:#x}"));
        };
        // "native": the extent in the file is the extent in memory.
        // SAFETY: writable by contract.
        unsafe { *extent = ti.extent as MPI_Aint };
        MPI_SUCCESS
    }

    fn File_seek(fh: MPI_File, offset: MPI_Offset, whence: c_int) -> c_int {
        let call = "MPI_File_seek";
        let (f, handler) = tri!(file_for(call, fh));
        ret_on(fh, handler, f.seek(call, offset, whence))
    }

    fn File_get_position(fh: MPI_File, offset: *mut MPI_Offset) -> c_int {
        let (f, _) = tri!(file_for("MPI_File_get_position", fh));
        // SAFETY: writable by contract.
        unsafe { *offset = f.position() as MPI_Offset };
        MPI_SUCCESS
    }

    fn File_seek_shared(fh: MPI_File, offset: MPI_Offset, whence: c_int) -> c_int {
        let call = "MPI_File_seek_shared";
        let (f, handler) = tri!(file_for(call, fh));
        ret_on(fh, handler, f.seek_shared(call, offset, whence))
    }

    fn File_get_position_shared(fh: MPI_File, offset: *mut MPI_Offset) -> c_int {
        let call = "MPI_File_get_position_shared";
        let (f, handler) = tri!(file_for(call, fh));
        match f.position_shared(call) {
            Ok(p) => {
                // SAFETY: writable by contract.
                unsafe { *offset = p as MPI_Offset };
                MPI_SUCCESS
            }
            Err(e) => raise(handler, fh, e),
        }
    }

    fn File_get_byte_offset(fh: MPI_File, offset: MPI_Offset, disp: *mut MPI_Offset) -> c_int {
        let call = "MPI_File_get_byte_offset";
        let (f, handler) = tri!(file_for(call, fh));
        match f.byte_offset(call, offset) {
            Ok(b) => {
                // SAFETY: writable by contract.
                unsafe { *disp = b as MPI_Offset };
                MPI_SUCCESS
            }
            Err(e) => raise(handler, fh, e),
        }
    }

    fn File_set_info(fh: MPI_File, info: MPI_Info) -> c_int {
        let call = "MPI_File_set_info";
        let (_, handler) = tri!(file_for(call, fh));
        let Some(map) = crate::info::info_entries(info) else {
            return fail_on(fh, handler, call, ErrorClass::Info, format!("invalid info handle {info:#x}"));
        };
        if let Some(e) = rank_state().expect("inside a rank").files.get_mut(fh) {
            e.info.extend(map);
        }
        MPI_SUCCESS
    }

    fn File_get_info(fh: MPI_File, info_used: *mut MPI_Info) -> c_int {
        let (f, _) = tri!(file_for("MPI_File_get_info", fh));
        let given = rank_state().and_then(|st| st.files.get(fh).map(|e| e.info.clone())).unwrap_or_default();
        let Some(h) = crate::info::new_info(file_hints(&given, &f)) else { return ErrorClass::Other as c_int };
        // SAFETY: writable by contract.
        unsafe { *info_used = h };
        MPI_SUCCESS
    }

    fn File_create_errhandler(file_errhandler_fn: Option<FileErrhandlerFn>, errhandler: *mut MPI_Errhandler) -> c_int {
        // SAFETY: only the first parameter's pointee type differs (a handle
        // passed by pointer); the handler is called with a file's.
        let f: Option<CommErrhandlerFn> = unsafe { std::mem::transmute(file_errhandler_fn) };
        crate::errhandler::create("MPI_File_create_errhandler", f, errhandler)
    }

    fn File_set_errhandler(file: MPI_File, errhandler: MPI_Errhandler) -> c_int {
        let call = "MPI_File_set_errhandler";
        let _world = tri!(comm_for(call, MPI_COMM_WORLD));
        let h = if crate::errhandler::is_user(errhandler) {
            Handler::User(errhandler)
        } else {
            match errhandler {
                MPI_ERRORS_ARE_FATAL | MPI_ERRORS_ABORT => Handler::Fatal,
                MPI_ERRORS_RETURN => Handler::Return,
                _ => return null_error(call, ErrorClass::Arg, format!("invalid error handler {errhandler:#x}")),
            }
        };
        if file.is_null() {
            rank_state().expect("inside a rank").files.null_handler = h;
            return MPI_SUCCESS;
        }
        let (_, _) = tri!(file_for(call, file));
        if let Some(e) = rank_state().expect("inside a rank").files.get_mut(file) {
            e.handler = h;
        }
        MPI_SUCCESS
    }

    fn File_get_errhandler(file: MPI_File, errhandler: *mut MPI_Errhandler) -> c_int {
        let call = "MPI_File_get_errhandler";
        let _world = tri!(comm_for(call, MPI_COMM_WORLD));
        let h = if file.is_null() {
            rank_state().expect("inside a rank").files.null_handler
        } else {
            tri!(file_for(call, file)).1
        };
        // SAFETY: writable by contract.
        unsafe {
            *errhandler = match h {
                Handler::Fatal => MPI_ERRORS_ARE_FATAL,
                Handler::Return => MPI_ERRORS_RETURN,
                Handler::User(eh) => eh,
            }
        };
        MPI_SUCCESS
    }

    fn File_call_errhandler(fh: MPI_File, errorcode: c_int) -> c_int {
        let call = "MPI_File_call_errhandler";
        let _world = tri!(comm_for(call, MPI_COMM_WORLD));
        let handler = if fh.is_null() {
            rank_state().expect("inside a rank").files.null_handler
        } else {
            tri!(file_for(call, fh)).1
        };
        let class = crate::env::class_of(errorcode).unwrap_or(ErrorClass::Unknown);
        let rank = rank_state().and_then(|st| st.world()).map_or(0, |w| w.world_rank());
        if let Handler::User(eh) = handler {
            let mut h = fh;
            crate::errhandler::call_with(eh, (&mut h as *mut MPI_File).cast(), errorcode);
            return MPI_SUCCESS;
        }
        raise(handler, fh, Error::new(class, call, rank, format!("error code {errorcode} raised by the program")));
        MPI_SUCCESS
    }
}
