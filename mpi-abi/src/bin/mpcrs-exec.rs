//! mpcrs-exec: the process in which mpcrs-run runs a C MPI program thread-based.
//! It loads libmpi.so (found next to this executable) once, globally, and hands
//! it the program: the job lives entirely inside libmpi, the library the
//! program's MPI calls reach.

use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int};

type AbiMain = unsafe extern "C" fn(c_int, *const *const c_char) -> c_int;

/// glibc's tunable that keeps rseq unregistered: restored memory would hold a
/// registration the new thread does not have.
const NO_RSEQ: &str = "glibc.pthread.rseq=0";

/// A process that takes checkpoints must be restorable at the same addresses:
/// ASLR off and rseq unregistered, as mpcrs-run starts its processes. Started
/// by another launcher (srun) with a checkpoint directory, mpcrs-exec arranges
/// both and runs itself again; it returns only when nothing is to be done.
fn become_restorable() {
    if std::env::var_os(mpcrs_settings::variables::CHECKPOINT_DIR.name).is_none() {
        return;
    }
    // SAFETY: personality(0xffffffff) only reads the persona.
    let persona = unsafe { libc::personality(0xffff_ffff) };
    let tunables = std::env::var("GLIBC_TUNABLES").unwrap_or_default();
    let no_aslr = persona != -1 && persona & libc::ADDR_NO_RANDOMIZE != 0;
    if no_aslr && tunables.contains(NO_RSEQ) {
        return;
    }
    // SAFETY: sets this process's persona, which the exec below keeps.
    if persona == -1
        || unsafe { libc::personality((persona | libc::ADDR_NO_RANDOMIZE) as libc::c_ulong) } == -1
    {
        mpcrs_settings::report!(
            error,
            "mpcrs-exec: cannot turn address randomization off for restorable checkpoints: {}",
            std::io::Error::last_os_error()
        );
        std::process::exit(1);
    }
    let tunables = if tunables.is_empty() {
        NO_RSEQ.to_string()
    } else {
        format!("{tunables}:{NO_RSEQ}")
    };
    use std::os::unix::process::CommandExt;
    let mut args = std::env::args_os();
    let argv0 = args.next().unwrap_or_default();
    let e = std::process::Command::new("/proc/self/exe")
        .arg0(argv0)
        .args(args)
        .env("GLIBC_TUNABLES", tunables)
        .exec();
    mpcrs_settings::report!(error, "mpcrs-exec: cannot run itself again: {e}");
    std::process::exit(1);
}

fn main() {
    become_restorable();
    let args: Vec<CString> = std::env::args_os()
        .skip(1)
        .map(|a| CString::new(a.into_encoded_bytes()).expect("argument with a NUL byte"))
        .collect();
    if args.is_empty() {
        mpcrs_settings::report!(
            error,
            "usage: mpcrs-exec PROGRAM [ARGS...] (normally started by mpcrs-run)"
        );
        std::process::exit(2);
    }
    let exe = std::env::current_exe().expect("current_exe");
    // Build layout: next to this executable; installed layout: PREFIX/lib.
    let beside = exe.with_file_name("libmpi.so");
    let lib = if beside.exists() {
        beside
    } else {
        exe.parent()
            .and_then(|d| d.parent())
            .map(|p| p.join("lib/libmpi.so"))
            .unwrap_or(beside)
    };
    let lib_c = CString::new(lib.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: valid path; RTLD_GLOBAL so the program copies bind to this instance.
    let handle = unsafe { libc::dlopen(lib_c.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
    if handle.is_null() {
        // SAFETY: dlerror returns a NUL-terminated message after a failure.
        let e = unsafe { CStr::from_ptr(libc::dlerror()) };
        mpcrs_settings::report!(
            error,
            "mpcrs-exec: cannot load {}: {}",
            lib.display(),
            e.to_string_lossy()
        );
        std::process::exit(127);
    }
    // SAFETY: looking up a symbol in the handle just opened.
    let sym = unsafe { libc::dlsym(handle, c"mpcrs_abi_main".as_ptr()) };
    if sym.is_null() {
        mpcrs_settings::report!(
            error,
            "mpcrs-exec: {} does not export mpcrs_abi_main",
            lib.display()
        );
        std::process::exit(127);
    }
    // SAFETY: mpcrs_abi_main has this signature (mpi-abi/src/loader.rs).
    let abi_main: AbiMain = unsafe { std::mem::transmute(sym) };
    let ptrs: Vec<*const c_char> = args.iter().map(|a| a.as_ptr()).collect();
    // SAFETY: argv of valid C strings; mpcrs_abi_main exits the process itself.
    let code = unsafe { abi_main(ptrs.len() as c_int, ptrs.as_ptr()) };
    std::process::exit(code);
}
