//! A window (MPI_Win) as one rank holds it: creation and free, the origin's
//! side of every operation, and the synchronization calls that open and close
//! access and exposure epochs.
//!
//! A target in this process is reached directly: puts and gets are copies,
//! accumulates take the target's accumulate lock (memory.rs); they are
//! complete when the call returns. A target in another process is reached
//! through its agent (agent.rs): the origin sends a request and keeps what is
//! in flight until a synchronization completes it — a flush sends `Flush` and
//! waits for the acknowledgement, which comes after every earlier operation is
//! done at the target. Locks are always the target agent's, wherever the
//! origin is.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use mpcrs_scheduler::sync::Mutex;

use super::agent::{self, Agent};
use super::allocation::{self, Allocation};
use super::memory::{Shared, Target};
use super::wire::{self, Request, Verb};
use crate::comm::Communicator;
use crate::datatype::Kind;
use crate::error::{ErrorClass, ErrorHandler, Result};
use crate::group::Group;
use crate::op::Op;
use crate::raw::{self, RawRequest};
use crate::request::Status;
use crate::PROC_NULL;

/// Bytes of a member's lock word in a node segment (a cache line).
const LOCK_STRIDE: usize = 64;

/// MPI_MODE_* assertions the runtime acts on (the others only promise what
/// it does not need to know).
const MODE_NOCHECK: i32 = 1024;
const MODE_NOSUCCEED: i32 = 16384;

/// How a window's memory came to be (MPI_WIN_CREATE_FLAVOR).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// The program's memory (MPI_Win_create).
    Create,
    /// Memory the window allocated (MPI_Win_allocate).
    Allocate,
    /// Regions attached later (MPI_Win_create_dynamic).
    Dynamic,
    /// One allocation for the members of this process, each member's part
    /// after the previous one's (MPI_Win_allocate_shared).
    Shared,
}

/// What a window's memory is at creation.
pub enum Memory {
    /// `size` bytes at `base`, the program's.
    Given { base: *mut u8, size: usize },
    /// `size` bytes the window allocates.
    Allocate { size: usize },
    /// `size` bytes of an allocation the process's members share.
    Shared { size: usize },
    /// Nothing yet: regions are attached.
    Dynamic,
}

/// Every member's window as the others know it (gathered at creation).
#[derive(Clone, Copy, Debug, Default)]
struct Member {
    base: u64,
    size: u64,
    disp_unit: u64,
    /// In this process: reached directly.
    local: bool,
}

/// What completes an operation at the origin once its bytes are there (a
/// staged result unpacked into the program's buffer).
pub type Finish = Box<dyn FnOnce() + Send>;

/// An operation sent to another process and not known complete yet, with what
/// it needs kept alive and what to do once it is.
struct InFlight {
    request: RawRequest,
    _keep: Option<Vec<u8>>,
    finish: Option<Finish>,
}

/// Targets locked one by one, with whether each lock skipped the agent
/// (NOCHECK): a few at a time, looked up on every flush.
#[derive(Default)]
struct Locked(Vec<(usize, bool)>);

impl Locked {
    fn get(&self, t: &usize) -> Option<&bool> {
        self.0.iter().find(|(x, _)| x == t).map(|(_, n)| n)
    }
    fn contains_key(&self, t: &usize) -> bool {
        self.get(t).is_some()
    }
    fn insert(&mut self, t: usize, nocheck: bool) {
        self.remove(&t);
        self.0.push((t, nocheck));
    }
    fn remove(&mut self, t: &usize) {
        self.0.retain(|(x, _)| x != t);
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The epochs this rank has open on the window.
#[derive(Default)]
struct Epochs {
    /// Between two fences (the later not asserting NOSUCCEED).
    fence: bool,
    /// Targets locked, with whether the lock skipped the agent (NOCHECK).
    locks: Locked,
    lock_all: Option<bool>,
    /// Targets of MPI_Win_start.
    access: Option<Vec<usize>>,
    /// Origins of MPI_Win_post, and which of them completed.
    exposure: Option<(Vec<usize>, Vec<bool>)>,
}

#[derive(Default)]
struct OriginState {
    in_flight: HashMap<usize, Vec<InFlight>>,
    /// Targets in other processes sent operations since their last flush.
    touched: BTreeSet<usize>,
    epochs: Epochs,
}

/// One rank's handle on a window.
pub struct Window {
    /// A duplicate of the creating communicator: the window's collectives,
    /// group, error handler and name.
    comm: Arc<Communicator>,
    /// Origins to agents.
    requests: Arc<Communicator>,
    /// Agents to origins, and the post/complete notices between ranks.
    replies: Arc<Communicator>,
    shared: Arc<Shared>,
    members: Box<[Member]>,
    flavor: Flavor,
    rank: usize,
    /// Members in other processes of this node whose memory is in the
    /// window's node segment: reached by loads and stores.
    node_targets: Box<[Option<Target>]>,
    _allocation: Option<Arc<Allocation>>,
    /// Parks a ULT that waits for it: its holder may wait at the send gate
    /// while a checkpoint holds the network.
    state: Mutex<OriginState>,
    /// An epoch open to every target (a fence's, or lock_all's): the check
    /// of every operation, without the lock of `state`.
    open_to_all: AtomicBool,
    /// Operations to other processes may be in flight: without, completing
    /// takes no lock.
    remote_pending: AtomicBool,
    /// Targets below 64 locked one by one (bit t): the check of a flush,
    /// without the lock of `state`.
    locked_low: AtomicU64,
    next_tag: AtomicU32,
    agent_stopped: OnceLock<RawRequest>,
}

impl std::fmt::Debug for Window {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Window(rank {} of {}, {:?})",
            self.rank,
            self.members.len(),
            self.flavor
        )
    }
}

