//! Handles of the C ABI and the per-rank tables behind them. Every rank of the
//! process has its own tables (its communicators, requests and ops), reached
//! through the calling ULT's rank; only that rank's ULT ever locks them, so the
//! locks are never contended and never held across a blocking call.

#![allow(non_camel_case_types, non_snake_case)]

use mpcrs_scheduler::sync::{Mutex, MutexGuard};
use std::os::raw::c_int;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use mpcrs::raw::RawRequest;
use mpcrs::{Communicator, ErrorClass};

/// MPI_User_function.
pub type MPI_User_function = unsafe extern "C" fn(
    invec: *mut libc::c_void,
    inoutvec: *mut libc::c_void,
    len: *mut c_int,
    datatype: *mut MPI_Datatype,
);

/// MPI_User_function_c (MPI_Op_create_c): the count is an MPI_Count.
pub type MPI_User_function_c = unsafe extern "C" fn(
    invec: *mut libc::c_void,
    inoutvec: *mut libc::c_void,
    len: *mut crate::ctypes::MPI_Count,
    datatype: *mut MPI_Datatype,
);

/// The function of a user-defined op, in the form the program gave it.
#[derive(Clone, Copy)]
pub(crate) enum UserFn {
    Int(MPI_User_function),
    Large(MPI_User_function_c),
}

/// A user-defined op as the program created it.
#[derive(Clone, Copy)]
pub(crate) struct UserOp {
    pub(crate) func: UserFn,
    pub(crate) commute: bool,
}

/// MPI_Aint: an address-sized signed integer (`long` on LP64, as MPICH).
pub type MPI_Aint = std::os::raw::c_long;
pub type MPI_Comm = c_int;
pub type MPI_Datatype = c_int;
pub type MPI_Op = c_int;
pub type MPI_Request = c_int;
pub type MPI_Errhandler = c_int;

/// MPICH's layout: the byte count split in two ints, the top bit of the second
/// being the cancelled flag.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct MPI_Status {
    pub count_lo: c_int,
    pub count_hi_and_cancelled: c_int,
    pub MPI_SOURCE: c_int,
    pub MPI_TAG: c_int,
    pub MPI_ERROR: c_int,
}

pub const MPI_SUCCESS: c_int = 0;
pub const MPI_COMM_NULL: MPI_Comm = 0x0400_0000;
pub const MPI_COMM_WORLD: MPI_Comm = 0x4400_0000;
pub const MPI_COMM_SELF: MPI_Comm = 0x4400_0001;
pub const MPI_REQUEST_NULL: MPI_Request = 0x2c00_0000;
pub const MPI_OP_NULL: MPI_Op = 0x1800_0000;
pub const MPI_ERRORS_ARE_FATAL: MPI_Errhandler = 0x5400_0000;
pub const MPI_ERRORS_RETURN: MPI_Errhandler = 0x5400_0001;
pub const MPI_ERRORS_ABORT: MPI_Errhandler = 0x5400_0003;
pub const MPI_THREAD_SINGLE: c_int = 0;
pub const MPI_THREAD_MULTIPLE: c_int = 3;
pub const MPI_UNDEFINED: c_int = -32766;
pub const MPI_IDENT: c_int = 0;
pub const MPI_CONGRUENT: c_int = 1;
pub const MPI_SIMILAR: c_int = 2;
pub const MPI_UNEQUAL: c_int = 3;
pub const MPI_MAX_PROCESSOR_NAME: usize = 128;
pub const MPI_MAX_ERROR_STRING: usize = 512;
pub const MPI_MAX_LIBRARY_VERSION_STRING: usize = 8192;

