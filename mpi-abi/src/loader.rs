//! The privatizing loader: runs a C program's `main` once per rank, each rank on
//! its own copy of the program image, so every global and static variable is
//! private to its rank with no source change and no special compiler. libc and
//! libmpi are loaded once and shared by all ranks.
//!
//! Each copy is the executable with DF_1_PIE cleared (dlopen refuses executables),
//! written to its own memfd so the dynamic loader sees distinct files, and opened
//! with dlopen; `main` is found in the program's symbol table.

use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int, c_void};
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};

use mpcrs::run::{env, JobConfig};
use mpcrs_elf::{Image, Initializers};

use crate::handles::{create_job, install_world, rank_state};
use crate::interpose::RankExit;
use crate::libc_state;
use crate::libraries::{self, write_slot, Libraries};
use crate::program_tls;
use crate::shared_text;

/// Default ULT stack of a C rank (see the constant).
const C_STACK_SIZE: usize = mpcrs_settings::variables::C_STACK_SIZE as usize;

const RTLD_DI_LINKMAP: c_int = 2;

#[repr(C)]
struct LinkMap {
    l_addr: usize,
}

extern "C" {
    fn dlinfo(handle: *mut c_void, request: c_int, info: *mut c_void) -> c_int;
}

/// `main(argc, argv, envp)`; exit() in a rank unwinds through it.
type CMain = unsafe extern "C-unwind" fn(c_int, *mut *mut c_char, *mut *mut c_char) -> c_int;

fn die(msg: String) -> ! {
    mpcrs_settings::report!(error, "mpcrs: {msg}");
    mpcrs::abort_job(127)
}

fn dl_error() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated string.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown dynamic loader error".into()
    } else {
        // SAFETY: non-null NUL-terminated string.
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

/// Writes `image` into a new memfd, less the pages `plan` leaves as holes. The
/// fd must stay open while other copies load: the dynamic loader recognises
/// objects by path, and a reused fd number would give a later rank the same
/// "/proc/self/fd/N" and hence the same copy.
fn memfd(what: &str, rank: usize, image: &[u8], plan: &shared_text::Plan) -> c_int {
    let name = CString::new(format!("mpcrs-rank-{rank}")).unwrap();
    // SAFETY: plain syscall with a valid name.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        die(format!(
            "memfd_create for rank {rank}: {}",
            std::io::Error::last_os_error()
        ));
    }
    if let Err(e) = plan.write_copy(fd, image) {
        die(format!("writing the copy of {what} for rank {rank}: {e}"));
    }
    fd
}

/// Loads the system libraries once, into the global scope, before any copy:
/// their own references then bind to their own objects, and the objects a copy
/// takes by copy relocation (std::cout, typeinfo, vtables) are copied from
/// initialized ones. libstdc++ constructs its standard streams only when asked
/// (by an ios_base::Init): asked here, the copies get working streams.
fn load_system_libraries(libs: &[String]) {
    for l in libs {
        let Ok(c) = CString::new(l.as_str()) else {
            continue;
        };
        // SAFETY: a valid name; a library that fails here is reported by the
        // copy that needs it.
        unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
    }
    // SAFETY: looking up a symbol in the global scope.
    let init = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"_ZNSt8ios_base4InitC1Ev".as_ptr()) };
    if !init.is_null() {
        // An ios_base::Init is an empty object; this one is never destroyed, so
        // the streams live as long as the process.
        let object: &'static mut [u64; 2] = Box::leak(Box::new([0; 2]));
        // SAFETY: ios_base::Init::Init(this) with storage for the object.
        let ctor: unsafe extern "C" fn(*mut c_void) = unsafe { std::mem::transmute(init) };
        // SAFETY: as above.
        unsafe { ctor(object.as_mut_ptr().cast()) };
    }
}

