//! CRaaS, the checkpoint service of seed 003, for the ranks: each rank keeps
//! named checkpoints of indices and arrays, stages updates to them, and
//! commits a checkpoint as a whole; after a failure, a new run of the
//! program finds each rank's newest commit and restores from it.
//!
//! - A commit returns once its change is staged in this process: the
//!   arrays given since the last commit become the rank's committed copy
//!   (moved, not copied), and a helper task sends only the blocks whose hash
//!   changed (sender.rs). The rank waits for the copy of each array into
//!   staging (at `ckpt_array`) and for the hashing of its blocks (at
//!   `commit`), nothing else.
//! - Where commits go: the job's checkpoint services (`mpcrs-ckptd`, started
//!   by `mpcrs-run --ckpt-service`), which hold them in memory and flush them
//!   to `DIR/craas/` now and then; without a service, this process keeps
//!   them and flushes them itself by the same policy. A service that is lost
//!   is replaced by this process's own flushes: nothing committed is lost.
//! - A commit is atomic wherever it is held: the service applies a change
//!   whole or not at all, and files are replaced by rename.
//! - A restore takes the newest commit the rank's service holds or its file
//!   holds, the service first when it is as new, and says on one line where
//!   it came from.
//!
//! The C API (craas.h, in the C ABI crate) is these functions with C types.

mod link;
mod sender;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use mpcrs_craas::wire::{Request, Response};
use mpcrs_craas::{blocks, files, names, ArrayChange, Change, Checkpoint, FlushPolicy, NameError};
use mpcrs_levels::blocking;

pub(crate) use link::connect_proven;
use link::{Link, Services};
use sender::{Outgoing, Places};

pub use mpcrs_craas::names::MAX_NAME;

/// Why a call failed; the C API prints it on one line with the call and
/// rank, and returns [`CraasError::code`].
#[derive(Debug, thiserror::Error)]
pub enum CraasError {
    #[error("{what} name {name:?}: {err}")]
    Name {
        what: &'static str,
        name: String,
        err: NameError,
    },
    #[error("{0}")]
    Argument(String),
    #[error("rank {rank} has no committed checkpoint {ckpt:?}")]
    UnknownCheckpoint { rank: u32, ckpt: String },
    #[error("checkpoint {ckpt:?} of rank {rank} (commit {commit}) has no {kind} {name:?}")]
    UnknownName {
        rank: u32,
        ckpt: String,
        commit: u64,
        kind: &'static str,
        name: String,
    },
    #[error("array {name:?} of checkpoint {ckpt:?} holds {stored} bytes, the buffer {given}")]
    Size {
        ckpt: String,
        name: String,
        stored: usize,
        given: usize,
    },
    #[error("{0}")]
    Store(String),
    #[error(
        "called outside an MPI rank (before MPI_Init, or from a thread the rank did not start)"
    )]
    NotARank,
}

/// The error codes of craas.h.
pub mod codes {
    pub const SUCCESS: i32 = 0;
    pub const ERR_ARG: i32 = 1;
    pub const ERR_NAME: i32 = 2;
    pub const ERR_NO_CKPT: i32 = 3;
    pub const ERR_NO_NAME: i32 = 4;
    pub const ERR_SIZE: i32 = 5;
    pub const ERR_STORE: i32 = 6;
    pub const ERR_NOT_RANK: i32 = 7;
}

impl CraasError {
    pub fn code(&self) -> i32 {
        match self {
            CraasError::Argument(_) => codes::ERR_ARG,
            CraasError::Name { .. } => codes::ERR_NAME,
            CraasError::UnknownCheckpoint { .. } => codes::ERR_NO_CKPT,
            CraasError::UnknownName { .. } => codes::ERR_NO_NAME,
            CraasError::Size { .. } => codes::ERR_SIZE,
            CraasError::Store(_) => codes::ERR_STORE,
            CraasError::NotARank => codes::ERR_NOT_RANK,
        }
    }
}

