//! The restorer's second half: replace this process's memory with the image's
//! and resume every thread. It runs on a stack outside every image range and
//! from code the image maps at the same place, calls nothing but the kernel
//! (glibc's memory is replaced under it) and touches no static: everything it
//! needs is in the [`Plan`] the first half prepared in that same scratch mapping.

use core::arch::asm;

use crate::sys::call;

/// Lowest and highest addresses a process's mappings may occupy
/// (vm.mmap_min_addr at its default; the end of user space as images check it).
pub(super) const LOWEST: u64 = 0x10000;
pub(super) const HIGHEST: u64 = crate::image::USER_TOP;
/// `PlanRegion::offset` of a mapping with no contents in the image.
pub(super) const NO_DATA: u64 = u64::MAX;
/// `PlanRegion::offset` of a mapping read from the pieces of a chain of
/// images (`PlanRegion::pieces`).
pub(super) const PIECES: u64 = u64::MAX - 1;
/// `PlanPiece::fd` of zeros.
pub(super) const ZEROS: u64 = u64::MAX;

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(super) struct Range {
    pub start: u64,
    pub end: u64,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(super) struct PlanRegion {
    pub start: u64,
    pub end: u64,
    pub prot: u64,
    /// [`NO_DATA`], or [`PIECES`]: the contents are the region's pieces.
    pub offset: u64,
    /// With [`PIECES`]: the region's pieces in `Plan::pieces`, in order.
    pub pieces_from: u64,
    pub pieces_to: u64,
}

/// `[start, end)` read from `fd` at `offset` (or zeros, [`ZEROS`]).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(super) struct PlanPiece {
    pub start: u64,
    pub end: u64,
    pub fd: u64,
    pub offset: u64,
}

/// One thread to bring back. The first five fields are read by the assembly
/// of [`spawn`] at fixed offsets.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(super) struct ThreadRec {
    pub robust_head: u64,
    pub robust_len: u64,
    pub cpus_ptr: u64,
    pub cpus_len: u64,
    pub name_ptr: u64,
    pub frame: u64,
    pub fs_base: u64,
    /// glibc's tid field of the thread's descriptor (0: unknown).
    pub tid_addr: u64,
    pub cpus: [u64; 16],
    pub name: [u64; 2],
}

#[repr(C)]
pub(super) struct Plan {
    /// Every image of the chain, the newest (whose whole regions are mapped
    /// from it) first; closed at the end.
    pub image_fds: *const u64,
    pub image_fds_len: u64,
    pub pieces: *const PlanPiece,
    pub pieces_len: u64,
    pub brk: u64,
    /// Mappings left in place, sorted: the restorer's code, the kernel's, scratch.
    pub kept: *const Range,
    pub kept_len: u64,
    pub regions: *const PlanRegion,
    pub regions_len: u64,
    /// Descriptors left open, sorted (the image's is closed at the end).
    pub fds: *const u64,
    pub fds_len: u64,
    pub threads: *const ThreadRec,
    pub threads_len: u64,
    /// The thread this one becomes (the image's main thread), if any.
    pub main: *const ThreadRec,
    /// `threads::RESTORES`, incremented once memory is back.
    pub restores: u64,
    /// The restored process's `restore::HANDOFF`, set once memory is back to
    /// the new process's environment (`handoff_len` bytes at `handoff_at`).
    pub handoff: u64,
    pub handoff_at: u64,
    pub handoff_len: u64,
    /// "mpcrs: restart from FILE failed: ", written before a reason.
    pub message: *const u8,
    pub message_len: u64,
}

fn fail(plan: &Plan, why: &[u8]) -> ! {
    // SAFETY: the message lives in the scratch mapping, which stays.
    let prefix = unsafe { core::slice::from_raw_parts(plan.message, plan.message_len as usize) };
    crate::sys::write_all(2, prefix);
    crate::sys::write_all(2, why);
    crate::sys::write_all(2, b"\n");
    crate::sys::exit_group(crate::restore::RESTORE_FAILED);
}

/// Switches to the scratch stack and runs [`replace_and_resume`].
///
/// # Safety
/// `stack_top` is the 16-byte aligned top of a stack inside the plan's kept
/// scratch range, and `plan` is complete.
pub(super) unsafe fn enter(plan: *const Plan, stack_top: u64) -> ! {
    // SAFETY: per the contract; the call never returns.
    unsafe {
        asm!(
            "mov rsp, {top}",
            "xor ebp, ebp",
            "call {f}",
            "ud2",
            top = in(reg) stack_top,
            f = sym replace_and_resume,
            in("rdi") plan,
            options(noreturn),
        )
    }
}

