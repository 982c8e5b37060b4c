//! Application-level checkpoints (seed 002 section 6, FTI's model): each rank
//! protects a few variables, checkpoints them at a level, and after a restart
//! (a new run of the program, no image restored) recovers them. The files go
//! through the same levels as images (L1 node-local, L2 partner copy, L3
//! Reed-Solomon, L4 global), made by the same helper tasks; FTI's dedicated
//! head process is those helpers, so no rank is taken from the application.
//!
//! Layout: one file per process and checkpoint, holding a section per rank of
//! the process (data.rs), in `ckpt_dir/node-N/epoch-K/`; the record of each
//! checkpoint (its manifest: processes, hosts, levels, the process of every
//! rank) in `glbl_dir/epoch-K/`, which L4 files join. A checkpoint is taken
//! by every rank of the communicator given at [`Ft::init`] together.
//!
//! The C API (fti.h, in the C ABI crate) is a per-rank registry of protected
//! pointers over this module.

pub mod config;
pub mod data;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use mpcrs_levels::{blocking, Level};
use mpcrs_settings::JobManifest;

pub use config::{Config, ConfigError};
pub use data::{Stored, Var};

use crate::checkpoint::{Settings, Stream};
use crate::comm::Communicator;
use crate::datatype::{bytes_of_mut, Equivalence};
use crate::op::Op;

/// Why a call failed; the C API prints it on one line with the call and rank.
#[derive(Debug, thiserror::Error)]
pub enum FtError {
    #[error("{0}")]
    Config(#[from] ConfigError),
    #[error(
        "level {0} is not one of 1 (local), 2 (partner copy), 3 (Reed-Solomon), 4 (global) and 5 (mpcrs's memory level)"
    )]
    Level(i32),
    #[error("{0}")]
    Io(String),
    #[error("{0}")]
    Mpi(#[from] crate::Error),
    #[error("no checkpoint to recover from")]
    NothingToRecover,
    #[error("{0}")]
    Recover(String),
}

/// The checkpoints of this process (one configuration per process: every
/// rank of it gives the same file).
struct Shared {
    config_path: PathBuf,
    config: Config,
    settings: &'static Settings,
}

static SHARED: OnceLock<Result<Shared, String>> = OnceLock::new();

fn shared(path: &Path) -> Result<&'static Shared, FtError> {
    let s = SHARED.get_or_init(|| {
        let config = Config::read(path).map_err(|e| e.to_string())?;
        let job = crate::config::JobConfig::from_env()?;
        let dir = mpcrs_cr::CheckpointDir::create(&config.global_dir)
            .map_err(|e| format!("glbl_dir {}: {e}", config.global_dir.display()))?;
        mpcrs_cr::commit::private_dir_all(&config.local_dir)
            .map_err(|e| format!("ckpt_dir {}: {e}", config.local_dir.display()))?;
        let settings = Box::leak(Box::new(Settings {
            dir,
            // FTI keeps the last checkpoint only.
            keep: 1,
            local: mpcrs_levels::store::LocalStore::new(&config.local_dir),
            me: job.process,
            // Protected data is not an image: its files name no owner.
            job: 0,
            nodes: job.nodes.clone(),
            node_names: job.node_names.clone(),
            schedule: mpcrs_levels::Schedule::default_for(1),
            group_size: config.group_size,
            inline: !config.head,
            stream: Stream::Application,
            // Protected data is written whole at every checkpoint.
            full_every: 1,
            compression: None,
            // Protected data is not an image of the process.
            staging: mpcrs_settings::size::SizeOrAuto::Off,
            neighbours: 1,
            // FTI's directories are the application's, shared by its runs.
            claims_dir: false,
        }));
        if !config.ignored.is_empty() {
            mpcrs_settings::report!(
                warn,
                "mpcrs: {}: not implemented by mpcrs, ignored: {}",
                path.display(),
                config.ignored.join(", ")
            );
        }
        Ok(Shared {
            config_path: path.to_path_buf(),
            config,
            settings,
        })
    });
    match s {
        Ok(s) if s.config_path == path => Ok(s),
        Ok(s) => Err(FtError::Io(format!(
            "this process's ranks use {} already; one configuration per job",
            s.config_path.display()
        ))),
        Err(e) => Err(FtError::Io(e.clone())),
    }
}