/// Handles of communicators created by the program: the kind bits of MPICH's
/// "direct" communicator handles, then an index in the rank's table.
const COMM_USER: c_int = 0x8400_0000u32 as c_int;
/// Handles of requests: MPICH's request kind bits, then an index.
pub(crate) const REQUEST_USER: c_int = 0xac00_0000u32 as c_int;
/// Handles of user-defined ops.
const OP_USER: c_int = 0x9800_0000u32 as c_int;
/// Handles of info objects.
const INFO_USER: c_int = 0x9c00_0000u32 as c_int;
/// Handles of groups created by the program.
const GROUP_USER: c_int = 0x8800_0000u32 as c_int;
pub const MPI_GROUP_NULL: c_int = 0x0800_0000;
pub const MPI_GROUP_EMPTY: c_int = 0x4800_0000;
/// Handles of messages taken by matched probes.
const MESSAGE_USER: c_int = 0xec00_0000u32 as c_int;
pub const MPI_MESSAGE_NULL: c_int = 0x2c00_0000;
pub const MPI_MESSAGE_NO_PROC: c_int = 0x6c00_0000;
/// Bytes MPI_Bsend accounts per message beyond its data (MPI_BSEND_OVERHEAD).
pub const MPI_BSEND_OVERHEAD: usize = 96;
/// Handles of derived datatypes (outside MPICH's predefined 0x4c.../0x8c... values).
const TYPE_USER: c_int = 0xcc00_0000u32 as c_int;
pub(crate) const INDEX_MASK: c_int = 0x03ff_ffff;

pub(crate) fn is_in_place(p: *const libc::c_void) -> bool {
    p as isize == -1
}

pub(crate) fn status_ignored(p: *const MPI_Status) -> bool {
    p.is_null() || p as usize == 1
}

/// A request in flight and what its completion needs.
pub(crate) struct RequestEntry {
    pub(crate) request: RawRequest,
    pub(crate) comm: Arc<Communicator>,
    pub(crate) call: &'static str,
    /// Packed data of a send from a non-contiguous buffer, kept until completion;
    /// or the staging of a receive into one, unpacked at completion.
    pub(crate) staging: Option<crate::datatype::Staging>,
    /// Set for persistent requests (MPI_Send_init, MPI_Recv_init): what MPI_Start
    /// starts again. Their handle survives completion.
    pub(crate) persistent: Option<crate::requests::Persistent>,
    /// Whether a persistent request has been started and not yet completed.
    pub(crate) active: bool,
    /// Set for generalized requests (MPI_Grequest_start): the program's
    /// query, free and cancel functions.
    pub(crate) grequest: Option<crate::grequest::Callbacks>,
}

#[derive(Default)]
pub(crate) struct RankState {
    pub(crate) initialized: bool,
    pub(crate) finalized: bool,
    comms: Vec<Option<Arc<Communicator>>>,
    requests: Vec<Option<RequestEntry>>,
    free_requests: Vec<usize>,
    /// Generalized requests, by handle: their handles are unique in the
    /// process, so that any thread can complete them (grequest.rs).
    grequests: std::collections::HashMap<MPI_Request, Option<RequestEntry>>,
    ops: Vec<Option<UserOp>>,
    types: Vec<Option<crate::datatype::TypeInfo>>,
    /// Slots of freed derived types, reused last freed first (as MPICH does:
    /// programs have come to rely on it).
    free_types: Vec<usize>,
    messages: Vec<Option<mpcrs::raw::RawMessage>>,
    /// MPI_Buffer_attach: (address, size) of the program's buffer for MPI_Bsend.
    pub(crate) bsend_buffer: Option<(usize, usize)>,
    /// MPI_Comm_attach_buffer: buffers of single communicators, by handle.
    pub(crate) comm_bsend_buffers: std::collections::HashMap<MPI_Comm, (usize, usize)>,
    /// Buffered sends in flight, with the copy each sends from and the
    /// communicator whose buffer holds it (`None`: the process's).
    pub(crate) bsends: Vec<(RawRequest, Vec<u8>, Option<MPI_Comm>)>,
    /// Requests freed by MPI_Request_free before they completed: the
    /// operation goes on (a synchronous send may wait for a receive the rank
    /// posts later); finished by later frees and by MPI_Finalize.
    pub(crate) freed: Vec<RequestEntry>,
    /// The thread that initialized MPI: whether it was a ULT, and its OS thread.
    pub(crate) main_thread: Option<(bool, libc::pthread_t)>,
    groups: Vec<Option<mpcrs::Group>>,
    /// Virtual topologies, by communicator handle.
    pub(crate) topos: std::collections::HashMap<MPI_Comm, crate::topo::Topology>,
    /// Keyvals and the attributes of communicators and datatypes.
    pub(crate) attributes: crate::attributes::Store,
    infos: Vec<Option<crate::info::Entries>>,
    /// Handles (communicators, datatypes, ops) that started collectives and
    /// persistent requests still use, with how many use each and whether the
    /// program freed it: MPI lets the program free them while those live, so
    /// the last user frees them (nbc.rs, requests.rs).
    pins: std::collections::HashMap<c_int, (usize, bool)>,
    /// Error classes and codes the program added: code - FIRST_USER_CODE ->
    /// (its class, its string); `None` once deleted.
    pub(crate) user_errors: Vec<Option<(c_int, String)>>,
    /// Hints given to communicators (MPI_Comm_set_info, MPI_Comm_dup_with_info).
    pub(crate) comm_infos: std::collections::HashMap<MPI_Comm, crate::info::Entries>,
    /// Open MPI-4 sessions (sessions.rs).
    pub(crate) sessions: crate::sessions::Table,
    /// Names given to datatypes (MPI_Type_set_name).
    pub(crate) type_names: std::collections::HashMap<MPI_Datatype, String>,
    /// Windows (MPI_Win) by handle.
    pub(crate) windows: crate::windows::Table,
    /// Files (MPI_File) by handle, and MPI_FILE_NULL's error handler.
    pub(crate) files: crate::files::Table,
}