type Result<T> = std::result::Result<T, CraasError>;

/// Where this process's ranks keep their checkpoints, read once.
fn places() -> Result<&'static Places> {
    static PLACES: OnceLock<std::result::Result<Places, String>> = OnceLock::new();
    PLACES
        .get_or_init(|| {
            use mpcrs_settings::variables as env;
            let policy = match env::CKPT_SERVICE_FLUSH.get() {
                Some(p) => FlushPolicy::parse(&p)?,
                None => FlushPolicy::default(),
            };
            Ok(Places {
                services: Services::from_env()?,
                dir: env::CHECKPOINT_DIR.get().map(PathBuf::from),
                policy,
            })
        })
        .as_ref()
        .map_err(|e| CraasError::Store(e.clone()))
}

/// One checkpoint of one rank, as this run knows it.
#[derive(Default)]
struct Ckpt {
    /// Whether the newest commit was looked for (once per run).
    opened: bool,
    /// The last commit, its data here once `loaded`.
    committed: Checkpoint,
    loaded: bool,
    /// The commits found at open: in the service, in files.
    in_service: Option<u64>,
    in_files: Option<u64>,
    /// Hashes of the blocks of `committed`'s arrays.
    hashes: HashMap<String, Vec<u64>>,
    /// Updates since the last commit.
    indices: BTreeMap<String, i64>,
    arrays: BTreeMap<String, Vec<u8>>,
    /// Whether the service holds `committed` (the next change can follow it).
    service_has_it: bool,
    /// Buffers of arrays no longer committed, reused by the next
    /// `ckpt_array`: a copy into memory already mapped costs no page faults
    /// (4-12 us each here, more than the copy itself).
    spare: Vec<Vec<u8>>,
}

/// Spare buffers kept per checkpoint.
const SPARES: usize = 4;

type RankCkpts = Arc<Mutex<HashMap<String, Ckpt>>>;

static RANKS: Mutex<Option<HashMap<u32, RankCkpts>>> = Mutex::new(None);

/// Runs `f` on checkpoint `ckpt` of the calling rank, its name checked.
fn with_ckpt<T>(ckpt: &str, f: impl FnOnce(u32, &mut Ckpt) -> Result<T>) -> Result<T> {
    let rank = crate::current_rank().ok_or(CraasError::NotARank)? as u32;
    names::checkpoint(ckpt).map_err(|err| CraasError::Name {
        what: "checkpoint",
        name: ckpt.to_string(),
        err,
    })?;
    let mine = RANKS
        .lock()
        .unwrap()
        .get_or_insert_with(HashMap::new)
        .entry(rank)
        .or_default()
        .clone();
    // Only this rank takes its own lock.
    let mut ckpts = mine.lock().unwrap();
    f(rank, ckpts.entry(ckpt.to_string()).or_default())
}

fn object_name(name: &str) -> Result<()> {
    names::object(name).map_err(|err| CraasError::Name {
        what: "object",
        name: name.to_string(),
        err,
    })
}

/// Idle connections to services, for the ranks' lookups.
static IDLE: Mutex<Vec<(String, Link)>> = Mutex::new(Vec::new());

/// Asks `rank`'s service; `None` without a service or when it cannot be
/// reached (then files are used).
fn ask(places: &Places, rank: u32, req: &Request) -> Option<(Response, Vec<u8>)> {
    let svc = places.services.as_ref()?;
    if sender::service_lost(places, rank) {
        return None;
    }
    let addr = svc.of(rank);
    let idle = {
        let mut idle = IDLE.lock().unwrap();
        idle.iter()
            .position(|(a, _)| a == addr)
            .map(|i| idle.swap_remove(i).1)
    };
    let mut link = match idle {
        Some(l) => l,
        None => Link::connect(addr, &svc.secret).ok()?,
    };
    let r = link.call(req, &[]).ok()?;
    IDLE.lock().unwrap().push((addr.to_string(), link));
    Some(r)
}

