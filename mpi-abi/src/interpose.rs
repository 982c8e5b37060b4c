//! The libc functions a privatized program calls in place of libc's: libmpi
//! exports them under libc's names, and the loader opens each program copy so
//! that libmpi is searched before libc (loader.rs). Each keeps the calling
//! rank's state (libc_state.rs) or, outside a privatized rank, calls libc's own.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_long, c_uint, c_void};

use crate::getopt::{self, LongOption};
use crate::libc_state::{self, Drand48Data, ExitHandler, RandomData};

/// libc's definition of a function this module also defines.
macro_rules! real {
    ($name:literal : $ty:ty) => {{
        static F: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        let f = *F.get_or_init(|| $crate::interpose::libc_symbol(concat!($name, "\0")));
        // SAFETY: libc's function of that name has this signature.
        unsafe { std::mem::transmute::<usize, $ty>(f) }
    }};
}

pub(crate) use real;

/// Address of libc's `name` (NUL-terminated); ends the process if libc lacks it.
pub(crate) fn libc_symbol(name: &str) -> usize {
    // SAFETY: libc is loaded (we run); RTLD_NOLOAD only finds it.
    let h = unsafe { libc::dlopen(c"libc.so.6".as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
    // SAFETY: a NUL-terminated name.
    let f = unsafe { libc::dlsym(h, name.as_ptr().cast()) };
    if f.is_null() {
        mpcrs_settings::report!(error, "mpcrs: libc has no {}", name.trim_end_matches('\0'));
        // SAFETY: ends the process without running anything more.
        unsafe { libc::_exit(127) };
    }
    f as usize
}

fn bytes<'a>(s: *const c_char) -> &'a [u8] {
    // SAFETY: called with the C caller's NUL-terminated strings.
    unsafe { CStr::from_ptr(s) }.to_bytes()
}

fn set_errno(e: c_int) {
    // SAFETY: errno of the calling thread.
    unsafe { *libc::__errno_location() = e };
}

// ---- the environment ----

/// # Safety
/// `name` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn getenv(name: *const c_char) -> *mut c_char {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    libc_state::with(|st| st.getenv(bytes(name))).unwrap_or_else(|| {
        real!("getenv": unsafe extern "C" fn(*const c_char) -> *mut c_char)(name)
    })
}

/// # Safety
/// As getenv.
#[no_mangle]
pub unsafe extern "C" fn secure_getenv(name: *const c_char) -> *mut c_char {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    libc_state::with(|st| st.getenv(bytes(name))).unwrap_or_else(|| {
        real!("secure_getenv": unsafe extern "C" fn(*const c_char) -> *mut c_char)(name)
    })
}

fn valid_name(name: *const c_char) -> bool {
    !name.is_null() && {
        let n = bytes(name);
        !n.is_empty() && !n.contains(&b'=')
    }
}

/// # Safety
/// NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn setenv(
    name: *const c_char,
    value: *const c_char,
    overwrite: c_int,
) -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    if libc_state::current().is_none() {
        return real!("setenv": unsafe extern "C" fn(*const c_char, *const c_char, c_int) -> c_int)(
            name, value, overwrite,
        );
    }
    if !valid_name(name) {
        set_errno(libc::EINVAL);
        return -1;
    }
    libc_state::with(|st| st.setenv(bytes(name), bytes(value), overwrite != 0));
    0
}

/// # Safety
/// A NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn unsetenv(name: *const c_char) -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    if libc_state::current().is_none() {
        return real!("unsetenv": unsafe extern "C" fn(*const c_char) -> c_int)(name);
    }
    if !valid_name(name) {
        set_errno(libc::EINVAL);
        return -1;
    }
    libc_state::with(|st| st.unsetenv(bytes(name)));
    0
}

/// # Safety
/// A NUL-terminated string that stays valid while it is in the environment.
#[no_mangle]
pub unsafe extern "C" fn putenv(string: *mut c_char) -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    if libc_state::current().is_none() {
        return real!("putenv": unsafe extern "C" fn(*mut c_char) -> c_int)(string);
    }
    let s = bytes(string);
    libc_state::with(|st| match s.iter().position(|&b| b == b'=') {
        Some(eq) => st.set(&s[..eq], string),
        // glibc: "NAME" alone removes NAME.
        None => st.unsetenv(s),
    });
    0
}

/// # Safety
/// No other requirement.
#[no_mangle]
pub unsafe extern "C" fn clearenv() -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    libc_state::with(|st| st.clearenv())
        .map(|_| 0)
        .unwrap_or_else(|| real!("clearenv": unsafe extern "C" fn() -> c_int)())
}

