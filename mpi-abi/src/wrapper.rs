//! The compiler wrappers mpcrs-cc / mpcrs-cxx / mpcrs-fort (installed also as
//! mpicc, mpicxx, mpic++, mpiCC, mpifort, mpif90, mpif77): compile and link MPI
//! programs against mpcrs's headers and libmpi, as mpicc does. The language
//! comes from the name the wrapper is called by.
//!
//! Both families of query options are understood, since build systems probe
//! with one or the other: MPICH's `-show`, `-compile-info`/`-compile_info`,
//! `-link-info`/`-link_info`, and Open MPI's `-showme`, `-showme:compile`,
//! `-showme:link`, `-showme:command`, `-showme:incdirs`, `-showme:libdirs`,
//! `-showme:libs`, `-showme:version` (with one or two dashes). `-v` prints the
//! wrapper's identity first, as MPICH's mpicc does. Works from the build
//! directory (target/release) or from an installation (bin/ beside include/
//! and lib/).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Where the Fortran header and module are in the build layout (built by
/// build.rs when gfortran was found).
const BUILT_FORTRAN_DIR: &str = concat!(env!("OUT_DIR"), "/fortran");

#[derive(Clone, Copy, PartialEq, Eq)]
enum Language {
    C,
    Cxx,
    Fortran,
}

impl Language {
    /// From the wrapper's name: mpicxx, mpic++, mpiCC, mpcrs-cxx are C++;
    /// mpifort, mpif90, mpif77, mpcrs-fort are Fortran; the rest C.
    fn of(argv0: &str) -> Language {
        let name = Path::new(argv0)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("");
        if name.contains("fort") || name.contains("f90") || name.contains("f77") {
            Language::Fortran
        } else if name.contains("cxx") || name.contains("c++") || name.contains("CC") {
            Language::Cxx
        } else {
            Language::C
        }
    }

    fn label(self) -> &'static str {
        match self {
            Language::C => "C",
            Language::Cxx => "C++",
            Language::Fortran => "Fortran",
        }
    }

    fn compiler(self) -> String {
        use mpcrs_settings::variables::{CC, CXX, FC};
        match self {
            Language::C => CC.get().unwrap_or_else(|| "cc".into()),
            Language::Cxx => CXX.get().unwrap_or_else(|| "c++".into()),
            Language::Fortran => FC.get().unwrap_or_else(|| "gfortran".into()),
        }
    }
}

struct Paths {
    include: Vec<PathBuf>,
    lib: PathBuf,
}

fn locate(language: Language) -> Paths {
    let exe = std::env::current_exe().expect("current_exe");
    let dir = exe.parent().expect("executable directory").to_path_buf();
    // Installed layout: PREFIX/bin/mpicc, PREFIX/include/{mpi.h,mpif.h,mpi.mod},
    // PREFIX/lib/libmpi.so.
    if let Some(prefix) = dir.parent() {
        if prefix.join("include/mpi.h").exists() && prefix.join("lib/libmpi.so").exists() {
            return Paths {
                include: vec![prefix.join("include")],
                lib: prefix.join("lib"),
            };
        }
    }
    // Build layout: the workspace's mpi-abi/include (and the Fortran files
    // build.rs made), and libmpi.so next to us.
    let mut include = vec![PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("include")];
    if language == Language::Fortran {
        include.push(PathBuf::from(BUILT_FORTRAN_DIR));
    }
    Paths { include, lib: dir }
}

/// What the wrapper was asked to print instead of compiling.
enum Query {
    /// The whole command it would run.
    Command,
    Compile,
    Link,
    Compiler,
    IncludeDirs,
    LibraryDirs,
    Libraries,
    Version,
}

impl Query {
    fn parse(arg: &str) -> Option<Result<Query, String>> {
        let bare = arg.trim_start_matches('-');
        if !arg.starts_with('-') {
            return None;
        }
        let q = match bare {
            "show" | "showme" => Query::Command,
            "compile-info" | "compile_info" | "showme:compile" => Query::Compile,
            "link-info" | "link_info" | "showme:link" => Query::Link,
            "showme:command" => Query::Compiler,
            "showme:incdirs" => Query::IncludeDirs,
            "showme:libdirs" => Query::LibraryDirs,
            "showme:libs" => Query::Libraries,
            "showme:version" => Query::Version,
            other if other.starts_with("showme:") => {
                return Some(Err(format!(
                    "unknown option {arg}: -showme takes compile, link, command, incdirs, libdirs, libs or version"
                )))
            }
            _ => return None,
        };
        Some(Ok(q))
    }
}