/// Looks for the newest commit of `ckpt` (once per run).
fn open(places: &Places, rank: u32, name: &str, c: &mut Ckpt) {
    if c.opened {
        return;
    }
    c.opened = true;
    let req = Request::Latest {
        rank,
        ckpt: name.to_string(),
    };
    c.in_service = match ask(places, rank, &req) {
        Some((Response::Latest(n), _)) => n,
        _ => None,
    };
    c.in_files = places.dir.as_deref().and_then(|d| {
        let io = crate::checkpoint::helper_io();
        blocking(&io, || Ok(files::commit_of(d, rank, name)))
            .ok()
            .flatten()
    });
    c.committed.commit = c.in_service.max(c.in_files).unwrap_or(0);
    c.loaded = c.committed.commit == 0;
}

/// Brings the newest readable commit of `ckpt` here, saying where from.
fn load(places: &Places, rank: u32, name: &str, c: &mut Ckpt) -> Result<()> {
    open(places, rank, name, c);
    if c.loaded {
        return Ok(());
    }
    let from_service = |c: &Ckpt| -> Option<std::result::Result<(Checkpoint, String), String>> {
        c.in_service?;
        let req = Request::Fetch {
            rank,
            ckpt: name.to_string(),
        };
        let addr = places.services.as_ref()?.of(rank);
        Some(match ask(places, rank, &req) {
            Some((Response::Fetched(Some(change)), payload)) => {
                let mut got = Checkpoint::default();
                got.apply_owned(&change, payload).map(|()| {
                    (
                        got,
                        format!("the memory of the checkpoint service at {addr}"),
                    )
                })
            }
            _ => Err(format!(
                "the checkpoint service at {addr} no longer holds it"
            )),
        })
    };
    let from_files = |c: &Ckpt| -> Option<std::result::Result<(Checkpoint, String), String>> {
        c.in_files?;
        let dir = places.dir.as_deref()?;
        let io = crate::checkpoint::helper_io();
        let r = blocking(&io, || Ok(files::read(dir, rank, name)))
            .unwrap_or_else(|e| Err(e.to_string()));
        Some(match r {
            Ok(Some(got)) => Ok((got, files::path(dir, rank, name).display().to_string())),
            Ok(None) => Err(format!(
                "{} is gone",
                files::path(dir, rank, name).display()
            )),
            Err(e) => Err(e),
        })
    };
    let service_first = c.in_service >= c.in_files;
    let tries = if service_first {
        [from_service(c), from_files(c)]
    } else {
        [from_files(c), from_service(c)]
    };
    let mut why = Vec::new();
    for t in tries.into_iter().flatten() {
        match t {
            Ok((got, origin)) => {
                if !why.is_empty() {
                    mpcrs_settings::report!(
                        warn,
                        "mpcrs: CRaaS: rank {rank}: checkpoint {name:?}: {}",
                        why.join("; ")
                    );
                }
                mpcrs_settings::report!(
                    info,
                    "mpcrs: CRaaS: rank {rank}: checkpoint {name:?} commit {} restored from {origin}",
                    got.commit
                );
                c.hashes = got
                    .arrays
                    .iter()
                    .map(|(k, v)| (k.clone(), blocks::hashes(v)))
                    .collect();
                c.service_has_it = origin.starts_with("the memory");
                c.committed = got;
                // Restored from an older copy (the newer one could not be
                // read): later commits are numbered past every copy found,
                // so the newest is always the one a restore takes.
                c.committed.commit = c
                    .committed
                    .commit
                    .max(c.in_service.max(c.in_files).unwrap_or(0));
                c.loaded = true;
                return Ok(());
            }
            Err(e) => why.push(e),
        }
    }
    Err(CraasError::Store(format!(
        "checkpoint {name:?} of rank {rank} (commit {}) cannot be read: {}",
        c.committed.commit,
        why.join("; ")
    )))
}

