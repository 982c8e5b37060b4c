//! The compiler wrappers mpcrs-cc / mpcrs-cxx: compile and link MPI programs against mpcrs's mpi.h and
//! libmpi, as mpicc does. `-show` prints the underlying command, `-compile-info`
//! and `-link-info` its compile and link parts. Works from the build directory
//! (target/release) or from an installation (bin/ beside include/ and lib/).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

struct Paths {
    include: PathBuf,
    lib: PathBuf,
}

fn locate() -> Paths {
    let exe = std::env::current_exe().expect("current_exe");
    let dir = exe.parent().expect("executable directory").to_path_buf();
    // Installed layout: PREFIX/bin/mpcrs-cc, PREFIX/include/mpi.h, PREFIX/lib/libmpi.so.
    if let Some(prefix) = dir.parent() {
        if prefix.join("include/mpi.h").exists() && prefix.join("lib/libmpi.so").exists() {
            return Paths {
                include: prefix.join("include"),
                lib: prefix.join("lib"),
            };
        }
    }
    // Build layout: the workspace's mpi-abi/include, and libmpi.so next to us.
    let include = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("include");
    Paths { include, lib: dir }
}

fn is_cxx(argv0: &str) -> bool {
    let name = Path::new(argv0)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("");
    name.contains("cxx") || name.contains("c++") || name.contains("CC")
}

/// Entry point of both wrappers; C++ when called by a C++ name (mpcrs-cxx, mpicxx).
pub fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().collect();
    let argv0 = args.remove(0);
    let compiler = if is_cxx(&argv0) {
        mpcrs_settings::variables::CXX
            .get()
            .unwrap_or_else(|| "c++".into())
    } else {
        mpcrs_settings::variables::CC
            .get()
            .unwrap_or_else(|| "cc".into())
    };
    let p = locate();
    let compile = vec![format!("-I{}", p.include.display())];
    // PIE (the toolchain default, made explicit) lets the launcher load one copy of
    // the program per rank; the rpath finds libmpi when the program runs alone.
    // Unless the user asks for a fixed-address executable: it then runs one rank
    // per process (mpcrs-run --process-mode).
    let no_pie = args
        .iter()
        .any(|a| matches!(a.as_str(), "-no-pie" | "-fno-pie" | "-fno-PIE"));
    let pie: Vec<String> = if no_pie {
        Vec::new()
    } else {
        vec!["-pie".to_string(), "-fPIE".to_string()]
    };
    let link = vec![
        format!("-L{}", p.lib.display()),
        format!("-Wl,-rpath,{}", p.lib.display()),
        "-lmpi".to_string(),
    ];
    let (mut show, mut only_compile, mut only_link) = (false, false, false);
    args.retain(|a| match a.as_str() {
        // FTI's calls are libmpi's (fti.h): nothing more to link.
        "-lfti" => false,
        "-show" | "--show" => {
            show = true;
            false
        }
        "-compile-info" | "--compile-info" => {
            only_compile = true;
            false
        }
        "-link-info" | "--link-info" => {
            only_link = true;
            false
        }
        _ => true,
    });
    let linking = !args
        .iter()
        .any(|a| a == "-c" || a == "-E" || a == "-S" || a == "-M" || a == "-MM");
    let mut cmd: Vec<String> = vec![compiler];
    if only_compile {
        cmd.extend(compile);
    } else if only_link {
        cmd.extend(pie.iter().cloned());
        cmd.extend(link);
    } else {
        cmd.extend(compile);
        if !no_pie {
            cmd.push("-fPIE".into());
        }
        cmd.extend(args);
        if linking {
            cmd.extend(pie.iter().cloned());
            cmd.extend(link);
        }
    }
    if show || only_compile || only_link {
        println!("{}", cmd.join(" "));
        return ExitCode::SUCCESS;
    }
    match Command::new(&cmd[0]).args(&cmd[1..]).status() {
        Ok(s) => ExitCode::from(s.code().unwrap_or(1).clamp(0, 255) as u8),
        Err(e) => {
            mpcrs_settings::report!(error, "mpcrs-cc: cannot run {}: {e}", cmd[0]);
            ExitCode::from(127)
        }
    }
}
