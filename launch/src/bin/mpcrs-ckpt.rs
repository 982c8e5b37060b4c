//! mpcrs-ckpt: inspect a checkpoint directory.
//!
//! `mpcrs-ckpt ls DIR` lists the epochs (complete, partial, which is latest, images
//! and bytes, and how many processes' images each storage level holds);
//! `mpcrs-ckpt verify DIR [--epoch K]` checks every image of an epoch (default:
//! latest) at every level and exits non-zero naming each bad file and problem,
//! or a process whose image no level holds intact.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use mpcrs_cr::commit::{epoch_name, MANIFEST};
use mpcrs_cr::CheckpointDir;
use mpcrs_levels::Level;
use mpcrs_settings::JobManifest;

/// Where each level keeps process `p`'s image of epoch `k`.
fn level_images(dir: &CheckpointDir, m: &JobManifest, k: u64, p: usize) -> Vec<(Level, PathBuf)> {
    mpcrs_launch::restart::level_images(m, &dir.epoch_dir(k), k, p)
}

/// "L1 2/2  L4 1/2": how many processes' images each level holds.
fn levels_held(dir: &CheckpointDir, k: u64) -> String {
    let Ok(m) = JobManifest::read(&dir.epoch_dir(k).join(MANIFEST)) else {
        return String::new();
    };
    let mut counts: Vec<(Level, usize)> = Vec::new();
    for p in 0..m.processes {
        for (level, path) in level_images(dir, &m, k, p) {
            let held = path.is_file() as usize;
            match counts.iter_mut().find(|(l, _)| *l == level) {
                Some((_, n)) => *n += held,
                None => counts.push((level, held)),
            }
        }
    }
    counts
        .iter()
        .map(|(l, n)| format!("  L{} {n}/{}", l.number(), m.processes))
        .collect()
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
            "{}{}  {} images  {} bytes{}",
            epoch_name(k),
            if Some(k) == latest { "  latest" } else { "" },
            imgs.len(),
            bytes,
            levels_held(dir, k)
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
    let m = JobManifest::read(&path.join(MANIFEST))?;
    let mut problems = Vec::new();
    for p in 0..m.processes {
        let mut intact = false;
        for (level, img) in level_images(dir, &m, k, p) {
            if !img.is_file() {
                println!("{}: not here ({level})", img.display());
                continue;
            }
            match mpcrs_cr::verify(&img) {
                Ok(v) => {
                    intact = true;
                    println!(
                        "{}: ok ({level}, {} regions, {} bytes of memory, executable {})",
                        img.display(),
                        v.header.regions.len(),
                        v.data_bytes,
                        v.header.exe.path
                    );
                }
                Err(e) => {
                    println!("{}: damaged ({level}): {}", img.display(), e.problem);
                    problems.push(e.to_string());
                }
            }
        }
        if !intact {
            problems.push(format!(
                "{}: no intact image of process {p} at any level",
                epoch_name(k)
            ));
        }
    }
    if !problems.is_empty() {
        return Err(problems.join("\n"));
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
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            mpcrs_settings::report!(error, "mpcrs-ckpt: {e}");
            ExitCode::FAILURE
        }
    }
}