/// One rank's tables behind a lock that parks a ULT rather than blocking its
/// worker. The rank and its non-blocking collective helpers take it for the
/// length of a lookup or an update; the helpers of a rank that is the program's
/// own thread run on a worker thread, at the same time as the rank.
///
/// The predefined communicators are also found without the lock between
/// MPI_Init and MPI_Finalize: the hot calls (a send, a receive) then take no
/// lock and count no reference, whose locked instructions would wait for the
/// stores of the message just sent to leave this core.
/// Padded to its own cache lines: neighbouring ranks run on different workers.
#[repr(align(128))]
struct RankCell {
    state: Mutex<RankState>,
    /// User error handlers, apart from `state`: errors are raised where it is held.
    errhandlers: Mutex<crate::errhandler::Table>,
    /// MPI_COMM_WORLD and MPI_COMM_SELF, installed before main (again
    /// before each new run of a job recovered in place). Never freed: the
    /// old run's may still be named by a thread of the rank that never woke.
    predefined: std::sync::atomic::AtomicPtr<[Arc<Communicator>; 2]>,
    /// Set by MPI_Init, cleared by MPI_Finalize.
    live: AtomicBool,
    /// libc's per-process state, the rank's own (privatized programs).
    libc: crate::libc_state::RankLibc,
    /// The rank's windows, found by the data and synchronization calls
    /// without the lock of `state` (its `windows` table owns them).
    windows: crate::published::Published<mpcrs::raw::Window>,
    /// Where the rank's copy of the program keeps mpif.h's common block of
    /// special addresses (MPI_BOTTOM, ...), when it has one.
    fortran_addresses: OnceLock<usize>,
}

// SAFETY: the raw pointers inside (attribute values, buffers) are the program's,
// used only by the rank that stored them and its helpers, under the lock.
unsafe impl Send for RankState {}

pub(crate) struct Job {
    ranks: Box<[RankCell]>,
}

static JOB: OnceLock<Job> = OnceLock::new();

/// Creates the per-rank tables of a job of `n` ranks (once per process).
pub(crate) fn create_job(n: usize) {
    let job = Job {
        ranks: (0..n)
            .map(|_| RankCell {
                state: Mutex::new(RankState::default()),
                errhandlers: Mutex::new(Default::default()),
                predefined: Default::default(),
                live: AtomicBool::new(false),
                libc: Default::default(),
                windows: Default::default(),
                fortran_addresses: OnceLock::new(),
            })
            .collect(),
    };
    if JOB.set(job).is_err() {
        panic!("an MPI job already runs in this process");
    }
}

/// Whether this process runs a job already.
pub(crate) fn job_exists() -> bool {
    JOB.get().is_some()
}

#[inline]
fn rank_cell() -> Option<&'static RankCell> {
    let job = JOB.get()?;
    let r = match mpcrs::current_rank() {
        Some(r) => r,
        // A thread the program started itself (MPI_THREAD_MULTIPLE) in a
        // process of one rank acts for that rank.
        None => sole_rank()?,
    };
    job.ranks.get(r as usize)
}

