//! Generates the Fortran side of libmpi from include/mpi.h:
//! - `fortran_bindings.rs`: `mpi_name_` and `pmpi_name_` for every C function
//!   whose arguments have a Fortran form (gfortran's conventions: lower-case
//!   name and one underscore, every argument by reference, a trailing
//!   `ierror`, and the hidden lengths of character arguments as `size_t` after
//!   all the others), each calling the C function (MPI_ or PMPI_). The
//!   functions left out, and why, are listed in `NOT_IN_FORTRAN`.
//! - `mpif.h`: every integer constant of mpi.h with the same value, plus the
//!   Fortran-only ones, written so that fixed and free source forms both read it.
//! - `mpi.f90`: the `mpi` module, mpif.h's declarations in a module.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use crate::header::{Param, Proto};

/// Functions whose Fortran form differs from the C one beyond what the
/// argument kinds below cover; they are written by hand (src/fortran/by_hand.rs,
/// src/fortran/keyvals.rs).
pub const HAND_WRITTEN: &[&str] = &[
    "Init",
    "Init_thread",
    "Wtime",
    "Wtick",
    "Aint_add",
    "Aint_diff",
    "Pcontrol",
    "Comm_get_attr",
    "Comm_set_attr",
    "Type_get_attr",
    "Type_set_attr",
    "Win_get_attr",
    "Win_set_attr",
    "Attr_get",
    "Attr_put",
    "Buffer_detach",
    "Comm_create_keyval",
    "Type_create_keyval",
    "Win_create_keyval",
    "Keyval_create",
    "Info_create_env",
    "Info_get_string",
    "File_create_errhandler",
    "Grequest_start",
];

/// MPI-1 functions whose address-sized arguments are default INTEGERs in
/// Fortran (MPI_ADDRESS, MPI_TYPE_EXTENT, MPI_TYPE_HVECTOR, ...), where C has
/// MPI_Aint: values widen on the way in; results that do not fit an INTEGER
/// fail with MPI_ERR_ARG rather than being cut.
const MPI1_INTEGER_ADDRESSES: &[&str] = &[
    "Address",
    "Type_extent",
    "Type_lb",
    "Type_ub",
    "Type_hvector",
    "Type_hindexed",
    "Type_struct",
];

/// Integer-valued C types a Fortran INTEGER carries unchanged (handles are ints
/// in the MPICH ABI).
const INT_TYPES: &[&str] = &[
    "int",
    "MPI_Comm",
    "MPI_Datatype",
    "MPI_Group",
    "MPI_Op",
    "MPI_Request",
    "MPI_Errhandler",
    "MPI_Info",
    "MPI_Win",
    "MPI_Message",
    "MPI_Session",
    "MPI_Fint",
];

/// C types an INTEGER(KIND=MPI_ADDRESS_KIND / MPI_OFFSET_KIND / MPI_COUNT_KIND) carries.
const WIDE_TYPES: &[&str] = &["MPI_Aint", "MPI_Count", "MPI_Offset"];

/// Procedure arguments whose Fortran interface is the C one (everything by
/// reference): the procedure's address is passed as it is.
const SAME_PROCEDURES: &[&str] = &[
    "MPI_User_function",
    "MPI_Comm_errhandler_function",
    "MPI_Win_errhandler_function",
    "MPI_Session_errhandler_function",
];

enum Kind {
    /// An integer passed by value in C: `*p`.
    Int,
    /// MPI-1's INTEGER for C's MPI_Aint by value: widened.
    IntAsWide,
    /// MPI-1's INTEGER for C's MPI_Aint result: narrowed, if it fits.
    IntFromWide,
    /// MPI-1's INTEGER array for C's MPI_Aint array of `count` entries: widened.
    IntsAsWide,
    /// An address-sized integer passed by value: `*p`.
    Wide,
    /// MPI_File by value: the Fortran integer converted (MPI_File_f2c).
    File,
    /// MPI_File *: converted in and out.
    FileRef,
    /// `const char *`: blank-trimmed and NUL-terminated.
    InString,
    /// `char *`: written back blank-padded.
    OutString,
    /// A choice buffer: MPI_BOTTOM and MPI_IN_PLACE become C's.
    Buffer,
    /// MPI_Status *: MPI_STATUS(ES)_IGNORE become C's.
    Status,
    /// int * / int[]: MPI_ERRCODES_IGNORE, MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY become C's.
    Ints,
    /// Any other pointer (handle arrays and outputs, MPI_Aint *, ...): unchanged.
    Pointer,
    /// A procedure with the same interface in both languages.
    Procedure,
}