/// A checkpoint found at init, recovered from its levels: the file of every
/// process of the run that wrote it, and the process of every rank.
#[derive(Debug, Clone)]
struct Found {
    epoch: u64,
    files: Vec<PathBuf>,
    rank_processes: Vec<u32>,
    /// Held at the memory level ([`MEMORY_LEVEL`]), not in files.
    in_memory: bool,
}

/// mpcrs's memory level for `FTI_Checkpoint` (FTI numbers its levels 1 to
/// 4): each rank's protected data goes to CRaaS (`crate::craas`), held in
/// the memory of the job's checkpoint service (`--ckpt-service`), or kept by
/// its process and flushed to the checkpoint directory, instead of files of
/// the levels. Recovery takes it when it is newer than any checkpoint in
/// files.
pub const MEMORY_LEVEL: i32 = 5;

/// The CRaaS checkpoints of the memory level, taking turns by epoch: each
/// checkpoint waits until the one before is held, so every rank holds the
/// epoch before the newest when a process dies during a checkpoint.
fn memory_slot(epoch: u64) -> &'static str {
    if epoch % 2 == 1 {
        "fti-memory-1"
    } else {
        "fti-memory-0"
    }
}

/// One rank's application checkpoints.
pub struct Ft {
    shared: &'static Shared,
    comm: Communicator,
    /// The ranks of this process in `comm`, and the process of every rank
    /// of `comm` (recorded with each checkpoint).
    local: Communicator,
    rank_processes: Vec<u32>,
    found: Option<Found>,
    /// This rank's variables of `found`, once read (until the next
    /// checkpoint: recovering reads the file once).
    recovered: std::cell::OnceCell<Vec<Stored>>,
    /// Checkpoints taken by this run, and the last one.
    taken: u64,
    last: Option<u64>,
    /// Whether `last` went to the memory level.
    last_in_memory: bool,
    started: std::time::Instant,
    /// The minute of the last checkpoint FTI_Snapshot took.
    snapshot_minute: u64,
}

impl Ft {
    /// Starts application checkpoints for the calling rank, one of `comm`'s
    /// (collective over `comm`), with the configuration file at `config`;
    /// finds the newest checkpoint a previous run left, recovering lost files
    /// from the levels that have them.
    pub fn init(config: &Path, comm: &Communicator) -> Result<Ft, FtError> {
        let shared = shared(config);
        // Every rank learns whether every rank could read it.
        let all = all_ok(comm, shared.is_ok())?;
        let shared = shared?;
        if !all {
            return Err(FtError::Io(
                "another rank could not read the configuration".into(),
            ));
        }
        let comm = comm.dup()?;
        let local = comm
            .split(Some(shared.settings.me as i32), comm.rank())?
            .expect("every rank has a color");
        let mut processes = vec![0i32; comm.size() as usize];
        comm.all_gather(&[shared.settings.me as i32], &mut processes)?;
        let found = find_newest(&comm, shared)?;
        Ok(Ft {
            shared,
            comm,
            local,
            rank_processes: processes.into_iter().map(|p| p as u32).collect(),
            found,
            recovered: std::cell::OnceCell::new(),
            taken: 0,
            last: None,
            last_in_memory: false,
            started: std::time::Instant::now(),
            snapshot_minute: 0,
        })
    }

    /// The configuration in use.
    pub fn config(&self) -> &Config {
        &self.shared.config
    }

    /// Whether a previous run left a checkpoint to recover (FTI_Status): its
    /// epoch.
    pub fn status(&self) -> Option<u64> {
        self.found.as_ref().map(|f| f.epoch)
    }

