//! The commits of this process's ranks on their way to where they are kept.
//! A rank's commit stages its change and returns; a helper task (one at a
//! time per process) sends the staged changes in order to the rank's
//! service, or, without a service, writes the committed checkpoints to files
//! as the flush policy says. A service that cannot be reached is reported
//! once; from then on this process flushes its ranks' checkpoints to files
//! itself, starting with every one it committed, so nothing committed is
//! lost.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;

use mpcrs_craas::wire::{Request, Response};
use mpcrs_craas::{blocks, files, Change, Checkpoint, FlushPolicy};
use mpcrs_levels::blocking;

use super::link::{Link, Services};

/// One staged commit or deletion.
pub(super) enum Outgoing {
    Commit {
        rank: u32,
        ckpt: String,
        /// Sent whole: the service holds nothing this change follows.
        fresh: bool,
        change: Change,
        /// The checkpoint after the commit; its arrays are the payload.
        after: Checkpoint,
    },
    Delete {
        rank: u32,
        ckpt: String,
    },
}

impl Outgoing {
    /// Its rank and checkpoint.
    fn key(&self) -> (u32, String) {
        match self {
            Outgoing::Commit { rank, ckpt, .. } | Outgoing::Delete { rank, ckpt } => {
                (*rank, ckpt.clone())
            }
        }
    }
}

/// A checkpoint as this process last committed it, and what of it is not in
/// files this process wrote.
struct InFiles {
    last: Checkpoint,
    unflushed: u32,
    since: Option<Instant>,
}

struct State {
    queue: VecDeque<Outgoing>,
    /// Whether a helper is sending.
    sending: bool,
    /// Connections by service address; `None` once the service is lost.
    links: HashMap<String, Option<Link>>,
    /// The last commit of every checkpoint of this process's ranks, with
    /// the commits not yet in files this process wrote: it writes them by
    /// the flush policy without a service, and all of them once it loses one.
    in_files: HashMap<(u32, String), InFiles>,
    /// The last commit of each checkpoint known to be held where it is kept
    /// (acknowledged by the service, or written to files); a deletion,
    /// once sent, removes it (commits are numbered from 1 again).
    held: HashMap<(u32, String), u64>,
    /// The checkpoint whose commit or deletion the helper is sending.
    current: Option<(u32, String)>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

fn with_state<T>(f: impl FnOnce(&mut State) -> T) -> T {
    let mut g = STATE.lock().unwrap();
    f(g.get_or_insert_with(|| State {
        queue: VecDeque::new(),
        sending: false,
        links: HashMap::new(),
        in_files: HashMap::new(),
        held: HashMap::new(),
        current: None,
    }))
}

/// Where this process keeps what it sends.
pub(super) struct Places {
    pub(super) services: Option<Services>,
    /// The checkpoint directory (files).
    pub(super) dir: Option<PathBuf>,
    pub(super) policy: FlushPolicy,
}

/// Stages `o`; a helper sends it. A commit is also recorded as not yet in
/// files, so that a process whose service goes away writes it.
pub(super) fn stage(places: &'static Places, o: Outgoing) {
    let start = with_state(|s| {
        match &o {
            Outgoing::Commit {
                rank, ckpt, after, ..
            } => {
                let e = s.in_files.entry((*rank, ckpt.clone())).or_insert(InFiles {
                    last: Checkpoint::default(),
                    unflushed: 0,
                    since: None,
                });
                e.last = after.clone();
                e.unflushed += 1;
                e.since.get_or_insert_with(Instant::now);
            }
            Outgoing::Delete { rank, ckpt } => {
                s.in_files.remove(&(*rank, ckpt.clone()));
            }
        }
        s.queue.push_back(o);
        !std::mem::replace(&mut s.sending, true)
    });
    if start {
        crate::checkpoint::start_helper(move || send_all(places));
    }
}

/// Whether the service of `rank` was lost by this process.
pub(super) fn service_lost(places: &Places, rank: u32) -> bool {
    let Some(svc) = &places.services else {
        return false;
    };
    with_state(|s| matches!(s.links.get(svc.of(rank)), Some(None)))
}

fn send_all(places: &'static Places) {
    loop {
        let Some(o) = with_state(|s| {
            let o = s.queue.pop_front();
            s.current = o.as_ref().map(|o| o.key());
            if o.is_none() {
                s.sending = false;
            }
            o
        }) else {
            return;
        };
        if let Outgoing::Delete { rank, ckpt } = &o {
            with_state(|s| s.held.remove(&(*rank, ckpt.clone())));
        }
        send_one(places, o);
    }
}

/// The payload of `change`: the changed blocks of `after`'s arrays.
fn payload<'a>(change: &Change, after: &'a Checkpoint) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    for a in &change.arrays {
        let data = after.arrays[&a.name].as_slice();
        for &b in &a.blocks {
            out.push(&data[blocks::range(b as usize, data.len())]);
        }
    }
    out
}

