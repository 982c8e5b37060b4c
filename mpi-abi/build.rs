//! Two jobs:
//! - Links into mpcrs-exec the thread-local reservation for the program copies'
//!   own thread-local variables (see src/program_tls.rs): an object holding one
//!   zero-initialised TLS symbol, placed after every other object so that it
//!   ends exactly at the thread pointer.
//! - Generates the Fortran side from include/mpi.h (build/fortran.rs): the
//!   bindings, mpif.h and the `mpi` module, compiled by gfortran when present.

#[path = "build/fortran.rs"]
mod fortran;
#[path = "build/header.rs"]
mod header;

use std::path::PathBuf;
use std::process::Command;

/// Bytes reserved; exported as mpcrs_program_tls_size for program_tls.rs.
const RESERVE: usize = 64 * 1024;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=build");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR set by cargo"));
    generate_fortran(&out);
    reserve_program_tls(&out);
}

fn generate_fortran(out: &std::path::Path) {
    let header_path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("include/mpi.h");
    println!("cargo:rerun-if-changed={}", header_path.display());
    let text = std::fs::read_to_string(&header_path).expect("read include/mpi.h");
    let protos = header::prototypes(&text);
    let (code, _) = fortran::bindings(&protos);
    std::fs::write(out.join("fortran_bindings.rs"), code).expect("write fortran_bindings.rs");
    std::fs::write(out.join("fortran_sizeof.rs"), fortran::sizeof_procedures())
        .expect("write fortran_sizeof.rs");
    let dir = out.join("fortran");
    std::fs::create_dir_all(&dir).expect("create OUT_DIR/fortran");
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let constants = header::constants(&text);
    std::fs::write(dir.join("mpif.h"), fortran::mpif_h(&constants, &version))
        .expect("write mpif.h");
    std::fs::write(dir.join("mpi.f90"), fortran::mpi_module()).expect("write mpi.f90");
    // The module file is gfortran's own format: built here when gfortran is
    // present (mpcrs-fort then finds it); otherwise `use mpi` is unavailable
    // and mpif.h still is.
    let fc = std::env::var("MPCRS_FC").unwrap_or_else(|_| "gfortran".into());
    let _ = std::fs::remove_file(dir.join("mpi.mod"));
    match Command::new(&fc)
        .current_dir(&dir)
        .args(["-c", "mpi.f90", "-o", "mpi.o"])
        .status()
    {
        Ok(s) if s.success() => {}
        Ok(s) => panic!("`{fc} -c mpi.f90` in {} failed: {s}", dir.display()),
        Err(e) => println!(
            "cargo:warning=no Fortran compiler ({fc}: {e}): the mpi module is not built; mpif.h is"
        ),
    }
}

fn reserve_program_tls(out: &std::path::Path) {
    let asm = out.join("program_tls_reserve.s");
    let obj = out.join("program_tls_reserve.o");
    std::fs::write(
        &asm,
        format!(
            ".section .tbss.mpcrs_program_tls,\"awT\",@nobits\n\
             .balign 64\n\
             .globl mpcrs_program_tls\n\
             .type mpcrs_program_tls,@object\n\
             .size mpcrs_program_tls,{RESERVE}\n\
             mpcrs_program_tls:\n\
             .zero {RESERVE}\n\
             .section .rodata.mpcrs_program_tls_size,\"a\",@progbits\n\
             .balign 8\n\
             .globl mpcrs_program_tls_size\n\
             .type mpcrs_program_tls_size,@object\n\
             .size mpcrs_program_tls_size,8\n\
             mpcrs_program_tls_size:\n\
             .quad {RESERVE}\n\
             .section .note.GNU-stack,\"\",@progbits\n"
        ),
    )
    .expect("write the reservation's assembly");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = Command::new(&cc)
        .arg("-c")
        .arg(&asm)
        .arg("-o")
        .arg(&obj)
        .status()
        .unwrap_or_else(|e| panic!("cannot run the C compiler `{cc}` to assemble {asm:?}: {e}"));
    assert!(status.success(), "`{cc}` failed to assemble {asm:?}");
    // Link arguments come after the crate's and std's objects: the last
    // .tbss input is the last in the block, right below the thread pointer.
    println!("cargo:rustc-link-arg-bin=mpcrs-exec={}", obj.display());
    // Exported so libmpi finds them with dlsym.
    for sym in ["mpcrs_program_tls", "mpcrs_program_tls_size"] {
        println!("cargo:rustc-link-arg-bin=mpcrs-exec=-Wl,--export-dynamic-symbol={sym}");
    }
}
