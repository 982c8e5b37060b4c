//! What each rank of this process waits for: one slot per rank, written only
//! by the rank itself (plain stores on its own cache line: a wait costs no
//! locked instruction), read by the deadlock check.

use std::sync::atomic::{AtomicI32, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// What a rank waits for, as the wait that marks it knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wait {
    /// A message from `source` (a rank of the communicator, or any) with `tag`.
    Message { context: u64, source: i32, tag: i32 },
    /// A request to finish: a send's or a receive's, when known.
    Request(Option<Operation>),
    /// One of several requests (the first unfinished one, when known).
    Requests(Option<Operation>),
    /// The other members of a collective on the communicator of `context`.
    Collective { context: u64 },
}

/// What a request does, for the report (see `Completion::describe`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Operation {
    pub(crate) sending: bool,
    pub(crate) context: u64,
    /// The destination of a send, the source of a receive.
    pub(crate) peer: i32,
    pub(crate) tag: i32,
}

const RUNNING: u8 = 0;
const WAITING: u8 = 1;
const FINISHED: u8 = 2;

const KIND_MESSAGE: u8 = 0;
const KIND_REQUEST: u8 = 1;
const KIND_REQUESTS: u8 = 2;
const KIND_COLLECTIVE: u8 = 3;
const KIND_SEND: u8 = 4;
const KIND_RECEIVE: u8 = 5;
const KIND_SENDS: u8 = 6;
const KIND_RECEIVES: u8 = 7;

/// One rank's slot, alone on its cache line.
#[repr(align(128))]
#[derive(Default)]
struct Slot {
    state: AtomicU8,
    kind: AtomicU8,
    /// Transitions so far: the check sees a rank that woke and waits again.
    changes: AtomicU64,
    context: AtomicU64,
    source: AtomicI32,
    tag: AtomicI32,
    /// The MPI call the rank is in (the C ABI's note; 0: none known).
    call: AtomicUsize,
    /// Who waits (the rank's ULT, or a thread acting for it): a wait counts
    /// only while it is parked. A rank woken but given no CPU yet is not
    /// deadlocked, however long its worker waits for one.
    waiter: std::sync::Mutex<Option<mpcrs_scheduler::Unparker>>,
}

/// The slots of this process's ranks.
pub(crate) struct RankWaits {
    first: usize,
    slots: Box<[Slot]>,
}

static WAITS: OnceLock<RankWaits> = OnceLock::new();

/// Makes the slots of world ranks `local` (once per process).
pub(crate) fn install(local: std::ops::Range<usize>) {
    let _ = WAITS.set(RankWaits {
        first: local.start,
        slots: (0..local.len()).map(|_| Slot::default()).collect(),
    });
}

/// The slots, once installed.
pub(crate) fn installed() -> Option<&'static RankWaits> {
    WAITS.get()
}

/// The calling rank's slot (none for helpers, agents and foreign threads,
/// whose waits do not count).
fn own_slot() -> Option<&'static Slot> {
    let word = mpcrs_scheduler::ult_local_of_ult()?;
    if crate::process::is_agent_word(word) {
        return None;
    }
    let rank = crate::process::rank_of_ult_word(word)? as usize;
    let w = WAITS.get()?;
    w.slots.get(rank.checked_sub(w.first)?)
}

/// Marks the calling rank as waiting for `what` until the mark is dropped. A
/// wait inside another keeps the outer one's description.
pub(crate) fn waiting(what: Wait) -> Option<Mark> {
    let slot = own_slot()?;
    if slot.state.load(Ordering::Relaxed) != RUNNING {
        return None;
    }
    let (kind, context, source, tag) = match what {
        Wait::Message {
            context,
            source,
            tag,
        } => (KIND_MESSAGE, context, source, tag),
        Wait::Request(None) => (KIND_REQUEST, 0, 0, 0),
        Wait::Requests(None) => (KIND_REQUESTS, 0, 0, 0),
        Wait::Request(Some(op)) | Wait::Requests(Some(op)) => {
            let kind = match (matches!(what, Wait::Request(_)), op.sending) {
                (true, true) => KIND_SEND,
                (true, false) => KIND_RECEIVE,
                (false, true) => KIND_SENDS,
                (false, false) => KIND_RECEIVES,
            };
            (kind, op.context, op.peer, op.tag)
        }
        Wait::Collective { context } => (KIND_COLLECTIVE, context, 0, 0),
    };
    slot.kind.store(kind, Ordering::Relaxed);
    slot.context.store(context, Ordering::Relaxed);
    slot.source.store(source, Ordering::Relaxed);
    slot.tag.store(tag, Ordering::Relaxed);
    slot.call
        .store(mpcrs_scheduler::ult_note(), Ordering::Relaxed);
    *slot.waiter.lock().unwrap() = Some(mpcrs_scheduler::current());
    bump(slot);
    // Release: the description is in place before the state says so.
    slot.state.store(WAITING, Ordering::Release);
    Some(Mark(slot))
}

impl Slot {
    /// Whether its waiter is parked (not yet parked, or woken and not run
    /// again, is not).
    fn is_parked(&self) -> bool {
        self.waiter
            .lock()
            .unwrap()
            .as_ref()
            .is_none_or(mpcrs_scheduler::Unparker::is_parked)
    }
}

