//! How an epoch is recovered from its storage levels: for every process, the
//! cheapest level that holds its file intact. L1 (its node-local file), else
//! L2 (the copy its partner keeps), else L3 (rebuilt, with the other members
//! of its Reed-Solomon group, from their files and parity), else L4 (the epoch
//! directory). How node-local files are reached is the caller's ([`Reach`]):
//! at their paths where the recovery runs ([`recover`]: one host, or
//! node-local directories at the same path on every host, a shared mount), or
//! through the hosts that keep them (a launcher whose hosts have private
//! disks). What makes a file intact is the caller's too (an image's
//! checksums, an application checkpoint's).

use std::path::{Path, PathBuf};

use mpcrs_settings::JobManifest;

use crate::store::{image_name, LocalStore};
use crate::{erasure, placement, Level};

/// Where each level keeps process `p`'s data of epoch `k`.
pub struct LevelFiles {
    /// L1: its image on its node.
    pub local: Option<PathBuf>,
    /// L2: the copy its partner keeps, and that partner.
    pub partner: Option<(PathBuf, usize)>,
    /// L3: its parity shard on its node.
    pub parity: Option<PathBuf>,
    /// L4: its image in the epoch directory.
    pub global: PathBuf,
}

/// Where each level keeps process `p`'s data of epoch `k` (`epoch_dir`: the
/// epoch's directory in the checkpoint directory).
pub fn level_files(m: &JobManifest, epoch_dir: &Path, k: u64, p: usize) -> LevelFiles {
    let global = epoch_dir.join(image_name(p));
    let Some(root) = &m.local else {
        return LevelFiles {
            local: None,
            partner: None,
            parity: None,
            global,
        };
    };
    let store = LocalStore::new(root);
    let nodes = nodes(m);
    let partner = placement::partners(&nodes)
        .get(p)
        .copied()
        .flatten()
        .map(|q| (store.partner_copy(nodes[q], k, p), q));
    LevelFiles {
        local: Some(store.image(nodes[p], k, p)),
        partner,
        parity: Some(store.parity(nodes[p], k, p)),
        global,
    }
}

/// The node of every process (all 0 when the manifest has none).
fn nodes(m: &JobManifest) -> Vec<u32> {
    (0..m.processes)
        .map(|q| m.nodes.get(q).copied().unwrap_or(0))
        .collect()
}

/// The host of process `p`, for messages.
fn host(m: &JobManifest, p: usize) -> String {
    match m.hosts.get(p) {
        Some(h) if m.hosts.len() == m.processes => format!("host {h}"),
        _ => format!("node {}", nodes(m)[p]),
    }
}

/// Epoch `k` recovered: the image each process restores, and one line per
/// process that does not restore its L1 image, saying what was used and why.
pub struct Recovery {
    pub images: Vec<PathBuf>,
    pub notes: Vec<String>,
    /// The level each process's image comes from.
    pub levels: Vec<Level>,
}

/// Whose file a level should hold: process `process`'s of epoch `epoch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expected {
    pub epoch: u64,
    pub process: usize,
}

/// Whether a process's file is whole and the one expected: `Ok`, or what is
/// wrong. Called from several threads at once.
pub type Check<'a> = dyn Fn(&Path, Expected) -> Result<(), String> + Sync + 'a;

/// `f(0)..f(n)`, computed by as many threads as there are cores.
pub fn side_by_side<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |c| c.get())
        .min(n);
    if threads <= 1 {
        return (0..n).map(f).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut out: Vec<(usize, T)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if i >= n {
                            return done;
                        }
                        done.push((i, f(i)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("a check panicked"))
            .collect()
    });
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, t)| t).collect()
}

/// How a recovery reaches the files of the levels.
pub trait Reach: Sync {
    /// Whether the file at `path` is there, whole and `expected`'s: `Ok`, or
    /// what is wrong ("missing" when it is not there). Called from several
    /// threads at once.
    fn check(&self, path: &Path, expected: Expected) -> Result<(), String>;
    /// Whether there is a file at `path` (its content unchecked: a parity
    /// shard checks its chunks as it is read).
    fn exists(&self, path: &Path) -> bool;
    /// A path where this host reads the file at `path`: `path` itself, or a
    /// copy brought from the host that keeps it.
    fn readable(&self, path: &Path) -> Result<PathBuf, String>;
}

/// Files reached at their paths, checked by a [`Check`].
struct Here<'a>(&'a Check<'a>);

impl Reach for Here<'_> {
    fn check(&self, path: &Path, expected: Expected) -> Result<(), String> {
        if !path.is_file() {
            return Err("missing".into());
        }
        (self.0)(path, expected)
    }
    fn exists(&self, path: &Path) -> bool {
        path.is_file()
    }
    fn readable(&self, path: &Path) -> Result<PathBuf, String> {
        Ok(path.to_path_buf())
    }
}

/// Recovers epoch `k` of the job of `m` (see the module), reading every file
/// at its path; `check` says whether a process's file is whole. Files rebuilt
/// from L3 are written to `rebuilt` (made if needed). Fails naming, for a
/// process no level recovers, what is wrong at each.
pub fn recover(
    m: &JobManifest,
    epoch_dir: &Path,
    k: u64,
    rebuilt: &Path,
    check: &Check<'_>,
) -> Result<Recovery, String> {
    recover_reaching(m, epoch_dir, k, rebuilt, &Here(check))
}