/// Sends `req` to the service at `addr`, connecting first where needed;
/// `None` when the service is lost (reported once).
fn call(places: &Places, addr: &str, req: &Request, payload: &[&[u8]]) -> Option<Response> {
    let svc = places.services.as_ref()?;
    let mut link = match with_state(|s| s.links.get_mut(addr).map(Option::take)) {
        Some(None) => return None,
        Some(Some(l)) => Some(l),
        None => None,
    };
    let r = (|| {
        let l = match &mut link {
            Some(l) => l,
            None => link.insert(Link::connect(addr, &svc.secret)?),
        };
        l.call(req, payload).map(|(r, _)| r)
    })();
    match r {
        Ok(resp) => {
            with_state(|s| s.links.insert(addr.to_string(), link));
            Some(resp)
        }
        Err(e) => {
            with_state(|s| s.links.insert(addr.to_string(), None));
            let to = match &places.dir {
                Some(d) => format!("files in {}", d.display()),
                None => {
                    "nowhere (no checkpoint directory): commits from now on are lost at a failure"
                        .into()
                }
            };
            mpcrs_settings::report!(
                warn,
                "mpcrs: CRaaS: process {}: the checkpoint service at {addr} is lost ({e}); this process keeps its ranks' checkpoints in {to}",
                crate::config::JobConfig::from_env().map_or(0, |j| j.process)
            );
            None
        }
    }
}

fn send_one(places: &Places, o: Outgoing) {
    let Some(svc) = &places.services else {
        return keep_in_files(places, o);
    };
    let (rank, ckpt) = o.key();
    if service_lost(places, rank) {
        return keep_in_files(places, o);
    }
    let addr = svc.of(rank).to_string();
    let resp = match &o {
        Outgoing::Commit {
            rank,
            ckpt,
            fresh,
            change,
            after,
        } => {
            let req = Request::Commit {
                rank: *rank,
                ckpt: ckpt.clone(),
                fresh: *fresh,
                change: change.clone(),
            };
            match call(places, &addr, &req, &payload(change, after)) {
                Some(Response::Refused(_)) if !fresh => {
                    // The service lost the commit this change follows (it
                    // was restarted, or a flush was read back): send it whole.
                    let whole = after.whole();
                    let req = Request::Commit {
                        rank: *rank,
                        ckpt: ckpt.clone(),
                        fresh: true,
                        change: whole.clone(),
                    };
                    call(places, &addr, &req, &payload(&whole, after))
                }
                r => r,
            }
        }
        Outgoing::Delete { rank, ckpt } => call(
            places,
            &addr,
            &Request::Delete {
                rank: *rank,
                ckpt: ckpt.clone(),
            },
            &[],
        ),
    };
    match resp {
        Some(Response::Refused(why)) => {
            mpcrs_settings::report!(
                warn,
                "mpcrs: CRaaS: rank {rank}: the checkpoint service refused checkpoint {ckpt:?} ({why}); it is kept in files instead"
            );
            keep_in_files(places, o)
        }
        Some(_) => {
            // The service holds it: nothing for this process to write.
            if let Outgoing::Commit {
                rank, ckpt, change, ..
            } = &o
            {
                with_state(|s| {
                    s.held.insert((*rank, ckpt.clone()), change.commit);
                    if let Some(e) = s.in_files.get_mut(&(*rank, ckpt.clone())) {
                        e.unflushed = e.unflushed.saturating_sub(1);
                        if e.unflushed == 0 {
                            e.since = None;
                        }
                    }
                });
            }
        }
        None => {
            // Lost now, and with it what the service had not flushed:
            // everything this process committed goes to files.
            keep_in_files(places, o);
            with_state(|s| {
                for e in s.in_files.values_mut() {
                    e.unflushed = e.unflushed.max(1);
                }
            });
            flush_all(places);
        }
    }
}