impl Window {
    /// Makes a window over `comm` (collective: every member calls it).
    pub fn create(
        comm: &Communicator,
        call: &'static str,
        memory: Memory,
        disp_unit: usize,
    ) -> Result<Window> {
        if comm.is_inter() {
            return comm.fail(call, ErrorClass::Comm, "windows need an intracommunicator");
        }
        let win_comm = Arc::new(comm.dup()?);
        win_comm.set_error_handler(ErrorHandler::Fatal);
        let requests = Arc::new(win_comm.dup()?);
        let replies = Arc::new(win_comm.dup()?);
        requests.set_error_handler(ErrorHandler::Fatal);
        replies.set_error_handler(ErrorHandler::Fatal);
        let n = win_comm.size() as usize;
        let rank = win_comm.rank() as usize;
        let shared = Shared::join(requests.context_id(), n);
        let (flavor, mut base, size) = match memory {
            Memory::Given { base, size } => (Flavor::Create, base as usize, size),
            Memory::Allocate { size } => (Flavor::Allocate, 0, size),
            Memory::Shared { size } => (Flavor::Shared, 0, size),
            Memory::Dynamic => (Flavor::Dynamic, 0, 0),
        };
        let mut allocation = None;
        if flavor == Flavor::Allocate {
            let a = Arc::new(Allocation::heap(size));
            base = a.ptr() as usize;
            allocation = Some(a);
        }
        // Every member's base, size and displacement unit, and its process
        // and node (a shared window's members find each other's parts).
        const FIELDS: usize = 5;
        let mine: [u64; FIELDS] = [
            base as u64,
            size as u64,
            disp_unit as u64,
            std::process::id() as u64,
            crate::this_node() as u64,
        ];
        let mut all = vec![0u64; FIELDS * n];
        // SAFETY: FIELDS words from each member into FIELDS * n.
        unsafe {
            raw::exchange(
                &win_comm,
                call,
                raw::Pattern::AllGather,
                mine.as_ptr().cast(),
                raw::Layout::Uniform(8 * FIELDS),
                all.as_mut_ptr().cast(),
                raw::Layout::Uniform(8 * FIELDS),
            )?
        };
        let field = |r: usize, i: usize| all[FIELDS * r + i];
        let mut members: Box<[Member]> = (0..n)
            .map(|r| Member {
                base: field(r, 0),
                size: field(r, 1),
                disp_unit: field(r, 2),
                local: win_comm.shared.remote_process(r).is_none(),
            })
            .collect();
        if flavor == Flavor::Shared {
            if let Some(r) = (0..n).find(|&r| field(r, 4) != field(0, 4)) {
                return win_comm.fail(
                    call,
                    ErrorClass::RmaShared,
                    format!(
                        "ranks 0 and {r} of the communicator are on different nodes: \
                         shared memory needs one node's ranks (MPI_Comm_split_type with MPI_COMM_TYPE_SHARED)"
                    ),
                );
            }
        }
        // The node's members in one area: a shared window's, and the memory
        // of MPI_Win_allocate across processes of a job that takes no
        // checkpoints (one asked from outside could not stop the ranks that
        // write it); then processes of a node reach each other by loads and
        // stores too.
        let in_segment = flavor == Flavor::Shared
            || (flavor == Flavor::Allocate
                && win_comm.shared.spanning()
                && !crate::checkpoint::enabled());
        let mut lock_words = vec![0usize; n];
        let mut node_targets: Box<[Option<Target>]> = (0..n).map(|_| None).collect();
        if in_segment {
            let node: Vec<usize> = (0..n).filter(|&r| field(r, 4) == field(rank, 4)).collect();
            // A lock word per member (a cache line each), then the parts:
            // one after the other for a shared window (MPI's contiguous
            // layout), each on a cache line of its own otherwise.
            let header = LOCK_STRIDE * node.len();
            let pad = |len: u64| {
                if flavor == Flavor::Shared {
                    len
                } else {
                    len.next_multiple_of(LOCK_STRIDE as u64)
                }
            };
            let total = header as u64 + node.iter().map(|&r| pad(members[r].size)).sum::<u64>();
            let leader = node[0];
            let a = Self::node_area(
                &win_comm,
                call,
                &shared,
                requests.context_id(),
                total as usize,
                leader,
                field(leader, 3),
            )?;
            let mut at = a.ptr() as u64 + header as u64;
            for (i, &r) in node.iter().enumerate() {
                let m = &mut members[r];
                // A member without memory has none to point to (NULL).
                m.base = if m.size > 0 { at } else { 0 };
                at += pad(m.size);
                lock_words[r] = a.ptr() as usize + i * LOCK_STRIDE;
                if !m.local {
                    // SAFETY: the word lies in the header of the area, which
                    // lives as long as the window (`allocation`).
                    node_targets[r] = Some(unsafe {
                        Target::new(m.base as usize, m.size as usize, false)
                            .with_lock_word(lock_words[r] as *mut u8)
                    });
                }
            }
            base = members[rank].base as usize;
            allocation = Some(a);
        }
        let mine = Target::new(base, size, flavor == Flavor::Dynamic);
        let mine = if in_segment {
            // SAFETY: as for the node targets above.
            unsafe { mine.with_lock_word(lock_words[rank] as *mut u8) }
        } else {
            mine
        };
        shared.expose(rank, mine);
        let (stopped, completer) = raw::manual_request();
        let a = Agent {
            requests: requests.clone(),
            replies: replies.clone(),
            shared: shared.clone(),
            rank,
            stopped: completer,
        };
        raw::spawn_as_rank(move || a.serve());
        let w = Window {
            comm: win_comm,
            requests,
            replies,
            shared,
            members,
            flavor,
            rank,
            node_targets,
            _allocation: allocation,
            state: Mutex::new(OriginState::default()),
            open_to_all: AtomicBool::new(false),
            remote_pending: AtomicBool::new(false),
            locked_low: AtomicU64::new(0),
            next_tag: AtomicU32::new(0),
            agent_stopped: OnceLock::new(),
        };
        let _ = w.agent_stopped.set(stopped);
        // Every member exposed its memory before anyone reaches it.
        raw::barrier(&w.comm);
        Ok(w)
    }

    /// The area of the node's members in this process: heap when they all
    /// live here, else the node's segment, created by the process of its
    /// first member `leader` (of pid `leader_pid`), mapped by the others after
    /// it, and unlinked once every process mapped it.
    #[allow(clippy::too_many_arguments)]
    fn node_area(
        comm: &Communicator,
        call: &'static str,
        shared: &Shared,
        context: u64,
        total: usize,
        leader: usize,
        leader_pid: u64,
    ) -> Result<Arc<Allocation>> {
        if !comm.shared.spanning() {
            return shared
                .area(|| allocation::node_area(total, None))
                .or_else(|why| comm.fail(call, ErrorClass::NoMem, why));
        }
        // Not under the shm rail's prefix: images keep a window's memory.
        let name = format!("/mpcrsw-{leader_pid}-{context:x}");
        let in_leader = comm.shared.remote_process(leader).is_none();
        let area = |create| shared.area(|| allocation::node_area(total, Some((&name, create))));
        let mut made = in_leader.then(|| area(true));
        raw::barrier(comm);
        if !in_leader {
            made = Some(area(false));
        }
        raw::barrier(comm);
        if comm.rank() as usize == leader {
            allocation::unlink(&name);
        }
        match made.expect("set on both sides") {
            Ok(a) => Ok(a),
            Err(why) => comm.fail(call, ErrorClass::NoMem, why),
        }
    }