// ---- getopt ----

unsafe fn getopt_call(call: getopt::Call, real: impl FnOnce() -> c_int) -> c_int {
    // SAFETY: the caller's arguments, as getopt_long takes them.
    libc_state::with(|st| unsafe { getopt::getopt(st, &call) }).unwrap_or_else(real)
}

/// # Safety
/// As getopt(3).
#[no_mangle]
pub unsafe extern "C" fn getopt(
    argc: c_int,
    argv: *mut *mut c_char,
    optstring: *const c_char,
) -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    let call = getopt::Call::short(argc, argv, bytes(optstring), false);
    getopt_call(call, || {
        real!("getopt": unsafe extern "C" fn(c_int, *mut *mut c_char, *const c_char) -> c_int)(
            argc, argv, optstring,
        )
    })
}

/// getopt as POSIX specifies it (no permutation); what <unistd.h> names getopt
/// in strict POSIX compilations.
///
/// # Safety
/// As getopt(3).
#[no_mangle]
pub unsafe extern "C" fn __posix_getopt(
    argc: c_int,
    argv: *mut *mut c_char,
    optstring: *const c_char,
) -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    let call = getopt::Call::short(argc, argv, bytes(optstring), true);
    getopt_call(call, || {
        real!("__posix_getopt": unsafe extern "C" fn(c_int, *mut *mut c_char, *const c_char) -> c_int)(
            argc, argv, optstring,
        )
    })
}

type GetoptLong = unsafe extern "C" fn(
    c_int,
    *mut *mut c_char,
    *const c_char,
    *const LongOption,
    *mut c_int,
) -> c_int;

/// # Safety
/// As getopt_long(3).
#[no_mangle]
pub unsafe extern "C" fn getopt_long(
    argc: c_int,
    argv: *mut *mut c_char,
    optstring: *const c_char,
    longopts: *const LongOption,
    longind: *mut c_int,
) -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    let call = getopt::Call::long(argc, argv, bytes(optstring), longopts, longind, false);
    getopt_call(call, || {
        real!("getopt_long": GetoptLong)(argc, argv, optstring, longopts, longind)
    })
}

/// # Safety
/// As getopt_long_only(3).
#[no_mangle]
pub unsafe extern "C" fn getopt_long_only(
    argc: c_int,
    argv: *mut *mut c_char,
    optstring: *const c_char,
    longopts: *const LongOption,
    longind: *mut c_int,
) -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    let call = getopt::Call::long(argc, argv, bytes(optstring), longopts, longind, true);
    getopt_call(call, || {
        real!("getopt_long_only": GetoptLong)(argc, argv, optstring, longopts, longind)
    })
}

// ---- strtok ----

/// # Safety
/// As strtok(3).
#[no_mangle]
pub unsafe extern "C" fn strtok(s: *mut c_char, delim: *const c_char) -> *mut c_char {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    // SAFETY: strtok_r with the rank's saved position.
    libc_state::with(|st| unsafe { libc::strtok_r(s, delim, &mut st.strtok) }).unwrap_or_else(
        || {
            real!("strtok": unsafe extern "C" fn(*mut c_char, *const c_char) -> *mut c_char)(
                s, delim,
            )
        },
    )
}

// ---- rand, random ----

extern "C" {
    fn random_r(data: *mut RandomData, result: *mut i32) -> c_int;
    fn srandom_r(seed: c_uint, data: *mut RandomData) -> c_int;
    fn initstate_r(seed: c_uint, buf: *mut c_char, n: usize, data: *mut RandomData) -> c_int;
    fn setstate_r(buf: *mut c_char, data: *mut RandomData) -> c_int;
}

fn rank_random() -> Option<c_long> {
    libc_state::with(|st| {
        let mut r = 0i32;
        // SAFETY: the rank's generator, initialized at its start.
        unsafe { random_r(&mut st.random, &mut r) };
        r as c_long
    })
}

/// # Safety
/// No requirement.
#[no_mangle]
pub unsafe extern "C" fn random() -> c_long {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    rank_random().unwrap_or_else(|| real!("random": unsafe extern "C" fn() -> c_long)())
}

/// # Safety
/// No requirement.
#[no_mangle]
pub unsafe extern "C" fn rand() -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    rank_random()
        .map(|r| r as c_int)
        .unwrap_or_else(|| real!("rand": unsafe extern "C" fn() -> c_int)())
}

/// # Safety
/// No requirement.
#[no_mangle]
pub unsafe extern "C" fn srandom(seed: c_uint) {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    // SAFETY: the rank's generator.
    if libc_state::with(|st| unsafe { srandom_r(seed, &mut st.random) }).is_none() {
        real!("srandom": unsafe extern "C" fn(c_uint))(seed)
    }
}

