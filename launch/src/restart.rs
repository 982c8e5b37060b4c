//! `mpcrs-run --restart DIR`: the restart policy. The epoch to resume from (the
//! latest complete one, or `--epoch K`), every check that can be made before a
//! process starts, and the processes that restore the epoch's images in the
//! layout of the first run.

use std::path::Path;
use std::process::Command;

use mpcrs_cr::commit::epoch_name;
use mpcrs_settings::manifest::JobManifest;
use mpcrs_settings::variables as env;

use crate::options::Options;
use crate::processes::{place, Launch};
use crate::supervise;
use crate::verifier::Verifier;

/// The processes that restart the job checkpointed in `dir`, in the layout of
/// the first run (one image each; several processes get a new key-value store)
/// on this host or on the hosts given, and the program's name. Everything that can be checked before a process
/// starts is: the epoch is complete, its manifest reads, every image is there
/// with a sound header, and the executable is the one that wrote them.
pub fn restart_specs(
    args: &Options,
    dir: &std::path::Path,
) -> Result<(Vec<supervise::ProcessSpec>, String), String> {
    use std::os::unix::process::CommandExt;
    let store = mpcrs_cr::CheckpointDir::open(dir).map_err(|e| e.to_string())?;
    let epochs = store.epochs().map_err(|e| e.to_string())?;
    // The epochs to try, newest first: the one asked for only, or from the
    // latest down.
    let tried: Vec<u64> = match args.epoch {
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
        match recoverable(&store, k, &verifier) {
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
    let Some((k, (m, images, chains))) = chosen else {
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
    cmd.env(env::CHECKPOINT_KEEP.name, args.keep.to_string());
    cmd.env(env::FULL_EVERY.name, args.full_every.to_string());
    if let Some(c) = &args.compress {
        cmd.env(env::COMPRESS.name, c);
    }
    cmd.env(
        env::CHECKPOINT_LOCAL.name,
        crate::options::local_root(
            args.checkpoint_local.as_deref().or(m.local.as_deref()),
            &dir,
        ),
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
    mpcrs_settings::report!(
        info,
        "mpcrs-run: restarting {program} ({} ranks{}) from {}",
        m.ranks,
        if m.processes > 1 {
            format!(", {} processes", m.processes)
        } else {
            String::new()
        },
        epoch_dir.display()
    );
    let absolute = |p: &std::path::PathBuf| {
        std::path::absolute(p)
            .unwrap_or_else(|_| p.clone())
            .to_string_lossy()
            .into_owned()
    };
    let own_env = |p: usize| {
        let mut env = vec![(
            mpcrs_cr::restore::RESTORE_ENV.to_string(),
            absolute(&images[p]),
        )];
        // Every image of the chain was verified whole just now.
        let verified: Vec<std::path::PathBuf> = std::iter::once(&images[p])
            .chain(&chains[p])
            .map(|i| std::path::PathBuf::from(absolute(i)))
            .collect();
        env.push((
            mpcrs_cr::restore::vouch::VOUCHED_ENV.to_string(),
            mpcrs_cr::restore::vouch::vouch_for(verified.iter().map(|p| p.as_path())),
        ));
        if !chains[p].is_empty() {
            let chain: Vec<String> = chains[p].iter().map(absolute).collect();
            env.push((
                mpcrs_cr::restore::chain::CHAIN_ENV.to_string(),
                chain.join("\n"),
            ));
        }
        env
    };
    let launch = Launch {
        restorable: true,
        own_env: &own_env,
    };
    if m.processes > 1 {
        // The restored processes reach the new key-value store through the
        // descriptor the restorer carries over for them (on this host).
        cmd.env(mpcrs_cr::restore::CARRY_FDS_ENV, mpcrs_pmi::ENV_FD);
    }
    // Hosts may differ from the first run's; the checkpoint directory must then be
    // at the same path on each (a shared file system).
    let specs = place(args, cmd, m.processes, m.ranks, &launch).map_err(|(_, e)| e)?;
    Ok((specs, program))
}

/// Images of every process, per process.
pub type Images = Vec<std::path::PathBuf>;

/// Epoch `k`'s manifest and, for every process, the image to restore it from
/// (see [`crate::recovery`]) and, for an incremental image, the parent images
/// it applies to, newest first (recovered from their epochs' levels alike),
/// saying which processes do not restore their L1 image and why. Fails
/// naming, for a process no level recovers, what is wrong at each level.
fn recoverable(
    store: &mpcrs_cr::CheckpointDir,
    k: u64,
    verifier: &Verifier,
) -> Result<(JobManifest, Images, Vec<Images>), String> {
    use mpcrs_cr::commit::MANIFEST;
    let epoch_dir = store.epoch_dir(k);
    let m = JobManifest::read(&epoch_dir.join(MANIFEST))?;
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
    let recovery = recover(&m, &epoch_dir, k, &epoch_dir.join("rebuilt"), verifier)?;
    for note in &recovery.notes {
        mpcrs_settings::report!(warn, "mpcrs-run: {note}");
    }
    for path in &recovery.images {
        let (_, header) = mpcrs_cr::image::read_header(path).map_err(|e| e.to_string())?;
        if !now.same_file(&header.exe) {
            return Err(format!(
                "{}: written by a different executable: {} is {} bytes with CRC-32C {:08x} now, \
                 {} bytes with CRC-32C {:08x} in the image",
                path.display(),
                m.executable.display(),
                now.size,
                now.crc,
                header.exe.size,
                header.exe.crc
            ));
        }
    }
    let chains = chains_of(store, k, &recovery.images, verifier)?;
    Ok((m, recovery.images, chains))
}

/// For each image of epoch `k`'s `images`, the images it applies to,
/// newest first, each recovered from its epoch's levels and verified (empty
/// for a full image): what `mpcrs-ckpt verify` checks of an epoch's chains.
pub fn chains_of(
    store: &mpcrs_cr::CheckpointDir,
    k: u64,
    images: &[std::path::PathBuf],
    verifier: &Verifier,
) -> Result<Vec<Images>, String> {
    use mpcrs_cr::commit::MANIFEST;
    let mut recovered: std::collections::HashMap<u64, Images> = Default::default();
    let mut chains = vec![Vec::new(); images.len()];
    for (p, image) in images.iter().enumerate() {
        let mut at = image.clone();
        let (_, header) = mpcrs_cr::image::read_header(image).map_err(|e| e.to_string())?;
        let mut next_parent = header.parent;
        while let Some(parent) = next_parent {
            let j = parent.epoch;
            if !recovered.contains_key(&j) {
                let dir = store.epoch_dir(j);
                let found = JobManifest::read(&dir.join(MANIFEST)).and_then(|m| {
                    let r = recover(&m, &dir, j, &dir.join("rebuilt"), verifier)?;
                    for note in &r.notes {
                        mpcrs_settings::report!(warn, "mpcrs-run: {note}");
                    }
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
            let (_, found) = mpcrs_cr::image::read_header(&next).map_err(|e| e.to_string())?;
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
/// [`mpcrs_levels::recovery`]), rebuilding into `rebuilt` what L3 rebuilds.
pub fn recover(
    m: &JobManifest,
    epoch_dir: &Path,
    k: u64,
    rebuilt: &Path,
    verifier: &Verifier,
) -> Result<mpcrs_levels::recovery::Recovery, String> {
    mpcrs_levels::recovery::recover(m, epoch_dir, k, rebuilt, &|p| verifier.check(p))
        .map_err(|e| format!("{}: {e}", epoch_name(k)))
}