unsafe extern "C" fn replace_and_resume(plan: *const Plan) -> ! {
    // SAFETY: the plan and its arrays live in the kept scratch mapping.
    let p = unsafe { &*plan };
    let kept = unsafe { core::slice::from_raw_parts(p.kept, p.kept_len as usize) };
    let regions = unsafe { core::slice::from_raw_parts(p.regions, p.regions_len as usize) };
    let fds = unsafe { core::slice::from_raw_parts(p.fds, p.fds_len as usize) };
    let threads = unsafe { core::slice::from_raw_parts(p.threads, p.threads_len as usize) };
    let pieces = unsafe { core::slice::from_raw_parts(p.pieces, p.pieces_len as usize) };
    let image_fds = unsafe { core::slice::from_raw_parts(p.image_fds, p.image_fds_len as usize) };

    if p.brk != 0 {
        // The kernel's program break, so that malloc goes on growing the heap.
        // Set while the new process's heap is still mapped: the kernel moves
        // the break only next to its own heap mapping.
        // SAFETY: brk only moves the break.
        let got = unsafe { call!(libc::SYS_brk, p.brk) } as u64;
        if got != p.brk {
            fail(p, b"the program break cannot be set where the image has it");
        }
    }
    // Everything but the kept ranges goes: the new process's own heap, stack,
    // libraries and data alike.
    let mut from = LOWEST;
    for k in kept {
        if k.start > from {
            // SAFETY: nothing of what is unmapped is used from here on.
            unsafe { call!(libc::SYS_munmap, from, k.start - from) };
        }
        if k.end > from {
            from = k.end;
        }
    }
    if from < HIGHEST {
        // SAFETY: as above.
        unsafe { call!(libc::SYS_munmap, from, HIGHEST - from) };
    }
    for r in regions {
        let len = r.end - r.start;
        // SAFETY: MAP_FIXED into ranges that are free or hold nothing kept.
        // Anonymous, as the memory of the process that was dumped: memory
        // mapped from an image would read back the image, not zeros, where
        // the program gives pages back (MADV_DONTNEED, as malloc does).
        let got = unsafe {
            call!(
                libc::SYS_mmap,
                r.start,
                len,
                r.prot,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED | libc::MAP_NORESERVE,
                -1i64,
                0
            )
        };
        if got as u64 != r.start {
            fail(p, b"a mapping of the image cannot be placed back");
        }
        if r.offset == PIECES {
            read_pieces(p, r, &pieces[r.pieces_from as usize..r.pieces_to as usize]);
        }
    }
    // SAFETY: the counter is a static of the restored memory (same address).
    unsafe {
        let at = p.restores as *mut u64;
        core::ptr::write_volatile(at, core::ptr::read_volatile(at) + 1);
        let handoff = p.handoff as *mut u64;
        core::ptr::write_volatile(handoff, p.handoff_at);
        core::ptr::write_volatile(handoff.add(1), p.handoff_len);
    }
    // Descriptors of the new process that the image does not know are closed.
    let mut next = 0u64;
    for &fd in fds {
        if fd > next {
            // SAFETY: closing descriptors nobody uses any more.
            unsafe { call!(libc::SYS_close_range, next, fd - 1, 0) };
        }
        next = fd + 1;
    }
    // SAFETY: as above.
    unsafe { call!(libc::SYS_close_range, next, u32::MAX, 0) };
    // SAFETY: the image's pages stay mapped without the descriptors.
    for &fd in image_fds {
        unsafe { call!(libc::SYS_close, fd) };
    }

    for t in threads {
        // SAFETY: each record names a stopped thread of the image: its frame,
        // stack and descriptor are mapped again.
        if unsafe { spawn(t) } < 0 {
            fail(p, b"a thread cannot be re-created");
        }
    }
    if p.main.is_null() {
        // SAFETY: this thread has nothing of the image to become.
        unsafe { call!(libc::SYS_exit, 0) };
        #[allow(clippy::empty_loop)]
        loop {}
    }
    // SAFETY: `main` names the image's main thread, stopped like the others.
    unsafe { become_thread(&*p.main) }
}