/// Whether gfortran is at least version 10, which turned argument mismatches
/// between calls of one routine into errors: every MPI program written against
/// mpif.h passes buffers of several types to MPI_Send, so the wrapper asks for
/// gfortran's older behaviour (warnings), as MPICH's and Open MPI's builds do.
fn gfortran_needs_mismatch_flag(compiler: &str) -> bool {
    let name = Path::new(compiler)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("");
    if !name.contains("gfortran") {
        return false;
    }
    Command::new(compiler)
        .arg("-dumpversion")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|v| v.trim().split('.').next()?.parse::<u32>().ok())
        .is_some_and(|major| major >= 10)
}

/// Entry point of every wrapper; the language is the name's (see Language::of).
pub fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().collect();
    let argv0 = args.remove(0);
    let language = Language::of(&argv0);
    let wrapper_name = Path::new(&argv0)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("mpcrs-cc")
        .to_string();
    let compiler = language.compiler();
    let p = locate(language);

    let mut query = None;
    let mut verbose = false;
    let mut kept = Vec::with_capacity(args.len());
    for a in args {
        match Query::parse(&a) {
            Some(Ok(q)) => query = Some(q),
            Some(Err(msg)) => {
                mpcrs_settings::report!(error, "{wrapper_name}: {msg}");
                return ExitCode::from(2);
            }
            // FTI's and CRaaS's calls are libmpi's (fti.h, craas.h):
            // nothing more to link.
            None if a == "-lfti" || a == "-lcraas" => {}
            None => {
                verbose |= a == "-v";
                kept.push(a);
            }
        }
    }
    let args = kept;

    let mut compile: Vec<String> = p
        .include
        .iter()
        .map(|d| format!("-I{}", d.display()))
        .collect();
    if language == Language::Fortran && gfortran_needs_mismatch_flag(&compiler) {
        compile.push("-fallow-argument-mismatch".into());
    }
    let link = vec![
        format!("-L{}", p.lib.display()),
        format!("-Wl,-rpath,{}", p.lib.display()),
        "-lmpi".to_string(),
    ];

    match query {
        Some(Query::Command) | None => {}
        // What build systems read (CMake's FindMPI, Meson, autotools) carries no
        // PIE flags: they apply these flags to shared libraries too.
        Some(Query::Compile) => return print(&[vec![compiler], compile].concat()),
        Some(Query::Link) => return print(&[vec![compiler], link].concat()),
        Some(Query::Compiler) => return print(&[compiler]),
        Some(Query::IncludeDirs) => {
            return print(
                &p.include
                    .iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>(),
            )
        }
        Some(Query::LibraryDirs) => return print(&[p.lib.display().to_string()]),
        Some(Query::Libraries) => return print(&["mpi".to_string()]),
        Some(Query::Version) => {
            println!(
                "{wrapper_name}: mpcrs {VERSION} (MPICH ABI, MPI 4.0) (Language: {})",
                language.label()
            );
            return ExitCode::SUCCESS;
        }
    }

    let has = |flags: &[&str]| args.iter().any(|a| flags.contains(&a.as_str()));
    // A program is built position-independent so that the launcher can load
    // one copy per rank (most toolchains do so by default; this makes it
    // explicit). Not for a shared library (-shared: -pie would make the link
    // fail, and -fPIC is the library's own), nor where the user chose
    // otherwise: a fixed-address executable runs one rank per process
    // (mpcrs-run --process-mode).
    let shared = has(&["-shared"]);
    let no_pie = has(&["-no-pie", "-fno-pie", "-fno-PIE", "-static"]);
    let own_pic = has(&["-fPIC", "-fpic", "-fPIE", "-fpie"]);
    // Only compiling, preprocessing or listing dependencies: nothing to link.
    let linking = !has(&["-c", "-E", "-S", "-M", "-MM"]);
    // `-v` alone asks for versions: no input, so nothing to link either.
    let only_version = verbose && args.len() == 1;

    let mut cmd: Vec<String> = vec![compiler];
    cmd.extend(compile);
    if !(shared || no_pie || own_pic) {
        cmd.push("-fPIE".into());
    }
    cmd.extend(args);
    if linking && !only_version {
        if !(shared || no_pie) {
            cmd.push("-pie".into());
        }
        cmd.extend(link);
    }
    if matches!(query, Some(Query::Command)) {
        return print(&cmd);
    }
    if verbose {
        // MPICH's first line (Meson reads the version from it).
        println!("{wrapper_name} for mpcrs version {VERSION} (MPICH ABI)");
    }
    match Command::new(&cmd[0]).args(&cmd[1..]).status() {
        Ok(s) => ExitCode::from(s.code().unwrap_or(1).clamp(0, 255) as u8),
        Err(e) => {
            mpcrs_settings::report!(error, "{wrapper_name}: cannot run {}: {e}", cmd[0]);
            ExitCode::from(127)
        }
    }
}

fn print(words: &[String]) -> ExitCode {
    println!("{}", words.join(" "));
    ExitCode::SUCCESS
}
