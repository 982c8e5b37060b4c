//! mpcrs-ckpt: inspect a checkpoint directory.
//!
//! `mpcrs-ckpt ls DIR` lists the epochs (complete, partial, which is latest,
//! full or incremental and the epochs an incremental one needs, images and
//! bytes in the checkpoint directory, the levels each epoch was to get and
//! those complete, and how many processes' files each level holds);
//! `mpcrs-ckpt verify DIR [--epoch K]` checks every file of an epoch (default:
//! latest) at every level, whether every process can be restored (rebuilding
//! from L3 where needed) and, for an incremental epoch, every image of its
//! chain, and exits non-zero naming each damaged file, or a process no level
//! recovers; `mpcrs-ckpt facts [--job KEY] QUESTION...` answers, one line
//! each, what this host holds of the node-local files named
//! (`image:EPOCH:PROCESS:PATH`, checked whole and owned by that process of
//! that epoch, with the header facts a restart needs; `file:PATH`, present or
//! not): what mpcrs-run asks, through its launch agent, of the hosts that
//! keep private node-local disks when it restarts a job.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use mpcrs_cr::commit::{epoch_name, MANIFEST};
use mpcrs_cr::CheckpointDir;
use mpcrs_levels::Level;
use mpcrs_settings::JobManifest;

/// Process `p`'s files of epoch `k`, by level (L3: its parity shard).
fn level_files(dir: &CheckpointDir, m: &JobManifest, k: u64, p: usize) -> Vec<(Level, PathBuf)> {
    let f = mpcrs_levels::recovery::level_files(m, &dir.epoch_dir(k), k, p);
    let mut v = Vec::new();
    v.extend(f.local.map(|l| (Level::Local, l)));
    v.extend(f.partner.map(|(c, _)| (Level::Partner, c)));
    v.extend(f.parity.map(|c| (Level::Erasure, c)));
    v.push((Level::Global, f.global));
    v
}

fn numbers(levels: &[u8]) -> String {
    let v: Vec<String> = levels.iter().map(|l| format!("L{l}")).collect();
    v.join(",")
}

/// "levels L1,L2,L4 complete L1,L2  files L1 2/2 L2 2/2 L4 1/2": the levels the
/// epoch was to get, those every process completed, and how many processes'
/// files each level holds.
fn levels_held(dir: &CheckpointDir, k: u64) -> String {
    let Ok(m) = JobManifest::read(&dir.epoch_dir(k).join(MANIFEST)) else {
        return String::new();
    };
    let mut counts: Vec<(Level, usize)> = Vec::new();
    for p in 0..m.processes {
        for (level, path) in level_files(dir, &m, k, p) {
            let held = path.is_file() as usize;
            match counts.iter_mut().find(|(l, _)| *l == level) {
                Some((_, n)) => *n += held,
                None => counts.push((level, held)),
            }
        }
    }
    let files: String = counts
        .iter()
        .filter(|(l, n)| {
            *n > 0 || m.levels.contains(&l.number()) || matches!(l, Level::Local | Level::Global)
        })
        .map(|(l, n)| format!(" L{} {n}/{}", l.number(), m.processes))
        .collect();
    format!(
        "  levels {} complete {}  files{files}",
        numbers(&m.levels),
        numbers(&m.complete)
    )
}

/// "full", or "incremental on epoch-3 (chain epoch-1..epoch-4)": whether
/// the epoch's images apply to others, as its manifest records.
fn kind(dir: &CheckpointDir, k: u64) -> String {
    let Ok(m) = JobManifest::read(&dir.epoch_dir(k).join(MANIFEST)) else {
        return "manifest unreadable".into();
    };
    match (m.base.iter().min(), m.base.iter().max()) {
        (Some(&first), Some(&parent)) => format!(
            "incremental on {} (chain {}..{})",
            epoch_name(parent),
            epoch_name(first),
            epoch_name(k)
        ),
        _ => "full".into(),
    }
}