/// The calling rank's published windows (see published.rs); with `live`,
/// only between MPI_Init and MPI_Finalize.
#[inline]
pub(crate) fn published_windows(
    live: bool,
) -> Option<&'static crate::published::Published<mpcrs::raw::Window>> {
    let cell = rank_cell()?;
    (!live || cell.live.load(Ordering::Acquire)).then_some(&cell.windows)
}

/// World ranks installed in this process: how many, and the last one.
static INSTALLED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn note_installed(rank: i32) {
    let n = INSTALLED.load(Ordering::Acquire) >> 32;
    INSTALLED.store((n + 1) << 32 | rank as u32 as u64, Ordering::Release);
}

/// The rank of this process if it has exactly one.
fn sole_rank() -> Option<i32> {
    let v = INSTALLED.load(Ordering::Acquire);
    (v >> 32 == 1).then_some(v as u32 as i32)
}

/// Ends the job for an MPI call made by a thread that acts for no rank: one a
/// shared system library started (libstdc++'s std::thread), which
/// reaches libc's pthread_create and so carries no rank, in a process of
/// several ranks; or a program not started by mpcrs-run.
pub(crate) fn outside_rank(call: &str) -> ! {
    let ranks = INSTALLED.load(Ordering::Acquire) >> 32;
    if ranks > 1 {
        mpcrs_settings::report!(
            error,
            "mpcrs: {call} called from a thread that acts for no rank (started by a system \
             library, e.g. std::thread) in a process of {ranks} ranks: MPI calls from \
             such threads need one rank per process (mpcrs-run -p equal to -n); threads the \
             program starts with pthread_create act for their rank"
        );
    } else {
        mpcrs_settings::report!(
            error,
            "mpcrs: {call} called outside an MPI rank: start the program with mpcrs-run"
        );
    }
    mpcrs::abort_job(mpcrs::FATAL_EXIT_CODE)
}

/// The libc state of rank `rank` of this process's job.
pub(crate) fn rank_libc(rank: usize) -> Option<&'static crate::libc_state::RankLibc> {
    Some(&JOB.get()?.ranks.get(rank)?.libc)
}

/// Records where rank `rank`'s copy of the program has mpif.h's common block.
pub(crate) fn note_fortran_addresses(rank: usize, at: usize) {
    if let Some(cell) = JOB.get().and_then(|j| j.ranks.get(rank)) {
        let _ = cell.fortran_addresses.set(at);
    }
}

/// Where the calling rank's copy of the program has mpif.h's common block, if
/// the loader found one.
pub(crate) fn fortran_addresses() -> Option<usize> {
    rank_cell()?.fortran_addresses.get().copied()
}

/// The calling rank's tables; `None` outside a rank of a C job.
pub(crate) fn rank_state() -> Option<MutexGuard<'static, RankState>> {
    Some(rank_cell()?.state.lock())
}

/// The calling rank's user error handlers; `None` outside a rank of a C job.
pub(crate) fn errhandler_table() -> Option<MutexGuard<'static, crate::errhandler::Table>> {
    Some(rank_cell()?.errhandlers.lock())
}

/// Installs the rank's MPI_COMM_WORLD and MPI_COMM_SELF (by the loader, before
/// main). Returns whether the rank had a world already: a new run of a job
/// recovered in place, whose rank starts with fresh tables, as a new process
/// would.
pub(crate) fn install_world(world: Communicator) -> bool {
    let selfc = world.self_comm();
    let cell = rank_cell().expect("installing a world outside a rank");
    let again = !cell.predefined.load(Ordering::Acquire).is_null();
    if !again {
        note_installed(world.world_rank());
    }
    let (world, selfc) = (Arc::new(world), Arc::new(selfc));
    if again {
        cell.live.store(false, Ordering::Release);
        *cell.state.lock() = RankState::default();
        *cell.errhandlers.lock() = Default::default();
    }
    let both = Box::into_raw(Box::new([world.clone(), selfc.clone()]));
    cell.predefined.store(both, Ordering::Release);
    cell.state.lock().comms = vec![Some(world), Some(selfc)];
    again
}

/// Marks the calling rank's MPI as initialized (`true`) or finalized, under
/// the lock of `_st`, its tables.
pub(crate) fn set_live(_st: &RankState, live: bool) {
    if let Some(cell) = rank_cell() {
        cell.live.store(live, Ordering::Release);
    }
}

