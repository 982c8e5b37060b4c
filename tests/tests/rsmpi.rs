//! rsmpi, the Rust MPI bindings (crates.io `mpi` 0.8), against mpcrs: its own
//! examples, built with `MPICC=mpcrs-cc` (bindgen over our mpi.h, linked to our
//! libmpi) and with MPICH's mpicc, run thread-based by mpcrs-run.
//!
//! The crate comes from crates.io at test time into the test build directory
//! (nothing of it is kept in the repository): a scratch package depending on
//! it makes cargo fetch it, and its examples are built from that copy.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use mpcrs_tests::{expect_success, profile_dir, run_command, run_job};

const VERSION: &str = "=0.8.2";
const FEATURES: &str = "user-operations derive complex";

/// Examples left out, each for its reason.
const LEFT_OUT: &[(&str, &str)] = &[
    ("spawn", "dynamic processes are not built"),
    ("spawn_multiple", "dynamic processes are not built"),
    (
        "comm_name",
        "rsmpi 0.8 reads a dropped temporary in get_name: it fails under MPICH too",
    ),
];

/// The source of the `mpi` crate, fetched by cargo through a scratch package.
fn rsmpi_source(work: &Path) -> PathBuf {
    let scratch = work.join("scratch");
    std::fs::create_dir_all(scratch.join("src")).unwrap();
    std::fs::write(
        scratch.join("Cargo.toml"),
        format!(
            "[package]\nname = \"rsmpi-fetch\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\
             [dependencies]\nmpi = \"{VERSION}\"\n[workspace]\n"
        ),
    )
    .unwrap();
    std::fs::write(scratch.join("src/main.rs"), "fn main() {}\n").unwrap();
    let o = run_command(
        Command::new("cargo")
            .args(["metadata", "--format-version", "1"])
            .current_dir(&scratch),
        Duration::from_secs(300),
    );
    let meta = expect_success(&o, "cargo metadata of the rsmpi scratch package");
    let v: serde_json::Value = serde_json::from_str(&meta).expect("cargo metadata is JSON");
    let manifest = v["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "mpi")
        .expect("the mpi package in the metadata")["manifest_path"]
        .as_str()
        .unwrap()
        .to_string();
    // A copy of its own: cargo builds the examples of a package in place.
    let src = work.join("mpi");
    let _ = std::fs::remove_dir_all(&src);
    let from = Path::new(&manifest).parent().unwrap();
    let o = run_command(
        Command::new("cp").arg("-r").arg(from).arg(&src),
        Duration::from_secs(60),
    );
    expect_success(&o, "copying the mpi crate");
    // The copy lies under this repository's target directory: a workspace of
    // its own, not a stray member of ours.
    let manifest = src.join("Cargo.toml");
    let mut text = std::fs::read_to_string(&manifest).unwrap();
    text.push_str("\n[workspace]\n");
    std::fs::write(&manifest, text).unwrap();
    src
}

/// Builds rsmpi's examples with `mpicc`; returns the directory holding them.
fn build_examples(src: &Path, mpicc: &Path, target: &Path) -> PathBuf {
    let o = run_command(
        Command::new("cargo")
            .args(["build", "--release", "--examples", "--features", FEATURES])
            .env("MPICC", mpicc)
            .env("CARGO_TARGET_DIR", target)
            .current_dir(src),
        Duration::from_secs(900),
    );
    expect_success(
        &o,
        &format!("rsmpi's examples with MPICC={}", mpicc.display()),
    );
    target.join("release/examples")
}

fn examples(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.contains('.') && !n.contains('-'))
        .filter(|n| !LEFT_OUT.iter().any(|(l, _)| l == n))
        .collect();
    names.sort();
    names
}

fn run_all(dir: &Path, what: &str) {
    let names = examples(dir);
    assert!(
        names.len() >= 45,
        "only {} examples built: {names:?}",
        names.len()
    );
    for name in &names {
        let bin = dir.join(name);
        let layout = ["-n", "4"];
        let mut args = layout.to_vec();
        args.push(bin.to_str().unwrap());
        expect_success(
            &run_job(&args, Duration::from_secs(120)),
            &format!("rsmpi example {name} ({what}) under mpcrs-run {layout:?}"),
        );
    }
}

#[test]
fn rsmpi_examples_built_with_mpcrs_cc_and_with_mpich_run_under_mpcrs() {
    let work = profile_dir().join("rsmpi");
    std::fs::create_dir_all(&work).unwrap();
    let src = rsmpi_source(&work);
    let ours = build_examples(&src, &profile_dir().join("mpcrs-cc"), &work.join("t-mpcrs"));
    run_all(&ours, "built with mpcrs-cc");
    let mpich = build_examples(
        &src,
        Path::new("/usr/bin/mpicc.mpich"),
        &work.join("t-mpich"),
    );
    run_all(&mpich, "built with MPICH's mpicc");
}