/// Fills region `r`, just mapped anonymous, from its pieces: each page read
/// once, from the newest image of the chain that stores it; then gives it its
/// protection.
fn read_pieces(p: &Plan, r: &PlanRegion, pieces: &[PlanPiece]) {
    if r.prot & libc::PROT_WRITE as u64 == 0 {
        // SAFETY: the region was just mapped here.
        unsafe {
            call!(
                libc::SYS_mprotect,
                r.start,
                r.end - r.start,
                libc::PROT_READ | libc::PROT_WRITE
            )
        };
    }
    for piece in pieces.iter().filter(|x| x.fd != ZEROS) {
        let mut at = 0;
        let len = piece.end - piece.start;
        // The piece's pages allocated in one call: the read would otherwise
        // take a fault per page, which costs microseconds each in a virtual
        // machine. Where the kernel cannot (before Linux 5.14), the faults
        // are taken.
        // SAFETY: advice on pages of the region mapped writable above.
        unsafe {
            call!(
                libc::SYS_madvise,
                piece.start,
                len,
                libc::MADV_POPULATE_WRITE
            )
        };
        while at < len {
            // SAFETY: reading into the region mapped writable above.
            let n = unsafe {
                call!(
                    libc::SYS_pread64,
                    piece.fd,
                    piece.start + at,
                    len - at,
                    piece.offset + at
                )
            };
            if n == -(libc::EINTR as i64) {
                continue;
            }
            if n <= 0 {
                fail(p, b"an image of the chain cannot be read");
            }
            at += n as u64;
        }
    }
    if r.prot & libc::PROT_WRITE as u64 == 0 {
        // SAFETY: as above.
        unsafe { call!(libc::SYS_mprotect, r.start, r.end - r.start, r.prot) };
    }
}

/// Re-creates one thread: `clone` onto its descriptor (FS base) with the
/// kernel keeping glibc's tid field, then in the new thread robust list,
/// affinity and name, and `rt_sigreturn` on its frame.
unsafe fn spawn(t: &ThreadRec) -> i64 {
    let mut flags = libc::CLONE_VM
        | libc::CLONE_FS
        | libc::CLONE_FILES
        | libc::CLONE_SIGHAND
        | libc::CLONE_THREAD
        | libc::CLONE_SYSVSEM
        | libc::CLONE_SETTLS;
    if t.tid_addr != 0 {
        flags |= libc::CLONE_PARENT_SETTID | libc::CLONE_CHILD_CLEARTID;
    }
    let ret: i64;
    // SAFETY: the child starts with its stack pointer on the saved ucontext and
    // only makes system calls from the record (r12) before rt_sigreturn, which
    // restores every register of the stopped thread.
    unsafe {
        asm!(
            "syscall",
            "test rax, rax",
            "jnz 2f",
            "mov rdi, [r12]",
            "mov rsi, [r12 + 8]",
            "mov eax, {robust}",
            "syscall",
            "xor edi, edi",
            "mov rsi, [r12 + 24]",
            "mov rdx, [r12 + 16]",
            "mov eax, {affinity}",
            "syscall",
            "mov edi, {set_name}",
            "mov rsi, [r12 + 32]",
            "mov eax, {prctl}",
            "syscall",
            "mov eax, {sigreturn}",
            "syscall",
            "ud2",
            "2:",
            robust = const libc::SYS_set_robust_list,
            affinity = const libc::SYS_sched_setaffinity,
            set_name = const libc::PR_SET_NAME,
            prctl = const libc::SYS_prctl,
            sigreturn = const libc::SYS_rt_sigreturn,
            inlateout("rax") libc::SYS_clone => ret,
            in("rdi") flags as u64,
            in("rsi") t.frame,
            in("rdx") t.tid_addr,
            in("r10") t.tid_addr,
            in("r8") t.fs_base,
            in("r12") t as *const ThreadRec,
            lateout("rcx") _,
            lateout("r11") _,
        );
    }
    ret
}

/// Turns the calling thread into `t` and resumes it.
unsafe fn become_thread(t: &ThreadRec) -> ! {
    // SAFETY: after ARCH_SET_FS nothing here uses thread-local storage; the
    // rest are plain system calls on the record, then rt_sigreturn.
    unsafe {
        call!(libc::SYS_arch_prctl, crate::sys::ARCH_SET_FS, t.fs_base);
        let tid = call!(libc::SYS_set_tid_address, t.tid_addr);
        if t.tid_addr != 0 {
            core::ptr::write_volatile(t.tid_addr as *mut i32, tid as i32);
        }
        call!(libc::SYS_set_robust_list, t.robust_head, t.robust_len);
        call!(libc::SYS_sched_setaffinity, 0, t.cpus_len, t.cpus_ptr);
        call!(libc::SYS_prctl, libc::PR_SET_NAME, t.name_ptr);
        asm!(
            "mov rsp, {frame}",
            "mov eax, {sigreturn}",
            "syscall",
            "ud2",
            frame = in(reg) t.frame,
            sigreturn = const libc::SYS_rt_sigreturn,
            options(noreturn),
        )
    }
}
