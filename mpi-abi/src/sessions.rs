//! MPI-4 sessions (MPI-4.0 section 11.3): MPI_Session_init and _finalize,
//! the process sets a session shows ("mpi://WORLD" and "mpi://SELF"), groups
//! made from them, and communicators made from groups with a string tag
//! (MPI_Comm_create_from_group, MPI_Intercomm_create_from_groups).
//!
//! Sessions and the world model coexist: a rank may open sessions with or
//! without MPI_Init, before it or after MPI_Finalize; while one is open the
//! communicators made from its groups can be used. A communicator is made
//! from a group without a message: its members derive the same context from
//! the tag, the group and how many times they made one with that tag and
//! group before (MPI lets them do so in the same order only).

use std::collections::HashMap;
use std::ffi::CStr;
use std::os::raw::{c_char, c_int};

use mpcrs::{ErrorClass, ErrorHandler};

use crate::comm::{store_group, store_new};
use crate::export::{mpi_fn, tri};
use crate::handles::*;
use crate::info::Entries;

#[allow(non_camel_case_types)]
pub type MPI_Session = c_int;
pub const MPI_SESSION_NULL: MPI_Session = 0x3800_0000;
/// Handles of sessions: MPICH's kind bits for sessions, then an index.
const SESSION_USER: MPI_Session = 0xb800_0000u32 as c_int;
const MPI_MAX_PSET_NAME_LEN: usize = 256;
const MPI_MAX_STRINGTAG_LEN: usize = 256;

/// The process sets every session shows, by their names (compared without
/// regard to case, as MPI's URIs).
const PSETS: [&str; 2] = ["mpi://WORLD", "mpi://SELF"];

const THREAD_LEVELS: [&str; 4] = [
    "MPI_THREAD_SINGLE",
    "MPI_THREAD_FUNNELED",
    "MPI_THREAD_SERIALIZED",
    "MPI_THREAD_MULTIPLE",
];

/// An open session.
#[derive(Clone)]
struct Session {
    /// The thread level it provides (MPI_THREAD_*).
    thread_level: c_int,
    /// Its error handler: MPI_ERRORS_RETURN returns codes, others end the job.
    errhandler: MPI_Errhandler,
}

/// One rank's sessions, and its count of communicators made from groups per
/// (string tag, group).
#[derive(Default)]
pub(crate) struct Table {
    sessions: Vec<Option<Session>>,
    creations: HashMap<(String, Vec<i32>), u64>,
}

impl Table {
    /// Whether a session is open: MPI may be used without MPI_Init.
    pub(crate) fn any_open(&self) -> bool {
        self.sessions.iter().any(|s| s.is_some())
    }

    fn get(&self, h: MPI_Session) -> Option<Session> {
        if h & !INDEX_MASK != SESSION_USER {
            return None;
        }
        self.sessions
            .get((h & INDEX_MASK) as usize)
            .cloned()
            .flatten()
    }
}

/// The error handler of session `h` (`None`: no such session).
pub(crate) fn errhandler_of(h: MPI_Session) -> Option<MPI_Errhandler> {
    rank_state()?.sessions.get(h).map(|s| s.errhandler)
}

/// Sets the error handler of session `h`; `false` if there is no such session.
pub(crate) fn set_errhandler(h: MPI_Session, eh: MPI_Errhandler) -> bool {
    let Some(mut st) = rank_state() else {
        return false;
    };
    if st.sessions.get(h).is_none() {
        return false;
    }
    match st.sessions.sessions.get_mut((h & INDEX_MASK) as usize) {
        Some(Some(s)) => {
            s.errhandler = eh;
            true
        }
        _ => false,
    }
}

/// Raises an error of a session call under `errhandler`: its code under
/// MPI_ERRORS_RETURN, the end of the job otherwise (naming call and rank).
pub(crate) fn raise(
    errhandler: MPI_Errhandler,
    call: &'static str,
    class: ErrorClass,
    detail: String,
) -> c_int {
    let handler = if errhandler == MPI_ERRORS_RETURN {
        ErrorHandler::Return
    } else {
        ErrorHandler::Fatal
    };
    let rank = mpcrs::current_rank().unwrap_or(-1);
    let e = mpcrs::Error::new(class, call, rank, detail);
    match handler.handle::<()>(Err(e)) {
        Ok(()) => MPI_SUCCESS,
        Err(e) => code(&e),
    }
}