fn kind(f: &Proto, p: &Param) -> Result<Kind, String> {
    let base = p.base();
    if base.starts_with("MPI_T_") {
        return Err("MPI_T has no Fortran binding".into());
    }
    let depth = p.ty.matches('*').count() + p.array as usize;
    if p.ty.trim_start_matches("const ").starts_with("char") && depth >= 2 {
        return Err(format!("argument {} (an array of strings)", p.name));
    }
    if MPI1_INTEGER_ADDRESSES.contains(&f.name.as_str()) && base == "MPI_Aint" {
        return Ok(match (p.array, p.is_pointer()) {
            (true, _) => Kind::IntsAsWide,
            (false, true) => Kind::IntFromWide,
            (false, false) => Kind::IntAsWide,
        });
    }
    if base.ends_with("_function") || base.ends_with("_fn") {
        return if SAME_PROCEDURES.contains(&base) {
            Ok(Kind::Procedure)
        } else {
            Err(format!(
                "its {base} argument has another interface in Fortran"
            ))
        };
    }
    if !p.is_pointer() {
        return Ok(match base {
            b if INT_TYPES.contains(&b) => Kind::Int,
            b if WIDE_TYPES.contains(&b) => Kind::Wide,
            "MPI_File" => Kind::File,
            other => return Err(format!("argument {} of type {other}", p.name)),
        });
    }
    Ok(match base {
        "void" => Kind::Buffer,
        "char" if p.ty.starts_with("const") => Kind::InString,
        "char" => Kind::OutString,
        "MPI_Status" => Kind::Status,
        "int" => Kind::Ints,
        "MPI_File" => Kind::FileRef,
        _ => Kind::Pointer,
    })
}

/// The Rust code of every generated binding, and the functions left out with the reason.
pub fn bindings(protos: &[Proto]) -> (String, Vec<(String, String)>) {
    let mut code = String::new();
    let mut declarations = String::new();
    let mut skipped = Vec::new();
    let mut seen = BTreeSet::new();
    for p in protos {
        if !seen.insert(p.c_name()) {
            continue;
        }
        let reason = if p.prefix == "MPI_" && HAND_WRITTEN.contains(&p.name.as_str()) {
            continue;
        } else if p.name.starts_with("T_") {
            Some("MPI_T has no Fortran binding".to_string())
        } else if p.name.ends_with("_c") {
            Some("a large-count (_c) form, which mpif.h and the mpi module do not have".into())
        } else if p.name.contains("c2f")
            || p.name.contains("f2c")
            || p.name.contains("f082")
            || p.name.ends_with("_toint")
            || p.name.ends_with("_fromint")
        {
            Some("a C-only conversion".into())
        } else if p.ret != "int" {
            Some(format!("returns {}", p.ret))
        } else if p.varargs {
            Some("takes variable arguments".into())
        } else {
            p.params.iter().find_map(|a| kind(p, a).err())
        };
        if let Some(reason) = reason {
            skipped.push((p.c_name(), reason));
            continue;
        }
        declare(p, &mut declarations);
        binding(p, "", &mut code);
        if p.prefix == "MPI_" {
            binding(p, "P", &mut code);
        }
    }
    let mut out = String::new();
    out.push_str("/// The C functions the bindings call (defined elsewhere in this library).\n");
    out.push_str("mod c {\n    use std::os::raw::{c_char, c_int, c_void};\n    extern \"C\" {\n");
    out.push_str(&declarations);
    out.push_str("    }\n}\n\n");
    out.push_str(&code);
    out.push_str("/// C functions with no Fortran binding, and why.\npub const NOT_IN_FORTRAN: &[(&str, &str)] = &[\n");
    for (name, why) in &skipped {
        writeln!(out, "    ({name:?}, {why:?}),").unwrap();
    }
    out.push_str("];\n");
    (out, skipped)
}