/// Keeps `o` in files: the flush policy says when a checkpoint is written.
fn keep_in_files(places: &Places, o: Outgoing) {
    let Some(dir) = &places.dir else { return };
    match o {
        Outgoing::Commit { rank, ckpt, .. } => {
            // A process that lost its service has no one to flush for it
            // later: every commit goes to files.
            let lost = service_lost(places, rank);
            let due = with_state(|s| {
                s.in_files.get(&(rank, ckpt.clone())).is_some_and(|e| {
                    let age = e.since.map_or(std::time::Duration::ZERO, |t| t.elapsed());
                    lost || places.policy.due(e.unflushed, age)
                })
            });
            if due {
                write(dir, rank, &ckpt);
            }
        }
        Outgoing::Delete { rank, ckpt } => {
            let io = crate::checkpoint::helper_io();
            if let Err(e) = blocking(&io, || files::remove(dir, rank, &ckpt)) {
                mpcrs_settings::report!(
                    warn,
                    "mpcrs: CRaaS: rank {rank}: checkpoint {ckpt:?}: {e}"
                );
            }
        }
    }
}

/// Writes checkpoint `ckpt` of `rank` as this process last committed it.
fn write(dir: &std::path::Path, rank: u32, ckpt: &str) {
    let Some(last) = with_state(|s| {
        s.in_files.get_mut(&(rank, ckpt.to_string())).map(|e| {
            e.unflushed = 0;
            e.since = None;
            e.last.clone()
        })
    }) else {
        return;
    };
    let io = crate::checkpoint::helper_io();
    match blocking(&io, || files::write(dir, rank, ckpt, &last)) {
        Ok(_) => {
            with_state(|s| {
                let h = s.held.entry((rank, ckpt.to_string())).or_insert(0);
                *h = (*h).max(last.commit);
            });
        }
        Err(e) => {
            mpcrs_settings::report!(
                warn,
                "mpcrs: CRaaS: rank {rank}: checkpoint {ckpt:?} commit {}: cannot write {}: {e}",
                last.commit,
                files::path(dir, rank, ckpt).display()
            );
        }
    }
}

/// Writes every checkpoint kept in files with commits not yet written.
fn flush_all(places: &Places) {
    let Some(dir) = &places.dir else { return };
    let due: Vec<(u32, String)> = with_state(|s| {
        s.in_files
            .iter()
            .filter(|(_, e)| e.unflushed > 0)
            .map(|(k, _)| k.clone())
            .collect()
    });
    for (rank, ckpt) in due {
        write(dir, rank, &ckpt);
    }
}

/// Waits until commit `commit` of checkpoint `ckpt` of `rank` (or a later
/// one) is held where it is kept: acknowledged by the service, or written
/// to files now. The rank parks meanwhile, so the helper runs.
pub(super) fn wait(
    places: &'static Places,
    rank: u32,
    ckpt: &str,
    commit: u64,
) -> Result<(), String> {
    let key = (rank, ckpt.to_string());
    loop {
        let (held, idle, pending) = with_state(|s| {
            (
                s.held.get(&key).copied().unwrap_or(0),
                !s.sending && s.queue.is_empty(),
                // Anything of it still to send comes first (a deletion sent
                // later than an older commit's acknowledgement, for one).
                s.current.as_ref() == Some(&key) || s.queue.iter().any(|o| o.key() == key),
            )
        });
        if held >= commit && !pending {
            return Ok(());
        }
        if idle {
            // Nothing under way: what the flush policy keeps for later is
            // written now (no service, or a lost one).
            let Some(dir) = &places.dir else {
                return Err(
                    "no checkpoint directory to write it to (run with --checkpoint DIR)".into(),
                );
            };
            write(dir, rank, ckpt);
            let held = with_state(|s| s.held.get(&key).copied().unwrap_or(0));
            return if held >= commit {
                Ok(())
            } else {
                Err(format!(
                    "commit {commit} could not be written to {}",
                    files::path(dir, rank, ckpt).display()
                ))
            };
        }
        mpcrs_scheduler::sleep(std::time::Duration::from_micros(200));
    }
}

/// At the end of the process: waits for the helper, then writes what is
/// kept in files and not yet written.
pub(super) fn finish(places: &'static Places) {
    loop {
        let busy = with_state(|s| s.sending || !s.queue.is_empty());
        if !busy {
            break;
        }
        crate::checkpoint::drain_helpers();
        if with_state(|s| s.sending) {
            mpcrs_scheduler::yield_now();
        }
    }
    flush_all(places);
}
