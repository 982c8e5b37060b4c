//! `mpcrs-run --restart DIR`: the restart policy. The epoch to resume from (the
//! latest complete one, or `--epoch K`), every check that can be made before a
//! process starts, and the processes that restore the epoch's images in the
//! layout of the first run.

use std::path::{Path, PathBuf};
use std::process::Command;

use mpcrs_cr::commit::epoch_name;
use mpcrs_settings::manifest::JobManifest;
use mpcrs_settings::variables as env;

use crate::elsewhere::{Agent, Elsewhere, Fact, HeaderFacts, OtherHosts};
use crate::options::Options;
use crate::processes::{place, Launch};
use crate::supervise;
use crate::verifier::Verifier;

/// A restart, ready to start: its processes, the program's name, and where
/// it resumes from.
pub struct RestartPlan {
    pub specs: Vec<supervise::ProcessSpec>,
    pub program: String,
    /// "mpcrs-run: restarting PROGRAM (N ranks) from DIR/epoch-K".
    pub announcement: String,
    pub epoch: u64,
    /// The level each process's image comes from.
    pub levels: Vec<mpcrs_levels::Level>,
    /// When the epoch was committed (its manifest's time), if known.
    pub committed: Option<std::time::SystemTime>,
}

impl RestartPlan {
    /// "L1", the one level every image came from, or the processes that
    /// needed another ("L1; process 3 from L2 (partner)").
    pub fn levels_used(&self) -> String {
        use mpcrs_levels::Level;
        let others: Vec<String> = self
            .levels
            .iter()
            .enumerate()
            .filter(|(_, l)| **l != Level::Local)
            .map(|(p, l)| format!("process {p} from {l}"))
            .collect();
        if others.is_empty() {
            return "L1".into();
        }
        if others.len() == self.levels.len() {
            let mut distinct: Vec<String> = self.levels.iter().map(|l| l.to_string()).collect();
            distinct.dedup();
            if distinct.len() == 1 {
                return distinct.remove(0);
            }
            return others.join(", ");
        }
        format!("L1; {}", others.join(", "))
    }
}

/// A restart decided and checked: the epoch, the command every process
/// runs (its image named apart, by [`Prepared::own_env`]), and what to say.
pub struct Prepared {
    /// The program with the first run's environment and settings.
    pub command: Command,
    pub manifest: JobManifest,
    pub epoch: u64,
    images: Images,
    chains: Vec<Images>,
    levels: Vec<mpcrs_levels::Level>,
    pub program: String,
    pub announcement: String,
    committed: Option<std::time::SystemTime>,
    /// The images (and chains' images) in node-local storage, and the host
    /// that wrote each: read in place by a process restarting there, and
    /// brought over for one restarting elsewhere (node-local disks are
    /// private to their host).
    written_on: WrittenOn,
    /// Images this host did not check itself (brought from another host):
    /// the restore checks them.
    unvouched: std::collections::HashSet<PathBuf>,
}

impl Prepared {
    /// The variables of process `p` alone: its image, its chain, and the
    /// vouching that they were verified whole.
    pub fn own_env(&self, p: usize) -> Vec<(String, String)> {
        let absolute = |p: &std::path::PathBuf| {
            std::path::absolute(p)
                .unwrap_or_else(|_| p.clone())
                .to_string_lossy()
                .into_owned()
        };
        let mut env = vec![(
            mpcrs_cr::restore::RESTORE_ENV.to_string(),
            absolute(&self.images[p]),
        )];
        // Every image of the chain was verified whole just now (those on
        // other hosts there, which a vouch cannot name from here).
        let verified: Vec<std::path::PathBuf> = std::iter::once(&self.images[p])
            .chain(&self.chains[p])
            .filter(|i| !self.unvouched.contains(*i))
            .map(|i| std::path::PathBuf::from(absolute(i)))
            .collect();
        env.push((
            mpcrs_cr::restore::vouch::VOUCHED_ENV.to_string(),
            mpcrs_cr::restore::vouch::vouch_for(verified.iter().map(|p| p.as_path())),
        ));
        if !self.chains[p].is_empty() {
            let chain: Vec<String> = self.chains[p].iter().map(absolute).collect();
            env.push((
                mpcrs_cr::restore::chain::CHAIN_ENV.to_string(),
                chain.join("\n"),
            ));
        }
        env
    }

