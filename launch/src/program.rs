//! What runs as a process of the job: the program found as the shell would
//! find it, and for C programs linked against MPICH's library, the directory
//! that makes our libmpi answer to its name.

use crate::options::Options;

/// The file `program` names, as the shell would find it (a path, or a name on PATH).
pub fn resolve_program(program: &str) -> Option<std::path::PathBuf> {
    if program.contains('/') {
        return Some(std::path::PathBuf::from(program));
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(program))
            .find(|p| p.is_file())
    })
}

/// What a program is, for how its ranks run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// It links an MPI library (ours or MPICH's: C, C++, Fortran, rsmpi).
    LinksMpi,
    /// A Rust program on mpcrs's own API (the runtime is inside it).
    Mpcrs,
    /// Anything else: a tool, a script, or a wrapper of an MPI program
    /// (`sh -c ./app`, `env X=1 ./app`, `valgrind ./app`). As mpirun does,
    /// the job runs one copy per rank, each a process of one rank.
    Other,
}

/// The kind of program the file at `path` is (`None`: no such file to
/// read, which the start of the job reports).
pub fn kind_of(path: &std::path::Path) -> Option<Kind> {
    if mpcrs_elf::mpi_program(path).is_some() {
        return Some(Kind::LinksMpi);
    }
    let bytes = std::fs::read(path).ok()?;
    // Every program with the runtime inside reads its ranks' count from
    // this variable: its name is in the program's read-only data, stripped
    // or not.
    let runtime_inside = bytes.starts_with(b"\x7fELF")
        && memchr::memmem::find(&bytes, mpcrs_settings::variables::RANKS.name.as_bytes()).is_some();
    Some(if runtime_inside {
        Kind::Mpcrs
    } else {
        Kind::Other
    })
}

/// Whether `program` (as given, and the file it resolves to) is a Python
/// interpreter: CPython and PyPy run one interpreter per process, so each
/// process of the job can be only one rank (mpi4py loads libmpi into it).
pub fn python_interpreter(program: &str) -> bool {
    let named = |p: &std::path::Path| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("python") || n.starts_with("pypy"))
    };
    named(std::path::Path::new(program))
        || resolve_program(program)
            .and_then(|p| std::fs::canonicalize(p).ok())
            .is_some_and(|p| named(&p))
}

/// Whether a program that is not position-independent can run in this job: one
/// rank per process, and no checkpoints (a restart needs the loader's layout).
pub fn directly_runnable(args: &Options) -> Result<(), String> {
    if args.processes != args.ranks {
        return Err(format!(
            "not a position-independent executable, so its ranks cannot share a process: \
             run it with --process-mode (one rank per process), or rebuild it with -fPIE -pie \
             (mpcrs-cc and Debian's compilers do by default) to run {} ranks in {} process(es)",
            args.ranks, args.processes
        ));
    }
    if args.checkpoint.is_some() {
        return Err(
            "not a position-independent executable: checkpoints need one; \
                    rebuild it with -fPIE -pie"
                .into(),
        );
    }
    Ok(())
}

/// A directory where `libmpich.so.12` and `libmpi.so.12` are libmpi.so of
/// `dir` (or of `dir`/../lib), for programs linked by MPICH's compilers and
/// for those that load MPICH's library by name (mpi4py); made once per
/// user and library, atomically.
pub fn mpich_abi_dir(dir: &std::path::Path) -> Result<std::path::PathBuf, String> {
    let lib = [dir.join("libmpi.so"), dir.join("../lib/libmpi.so")]
        .into_iter()
        .find(|p| p.exists())
        .ok_or_else(|| format!("libmpi.so is neither in {} nor in ../lib", dir.display()))?;
    let lib = std::fs::canonicalize(&lib).map_err(|e| format!("{}: {e}", lib.display()))?;
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    // One directory per user and library: builds side by side (two checkouts,
    // an installation and a build tree) never re-point each other's links
    // under a job that is loading them.
    let which = {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        lib.hash(&mut h);
        h.finish()
    };
    let abi = std::env::temp_dir().join(format!("mpcrs-mpich-abi-{uid}-{which:016x}"));
    std::fs::create_dir_all(&abi).map_err(|e| format!("{}: {e}", abi.display()))?;
    {
        use std::os::unix::fs::MetadataExt;
        let meta =
            std::fs::symlink_metadata(&abi).map_err(|e| format!("{}: {e}", abi.display()))?;
        if meta.uid() != uid || !meta.is_dir() {
            return Err(format!("{} is not a directory of this user", abi.display()));
        }
    }
    for name in ["libmpich.so.12", "libmpi.so.12"] {
        let link = abi.join(name);
        if std::fs::read_link(&link).ok().as_deref() != Some(lib.as_path()) {
            let tmp = abi.join(format!("{name}.{}", std::process::id()));
            let _ = std::fs::remove_file(&tmp);
            std::os::unix::fs::symlink(&lib, &tmp)
                .and_then(|_| std::fs::rename(&tmp, &link))
                .map_err(|e| format!("{}: {e}", link.display()))?;
        }
    }
    Ok(abi)
}
