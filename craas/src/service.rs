//! The service's memory (the seed's memory node): the committed checkpoints
//! of every rank that talks to it, updated in place by each commit's changed
//! blocks, flushed to files by [`FlushPolicy`] from a thread of its own, and
//! served over authenticated streams, one thread per connected process.

use std::collections::HashMap;
use std::io::{self, BufReader, BufWriter};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mpcrs_auth::{JobSecret, Role};

use crate::data::Checkpoint;
use crate::files;
use crate::flush::FlushPolicy;
use crate::wire::{self, Request, Response};

/// One checkpoint held.
struct Entry {
    ckpt: Checkpoint,
    /// Commits since the last flush, and when the first of them came.
    unflushed: u32,
    since: Option<Instant>,
}

/// What the service holds, and where and when it flushes.
pub struct Store {
    dir: Option<PathBuf>,
    policy: FlushPolicy,
    entries: Mutex<HashMap<(u32, String), Entry>>,
    stats: Mutex<Stats>,
}

/// What the service received and served.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    pub commits: u64,
    /// Commits sent whole (the first of a run, or after the service lost one).
    pub fresh: u64,
    /// Bytes of the commits' payloads (their changed blocks).
    pub payload: u64,
    /// Bytes of the arrays as the commits left them.
    pub committed: u64,
    pub fetches: u64,
}

impl std::fmt::Display for Stats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} commits ({} whole), {} bytes of changed blocks received for {} bytes committed ({:.1}%), {} fetches",
            self.commits,
            self.fresh,
            self.payload,
            self.committed,
            if self.committed > 0 { 100.0 * self.payload as f64 / self.committed as f64 } else { 0.0 },
            self.fetches
        )
    }
}

/// What a flush did.
#[derive(Debug, Default)]
pub struct Flushed {
    pub files: usize,
    pub bytes: u64,
    /// One line per file that could not be written.
    pub errors: Vec<String>,
}

impl Store {
    /// A store that flushes to `dir` (none: keeps data in memory only).
    pub fn new(dir: Option<PathBuf>, policy: FlushPolicy) -> Store {
        Store {
            dir,
            policy,
            entries: Mutex::new(HashMap::new()),
            stats: Mutex::new(Stats::default()),
        }
    }

    /// What it received and served so far.
    pub fn stats(&self) -> Stats {
        *self.stats.lock().unwrap()
    }

    /// Carries out `req` with its `payload`; returns the response and its
    /// payload (a fetched checkpoint's arrays).
    pub fn handle(&self, req: Request, payload: &[u8]) -> (Response, Vec<Arc<Vec<u8>>>) {
        let mut entries = self.entries.lock().unwrap();
        match req {
            Request::Commit {
                rank,
                ckpt,
                fresh,
                change,
            } => {
                let e = entries.entry((rank, ckpt)).or_insert_with(|| Entry {
                    ckpt: Checkpoint::default(),
                    unflushed: 0,
                    since: None,
                });
                let held = e.ckpt.commit;
                let r = if fresh {
                    let mut c = Checkpoint::default();
                    c.apply(&change, &payload).map(|()| e.ckpt = c)
                } else if change.commit != held + 1 || held == 0 {
                    Err(format!(
                        "commit {} does not follow commit {held}",
                        change.commit
                    ))
                } else {
                    e.ckpt.apply(&change, &payload)
                };
                match r {
                    Ok(()) => {
                        let mut st = self.stats.lock().unwrap();
                        st.commits += 1;
                        st.fresh += fresh as u64;
                        st.payload += payload.len() as u64;
                        st.committed += e.ckpt.bytes();
                        e.unflushed += 1;
                        e.since.get_or_insert_with(Instant::now);
                        (Response::Done, Vec::new())
                    }
                    Err(why) => (Response::Refused(why), Vec::new()),
                }
            }
            Request::Latest { rank, ckpt } => (
                Response::Latest(entries.get(&(rank, ckpt)).map(|e| e.ckpt.commit)),
                Vec::new(),
            ),
            Request::Fetch { rank, ckpt } => match entries.get(&(rank, ckpt)) {
                Some(e) => (
                    {
                        self.stats.lock().unwrap().fetches += 1;
                        Response::Fetched(Some(e.ckpt.whole()))
                    },
                    e.ckpt.arrays.values().cloned().collect(),
                ),
                None => (Response::Fetched(None), Vec::new()),
            },
            Request::Delete { rank, ckpt } => {
                entries.remove(&(rank, ckpt.clone()));
                if let Some(dir) = &self.dir {
                    if let Err(e) = files::remove(dir, rank, &ckpt) {
                        return (Response::Refused(e.to_string()), Vec::new());
                    }
                }
                (Response::Done, Vec::new())
            }
        }
    }