    /// The level process `p`'s image comes from.
    pub fn level(&self, p: usize) -> mpcrs_levels::Level {
        self.levels[p]
    }

    /// The directory `rebuilt` of the chosen epoch in checkpoint directory
    /// `dir`.
    pub fn rebuilt_dir(&self, dir: &Path, rebuilt: &str) -> Result<PathBuf, String> {
        Ok(mpcrs_cr::CheckpointDir::open(dir)
            .map_err(|e| e.to_string())?
            .epoch_dir(self.epoch)
            .join(rebuilt))
    }

    /// Whether any image chosen is in node-local storage.
    pub fn reads_node_local(&self) -> bool {
        !self.written_on.is_empty()
    }

    /// Makes every process's images readable on the host it restarts on
    /// (`runs_on(p)`, `None` for this host, named `own`): an image in
    /// node-local storage is read in place by a process restarting on the
    /// host that wrote it, and otherwise brought into the epoch's `rebuilt`
    /// directory (which every host sees): copied here where this host sees
    /// it, else through `agent` from the host that keeps it.
    pub fn bring_to(
        &mut self,
        processes: std::ops::Range<usize>,
        runs_on: &dyn Fn(usize) -> Option<String>,
        own: &str,
        agent: &Agent,
        into: &Path,
    ) -> Result<(), String> {
        for p in processes {
            let target = runs_on(p);
            let files = std::iter::once(&mut self.images[p]).chain(self.chains[p].iter_mut());
            for file in files {
                let Some(host) = self.written_on.get(file.as_path()) else {
                    continue;
                };
                let same = match &target {
                    Some(t) => t == host,
                    None => crate::hosts::is_local(host, own).unwrap_or(false),
                };
                if same {
                    continue;
                }
                let brought = match file.exists() {
                    true => crate::elsewhere::copy_here(host, file, into)?,
                    false => crate::elsewhere::bring(agent, host, file, into)?,
                };
                mpcrs_settings::report!(
                    warn,
                    "mpcrs-run: process {p}: {} brought from host {host} (it restarts on {})",
                    file.display(),
                    target.as_deref().unwrap_or("this host")
                );
                self.unvouched.insert(brought.clone());
                *file = brought;
            }
        }
        Ok(())
    }
}

/// The processes that restart the job checkpointed in `dir`, in the layout of
/// the first run (one image each; several processes get a new key-value store)
/// on this host or on the hosts given, and the program's name.
pub fn restart_specs(
    args: &Options,
    dir: &std::path::Path,
    epoch: Option<u64>,
) -> Result<RestartPlan, String> {
    let others = OtherHosts {
        agent: Agent::Login(crate::options::launch_agent(args)),
        own: mpcrs_settings::local_hostname(),
    };
    let mut prepared = prepare(args, dir, epoch, "rebuilt", Some(&others))?;
    let processes = prepared.manifest.processes;
    if prepared.reads_node_local() {
        let runs_on = crate::processes::hosts_of_processes(args, processes)?;
        let into = prepared.rebuilt_dir(dir, "rebuilt")?;
        prepared.bring_to(
            0..processes,
            &|p| runs_on[p].clone(),
            &others.own,
            &others.agent,
            &into,
        )?;
    }
    if processes > 1 {
        // The restored processes reach the new key-value store through the
        // descriptor the restorer carries over for them (on this host).
        prepared
            .command
            .env(mpcrs_cr::restore::CARRY_FDS_ENV, mpcrs_pmi::ENV_FD);
    }
    let cmd = std::mem::replace(&mut prepared.command, Command::new("/"));
    let own_env = |p: usize| prepared.own_env(p);
    let launch = Launch {
        restorable: true,
        own_env: &own_env,
    };
    // Hosts may differ from the first run's; the checkpoint directory must then be
    // at the same path on each (a shared file system).
    let specs =
        place(args, cmd, processes, prepared.manifest.ranks, &launch).map_err(|(_, e)| e)?;
    Ok(RestartPlan {
        specs,
        program: prepared.program,
        announcement: prepared.announcement,
        epoch: prepared.epoch,
        levels: prepared.levels,
        committed: prepared.committed,
    })
}

