//! The libraries a privatized program needs: the system's, loaded once and
//! shared by the ranks, and the user's own, copied per rank like the program.
//!
//! A library is the system's when its name is one of the runtime's (libc,
//! libstdc++, libm, libgcc_s, libgfortran, libmpi, the dynamic loader, ...), or
//! when the program's search path (DT_RPATH, LD_LIBRARY_PATH, DT_RUNPATH, as the
//! dynamic loader searches them) does not find it outside the system's library
//! directories. Any other is the user's: each rank's copy of the program needs
//! the rank's copy of it, by a path written into the copy (`reserve_needed_string`).
//! OpenMP's runtime and parallel HDF5 are system libraries copied per rank all
//! the same (`PER_RANK_SYSTEM_NAMES`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use mpcrs_elf::Image;

/// Room for "/proc/self/fd/N" and its NUL.
pub(crate) const PATH_SLOT: usize = 32;

/// Libraries shared by all ranks whatever the search path finds.
const SYSTEM_NAMES: &[&str] = &[
    "libc.so",
    "libstdc++.so",
    "libm.so",
    "libmvec.so",
    "libgcc_s.so",
    "libquadmath.so",
    "libatomic.so",
    "libmpi.so",
    "libmpich.so",
    "libfti.so",
    "ld-linux",
    "libpthread.so",
    "libdl.so",
    "librt.so",
    "libutil.so",
    "libresolv.so",
];

const SYSTEM_DIRS: &[&str] = &["/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/"];

/// System libraries copied per rank all the same: OpenMP's runtime keeps its
/// thread pool and team state per OS thread, which the ranks of a worker
/// share, and starts its threads through the pthread_create its copy binds to
/// (libmpi's, so they act for the rank). Parallel HDF5 (Debian's MPI flavours,
/// with their high-level, C++ and Fortran libraries) keeps its open files,
/// identifiers and property lists in globals, one library per process, and
/// sets variables programs hold copies of (H5P_FILE_ACCESS, H5T_NATIVE_*)
/// when it starts: shared, the ranks would share its state, and a program's
/// copy of those variables would be a snapshot taken before they were set.
const PER_RANK_SYSTEM_NAMES: &[&str] = &[
    "libgomp.so",
    "libgfortran.so",
    "libhdf5_mpich",
    "libhdf5_openmpi",
];

/// Where the dynamic loader's default directories hold `name`.
fn find_in_system_dirs(name: &str) -> Option<PathBuf> {
    [
        "/lib/x86_64-linux-gnu",
        "/usr/lib/x86_64-linux-gnu",
        "/lib64",
        "/usr/lib64",
        "/lib",
        "/usr/lib",
    ]
    .iter()
    .map(|d| Path::new(d).join(name))
    .find(|p| p.is_file())
}

fn is_per_rank_system(name: &str) -> bool {
    let base = name.rsplit('/').next().unwrap_or(name);
    PER_RANK_SYSTEM_NAMES.iter().any(|s| base.starts_with(s))
}

/// A user library, copied per rank.
pub(crate) struct UserLib {
    pub(crate) path: PathBuf,
    pub(crate) image: Image,
    /// Where its copy's needed paths go: (file offset, index of the library).
    pub(crate) slots: Vec<(usize, usize)>,
}

#[derive(Default)]
pub(crate) struct Libraries {
    /// The system's libraries the program (or its own libraries) need, to load
    /// once, before the copies: by path where the search path finds them.
    pub(crate) system: Vec<String>,
    /// The user's libraries, each after those it needs.
    pub(crate) user: Vec<UserLib>,
    /// Where the program copy's needed paths go.
    pub(crate) program_slots: Vec<(usize, usize)>,
}

fn is_system(name: &str, found: Option<&Path>) -> bool {
    let base = name.rsplit('/').next().unwrap_or(name);
    if SYSTEM_NAMES.iter().any(|s| base.starts_with(s)) {
        return true;
    }
    match found {
        None => true,
        Some(p) => {
            let real = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
            let s = real.to_string_lossy();
            SYSTEM_DIRS.iter().any(|d| s.starts_with(d))
        }
    }
}