/// A communicator as a call found it: a predefined one, borrowed, or a
/// counted reference to one the program created.
pub(crate) enum CommRef {
    Predefined(&'static Arc<Communicator>),
    Created(Arc<Communicator>),
}

impl std::ops::Deref for CommRef {
    type Target = Communicator;
    fn deref(&self) -> &Communicator {
        match self {
            CommRef::Predefined(c) => c,
            CommRef::Created(c) => c,
        }
    }
}

/// A counted reference, for what outlives the call (a request).
impl From<CommRef> for Arc<Communicator> {
    fn from(c: CommRef) -> Arc<Communicator> {
        match c {
            CommRef::Predefined(c) => c.clone(),
            CommRef::Created(c) => c,
        }
    }
}

impl RankState {
    pub(crate) fn world(&self) -> Option<Arc<Communicator>> {
        self.comms.first().cloned().flatten()
    }

    pub(crate) fn comm(&self, h: MPI_Comm) -> Option<Arc<Communicator>> {
        let i = match h {
            MPI_COMM_WORLD => 0,
            MPI_COMM_SELF => 1,
            h if h & !INDEX_MASK == COMM_USER => (h & INDEX_MASK) as usize,
            _ => return None,
        };
        self.comms.get(i).cloned().flatten()
    }

    pub(crate) fn add_comm(&mut self, c: Communicator) -> MPI_Comm {
        let i = self
            .comms
            .iter()
            .skip(2)
            .position(|c| c.is_none())
            .map(|i| i + 2);
        let i = match i {
            Some(i) => {
                self.comms[i] = Some(Arc::new(c));
                i
            }
            None => {
                self.comms.push(Some(Arc::new(c)));
                self.comms.len() - 1
            }
        };
        COMM_USER | i as c_int
    }

    /// Frees a user communicator; predefined ones cannot be freed.
    pub(crate) fn free_comm(&mut self, h: MPI_Comm) -> bool {
        if let Some(first) = self.defer_free(h) {
            return first;
        }
        if h & !INDEX_MASK != COMM_USER {
            return false;
        }
        let i = (h & INDEX_MASK) as usize;
        i >= 2 && self.comms.get_mut(i).and_then(|c| c.take()).is_some()
    }

    pub(crate) fn add_request(&mut self, e: RequestEntry) -> MPI_Request {
        let i = match self.free_requests.pop() {
            Some(i) => {
                self.requests[i] = Some(e);
                i
            }
            None => {
                self.requests.push(Some(e));
                self.requests.len() - 1
            }
        };
        REQUEST_USER | i as c_int
    }

    /// Takes a request out of the table; its handle stays reserved until
    /// [`RankState::put_back`] or [`RankState::release`].
    pub(crate) fn take_request(&mut self, h: MPI_Request) -> Option<RequestEntry> {
        if crate::grequest::is_grequest(h) {
            return self.grequests.get_mut(&h)?.take();
        }
        if h & !INDEX_MASK != REQUEST_USER {
            return None;
        }
        self.requests.get_mut((h & INDEX_MASK) as usize)?.take()
    }

    /// Returns a request taken with `take_request` under the same handle.
    pub(crate) fn put_back(&mut self, h: MPI_Request, e: RequestEntry) {
        if crate::grequest::is_grequest(h) {
            self.grequests.insert(h, Some(e));
            return;
        }
        self.requests[(h & INDEX_MASK) as usize] = Some(e);
    }

    /// Frees the handle of a request taken with `take_request`.
    pub(crate) fn release(&mut self, h: MPI_Request) {
        if crate::grequest::is_grequest(h) {
            self.grequests.remove(&h);
            return;
        }
        self.free_requests.push((h & INDEX_MASK) as usize);
    }

    /// Files a generalized request under its handle `h`.
    pub(crate) fn add_grequest(&mut self, h: MPI_Request, e: RequestEntry) {
        self.grequests.insert(h, Some(e));
    }

    /// Runs `f` on a request left in the table (for tests that may not complete it).
    pub(crate) fn with_request<R>(
        &self,
        h: MPI_Request,
        f: impl FnOnce(&RequestEntry) -> R,
    ) -> Option<R> {
        if crate::grequest::is_grequest(h) {
            return self.grequests.get(&h)?.as_ref().map(f);
        }
        if h & !INDEX_MASK != REQUEST_USER {
            return None;
        }
        self.requests
            .get((h & INDEX_MASK) as usize)?
            .as_ref()
            .map(f)
    }