/// # Safety
/// No requirement.
#[no_mangle]
pub unsafe extern "C" fn srand(seed: c_uint) {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    // SAFETY: the rank's generator.
    if libc_state::with(|st| unsafe { srandom_r(seed, &mut st.random) }).is_none() {
        real!("srand": unsafe extern "C" fn(c_uint))(seed)
    }
}

/// The state buffer the rank's generator uses, as initstate and setstate return it.
fn current_state(data: &RandomData) -> *mut c_char {
    // glibc keeps the generator's type in the word before the state.
    data.state.wrapping_sub(1).cast()
}

/// # Safety
/// As initstate(3): `buf` of `n` bytes stays valid while in use.
#[no_mangle]
pub unsafe extern "C" fn initstate(seed: c_uint, buf: *mut c_char, n: usize) -> *mut c_char {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    libc_state::with(|st| {
        let old = current_state(&st.random);
        // SAFETY: by contract.
        if unsafe { initstate_r(seed, buf, n, &mut st.random) } != 0 {
            return std::ptr::null_mut();
        }
        old
    })
    .unwrap_or_else(|| {
        real!("initstate": unsafe extern "C" fn(c_uint, *mut c_char, usize) -> *mut c_char)(
            seed, buf, n,
        )
    })
}

/// # Safety
/// As setstate(3).
#[no_mangle]
pub unsafe extern "C" fn setstate(buf: *mut c_char) -> *mut c_char {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    libc_state::with(|st| {
        let old = current_state(&st.random);
        // SAFETY: by contract.
        if unsafe { setstate_r(buf, &mut st.random) } != 0 {
            return std::ptr::null_mut();
        }
        old
    })
    .unwrap_or_else(|| real!("setstate": unsafe extern "C" fn(*mut c_char) -> *mut c_char)(buf))
}

// ---- the drand48 family ----

extern "C" {
    fn drand48_r(d: *mut Drand48Data, r: *mut f64) -> c_int;
    fn erand48_r(x: *mut u16, d: *mut Drand48Data, r: *mut f64) -> c_int;
    fn lrand48_r(d: *mut Drand48Data, r: *mut c_long) -> c_int;
    fn nrand48_r(x: *mut u16, d: *mut Drand48Data, r: *mut c_long) -> c_int;
    fn mrand48_r(d: *mut Drand48Data, r: *mut c_long) -> c_int;
    fn jrand48_r(x: *mut u16, d: *mut Drand48Data, r: *mut c_long) -> c_int;
    fn srand48_r(seed: c_long, d: *mut Drand48Data) -> c_int;
    fn seed48_r(seed: *mut u16, d: *mut Drand48Data) -> c_int;
    fn lcong48_r(param: *mut u16, d: *mut Drand48Data) -> c_int;
}

/// `$name($args) -> $ret` of the drand48 family: `$r` on the rank's data
/// (whose first argument is the data, then the result), else libc's.
macro_rules! rand48 {
    ($name:ident $lit:literal ( $($a:ident : $t:ty),* ) -> $ret:ty, $r:ident, $zero:expr) => {
        /// # Safety
        /// As the libc function of this name.
        #[no_mangle]
        pub unsafe extern "C" fn $name($($a: $t),*) -> $ret {
            // What it allocates is the runtime's, not the program's.
            let _heap = crate::rank_heap::in_runtime();
            libc_state::with(|st| {
                let mut out: $ret = $zero;
                // SAFETY: the rank's data; the caller's arguments by contract.
                unsafe { rand48!(@call $r, st, out, $($a),*) };
                out
            })
            .unwrap_or_else(|| real!($lit: unsafe extern "C" fn($($t),*) -> $ret)($($a),*))
        }
    };
    (@call $r:ident, $st:ident, $out:ident, ) => { $r(&mut $st.drand48, &mut $out) };
    (@call $r:ident, $st:ident, $out:ident, $x:ident) => { $r($x, &mut $st.drand48, &mut $out) };
}

rand48!(drand48 "drand48"() -> f64, drand48_r, 0.0);
rand48!(erand48 "erand48"(x: *mut u16) -> f64, erand48_r, 0.0);
rand48!(lrand48 "lrand48"() -> c_long, lrand48_r, 0);
rand48!(nrand48 "nrand48"(x: *mut u16) -> c_long, nrand48_r, 0);
rand48!(mrand48 "mrand48"() -> c_long, mrand48_r, 0);
rand48!(jrand48 "jrand48"(x: *mut u16) -> c_long, jrand48_r, 0);

