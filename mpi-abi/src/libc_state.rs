//! libc's hidden per-process state, kept per rank for privatized programs.
//!
//! A process has one environment, one rand() sequence, one strtok position, one
//! getopt position, one list of atexit handlers. Ranks sharing a process each
//! get their own, as they would in a process of their own: the program copies
//! call the functions of `interpose` (found before libc's in their lookup scope,
//! see loader.rs), which keep their state here, in the rank's cell of the job.
//!
//! Outside a privatized job (a program run directly, or any call from outside a
//! rank) the functions pass through to libc.

use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use crate::getopt::GetoptState;

/// Set once the loader privatizes a program: only then do the interposed
/// functions keep per-rank state.
static PRIVATIZED: AtomicBool = AtomicBool::new(false);
/// The rank whose copy the loader is loading (its constructors run on the main
/// thread, before the rank's ULT exists); `usize::MAX` when none.
static LOADING: AtomicUsize = AtomicUsize::new(usize::MAX);

/// glibc's `struct random_data`.
#[repr(C)]
pub(crate) struct RandomData {
    fptr: *mut i32,
    rptr: *mut i32,
    pub(crate) state: *mut i32,
    rand_type: c_int,
    rand_deg: c_int,
    rand_sep: c_int,
    end_ptr: *mut i32,
}

/// glibc's `struct drand48_data`; all zero is a process's initial state.
#[repr(C)]
#[derive(Default)]
pub(crate) struct Drand48Data {
    pub(crate) x: [u16; 3],
    pub(crate) old_x: [u16; 3],
    c: u16,
    init: u16,
    a: u64,
}

/// An exit handler: `__cxa_atexit` (atexit) or `on_exit`.
pub(crate) enum ExitHandler {
    Cxa(unsafe extern "C-unwind" fn(*mut c_void), *mut c_void),
    OnExit(unsafe extern "C-unwind" fn(c_int, *mut c_void), *mut c_void),
}

/// Where the rank's copy keeps the variables libc's interface exposes: the
/// program reads its own copy of each (copy relocations), so the functions that
/// set them must write there. Variables the program does not reference live in
/// `fallback`.
pub(crate) struct ProgramVars {
    pub(crate) optind: *mut c_int,
    pub(crate) opterr: *mut c_int,
    pub(crate) optopt: *mut c_int,
    pub(crate) optarg: *mut *mut c_char,
    /// `environ` and its alias `__environ`, where the copy has them.
    pub(crate) environ: Vec<*mut *mut *mut c_char>,
}

pub(crate) struct LibcState {
    /// The rank this state is of.
    pub(crate) rank: usize,
    /// The rank's environment: a NULL-terminated array, as `environ` is.
    env: Vec<*mut c_char>,
    /// Strings of `env` set by setenv; kept for the rank's life (a pointer
    /// getenv returned stays valid, as glibc's do).
    env_strings: Vec<CString>,
    pub(crate) random: RandomData,
    random_state: Box<[i32; 32]>,
    pub(crate) drand48: Drand48Data,
    pub(crate) strtok: *mut c_char,
    pub(crate) getopt: GetoptState,
    pub(crate) vars: ProgramVars,
    pub(crate) exit_handlers: Vec<ExitHandler>,
    /// Whether the rank's `main` runs (exit() then ends the rank).
    pub(crate) in_main: bool,
    /// What the rank wrote to stdout after its last complete line.
    stdout_pending: Vec<u8>,
    /// The same for stderr, when stderr is kept per rank (stdout.rs).
    stderr_pending: Vec<u8>,
    /// Fallback storage of the getopt variables, laid out for stable addresses.
    fallback: Box<([c_int; 3], *mut c_char)>,
}

// SAFETY: the raw pointers are the rank's own (its copy's variables, its
// strings); the state is reached only through its cell's lock.
unsafe impl Send for LibcState {}

/// One rank's libc state, locked only by calls that never yield.
#[derive(Default)]
pub(crate) struct RankLibc(Mutex<Option<LibcState>>);