/// Raises an error of a call on session `h` under its handler `errhandler`:
/// a user handler (MPI_Session_create_errhandler) is called with the
/// session's handle and the code, which the call then returns.
fn raise_on(
    h: MPI_Session,
    errhandler: MPI_Errhandler,
    call: &'static str,
    class: ErrorClass,
    detail: String,
) -> c_int {
    let mut handle = h;
    let at: *mut MPI_Session = &mut handle;
    match crate::errhandler::call_with(errhandler, at.cast(), class as c_int) {
        Some(code) => code,
        None => raise(errhandler, call, class, detail),
    }
}

/// The session `h`, or the error for an invalid handle (fatal: there is no
/// session whose handler could say otherwise).
fn session(call: &'static str, h: MPI_Session) -> Result<Session, c_int> {
    match rank_state().and_then(|st| st.sessions.get(h)) {
        Some(s) => Ok(s),
        None => Err(raise(
            MPI_ERRORS_ARE_FATAL,
            call,
            ErrorClass::Session,
            format!("invalid session handle {h:#x}"),
        )),
    }
}

/// # Safety
/// `p` is a NUL-terminated string.
unsafe fn text(p: *const c_char) -> String {
    // SAFETY: by contract.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// The group of process set `name`, if there is one.
fn pset_group(name: &str) -> Option<mpcrs::Group> {
    let world = rank_state()?.world()?;
    if name.eq_ignore_ascii_case(PSETS[0]) {
        Some(world.group())
    } else if name.eq_ignore_ascii_case(PSETS[1]) {
        Some(mpcrs::Group::from_world_ranks(vec![world.world_rank()]))
    } else {
        None
    }
}

/// A string tag argument, checked.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
unsafe fn tag_arg(p: *const c_char) -> Result<String, String> {
    if p.is_null() {
        return Err("the string tag is NULL".into());
    }
    // SAFETY: by contract.
    let t = unsafe { text(p) };
    if t.len() >= MPI_MAX_STRINGTAG_LEN {
        return Err(format!(
            "the string tag has {} characters, more than MPI_MAX_STRINGTAG_LEN - 1",
            t.len()
        ));
    }
    Ok(t)
}

/// The communicator of `group` made with string tag `tag` (every member
/// calls this with the same tag, in the same order for one tag and group).
fn from_group(tag: &str, group: &mpcrs::Group) -> mpcrs::Result<mpcrs::Communicator> {
    let (world, n) = {
        let mut st = rank_state().expect("inside a rank");
        let world = st.world().expect("world installed before main");
        let count = st
            .sessions
            .creations
            .entry((tag.to_string(), group.members().to_vec()))
            .or_insert(0);
        let n = *count;
        *count += 1;
        (world, n)
    };
    let mut key: Vec<u64> = tag.bytes().map(u64::from).collect();
    key.push(u64::MAX);
    key.push(n);
    world.from_group(group, &key)
}

/// Stores the new communicator `c` with error handler `errhandler`.
fn store_with_errhandler(
    c: mpcrs::Communicator,
    errhandler: MPI_Errhandler,
    out: *mut MPI_Comm,
) -> c_int {
    store_new(Some(c), out);
    // SAFETY: just written.
    let h = unsafe { *out };
    // SAFETY: a communicator just stored and a handler handle of the program.
    unsafe { crate::env::PMPI_Comm_set_errhandler(h, errhandler) }
}

/// The group handle `h`, or the error raised under `errhandler`.
fn group_of(
    call: &'static str,
    h: c_int,
    errhandler: MPI_Errhandler,
) -> Result<mpcrs::Group, c_int> {
    rank_state().and_then(|st| st.group(h)).ok_or_else(|| {
        raise(
            errhandler,
            call,
            ErrorClass::Group,
            format!("invalid group handle {h:#x}"),
        )
    })
}

mpi_fn! {
    fn Session_init(info: c_int, errhandler: MPI_Errhandler, session: *mut MPI_Session) -> c_int {
        let call = "MPI_Session_init";
        let Some(hints) = crate::info::info_entries(info) else {
            return raise(errhandler, call, ErrorClass::Info, format!("invalid info handle {info:#x}"));
        };
        // Every level is provided (see MPI_Init_thread); without a request,
        // the level the process runs at.
        let level = match hints.get("thread_level") {
            Some(v) => match THREAD_LEVELS.iter().position(|l| l.eq_ignore_ascii_case(v.trim())) {
                Some(l) => l as c_int,
                None => return raise(errhandler, call, ErrorClass::Arg, format!("thread_level {v:?} is not an MPI thread level")),
            },
            None => {
                let mut p = MPI_THREAD_SINGLE;
                // SAFETY: a writable int.
                unsafe { crate::env::PMPI_Query_thread(&mut p) };
                p
            }
        };
        if level == MPI_THREAD_MULTIPLE {
            mpcrs::raw::enable_thread_multiple();
        }
        let Some(mut st) = rank_state() else {
            mpcrs_settings::report!(error, "mpcrs: {call} called outside an MPI rank: start the program with mpcrs-run");
            mpcrs::abort_job(mpcrs::FATAL_EXIT_CODE);
        };
        let s = Some(Session { thread_level: level, errhandler });
        let i = match st.sessions.sessions.iter().position(|s| s.is_none()) {
            Some(i) => {
                st.sessions.sessions[i] = s;
                i
            }
            None => {
                st.sessions.sessions.push(s);
                st.sessions.sessions.len() - 1
            }
        };
        // SAFETY: writable by contract.
        unsafe { *session = SESSION_USER | i as c_int };
        MPI_SUCCESS
    }

    fn Session_finalize(session: *mut MPI_Session) -> c_int {
        let call = "MPI_Session_finalize";
        // SAFETY: readable by contract.
        let h = unsafe { *session };
        tri!(self::session(call, h));
        rank_state().expect("inside a rank").sessions.sessions[(h & INDEX_MASK) as usize] = None;
        // SAFETY: writable by contract.
        unsafe { *session = MPI_SESSION_NULL };
        MPI_SUCCESS
    }

    fn Session_get_info(session: MPI_Session, info_used: *mut c_int) -> c_int {
        let s = tri!(self::session("MPI_Session_get_info", session));
        let mut e = Entries::default();
        e.set("thread_level".into(), THREAD_LEVELS[s.thread_level as usize].into());
        let Some(h) = crate::info::new_info(e) else { return ErrorClass::Other as c_int };
        // SAFETY: writable by contract.
        unsafe { *info_used = h };
        MPI_SUCCESS
    }

    fn Session_get_num_psets(session: MPI_Session, _info: c_int, npset_names: *mut c_int) -> c_int {
        tri!(self::session("MPI_Session_get_num_psets", session));
        // SAFETY: writable by contract.
        unsafe { *npset_names = PSETS.len() as c_int };
        MPI_SUCCESS
    }

    fn Session_get_nth_pset(session: MPI_Session, _info: c_int, n: c_int, pset_len: *mut c_int, pset_name: *mut c_char) -> c_int {
        let call = "MPI_Session_get_nth_pset";
        let s = tri!(self::session(call, session));
        let Some(name) = usize::try_from(n).ok().and_then(|n| PSETS.get(n)) else {
            return raise_on(session, s.errhandler, call, ErrorClass::Arg, format!("there are {} process sets, not {}", PSETS.len(), n.max(0) + 1));
        };
        // SAFETY: `pset_len` readable and writable, `pset_name` holds
        // `*pset_len` bytes, by contract; a length of 0 only asks the size.
        unsafe {
            let cap = (*pset_len).max(0) as usize;
            if cap > 0 && !pset_name.is_null() {
                crate::env::write_cstr(name, pset_name, cap.min(MPI_MAX_PSET_NAME_LEN), std::ptr::null_mut());
            }
            *pset_len = name.len() as c_int + 1;
        }
        MPI_SUCCESS
    }

    fn Session_get_pset_info(session: MPI_Session, pset_name: *const c_char, info: *mut c_int) -> c_int {
        let call = "MPI_Session_get_pset_info";
        let s = tri!(self::session(call, session));
        // SAFETY: a NUL-terminated string by contract.
        let name = unsafe { text(pset_name) };
        let Some(g) = pset_group(&name) else {
            return raise_on(session, s.errhandler, call, ErrorClass::Arg, format!("no process set {name:?}"));
        };
        let mut e = Entries::default();
        e.set("mpi_size".into(), g.size().to_string());
        let Some(h) = crate::info::new_info(e) else { return ErrorClass::Other as c_int };
        // SAFETY: writable by contract.
        unsafe { *info = h };
        MPI_SUCCESS
    }

    fn Group_from_session_pset(session: MPI_Session, pset_name: *const c_char, newgroup: *mut c_int) -> c_int {
        let call = "MPI_Group_from_session_pset";
        let s = tri!(self::session(call, session));
        // SAFETY: a NUL-terminated string by contract.
        let name = unsafe { text(pset_name) };
        match pset_group(&name) {
            Some(g) => store_group(g, newgroup),
            None => raise_on(session, s.errhandler, call, ErrorClass::Arg, format!("no process set {name:?}")),
        }
    }

    fn Comm_create_from_group(group: c_int, stringtag: *const c_char, info: c_int, errhandler: MPI_Errhandler, newcomm: *mut MPI_Comm) -> c_int {
        let call = "MPI_Comm_create_from_group";
        let g = tri!(group_of(call, group, errhandler));
        // SAFETY: NULL or a NUL-terminated string by contract.
        let tag = match unsafe { tag_arg(stringtag) } {
            Ok(t) => t,
            Err(why) => return raise(errhandler, call, ErrorClass::Arg, why),
        };
        if crate::info::info_entries(info).is_none() {
            return raise(errhandler, call, ErrorClass::Info, format!("invalid info handle {info:#x}"));
        }
        if g.size() == 0 {
            // SAFETY: writable by contract.
            unsafe { *newcomm = MPI_COMM_NULL };
            return MPI_SUCCESS;
        }
        match from_group(&tag, &g) {
            Ok(c) => store_with_errhandler(c, errhandler, newcomm),
            Err(e) => raise(errhandler, call, e.class, e.detail),
        }
    }

    fn Intercomm_create_from_groups(local_group: c_int, local_leader: c_int, remote_group: c_int, remote_leader: c_int, stringtag: *const c_char, info: c_int, errhandler: MPI_Errhandler, newintercomm: *mut MPI_Comm) -> c_int {
        let call = "MPI_Intercomm_create_from_groups";
        let local = tri!(group_of(call, local_group, errhandler));
        let remote = tri!(group_of(call, remote_group, errhandler));
        // SAFETY: NULL or a NUL-terminated string by contract.
        let tag = match unsafe { tag_arg(stringtag) } {
            Ok(t) => t,
            Err(why) => return raise(errhandler, call, ErrorClass::Arg, why),
        };
        if crate::info::info_entries(info).is_none() {
            return raise(errhandler, call, ErrorClass::Info, format!("invalid info handle {info:#x}"));
        }
        let leader = |g: &mpcrs::Group, r: c_int, which: &str| {
            usize::try_from(r).ok().and_then(|i| g.members().get(i).copied()).ok_or_else(|| {
                raise(errhandler, call, ErrorClass::Rank, format!("{which} leader {r} is not a rank of a group of {}", g.size()))
            })
        };
        let lw = tri!(leader(&local, local_leader, "local"));
        let rw = tri!(leader(&remote, remote_leader, "remote"));
        if remote.members().iter().any(|w| local.rank_of_world(*w).is_some()) {
            return raise(errhandler, call, ErrorClass::Group, "the local and remote groups overlap".into());
        }
        // The local group's communicator; the two leaders talk on their own
        // pair's (lower world rank first, so both sides make the same).
        let made = from_group(&format!("{tag}\u{0}local"), &local).and_then(|lc| {
            let me = lc.world_rank();
            let peer = if me == lw {
                let pair = mpcrs::Group::from_world_ranks(vec![lw.min(rw), lw.max(rw)]);
                Some(from_group(&format!("{tag}\u{0}leaders"), &pair)?)
            } else {
                None
            };
            let remote_in_peer = (rw > lw) as c_int;
            mpcrs::raw::intercomm_create(&lc, local_leader, peer.as_ref(), remote_in_peer, 0)
        });
        match made {
            Ok(c) => store_with_errhandler(c, errhandler, newintercomm),
            Err(e) => raise(errhandler, call, e.class, e.detail),
        }
    }
}