fn c_type(f: &Proto, p: &Param) -> &'static str {
    match kind(f, p).expect("classified before") {
        Kind::Int => "c_int",
        Kind::Wide | Kind::IntAsWide => "i64",
        Kind::File => "*mut c_void",
        Kind::InString => "*const c_char",
        Kind::OutString => "*mut c_char",
        _ => "*mut c_void",
    }
}

fn declare(p: &Proto, out: &mut String) {
    let args: Vec<String> = p
        .params
        .iter()
        .map(|a| format!("{}: {}", ident(&a.name), c_type(p, a)))
        .collect();
    for prefix in ["", "P"] {
        if prefix == "P" && p.prefix != "MPI_" {
            continue;
        }
        writeln!(
            out,
            "        pub fn {prefix}{}({}) -> c_int;",
            p.c_name(),
            args.join(", ")
        )
        .unwrap();
    }
}

/// A parameter name usable in Rust (`type` and friends are keywords).
fn ident(name: &str) -> String {
    match name {
        "type" | "ref" | "in" | "fn" | "mod" | "use" | "match" | "loop" => format!("{name}_"),
        n => n.to_string(),
    }
}

fn binding(p: &Proto, profiling: &str, out: &mut String) {
    let fname = format!("{}{}_", profiling.to_lowercase(), p.c_name().to_lowercase());
    let mut args = Vec::new();
    let mut hidden = Vec::new();
    let mut before = Vec::new();
    let mut call = Vec::new();
    let mut after = Vec::new();
    for a in &p.params {
        let n = ident(&a.name);
        match kind(p, a).unwrap() {
            Kind::Int => {
                args.push(format!("{n}: *const c_int"));
                call.push(format!("*{n}"));
            }
            Kind::IntAsWide => {
                args.push(format!("{n}: *const c_int"));
                call.push(format!("*{n} as i64"));
            }
            Kind::IntFromWide => {
                args.push(format!("{n}: *mut c_int"));
                before.push(format!("let mut {n}_c: i64 = 0;"));
                call.push(format!("(&mut {n}_c as *mut i64).cast()"));
                after.push(format!(
                    "let rc = match c_int::try_from({n}_c) {{ Ok(v) if rc == 0 => {{ *{n} = v; rc }} Ok(_) => rc, Err(_) => MPI_ERR_ARG }};"
                ));
            }
            Kind::IntsAsWide => {
                args.push(format!("{n}: *const c_int"));
                before.push(format!(
                    "let {n}_c: Vec<i64> = (0..(*count).max(0) as usize).map(|i| *{n}.add(i) as i64).collect();"
                ));
                call.push(format!("{n}_c.as_ptr() as *mut c_void"));
            }
            Kind::Wide => {
                args.push(format!("{n}: *const i64"));
                call.push(format!("*{n}"));
            }
            Kind::File => {
                args.push(format!("{n}: *const c_int"));
                call.push(format!("file_from(*{n})"));
            }
            Kind::FileRef => {
                args.push(format!("{n}: *mut c_int"));
                before.push(format!("let mut {n}_c = file_from(*{n});"));
                call.push(format!("(&mut {n}_c as *mut *mut c_void).cast()"));
                after.push(format!("*{n} = file_to({n}_c);"));
            }
            Kind::InString => {
                args.push(format!("{n}: *const c_char"));
                hidden.push(format!("{n}_len: usize"));
                // Info keys and values lose leading blanks too (MPI 4.0, 10.1).
                let make = if matches!(a.name.as_str(), "key" | "value") {
                    "info"
                } else {
                    "new"
                };
                before.push(format!("let {n}_c = InString::{make}({n}, {n}_len);"));
                call.push(format!("{n}_c.as_ptr()"));
            }
            Kind::OutString => {
                args.push(format!("{n}: *mut c_char"));
                hidden.push(format!("{n}_len: usize"));
                before.push(format!("let mut {n}_c = OutString::new({n}, {n}_len);"));
                call.push(format!("{n}_c.as_mut_ptr()"));
                if p.params.iter().any(|a| a.name == "flag") {
                    after.push(format!(
                        "if rc == 0 && *(flag as *const c_int) != 0 {{ {n}_c.write_back(); }}"
                    ));
                } else {
                    after.push(format!("{n}_c.write_back();"));
                }
            }
            Kind::Buffer => {
                args.push(format!("{n}: *mut c_void"));
                call.push(format!("sp.buffer({n})"));
            }
            Kind::Status => {
                args.push(format!("{n}: *mut c_void"));
                call.push(format!("sp.status({n})"));
            }
            Kind::Ints => {
                args.push(format!("{n}: *mut c_void"));
                call.push(format!("sp.ints({n})"));
            }
            Kind::Pointer | Kind::Procedure => {
                args.push(format!("{n}: *mut c_void"));
                call.push(n.clone());
            }
        }
    }
    // Fortran counts array positions from 1: the indices of requests C
    // reports (MPI_UNDEFINED, negative, stays).
    match p.name.as_str() {
        "Waitany" | "Testany" => after.push(
            "if rc == 0 && *(indx as *const c_int) >= 0 { *(indx as *mut c_int) += 1; }".into(),
        ),
        "Waitsome" | "Testsome" => after.push(
            "if rc == 0 { for i in 0..(*(outcount as *const c_int)).max(0) as usize { *(array_of_indices as *mut c_int).add(i) += 1; } }".into(),
        ),
        _ => {}
    }
    args.push("ierror: *mut c_int".into());
    args.extend(hidden);
    let uses_specials = call.iter().any(|c| c.starts_with("sp."));
    writeln!(out, "#[no_mangle]").unwrap();
    writeln!(
        out,
        "pub unsafe extern \"C\" fn {fname}({}) {{",
        args.join(", ")
    )
    .unwrap();
    writeln!(
        out,
        "    // SAFETY: Fortran passes every argument by reference to storage of\n    \
         // the kind mpif.h declares; the C function checks the values."
    )
    .unwrap();
    writeln!(out, "    unsafe {{").unwrap();
    if uses_specials {
        writeln!(out, "        let sp = Specials::of_rank();").unwrap();
    }
    for b in &before {
        writeln!(out, "        {b}").unwrap();
    }
    writeln!(
        out,
        "        let rc = c::{profiling}{}({});",
        p.c_name(),
        call.join(", ")
    )
    .unwrap();
    for a in &after {
        writeln!(out, "        {a}").unwrap();
    }
    writeln!(out, "        set_ierror(ierror, rc);\n    }}\n}}\n").unwrap();
}