impl RankLibc {
    pub(crate) fn lock(&self) -> MutexGuard<'_, Option<LibcState>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

extern "C" {
    fn initstate_r(seed: u32, buf: *mut c_char, n: usize, data: *mut RandomData) -> c_int;
}

impl LibcState {
    /// Rank `rank`'s state at its start: a copy of the process's environment
    /// with `own` variables set (its identity), the random generators as a
    /// fresh process has them.
    fn new(rank: usize, environ: &[CString], own: &[(&str, String)]) -> Box<LibcState> {
        let mut st = Box::new(LibcState {
            rank,
            env: Vec::new(),
            env_strings: environ.to_vec(),
            random: RandomData {
                fptr: std::ptr::null_mut(),
                rptr: std::ptr::null_mut(),
                state: std::ptr::null_mut(),
                rand_type: 0,
                rand_deg: 0,
                rand_sep: 0,
                end_ptr: std::ptr::null_mut(),
            },
            random_state: Box::new([0; 32]),
            drand48: Drand48Data::default(),
            strtok: std::ptr::null_mut(),
            getopt: GetoptState::default(),
            vars: ProgramVars {
                optind: std::ptr::null_mut(),
                opterr: std::ptr::null_mut(),
                optopt: std::ptr::null_mut(),
                optarg: std::ptr::null_mut(),
                environ: Vec::new(),
            },
            exit_handlers: Vec::new(),
            in_main: false,
            stdout_pending: Vec::new(),
            stderr_pending: Vec::new(),
            fallback: Box::new(([1, 1, b'?' as c_int], std::ptr::null_mut())),
        });
        st.env = st
            .env_strings
            .iter()
            .map(|s| s.as_ptr() as *mut c_char)
            .chain(std::iter::once(std::ptr::null_mut()))
            .collect();
        // A process that never calls srand() gets the sequence of seed 1, from a
        // 128-byte state (glibc's default table).
        let buf = st.random_state.as_mut_ptr().cast::<c_char>();
        // SAFETY: a 128-byte buffer that lives as long as the state (boxed).
        unsafe { initstate_r(1, buf, 128, &mut st.random) };
        let fb = &mut *st.fallback;
        st.vars.optind = &mut fb.0[0];
        st.vars.opterr = &mut fb.0[1];
        st.vars.optopt = &mut fb.0[2];
        st.vars.optarg = &mut fb.1;
        for (name, value) in own {
            st.setenv(name.as_bytes(), value.as_bytes(), true);
        }
        st
    }

    /// What the rank wrote to `stream` after its last complete line.
    pub(crate) fn pending(&mut self, stream: mpcrs_settings::output::Stream) -> &mut Vec<u8> {
        match stream {
            mpcrs_settings::output::Stream::Stdout => &mut self.stdout_pending,
            mpcrs_settings::output::Stream::Stderr => &mut self.stderr_pending,
        }
    }

    pub(crate) fn getenv(&self, name: &[u8]) -> *mut c_char {
        for &p in &self.env[..self.env.len() - 1] {
            // SAFETY: every entry is a NUL-terminated string.
            let s = unsafe { CStr::from_ptr(p) }.to_bytes();
            if s.len() > name.len() && s.starts_with(name) && s[name.len()] == b'=' {
                // SAFETY: within the string, after "name=".
                return unsafe { p.add(name.len() + 1) };
            }
        }
        std::ptr::null_mut()
    }

    fn position(&self, name: &[u8]) -> Option<usize> {
        self.env[..self.env.len() - 1].iter().position(|&p| {
            // SAFETY: every entry is a NUL-terminated string.
            let s = unsafe { CStr::from_ptr(p) }.to_bytes();
            s.len() > name.len() && s.starts_with(name) && s[name.len()] == b'=' || s == name
        })
    }

    /// Sets `entry` ("NAME=value", owned by the caller or by the state) for `name`.
    pub(crate) fn set(&mut self, name: &[u8], entry: *mut c_char) {
        match self.position(name) {
            Some(i) => self.env[i] = entry,
            None => {
                let end = self.env.len() - 1;
                self.env.insert(end, entry);
            }
        }
        self.publish_environ();
    }

    pub(crate) fn setenv(&mut self, name: &[u8], value: &[u8], overwrite: bool) {
        if !overwrite && self.position(name).is_some() {
            return;
        }
        let mut entry = name.to_vec();
        entry.push(b'=');
        entry.extend_from_slice(value);
        let s = CString::new(entry).expect("no NUL inside C strings");
        let p = s.as_ptr() as *mut c_char;
        self.env_strings.push(s);
        self.set(name, p);
    }

    pub(crate) fn unsetenv(&mut self, name: &[u8]) {
        while let Some(i) = self.position(name) {
            self.env.remove(i);
        }
        self.publish_environ();
    }

    pub(crate) fn clearenv(&mut self) {
        self.env = vec![std::ptr::null_mut()];
        self.publish_environ();
    }

    pub(crate) fn environ(&mut self) -> *mut *mut c_char {
        self.env.as_mut_ptr()
    }