/// Decides and checks the restart of the job checkpointed in `dir`: every
/// check that can be made before a process starts is (the epoch is complete,
/// its manifest reads, every image is there with a sound header and
/// recoverable at some level, and the executable is the one that wrote
/// them). Files rebuilt from L3 go to `rebuilt` in the epoch's directory.
/// With `others`, node-local files of the first run's other hosts that
/// this host cannot see (private disks) are asked of those hosts.
pub fn prepare(
    args: &Options,
    dir: &std::path::Path,
    epoch: Option<u64>,
    rebuilt: &str,
    others: Option<&OtherHosts>,
) -> Result<Prepared, String> {
    use std::os::unix::process::CommandExt;
    let store = mpcrs_cr::CheckpointDir::open(dir).map_err(|e| e.to_string())?;
    let epochs = store.epochs().map_err(|e| e.to_string())?;
    // The epochs to try, newest first: the one asked for only, or from the
    // latest down.
    let tried: Vec<u64> = match epoch {
        Some(k) if epochs.contains(&k) => vec![k],
        Some(k) => {
            let list: Vec<String> = epochs.iter().map(|k| k.to_string()).collect();
            return Err(format!(
                "epoch {k} is not a complete epoch (complete: {})",
                if list.is_empty() {
                    "none".into()
                } else {
                    list.join(", ")
                }
            ));
        }
        None => {
            let latest = store
                .latest()
                .map_err(|e| e.to_string())?
                .ok_or("no complete epoch to restart from")?;
            epochs
                .iter()
                .rev()
                .copied()
                .filter(|&k| k <= latest)
                .collect()
        }
    };
    let mut refusals = Vec::new();
    let mut chosen = None;
    let verifier = Verifier::new();
    for &k in &tried {
        verifier.ahead(&store, k);
        match recoverable(&store, k, &verifier, rebuilt, others) {
            Ok(found) => {
                chosen = Some((k, found));
                break;
            }
            Err(why) => {
                if tried.len() > 1 && k != *tried.last().unwrap() {
                    mpcrs_settings::report!(
                        warn,
                        "mpcrs-run: {} cannot be restored ({why}); trying the epoch before",
                        epoch_name(k)
                    );
                }
                refusals.push(why);
            }
        }
    }
    let Some((k, (m, images, chains, levels, written_on))) = chosen else {
        return Err(refusals.into_iter().next().unwrap_or_default());
    };
    let epoch_dir = store.epoch_dir(k);
    let mut cmd = Command::new(&m.executable);
    cmd.arg0(&m.args[0]).args(&m.args[1..]).current_dir(&m.cwd);
    cmd.env(env::RANKS.name, m.ranks.to_string());
    for (k, v) in &m.env {
        cmd.env(k, v);
    }
    let names: Vec<&str> = m.env.iter().map(|(k, _)| k.as_str()).collect();
    cmd.env(env::EXPORTED.name, names.join(","));
    if let Some(net) = &m.net {
        cmd.env(env::NET.name, net);
    }
    if let Some(c) = &m.net_config {
        cmd.env(env::NET_CONFIG.name, c);
    }
    let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    cmd.env(env::CHECKPOINT_DIR.name, &dir);
    match m.job {
        Some(key) => cmd.env(env::JOB_KEY.name, format!("{key:x}")),
        None => cmd.env_remove(env::JOB_KEY.name),
    };
    cmd.env(env::CHECKPOINT_KEEP.name, args.keep.to_string());
    cmd.env(env::FULL_EVERY.name, args.full_every.to_string());
    if let Some(c) = &args.compress {
        cmd.env(env::COMPRESS.name, c);
    }
    if let Some(s) = &args.checkpoint_staging {
        cmd.env(env::CHECKPOINT_STAGING.name, s);
    }
    let local = local_root_after(&m, &dir);
    cmd.env(
        env::CHECKPOINT_LOCAL.name,
        crate::options::local_root(args.checkpoint_local.as_deref().or(local.as_deref()), &dir),
    );
    // The loader lays the process out as in the first run only with the same
    // settings: exactly those, none added or missing.
    for var in mpcrs_settings::manifest::LOADER_VARIABLES {
        match m.loader_env.iter().find(|(k, _)| k == var) {
            Some((_, v)) => cmd.env(var, v),
            None => cmd.env_remove(var),
        };
    }
    // C programs run inside mpcrs-exec: name the program, not the host.
    let program = match (m.executable.file_name(), m.args.get(1)) {
        (Some(name), Some(p)) if name == "mpcrs-exec" => p.clone(),
        _ => m.args[0].clone(),
    };
    let announcement = format!(
        "mpcrs-run: restarting {program} ({} ranks{}) from {}",
        m.ranks,
        if m.processes > 1 {
            format!(", {} processes", m.processes)
        } else {
            String::new()
        },
        epoch_dir.display()
    );
    let committed = std::fs::metadata(epoch_dir.join(mpcrs_cr::commit::MANIFEST))
        .and_then(|md| md.modified())
        .ok();
    Ok(Prepared {
        command: cmd,
        manifest: m,
        epoch: k,
        images,
        chains,
        levels,
        program,
        announcement,
        committed,
        written_on,
        unvouched: Default::default(),
    })
}

