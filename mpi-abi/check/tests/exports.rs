//! Nothing of MPI-3.1 and MPI-4.0 is missing: every function MPICH's
//! installed headers declare is exported by libmpi.so as `MPI_x` and
//! `PMPI_x` (large-count variants included), except the few families listed
//! below.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

const MPICH_INCLUDE: &str = "/usr/include/x86_64-linux-gnu/mpich";

/// MPI-4 families not built, by prefix (partitioned communication and the
/// session error handlers are exported, the former failing as unsupported).
const MPI4_PREFIXES: &[&str] = &[
    "MPI_T_event_",     // MPI_T events
    "MPI_T_source_",    // MPI_T event sources
    "MPI_Status_f082",  // mpi_f08 statuses
    "MPI_Status_c2f08", // mpi_f08 statuses
    "MPI_Status_f2f08", // mpi_f08 statuses
];

/// Other MPI-4 functions.
const MPI4_FUNCTIONS: &[&str] = &["MPI_T_category_get_events", "MPI_T_category_get_num_events"];

/// The large-count variants (`MPI_Send_c`), persistent neighbourhood
/// collectives and session error handlers are all checked.
fn excluded(name: &str) -> bool {
    MPI4_PREFIXES.iter().any(|p| name.starts_with(p)) || MPI4_FUNCTIONS.contains(&name)
}

/// The header and the headers it includes by name (mpi_proto.h, mpio.h).
fn header_text(path: &Path, out: &mut String) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (libmpich-dev, scripts/setup-system.sh)",
            path.display()
        )
    });
    for line in text.lines() {
        let l = line.trim_start();
        if let Some(rest) = l.strip_prefix("#include") {
            let name = rest
                .trim()
                .trim_matches(|c| c == '<' || c == '>' || c == '"');
            let inc = path.parent().unwrap().join(name);
            if inc.exists() && (name.starts_with("mpi_proto") || name.starts_with("mpio")) {
                header_text(&inc, out);
            }
        }
    }
    out.push_str(&text);
    out.push('\n');
}

/// Names `MPI_x` declared as functions: `MPI_x(` after a type, at the start
/// of a declaration (not in a macro's body or a comment).
fn declared_functions(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for line in text.lines() {
        let l = line.trim_start();
        if l.starts_with('#') || l.starts_with('*') || l.starts_with("/*") {
            continue;
        }
        let mut rest = l;
        while let Some(i) = rest.find("MPI_") {
            let before_ok = i == 0
                || !rest.as_bytes()[i - 1].is_ascii_alphanumeric()
                    && rest.as_bytes()[i - 1] != b'_';
            let name: String = rest[i..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let after = &rest[i + name.len()..];
            // A declaration: a return type precedes the name on its line.
            if before_ok && after.starts_with('(') && i > 0 && rest[..i].trim_end().len() == i - 1 {
                names.insert(name.clone());
            }
            rest = &rest[i + name.len()..];
        }
    }
    names
}

/// `#define MPI_X Y` renames (MPI_DUP_FN is MPIR_Dup_fn in MPICH's ABI).
fn symbol_of(text: &str, name: &str) -> String {
    for line in text.lines() {
        let mut w = line.split_whitespace();
        if w.next() == Some("#define") && w.next() == Some(name) {
            if let (Some(target), None) = (w.next(), w.next()) {
                if target
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_')
                {
                    return target.to_string();
                }
            }
        }
    }
    name.to_string()
}

fn libmpi() -> PathBuf {
    // target/<profile>/deps/exports-<hash> -> target/<profile>/libmpi.so
    let exe = std::env::current_exe().unwrap();
    let lib = exe.parent().unwrap().parent().unwrap().join("libmpi.so");
    assert!(
        lib.exists(),
        "{} is missing: build the workspace (cargo build --release --workspace)",
        lib.display()
    );
    lib
}

fn exported(lib: &Path) -> BTreeSet<String> {
    let out = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(lib)
        .output()
        .expect("nm (binutils)");
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2).map(str::to_string))
        .collect()
}

#[test]
fn libmpi_exports_every_function_of_mpichs_headers() {
    let mut text = String::new();
    header_text(&Path::new(MPICH_INCLUDE).join("mpi.h"), &mut text);
    let declared = declared_functions(&text);
    assert!(
        declared.len() > 400,
        "only {} functions found",
        declared.len()
    );
    let symbols = exported(&libmpi());
    let mut missing = Vec::new();
    let mut checked = 0;
    for name in declared.iter().filter(|n| !excluded(n)) {
        let sym = symbol_of(&text, name);
        checked += 1;
        if !symbols.contains(&sym) {
            missing.push(sym.clone());
        }
        // The profiling entry point too, for the functions MPI names PMPI_.
        if sym.starts_with("MPI_") {
            let p = format!("P{sym}");
            if !symbols.contains(&p) && !is_conversion_macro(&text, name) {
                missing.push(p);
            }
        }
    }
    assert!(checked > 350, "only {checked} functions checked");
    assert!(
        missing.is_empty(),
        "libmpi.so lacks {} of {checked} functions of MPICH's headers: {}",
        missing.len(),
        missing.join(" ")
    );
}

/// Handle conversions MPICH defines as macros for PMPI_ (no PMPI_ symbol).
fn is_conversion_macro(text: &str, name: &str) -> bool {
    text.contains(&format!("#define P{name}("))
}