/// [`recover`], reaching the files through `reach`. The paths of the
/// recovery's images are where their levels keep them (L1 and L2 files
/// perhaps on other hosts, as `reach` found them) or in `rebuilt`.
pub fn recover_reaching(
    m: &JobManifest,
    epoch_dir: &Path,
    k: u64,
    rebuilt: &Path,
    reach: &dyn Reach,
) -> Result<Recovery, String> {
    let intact = |path: &Path, process: usize| reach.check(path, Expected { epoch: k, process });
    let n = m.processes;
    let mut found: Vec<Option<(Level, PathBuf)>> = vec![None; n];
    let mut problems: Vec<Vec<String>> = vec![Vec::new(); n];
    let files: Vec<LevelFiles> = (0..n).map(|p| level_files(m, epoch_dir, k, p)).collect();
    // Each process's first intact level, the processes checked side by side
    // (checking reads and checksums every byte of an image).
    let first_intact = |p: usize| -> (Option<(Level, PathBuf)>, Vec<String>) {
        let mut problems = Vec::new();
        if let Some(l1) = &files[p].local {
            match intact(l1, p) {
                Ok(()) => return (Some((Level::Local, l1.clone())), problems),
                Err(e) => {
                    problems.push(format!("L1 image {e} on {} ({})", host(m, p), l1.display()))
                }
            }
        }
        if let Some((copy, q)) = &files[p].partner {
            match intact(copy, p) {
                Ok(()) => return (Some((Level::Partner, copy.clone())), problems),
                Err(e) => problems.push(format!("partner copy {e} on {}", host(m, *q))),
            }
        }
        (None, problems)
    };
    for (p, (level, why)) in side_by_side(n, first_intact).into_iter().enumerate() {
        found[p] = level;
        problems[p] = why;
    }
    // L3: each group with members lost, rebuilt from the others.
    if m.local.is_some() && n > 1 {
        for group in placement::groups(&nodes(m), m.group_size) {
            let members = group.members;
            let lost: Vec<usize> = (0..members.len())
                .filter(|&i| found[members[i]].is_none())
                .collect();
            if lost.is_empty() {
                continue;
            }
            let parity: Vec<Option<&Path>> = members
                .iter()
                .map(|&q| files[q].parity.as_deref().filter(|p| reach.exists(p)))
                .collect();
            if parity.iter().all(Option::is_none) {
                for &i in &lost {
                    problems[members[i]].push("no L3 parity".into());
                }
                continue;
            }
            // The group's files where this host reads them; one that cannot
            // be brought counts as lost.
            let readable = |path: Option<&Path>| path.and_then(|p| reach.readable(p).ok());
            let images: Vec<Option<PathBuf>> = members
                .iter()
                .map(|&q| readable(found[q].as_ref().map(|(_, p)| p.as_path())))
                .collect();
            let parity: Vec<Option<PathBuf>> = parity.into_iter().map(readable).collect();
            let shards: Vec<erasure::Shards<'_>> = (0..members.len())
                .map(|i| erasure::Shards {
                    image: images[i].as_deref(),
                    parity: parity[i].as_deref(),
                })
                .collect();
            mpcrs_cr::commit::private_dir_all(rebuilt)
                .map_err(|e| format!("{}: {e}", rebuilt.display()))?;
            let out = |i: usize| rebuilt.join(image_name(members[i]));
            let from: Vec<String> = members
                .iter()
                .enumerate()
                .filter(|(i, _)| !lost.contains(i))
                .map(|(_, q)| q.to_string())
                .collect();
            match erasure::rebuild(&shards, &lost, &out) {
                Ok(()) => {
                    for &i in &lost {
                        let q = members[i];
                        match intact(&out(i), q) {
                            Ok(()) => {
                                problems[q].push(format!(
                                    "rebuilt from the Reed-Solomon parity of its group (processes {:?}; intact: {})",
                                    members,
                                    from.join(", ")
                                ));
                                found[q] = Some((Level::Erasure, out(i)));
                            }
                            Err(e) => problems[q].push(format!("image rebuilt from L3 {e}")),
                        }
                    }
                }
                Err(e) => {
                    for &i in &lost {
                        problems[members[i]].push(format!("L3 cannot rebuild it: {e}"));
                    }
                }
            }
        }
    }
    let mut images = Vec::with_capacity(n);
    let mut levels = Vec::with_capacity(n);
    let mut notes = Vec::new();
    for p in 0..n {
        if found[p].is_none() {
            let l4 = &files[p].global;
            match intact(l4, p) {
                Ok(()) => found[p] = Some((Level::Global, l4.clone())),
                Err(e) => problems[p].push(format!("L4 image {e} ({})", l4.display())),
            }
        }
        if let Some((level, _)) = &found[p] {
            levels.push(*level);
        }
        match &found[p] {
            Some((Level::Local, path)) => images.push(path.clone()),
            Some((level, path)) => {
                let how = match level {
                    Level::Partner => format!(
                        "restoring it from the partner copy on {} ({})",
                        host(m, files[p].partner.as_ref().map_or(p, |(_, q)| *q)),
                        path.display()
                    ),
                    Level::Erasure => format!("restoring it from L3 ({})", path.display()),
                    _ => format!("restoring it from L4 ({})", path.display()),
                };
                notes.push(format!("process {p}: {}; {how}", problems[p].join("; ")));
                images.push(path.clone());
            }
            None => {
                return Err(format!(
                    "no level recovers process {p}: {}",
                    problems[p].join("; ")
                ))
            }
        }
    }
    Ok(Recovery {
        images,
        notes,
        levels,
    })
}