/// What taking epoch `k` cost the program, where its manifest says.
fn cost(dir: &CheckpointDir, k: u64) -> String {
    match JobManifest::read(&dir.epoch_dir(k).join(MANIFEST)).map(|m| m.cost) {
        Ok(Some(c)) => format!(
            "  stall {:.1} ms, {}",
            c.stall_us as f64 / 1e3,
            c.describe()
        ),
        _ => String::new(),
    }
}

#[derive(Parser)]
#[command(
    name = "mpcrs-ckpt",
    version,
    about = "Inspect mpcrs checkpoint directories"
)]
struct Args {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// List the epochs of DIR.
    Ls { dir: PathBuf },
    /// Check every image of an epoch (default: the latest).
    Verify {
        dir: PathBuf,
        #[arg(long)]
        epoch: Option<u64>,
    },
    /// Say what this host holds of node-local files (for mpcrs-run's restart).
    Facts {
        /// The job's key (hexadecimal) its images must name.
        #[arg(long, value_parser = parse_key)]
        job: Option<u64>,
        /// image:EPOCH:PROCESS:PATH or file:PATH.
        #[arg(value_parser = mpcrs_launch::elsewhere::Question::parse)]
        questions: Vec<mpcrs_launch::elsewhere::Question>,
    },
}

fn parse_key(s: &str) -> Result<u64, String> {
    u64::from_str_radix(s, 16).map_err(|_| format!("{s:?} is not a job key (hexadecimal)"))
}

/// `facts`: one line per question, the images checked side by side.
fn facts(job: Option<u64>, questions: &[mpcrs_launch::elsewhere::Question]) -> Result<(), String> {
    use mpcrs_launch::elsewhere::answer;
    let verifier = mpcrs_launch::verifier::Verifier::new();
    let check = |path: &Path, expected| {
        verifier.check(path)?;
        mpcrs_launch::verifier::check_owner(path, expected, job)
    };
    let answers = mpcrs_levels::recovery::side_by_side(questions.len(), |i| {
        answer(&questions[i], &check).line()
    });
    let mut out = answers.join("\n");
    out.push('\n');
    use std::io::Write;
    std::io::stdout()
        .write_all(out.as_bytes())
        .map_err(|e| format!("standard output: {e}"))
}

fn images(epoch_dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(epoch_dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "img"))
        .collect();
    v.sort();
    Ok(v)
}

fn ls(dir: &CheckpointDir) -> Result<(), String> {
    let latest = dir.latest().map_err(|e| e.to_string())?;
    let epochs = dir.epochs().map_err(|e| e.to_string())?;
    if epochs.is_empty() {
        println!("{}: no complete epoch", dir.root().display());
    }
    for k in epochs {
        let path = dir.epoch_dir(k);
        let imgs = images(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let bytes: u64 = imgs
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok())
            .map(|m| m.len())
            .sum();
        println!(
            "{}{}  {}  {} images  {} bytes{}{}",
            epoch_name(k),
            if Some(k) == latest { "  latest" } else { "" },
            kind(dir, k),
            imgs.len(),
            bytes,
            levels_held(dir, k),
            cost(dir, k)
        );
    }
    for e in std::fs::read_dir(dir.root())
        .map_err(|e| e.to_string())?
        .flatten()
    {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".partial") {
            println!("{name}  incomplete (not a restart point)");
        }
    }
    Ok(())
}