/// Node-local storage for a job restarted from `dir`, whose epoch `m`
/// recorded its L1 images in `m.local` when written into `m.dir`: where `dir`
/// is a copy of that directory, storage that was inside it is at the same
/// place in the copy, and the default storage of the old directory becomes
/// that of the copy; storage elsewhere (a node's scratch) stays.
pub fn local_root_after(m: &JobManifest, dir: &Path) -> Option<std::path::PathBuf> {
    let local = m.local.clone()?;
    let Some(old) = m.dir.as_deref().filter(|&old| old != dir) else {
        return Some(local);
    };
    if let Ok(inside) = local.strip_prefix(old) {
        return Some(dir.join(inside));
    }
    if local == mpcrs_levels::store::default_local_root(old) {
        return Some(mpcrs_levels::store::default_local_root(dir));
    }
    Some(local)
}

/// The manifest of epoch directory `epoch_dir` of `store`, its L1 images
/// looked for in a copy of the directory where they were inside it.
pub fn read_manifest(
    store: &mpcrs_cr::CheckpointDir,
    epoch_dir: &Path,
) -> Result<JobManifest, String> {
    let mut m = JobManifest::read(&epoch_dir.join(mpcrs_cr::commit::MANIFEST))?;
    let inside = m
        .dir
        .as_deref()
        .zip(m.local.as_deref())
        .is_some_and(|(d, l)| l.starts_with(d));
    if inside {
        m.local = local_root_after(&m, store.root());
    }
    Ok(m)
}

/// Images of every process, per process.
pub type Images = Vec<std::path::PathBuf>;

/// Images in node-local storage, and the host that wrote each.
type WrittenOn = std::collections::HashMap<PathBuf, String>;

/// The host that wrote `path`, if it is a node-local file of the job of
/// `m` (`ROOT/node-N/...`: the host of node N in that run).
fn writer_of(m: &JobManifest, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(m.local.as_ref()?).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    let node: u32 = first.strip_prefix("node-")?.parse().ok()?;
    let q = m.nodes.iter().position(|&n| n == node)?;
    m.hosts.get(q).cloned()
}

/// What [`recoverable`] finds: the manifest, the images, their chains, the
/// level each image comes from, and the images other hosts keep.
type Recoverable = (
    JobManifest,
    Images,
    Vec<Images>,
    Vec<mpcrs_levels::Level>,
    WrittenOn,
);

