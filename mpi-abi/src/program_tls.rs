//! The program's own thread-local variables when its ranks run as copies.
//!
//! An executable reaches its thread-local variables at fixed distances below
//! the thread pointer (the local-exec model: the linker takes the executable
//! for the first TLS module). A copy opened with dlopen keeps that code, so
//! its accesses land in the first module's block of this process: mpcrs-exec's,
//! which reserves `mpcrs_program_tls_size` bytes ending exactly at the thread
//! pointer for them (mpi-abi/build.rs). This module checks that reservation
//! against the program's TLS segment and keeps the block per rank, as a
//! process of its own would: each rank has a saved block, made from its copy's
//! initial image; a worker holds one rank's block at a time and, before it
//! resumes a ULT of another rank (the scheduler's resume hook), saves the
//! block it holds and loads that rank's. Ranks never change worker, so a
//! saved block is only touched by its rank's worker. A thread the program
//! starts gets the initial image, as the dynamic loader gives an executable's
//! new threads; threads the shared system libraries start themselves
//! (libstdc++'s std::thread) find the block zeroed.

use std::cell::{Cell, UnsafeCell};
use std::sync::OnceLock;

use mpcrs_elf::TlsSegment;

/// The program's TLS block as this process lays it out.
struct Layout {
    /// From the block's start up to the thread pointer.
    distance: usize,
    segment: TlsSegment,
    /// The first rank of this process (saved blocks are indexed from it).
    first: usize,
    /// Where each rank's loaded copy keeps its (relocated) initial image.
    images: Vec<OnceLock<usize>>,
    /// Each rank's block while its worker holds another's.
    saved: Saved,
}

/// One block per rank of this process.
struct Saved(Vec<UnsafeCell<Vec<u8>>>);

// SAFETY: rank r's block is only read and written by the worker thread rank r
// runs on (a ULT never leaves its worker), never by two threads.
unsafe impl Sync for Saved {}

static LAYOUT: OnceLock<Option<Layout>> = OnceLock::new();

/// No rank: the block holds no rank's variables (yet).
const NOBODY: usize = usize::MAX;

thread_local! {
    /// The rank whose variables this thread's block holds.
    static HOLDER: Cell<usize> = const { Cell::new(NOBODY) };
}

#[cfg(target_arch = "x86_64")]
fn thread_pointer() -> usize {
    let tp: usize;
    // SAFETY: on x86-64 Linux %fs:0 holds the thread pointer itself (the TCB's
    // self pointer); reading it has no side effect.
    unsafe {
        std::arch::asm!("mov {}, fs:0", out(reg) tp, options(nostack, readonly, preserves_flags))
    };
    tp
}

#[cfg(not(target_arch = "x86_64"))]
fn thread_pointer() -> usize {
    0
}

/// The reservation of this thread: (start, size), if mpcrs-exec made one.
fn reservation() -> Option<(usize, usize)> {
    // SAFETY: NUL-terminated names; RTLD_DEFAULT searches the global scope.
    let (tls, size) = unsafe {
        (
            libc::dlsym(libc::RTLD_DEFAULT, c"mpcrs_program_tls".as_ptr()),
            libc::dlsym(libc::RTLD_DEFAULT, c"mpcrs_program_tls_size".as_ptr()),
        )
    };
    if tls.is_null() || size.is_null() {
        return None;
    }
    // SAFETY: mpcrs_program_tls_size is an 8-byte constant (build.rs).
    Some((tls as usize, unsafe { *size.cast::<u64>() } as usize))
}

/// Records the program's TLS segment; an error names what does not fit (the
/// loader then runs a process's only rank as the program itself). Called
/// once, before any copy is loaded.
pub(crate) fn plan(
    program: &str,
    segment: Option<TlsSegment>,
    ranks: std::ops::Range<usize>,
) -> Result<(), String> {
    let layout = match segment {
        None => None,
        Some(segment) => {
            let distance = segment.mem_size.next_multiple_of(segment.align);
            let Some((start, size)) = reservation() else {
                return Err(format!(
                    "{program} has thread-local variables, and this process reserves no room \
                     for them (mpcrs-exec without mpcrs_program_tls): run one rank per process \
                     (--process-mode)"
                ));
            };
            if cfg!(not(target_arch = "x86_64")) || start + size != thread_pointer() {
                return Err(format!(
                    "{program} has thread-local variables, and mpcrs-exec's room for them does \
                     not end at the thread pointer here: run one rank per process (--process-mode)"
                ));
            }
            if segment.init.len() > segment.mem_size {
                return Err(format!(
                    "{program}: its TLS segment's image is larger than the segment"
                ));
            }
            if distance > size || segment.align > 64 || segment.vaddr % segment.align as u64 != 0 {
                return Err(format!(
                    "{program} has {} bytes of thread-local variables aligned to {}: ranks as \
                     threads hold at most {size} bytes aligned to 64; run one rank per process \
                     (--process-mode, or -p equal to -n)",
                    segment.mem_size, segment.align
                ));
            }
            let blank = vec![0u8; segment.mem_size];
            Some(Layout {
                distance,
                first: ranks.start,
                images: ranks.clone().map(|_| OnceLock::new()).collect(),
                saved: Saved(ranks.map(|_| UnsafeCell::new(blank.clone())).collect()),
                segment,
            })
        }
    };
    let has_tls = layout.is_some();
    LAYOUT
        .set(layout)
        .map_err(|_| "the program's thread-local layout was planned twice".to_string())?;
    if has_tls {
        mpcrs_scheduler::set_resume_hook(on_resume);
    }
    Ok(())
}