fn verify(dir: &CheckpointDir, epoch: Option<u64>) -> Result<(), String> {
    let k = match epoch {
        Some(k) => k,
        None => dir
            .latest()
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("{}: no complete epoch to verify", dir.root().display()))?,
    };
    let path = dir.epoch_dir(k);
    if !path.join(MANIFEST).is_file() {
        return Err(format!(
            "{}: not a complete epoch (no {MANIFEST})",
            path.display()
        ));
    }
    let m = mpcrs_launch::restart::read_manifest(dir, &path)?;
    println!(
        "{}: levels {}, complete {}",
        epoch_name(k),
        numbers(&m.levels),
        numbers(&m.complete)
    );
    let mut damaged = Vec::new();
    // What is verified here is not verified again for the restore check below.
    let verifier = mpcrs_launch::verifier::Verifier::new();
    for p in 0..m.processes {
        for (level, file) in level_files(dir, &m, k, p) {
            if !file.is_file() {
                println!("{}: not here ({level})", file.display());
                continue;
            }
            if level == Level::Erasure {
                match mpcrs_levels::erasure::verify_parity(&file) {
                    Ok(h) => println!(
                        "{}: ok ({level}, shard {} of group {:?})",
                        file.display(),
                        h.index,
                        h.members
                    ),
                    Err(e) => {
                        println!("{}: damaged ({level}): {e}", file.display());
                        damaged.push(e.to_string());
                    }
                }
                continue;
            }
            let verified = mpcrs_cr::verify(&file);
            verifier.remember(&file, &verified);
            let expected = mpcrs_levels::recovery::Expected {
                epoch: k,
                process: p,
            };
            let owner = mpcrs_launch::verifier::check_owner(&file, expected, m.job);
            match (verified, owner) {
                (Ok(_), Err(e)) => {
                    println!("{}: wrong image ({level}): {e}", file.display());
                    damaged.push(format!("{}: {e}", file.display()));
                }
                (Ok(v), Ok(())) => println!(
                    "{}: ok ({level}, {} regions, {} bytes of memory, executable {})",
                    file.display(),
                    v.header.regions.len(),
                    v.data_bytes,
                    v.header.exe.path
                ),
                (Err(e), _) => {
                    println!("{}: damaged ({level}): {}", file.display(), e.problem);
                    damaged.push(e.to_string());
                }
            }
        }
    }
    // Whether every process can be restored, rebuilding from L3 where needed
    // (into a scratch directory, removed after).
    let scratch = std::env::temp_dir().join(format!("mpcrs-ckpt-verify-{}", std::process::id()));
    verifier.ahead(dir, k);
    let recovered = mpcrs_launch::restart::recover(&m, &path, k, &scratch, &verifier, None);
    let _ = std::fs::remove_dir_all(&scratch);
    match recovered {
        Ok(r) => {
            for note in &r.notes {
                println!("{note}");
            }
            // An incremental epoch restores through the images it applies
            // to: each recovered from its own epoch's levels and verified.
            match mpcrs_launch::restart::chains_of(
                dir,
                k,
                &r.images,
                &verifier,
                "rebuilt",
                None,
                None,
                &mut Default::default(),
            ) {
                Ok(chains) => {
                    for (p, chain) in chains.iter().enumerate().filter(|(_, c)| !c.is_empty()) {
                        let links: Vec<String> =
                            chain.iter().map(|l| l.display().to_string()).collect();
                        println!("process {p}: applies to {}: ok", links.join(" <- "));
                    }
                    println!("{}: every process can be restored", epoch_name(k));
                }
                Err(e) => damaged.push(format!("{}: {e}", epoch_name(k))),
            }
        }
        Err(e) => damaged.push(e),
    }
    if !damaged.is_empty() {
        return Err(damaged.join("\n"));
    }
    Ok(())
}

fn main() -> ExitCode {
    let args = Args::parse();
    let result = match &args.command {
        Cmd::Ls { dir } => CheckpointDir::open(dir)
            .map_err(|e| e.to_string())
            .and_then(|d| ls(&d)),
        Cmd::Verify { dir, epoch } => CheckpointDir::open(dir)
            .map_err(|e| e.to_string())
            .and_then(|d| verify(&d, *epoch)),
        Cmd::Facts { job, questions } => facts(*job, questions),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            mpcrs_settings::report!(error, "mpcrs-ckpt: {e}");
            ExitCode::FAILURE
        }
    }
}