    /// The window's own communicator (its group, error handler and name).
    pub fn communicator(&self) -> &Communicator {
        &self.comm
    }

    /// A counted handle on the window's communicator (for requests).
    pub fn communicator_arc(&self) -> Arc<Communicator> {
        self.comm.clone()
    }

    pub fn flavor(&self) -> Flavor {
        self.flavor
    }

    /// This member's base address, size and displacement unit.
    pub fn base(&self) -> *mut u8 {
        self.members[self.rank].base as usize as *mut u8
    }
    pub fn size(&self) -> usize {
        self.members[self.rank].size as usize
    }
    pub fn disp_unit(&self) -> usize {
        self.members[self.rank].disp_unit as usize
    }

    /// MPI_Win_shared_query: member `rank`'s part of a shared window (or, for
    /// PROC_NULL, the first member's with memory).
    pub fn shared_query(&self, call: &'static str, rank: i32) -> Result<(*mut u8, usize, usize)> {
        if self.flavor != Flavor::Shared {
            return self.comm.fail(
                call,
                ErrorClass::RmaFlavor,
                "the window was not made by MPI_Win_allocate_shared",
            );
        }
        let m = if rank == PROC_NULL {
            self.members
                .iter()
                .find(|m| m.size > 0)
                .copied()
                .unwrap_or(self.members[0])
        } else {
            match self.members.get(rank as usize) {
                Some(m) if rank >= 0 => *m,
                _ => {
                    return self.comm.fail(
                        call,
                        ErrorClass::Rank,
                        format!("rank {rank} is not in 0..{}", self.members.len()),
                    )
                }
            }
        };
        Ok((
            m.base as usize as *mut u8,
            m.size as usize,
            m.disp_unit as usize,
        ))
    }

    /// MPI_Win_attach.
    pub fn attach(&self, call: &'static str, base: *mut u8, size: usize) -> Result<()> {
        if self.flavor != Flavor::Dynamic {
            return self
                .comm
                .fail(call, ErrorClass::RmaFlavor, "the window is not dynamic");
        }
        let r = self.my_target().attach(base as usize, size);
        r.or_else(|why| self.comm.fail(call, ErrorClass::RmaAttach, why))
    }

    /// MPI_Win_detach.
    pub fn detach(&self, call: &'static str, base: *const u8) -> Result<()> {
        if self.flavor != Flavor::Dynamic {
            return self
                .comm
                .fail(call, ErrorClass::RmaFlavor, "the window is not dynamic");
        }
        let r = self.my_target().detach(base as usize);
        r.or_else(|why| self.comm.fail(call, ErrorClass::RmaAttach, why))
    }

    fn my_target(&self) -> &Target {
        self.shared.target(self.rank).expect("exposed at creation")
    }

    /// MPI_Win_free (collective): every epoch must be closed.
    pub fn free(self, call: &'static str) -> std::result::Result<(), Box<(Window, crate::Error)>> {
        let open = {
            let st = self.state.lock();
            let e = &st.epochs;
            !e.locks.is_empty()
                || e.lock_all.is_some()
                || e.access.is_some()
                || e.exposure.is_some()
        };
        if open {
            let err = self.comm.err(
                call,
                ErrorClass::RmaSync,
                "an access or exposure epoch is still open on the window (unlock, complete or wait first)",
            );
            let r: Result<()> = self.comm.check(Err(err.clone()));
            return match r {
                Ok(()) => Ok(()),
                Err(e) => Err(Box::new((self, e))),
            };
        }
        // Every origin finished its operations (their epochs are closed):
        // the agents have nothing left to serve.
        raw::barrier(&self.comm);
        agent::send(
            &self.requests,
            &Request::control(Verb::Stop, 0).encode(),
            self.rank as i32,
            wire::HEADER,
        );
        if let Some(s) = self.agent_stopped.get() {
            s.wait();
        }
        Ok(())
    }

    /// The member a target rank names: `None` for MPI_PROC_NULL, an error for
    /// a rank outside the window.
    #[inline]
    fn member(&self, call: &'static str, target: i32) -> Result<Option<usize>> {
        if target == PROC_NULL {
            return Ok(None);
        }
        let n = self.members.len();
        if target < 0 || target as usize >= n {
            return self.comm.fail(
                call,
                ErrorClass::Rank,
                format!("target rank {target} is not in 0..{n} (or MPI_PROC_NULL)"),
            );
        }
        Ok(Some(target as usize))
    }

    /// Whether target `t` (one of the first 64) is locked, read without the
    /// state's lock from the bits [`Window::publish`] keeps.
    #[inline]
    fn locked_by_bit(&self, t: usize) -> bool {
        t < 64 && self.locked_low.load(Ordering::Acquire) & (1 << t) != 0
    }

    /// Checks a target rank and that an access epoch is open to it; returns
    /// `None` for PROC_NULL.
    #[inline]
    fn check_target(&self, call: &'static str, target: i32) -> Result<Option<usize>> {
        let Some(t) = self.member(call, target)? else {
            return Ok(None);
        };
        let open = self.locked_by_bit(t) || self.open_to_all.load(Ordering::Acquire) || {
            let st = self.state.lock();
            let e = &st.epochs;
            e.fence
                || e.lock_all.is_some()
                || e.locks.contains_key(&t)
                || e.access.as_ref().is_some_and(|a| a.contains(&t))
        };
        if !open {
            return self.comm.fail(
                call,
                ErrorClass::RmaSync,
                format!("no access epoch is open to target {target} (MPI_Win_fence, MPI_Win_start or MPI_Win_lock first)"),
            );
        }
        Ok(Some(t))
    }