/// The program's copy relocations, by name and address, with the symbols they
/// define in the program undefined.
///
/// An executable that refers to a library's variable (optind, stdout, std::cout,
/// a class's typeinfo) holds a copy of it, filled from the library's at load
/// time, and its code reads only that copy. The dynamic loader looks up the
/// object to copy from while skipping executables, but a copy opened with
/// dlopen is no executable and, searched first (RTLD_DEEPBIND), would be found
/// itself. Without its definition there, the lookup finds the library's object.
///
/// What this gives each copy: its own instance of libc's per-process variables
/// (optind, optarg, environ: libc_state.rs writes them there) and a snapshot of
/// each library object, taken once that library is initialized
/// (load_system_libraries): identical for constant objects (typeinfo, vtables,
/// the stdin/stdout/stderr pointers); a stream of its own onto the shared
/// buffer for std::cout and the other standard streams (formatting state per
/// rank, output shared).
///
/// A variable of the user's own library stays defined in the program: that
/// library, copied per rank too, binds to the program's copy as in a process.
/// The loader then copies the copy onto itself, so the library's initial value
/// is copied in after loading (`fill_library_variables`).
fn copy_relocations(image: &mut Image, libs: &Libraries) -> Result<Vec<CopyReloc>, String> {
    let relocs = image.copy_relocations().map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for (name, offset, sym, size) in relocs {
        let library = libs
            .user
            .iter()
            .position(|l| matches!(l.image.symbol(&name), Ok(Some(_))));
        if library.is_none() {
            image.undefine_symbol(sym);
        }
        out.push(CopyReloc {
            name,
            offset,
            size: size as usize,
            library,
        });
    }
    Ok(out)
}

/// A copy relocation of the program.
struct CopyReloc {
    name: String,
    offset: u64,
    size: usize,
    /// The user library that defines the variable.
    library: Option<usize>,
}

/// Copies the initial values of the user libraries' variables the program
/// holds into the rank's program copy (see `copy_relocations`).
fn fill_library_variables(base: usize, copies: &[CopyReloc], lib_fds: &[c_int]) {
    for c in copies {
        let Some(l) = c.library else { continue };
        let path = CString::new(format!("/proc/self/fd/{}", lib_fds[l])).unwrap();
        let name = CString::new(c.name.as_str()).unwrap();
        // SAFETY: finds the rank's copy of the library, loaded with the program.
        let h = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
        if h.is_null() {
            continue;
        }
        // SAFETY: a lookup in that copy; its own definition comes first.
        let from = unsafe { libc::dlsym(h, name.as_ptr()) };
        if !from.is_null() {
            // SAFETY: both hold `size` bytes of the variable (the program's copy
            // was sized by the link against this library).
            unsafe {
                std::ptr::copy_nonoverlapping(
                    from.cast::<u8>(),
                    (base + c.offset as usize) as *mut u8,
                    c.size,
                )
            };
        }
        // SAFETY: drops the reference just taken; the copy stays loaded.
        unsafe { libc::dlclose(h) };
    }
}

/// A rank's loaded copy: its `main`, where it is loaded, and the memfds to
/// close once all are loaded.
struct Copy {
    main: CMain,
    base: usize,
    fds: Vec<c_int>,
    /// What dlopen returned.
    handle: usize,
}