/// Whether the program has thread-local variables to fill.
pub(crate) fn program_has_tls() -> bool {
    LAYOUT.get().is_some_and(|l| l.is_some())
}

/// This thread's program block.
fn block(layout: &Layout) -> *mut u8 {
    (thread_pointer() - layout.distance) as *mut u8
}

/// Writes `init` and zeroes the rest of this thread's program block.
fn fill(layout: &Layout, init: &[u8]) {
    // SAFETY: plan() checked that [tp - distance, tp) lies in mpcrs-exec's
    // reservation, which has the same place in every thread's static TLS; this
    // thread alone uses it; init.len() <= mem_size <= distance.
    unsafe {
        std::ptr::copy_nonoverlapping(init.as_ptr(), block(layout), init.len());
        std::ptr::write_bytes(
            block(layout).add(init.len()),
            0,
            layout.segment.mem_size - init.len(),
        );
    }
}

/// Before a copy is loaded: its constructors run on this thread and find the
/// initial values as the file has them.
pub(crate) fn fill_for_loading() {
    if let Some(Some(layout)) = LAYOUT.get() {
        fill(layout, &layout.segment.init);
        HOLDER.with(|h| h.set(NOBODY));
    }
}

/// The relocated initial image of rank `rank`'s copy (any copy's for `None`).
fn initial_image(layout: &Layout, rank: Option<usize>) -> Option<&'static [u8]> {
    let at = *rank
        .and_then(|r| layout.images.get(r.wrapping_sub(layout.first))?.get())
        .or_else(|| layout.images.iter().find_map(|i| i.get()))?;
    // SAFETY: the copy maps its TLS image (part of a loaded segment) for as
    // long as the process runs; init.len() bytes of it are initialised.
    Some(unsafe { std::slice::from_raw_parts(at as *const u8, layout.segment.init.len()) })
}

/// Records where the copy of rank `rank`, loaded at `base`, keeps its
/// relocated initial image, and starts the rank's block from it.
pub(crate) fn note_copy(rank: usize, base: usize) {
    if let Some(Some(layout)) = LAYOUT.get() {
        let at = base + layout.segment.vaddr as usize;
        let _ = layout.images[rank - layout.first].set(at);
        let init = initial_image(layout, Some(rank)).expect("just recorded");
        // SAFETY: the rank runs nowhere yet; its block is ours alone now.
        let saved = unsafe { &mut *layout.saved.0[rank - layout.first].get() };
        saved[..init.len()].copy_from_slice(init);
    }
}

/// Makes this worker's block rank `rank`'s: saves the block it holds, loads
/// the rank's. Called on the rank's worker only.
fn hold(layout: &Layout, rank: usize) {
    let holder = HOLDER.with(|h| h.get());
    if holder == rank {
        return;
    }
    let Some(mine) = layout.saved.0.get(rank.wrapping_sub(layout.first)) else {
        return;
    };
    let len = layout.segment.mem_size;
    // SAFETY: the saved blocks of `holder` and `rank` belong to ranks whose
    // worker is this thread (see `Saved`); the block spans `len` bytes (plan).
    unsafe {
        if let Some(theirs) = layout.saved.0.get(holder.wrapping_sub(layout.first)) {
            std::ptr::copy_nonoverlapping(block(layout), (*theirs.get()).as_mut_ptr(), len);
        }
        std::ptr::copy_nonoverlapping((*mine.get()).as_ptr(), block(layout), len);
    }
    HOLDER.with(|h| h.set(rank));
}

/// The scheduler's resume hook: the ULT about to run gets its rank's block.
fn on_resume(word: usize) {
    if let (Some(Some(layout)), Some(rank)) = (LAYOUT.get(), mpcrs::rank_of_ult_word(word)) {
        hold(layout, rank as usize);
    }
}

/// A rank's main ULT about to run the program: its block is loaded (a ULT's
/// first resume comes before it knows its rank).
pub(crate) fn enter_rank(rank: usize) {
    if let Some(Some(layout)) = LAYOUT.get() {
        hold(layout, rank);
    }
}

/// A thread the program started (acting for `rank`, or for none) about to run
/// the program's start routine: the initial values, as for a new thread.
pub(crate) fn enter_thread(rank: Option<usize>) {
    if let Some(Some(layout)) = LAYOUT.get() {
        let init = initial_image(layout, rank).unwrap_or(&layout.segment.init);
        fill(layout, init);
    }
}