    /// Writes the checkpoints whose flush is due (`all`: every one with
    /// unflushed commits).
    pub fn flush(&self, all: bool) -> Flushed {
        let Some(dir) = &self.dir else {
            return Flushed::default();
        };
        let due: Vec<((u32, String), Checkpoint)> = {
            let mut entries = self.entries.lock().unwrap();
            entries
                .iter_mut()
                .filter(|(_, e)| {
                    let age = e.since.map_or(Duration::ZERO, |t| t.elapsed());
                    (all && e.unflushed > 0) || self.policy.due(e.unflushed, age)
                })
                .map(|(k, e)| {
                    e.unflushed = 0;
                    e.since = None;
                    // The arrays are shared: the next commit copies what it changes.
                    (k.clone(), e.ckpt.clone())
                })
                .collect()
        };
        // Files are written side by side, one thread per CPU: one writer
        // does not reach the disk's rate.
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(due.len().max(1));
        let next = std::sync::atomic::AtomicUsize::new(0);
        let results: Vec<Flushed> = std::thread::scope(|sc| {
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    sc.spawn(|| {
                        let mut out = Flushed::default();
                        loop {
                            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some(((rank, name), c)) = due.get(i) else {
                                break;
                            };
                            self.write_one(dir, *rank, name, c, &mut out);
                        }
                        out
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|w| w.join().unwrap_or_default())
                .collect()
        });
        let mut out = Flushed::default();
        for r in results {
            out.files += r.files;
            out.bytes += r.bytes;
            out.errors.extend(r.errors);
        }
        out
    }

    /// Writes checkpoint `name` of `rank` as `c`, counting it in `out`; a
    /// failure makes it due again.
    fn write_one(
        &self,
        dir: &std::path::Path,
        rank: u32,
        name: &str,
        c: &Checkpoint,
        out: &mut Flushed,
    ) {
        match files::write(dir, rank, name, c) {
            Ok(n) => {
                out.files += 1;
                out.bytes += n;
            }
            Err(e) => {
                out.errors
                    .push(format!("{}: {e}", files::path(dir, rank, name).display()));
                // Due again at the next round.
                if let Some(e) = self
                    .entries
                    .lock()
                    .unwrap()
                    .get_mut(&(rank, name.to_string()))
                {
                    e.unflushed = e.unflushed.max(1);
                    e.since.get_or_insert_with(Instant::now);
                }
            }
        }
    }
}

/// Serves one connected process until it closes the stream.
fn serve_connection(stream: TcpStream, secret: &JobSecret, store: &Store) -> io::Result<()> {
    stream.set_nodelay(true)?;
    let mut s = stream;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    mpcrs_auth::over_stream(&mut s, secret, Role::Acceptor)?;
    s.set_read_timeout(None)?;
    let mut r = BufReader::with_capacity(1 << 20, s.try_clone()?);
    let mut w = BufWriter::with_capacity(1 << 20, s);
    // Reused from frame to frame: a commit of the same size touches no new page.
    let mut payload = Vec::new();
    loop {
        let (req, len): (Request, usize) = match wire::receive_into(&mut r, &mut payload) {
            Ok(x) => x,
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(e),
        };
        let (resp, arrays) = store.handle(req, &payload[..len]);
        let pieces: Vec<&[u8]> = arrays.iter().map(|a| a.as_slice()).collect();
        wire::send(&mut w, &resp, &pieces)?;
    }
}

/// Accepts processes on `listener` for ever, each served by a thread;
/// `report` gets one line for a connection that ends in an error.
pub fn serve(
    listener: TcpListener,
    secret: JobSecret,
    store: Arc<Store>,
    report: impl Fn(String) + Send + Sync + 'static,
) {
    let report = Arc::new(report);
    for conn in listener.incoming() {
        let Ok(stream) = conn else { continue };
        let (secret, store, report) = (secret.clone(), store.clone(), report.clone());
        std::thread::spawn(move || {
            let peer = stream
                .peer_addr()
                .map(|a| a.to_string())
                .unwrap_or_else(|_| "?".into());
            match serve_connection(stream, &secret, &store) {
                // A process that dies resets its connection: what it was
                // sending is not applied, and that is all.
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::ConnectionReset
                            | io::ErrorKind::BrokenPipe
                            | io::ErrorKind::UnexpectedEof
                    ) => {}
                Err(e) => report(format!("connection from {peer}: {e}")),
                Ok(()) => {}
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{ArrayChange, Change};

    fn commit(n: u64, fresh: bool, blocks: Vec<u32>, byte: u8) -> (Request, Vec<u8>) {
        let len = 2 * crate::blocks::BLOCK;
        let payload = vec![byte; blocks.len() * crate::blocks::BLOCK];
        (
            Request::Commit {
                rank: 1,
                ckpt: "c".into(),
                fresh,
                change: Change {
                    commit: n,
                    indices: vec![("i".into(), n as i64)],
                    arrays: vec![ArrayChange {
                        name: "a".into(),
                        len: len as u64,
                        blocks,
                    }],
                },
            },
            payload,
        )
    }

    #[test]
    fn commits_follow_or_are_fresh_and_flushes_are_read_back() {
        let dir = std::env::temp_dir().join(format!("craas-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let s = Store::new(Some(dir.clone()), FlushPolicy::parse("2").unwrap());
        let (r, p) = commit(1, false, vec![0, 1], 1);
        assert!(
            matches!(s.handle(r, &p).0, Response::Refused(_)),
            "a delta on nothing"
        );
        let (r, p) = commit(1, true, vec![0, 1], 1);
        assert_eq!(s.handle(r, &p).0, Response::Done);
        assert_eq!(s.flush(false).files, 0, "one commit: not due");
        let (r, p) = commit(3, false, vec![1], 2);
        assert!(matches!(s.handle(r, &p).0, Response::Refused(_)), "a gap");
        let (r, p) = commit(2, false, vec![1], 2);
        assert_eq!(s.handle(r, &p).0, Response::Done);
        assert_eq!(s.flush(false).files, 1);
        let st = s.stats();
        assert_eq!((st.commits, st.fresh), (2, 1));
        assert_eq!(
            st.payload,
            3 * crate::blocks::BLOCK as u64,
            "two blocks, then one"
        );
        let c = files::read(&dir, 1, "c").unwrap().unwrap();
        assert_eq!(c.commit, 2);
        assert_eq!(c.arrays["a"][0], 1);
        assert_eq!(c.arrays["a"][crate::blocks::BLOCK], 2);
        let (resp, arrays) = s.handle(
            Request::Fetch {
                rank: 1,
                ckpt: "c".into(),
            },
            &[],
        );
        let Response::Fetched(Some(change)) = resp else {
            panic!()
        };
        let mut copy = Checkpoint::default();
        let payload: Vec<u8> = arrays.iter().flat_map(|a| a.iter().copied()).collect();
        copy.apply(&change, &payload).unwrap();
        assert_eq!(copy, c);
        assert_eq!(
            s.handle(
                Request::Delete {
                    rank: 1,
                    ckpt: "c".into()
                },
                &[]
            )
            .0,
            Response::Done
        );
        assert_eq!(files::read(&dir, 1, "c").unwrap(), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