    /// Keeps `h` valid until as many [`RankState::unpin`]s (handles the
    /// program created; predefined ones need no pin).
    pub(crate) fn pin(&mut self, h: c_int) {
        if matches!(h & !INDEX_MASK, COMM_USER | TYPE_USER | OP_USER) {
            self.pins.entry(h).or_insert((0, false)).0 += 1;
        }
    }

    /// Ends one use of `h`; the last frees it if the program freed it meanwhile.
    pub(crate) fn unpin(&mut self, h: c_int) {
        let Some(p) = self.pins.get_mut(&h) else {
            return;
        };
        p.0 -= 1;
        if p.0 > 0 {
            return;
        }
        let freed = p.1;
        self.pins.remove(&h);
        if freed {
            match h & !INDEX_MASK {
                COMM_USER => self.free_comm(h),
                TYPE_USER => self.free_type(h),
                _ => self.free_op(h),
            };
        }
    }

    /// A free of a pinned handle: marks it, and tells whether this was the
    /// first free (`None` if `h` is not pinned).
    fn defer_free(&mut self, h: c_int) -> Option<bool> {
        let p = self.pins.get_mut(&h)?;
        Some(!std::mem::replace(&mut p.1, true))
    }

    pub(crate) fn add_type(&mut self, t: crate::datatype::TypeInfo) -> MPI_Datatype {
        let i = match self.free_types.pop() {
            Some(i) => {
                self.types[i] = Some(t);
                i
            }
            None => {
                self.types.push(Some(t));
                self.types.len() - 1
            }
        };
        TYPE_USER | i as c_int
    }

    fn type_slot(&mut self, h: MPI_Datatype) -> Option<&mut Option<crate::datatype::TypeInfo>> {
        if h & !INDEX_MASK != TYPE_USER {
            return None;
        }
        self.types.get_mut((h & INDEX_MASK) as usize)
    }

    pub(crate) fn datatype(&mut self, h: MPI_Datatype) -> Option<crate::datatype::TypeInfo> {
        self.type_slot(h)?.clone()
    }

    /// Marks a derived type committed; false if `h` is not one.
    pub(crate) fn commit_type(&mut self, h: MPI_Datatype) -> bool {
        match self.type_slot(h) {
            Some(Some(t)) => {
                t.committed = true;
                true
            }
            _ => false,
        }
    }

    pub(crate) fn free_type(&mut self, h: MPI_Datatype) -> bool {
        // A started collective or a persistent request still uses it: the
        // last use frees it.
        if let Some(first) = self.defer_free(h) {
            return first;
        }
        if !matches!(self.type_slot(h), Some(Some(_))) {
            return false;
        }
        let i = (h & INDEX_MASK) as usize;
        self.types[i] = None;
        self.free_types.push(i);
        self.type_names.remove(&h);
        true
    }

    pub(crate) fn add_message(&mut self, m: mpcrs::raw::RawMessage) -> c_int {
        let i = match self.messages.iter().position(|m| m.is_none()) {
            Some(i) => i,
            None => {
                self.messages.push(None);
                self.messages.len() - 1
            }
        };
        self.messages[i] = Some(m);
        MESSAGE_USER | i as c_int
    }

    pub(crate) fn take_message(&mut self, h: c_int) -> Option<mpcrs::raw::RawMessage> {
        if h & !INDEX_MASK != MESSAGE_USER {
            return None;
        }
        self.messages.get_mut((h & INDEX_MASK) as usize)?.take()
    }

    pub(crate) fn add_group(&mut self, g: mpcrs::Group) -> c_int {
        if g.size() == 0 {
            return MPI_GROUP_EMPTY;
        }
        self.groups.push(Some(g));
        GROUP_USER | (self.groups.len() - 1) as c_int
    }

    pub(crate) fn group(&self, h: c_int) -> Option<mpcrs::Group> {
        if h == MPI_GROUP_EMPTY {
            return Some(mpcrs::Group::empty());
        }
        if h & !INDEX_MASK != GROUP_USER {
            return None;
        }
        self.groups
            .get((h & INDEX_MASK) as usize)
            .cloned()
            .flatten()
    }

