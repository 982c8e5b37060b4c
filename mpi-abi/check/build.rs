//! Runs bindgen over mpi-abi/include/mpi.h and writes:
//! - `header.rs`: the header's types, constants and function declarations, with
//!   `MPI_Status` taken from the Rust side (its layout is checked separately);
//! - `signatures.rs`: for every function the header declares, a constant of the
//!   header's function-pointer type initialized with the Rust function of the same
//!   name. If a signature differs, or the Rust side lacks a function, the crate
//!   does not compile.
//! - `status.rs`: the header's own MPI_Status, for the layout comparison.

use std::path::PathBuf;

use quote::ToTokens;

fn main() {
    let header = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../include/mpi.h");
    println!("cargo:rerun-if-changed={}", header.display());
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());

    let functions = bindgen::Builder::default()
        .header(header.to_str().unwrap())
        .allowlist_function("P?MPIX?_.*")
        .allowlist_function("MPIR_Dup_fn")
        .allowlist_type("MPIX?_.*")
        .blocklist_type("MPI_Status")
        .raw_line("pub use mpi::MPI_Status;")
        // The opaque structures behind pointer handles (MPI_File, MPI_T_*) are
        // the Rust side's, so that signatures using them compare equal.
        .blocklist_type("mpcrs_.*")
        .raw_line("pub use mpi::ctypes::{mpcrs_file, mpcrs_t_enum, mpcrs_t_cvar_handle, mpcrs_t_pvar_handle, mpcrs_t_pvar_session};")
        .layout_tests(false)
        .generate()
        .expect("bindgen could not read mpi.h");
    let text = functions.to_string();
    std::fs::write(out.join("header.rs"), &text).unwrap();

    let file: syn::File = syn::parse_str(&text).expect("bindgen output parses");
    let mut checks = String::new();
    for item in file.items {
        let syn::Item::ForeignMod(block) = item else {
            continue;
        };
        for f in block.items {
            let syn::ForeignItem::Fn(f) = f else { continue };
            let name = f.sig.ident.to_string();
            let args: Vec<String> = f
                .sig
                .inputs
                .iter()
                .map(|a| match a {
                    syn::FnArg::Typed(t) => t.ty.to_token_stream().to_string(),
                    syn::FnArg::Receiver(_) => unreachable!("C functions have no receiver"),
                })
                .collect();
            // A variadic function (MPI_Pcontrol) is checked on its fixed
            // arguments (`inputs` leaves the `...` out): the library defines it
            // with those only, which x86-64's calling convention allows.
            let ret = match &f.sig.output {
                syn::ReturnType::Default => String::new(),
                syn::ReturnType::Type(_, t) => format!(" -> {}", t.to_token_stream()),
            };
            checks.push_str(&format!(
                "pub const {name}: unsafe extern \"C-unwind\" fn({}){ret} = mpi::abi::{name};\n",
                args.join(", ")
            ));
        }
    }
    std::fs::write(out.join("signatures.rs"), checks).unwrap();

    let status = bindgen::Builder::default()
        .header(header.to_str().unwrap())
        .allowlist_type("MPI_Status")
        .generate()
        .expect("bindgen could not read mpi.h");
    std::fs::write(out.join("status.rs"), status.to_string()).unwrap();
}