/// Loads rank `rank`'s copies of the user's libraries and of the program,
/// opened so that each copy's symbols are searched first in its own libraries
/// (RTLD_DEEPBIND: libmpi, needed first, comes before libc, so the copy calls
/// libmpi's interpose.rs functions), shares their unchanged pages with the
/// original files (shared_text.rs), records where the copy keeps libc's
/// variables, and runs the copies' initializers.
#[allow(clippy::too_many_arguments)]
fn load_copy(
    program: &str,
    image: &mut Image,
    libs: &mut Libraries,
    sources: &CopySources,
    copies: &[CopyReloc],
    rank: usize,
    main_offset: u64,
    args: &[CString],
) -> Copy {
    let mut fds = Vec::new();
    for i in 0..libs.user.len() {
        let lib = &mut libs.user[i];
        for &(at, dep) in &lib.slots {
            write_slot(&mut lib.image.bytes, at, fds[dep]);
        }
        let fd = memfd(
            &lib.path.to_string_lossy(),
            rank,
            &lib.image.bytes,
            &sources.libs[i].plan,
        );
        fds.push(fd);
    }
    for &(at, dep) in &libs.program_slots {
        write_slot(&mut image.bytes, at, fds[dep]);
    }
    let fd = memfd(program, rank, &image.bytes, &sources.program.plan);
    fds.push(fd);
    let path = CString::new(format!("/proc/self/fd/{fd}")).unwrap();
    // The copy's initializers run on this thread: they count as the rank's.
    libc_state::set_loading(Some(rank));
    program_tls::fill_for_loading();
    // SAFETY: valid path; RTLD_LOCAL keeps every copy's symbols to itself.
    let handle = unsafe {
        libc::dlopen(
            path.as_ptr(),
            libc::RTLD_NOW | libc::RTLD_LOCAL | libc::RTLD_DEEPBIND,
        )
    };
    if handle.is_null() {
        die(format!(
            "cannot load {program} for rank {rank}: {}",
            dl_error()
        ));
    }
    let base = load_base(handle).unwrap_or_else(|| {
        die(format!(
            "cannot find where {program} was loaded: {}",
            dl_error()
        ))
    });
    let lib_bases: Vec<usize> = libs
        .user
        .iter()
        .zip(&fds)
        .map(|(lib, &fd)| {
            load_base_of_fd(fd).unwrap_or_else(|| {
                die(format!(
                    "cannot find where rank {rank}'s copy of {} was loaded",
                    lib.path.display()
                ))
            })
        })
        .collect();
    for ((lib, source), (&lib_base, &fd)) in libs
        .user
        .iter()
        .zip(&sources.libs)
        .zip(lib_bases.iter().zip(&fds))
    {
        source.share(
            lib_base,
            fd,
            &lib.image.bytes,
            &lib.path.to_string_lossy(),
            rank,
        );
    }
    sources.program.share(base, fd, &image.bytes, program, rank);
    program_tls::note_copy(rank, base);
    crate::fortran::note_copy(rank, handle);
    fill_library_variables(base, copies, &fds);
    record_program_vars(base, copies, rank);
    // As the dynamic loader would have: each library's before the program's.
    for (source, &lib_base) in sources.libs.iter().zip(&lib_bases) {
        run_initializers(lib_base, &source.initializers, args);
    }
    run_initializers(base, &sources.program.initializers, args);
    libc_state::set_loading(None);
    // SAFETY: `main` of a C program has this signature; base + st_value is its
    // address in this copy.
    let main = unsafe { std::mem::transmute::<usize, CMain>(base + main_offset as usize) };
    Copy {
        main,
        base,
        fds,
        handle: handle as usize,
    }
}

/// One object copied per rank (the program, or a library copied with it):
/// its original file, how its copies share pages with it, and its
/// initializers, hidden from the dynamic loader.
struct CopySource {
    original: Option<shared_text::Original>,
    plan: shared_text::Plan,
    initializers: Initializers,
}

impl CopySource {
    /// Hides the initializers of `image` (read from `path`; the bytes at
    /// `varying` differ per rank) and plans its sharing.
    fn prepare(
        image: &mut Image,
        path: &std::path::Path,
        varying: &[usize],
    ) -> Result<CopySource, String> {
        let initializers = image
            .hide_initializers()
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let original = shared_text::Original::open(path);
        let plan = shared_text::Plan::new(image, original.as_ref(), varying);
        Ok(CopySource {
            original,
            plan,
            initializers,
        })
    }

    /// Shares the pages of a rank's copy, loaded at `base` from `fd`.
    fn share(&self, base: usize, fd: c_int, bytes: &[u8], what: &str, rank: usize) {
        let Some(original) = &self.original else {
            return;
        };
        if let Err(e) = self.plan.share(base, fd, bytes, original) {
            die(format!("writing the copy of {what} for rank {rank}: {e}"));
        }
    }
}

/// The program's and its per-rank libraries' sources (`libs` in the order of
/// `Libraries::user`).
struct CopySources {
    program: CopySource,
    libs: Vec<CopySource>,
}