/// Constants that are INTEGER(KIND=MPI_OFFSET_KIND) in Fortran.
const OFFSET_CONSTANTS: &[&str] = &["MPI_DISPLACEMENT_CURRENT"];

/// C names that are not constants in Fortran (MPI_Status's fields are
/// indices there; MPI_F_* describe the Fortran status for C).
fn c_only(name: &str) -> bool {
    name.starts_with("MPI_F_") || matches!(name, "MPI_FILE_NULL")
}

/// mpif.h: every integer constant of mpi.h, then the Fortran-only ones. As
/// MPICH's, it declares the types of MPI_WTIME and MPI_WTICK but not of
/// MPI_AINT_ADD and MPI_AINT_DIFF, which programs declare themselves.
pub fn mpif_h(constants: &BTreeMap<String, i64>, version: &str) -> String {
    let mut out = String::new();
    let line = |out: &mut String, s: &str| {
        assert!(s.len() <= 72, "mpif.h line over 72 columns: {s}");
        out.push_str(s);
        out.push('\n');
    };
    line(
        &mut out,
        &format!("! mpif.h of mpcrs {version}: the MPI constants for Fortran,"),
    );
    line(
        &mut out,
        "! generated from mpi.h (same values: MPICH's). Fixed and free",
    );
    line(&mut out, "! source forms both read it.");
    let fortran_only: &[(&str, i64)] = &[
        ("MPI_STATUS_SIZE", 5),
        ("MPI_SOURCE", 3),
        ("MPI_TAG", 4),
        ("MPI_ERROR", 5),
        ("MPI_ADDRESS_KIND", 8),
        ("MPI_OFFSET_KIND", 8),
        ("MPI_COUNT_KIND", 8),
        ("MPI_INTEGER_KIND", 4),
        ("MPI_FILE_NULL", 0),
    ];
    let mut names = BTreeSet::new();
    for (name, v) in fortran_only {
        names.insert(name.to_string());
        line(&mut out, &format!("      INTEGER {name}"));
        line(&mut out, &format!("      PARAMETER ({name}={v})"));
    }
    for (name, &v) in constants {
        if c_only(name) || !names.insert(name.clone()) {
            continue;
        }
        if OFFSET_CONSTANTS.contains(&name.as_str()) {
            line(&mut out, &format!("      INTEGER*8 {name}"));
            line(&mut out, &format!("      PARAMETER ({name}={v})"));
            continue;
        }
        // Handles above 2^31 (0x8c000000) are negative INTEGERs, as in C.
        let v32 = v as u32 as i32;
        assert!(
            v == v32 as i64 || v == v32 as u32 as i64,
            "{name}={v} is no 32-bit value"
        );
        let value = if v32 == i32::MIN {
            "(-2147483647-1)".to_string()
        } else {
            v32.to_string()
        };
        line(&mut out, &format!("      INTEGER {name}"));
        line(&mut out, &format!("      PARAMETER ({name}={value})"));
    }
    // The special addresses: a common block the library finds in each rank's
    // copy of the program (src/fortran/specials.rs); its layout is fixed there.
    for decl in [
        "      INTEGER MPI_BOTTOM, MPI_IN_PLACE",
        "      INTEGER MPI_STATUS_IGNORE(MPI_STATUS_SIZE)",
        "      INTEGER MPI_STATUSES_IGNORE(MPI_STATUS_SIZE,1)",
        "      INTEGER MPI_ERRCODES_IGNORE(1)",
        "      INTEGER MPI_UNWEIGHTED(1), MPI_WEIGHTS_EMPTY(1)",
        "      COMMON /MPCRS_FCONST/ MPI_BOTTOM, MPI_IN_PLACE",
        "      COMMON /MPCRS_FCONST/ MPI_STATUS_IGNORE, MPI_STATUSES_IGNORE",
        "      COMMON /MPCRS_FCONST/ MPI_ERRCODES_IGNORE",
        "      COMMON /MPCRS_FCONST/ MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY",
        "      SAVE /MPCRS_FCONST/",
        "      DOUBLE PRECISION MPI_WTIME, MPI_WTICK",
        "      DOUBLE PRECISION PMPI_WTIME, PMPI_WTICK",
        "      EXTERNAL MPI_WTIME, MPI_WTICK, PMPI_WTIME, PMPI_WTICK",
        "      EXTERNAL MPI_COMM_NULL_COPY_FN, MPI_COMM_DUP_FN",
        "      EXTERNAL MPI_COMM_NULL_DELETE_FN",
        "      EXTERNAL MPI_TYPE_NULL_COPY_FN, MPI_TYPE_DUP_FN",
        "      EXTERNAL MPI_TYPE_NULL_DELETE_FN",
        "      EXTERNAL MPI_WIN_NULL_COPY_FN, MPI_WIN_DUP_FN",
        "      EXTERNAL MPI_WIN_NULL_DELETE_FN",
        "      EXTERNAL MPI_NULL_COPY_FN, MPI_DUP_FN, MPI_NULL_DELETE_FN",
    ] {
        line(&mut out, decl);
    }
    out
}