/// A new run of the job in this process (recovery in place): rank `rank`
/// starts again from its last commits, which this process still holds; what
/// it staged and did not commit is dropped, as a crash would have. Says, per
/// checkpoint, which commit the rank finds.
pub(crate) fn on_new_run(rank: u32, run: u64) {
    let mine = RANKS
        .lock()
        .unwrap()
        .as_ref()
        .and_then(|r| r.get(&rank).cloned());
    let Some(mine) = mine else { return };
    let mut ckpts = mine.lock().unwrap_or_else(|p| p.into_inner());
    for (name, c) in ckpts.iter_mut() {
        c.indices.clear();
        let staged = std::mem::take(&mut c.arrays);
        c.spare.extend(staged.into_values());
        c.spare.truncate(SPARES);
        if c.loaded && c.committed.commit > 0 {
            mpcrs_settings::report!(
                info,
                "mpcrs: CRaaS: rank {rank}: checkpoint {name:?} commit {} kept in this process's memory for run {run}",
                c.committed.commit
            );
        }
    }
}

/// Stages array `name` of checkpoint `ckpt` (a copy of `data`).
pub fn ckpt_array(ckpt: &str, name: &str, data: &[u8]) -> Result<()> {
    object_name(name)?;
    with_ckpt(ckpt, |_, c| {
        let mut buf = match c.spare.iter().position(|b| b.capacity() >= data.len()) {
            Some(i) => c.spare.swap_remove(i),
            None => Vec::with_capacity(data.len()),
        };
        buf.clear();
        buf.extend_from_slice(data);
        if let Some(old) = c.arrays.insert(name.to_string(), buf) {
            c.spare.push(old);
        }
        Ok(())
    })
}

/// Stages index `name` of checkpoint `ckpt`.
pub fn ckpt_index(ckpt: &str, name: &str, value: i64) -> Result<()> {
    object_name(name)?;
    with_ckpt(ckpt, |_, c| {
        c.indices.insert(name.to_string(), value);
        Ok(())
    })
}

/// Commits what was staged for `ckpt` since its last commit, all at once;
/// returns the commit's number. The first commit of a run that did not
/// restore `ckpt` replaces what an earlier run committed.
pub fn commit(ckpt: &str) -> Result<u64> {
    let places = places()?;
    if places.services.is_none() && places.dir.is_none() {
        return Err(CraasError::Store(
            "nowhere to keep it: run with --checkpoint DIR or --ckpt-service HOST".into(),
        ));
    }
    with_ckpt(ckpt, |rank, c| {
        open(places, rank, ckpt, c);
        let mut after = if c.loaded {
            c.committed.clone()
        } else {
            // Not restored: this run starts the checkpoint again.
            c.hashes.clear();
            Checkpoint {
                commit: c.committed.commit,
                ..Default::default()
            }
        };
        after.commit += 1;
        let mut arrays = Vec::new();
        for (name, data) in std::mem::take(&mut c.arrays) {
            let before = c
                .hashes
                .get(&name)
                .map(Vec::as_slice)
                .zip(after.arrays.get(&name).map(|a| a.len()));
            let (changed, hashes) = blocks::changed(before, &data);
            c.hashes.insert(name.clone(), hashes);
            arrays.push(ArrayChange {
                name: name.clone(),
                len: data.len() as u64,
                blocks: changed,
            });
            after.arrays.insert(name, Arc::new(data));
        }
        let indices: Vec<(String, i64)> = std::mem::take(&mut c.indices).into_iter().collect();
        after.indices.extend(indices.iter().cloned());
        let fresh = !(c.loaded && c.service_has_it);
        let change = if fresh {
            after.whole()
        } else {
            Change {
                commit: after.commit,
                indices,
                arrays,
            }
        };
        let n = after.commit;
        let before = std::mem::replace(&mut c.committed, after.clone());
        c.loaded = true;
        c.service_has_it = places.services.is_some();
        sender::stage(
            places,
            Outgoing::Commit {
                rank,
                ckpt: ckpt.to_string(),
                fresh,
                change,
                after,
            },
        );
        // Arrays of the last commit that nothing else holds any more (the
        // helper sent them, and this commit replaced them) serve again.
        for a in before.arrays.into_values() {
            if c.spare.len() >= SPARES {
                break;
            }
            if let Ok(v) = Arc::try_unwrap(a) {
                c.spare.push(v);
            }
        }
        Ok(n)
    })
}