impl CopySources {
    fn prepare(
        program: &str,
        image: &mut Image,
        libs: &mut Libraries,
    ) -> Result<CopySources, String> {
        let slots = |s: &[(usize, usize)]| s.iter().map(|&(at, _)| at).collect::<Vec<_>>();
        let lib_sources = libs
            .user
            .iter_mut()
            .map(|l| CopySource::prepare(&mut l.image, &l.path, &slots(&l.slots)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(CopySources {
            program: CopySource::prepare(
                image,
                std::path::Path::new(program),
                &slots(&libs.program_slots),
            )?,
            libs: lib_sources,
        })
    }
}

/// Runs an object's initializers (loaded at `base`) as the dynamic loader
/// does: DT_INIT, then each DT_INIT_ARRAY entry, with the process's
/// arguments and the rank's environment.
fn run_initializers(base: usize, init: &Initializers, args: &[CString]) {
    type Initializer = unsafe extern "C-unwind" fn(c_int, *mut *mut c_char, *mut *mut c_char);
    let mut argv: Vec<*mut c_char> = args.iter().map(|a| a.as_ptr() as *mut c_char).collect();
    argv.push(std::ptr::null_mut());
    let envp = libc_state::with(|st| st.environ()).unwrap_or(std::ptr::null_mut());
    let argc = args.len() as c_int;
    let mut functions: Vec<usize> = init.init.map(|f| base + f as usize).into_iter().collect();
    if let Some(array) = init.array {
        for i in 0..init.array_len {
            // SAFETY: the loaded, relocated DT_INIT_ARRAY of the object:
            // `array_len` function pointers.
            functions.push(unsafe { *((base + array as usize) as *const usize).add(i) });
        }
    }
    // glibc skips the entries 0 and -1 (placeholders some linkers leave).
    for f in functions.into_iter().filter(|&f| f != 0 && f != usize::MAX) {
        // SAFETY: an initializer of the object, called as the dynamic loader
        // calls it, once, with its code in place.
        unsafe { std::mem::transmute::<usize, Initializer>(f)(argc, argv.as_mut_ptr(), envp) };
    }
}

/// Where the object `handle` (from dlopen) is loaded.
fn load_base(handle: *mut c_void) -> Option<usize> {
    let mut lm: *mut LinkMap = std::ptr::null_mut();
    // SAFETY: RTLD_DI_LINKMAP writes a `struct link_map *`, whose first field is l_addr.
    let ok = unsafe {
        dlinfo(
            handle,
            RTLD_DI_LINKMAP,
            (&mut lm as *mut *mut LinkMap).cast(),
        )
    } == 0;
    // SAFETY: `lm` points to the object's link map while `handle` holds it.
    (ok && !lm.is_null()).then(|| unsafe { (*lm).l_addr })
}

/// Where the object opened by path `/proc/self/fd/FD` is loaded.
fn load_base_of_fd(fd: c_int) -> Option<usize> {
    let path = CString::new(format!("/proc/self/fd/{fd}")).unwrap();
    // SAFETY: finds an object loaded by that path, without loading it.
    let h = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
    if h.is_null() {
        return None;
    }
    let base = load_base(h);
    // SAFETY: drops the reference just taken; the object stays loaded.
    unsafe { libc::dlclose(h) };
    base
}

/// Points the rank's libc state at the copy's own copies of libc's variables
/// (`copies`: name and address relative to the load base).
fn record_program_vars(base: usize, copies: &[CopyReloc], rank: usize) {
    let Some(cell) = crate::handles::rank_libc(rank) else {
        return;
    };
    let mut g = cell.lock();
    let Some(st) = g.as_mut() else { return };
    for c in copies {
        let p = (base + c.offset as usize) as *mut c_void;
        match c.name.as_str() {
            "optind" => st.vars.optind = p.cast(),
            "opterr" => st.vars.opterr = p.cast(),
            "optopt" => st.vars.optopt = p.cast(),
            "optarg" => st.vars.optarg = p.cast(),
            "environ" | "__environ" if !st.vars.environ.contains(&p.cast()) => {
                st.vars.environ.push(p.cast())
            }
            // SAFETY: the copy's `stdin`, a FILE pointer filled at load.
            "stdin" => unsafe { *(p as *mut *mut libc::FILE) = crate::stdin::for_rank(rank) },
            "_ZSt3cin" => crate::stdin::end_cxx_input(
                rank,
                p,
                c"_ZNSt9basic_iosIcSt11char_traitsIcEE5clearESt12_Ios_Iostate",
            ),
            "_ZSt4wcin" => crate::stdin::end_cxx_input(
                rank,
                p,
                c"_ZNSt9basic_iosIwSt11char_traitsIwEE5clearESt12_Ios_Iostate",
            ),
            _ => {}
        }
    }
    st.publish_environ();
}

/// Memory mappings of this process now.
fn mappings() -> usize {
    mpcrs_scheduler::mappings().unwrap_or(0)
}

/// Mappings kept free for what else the ranks map (stack chunks, buffers).
const MAPPING_SPARE: usize = 1024;

/// After the first rank's copy is loaded (the process had `before` mappings
/// then): ends the job with one line naming vm.max_map_count if the copies
/// of all `ranks` would not fit under it, rather than failing thousands of
/// copies later with the dynamic loader's words.
fn check_mapping_room(program: &str, before: usize, ranks: usize) {
    let now = mappings();
    let per_copy = now.saturating_sub(before).max(1);
    let needed = now + per_copy * ranks.saturating_sub(1) + MAPPING_SPARE;
    let max = mpcrs_scheduler::max_map_count();
    if needed > max {
        die(format!(
            "{ranks} ranks of {program} in one process need about {needed} memory mappings \
             ({per_copy} per rank's copy of the program) and vm.max_map_count is {max}: \
             raise it (sysctl -w vm.max_map_count={}) or run fewer ranks per process (-p)",
            needed.next_power_of_two()
        ));
    }
}

/// The tunable that sizes the static TLS room dlopen can still give out.
const STATIC_TLS_TUNABLE: &str = "glibc.rtld.optional_static_tls";

/// Makes sure every rank's copies of the libraries with initial-exec
/// thread-local variables fit in the static TLS room (libgomp's: each copy
/// takes its block there, and glibc keeps 512 bytes by default, about three
/// copies; libgfortran's are reached dynamically and need none). The room is
/// fixed when the process starts, so this process starts again, as itself,
/// with the room asked for in GLIBC_TUNABLES.
fn ensure_static_tls_room(libs: &Libraries, ranks: usize, args: &[CString]) {
    let per_rank: usize = libs
        .user
        .iter()
        .filter(|l| l.image.needs_static_tls().unwrap_or(true))
        .filter_map(|l| l.image.tls_segment().ok().flatten())
        .map(|t| t.mem_size.next_multiple_of(t.align.max(64)) + 64)
        .sum();
    if per_rank == 0 || ranks <= 1 {
        return;
    }
    let tunables = std::env::var("GLIBC_TUNABLES").unwrap_or_default();
    if tunables.contains(STATIC_TLS_TUNABLE) {
        return;
    }
    let room = per_rank * ranks + 4096;
    let value = if tunables.is_empty() {
        format!("{STATIC_TLS_TUNABLE}={room}")
    } else {
        format!("{tunables}:{STATIC_TLS_TUNABLE}={room}")
    };
    std::env::set_var("GLIBC_TUNABLES", value);
    let exe = c"/proc/self/exe";
    let mut argv: Vec<*const c_char> = vec![exe.as_ptr()];
    argv.extend(args.iter().map(|a| a.as_ptr()));
    argv.push(std::ptr::null());
    // SAFETY: a NULL-terminated argv of valid strings; returns only on failure.
    unsafe { libc::execv(exe.as_ptr(), argv.as_ptr()) };
    die(format!(
        "cannot start again with room for {ranks} ranks' thread-local variables: {}",
        std::io::Error::last_os_error()
    ));
}

/// Runs the C program `argv[0]` with the arguments `argv[1..]` as a job of ranks
/// configured by mpcrs-run's environment; exits the process with the job's status.
///
/// # Safety
/// `argv` holds `argc` valid NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn mpcrs_abi_main(argc: c_int, argv: *const *const c_char) -> c_int {
    // A restarted job becomes the process of its image here, before any thread.
    mpcrs::restore_if_asked();
    // SAFETY: by contract.
    let args: Vec<CString> = (0..argc as usize)
        .map(|i| unsafe { CStr::from_ptr(*argv.add(i)) }.to_owned())
        .collect();
    let program = args[0].to_string_lossy().into_owned();
    crate::info::set_program_args(
        args.iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
    );
    let mut cfg = JobConfig::from_env().unwrap_or_else(|e| die(format!("bad job settings: {e}")));
    if std::env::var_os(env::STACK_SIZE.name).is_none() {
        cfg.stack_size = C_STACK_SIZE;
    }
    let bytes =
        std::fs::read(&program).unwrap_or_else(|e| die(format!("cannot read {program}: {e}")));
    let mut image = Image::parse(bytes).unwrap_or_else(|e| die(format!("{program}: {e}")));
    if !image.is_position_independent() {
        die(format!(
            "{program} is not a position-independent executable: rebuild it with -fPIE -pie \
             (mpcrs-cc and Debian's compilers do by default) to run its ranks as threads"
        ));
    }
    let patched = image
        .clear_pie_flag()
        .and_then(|_| image.rename_needed("libmpich.so.12", "libmpi.so"))
        // mpcrs's libfti.so is libmpi.so (see fti.h).
        .and_then(|_| image.rename_needed("libfti.so", "libmpi.so"))
        .and_then(|_| image.needed())
        .and_then(
            |needed| match needed.iter().find(|n| n.starts_with("libmpi.so")) {
                Some(mpi) => image.move_needed_first(&mpi.clone()),
                None => Ok(false),
            },
        );
    if let Err(e) = patched {
        die(format!("{program}: {e}"));
    }
    let mut libs = libraries::plan(&mut image, std::path::Path::new(&program))
        .unwrap_or_else(|e| die(format!("{program}: {e}")));
    ensure_static_tls_room(&libs, cfg.local_ranks().len(), &args);
    let copies =
        copy_relocations(&mut image, &libs).unwrap_or_else(|e| die(format!("{program}: {e}")));
    let tls = image
        .tls_segment()
        .unwrap_or_else(|e| die(format!("{program}: {e}")));
    if let Err(e) = program_tls::plan(&program, tls, cfg.local_ranks()) {
        if cfg.local_ranks().len() != 1 {
            die(e);
        }
        // One rank in this process needs no copy: the program runs as itself
        // and its MPI_Init joins the job.
        let mut argv: Vec<*const c_char> = args.iter().map(|a| a.as_ptr()).collect();
        argv.push(std::ptr::null());
        // SAFETY: a NULL-terminated argv of valid strings; returns only on failure.
        unsafe { libc::execv(args[0].as_ptr(), argv.as_ptr()) };
        die(format!(
            "cannot run {program}: {}",
            std::io::Error::last_os_error()
        ));
    }
    let main_offset = match image.symbol("main") {
        Ok(Some(m)) => m,
        Ok(None) => die(format!(
            "{program} has no symbol `main` (stripped?): link it without -s"
        )),
        Err(e) => die(format!("{program}: {e}")),
    };
    create_job(cfg.ranks);
    if cfg.recover_in_place {
        // A new run frees what the old one's program left allocated.
        crate::rank_heap::start(cfg.ranks);
    }
    // This process's ranks only, when the job spans several.
    let local = cfg.local_ranks();
    let first = local.start;
    let (blocks, nodes, size) = (cfg.blocks(), cfg.nodes.clone(), cfg.ranks);
    libc_state::start(local.clone(), |rank| {
        use mpcrs_settings::rank_identity::{local_place, rank_variables};
        let (local_rank, local_size) = local_place(rank, &blocks, &nodes);
        rank_variables(rank, size, local_rank, local_size)
    });
    crate::stdout::install(local.clone());
    load_system_libraries(&libs.system);
    let relocations = copies;
    let sources = CopySources::prepare(&program, &mut image, &mut libs)
        .unwrap_or_else(|e| die(format!("{program}: {e}")));
    let mut copies: Vec<Copy> = Vec::with_capacity(local.len());
    for r in local.clone() {
        let before = mappings();
        copies.push(load_copy(
            &program,
            &mut image,
            &mut libs,
            &sources,
            &relocations,
            r,
            main_offset,
            &args,
        ));
        if r == first {
            check_mapping_room(&program, before, local.len());
        }
    }
    if cfg.stack_guards.is_none() {
        // Within what the copies left of vm.max_map_count: a guard page
        // costs its stack two mappings, and stacks beyond get a red zone and
        // a canary (the scheduler's default, a quarter of the limit, counts
        // on having the whole limit).
        let max = mpcrs_scheduler::max_map_count();
        let room = max.saturating_sub(mappings() + MAPPING_SPARE);
        cfg.stack_guards = Some((room / 2).min(max / 4));
    }
    crate::code_names::install(&program, &image, copies.iter().map(|c| c.base).collect());
    for fd in copies.iter().flat_map(|c| &c.fds) {
        // SAFETY: every copy is mapped; the fds are no longer needed.
        unsafe { libc::close(*fd) };
    }
    let mains: Vec<AtomicUsize> = copies
        .iter()
        .map(|c| AtomicUsize::new(c.main as usize))
        .collect();
    let handles: Vec<AtomicUsize> = copies.iter().map(|c| AtomicUsize::new(c.handle)).collect();
    // Kept for the fresh copies of a job recovered in place, and dropped
    // otherwise: the image is as large as the program's file.
    let sources = cfg
        .recover_in_place
        .then(|| std::sync::Mutex::new((image, libs, sources, relocations)));
    let code = mpcrs::run_with(&cfg, |world| {
        let rank = world.world_rank() as usize;
        if install_world(world) {
            // A new run after a failure: this rank's copy of the program goes
            // and a fresh one takes its place, as in a new process.
            if program_tls::program_has_tls() {
                die(format!(
                    "{program} has thread-local variables: its ranks cannot start again in fresh copies (recovery in place)"
                ));
            }
            let old = handles[rank - first].load(Ordering::Acquire);
            // SAFETY: the copy's rank left it (its stack unwound); nothing
            // runs its code any more.
            unsafe { libc::dlclose(old as *mut c_void) };
            crate::rank_heap::free_all(rank);
            crate::fti::forget_rank(rank as i32);
            libc_state::restart_rank(rank);
            let Some(sources) = &sources else {
                die(format!(
                    "rank {rank} started again in a job not recovered in place"
                ));
            };
            let mut guard = sources.lock().unwrap_or_else(|p| p.into_inner());
            let (image, libs, copy_sources, relocations) = &mut *guard;
            let c = load_copy(
                &program,
                image,
                libs,
                copy_sources,
                relocations,
                rank,
                main_offset,
                &args,
            );
            drop(guard);
            for fd in &c.fds {
                // SAFETY: the copy is mapped; its fds are no longer needed.
                unsafe { libc::close(*fd) };
            }
            handles[rank - first].store(c.handle, Ordering::Release);
            mains[rank - first].store(c.main as usize, Ordering::Release);
        }
        program_tls::enter_rank(rank);
        // Each rank gets its own argv, as each MPI process would.
        let mut owned: Vec<CString> = args.clone();
        let mut ptrs: Vec<*mut c_char> = owned
            .iter_mut()
            .map(|a| a.as_ptr() as *mut c_char)
            .collect();
        ptrs.push(std::ptr::null_mut());
        // SAFETY: `mains[rank - first]` is the `main` of this rank's private copy.
        let main: CMain = unsafe {
            std::mem::transmute::<usize, CMain>(mains[rank - first].load(Ordering::Acquire))
        };
        let envp = libc_state::with(|st| {
            st.in_main = true;
            st.environ()
        })
        .unwrap_or(std::ptr::null_mut());
        let argv = ptrs.as_mut_ptr();
        // SAFETY: a C main called with a valid, NULL-terminated argv and the
        // rank's environment; exit() in it unwinds to here as a RankExit.
        let ran = std::panic::catch_unwind(AssertUnwindSafe(|| {
            let _program = crate::rank_heap::in_program(rank);
            unsafe { main(argc, argv, envp) }
        }));
        let code = match ran {
            Ok(code) => code,
            Err(p) => match p.downcast::<RankExit>() {
                Ok(e) => e.0,
                Err(p) => std::panic::resume_unwind(p),
            },
        };
        if code == 0 && rank_state().is_some_and(|st| st.initialized && !st.finalized) {
            // The other ranks would wait for it for ever (Open MPI ends
            // such a job too).
            let _ = std::io::Write::flush(&mut std::io::stdout());
            eprintln!("mpcrs: rank {rank} returned from main without calling MPI_Finalize; ending the job");
            mpcrs::abort_job(mpcrs::FATAL_EXIT_CODE);
        }
        libc_state::end_rank(rank, code);
        code
    });
    crate::stdout::flush_all(local);
    // exit() flushes the C streams the ranks wrote to and runs atexit handlers.
    // SAFETY: ends the process.
    unsafe { libc::exit(code) }
}