    /// Checkpoints `vars` at `level` (1 to 4), collectively; returns the
    /// epoch. A failure leaves the previous checkpoint the one to recover.
    pub fn checkpoint(&mut self, vars: &[Var<'_>], level: i32) -> Result<u64, FtError> {
        if level == MEMORY_LEVEL {
            return self.checkpoint_in_memory(vars);
        }
        let levels = match level {
            1 => vec![Level::Local],
            2 => vec![Level::Local, Level::Partner],
            3 => vec![Level::Local, Level::Erasure],
            4 => vec![Level::Local, Level::Global],
            l => return Err(FtError::Level(l)),
        };
        let s = self.shared.settings;
        // The last checkpoint's levels are made first (its peers wait for
        // them, and FTI's head finishes one checkpoint before the next).
        let draining = std::time::Instant::now();
        self.in_process_lead(crate::checkpoint::drain_helpers)?;
        tracing::debug!(
            ms = draining.elapsed().as_secs_f64() * 1e3,
            "waited for the last checkpoint's helpers"
        );
        let mut k = [0u64];
        let pending = if self.comm.rank() == 0 {
            let pending = s
                .dir
                .next_epoch()
                .and_then(|k| s.dir.begin(k))
                .map_err(|e| format!("glbl_dir {}: {e}", s.dir.root().display()));
            if let Ok(p) = &pending {
                k[0] = p.epoch();
            }
            Some(pending)
        } else {
            None
        };
        self.comm.broadcast(&mut k, 0)?;
        let k = k[0];
        let written = if k == 0 {
            Err("no epoch begun".to_string())
        } else {
            self.write_l1(k, vars)
        };
        let all = all_ok(&self.comm, written.is_ok())?;
        let mut committed = [0i32];
        if let Some(pending) = pending {
            committed[0] = match (pending, all) {
                (Ok(p), true) => {
                    let m = self.manifest(&levels);
                    match p.commit(m.to_json().as_bytes()) {
                        Ok(_) => 1,
                        Err(e) => {
                            report_line(&format!(
                                "checkpoint {k} not committed, the previous one stays: {e}"
                            ));
                            0
                        }
                    }
                }
                (Err(e), _) => {
                    report_line(&e);
                    0
                }
                // The partial epoch stays behind; the next begin removes it.
                (Ok(_), _) => 0,
            };
        }
        self.comm.broadcast(&mut committed, 0)?;
        if committed[0] == 0 {
            return Err(FtError::Io(match written {
                Err(e) => e,
                Ok(()) => {
                    "another rank could not write its data; the previous checkpoint stays".into()
                }
            }));
        }
        self.taken += 1;
        self.last = Some(k);
        self.last_in_memory = false;
        self.recovered = std::cell::OnceCell::new();
        let inline = levels
            .iter()
            .any(|l| l.number() > 1 && self.shared.config.inline_level(l.number()));
        self.in_process_lead(|| {
            s.post_process_levels(k, levels.clone());
            if inline {
                crate::checkpoint::drain_helpers();
            }
        })?;
        Ok(k)
    }

    /// Checkpoints `vars` at the memory level (collectively): a CRaaS commit
    /// per rank, after the last one is held.
    fn checkpoint_in_memory(&mut self, vars: &[Var<'_>]) -> Result<u64, FtError> {
        use crate::craas;
        let held_before = match self.last {
            Some(k) => craas::wait(memory_slot(k)).map_err(|e| e.to_string()),
            None => Ok(()),
        };
        let mut k = [0u64];
        if self.comm.rank() == 0 {
            let next = self.shared.settings.dir.next_epoch().unwrap_or(1);
            k[0] = next.max(self.last.map_or(0, |l| l + 1));
        }
        self.comm.broadcast(&mut k, 0)?;
        let k = k[0];
        let slot = memory_slot(k);
        let staged = held_before.and_then(|()| {
            let e = |x: craas::CraasError| x.to_string();
            for (i, v) in vars.iter().enumerate() {
                craas::ckpt_array(slot, &format!("var-{}", v.id), v.bytes).map_err(e)?;
                craas::ckpt_index(slot, &format!("id-{i}"), v.id as i64).map_err(e)?;
                craas::ckpt_index(slot, &format!("size-{}", v.id), v.elem_size as i64)
                    .map_err(e)?;
                craas::ckpt_index(slot, &format!("len-{}", v.id), v.bytes.len() as i64)
                    .map_err(e)?;
            }
            craas::ckpt_index(slot, "vars", vars.len() as i64).map_err(e)?;
            craas::ckpt_index(slot, "epoch", k as i64).map_err(e)?;
            craas::commit(slot).map_err(e)?;
            // Without a head, levels are made inline: held before the call
            // returns. With one, the helpers send it while the ranks go on.
            if !self.shared.config.head {
                craas::wait(slot).map_err(e)?;
            }
            Ok(())
        });
        if !all_ok(&self.comm, staged.is_ok())? {
            return Err(FtError::Io(match staged {
                Err(e) => format!("memory level: {e}"),
                Ok(_) => "memory level: another rank could not stage its data; the previous checkpoint stays".into(),
            }));
        }
        self.taken += 1;
        self.last = Some(k);
        self.last_in_memory = true;
        self.recovered = std::cell::OnceCell::new();
        Ok(k)
    }

    /// Runs `f` once per process, while the process's other ranks wait.
    fn in_process_lead(&self, f: impl FnOnce()) -> Result<(), FtError> {
        self.local.barrier()?;
        if self.local.rank() == 0 {
            f();
        }
        self.local.barrier()?;
        Ok(())
    }

    /// Writes this process's L1 file of epoch `k`: each rank its section at
    /// its offset, the first rank of the process the header, durably.
    fn write_l1(&self, k: u64, vars: &[Var<'_>]) -> Result<(), String> {
        let s = self.shared.settings;
        let len = data::section_len(vars);
        let mut before = [0u64];
        let mut total = [0u64];
        let coll = |e: crate::Error| e.to_string();
        self.local
            .exscan(&[len], &mut before, &Op::Sum)
            .map_err(coll)?;
        self.local
            .all_reduce(&[len], &mut total, &Op::Sum)
            .map_err(coll)?;
        if self.local.rank() == 0 {
            before[0] = 0;
        }
        let dir = s.local.epoch_dir(s.node(), k);
        let path = s.local.image(s.node(), k, s.me);
        let partial = path.with_extension("partial");
        let io = crate::checkpoint::helper_io();
        let created: Result<(), String> = if self.local.rank() == 0 {
            let r = blocking(&io, || {
                mpcrs_cr::commit::private_dir_all(&dir)?;
                let f = mpcrs_cr::commit::create_private(&partial)?;
                f.set_len(data::HEADER_LEN + total[0])
            });
            r.map_err(|e| format!("{}: {e}", partial.display()))
        } else {
            Ok(())
        };
        let ok = all_ok(&self.local, created.is_ok()).map_err(coll)?;
        created?;
        if !ok {
            return Err("another rank of this process could not create its file".into());
        }
        let rank = self.comm.rank() as u32;
        let wrote = blocking(&io, || {
            let f = std::fs::OpenOptions::new().write(true).open(&partial)?;
            data::write_section(&f, data::HEADER_LEN + before[0], rank, vars)
        })
        .map_err(|e| format!("{}: {e}", partial.display()));
        let ok = all_ok(&self.local, wrote.is_ok()).map_err(coll)?;
        wrote?;
        if !ok {
            return Err("another rank of this process could not write its data".into());
        }
        if self.local.rank() == 0 {
            let sections = self.local.size() as u32;
            blocking(&io, || {
                let f = std::fs::OpenOptions::new().write(true).open(&partial)?;
                data::write_header(&f, sections, data::HEADER_LEN + total[0])?;
                f.sync_all()?;
                std::fs::rename(&partial, &path)?;
                mpcrs_cr::commit::sync_dir(&dir)
            })
            .map_err(|e| format!("{}: {e}", path.display()))?;
        }
        Ok(())
    }

    /// The manifest of a checkpoint (its levels planned, L1 complete).
    fn manifest(&self, levels: &[Level]) -> JobManifest {
        let s = self.shared.settings;
        let hosts = s
            .nodes
            .iter()
            .map(|&n| s.node_names[n as usize].clone())
            .collect();
        let mut m = JobManifest::of_this_job(self.comm.size() as usize, s.nodes.len(), hosts);
        m.local = Some(s.local.root().to_path_buf());
        m.nodes = s.nodes.clone();
        m.levels = levels.iter().map(|l| l.number()).collect();
        m.complete = vec![Level::Local.number()];
        m.group_size = s.group_size;
        m.rank_processes = self.rank_processes.clone();
        m
    }

    /// Recovers the slice protected as `id` into `into`, whose length and
    /// element size must be those checkpointed ([`Ft::recover_vec`] takes
    /// the stored length).
    pub fn recover_slice<T: Equivalence>(&self, id: i32, into: &mut [T]) -> Result<(), FtError> {
        let v = self.stored_var(id, std::mem::size_of::<T>())?;
        let into = bytes_of_mut(into);
        if v.bytes.len() != into.len() {
            return Err(FtError::Recover(format!(
                "variable {id}: {} bytes given, {} stored",
                into.len(),
                v.bytes.len()
            )));
        }
        into.copy_from_slice(&v.bytes);
        Ok(())
    }

    /// Recovers the value protected as `id`.
    pub fn recover_value<T: Equivalence>(&self, id: i32, into: &mut T) -> Result<(), FtError> {
        self.recover_slice(id, std::slice::from_mut(into))
    }

    /// The slice protected as `id`, at its stored length.
    pub fn recover_vec<T: Equivalence + Default>(&self, id: i32) -> Result<Vec<T>, FtError> {
        let v = self.stored_var(id, std::mem::size_of::<T>())?;
        let mut out = vec![T::default(); v.bytes.len() / std::mem::size_of::<T>().max(1)];
        bytes_of_mut(&mut out).copy_from_slice(&v.bytes);
        Ok(out)
    }

    /// The stored variable `id`, whose elements must be `elem_size` bytes.
    fn stored_var(&self, id: i32, elem_size: usize) -> Result<&Stored, FtError> {
        let v =
            self.stored()?.iter().find(|v| v.id == id).ok_or_else(|| {
                FtError::Recover(format!("variable {id} is not in the checkpoint"))
            })?;
        if v.elem_size as usize != elem_size {
            return Err(FtError::Recover(format!(
                "variable {id}: elements of {elem_size} bytes asked for, {} stored",
                v.elem_size
            )));
        }
        Ok(v)
    }

    /// This rank's variables in the checkpoint found at init (read once,
    /// their checksum verified).
    pub fn stored(&self) -> Result<&[Stored], FtError> {
        if let Some(v) = self.recovered.get() {
            return Ok(v);
        }
        let f = self.found.as_ref().ok_or(FtError::NothingToRecover)?;
        if f.in_memory {
            let v = stored_in_memory(f.epoch).map_err(FtError::Recover)?;
            return Ok(self.recovered.get_or_init(|| v));
        }
        let me = self.comm.rank() as usize;
        let p = *f.rank_processes.get(me).ok_or_else(|| {
            FtError::Recover(format!(
                "the checkpoint has {} ranks; this run has more",
                f.rank_processes.len()
            ))
        })? as usize;
        let path = &f.files[p];
        let v = data::read_rank(path, me as u32)
            .map_err(|e| FtError::Recover(format!("{}: {e}", path.display())))?;
        Ok(self.recovered.get_or_init(|| v))
    }

    /// FTI_Snapshot's decision, collectively: the highest level whose
    /// interval (minutes, from the configuration) ends now, if any.
    pub fn snapshot_level(&mut self) -> Result<Option<i32>, FtError> {
        let mut due = [0i32];
        if self.comm.rank() == 0 {
            let minute = self.started.elapsed().as_secs() / 60;
            if let Some(level) = snapshot_due(
                minute,
                self.snapshot_minute,
                &self.shared.config.snapshot_minutes,
                self.shared.config.snapshot_memory_minutes,
            ) {
                due[0] = level;
                self.snapshot_minute = minute;
            }
        }
        self.comm.broadcast(&mut due, 0)?;
        Ok((due[0] > 0).then_some(due[0]))
    }

    /// Ends application checkpoints (collective): the last checkpoint's
    /// levels made, then every checkpoint removed, or, with keep_last_ckpt,
    /// the last one kept and flushed to L4.
    pub fn finalize(self) -> Result<(), FtError> {
        let s = self.shared.settings;
        self.in_process_lead(crate::checkpoint::drain_helpers)?;
        self.comm.barrier()?;
        if self.shared.config.keep_last && self.last_in_memory {
            // Kept where the memory level keeps it, once held there.
            if let Some(k) = self.last {
                crate::craas::wait(memory_slot(k)).map_err(|e| FtError::Io(e.to_string()))?;
            }
        } else if self.shared.config.keep_last {
            if let Some(k) = self.last {
                let m = JobManifest::read(&s.dir.epoch_dir(k).join(mpcrs_cr::commit::MANIFEST))
                    .map_err(FtError::Io)?;
                if !m.complete.contains(&Level::Global.number()) {
                    self.in_process_lead(|| {
                        s.post_process_levels(k, vec![Level::Local, Level::Global]);
                        crate::checkpoint::drain_helpers();
                    })?;
                }
            }
        } else {
            // This run's checkpoints and those it recovered from.
            self.in_process_lead(|| {
                let _ = std::fs::remove_dir_all(s.local.node_dir(s.node()));
            })?;
            self.comm.barrier()?;
            if self.comm.rank() == 0 {
                remove_epochs(&s.dir);
            }
            for slot in [memory_slot(0), memory_slot(1)] {
                crate::craas::delete(slot).map_err(|e| FtError::Io(e.to_string()))?;
            }
        }
        self.comm.barrier()?;
        Ok(())
    }
}

/// The level FTI_Snapshot checkpoints at in minute `minute` of the run, the
/// last one it checkpointed in being `last`: the highest level whose
/// interval (`every[L-1]` minutes, 0 for none) ends then, else the memory
/// level when its interval (`memory` minutes) does, once a minute.
fn snapshot_due(minute: u64, last: u64, every: &[u64; 4], memory: u64) -> Option<i32> {
    if minute <= last {
        return None;
    }
    (1..=4)
        .rev()
        .find(|&l| every[l - 1] > 0 && minute.is_multiple_of(every[l - 1]))
        .map(|l| l as i32)
        .or_else(|| (memory > 0 && minute.is_multiple_of(memory)).then_some(MEMORY_LEVEL))
}

/// Removes every epoch (and `latest`) of `dir`, leaving the directory.
fn remove_epochs(dir: &mpcrs_cr::CheckpointDir) {
    let Ok(entries) = std::fs::read_dir(dir.root()) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("epoch-") {
            let _ = std::fs::remove_dir_all(e.path());
        } else if name == "latest" {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// The newest checkpoint left in the global directory that the levels
/// recover, looked for by rank 0 and told to every rank.
fn find(comm: &Communicator, shared: &Shared) -> Result<Option<Found>, FtError> {
    let s = shared.settings;
    let mut text = Vec::new();
    if comm.rank() == 0 {
        let found = newest_recoverable(&s.dir, comm.size() as usize);
        text = match found {
            Some(f) => format!(
                "{}\n{}\n{}",
                f.epoch,
                f.rank_processes
                    .iter()
                    .map(|p| p.to_string())
                    .collect::<Vec<_>>()
                    .join(" "),
                f.files
                    .iter()
                    .map(|p| p.to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("\n")
            )
            .into_bytes(),
            None => Vec::new(),
        };
    }
    let mut len = [text.len() as u64];
    comm.broadcast(&mut len, 0)?;
    text.resize(len[0] as usize, 0);
    comm.broadcast(&mut text, 0)?;
    if text.is_empty() {
        return Ok(None);
    }
    let text = String::from_utf8_lossy(&text);
    let mut lines = text.lines();
    let epoch = lines.next().and_then(|l| l.parse().ok()).unwrap_or(0);
    let rank_processes = lines
        .next()
        .unwrap_or("")
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect();
    let files = lines.map(PathBuf::from).collect();
    Ok(Some(Found {
        epoch,
        files,
        rank_processes,
        in_memory: false,
    }))
}

/// The newest checkpoint: in files ([`find`]) or at the memory level,
/// whichever is newer (collective).
fn find_newest(comm: &Communicator, shared: &Shared) -> Result<Option<Found>, FtError> {
    let in_files = find(comm, shared)?;
    // Each rank's newest epoch held at the memory level; every rank holds
    // the smallest of them (see `memory_slot`).
    let held: Vec<u64> = [0, 1]
        .iter()
        .filter_map(|&s| {
            let slot = memory_slot(s);
            crate::craas::rst_index(slot, "epoch")
                .ok()
                .flatten()
                .map(|e| e as u64)
        })
        .collect();
    let mut k = [0u64];
    comm.all_reduce(&[held.iter().copied().max().unwrap_or(0)], &mut k, &Op::Min)?;
    let k = k[0];
    let newer = k > 0 && in_files.as_ref().is_none_or(|f| k > f.epoch);
    if !all_ok(comm, !newer || held.contains(&k))? {
        report_line(&format!(
            "the memory level's checkpoint {k} is not held by every rank; passed over"
        ));
        return Ok(in_files);
    }
    if !newer {
        return Ok(in_files);
    }
    Ok(Some(Found {
        epoch: k,
        files: Vec::new(),
        rank_processes: Vec::new(),
        in_memory: true,
    }))
}

/// The calling rank's variables of memory-level checkpoint `epoch`.
fn stored_in_memory(epoch: u64) -> Result<Vec<Stored>, String> {
    use crate::craas;
    let slot = memory_slot(epoch);
    let index = |name: &str| -> Result<i64, String> {
        craas::rst_index(slot, name)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("memory level: no checkpoint {epoch}"))
    };
    if index("epoch")? as u64 != epoch {
        return Err(format!(
            "memory level: checkpoint {epoch} is no longer held"
        ));
    }
    let mut out = Vec::new();
    for i in 0..index("vars")? {
        let id = index(&format!("id-{i}"))? as i32;
        let mut bytes = vec![0u8; index(&format!("len-{id}"))? as usize];
        craas::rst_array(slot, &format!("var-{id}"), &mut bytes).map_err(|e| e.to_string())?;
        out.push(Stored {
            id,
            elem_size: index(&format!("size-{id}"))? as u32,
            bytes,
        });
    }
    Ok(out)
}

/// The newest epoch of `dir` written by as many ranks, recovered from its
/// levels (rebuilt files in `epoch-K/rebuilt/`), saying per process what was
/// used when not L1, and why older epochs were passed over.
fn newest_recoverable(dir: &mpcrs_cr::CheckpointDir, ranks: usize) -> Option<Found> {
    let epochs = dir.epochs().ok()?;
    for &k in epochs.iter().rev() {
        let epoch_dir = dir.epoch_dir(k);
        let m = match JobManifest::read(&epoch_dir.join(mpcrs_cr::commit::MANIFEST)) {
            Ok(m) => m,
            Err(e) => {
                report_line(&format!("checkpoint {k} passed over: {e}"));
                continue;
            }
        };
        if m.ranks != ranks || m.rank_processes.len() != ranks {
            report_line(&format!(
                "checkpoint {k} passed over: written by {} ranks, this run has {ranks}",
                m.ranks
            ));
            continue;
        }
        match mpcrs_levels::recovery::recover(
            &m,
            &epoch_dir,
            k,
            &epoch_dir.join("rebuilt"),
            // Protected data files name no owner: checksums only.
            &|path, _| data::check(path),
        ) {
            Ok(r) => {
                for note in &r.notes {
                    report_line(&format!("checkpoint {k}: {note}"));
                }
                return Some(Found {
                    epoch: k,
                    files: r.images,
                    rank_processes: m.rank_processes,
                    in_memory: false,
                });
            }
            Err(e) => report_line(&format!("checkpoint {k} passed over: {e}")),
        }
    }
    None
}

/// Whether `ok` holds on every rank of `comm` (collective).
fn all_ok(comm: &Communicator, ok: bool) -> crate::Result<bool> {
    let mut all = [0i32];
    comm.all_reduce(&[ok as i32], &mut all, &Op::Min)?;
    Ok(all[0] == 1)
}

fn report_line(what: &str) {
    mpcrs_settings::report!(warn, "mpcrs: application checkpoint: {what}");
}

#[cfg(test)]
mod tests {
    use super::{snapshot_due, MEMORY_LEVEL};

    #[test]
    fn snapshot_takes_the_highest_level_due_once_a_minute() {
        let every = [1, 2, 0, 6];
        assert_eq!(
            snapshot_due(0, 0, &every, 0),
            None,
            "not in the first minute"
        );
        assert_eq!(snapshot_due(1, 0, &every, 0), Some(1));
        assert_eq!(snapshot_due(1, 1, &every, 0), None, "once a minute");
        assert_eq!(snapshot_due(2, 1, &every, 0), Some(2));
        assert_eq!(snapshot_due(6, 5, &every, 0), Some(4));
        assert_eq!(snapshot_due(7, 6, &[0, 0, 0, 0], 0), None);
        assert_eq!(snapshot_due(9, 6, &[0, 0, 3, 0], 0), Some(3));
        // The memory level when no level in files is due.
        assert_eq!(snapshot_due(3, 2, &[0, 0, 3, 0], 1), Some(3));
        assert_eq!(snapshot_due(4, 3, &[0, 0, 3, 0], 1), Some(MEMORY_LEVEL));
        assert_eq!(snapshot_due(5, 4, &[0, 0, 0, 0], 2), None);
    }
}