    pub(crate) fn free_group(&mut self, h: c_int) -> bool {
        h == MPI_GROUP_EMPTY
            || (h & !INDEX_MASK == GROUP_USER
                && self
                    .groups
                    .get_mut((h & INDEX_MASK) as usize)
                    .and_then(|g| g.take())
                    .is_some())
    }

    pub(crate) fn add_info(&mut self) -> c_int {
        self.infos.push(Some(Default::default()));
        INFO_USER | (self.infos.len() - 1) as c_int
    }

    pub(crate) fn info_mut(&mut self, h: c_int) -> Option<&mut crate::info::Entries> {
        if h & !INDEX_MASK != INFO_USER {
            return None;
        }
        self.infos.get_mut((h & INDEX_MASK) as usize)?.as_mut()
    }

    pub(crate) fn free_info(&mut self, h: c_int) -> bool {
        self.info_mut(h).is_some() && {
            self.infos[(h & INDEX_MASK) as usize] = None;
            true
        }
    }

    pub(crate) fn add_op(&mut self, op: UserOp) -> MPI_Op {
        self.ops.push(Some(op));
        OP_USER | (self.ops.len() - 1) as c_int
    }

    pub(crate) fn user_op(&self, h: MPI_Op) -> Option<UserOp> {
        if h & !INDEX_MASK != OP_USER {
            return None;
        }
        self.ops.get((h & INDEX_MASK) as usize).cloned().flatten()
    }