/// The `mpi` module: mpif.h's declarations, for `use mpi`, with the types
/// of the functions mpif.h leaves to the program (MPI_AINT_ADD and
/// MPI_AINT_DIFF, which would otherwise be implicitly REAL), and MPI_SIZEOF,
/// a generic over the intrinsic types and kinds (any rank: the argument is
/// assumed-rank, and only its type matters).
pub fn mpi_module() -> String {
    let mut out = String::from(
        "! The mpi module of mpcrs: the declarations of mpif.h, and what a module adds.\n\
         module mpi\n\
         \x20 implicit none\n\
         \x20 include 'mpif.h'\n\
         \x20 integer(kind=MPI_ADDRESS_KIND), external :: MPI_AINT_ADD, MPI_AINT_DIFF\n\
         \x20 integer(kind=MPI_ADDRESS_KIND), external :: PMPI_AINT_ADD, PMPI_AINT_DIFF\n\
         \x20 interface MPI_SIZEOF\n",
    );
    for (fortran_type, symbol, _) in SIZEOF_TYPES {
        writeln!(
            out,
            "    subroutine {symbol}(x, size, ierror)\n      \
             {fortran_type}, dimension(..), intent(in) :: x\n      \
             integer, intent(out) :: size, ierror\n    \
             end subroutine {symbol}"
        )
        .unwrap();
    }
    // CHARACTER: any length; its size is the length gfortran passes after
    // the arguments.
    out.push_str(
        "    subroutine mpcrs_sizeof_character(x, size, ierror)\n      \
         character(len=*), dimension(..), intent(in) :: x\n      \
         integer, intent(out) :: size, ierror\n    \
         end subroutine mpcrs_sizeof_character\n",
    );
    out.push_str("  end interface MPI_SIZEOF\nend module mpi\n");
    out
}