/// # Safety
/// No requirement.
#[no_mangle]
pub unsafe extern "C" fn srand48(seed: c_long) {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    // SAFETY: the rank's data.
    if libc_state::with(|st| unsafe { srand48_r(seed, &mut st.drand48) }).is_none() {
        real!("srand48": unsafe extern "C" fn(c_long))(seed)
    }
}

/// # Safety
/// `seed` points to 3 values.
#[no_mangle]
pub unsafe extern "C" fn seed48(seed: *mut u16) -> *mut u16 {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    libc_state::with(|st| {
        // SAFETY: the rank's data; seed48_r keeps the old value in it.
        unsafe { seed48_r(seed, &mut st.drand48) };
        st.drand48.old_x.as_mut_ptr()
    })
    .unwrap_or_else(|| real!("seed48": unsafe extern "C" fn(*mut u16) -> *mut u16)(seed))
}

/// # Safety
/// `param` points to 7 values.
#[no_mangle]
pub unsafe extern "C" fn lcong48(param: *mut u16) {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    // SAFETY: the rank's data.
    if libc_state::with(|st| unsafe { lcong48_r(param, &mut st.drand48) }).is_none() {
        real!("lcong48": unsafe extern "C" fn(*mut u16))(param)
    }
}

// ---- exit and its handlers ----

/// What a rank's exit() unwinds to its `main`'s caller (loader.rs).
pub(crate) struct RankExit(pub(crate) c_int);

/// exit() from a rank's `main` ends that rank as if `main` returned `status`:
/// its frames are unwound to the loader, which runs the rank's exit handlers.
/// Anywhere else it ends the process, as libc's does.
///
/// # Safety
/// No requirement.
#[no_mangle]
pub unsafe extern "C-unwind" fn exit(status: c_int) -> ! {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    let in_main =
        mpcrs::current_rank().is_some() && libc_state::with(|st| st.in_main).unwrap_or(false);
    if in_main {
        std::panic::resume_unwind(Box::new(RankExit(status)));
    }
    real!("exit": unsafe extern "C" fn(c_int) -> !)(status)
}

/// Handlers registered by a rank's copy (atexit, C++ static destructors) run at
/// the end of that rank.
///
/// # Safety
/// As __cxa_atexit.
#[no_mangle]
pub unsafe extern "C" fn __cxa_atexit(
    f: unsafe extern "C-unwind" fn(*mut c_void),
    arg: *mut c_void,
    dso: *mut c_void,
) -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    libc_state::with(|st| {
        st.exit_handlers.push(ExitHandler::Cxa(f, arg));
        0
    })
    .unwrap_or_else(|| {
        real!("__cxa_atexit": unsafe extern "C" fn(unsafe extern "C-unwind" fn(*mut c_void), *mut c_void, *mut c_void) -> c_int)(
            f, arg, dso,
        )
    })
}

/// # Safety
/// As on_exit(3).
#[no_mangle]
pub unsafe extern "C" fn on_exit(
    f: unsafe extern "C-unwind" fn(c_int, *mut c_void),
    arg: *mut c_void,
) -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    libc_state::with(|st| {
        st.exit_handlers.push(ExitHandler::OnExit(f, arg));
        0
    })
    .unwrap_or_else(|| {
        real!("on_exit": unsafe extern "C" fn(unsafe extern "C-unwind" fn(c_int, *mut c_void), *mut c_void) -> c_int)(f, arg)
    })
}

// ---- stdout's buffering ----

/// stdout is shared by the ranks and written line by line per rank
/// (stdout.rs): a rank may not change its buffering, other streams may.
///
/// # Safety
/// As setvbuf(3).
#[no_mangle]
pub unsafe extern "C" fn setvbuf(
    stream: *mut libc::FILE,
    buf: *mut c_char,
    mode: c_int,
    size: usize,
) -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    if libc_state::current().is_some() && crate::stdout::is_shared_stdout(stream) {
        return 0;
    }
    real!("setvbuf": unsafe extern "C" fn(*mut libc::FILE, *mut c_char, c_int, usize) -> c_int)(
        stream, buf, mode, size,
    )
}

/// # Safety
/// As setbuf(3).
#[no_mangle]
pub unsafe extern "C" fn setbuf(stream: *mut libc::FILE, buf: *mut c_char) {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    if libc_state::current().is_some() && crate::stdout::is_shared_stdout(stream) {
        return;
    }
    real!("setbuf": unsafe extern "C" fn(*mut libc::FILE, *mut c_char))(stream, buf)
}