    /// Where a layout at displacement `disp` of target `t` starts, checked
    /// against its window when the origin knows it (all but dynamic windows).
    #[inline]
    fn locate(
        &self,
        call: &'static str,
        t: usize,
        disp: isize,
        blocks: &[(i64, u64)],
    ) -> Result<i64> {
        let m = self.members[t];
        if self.flavor == Flavor::Dynamic {
            return Ok(disp as i64);
        }
        let at = disp as i64 * m.disp_unit as i64;
        for &(o, l) in blocks {
            let start = at + o;
            if l > 0 && (start < 0 || start as u64 + l > m.size) {
                return self.comm.fail(
                    call,
                    ErrorClass::RmaRange,
                    format!(
                        "bytes [{start}, {}) of target {t}'s window of {} bytes",
                        start as u64 + l,
                        m.size
                    ),
                );
            }
        }
        Ok(at)
    }

    /// Target `t`'s memory if this process reaches it directly: its own
    /// ranks', and the node segment's.
    #[inline(always)]
    fn local(&self, t: usize) -> Option<&Target> {
        if self.members[t].local {
            self.shared.target(t)
        } else {
            self.node_targets[t].as_ref()
        }
    }

    fn fresh_tag(&self) -> i32 {
        wire::FIRST_REPLY_TAG + (self.next_tag.fetch_add(1, Ordering::Relaxed) & 0x3fff_ffff) as i32
    }

    /// Sends a data request to the agent of `t` in another process: the
    /// result's receive is posted first, then the header, then the data.
    /// Returns a handle on what completes the operation for its origin (the
    /// result's arrival, else the data's departure).
    ///
    /// # Safety
    /// `data` valid for `data_len` bytes and `result` for `result_len`, until
    /// the operation completes.
    #[allow(clippy::too_many_arguments)]
    unsafe fn send_request(
        &self,
        call: &'static str,
        t: usize,
        req: Request,
        data: Option<(*const u8, usize, Option<Vec<u8>>)>,
        result: Option<(*mut u8, usize)>,
        finish: Option<Finish>,
    ) -> Result<RawRequest> {
        let header = req.encode();
        let mut st = self.state.lock();
        let list = st.in_flight.entry(t).or_default();
        let mut handle = None;
        if let Some((into, len)) = result {
            // SAFETY: forwarded.
            let r = unsafe { raw::irecv(&self.replies, call, into, len, t as i32, wire::RESULT)? };
            handle = Some(r.share());
            list.push(InFlight {
                request: r,
                _keep: None,
                finish,
            });
        }
        // SAFETY: `header` is kept in the list until the send completed.
        let h = unsafe {
            raw::isend(
                &self.requests,
                call,
                header.as_ptr(),
                header.len(),
                t as i32,
                wire::HEADER,
                false,
            )?
        };
        list.push(InFlight {
            request: h,
            _keep: Some(header),
            finish: None,
        });
        if let Some((from, len, keep)) = data {
            // SAFETY: forwarded; a staged copy is kept with the send.
            let d = unsafe {
                raw::isend(&self.requests, call, from, len, t as i32, wire::DATA, false)?
            };
            if handle.is_none() {
                handle = Some(d.share());
            }
            list.push(InFlight {
                request: d,
                _keep: keep,
                finish: None,
            });
        }
        st.touched.insert(t);
        self.remote_pending.store(true, Ordering::Release);
        Ok(handle.unwrap_or_else(|| RawRequest::completed(Status::empty())))
    }

    /// Where `len` bytes at displacement `disp` of target `target` lie, when
    /// this process reaches them by stores and every check passes without a
    /// lock: the common case of MPI_Put and MPI_Get, kept small enough to
    /// inline into the fast paths of the C entry points. `None` sends the
    /// call the long way, which checks again and names what is wrong.
    #[inline(always)]
    fn direct_span(&self, target: i32, disp: isize, len: u64) -> Option<*mut u8> {
        let t = usize::try_from(target).ok()?;
        let m = self.members.get(t)?;
        if self.flavor == Flavor::Dynamic
            || !(self.locked_by_bit(t) || self.open_to_all.load(Ordering::Acquire))
        {
            return None;
        }
        let at = (disp as i64).checked_mul(m.disp_unit as i64)?;
        let end = (at as u64).checked_add(len)?;
        let tg = self.local(t)?;
        (at >= 0 && end <= m.size && end <= tg.size as u64).then(|| tg.addr(at, 0))
    }

    /// MPI_Put of `len` contiguous bytes in its common case (see
    /// [`Window::direct_span`]): true when done, false when the call must
    /// take [`Window::put`].
    ///
    /// # Safety
    /// `data` holds `len` bytes.
    #[inline(always)]
    pub unsafe fn put_direct(&self, data: *const u8, target: i32, disp: isize, len: usize) -> bool {
        let to = self.direct_span(target, disp, len as u64);
        // SAFETY: `to` holds `len` bytes of the target's window (checked);
        // `data` holds them (contract).
        to.map(|to| unsafe { copy_bytes(data, to, len) }).is_some()
    }

    /// MPI_Get of `len` contiguous bytes in its common case, as
    /// [`Window::put_direct`].
    ///
    /// # Safety
    /// `into` has room for `len` bytes.
    #[inline(always)]
    pub unsafe fn get_direct(&self, into: *mut u8, target: i32, disp: isize, len: usize) -> bool {
        let from = self.direct_span(target, disp, len as u64);
        // SAFETY: `from` holds `len` bytes of the target's window (checked);
        // `into` has room for them (contract).
        from.map(|from| unsafe { copy_bytes(from, into, len) })
            .is_some()
    }