/// Epoch `k`'s manifest and, for every process, the image to restore it from
/// (see [`crate::recovery`]) and, for an incremental image, the parent images
/// it applies to, newest first (recovered from their epochs' levels alike),
/// saying which processes do not restore their L1 image and why. Fails
/// naming, for a process no level recovers, what is wrong at each level.
fn recoverable(
    store: &mpcrs_cr::CheckpointDir,
    k: u64,
    verifier: &Verifier,
    rebuilt: &str,
    others: Option<&OtherHosts>,
) -> Result<Recoverable, String> {
    use mpcrs_cr::commit::MANIFEST;
    let epoch_dir = store.epoch_dir(k);
    let m = read_manifest(store, &epoch_dir)?;
    if m.processes == 0 || m.processes > m.ranks {
        return Err(format!(
            "{}: {} processes for {} ranks",
            epoch_dir.join(MANIFEST).display(),
            m.processes,
            m.ranks
        ));
    }
    let now = mpcrs_cr::image::ExeIdentity::of(&m.executable)
        .map_err(|e| format!("{}: {e}", m.executable.display()))?;
    let elsewhere = others.and_then(|o| Elsewhere::of(&m, o));
    let recovery = recover(
        &m,
        &epoch_dir,
        k,
        &epoch_dir.join(rebuilt),
        verifier,
        elsewhere.as_ref(),
    )?;
    for note in &recovery.notes {
        mpcrs_settings::report!(warn, "mpcrs-run: {note}");
    }
    let mut kept = WrittenOn::new();
    for path in &recovery.images {
        let header = match &elsewhere {
            Some(e) => e.header(path)?,
            None => HeaderFacts::read(path)?,
        };
        if let Some(host) = writer_of(&m, path) {
            kept.insert(path.clone(), host);
        }
        let exe = mpcrs_cr::image::ExeIdentity {
            path: String::new(),
            size: header.exe_size,
            crc: header.exe_crc,
        };
        if !now.same_file(&exe) {
            return Err(format!(
                "{}: written by a different executable: {} is {} bytes with CRC-32C {:08x} now, \
                 {} bytes with CRC-32C {:08x} in the image",
                path.display(),
                m.executable.display(),
                now.size,
                now.crc,
                header.exe_size,
                header.exe_crc
            ));
        }
    }
    let chains = chains_of(
        store,
        k,
        &recovery.images,
        verifier,
        rebuilt,
        others,
        elsewhere.as_ref(),
        &mut kept,
    )?;
    Ok((m, recovery.images, chains, recovery.levels, kept))
}

/// For each image of epoch `k`'s `images`, the images it applies to,
/// newest first, each recovered from its epoch's levels and verified (empty
/// for a full image): what `mpcrs-ckpt verify` checks of an epoch's chains.
/// Images another host keeps are asked of it as `others` says, and added to
/// `kept` with the host that wrote them where they are node-local; `top` is
/// what answered for epoch `k`'s images.
#[allow(clippy::too_many_arguments)]
pub fn chains_of(
    store: &mpcrs_cr::CheckpointDir,
    k: u64,
    images: &[std::path::PathBuf],
    verifier: &Verifier,
    rebuilt: &str,
    others: Option<&OtherHosts>,
    top: Option<&Elsewhere>,
    kept: &mut WrittenOn,
) -> Result<Vec<Images>, String> {
    let mut recovered: std::collections::HashMap<u64, Images> = Default::default();
    // The other hosts of each parent epoch's run, which know its images, and
    // its manifest.
    let mut elsewhere: std::collections::HashMap<u64, (Option<Elsewhere>, JobManifest)> =
        Default::default();
    let header_of = |path: &Path, e: Option<&Elsewhere>| match e {
        Some(e) => e.header(path),
        None => HeaderFacts::read(path),
    };
    let mut chains = vec![Vec::new(); images.len()];
    for (p, image) in images.iter().enumerate() {
        let mut at = image.clone();
        let header = header_of(image, top)?;
        let mut next_parent = header.parent;
        while let Some(parent) = next_parent {
            let j = parent.epoch;
            if !recovered.contains_key(&j) {
                let dir = store.epoch_dir(j);
                let found = read_manifest(store, &dir).and_then(|m| {
                    let e = others.and_then(|o| Elsewhere::of(&m, o));
                    let r = recover(&m, &dir, j, &dir.join(rebuilt), verifier, e.as_ref())?;
                    for note in &r.notes {
                        mpcrs_settings::report!(warn, "mpcrs-run: {note}");
                    }
                    elsewhere.insert(j, (e, m));
                    Ok(r.images)
                });
                let found = found.map_err(|e| {
                    format!(
                        "its images apply to those of {}, which cannot be recovered: {e}",
                        epoch_name(j)
                    )
                })?;
                recovered.insert(j, found);
            }
            let next = recovered[&j].get(p).cloned().ok_or_else(|| {
                format!(
                    "{}: process {p}'s image applies to {}, which has no image of process {p}",
                    epoch_name(k),
                    epoch_name(j)
                )
            })?;
            let (e, m) = &elsewhere[&j];
            let found = header_of(&next, e.as_ref())?;
            if let Some(host) = writer_of(m, &next) {
                kept.insert(next.clone(), host);
            }
            if found.meta_crc != parent.meta_crc {
                return Err(format!(
                    "{}: its parent {} is another image (metadata CRC-32C {:08x}, not {:08x})",
                    at.display(),
                    next.display(),
                    found.meta_crc,
                    parent.meta_crc
                ));
            }
            chains[p].push(next.clone());
            next_parent = found.parent;
            at = next;
        }
    }
    Ok(chains)
}

