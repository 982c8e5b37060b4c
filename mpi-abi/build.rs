//! Links into mpcrs-exec the thread-local reservation for the program copies'
//! own thread-local variables (see src/program_tls.rs): an object holding one
//! zero-initialised TLS symbol, placed after every other object so that it
//! ends exactly at the thread pointer.

use std::path::PathBuf;
use std::process::Command;

/// Bytes reserved; exported as mpcrs_program_tls_size for program_tls.rs.
const RESERVE: usize = 64 * 1024;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR set by cargo"));
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