    /// MPI_Put (and MPI_Rput): `data` (packed origin bytes) into target
    /// `target`'s layout `blocks` at displacement `disp`. `keep` holds a
    /// packed copy `data` points into, if any. `None`: complete already (a
    /// target this process reaches by stores; the small result keeps the
    /// common case free of a request written and read back).
    ///
    /// # Safety
    /// `data` valid for the blocks' bytes until the operation completes.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn put(
        &self,
        call: &'static str,
        data: *const u8,
        keep: Option<Vec<u8>>,
        target: i32,
        disp: isize,
        blocks: &[(i64, u64)],
    ) -> Result<Option<RawRequest>> {
        if let [(0, len)] = *blocks {
            // SAFETY: forwarded.
            if unsafe { self.put_direct(data, target, disp, len as usize) } {
                return Ok(None);
            }
        }
        let Some(t) = self.check_target(call, target)? else {
            return Ok(None);
        };
        let at = self.locate(call, t, disp, blocks)?;
        let len: u64 = blocks.iter().map(|b| b.1).sum();
        if len == 0 {
            return Ok(None);
        }
        if let Some(tg) = self.local(t) {
            self.check_local(call, tg, at, blocks)?;
            // SAFETY: checked layout; `data` holds `len` bytes (contract).
            unsafe { tg.scatter(at, blocks, std::slice::from_raw_parts(data, len as usize)) };
            return Ok(None);
        }
        let req = Request {
            at,
            len,
            blocks: blocks.to_vec(),
            ..Request::control(Verb::Put, 0)
        };
        // SAFETY: forwarded.
        unsafe { self.send_request(call, t, req, Some((data, len as usize, keep)), None, None) }
            .map(Some)
    }

    /// MPI_Get (and MPI_Rget): target `target`'s layout into `into` (packed);
    /// `finish` runs once the bytes are there (unpacking them).
    ///
    /// # Safety
    /// `into` valid for the blocks' bytes until the operation completes.
    pub unsafe fn get(
        &self,
        call: &'static str,
        into: *mut u8,
        target: i32,
        disp: isize,
        blocks: &[(i64, u64)],
        finish: Option<Finish>,
    ) -> Result<RawRequest> {
        if let ([(0, len)], None) = (blocks, &finish) {
            // SAFETY: forwarded.
            if unsafe { self.get_direct(into, target, disp, *len as usize) } {
                return Ok(RawRequest::completed(Status::empty()));
            }
        }
        let Some(t) = self.check_target(call, target)? else {
            if let Some(f) = finish {
                f();
            }
            return Ok(RawRequest::completed(Status::empty()));
        };
        let at = self.locate(call, t, disp, blocks)?;
        let len: u64 = blocks.iter().map(|b| b.1).sum();
        if len == 0 {
            if let Some(f) = finish {
                f();
            }
            return Ok(RawRequest::completed(Status::empty()));
        }
        if let Some(tg) = self.local(t) {
            self.check_local(call, tg, at, blocks)?;
            // SAFETY: checked layout; `into` holds `len` bytes (contract).
            unsafe {
                tg.gather(
                    at,
                    blocks,
                    std::slice::from_raw_parts_mut(into, len as usize),
                )
            };
            if let Some(f) = finish {
                f();
            }
            return Ok(RawRequest::completed(Status::empty()));
        }
        let req = Request {
            at,
            len,
            blocks: blocks.to_vec(),
            ..Request::control(Verb::Get, 0)
        };
        // SAFETY: forwarded.
        unsafe { self.send_request(call, t, req, None, Some((into, len as usize)), finish) }
    }

    /// MPI_Accumulate and MPI_Get_accumulate (with `result`): elements of
    /// `kind` (`elem` bytes each) combined into the target's layout by `op`.
    ///
    /// # Safety
    /// `data` (and `result`) valid for the blocks' bytes until the operation
    /// completes.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn accumulate(
        &self,
        call: &'static str,
        data: *const u8,
        keep: Option<Vec<u8>>,
        kind: Kind,
        elem: usize,
        op: &Op,
        target: i32,
        disp: isize,
        blocks: &[(i64, u64)],
        result: Option<(*mut u8, Option<Finish>)>,
    ) -> Result<RawRequest> {
        let Some(code) = wire::op_code(op) else {
            return self.comm.fail(
                call,
                ErrorClass::Op,
                "one-sided accumulates take predefined operations only (MPI-3.1 11.3.4)",
            );
        };
        if let Err((class, why)) = op.check(kind) {
            return self.comm.fail(call, class, why);
        }
        let Some(t) = self.check_target(call, target)? else {
            if let Some((_, Some(f))) = result {
                f();
            }
            return Ok(RawRequest::completed(Status::empty()));
        };
        let at = self.locate(call, t, disp, blocks)?;
        let len: u64 = blocks.iter().map(|b| b.1).sum();
        if len == 0 {
            if let Some((_, Some(f))) = result {
                f();
            }
            return Ok(RawRequest::completed(Status::empty()));
        }
        if let Some(tg) = self.local(t) {
            self.check_local(call, tg, at, blocks)?;
            // SAFETY: checked layout; the buffers hold `len` bytes (contract).
            unsafe {
                let data = std::slice::from_raw_parts(data, len as usize);
                match result {
                    Some((into, finish)) => {
                        let old = std::slice::from_raw_parts_mut(into, len as usize);
                        tg.accumulate(at, blocks, data, kind, op, Some(old));
                        if let Some(f) = finish {
                            f();
                        }
                    }
                    None => tg.accumulate(at, blocks, data, kind, op, None),
                }
            }
            return Ok(RawRequest::completed(Status::empty()));
        }
        let verb = if result.is_some() {
            Verb::GetAccumulate
        } else {
            Verb::Accumulate
        };
        let req = Request {
            op: code,
            kind,
            elem: elem as u32,
            at,
            len,
            blocks: blocks.to_vec(),
            ..Request::control(verb, 0)
        };
        let (res, finish) = match result {
            Some((into, f)) => (Some((into, len as usize)), f),
            None => (None, None),
        };
        // SAFETY: forwarded.
        unsafe { self.send_request(call, t, req, Some((data, len as usize, keep)), res, finish) }
    }

    /// MPI_Compare_and_swap of one element of `elem` bytes.
    ///
    /// # Safety
    /// The three buffers valid for `elem` bytes until return.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn compare_and_swap(
        &self,
        call: &'static str,
        new: *const u8,
        compare: *const u8,
        result: *mut u8,
        elem: usize,
        target: i32,
        disp: isize,
    ) -> Result<()> {
        let Some(t) = self.check_target(call, target)? else {
            return Ok(());
        };
        let blocks = [(0i64, elem as u64)];
        let at = self.locate(call, t, disp, &blocks)?;
        // SAFETY: `elem` bytes each (contract).
        let (new, compare) = unsafe {
            (
                std::slice::from_raw_parts(new, elem),
                std::slice::from_raw_parts(compare, elem),
            )
        };
        if let Some(tg) = self.local(t) {
            self.check_local(call, tg, at, &blocks)?;
            // SAFETY: checked element; `result` holds `elem` bytes.
            unsafe {
                tg.compare_and_swap(
                    at,
                    new,
                    compare,
                    std::slice::from_raw_parts_mut(result, elem),
                )
            };
            return Ok(());
        }
        let data = [new, compare].concat();
        let req = Request {
            elem: elem as u32,
            at,
            len: 2 * elem as u64,
            blocks: blocks.to_vec(),
            ..Request::control(Verb::CompareAndSwap, 0)
        };
        let p = data.as_ptr();
        // SAFETY: the data is kept with the send; `result` valid until the wait below.
        let r = unsafe {
            self.send_request(
                call,
                t,
                req,
                Some((p, 2 * elem, Some(data))),
                Some((result, elem)),
                None,
            )?
        };
        r.wait();
        Ok(())
    }

    /// Dynamic windows: the origin cannot know the target's regions, but a
    /// target in this process can be checked here.
    #[inline]
    fn check_local(
        &self,
        call: &'static str,
        tg: &Target,
        at: i64,
        blocks: &[(i64, u64)],
    ) -> Result<()> {
        match tg.check(at, blocks) {
            Ok(()) => Ok(()),
            Err(why) => self.comm.fail(call, ErrorClass::RmaRange, why),
        }
    }

    /// Waits for an acknowledgement (or grant) from `t` under `tag`.
    fn await_ack(&self, call: &'static str, t: usize, tag: i32) -> Result<()> {
        let mut buf = vec![0u8; 4096];
        // SAFETY: `buf` holds 4096 bytes.
        let st = unsafe {
            raw::recv(
                &self.replies,
                call,
                buf.as_mut_ptr(),
                buf.len(),
                t as i32,
                tag,
            )?
        };
        buf.truncate(st.bytes);
        match agent::acknowledged(&buf) {
            Ok(()) => Ok(()),
            Err((class, why)) => self.comm.fail(call, class, format!("at target {t}: {why}")),
        }
    }

    /// Sends a control request to `t`'s agent; returns the tag of its answer.
    fn control(&self, t: usize, verb: Verb) -> i32 {
        let tag = self.fresh_tag();
        agent::send(
            &self.requests,
            &Request::control(verb, tag).encode(),
            t as i32,
            wire::HEADER,
        );
        tag
    }

    /// Completes every operation to `targets` at their targets (`remote`) or
    /// at this origin only.
    #[inline]
    fn complete(&self, call: &'static str, targets: &[usize], remote: bool) -> Result<()> {
        if !self.remote_pending.load(Ordering::Acquire) {
            return Ok(());
        }
        self.complete_remote(call, targets, remote)
    }

    /// [`Window::complete`] with operations to other processes in flight.
    fn complete_remote(&self, call: &'static str, targets: &[usize], remote: bool) -> Result<()> {
        let (flushing, waiting) = {
            let mut st = self.state.lock();
            let mut flushing = Vec::new();
            let mut waiting = Vec::new();
            for &t in targets {
                if remote && st.touched.remove(&t) {
                    flushing.push(t);
                }
                if let Some(l) = st.in_flight.remove(&t) {
                    waiting.extend(l);
                }
            }
            let pending = !(st.in_flight.is_empty() && st.touched.is_empty());
            self.remote_pending.store(pending, Ordering::Release);
            (flushing, waiting)
        };
        let tags: Vec<(usize, i32)> = flushing
            .iter()
            .map(|&t| (t, self.control(t, Verb::Flush)))
            .collect();
        let mut result = Ok(());
        for (t, tag) in tags {
            let r = self.await_ack(call, t, tag);
            if result.is_ok() {
                result = r;
            }
        }
        for f in waiting {
            f.request.wait();
            if let Some(finish) = f.finish {
                finish();
            }
        }
        result
    }

    /// Changes the epochs, and publishes what the checks without the lock
    /// read.
    fn update_epochs(&self, f: impl FnOnce(&mut Epochs)) {
        let mut st = self.state.lock();
        f(&mut st.epochs);
        self.publish(&st.epochs);
    }

    /// Opens an access epoch by a lock or MPI_Win_start: a fence opens an
    /// epoch only for the RMA calls that follow it directly.
    fn open_epoch(&self, f: impl FnOnce(&mut Epochs)) {
        self.update_epochs(|e| {
            f(e);
            e.fence = false;
        });
    }

    /// Publishes whether an epoch is open to every target, and which of the
    /// first 64 targets are locked.
    fn publish(&self, e: &Epochs) {
        self.open_to_all
            .store(e.fence || e.lock_all.is_some(), Ordering::Release);
        let low = e
            .locks
            .0
            .iter()
            .filter(|(t, _)| *t < 64)
            .fold(0u64, |b, (t, _)| b | 1 << t);
        self.locked_low.store(low, Ordering::Release);
    }

    fn all_targets(&self) -> Vec<usize> {
        (0..self.members.len()).collect()
    }

    /// MPI_Win_flush / MPI_Win_flush_local (`remote` false).
    #[inline(always)]
    pub fn flush(&self, call: &'static str, target: i32, remote: bool) -> Result<()> {
        // Programs poll for a change of the window with flushes and syncs:
        // a poll lets the worker's other ranks run, or their writes never come.
        mpcrs_scheduler::yield_for_poll();
        if self.nothing_to_flush(target) {
            return Ok(());
        }
        self.flush_checked(call, target, remote)
    }

    /// The common case of a flush: a locked target and nothing sent to
    /// another process, so every operation completed when it was made.
    #[inline(always)]
    fn nothing_to_flush(&self, target: i32) -> bool {
        target >= 0
            && self.locked_by_bit(target as usize)
            && !self.remote_pending.load(Ordering::Acquire)
    }

    /// A flush of `target` that completes without switching ULTs (the fast
    /// path of the C entry points): nothing to flush, and no switch due for
    /// the caller's poll (see [`mpcrs_scheduler::poll_without_switch`]).
    /// False leaves the call to [`Window::flush`].
    #[inline(always)]
    pub fn flush_completes_here(&self, target: i32) -> bool {
        self.nothing_to_flush(target) && mpcrs_scheduler::poll_without_switch()
    }

    /// [`Window::flush`] beyond its common case.
    #[inline(never)]
    fn flush_checked(&self, call: &'static str, target: i32, remote: bool) -> Result<()> {
        let t = self.check_locked(call, target)?;
        match t {
            Some(t) => self.complete(call, &[t], remote),
            None => Ok(()),
        }
    }

    /// MPI_Win_flush_all / MPI_Win_flush_local_all.
    pub fn flush_all(&self, call: &'static str, remote: bool) -> Result<()> {
        mpcrs_scheduler::yield_for_poll();
        let locked = {
            let st = self.state.lock();
            st.epochs.lock_all.is_some() || !st.epochs.locks.is_empty()
        };
        if !locked {
            return self.sync_error(
                call,
                "no passive-target epoch is open (MPI_Win_lock or MPI_Win_lock_all first)",
            );
        }
        self.complete(call, &self.all_targets(), remote)
    }

    fn sync_error<T>(&self, call: &'static str, why: &str) -> Result<T> {
        self.comm.fail(call, ErrorClass::RmaSync, why)
    }

    /// A target of flush: locked (or under lock_all); `None` for PROC_NULL.
    #[inline]
    fn check_locked(&self, call: &'static str, target: i32) -> Result<Option<usize>> {
        let Some(t) = self.member(call, target)? else {
            return Ok(None);
        };
        let locked = self.locked_by_bit(t) || {
            let st = self.state.lock();
            st.epochs.lock_all.is_some() || st.epochs.locks.contains_key(&t)
        };
        if !locked {
            return self.sync_error(call, &format!("target {target} is not locked"));
        }
        Ok(Some(t))
    }

    /// MPI_Win_fence.
    pub fn fence(&self, call: &'static str, assert: i32) -> Result<()> {
        {
            let st = self.state.lock();
            let e = &st.epochs;
            if !e.locks.is_empty()
                || e.lock_all.is_some()
                || e.access.is_some()
                || e.exposure.is_some()
            {
                drop(st);
                return self.sync_error(call, "a lock or post/start epoch is open on the window");
            }
        }
        let r = self.complete(call, &self.all_targets(), true);
        raw::barrier(&self.comm);
        self.update_epochs(|e| e.fence = assert & MODE_NOSUCCEED == 0);
        r
    }

    /// MPI_Win_lock (`exclusive`) on `target`.
    pub fn lock(
        &self,
        call: &'static str,
        exclusive: bool,
        target: i32,
        assert: i32,
    ) -> Result<()> {
        let Some(t) = self.member(call, target)? else {
            return Ok(());
        };
        {
            let st = self.state.lock();
            let e = &st.epochs;
            if e.locks.contains_key(&t) || e.lock_all.is_some() {
                drop(st);
                return self.sync_error(
                    call,
                    &format!("target {target} is already locked by this rank"),
                );
            }
            if e.access.is_some() {
                drop(st);
                return self.sync_error(call, "a start epoch is open on the window");
            }
        }
        let nocheck = assert & MODE_NOCHECK != 0;
        if !nocheck {
            let verb = if exclusive {
                Verb::LockExclusive
            } else {
                Verb::LockShared
            };
            let tag = self.control(t, verb);
            self.await_ack(call, t, tag)?;
        }
        self.open_epoch(|e| e.locks.insert(t, nocheck));
        Ok(())
    }

    /// MPI_Win_unlock.
    pub fn unlock(&self, call: &'static str, target: i32) -> Result<()> {
        // Lock, operate, unlock is how programs poll a window: let the
        // worker's other ranks (and agents) run.
        mpcrs_scheduler::yield_for_poll();
        if target == PROC_NULL {
            return Ok(());
        }
        let t = match self.check_locked(call, target)? {
            Some(t) => t,
            None => return Ok(()),
        };
        let nocheck = {
            let st = self.state.lock();
            match st.epochs.locks.get(&t) {
                Some(&n) => n,
                None => {
                    drop(st);
                    return self.sync_error(call, &format!("target {target} was locked by MPI_Win_lock_all: unlock it with MPI_Win_unlock_all"));
                }
            }
        };
        let r = if nocheck {
            self.complete(call, &[t], true)
        } else {
            // The unlock's acknowledgement comes after every earlier
            // operation of this origin at the target.
            self.state.lock().touched.remove(&t);
            let tag = self.control(t, Verb::Unlock);
            let r = self.await_ack(call, t, tag);
            let w = self.complete(call, &[t], false);
            r.and(w)
        };
        self.update_epochs(|e| e.locks.remove(&t));
        r
    }

    /// MPI_Win_lock_all.
    pub fn lock_all(&self, call: &'static str, assert: i32) -> Result<()> {
        {
            let st = self.state.lock();
            let e = &st.epochs;
            if e.lock_all.is_some() || !e.locks.is_empty() || e.access.is_some() {
                drop(st);
                return self.sync_error(call, "another access epoch is open on the window");
            }
        }
        let nocheck = assert & MODE_NOCHECK != 0;
        if !nocheck {
            let tags: Vec<(usize, i32)> = self
                .all_targets()
                .into_iter()
                .map(|t| (t, self.control(t, Verb::LockShared)))
                .collect();
            for (t, tag) in tags {
                self.await_ack(call, t, tag)?;
            }
        }
        self.open_epoch(|e| e.lock_all = Some(nocheck));
        Ok(())
    }

    /// MPI_Win_unlock_all.
    pub fn unlock_all(&self, call: &'static str) -> Result<()> {
        mpcrs_scheduler::yield_for_poll();
        let nocheck = match self.state.lock().epochs.lock_all {
            Some(n) => n,
            None => return self.sync_error(call, "no MPI_Win_lock_all epoch is open"),
        };
        let r = if nocheck {
            self.complete(call, &self.all_targets(), true)
        } else {
            self.state.lock().touched.clear();
            let tags: Vec<(usize, i32)> = self
                .all_targets()
                .into_iter()
                .map(|t| (t, self.control(t, Verb::Unlock)))
                .collect();
            let mut r = Ok(());
            for (t, tag) in tags {
                let a = self.await_ack(call, t, tag);
                if r.is_ok() {
                    r = a;
                }
            }
            let w = self.complete(call, &self.all_targets(), false);
            r.and(w)
        };
        self.update_epochs(|e| e.lock_all = None);
        r
    }

    /// The members of `group` as ranks of the window.
    fn ranks_of(&self, call: &'static str, group: &Group) -> Result<Vec<usize>> {
        let all: Vec<i32> = (0..group.size() as i32).collect();
        let mine = self.comm.group();
        let ranks = group.translate_ranks(&all, &mine).unwrap_or_default();
        if ranks.iter().any(|&r| r < 0) {
            return self.comm.fail(
                call,
                ErrorClass::Group,
                "the group has members outside the window",
            );
        }
        Ok(ranks.into_iter().map(|r| r as usize).collect())
    }

    /// MPI_Win_post: exposes this member to the origins in `group`.
    pub fn post(&self, call: &'static str, group: &Group, assert: i32) -> Result<()> {
        let origins = self.ranks_of(call, group)?;
        {
            let mut st = self.state.lock();
            if st.epochs.exposure.is_some() {
                drop(st);
                return self.sync_error(call, "an exposure epoch is already open on the window");
            }
            st.epochs.exposure = Some((origins.clone(), vec![false; origins.len()]));
        }
        if assert & MODE_NOCHECK == 0 {
            for &o in &origins {
                agent::send(&self.replies, &[], o as i32, wire::POST);
            }
        }
        Ok(())
    }

    /// MPI_Win_start: an access epoch to the targets in `group`, once each
    /// has posted.
    pub fn start(&self, call: &'static str, group: &Group, assert: i32) -> Result<()> {
        let targets = self.ranks_of(call, group)?;
        {
            let st = self.state.lock();
            let e = &st.epochs;
            if e.access.is_some() || e.lock_all.is_some() || !e.locks.is_empty() {
                drop(st);
                return self.sync_error(call, "an access epoch is already open on the window");
            }
        }
        if assert & MODE_NOCHECK == 0 {
            for &t in &targets {
                // SAFETY: an empty notice into no bytes.
                unsafe {
                    raw::recv(
                        &self.replies,
                        call,
                        std::ptr::null_mut(),
                        0,
                        t as i32,
                        wire::POST,
                    )?
                };
            }
        }
        self.open_epoch(|e| e.access = Some(targets));
        Ok(())
    }

    /// MPI_Win_complete: ends the access epoch of MPI_Win_start.
    pub fn complete_access(&self, call: &'static str) -> Result<()> {
        let Some(targets) = self.state.lock().epochs.access.take() else {
            return self.sync_error(call, "no MPI_Win_start epoch is open");
        };
        let r = self.complete(call, &targets, true);
        for &t in &targets {
            agent::send(&self.replies, &[], t as i32, wire::COMPLETE);
        }
        r
    }

    /// MPI_Win_wait (`blocking`) / MPI_Win_test: whether the exposure epoch
    /// of MPI_Win_post ended (every origin completed).
    pub fn wait_exposure(&self, call: &'static str, blocking: bool) -> Result<bool> {
        let Some((origins, mut done)) = self.state.lock().epochs.exposure.take() else {
            return self.sync_error(call, "no MPI_Win_post epoch is open");
        };
        for (i, &o) in origins.iter().enumerate() {
            if done[i] {
                continue;
            }
            if !blocking
                && raw::probe(&self.replies, call, o as i32, wire::COMPLETE, false)?.is_none()
            {
                continue;
            }
            // SAFETY: an empty notice into no bytes.
            unsafe {
                raw::recv(
                    &self.replies,
                    call,
                    std::ptr::null_mut(),
                    0,
                    o as i32,
                    wire::COMPLETE,
                )?
            };
            done[i] = true;
        }
        if done.iter().all(|&d| d) {
            return Ok(true);
        }
        self.state.lock().epochs.exposure = Some((origins, done));
        // A test loop is a wait: let the worker's other ranks run.
        mpcrs_scheduler::yield_for_poll();
        Ok(false)
    }

    /// MPI_Win_sync: the window's memory as this member sees it agrees with
    /// what others wrote (one address space: a memory fence).
    pub fn sync(&self) {
        mpcrs_scheduler::yield_for_poll();
        std::sync::atomic::fence(Ordering::SeqCst);
    }
}