/// Whether the calling rank has a committed `ckpt` (this run's, or one a
/// restore finds).
pub fn exists(ckpt: &str) -> Result<bool> {
    let places = places()?;
    with_ckpt(ckpt, |rank, c| {
        open(places, rank, ckpt, c);
        Ok(c.committed.commit > 0)
    })
}

/// Index `name` of the newest commit of `ckpt`; `None` when the rank has no
/// commit of `ckpt`.
pub fn rst_index(ckpt: &str, name: &str) -> Result<Option<i64>> {
    object_name(name)?;
    let places = places()?;
    with_ckpt(ckpt, |rank, c| {
        open(places, rank, ckpt, c);
        if c.committed.commit == 0 {
            return Ok(None);
        }
        load(places, rank, ckpt, c)?;
        match c.committed.indices.get(name) {
            Some(v) => Ok(Some(*v)),
            None => Err(CraasError::UnknownName {
                rank,
                ckpt: ckpt.to_string(),
                commit: c.committed.commit,
                kind: "index",
                name: name.to_string(),
            }),
        }
    })
}

/// Copies array `name` of the newest commit of `ckpt` into `out`, which
/// must be exactly its size.
pub fn rst_array(ckpt: &str, name: &str, out: &mut [u8]) -> Result<()> {
    object_name(name)?;
    let places = places()?;
    with_ckpt(ckpt, |rank, c| {
        open(places, rank, ckpt, c);
        if c.committed.commit == 0 {
            return Err(CraasError::UnknownCheckpoint {
                rank,
                ckpt: ckpt.to_string(),
            });
        }
        load(places, rank, ckpt, c)?;
        let Some(a) = c.committed.arrays.get(name) else {
            return Err(CraasError::UnknownName {
                rank,
                ckpt: ckpt.to_string(),
                commit: c.committed.commit,
                kind: "array",
                name: name.to_string(),
            });
        };
        if a.len() != out.len() {
            return Err(CraasError::Size {
                ckpt: ckpt.to_string(),
                name: name.to_string(),
                stored: a.len(),
                given: out.len(),
            });
        }
        out.copy_from_slice(a);
        Ok(())
    })
}

/// Waits until the last commit of `ckpt` is held where it is kept (the
/// service's memory, or files): what a program calls before a step it may
/// not survive. Commits do not wait for it.
pub fn wait(ckpt: &str) -> Result<()> {
    let places = places()?;
    let (rank, commit) = with_ckpt(ckpt, |rank, c| Ok((rank, c.committed.commit)))?;
    if commit == 0 {
        return Ok(());
    }
    sender::wait(places, rank, ckpt, commit).map_err(CraasError::Store)
}

/// Forgets `ckpt` of the calling rank: its commits, here, in its service
/// and in files.
pub fn delete(ckpt: &str) -> Result<()> {
    let places = places()?;
    with_ckpt(ckpt, |rank, c| {
        *c = Ckpt {
            opened: true,
            loaded: true,
            ..Default::default()
        };
        sender::stage(
            places,
            Outgoing::Delete {
                rank,
                ckpt: ckpt.to_string(),
            },
        );
        Ok(())
    })
}

/// At the end of the process: every staged commit sent, and what this
/// process keeps in files written.
pub(crate) fn finish() {
    if let Ok(p) = places() {
        sender::finish(p);
    }
}
