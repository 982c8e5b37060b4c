//! mpi.h against the Rust side (MPI_Status layout, datatype sizes) and against
//! MPICH's installed mpi.h (every constant's value).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use mpcrs_abi_check::header_status;

const MPICH_INCLUDE: &str = "/usr/include/x86_64-linux-gnu/mpich";

fn our_include() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../include")
}

#[test]
fn status_layout_matches_the_header() {
    use std::mem::{offset_of, size_of};
    type Ours = mpi::MPI_Status;
    type Theirs = header_status::MPI_Status;
    assert_eq!(size_of::<Ours>(), size_of::<Theirs>());
    assert_eq!(offset_of!(Ours, count_lo), offset_of!(Theirs, count_lo));
    assert_eq!(
        offset_of!(Ours, count_hi_and_cancelled),
        offset_of!(Theirs, count_hi_and_cancelled)
    );
    assert_eq!(offset_of!(Ours, MPI_SOURCE), offset_of!(Theirs, MPI_SOURCE));
    assert_eq!(offset_of!(Ours, MPI_TAG), offset_of!(Theirs, MPI_TAG));
    assert_eq!(offset_of!(Ours, MPI_ERROR), offset_of!(Theirs, MPI_ERROR));
}

/// Names of the object-like `MPI_*` macros a header defines.
fn macro_names(header: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(header).unwrap();
    let mut names: Vec<String> = text
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("#define "))
        .filter_map(|rest| {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            // Function-like macros and the include guard are not constants;
            // strings (format specifiers) and the addresses of functions
            // (MPI_DUP_FN) have no value to compare.
            let after = &rest[name.len()..];
            (name.starts_with("MPI_")
                && !after.starts_with('(')
                && !after.trim().is_empty()
                && !after.contains('"')
                && !after.contains("DUP_FN")
                && !after.contains("Dup_fn"))
            .then_some(name)
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Compiles and runs a C program printing `name value` for each macro, with the
/// header found in `include`.
fn values(include: &Path, names: &[String], tag: &str) -> BTreeMap<String, i64> {
    let dir = std::env::temp_dir().join(format!("mpcrs-abi-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut src = String::from(
        "#include <mpi.h>\n#include <stdio.h>\n#include <stdint.h>\nint main(void) {\n",
    );
    for n in names {
        src.push_str(&format!(
            "#ifdef {n}\n  printf(\"{n} %lld\\n\", (long long)(intptr_t)({n}));\n#endif\n"
        ));
    }
    src.push_str("  return 0;\n}\n");
    let c = dir.join("values.c");
    std::fs::write(&c, src).unwrap();
    let exe = dir.join("values");
    let ok = Command::new("cc")
        .arg(format!("-I{}", include.display()))
        .arg("-w")
        .arg(&c)
        .arg("-o")
        .arg(&exe)
        .status()
        .unwrap();
    assert!(
        ok.success(),
        "compiling the constants of {}",
        include.display()
    );
    let out = Command::new(&exe).output().unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (n, v) = l.split_once(' ').unwrap();
            (n.to_string(), v.parse().unwrap())
        })
        .collect()
}

#[test]
fn every_constant_has_mpichs_value() {
    let ours_h = our_include().join("mpi.h");
    let theirs_h = Path::new(MPICH_INCLUDE).join("mpi.h");
    assert!(
        theirs_h.exists(),
        "{} is missing (libmpich-dev, installed by scripts/setup-system.sh)",
        theirs_h.display()
    );
    let names = macro_names(&ours_h);
    assert!(
        names.len() > 100,
        "only {} constants found in mpi.h",
        names.len()
    );
    let ours = values(&our_include(), &names, "ours");
    let theirs = values(Path::new(MPICH_INCLUDE), &names, "mpich");
    let mut compared = 0;
    for (name, v) in &ours {
        match theirs.get(name) {
            Some(t) => {
                assert_eq!(v, t, "{name}: mpcrs {v:#x}, MPICH {t:#x}");
                compared += 1;
            }
            None => panic!("{name} is not defined by MPICH's mpi.h"),
        }
    }
    assert_eq!(compared, ours.len());
    assert!(compared > 100);
}

#[test]
fn predefined_datatype_sizes_match_their_encoding() {
    let names = macro_names(&our_include().join("mpi.h"));
    let values = values(&our_include(), &names, "types");
    let mut checked = 0;
    for (name, &v) in &values {
        let h = v as i32;
        let kind = (h as u32) >> 24;
        if kind != 0x4c {
            continue; // not a basic predefined datatype handle
        }
        let encoded = ((h as u32) >> 8) & 0xff;
        let size = mpi::predefined_datatype_size(h)
            .unwrap_or_else(|| panic!("{name} ({h:#x}) unknown to libmpi"));
        assert_eq!(size as u32, encoded, "{name}");
        checked += 1;
    }
    // The (value, index) pairs: MPI_Type_size counts their data, not the
    // padding of their C structs (which their extent covers).
    for (name, size) in [
        ("MPI_FLOAT_INT", 8),
        ("MPI_DOUBLE_INT", 12),
        ("MPI_LONG_INT", 12),
        ("MPI_SHORT_INT", 6),
        ("MPI_LONG_DOUBLE_INT", 20),
    ] {
        assert_eq!(
            mpi::predefined_datatype_size(values[name] as i32),
            Some(size),
            "{name}"
        );
    }
    assert!(checked >= 25, "only {checked} datatypes checked");
}