/// Copies `len` bytes that may overlap, as `ptr::copy`; up to 16 bytes by
/// two loads and two stores of the widest size that fits (the 8-byte puts
/// and gets of latency loops), without a call to memmove.
///
/// # Safety
/// As `std::ptr::copy`.
#[inline(always)]
unsafe fn copy_bytes(from: *const u8, to: *mut u8, len: usize) {
    // SAFETY: forwarded; the sizes fit `len`.
    unsafe {
        match len {
            8..=16 => copy_ends::<u64>(from, to, len),
            4..=7 => copy_ends::<u32>(from, to, len),
            _ => std::ptr::copy(from, to, len),
        }
    }
}

/// [`copy_bytes`] of `size_of::<T>()` to twice that many bytes: the first
/// and the last `T` of the range, which overlap in between.
///
/// # Safety
/// As `std::ptr::copy`, with `len` from `size_of::<T>()` to twice that.
#[inline(always)]
unsafe fn copy_ends<T>(from: *const u8, to: *mut u8, len: usize) {
    let w = std::mem::size_of::<T>();
    // SAFETY: both accesses lie in [0, len) of each buffer (the caller's
    // guarantee); both loads happen before either store, so overlapping
    // buffers copy as memmove does.
    unsafe {
        let (a, b) = (
            from.cast::<T>().read_unaligned(),
            from.add(len - w).cast::<T>().read_unaligned(),
        );
        to.cast::<T>().write_unaligned(a);
        to.add(len - w).cast::<T>().write_unaligned(b);
    }
}

