//! Fortran programs through mpcrs-fort (mpifort): mpif.h in fixed form and the
//! `mpi` module in free form, run in threads (every rank a copy of the
//! program, so COMMON blocks and module variables are the rank's own), in
//! processes, and in both at once.

use std::path::{Path, PathBuf};
use std::time::Duration;

use mpcrs_tests::{build_c, expect_success, profile_dir, run_job, run_with_input, scratch_dir};

/// The layouts every Fortran program runs in: threads, hybrids, processes.
const LAYOUTS: &[&[&str]] = &[
    &["-n", "4"],
    &["-n", "8", "-p", "2"],
    &["-n", "8", "-p", "4"],
    &["-n", "3", "--process-mode"],
];

fn fortran_source(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fortran")
        .join(name)
}

/// Builds tests/fortran/NAME with mpcrs-fort; module files go to a directory
/// of the build's own, so tests building at once do not share them.
fn build_fortran(name: &str, out_name: &str) -> PathBuf {
    let modules = profile_dir().join("fortran-modules").join(out_name);
    std::fs::create_dir_all(&modules).unwrap();
    let fort = profile_dir().join("mpcrs-fort");
    build_c(
        &fortran_source(name),
        out_name,
        Some(fort.to_str().unwrap()),
        &["-J", modules.to_str().unwrap()],
    )
}

fn ranks_of(layout: &[&str]) -> usize {
    layout[1].parse().unwrap()
}

fn run_in(bin: &Path, layout: &[&str]) -> String {
    let mut args = layout.to_vec();
    args.push(bin.to_str().unwrap());
    expect_success(
        &run_job(&args, Duration::from_secs(120)),
        &format!("{} {layout:?}", bin.display()),
    )
}

/// Output lines sorted by rank (the first number of each line).
fn by_rank(out: &str) -> Vec<String> {
    let mut lines: Vec<String> = out.lines().map(|l| l.trim().to_string()).collect();
    lines.sort_by_key(|l| {
        l.split_whitespace()
            .nth(1)
            .and_then(|r| r.parse::<usize>().ok())
            .unwrap_or(usize::MAX)
    });
    lines
}

#[test]
fn a_fixed_form_ring_with_mpif_h_keeps_common_blocks_per_rank() {
    let bin = build_fortran("ring.f", "fortran-ring");
    for layout in LAYOUTS {
        let n = ranks_of(layout);
        let lines = by_rank(&run_in(&bin, layout));
        assert_eq!(lines.len(), n, "{layout:?}: {lines:?}");
        let sum = n * (n + 1) / 2;
        for (r, line) in lines.iter().enumerate() {
            let token = if r == 0 { n } else { r + 1 };
            let src = (r + n - 1) % n;
            let words: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(
                words[..10],
                [
                    "rank",
                    &r.to_string(),
                    "token",
                    &token.to_string(),
                    "src",
                    &src.to_string(),
                    "sum",
                    &format!("{sum}.0"),
                    "counter",
                    &(10 * r).to_string(),
                ],
                "{layout:?}: {line}"
            );
        }
    }
}

#[test]
fn the_mpi_module_passes_special_addresses_strings_attributes_and_fortran_callbacks() {
    let bin = build_fortran("features.f90", "fortran-features");
    for layout in LAYOUTS {
        let n = ranks_of(layout);
        let lines = by_rank(&run_in(&bin, layout));
        assert_eq!(lines.len(), n, "{layout:?}: {lines:?}");
        for (r, line) in lines.iter().enumerate() {
            assert!(
                line.starts_with(&format!("rank {r} ok:")) && line.ends_with(&format!("tally {r}")),
                "{layout:?}: {line}"
            );
        }
    }
}

#[test]
fn attributes_cross_languages_and_fortran_counts_indices_from_one() {
    let modules = profile_dir().join("fortran-modules").join("languages");
    std::fs::create_dir_all(&modules).unwrap();
    let fort = profile_dir().join("mpcrs-fort");
    // The C half is compiled by the same wrapper (gfortran hands .c to gcc).
    let bin = build_c(
        &fortran_source("languages.f90"),
        "fortran-languages",
        Some(fort.to_str().unwrap()),
        &[
            fortran_source("languages.c").to_str().unwrap(),
            "-J",
            modules.to_str().unwrap(),
        ],
    );
    for layout in LAYOUTS {
        let n = ranks_of(layout);
        let lines = by_rank(&run_in(&bin, layout));
        let expected: Vec<String> = (0..n).map(|r| format!("rank {r} errors 0")).collect();
        assert_eq!(lines, expected, "{layout:?}");
    }
}

#[test]
fn each_rank_has_its_own_fortran_units() {
    let bin = build_fortran("units.f90", "fortran-units");
    for layout in LAYOUTS {
        let dir = scratch_dir("fortran", &format!("units-{}", layout.join("")));
        let args = [&["--wdir", dir.to_str().unwrap()], *layout].concat();
        let lines = by_rank(&run_in(&bin, &args));
        let expected: Vec<String> = (0..ranks_of(layout))
            .map(|r| format!("rank {r} lines 3 own T"))
            .collect();
        assert_eq!(lines, expected, "{layout:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// Standard input goes to rank 0 only through READ(*) and READ(5): the other
/// ranks read end of file first, and rank 0 then reads every line.
#[test]
fn fortran_reads_of_standard_input_reach_rank_0_only() {
    let bin = build_fortran("stdin_ranks.f90", "fortran-stdin");
    for layout in LAYOUTS {
        let args = [*layout, &[bin.to_str().unwrap()]].concat();
        let out = run_with_input(&args, b"first line\n42\nthird\n");
        let n = ranks_of(layout);
        let mut expected: Vec<String> = (1..n)
            .rev()
            .map(|r| format!("rank {r} line none end T n -1 end F"))
            .collect();
        expected.push("rank 0 line first line ios 0 n 42 ios 0".into());
        expected.push("rank 0 then third ios 0".into());
        assert_eq!(out.lines().collect::<Vec<_>>(), expected, "{layout:?}");
    }
}