/// Counts a transition of `slot` (only its rank writes it).
fn bump(slot: &Slot) {
    slot.changes
        .store(slot.changes.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
}

/// A rank's wait, until dropped.
pub(crate) struct Mark(&'static Slot);

impl Drop for Mark {
    fn drop(&mut self) {
        bump(self.0);
        self.0.state.store(RUNNING, Ordering::Release);
    }
}

/// Marks the calling rank as finished: its main returned, it sends nothing
/// more.
pub(crate) fn finished() {
    if let Some(slot) = own_slot() {
        bump(slot);
        slot.state.store(FINISHED, Ordering::Release);
    }
}

/// What this process's ranks do, summed up for the check.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Summary {
    pub(crate) ranks: usize,
    pub(crate) waiting: usize,
    pub(crate) finished: usize,
    /// The sum of every rank's transitions.
    pub(crate) changes: u64,
}

impl RankWaits {
    pub(crate) fn summary(&self) -> Summary {
        let mut s = Summary {
            ranks: self.slots.len(),
            ..Summary::default()
        };
        for slot in self.slots.iter() {
            // Changes first: a rank that moves between the two reads shows
            // in the next look's count.
            s.changes = s.changes.wrapping_add(slot.changes.load(Ordering::Acquire));
            match slot.state.load(Ordering::Acquire) {
                WAITING if slot.is_parked() => s.waiting += 1,
                FINISHED => s.finished += 1,
                _ => {}
            }
        }
        s
    }

    /// One line per rank of this process: the call it is in and what it
    /// waits for.
    pub(crate) fn describe(&self) -> Vec<String> {
        self.slots
            .iter()
            .enumerate()
            .map(|(i, slot)| {
                let rank = self.first + i;
                match slot.state.load(Ordering::Acquire) {
                    FINISHED => format!("rank {rank}: finished (returned from main)"),
                    RUNNING => format!("rank {rank}: running"),
                    _ => format!("rank {rank}: {}", describe_wait(slot)),
                }
            })
            .collect()
    }
}

fn describe_wait(slot: &Slot) -> String {
    let call = match slot.call.load(Ordering::Relaxed) {
        0 => String::new(),
        // SAFETY: a nonzero note is the address of a `&'static str` (see
        // `CallNote`).
        p => format!("in {} ", unsafe { *(p as *const &'static str) }),
    };
    let comm = communicator_name(slot.context.load(Ordering::Relaxed));
    let peer = match slot.source.load(Ordering::Relaxed) {
        crate::consts::ANY_SOURCE => "any rank".to_string(),
        s => format!("rank {s}"),
    };
    let tag = match slot.tag.load(Ordering::Relaxed) {
        crate::consts::ANY_TAG => "any tag".to_string(),
        t => format!("tag {t}"),
    };
    let what = match slot.kind.load(Ordering::Relaxed) {
        KIND_MESSAGE => format!("waits for a message from {peer} with {tag} on {comm}"),
        KIND_SEND => format!("waits for its send to {peer} with {tag} on {comm} to finish"),
        KIND_RECEIVE => {
            format!("waits for its receive from {peer} with {tag} on {comm} to finish")
        }
        KIND_SENDS => format!(
            "waits for its requests to finish, among them a send to {peer} with {tag} on {comm}"
        ),
        KIND_RECEIVES => format!(
            "waits for its requests to finish, among them a receive from {peer} with {tag} on {comm}"
        ),
        KIND_REQUEST => "waits for a request to finish".to_string(),
        KIND_REQUESTS => "waits for one of several requests to finish".to_string(),
        _ => format!("waits for the other members of a collective on {comm}"),
    };
    format!("{call}{what}")
}

/// Names given to communicators of this process (MPI_Comm_set_name), by
/// context: the report names a communicator as the program does. Written only
/// when a program names one, read only by the report.
static NAMES: std::sync::Mutex<Vec<(u64, String)>> = std::sync::Mutex::new(Vec::new());

/// Records that the communicator of `context` is called `name` (the latest
/// name given by any of its ranks here wins).
pub(crate) fn name_communicator(context: u64, name: &str) {
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    match names.iter_mut().find(|(c, _)| *c == context) {
        Some(entry) => entry.1 = name.to_string(),
        None => names.push((context, name.to_string())),
    }
}

/// How the report names the communicator of `context`.
fn communicator_name(context: u64) -> String {
    if context == 0 {
        return "MPI_COMM_WORLD".to_string();
    }
    let names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    match names.iter().find(|(c, n)| *c == context && !n.is_empty()) {
        Some((_, name)) => format!("{name} (context {context})"),
        None => format!("the communicator of context {context}"),
    }
}

/// Whether a thread that is no rank's own (a thread the program started,
/// calling MPI for its rank) ever made an MPI call here: such a thread may
/// compute and then send while every rank waits, which the check cannot see,
/// so the process never counts as quiet.
static FOREIGN_CALLERS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// See [`FOREIGN_CALLERS`].
pub(crate) fn foreign_callers() -> bool {
    FOREIGN_CALLERS.load(Ordering::Relaxed)
}

/// The MPI call the calling thread of a rank is in, noted by the C ABI's
/// entry points (the outermost one: calls made inside another keep its
/// name), for the deadlock report.
pub struct CallNote(Option<mpcrs_scheduler::NoteCell>);

impl CallNote {
    /// Notes `name` (a static holding the call's name) for `caller` unless a
    /// call is noted already: no locked instruction.
    #[inline]
    pub fn enter(caller: &mpcrs_scheduler::Caller, name: &'static &'static str) -> CallNote {
        let cell = caller.note_unless_noted(name as *const &'static str as usize);
        if !caller.in_ult() && !FOREIGN_CALLERS.load(Ordering::Relaxed) {
            FOREIGN_CALLERS.store(true, Ordering::Relaxed);
        }
        CallNote(cell)
    }
}

impl Drop for CallNote {
    #[inline]
    fn drop(&mut self) {
        if let Some(cell) = self.0.take() {
            cell.clear();
        }
    }
}
