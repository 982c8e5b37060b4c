//! The heap of each rank of a job recovered in place (`--recover in-place`):
//! the blocks a rank's program allocates with malloc and its relatives, in
//! its own code or in the libraries it calls (libc's strdup and fopen,
//! libstdc++'s operator new), are noted under the rank, so that when the
//! rank starts again from main in a new run, what the abandoned run left
//! allocated is freed (the program was stopped wherever it was, with its
//! pointers on a stack that is gone).
//!
//! libmpi defines malloc, free, calloc, realloc, reallocarray,
//! posix_memalign, aligned_alloc, memalign, valloc and pvalloc, so every
//! allocation of the process passes here; each goes on to glibc's own
//! (`__libc_*`). Without recovery in place that is all they do (one load of
//! [`TRACKING`]). With it, a block is noted when the caller is a rank of
//! this process running its program: in `main` (the loader lowers the rank's
//! runtime depth for it) and in no MPI, CRaaS or FTI call and no libc
//! function libmpi stands in for (each raises it, [`in_runtime`]: what they
//! allocate belongs to the rank's state, which a new run drops itself); the
//! runtime's own allocations, and those of helpers and other threads, are
//! not. Every free looks its block up, whoever frees it.
//!
//! The notes are in shards of pointer-keyed maps under spin locks taken
//! only inside these functions (never across a switch of user-level
//! threads); a fork (a checkpoint's snapshot) takes them all first, so a
//! child never finds one held.

use std::cell::{Cell, UnsafeCell};
use std::collections::HashMap;
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

extern "C" {
    fn __libc_malloc(size: usize) -> *mut c_void;
    fn __libc_free(p: *mut c_void);
    fn __libc_calloc(n: usize, size: usize) -> *mut c_void;
    fn __libc_realloc(p: *mut c_void, size: usize) -> *mut c_void;
    fn __libc_memalign(align: usize, size: usize) -> *mut c_void;
}

/// Set once recovery in place is armed in a job of privatized ranks.
static TRACKING: AtomicBool = AtomicBool::new(false);

const SHARDS: usize = 64;

/// Blocks smaller than this are not noted: libc allocates its own
/// process-wide state (stdio buffers, time zone and locale data) lazily, in
/// whichever thread first needs it, and freeing that with a rank's blocks
/// would pull it from under the others. A program's arrays, what a new run
/// must not keep twice, are larger; its small blocks stay allocated.
const NOTE_AT: usize = 64 << 10;

/// Blocks noted, by address: the rank (world rank) that allocated each.
struct Shard {
    locked: AtomicBool,
    blocks: UnsafeCell<Option<HashMap<usize, u32>>>,
}

// SAFETY: `blocks` is touched only with `locked` held (Shard::with).
unsafe impl Sync for Shard {}

static NOTES: [Shard; SHARDS] = [const {
    Shard {
        locked: AtomicBool::new(false),
        blocks: UnsafeCell::new(None),
    }
}; SHARDS];

thread_local! {
    /// This thread is inside a function of this module: the map's own
    /// allocations go straight to glibc.
    static INSIDE: Cell<bool> = const { Cell::new(false) };
}

impl Shard {
    fn of(p: usize) -> &'static Shard {
        &NOTES[(p >> 4) % SHARDS]
    }

    fn lock(&self) {
        while self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            std::hint::spin_loop();
        }
    }

    fn unlock(&self) {
        self.locked.store(false, Ordering::Release);
    }

    fn with<R>(&self, f: impl FnOnce(&mut HashMap<usize, u32>) -> R) -> R {
        INSIDE.with(|i| i.set(true));
        self.lock();
        // SAFETY: the lock is held: nobody else touches the map.
        let r = f(unsafe { &mut *self.blocks.get() }.get_or_insert_with(HashMap::new));
        self.unlock();
        INSIDE.with(|i| i.set(false));
        r
    }
}

/// Per world rank: how deep in the runtime it is (1 outside `main`, +1 in
/// each MPI, CRaaS or FTI call); its blocks are noted at depth 0 only.
static DEPTH: std::sync::OnceLock<Box<[AtomicU32]>> = std::sync::OnceLock::new();