/// Recovers the images of epoch `k` from its levels (see
/// [`mpcrs_levels::recovery`]), rebuilding into `rebuilt` what L3 rebuilds;
/// node-local files this host cannot see are asked of (and brought from)
/// the hosts `elsewhere` reaches.
pub fn recover(
    m: &JobManifest,
    epoch_dir: &Path,
    k: u64,
    rebuilt: &Path,
    verifier: &Verifier,
    elsewhere: Option<&Elsewhere>,
) -> Result<mpcrs_levels::recovery::Recovery, String> {
    let reach = Reaching {
        m,
        epoch_dir,
        k,
        verifier,
        elsewhere,
        into: rebuilt,
    };
    mpcrs_levels::recovery::recover_reaching(m, epoch_dir, k, rebuilt, &reach)
        .map_err(|e| format!("{}: {e}", epoch_name(k)))
}

/// How a restart reaches the files of epoch `k`'s levels: here, checked
/// by `verifier`, or through the host that keeps them.
struct Reaching<'a> {
    m: &'a JobManifest,
    epoch_dir: &'a Path,
    k: u64,
    verifier: &'a Verifier,
    elsewhere: Option<&'a Elsewhere>,
    /// Where files brought from other hosts go.
    into: &'a Path,
}

impl Reaching<'_> {
    /// What the host keeping `path` says of it, where another host does.
    fn remote(&self, path: &Path) -> Option<Fact> {
        let e = self.elsewhere.filter(|e| e.keeps(path))?;
        Some(e.fact(self.m, self.epoch_dir, self.k, path))
    }
}

impl mpcrs_levels::recovery::Reach for Reaching<'_> {
    fn check(&self, path: &Path, expected: mpcrs_levels::recovery::Expected) -> Result<(), String> {
        match self.remote(path) {
            Some(Fact::Intact(_)) => Ok(()),
            Some(Fact::Missing) => Err("missing".into()),
            Some(Fact::Present) => Err("is not an image".into()),
            Some(Fact::Damaged(why)) => Err(why),
            None if !path.is_file() => Err("missing".into()),
            None => {
                self.verifier.check(path)?;
                crate::verifier::check_owner(path, expected, self.m.job)
            }
        }
    }

    fn exists(&self, path: &Path) -> bool {
        match self.remote(path) {
            Some(fact) => matches!(fact, Fact::Present | Fact::Intact(_)),
            None => path.is_file(),
        }
    }

    fn readable(&self, path: &Path) -> Result<PathBuf, String> {
        match self.elsewhere {
            Some(e) => e.bring(path, self.into),
            None => Ok(path.to_path_buf()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RestartPlan;
    use mpcrs_levels::Level;

    fn plan(levels: Vec<Level>) -> RestartPlan {
        RestartPlan {
            specs: Vec::new(),
            program: "app".into(),
            announcement: String::new(),
            epoch: 3,
            levels,
            committed: None,
        }
    }

    #[test]
    fn the_levels_used_name_the_processes_that_needed_another_level() {
        assert_eq!(plan(vec![Level::Local; 4]).levels_used(), "L1");
        assert_eq!(
            plan(vec![Level::Local, Level::Partner]).levels_used(),
            "L1; process 1 from L2 (partner)"
        );
        assert_eq!(plan(vec![Level::Global; 2]).levels_used(), "L4 (global)");
        assert_eq!(
            plan(vec![Level::Erasure, Level::Global]).levels_used(),
            "process 0 from L3 (erasure), process 1 from L4 (global)"
        );
    }
}