fn expand_origin(s: &str, origin: &Path) -> String {
    let o = origin.to_string_lossy();
    s.replace("${ORIGIN}", &o).replace("$ORIGIN", &o)
}

/// Where the dynamic loader finds `name` for an object at `path`, if not in
/// its cache or default directories.
fn find(name: &str, image: &Image, path: &Path) -> Result<Option<PathBuf>, String> {
    let origin = path
        .canonicalize()
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| PathBuf::from("."));
    if name.contains('/') {
        let p = PathBuf::from(expand_origin(name, &origin));
        return Ok(p.is_file().then_some(p));
    }
    let (rpath, runpath) = image
        .search_paths()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut dirs: Vec<String> = Vec::new();
    let mut add =
        |list: &str| dirs.extend(list.split(':').filter(|d| !d.is_empty()).map(String::from));
    if runpath.is_none() {
        if let Some(r) = &rpath {
            add(r);
        }
    }
    if let Ok(l) = std::env::var("LD_LIBRARY_PATH") {
        add(&l);
    }
    if let Some(r) = &runpath {
        add(r);
    }
    Ok(dirs
        .iter()
        .map(|d| PathBuf::from(expand_origin(d, &origin)).join(name))
        .find(|p| p.is_file()))
}

struct Planner {
    libs: Libraries,
    /// Index of each user library by its real path.
    seen: HashMap<PathBuf, Option<usize>>,
}

impl Planner {
    /// Walks the needs of `image` (at `path`); returns the slots it needs.
    fn needs(&mut self, image: &mut Image, path: &Path) -> Result<Vec<(usize, usize)>, String> {
        let mut slots = Vec::new();
        let needed = image
            .needed()
            .map_err(|e| format!("{}: {e}", path.display()))?;
        for name in needed {
            let per_rank = is_per_rank_system(&name);
            let mut found = find(&name, image, path)?;
            if found.is_none() && per_rank {
                found = find_in_system_dirs(&name);
            }
            let copied = per_rank && found.is_some();
            if !copied && is_system(&name, found.as_deref()) {
                let s = found
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or(name);
                if !self.libs.system.contains(&s) {
                    self.libs.system.push(s);
                }
                continue;
            }
            let found = found.expect("a user library was found");
            let real = found.canonicalize().unwrap_or(found);
            let index = match self.seen.get(&real) {
                Some(Some(i)) => *i,
                Some(None) => {
                    return Err(format!(
                        "{} and the libraries it needs depend on each other in a circle",
                        real.display()
                    ))
                }
                None => self.library(&real)?,
            };
            let at = image
                .reserve_needed_string(&name, PATH_SLOT)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            slots.push((at, index));
        }
        Ok(slots)
    }

    fn library(&mut self, path: &Path) -> Result<usize, String> {
        self.seen.insert(path.to_path_buf(), None);
        let bytes =
            std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let mut image = Image::parse(bytes).map_err(|e| format!("{}: {e}", path.display()))?;
        let slots = self.needs(&mut image, path)?;
        self.libs.user.push(UserLib {
            path: path.to_path_buf(),
            image,
            slots,
        });
        let i = self.libs.user.len() - 1;
        self.seen.insert(path.to_path_buf(), Some(i));
        Ok(i)
    }
}

/// The libraries of the program `image` at `path`; reserves in it (and in its
/// user libraries) the room for the paths of each rank's copies.
pub(crate) fn plan(image: &mut Image, path: &Path) -> Result<Libraries, String> {
    let mut p = Planner {
        libs: Libraries::default(),
        seen: HashMap::new(),
    };
    p.libs.program_slots = p.needs(image, path)?;
    Ok(p.libs)
}

/// Writes "/proc/self/fd/FD" into the slot at `at`.
pub(crate) fn write_slot(bytes: &mut [u8], at: usize, fd: i32) {
    let s = format!("/proc/self/fd/{fd}");
    bytes[at..at + PATH_SLOT].fill(0);
    bytes[at..at + s.len()].copy_from_slice(s.as_bytes());
}
