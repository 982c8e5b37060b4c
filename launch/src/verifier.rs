//! Whole-image checks for a restart: each file read and checksummed once,
//! the files of an epoch's chains side by side on every core. Choosing the
//! epoch and, per process, the level to restore from asks whether files are
//! whole one by one, walking each chain from its newest image; reading every
//! byte is most of a restart's time, so the files that walk will most likely
//! ask about are verified ahead, together.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use mpcrs_cr::commit::MANIFEST;
use mpcrs_settings::manifest::JobManifest;

#[derive(Default)]
pub struct Verifier {
    outcomes: Mutex<HashMap<PathBuf, Result<(), String>>>,
}

impl Verifier {
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the image at `path` is whole (its checksums verify): what is
    /// wrong if not. Each file is verified once.
    pub fn check(&self, path: &Path) -> Result<(), String> {
        if let Some(known) = self.outcomes.lock().unwrap().get(path) {
            return known.clone();
        }
        let outcome = verify(path);
        self.remember_outcome(path, outcome.clone());
        outcome
    }

    /// Records what a caller that verified `path` itself found.
    pub fn remember(
        &self,
        path: &Path,
        verified: &Result<mpcrs_cr::image::Verified, mpcrs_cr::ImageError>,
    ) {
        self.remember_outcome(path, outcome(verified));
    }

    fn remember_outcome(&self, path: &Path, outcome: Result<(), String>) {
        self.outcomes
            .lock()
            .unwrap()
            .insert(path.to_path_buf(), outcome);
    }

    /// Verifies, side by side, the images epoch `k`'s restore will most
    /// likely read and that are not known yet: per process the first file
    /// present among its levels (L1, partner copy, L4) and, down its chain,
    /// its parents' likewise.
    pub fn ahead(&self, store: &mpcrs_cr::CheckpointDir, k: u64) {
        let mut files = likely_chain_files(store, k);
        {
            let known = self.outcomes.lock().unwrap();
            files.retain(|f| !known.contains_key(f));
        }
        let outcomes = mpcrs_levels::recovery::side_by_side(files.len(), |i| verify(&files[i]));
        self.outcomes
            .lock()
            .unwrap()
            .extend(files.into_iter().zip(outcomes));
    }
}

fn verify(path: &Path) -> Result<(), String> {
    outcome(&mpcrs_cr::verify(path))
}

fn outcome(
    verified: &Result<mpcrs_cr::image::Verified, mpcrs_cr::ImageError>,
) -> Result<(), String> {
    verified
        .as_ref()
        .map(|_| ())
        .map_err(|e| e.problem.to_string())
}

/// The files found by following, for each process of epoch `k`, its
/// image's parents through the first file present at each epoch; a walk
/// stops where a manifest or header does not read.
fn likely_chain_files(store: &mpcrs_cr::CheckpointDir, k: u64) -> Vec<PathBuf> {
    let mut manifests: HashMap<u64, Option<JobManifest>> = HashMap::new();
    let mut manifest = |j: u64| {
        manifests
            .entry(j)
            .or_insert_with(|| JobManifest::read(&store.epoch_dir(j).join(MANIFEST)).ok())
            .clone()
    };
    let Some(m) = manifest(k) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for p in 0..m.processes {
        let mut epoch = Some(k);
        while let Some(j) = epoch.take() {
            let Some(mj) = manifest(j) else { break };
            let f = mpcrs_levels::recovery::level_files(&mj, &store.epoch_dir(j), j, p);
            let present = f
                .local
                .into_iter()
                .chain(f.partner.map(|(copy, _)| copy))
                .chain(std::iter::once(f.global))
                .find(|path| path.is_file());
            let Some(path) = present else { break };
            if let Ok((_, header)) = mpcrs_cr::image::read_header(&path) {
                epoch = header.parent.map(|parent| parent.epoch).filter(|&e| e < j);
            }
            out.push(path);
        }
    }
    out
}

/// Whether the image at `path` is the one `expected` names: an image records
/// its job, epoch and process (images of versions before 4, or taken
/// outside a job, record none and pass). `job`: the job's key, as its
/// manifest records it.
pub fn check_owner(
    path: &Path,
    expected: mpcrs_levels::recovery::Expected,
    job: Option<u64>,
) -> Result<(), String> {
    let (_, header) = mpcrs_cr::image::read_header(path).map_err(|e| e.problem)?;
    let Some(owner) = header.owner else {
        return Ok(());
    };
    if job.is_some_and(|j| j != owner.job) {
        return Err(format!(
            "is an image of another job (key {:x}, not {:x})",
            owner.job,
            job.unwrap_or_default()
        ));
    }
    if owner.epoch != expected.epoch || owner.process as usize != expected.process {
        return Err(format!(
            "is process {}'s image of epoch {}, not process {}'s of epoch {}",
            owner.process, owner.epoch, expected.process, expected.epoch
        ));
    }
    Ok(())
}