/// Starts noting the blocks of the `ranks` ranks of the job (recovery in
/// place armed in a privatized job). Called once, before any rank runs.
pub(crate) fn start(ranks: usize) {
    let _ = DEPTH.set((0..ranks).map(|_| AtomicU32::new(1)).collect());
    extern "C" fn prepare() {
        for s in &NOTES {
            s.lock();
        }
    }
    extern "C" fn after() {
        for s in &NOTES {
            s.unlock();
        }
    }
    // SAFETY: handlers with the signature pthread_atfork wants.
    unsafe { libc::pthread_atfork(Some(prepare), Some(after), Some(after)) };
    TRACKING.store(true, Ordering::Release);
}

fn depth_of(rank: usize) -> Option<&'static AtomicU32> {
    DEPTH.get()?.get(rank)
}

/// The rank whose program is the caller, if its blocks of `size` bytes are
/// noted now.
#[inline]
fn noting(size: usize) -> Option<u32> {
    if size < NOTE_AT || !TRACKING.load(Ordering::Relaxed) || INSIDE.with(|i| i.get()) {
        return None;
    }
    let rank = mpcrs::current_rank()? as usize;
    (depth_of(rank)?.load(Ordering::Relaxed) == 0).then_some(rank as u32)
}

/// Raises the calling rank's runtime depth until dropped.
pub(crate) struct InRuntime(Option<&'static AtomicU32>);

impl Drop for InRuntime {
    #[inline]
    fn drop(&mut self) {
        if let Some(d) = self.0 {
            d.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// Marks the caller as inside the runtime (an MPI, CRaaS or FTI call): what
/// it allocates is not the program's.
#[inline]
pub(crate) fn in_runtime() -> InRuntime {
    if !TRACKING.load(Ordering::Relaxed) {
        return InRuntime(None);
    }
    let d = mpcrs::current_rank().and_then(|r| depth_of(r as usize));
    if let Some(d) = d {
        d.fetch_add(1, Ordering::Relaxed);
    }
    InRuntime(d)
}

/// Marks rank `rank` as running its program (the loader, around `main`)
/// until dropped.
pub(crate) fn in_program(rank: usize) -> InProgram {
    let d = depth_of(rank);
    if let Some(d) = d {
        d.fetch_sub(1, Ordering::Relaxed);
    }
    InProgram(d)
}

pub(crate) struct InProgram(Option<&'static AtomicU32>);

impl Drop for InProgram {
    fn drop(&mut self) {
        if let Some(d) = self.0 {
            d.fetch_add(1, Ordering::Relaxed);
        }
    }
}

fn note(p: *mut c_void, rank: u32) {
    if !p.is_null() {
        let a = p as usize;
        Shard::of(a).with(|m| m.insert(a, rank));
    }
}

fn forget(p: *mut c_void) {
    if !p.is_null()
        && TRACKING.load(Ordering::Relaxed)
        && !INSIDE.with(|i| i.get())
        // SAFETY: a block glibc gave out and not freed yet (the caller frees
        // it now); a small one was never noted.
        && unsafe { libc::malloc_usable_size(p) } >= NOTE_AT
    {
        let a = p as usize;
        Shard::of(a).with(|m| m.remove(&a));
    }
}

/// Frees every block rank `rank`'s program left allocated: a new run of a
/// job recovered in place, once the rank's old copy of the program is gone.
/// Returns how many bytes' worth of blocks (as allocated) went.
pub(crate) fn free_all(rank: usize) -> usize {
    let mut gone = Vec::new();
    for s in &NOTES {
        s.with(|m| {
            m.retain(|&a, &mut r| {
                if r as usize == rank {
                    gone.push(a);
                    false
                } else {
                    true
                }
            })
        });
    }
    let mut bytes = 0;
    for a in gone {
        // SAFETY: a block glibc gave this rank's program, not freed since
        // (every free forgets its block first), whose users are gone.
        unsafe {
            bytes += libc::malloc_usable_size(a as *mut c_void);
            __libc_free(a as *mut c_void);
        }
    }
    bytes
}

/// # Safety
/// As malloc(3).
#[no_mangle]
pub unsafe extern "C" fn malloc(size: usize) -> *mut c_void {
    // SAFETY: glibc's own.
    let p = unsafe { __libc_malloc(size) };
    if let Some(r) = noting(size) {
        note(p, r);
    }
    p
}

/// # Safety
/// As free(3).
#[no_mangle]
pub unsafe extern "C" fn free(p: *mut c_void) {
    forget(p);
    // SAFETY: glibc's own.
    unsafe { __libc_free(p) }
}

/// # Safety
/// As calloc(3).
#[no_mangle]
pub unsafe extern "C" fn calloc(n: usize, size: usize) -> *mut c_void {
    // SAFETY: glibc's own.
    let p = unsafe { __libc_calloc(n, size) };
    if let Some(r) = noting(n.saturating_mul(size)) {
        note(p, r);
    }
    p
}

/// # Safety
/// As realloc(3).
#[no_mangle]
pub unsafe extern "C" fn realloc(p: *mut c_void, size: usize) -> *mut c_void {
    // SAFETY (usable size): a block glibc gave out and not freed yet.
    let owner = if !p.is_null()
        && TRACKING.load(Ordering::Relaxed)
        && !INSIDE.with(|i| i.get())
        && unsafe { libc::malloc_usable_size(p) } >= NOTE_AT
    {
        let a = p as usize;
        Shard::of(a).with(|m| m.get(&a).copied())
    } else {
        None
    };
    // SAFETY: glibc's own.
    let q = unsafe { __libc_realloc(p, size) };
    if q.is_null() && size != 0 {
        // Failed: `p` is still allocated, still noted.
        return q;
    }
    if owner.is_some() {
        forget(p);
    }
    if let Some(r) = owner.or_else(|| noting(size)) {
        note(q, r);
    }
    q
}

/// # Safety
/// As reallocarray(3).
#[no_mangle]
pub unsafe extern "C" fn reallocarray(p: *mut c_void, n: usize, size: usize) -> *mut c_void {
    match n.checked_mul(size) {
        // SAFETY: as realloc.
        Some(bytes) => unsafe { realloc(p, bytes) },
        None => {
            // SAFETY: the calling thread's errno.
            unsafe { *libc::__errno_location() = libc::ENOMEM };
            std::ptr::null_mut()
        }
    }
}

/// # Safety
/// As memalign(3).
#[no_mangle]
pub unsafe extern "C" fn memalign(align: usize, size: usize) -> *mut c_void {
    // SAFETY: glibc's own.
    let p = unsafe { __libc_memalign(align, size) };
    if let Some(r) = noting(size) {
        note(p, r);
    }
    p
}

/// # Safety
/// As aligned_alloc(3).
#[no_mangle]
pub unsafe extern "C" fn aligned_alloc(align: usize, size: usize) -> *mut c_void {
    // SAFETY: as memalign.
    unsafe { memalign(align, size) }
}

/// # Safety
/// As posix_memalign(3).
#[no_mangle]
pub unsafe extern "C" fn posix_memalign(out: *mut *mut c_void, align: usize, size: usize) -> c_int {
    if !align.is_power_of_two() || !align.is_multiple_of(std::mem::size_of::<*mut c_void>()) {
        return libc::EINVAL;
    }
    // SAFETY: as memalign.
    let p = unsafe { memalign(align, size) };
    if p.is_null() && size != 0 {
        return libc::ENOMEM;
    }
    // SAFETY: the caller's pointer to a pointer.
    unsafe { *out = p };
    0
}

fn page() -> usize {
    // SAFETY: a plain query.
    unsafe { libc::sysconf(libc::_SC_PAGESIZE) as usize }
}

/// # Safety
/// As valloc(3).
#[no_mangle]
pub unsafe extern "C" fn valloc(size: usize) -> *mut c_void {
    // SAFETY: as memalign.
    unsafe { memalign(page(), size) }
}

/// # Safety
/// As pvalloc(3).
#[no_mangle]
pub unsafe extern "C" fn pvalloc(size: usize) -> *mut c_void {
    let p = page();
    // SAFETY: as memalign.
    unsafe { memalign(p, size.div_ceil(p).max(1) * p) }
}