#[cfg(test)]
mod tests {
    use super::copy_bytes;

    /// Every length up to past the inline sizes, into a separate buffer and
    /// overlapping forwards and backwards, copies as memmove does.
    #[test]
    fn copy_bytes_copies_as_memmove_does() {
        for len in 0..=24usize {
            for shift in [0usize, 1, 3, 8] {
                let src: Vec<u8> = (0..64u8).collect();
                let mut dst = vec![0xaa; 64];
                // SAFETY: both buffers hold 64 bytes, past `shift + len`.
                unsafe { copy_bytes(src.as_ptr().add(shift), dst.as_mut_ptr(), len) };
                assert_eq!(
                    &dst[..len],
                    &src[shift..shift + len],
                    "len {len} shift {shift}"
                );
                assert!(
                    dst[len..].iter().all(|&b| b == 0xaa),
                    "len {len}: wrote past the end"
                );
                for forward in [true, false] {
                    let mut buf: Vec<u8> = (0..64u8).collect();
                    let mut want = buf.clone();
                    let (from, to) = if forward { (0, shift) } else { (shift, 0) };
                    want.copy_within(from..from + len, to);
                    let p = buf.as_mut_ptr();
                    // SAFETY: both ranges lie inside the 64-byte buffer.
                    unsafe { copy_bytes(p.add(from), p.add(to), len) };
                    assert_eq!(
                        buf, want,
                        "overlapping len {len} shift {shift} forward {forward}"
                    );
                }
            }
        }
    }
}