    pub(crate) fn free_op(&mut self, h: MPI_Op) -> bool {
        if let Some(first) = self.defer_free(h) {
            return first;
        }
        h & !INDEX_MASK == OP_USER
            && self
                .ops
                .get_mut((h & INDEX_MASK) as usize)
                .and_then(|o| o.take())
                .is_some()
    }
}

/// The error code a C caller sees for a runtime error (the class: mpcrs codes are
/// classes).
pub(crate) fn code(e: &mpcrs::Error) -> c_int {
    e.class as c_int
}

/// Looks up a communicator for `call`; errors (no MPI_Init yet, invalid handle) go
/// through MPI_COMM_WORLD's handler, which ends the job unless it is ERRORS_RETURN.
#[inline(always)]
pub(crate) fn comm_for(call: &'static str, h: MPI_Comm) -> Result<CommRef, c_int> {
    if let (MPI_COMM_WORLD | MPI_COMM_SELF, Some(cell)) = (h, rank_cell()) {
        if cell.live.load(Ordering::Acquire) {
            let p = cell.predefined.load(Ordering::Acquire);
            if !p.is_null() {
                // SAFETY: installed boxes are never freed (see RankCell).
                let p: &'static [Arc<Communicator>; 2] = unsafe { &*p };
                return Ok(CommRef::Predefined(&p[(h == MPI_COMM_SELF) as usize]));
            }
        }
    }
    comm_from_tables(call, h)
}

/// [`comm_for`] beyond the predefined communicators of a live rank.
#[inline(never)]
fn comm_from_tables(call: &'static str, h: MPI_Comm) -> Result<CommRef, c_int> {
    let Some(st) = rank_state() else {
        if !job_exists() {
            // A program started directly (its MPI_Init makes the job): too early.
            let rank = mpcrs::JobConfig::from_env().map_or(0, |c| c.local_ranks().start);
            // One write: the processes of the job share the launcher's pipe.
            let line = format!(
                "mpcrs: fatal error in {call} on rank {rank}: MPI_ERR_OTHER: called before MPI_Init\n"
            );
            eprint!("{line}");
            mpcrs::abort_job(mpcrs::FATAL_EXIT_CODE);
        }
        outside_rank(call);
    };
    // MPI is usable between MPI_Init and MPI_Finalize, and while a session
    // is open.
    let usable = (st.initialized && !st.finalized) || st.sessions.any_open();
    if usable {
        if let Some(c) = st.comm(h) {
            return Ok(CommRef::Created(c));
        }
    }
    // Errors: through MPI_COMM_WORLD's handler.
    let world = st.world().expect("world installed before main");
    let (class, detail) = if !usable {
        let when = if st.finalized {
            "after MPI_Finalize"
        } else {
            "before MPI_Init"
        };
        (ErrorClass::Other, format!("called {when}"))
    } else {
        (
            ErrorClass::Comm,
            format!("invalid communicator handle {h:#x}"),
        )
    };
    drop(st);
    Err(fail(&world, call, class, detail))
}

/// Raises an error on `comm` (its user handler's, or fatal unless
/// ERRORS_RETURN) and returns its code.
pub(crate) fn fail(
    comm: &Communicator,
    call: &'static str,
    class: ErrorClass,
    detail: String,
) -> c_int {
    if let Some(code) = crate::errhandler::call_user(comm, class as c_int) {
        return code;
    }
    let e = mpcrs::Error::new(class, call, comm.world_rank(), detail);
    match comm.error_handler().handle::<()>(Err(e.clone())) {
        Ok(()) => MPI_SUCCESS,
        Err(e) => code(&e),
    }
}

/// Turns a runtime result into a return code.
pub(crate) fn ret(r: mpcrs::Result<()>) -> c_int {
    match r {
        Ok(()) => MPI_SUCCESS,
        Err(e) => code(&e),
    }
}

/// Writes a status unless the caller passed MPI_STATUS_IGNORE. The MPI_ERROR
/// field is written only for a failed operation and for MPI's empty status
/// (MPI_SUCCESS, with MPI_ANY_SOURCE and MPI_ANY_TAG): MPI sets it in the calls
/// that complete several operations, and a successful MPI_Recv, MPI_Wait or
/// MPI_Mrecv leaves what the program put there (MPICH's tests check both).
///
/// # Safety
/// `out` is MPI_STATUS_IGNORE or points to a writable MPI_Status.
pub(crate) unsafe fn write_status(out: *mut MPI_Status, st: &mpcrs::Status) {
    if status_ignored(out) {
        return;
    }
    let bytes = st.bytes as u64;
    // SAFETY: `out` is a valid MPI_Status by contract.
    unsafe {
        (*out).count_lo = bytes as u32 as c_int;
        (*out).count_hi_and_cancelled = (((bytes >> 32) as c_int) << 1) | st.cancelled as c_int;
        (*out).MPI_SOURCE = st.source;
        (*out).MPI_TAG = st.tag;
        if st.error != mpcrs::ErrorClass::Success || *st == mpcrs::Status::inactive() {
            (*out).MPI_ERROR = st.error as c_int;
        }
    }
}

/// Byte count recorded in a status.
pub(crate) fn status_bytes(s: &MPI_Status) -> u64 {
    (s.count_lo as u32 as u64) | (((s.count_hi_and_cancelled as u32 as u64) >> 1) << 32)
}

/// Reads `n` elements of a C array argument (empty for `n == 0` or a null pointer).
///
/// # Safety
/// `p` holds `n` elements when `n > 0` and it is not null.
pub(crate) unsafe fn c_array<'a, T>(p: *const T, n: usize) -> &'a [T] {
    if n == 0 || p.is_null() {
        &[]
    } else {
        // SAFETY: by contract.
        unsafe { std::slice::from_raw_parts(p, n) }
    }
}

/// Objects of one kind by index, the lowest free index reused first: the
/// tables behind window and file handles, which add the handle's encoding.
pub(crate) struct Slots<T>(Vec<Option<T>>);

impl<T> Default for Slots<T> {
    fn default() -> Slots<T> {
        Slots(Vec::new())
    }
}

impl<T> Slots<T> {
    /// Stores `e`; its index.
    pub(crate) fn insert(&mut self, e: T) -> usize {
        match self.0.iter().position(|x| x.is_none()) {
            Some(i) => {
                self.0[i] = Some(e);
                i
            }
            None => {
                self.0.push(Some(e));
                self.0.len() - 1
            }
        }
    }

    pub(crate) fn get(&self, i: usize) -> Option<&T> {
        self.0.get(i)?.as_ref()
    }

    pub(crate) fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        self.0.get_mut(i)?.as_mut()
    }

    /// Takes the object out; its index stays free for others.
    pub(crate) fn take(&mut self, i: usize) -> Option<T> {
        self.0.get_mut(i)?.take()
    }

    /// Puts back at `i` an object taken from there.
    pub(crate) fn put_back(&mut self, i: usize, e: T) {
        self.0[i] = Some(e);
    }
}
