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

use mpcrs::elf::Image;
use mpcrs::run::{env, JobConfig};

use crate::handles::{create_job, install_world};

/// Default ULT stack of a C rank: C programs size stack arrays for an OS thread's
/// 8 MiB; only the pages a rank touches are committed.
const C_STACK_SIZE: usize = 8 << 20;

const RTLD_DI_LINKMAP: c_int = 2;

#[repr(C)]
struct LinkMap {
    l_addr: usize,
}

extern "C" {
    fn dlinfo(handle: *mut c_void, request: c_int, info: *mut c_void) -> c_int;
}

type CMain = unsafe extern "C" fn(c_int, *mut *mut c_char) -> c_int;

fn die(msg: String) -> ! {
    eprintln!("mpcrs: {msg}");
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

/// Loads one private copy of the image; returns the address of its `main` and the
/// memfd holding it. The fd must stay open while other copies load: the dynamic
/// loader recognises objects by path, and a reused fd number would give a later
/// rank the same "/proc/self/fd/N" and hence the same copy.
fn load_copy(program: &str, image: &[u8], rank: usize, main_offset: u64) -> (CMain, c_int) {
    let name = CString::new(format!("mpcrs-rank-{rank}")).unwrap();
    // SAFETY: plain syscall with a valid name.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        die(format!(
            "memfd_create for rank {rank}: {}",
            std::io::Error::last_os_error()
        ));
    }
    let mut written = 0;
    while written < image.len() {
        // SAFETY: writing from a valid slice.
        let n = unsafe { libc::write(fd, image[written..].as_ptr().cast(), image.len() - written) };
        if n <= 0 {
            die(format!(
                "writing the image of rank {rank}: {}",
                std::io::Error::last_os_error()
            ));
        }
        written += n as usize;
    }
    let path = CString::new(format!("/proc/self/fd/{fd}")).unwrap();
    // SAFETY: valid path; RTLD_LOCAL keeps every copy's symbols to itself.
    let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if handle.is_null() {
        die(format!(
            "cannot load {program} for rank {rank}: {}",
            dl_error()
        ));
    }
    let mut lm: *mut LinkMap = std::ptr::null_mut();
    // SAFETY: RTLD_DI_LINKMAP writes a `struct link_map *`, whose first field is l_addr.
    if unsafe {
        dlinfo(
            handle,
            RTLD_DI_LINKMAP,
            (&mut lm as *mut *mut LinkMap).cast(),
        )
    } != 0
        || lm.is_null()
    {
        die(format!(
            "cannot find where {program} was loaded: {}",
            dl_error()
        ));
    }
    // SAFETY: `lm` points to the loaded object's link map.
    let base = unsafe { (*lm).l_addr };
    // SAFETY: `main` of a C program has this signature; base + st_value is its
    // address in this copy.
    (
        unsafe { std::mem::transmute::<usize, CMain>(base + main_offset as usize) },
        fd,
    )
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
    let mut cfg = JobConfig::from_env().unwrap_or_else(|e| die(format!("bad job settings: {e}")));
    if std::env::var_os(env::STACK_SIZE).is_none() {
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
        .and_then(|_| image.rename_needed("libmpich.so.12", "libmpi.so"));
    if let Err(e) = patched {
        die(format!("{program}: {e}"));
    }
    let main_offset = match image.symbol("main") {
        Ok(Some(m)) => m,
        Ok(None) => die(format!(
            "{program} has no symbol `main` (stripped?): link it without -s"
        )),
        Err(e) => die(format!("{program}: {e}")),
    };
    create_job(cfg.ranks);
    // This process's ranks only, when the job spans several.
    let local = cfg.local_ranks();
    let first = local.start;
    let copies: Vec<(CMain, c_int)> = local
        .map(|r| load_copy(&program, &image.bytes, r, main_offset))
        .collect();
    drop(image);
    for &(_, fd) in &copies {
        // SAFETY: every copy is mapped; the fds are no longer needed.
        unsafe { libc::close(fd) };
    }
    let mains: Vec<usize> = copies.iter().map(|&(m, _)| m as usize).collect();
    let code = mpcrs::run_with(&cfg, |world| {
        let rank = world.world_rank() as usize;
        install_world(world);
        // Each rank gets its own argv, as each MPI process would.
        let mut owned: Vec<CString> = args.clone();
        let mut ptrs: Vec<*mut c_char> = owned
            .iter_mut()
            .map(|a| a.as_ptr() as *mut c_char)
            .collect();
        ptrs.push(std::ptr::null_mut());
        // SAFETY: `mains[rank - first]` is the `main` of this rank's private copy.
        let main: CMain = unsafe { std::mem::transmute::<usize, CMain>(mains[rank - first]) };
        // SAFETY: a C main called with a valid, NULL-terminated argv.
        unsafe { main(argc, ptrs.as_mut_ptr()) }
    });
    // exit() flushes the C streams the ranks wrote to and runs atexit handlers.
    // SAFETY: ends the process.
    unsafe { libc::exit(code) }
}
