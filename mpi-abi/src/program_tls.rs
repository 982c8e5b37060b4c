//! The program's own thread-local variables when its ranks run as copies.
//!
//! An executable reaches its thread-local variables at fixed distances below
//! the thread pointer (the local-exec model: the linker takes the executable
//! for the first TLS module). A copy opened with dlopen keeps that code, so
//! its accesses land in the first module's block of this process: mpcrs-exec's,
//! which reserves `mpcrs_program_tls_size` bytes ending exactly at the thread
//! pointer for them (mpi-abi/build.rs). This module checks that reservation
//! against the program's TLS segment and fills it with the program's initial
//! image on each thread that runs program code — a rank's worker before the
//! first rank runs there, a thread the program starts — as the dynamic loader
//! does for an executable's own threads.
//!
//! The block belongs to the OS thread: ranks that share a worker share the
//! program's thread-local variables (a ULT never leaves its worker, so a rank
//! always sees the same block). Threads that system libraries start themselves
//! (OpenMP's team) get the block zeroed, without the initial values.

use std::cell::Cell;
use std::sync::{Mutex, OnceLock};

use mpcrs::elf::TlsSegment;

/// The program's TLS block as this process lays it out.
struct Layout {
    /// From the block's start up to the thread pointer.
    distance: usize,
    segment: TlsSegment,
    /// Where each rank's loaded copy keeps its (relocated) initial image.
    images: Mutex<Vec<(usize, usize)>>,
}

static LAYOUT: OnceLock<Option<Layout>> = OnceLock::new();

thread_local! {
    static FILLED: Cell<bool> = const { Cell::new(false) };
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
pub(crate) fn plan(program: &str, segment: Option<TlsSegment>) -> Result<(), String> {
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
            Some(Layout {
                distance,
                segment,
                images: Mutex::new(Vec::new()),
            })
        }
    };
    LAYOUT
        .set(layout)
        .map_err(|_| "the program's thread-local layout was planned twice".to_string())
}

/// Whether the program has thread-local variables to fill.
pub(crate) fn program_has_tls() -> bool {
    LAYOUT.get().is_some_and(|l| l.is_some())
}

/// Writes `init` and zeroes the rest of this thread's program block.
fn fill(layout: &Layout, init: &[u8]) {
    let block = thread_pointer() - layout.distance;
    // SAFETY: plan() checked that [tp - distance, tp) lies in mpcrs-exec's
    // reservation, which has the same place in every thread's static TLS; this
    // thread alone uses it; init.len() <= mem_size <= distance.
    unsafe {
        std::ptr::copy_nonoverlapping(init.as_ptr(), block as *mut u8, init.len());
        std::ptr::write_bytes(
            (block + init.len()) as *mut u8,
            0,
            layout.segment.mem_size - init.len(),
        );
    }
    FILLED.with(|f| f.set(true));
}

/// Before a copy is loaded: its constructors run on this thread and find the
/// initial values as the file has them.
pub(crate) fn fill_for_loading() {
    if let Some(Some(layout)) = LAYOUT.get() {
        fill(layout, &layout.segment.init);
    }
}

/// Records where the copy of rank `rank`, loaded at `base`, keeps its
/// relocated initial image.
pub(crate) fn note_copy(rank: usize, base: usize) {
    if let Some(Some(layout)) = LAYOUT.get() {
        let at = base + layout.segment.vaddr as usize;
        layout.images.lock().unwrap().push((rank, at));
    }
}

/// On a thread about to run program code for `rank` (any loaded rank if
/// `None`): fills the block once per thread, from that rank's copy.
pub(crate) fn enter_thread(rank: Option<usize>) {
    let Some(Some(layout)) = LAYOUT.get() else {
        return;
    };
    if FILLED.with(|f| f.get()) {
        return;
    }
    let images = layout.images.lock().unwrap();
    let at = rank
        .and_then(|r| images.iter().find(|i| i.0 == r))
        .or(images.first())
        .map(|i| i.1);
    drop(images);
    match at {
        // SAFETY: the copy maps its TLS image (part of a loaded segment) for as
        // long as the process runs; init.len() bytes of it are initialised.
        Some(at) => fill(layout, unsafe {
            std::slice::from_raw_parts(at as *const u8, layout.segment.init.len())
        }),
        None => fill(layout, &layout.segment.init),
    }
}