    /// Points the copy's `environ` at the rank's array (which moves as it grows).
    pub(crate) fn publish_environ(&mut self) {
        let p = self.env.as_mut_ptr();
        for &v in &self.vars.environ {
            // SAFETY: `v` is the address of the copy's `environ`, which lives as
            // long as the process.
            unsafe { *v = p };
        }
    }
}

/// Marks the job privatized and gives each rank of `ranks` a fresh libc
/// state, its environment holding `identity(rank)` (what tells a rank its
/// place in the job, see mpcrs_settings::rank_identity).
pub(crate) fn start<I>(ranks: std::ops::Range<usize>, identity: impl Fn(usize) -> I)
where
    I: IntoIterator<Item = (&'static str, String)>,
{
    let environ: Vec<CString> = std::env::vars_os()
        .map(|(k, v)| {
            let mut e = k.into_encoded_bytes();
            e.push(b'=');
            e.extend_from_slice(&v.into_encoded_bytes());
            CString::new(e).expect("the environment holds C strings")
        })
        .collect();
    let mut own = Vec::new();
    for r in ranks.clone() {
        let vars: Vec<(&'static str, String)> = identity(r).into_iter().collect();
        if let Some(cell) = crate::handles::rank_libc(r) {
            *cell.lock() = Some(*LibcState::new(r, &environ, &vars));
        }
        own.push(vars);
    }
    let _ = FIRST_STATES.set(FirstStates {
        first: ranks.start,
        environ,
        own,
    });
    PRIVATIZED.store(true, Ordering::Release);
}

/// What every rank's libc state starts from (see [`start`]).
struct FirstStates {
    first: usize,
    environ: Vec<CString>,
    own: Vec<Vec<(&'static str, String)>>,
}

static FIRST_STATES: std::sync::OnceLock<FirstStates> = std::sync::OnceLock::new();

/// Gives rank `rank` the libc state it started the job with: a new run of a
/// job recovered in place, before the rank's fresh copy of the program loads
/// (which records its variables in it again).
pub(crate) fn restart_rank(rank: usize) {
    let (Some(first), Some(cell)) = (FIRST_STATES.get(), crate::handles::rank_libc(rank)) else {
        return;
    };
    let Some(own) = rank.checked_sub(first.first).and_then(|i| first.own.get(i)) else {
        return;
    };
    *cell.lock() = Some(*LibcState::new(rank, &first.environ, own));
}

/// Marks (or, with `None`, unmarks) the rank whose copy is being loaded.
pub(crate) fn set_loading(rank: Option<usize>) {
    LOADING.store(rank.unwrap_or(usize::MAX), Ordering::Release);
}

/// The libc state of the calling rank (or of the rank being loaded), if the job
/// is privatized.
pub(crate) fn current() -> Option<&'static RankLibc> {
    crate::handles::rank_libc(current_rank()?)
}

/// The rank whose libc state applies to the caller (the running rank, or the
/// one whose copy is loading), without taking its lock; `None` where libc's
/// own state applies.
pub(crate) fn current_rank() -> Option<usize> {
    if !PRIVATIZED.load(Ordering::Acquire) {
        return None;
    }
    match mpcrs::current_rank() {
        Some(r) => Some(r as usize),
        None => match LOADING.load(Ordering::Acquire) {
            usize::MAX => None,
            r => Some(r),
        },
    }
}

/// Runs `f` on the calling rank's state, or returns `None` where libc's own
/// state applies.
pub(crate) fn with<R>(f: impl FnOnce(&mut LibcState) -> R) -> Option<R> {
    let cell = current()?;
    let mut g = cell.lock();
    g.as_mut().map(f)
}

/// The end of a rank, as the end of a process: its exit handlers in reverse
/// order of registration (those they register run too), then the rest of its
/// output.
pub(crate) fn end_rank(rank: usize, status: c_int) {
    let Some(cell) = crate::handles::rank_libc(rank) else {
        return;
    };
    loop {
        let handler = match cell.lock().as_mut() {
            Some(st) => {
                st.in_main = false;
                st.exit_handlers.pop()
            }
            None => None,
        };
        let Some(h) = handler else { break };
        // A handler that calls exit() ends only itself: the others still run.
        let _ = std::panic::catch_unwind(|| match h {
            // SAFETY: registered by the program with this signature and argument.
            ExitHandler::Cxa(f, arg) => unsafe { f(arg) },
            // SAFETY: as above.
            ExitHandler::OnExit(f, arg) => unsafe { f(status, arg) },
        });
    }
    crate::stdout::flush_rank(cell);
}