/// MPI_SIZEOF's specific procedures: the Fortran type, the symbol (libmpi
/// defines each, src/fortran/by_hand.rs) and the size in bytes.
pub const SIZEOF_TYPES: &[(&str, &str, usize)] = &[
    ("integer(kind=1)", "mpcrs_sizeof_integer1", 1),
    ("integer(kind=2)", "mpcrs_sizeof_integer2", 2),
    ("integer(kind=4)", "mpcrs_sizeof_integer4", 4),
    ("integer(kind=8)", "mpcrs_sizeof_integer8", 8),
    ("real(kind=4)", "mpcrs_sizeof_real4", 4),
    ("real(kind=8)", "mpcrs_sizeof_real8", 8),
    ("real(kind=16)", "mpcrs_sizeof_real16", 16),
    ("complex(kind=4)", "mpcrs_sizeof_complex8", 8),
    ("complex(kind=8)", "mpcrs_sizeof_complex16", 16),
    ("complex(kind=16)", "mpcrs_sizeof_complex32", 32),
    ("logical(kind=1)", "mpcrs_sizeof_logical1", 1),
    ("logical(kind=2)", "mpcrs_sizeof_logical2", 2),
    ("logical(kind=4)", "mpcrs_sizeof_logical4", 4),
    ("logical(kind=8)", "mpcrs_sizeof_logical8", 8),
];

/// The Rust definitions of MPI_SIZEOF's specific procedures (gfortran's names:
/// lower case and an underscore).
pub fn sizeof_procedures() -> String {
    let mut out = String::new();
    for (_, symbol, size) in SIZEOF_TYPES {
        writeln!(
            out,
            "#[no_mangle]\npub unsafe extern \"C\" fn {symbol}_(_x: *const c_void, size: *mut c_int, ierror: *mut c_int) {{\n    \
             // SAFETY: Fortran passes the INTEGERs by reference.\n    \
             unsafe {{ sized(size, ierror, {size}) }}\n}}"
        )
        .unwrap();
    }
    out.push_str(
        "#[no_mangle]\npub unsafe extern \"C\" fn mpcrs_sizeof_character_(_x: *const c_void, size: *mut c_int, ierror: *mut c_int, len: usize) {\n    \
         // SAFETY: Fortran passes the INTEGERs by reference, and the length after them.\n    \
         unsafe { sized(size, ierror, c_int::try_from(len).unwrap_or(c_int::MAX)) }\n}\n",
    );
    out
}
