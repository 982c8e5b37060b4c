//! Standard input of a privatized job goes to rank 0 only, as mpirun and
//! mpiexec give it: the other ranks of process 0 read end of file, each from
//! a stream of its own onto /dev/null (so one rank's end of file is not
//! another's: glibc's end-of-file flag is kept on the stream).
//!
//! What reads the program's `stdin` variable (fgets, fread, getline, fscanf,
//! getc with `stdin`) reads the rank's copy of it, which the loader points to
//! the rank's stream (`for_rank`). What reads libc's own `stdin` (scanf,
//! getchar, vscanf, scanf) is interposed here. scanf is variadic, which a
//! Rust function cannot be: its entry is a naked function that keeps the
//! caller's argument registers and jumps to libc's scanf for rank 0, and
//! returns EOF, as a scanf on an empty stream does, for the others.
//! C++'s `std::cin` (and `std::wcin`) is each rank's own object (a copy
//! relocation, loader.rs): for the other ranks it starts at end of file.
//! `read(0, ...)` (and readv, and the checked read of _FORTIFY_SOURCE) is
//! interposed too: end of file for the other ranks. Fortran's READ(*,...)
//! comes to it through libgfortran, of which each rank has its own copy
//! (libraries.rs), and so its own unit 5: one rank's end of file there is not
//! rank 0's.

use std::collections::HashMap;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::Mutex;

use crate::libc_state;

extern "C" {
    #[link_name = "stdin"]
    static LIBC_STDIN: *mut libc::FILE;
    fn vfscanf(stream: *mut libc::FILE, format: *const c_char, ap: *mut c_void) -> c_int;
    #[link_name = "__isoc99_vfscanf"]
    fn isoc99_vfscanf(stream: *mut libc::FILE, format: *const c_char, ap: *mut c_void) -> c_int;
}

/// Each rank's stream onto /dev/null, as an address (FILE pointers are not Send).
static NULL_STREAMS: Mutex<Option<HashMap<usize, usize>>> = Mutex::new(None);

/// The stream rank `rank` reads as its standard input: libc's for rank 0,
/// its own end of file for any other.
pub(crate) fn for_rank(rank: usize) -> *mut libc::FILE {
    if rank == 0 {
        // SAFETY: libc's stdin, initialised before any rank runs.
        return unsafe { LIBC_STDIN };
    }
    let mut streams = NULL_STREAMS.lock().unwrap_or_else(|e| e.into_inner());
    let at = *streams
        .get_or_insert_with(HashMap::new)
        .entry(rank)
        .or_insert_with(|| {
            // SAFETY: NUL-terminated path and mode.
            unsafe { libc::fopen(c"/dev/null".as_ptr(), c"r".as_ptr()) as usize }
        });
    if at == 0 {
        // No /dev/null: the shared stream rather than none.
        // SAFETY: as above.
        return unsafe { LIBC_STDIN };
    }
    at as *mut libc::FILE
}

/// The calling rank's standard input; libc's outside a privatized rank.
fn mpcrs_rank_stdin() -> *mut libc::FILE {
    match libc_state::current_rank() {
        Some(rank) => for_rank(rank),
        // SAFETY: libc's stdin.
        None => unsafe { LIBC_STDIN },
    }
}

/// getchar(3) of the calling rank.
#[no_mangle]
pub unsafe extern "C" fn getchar() -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    // SAFETY: a valid stream.
    unsafe { libc::fgetc(mpcrs_rank_stdin()) }
}

/// getchar_unlocked(3) of the calling rank (locked: the stream may be shared).
#[no_mangle]
pub unsafe extern "C" fn getchar_unlocked() -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    // SAFETY: a valid stream.
    unsafe { libc::fgetc(mpcrs_rank_stdin()) }
}

/// vscanf(3) of the calling rank; `ap` is the caller's va_list (a pointer on x86-64).
#[no_mangle]
pub unsafe extern "C" fn vscanf(format: *const c_char, ap: *mut c_void) -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    // SAFETY: the caller's format and argument list, passed on as they are.
    unsafe { vfscanf(mpcrs_rank_stdin(), format, ap) }
}

/// glibc's C99 vscanf, which <stdio.h> names vscanf.
#[no_mangle]
pub unsafe extern "C" fn __isoc99_vscanf(format: *const c_char, ap: *mut c_void) -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    // SAFETY: as vscanf.
    unsafe { isoc99_vfscanf(mpcrs_rank_stdin(), format, ap) }
}

/// Whether the calling thread runs a privatized rank other than 0.
fn reads_end_of_file() -> bool {
    libc_state::current_rank().is_some_and(|rank| rank != 0)
}

/// Whether a read of descriptor `fd` by the caller is one of standard input
/// by a rank other than 0, which reads end of file.
fn stdin_closed_to_caller(fd: c_int) -> bool {
    fd == libc::STDIN_FILENO && reads_end_of_file()
}

/// read(2): end of file for a rank other than 0 reading descriptor 0 (what
/// Fortran's READ(*) comes to through libgfortran), libc's otherwise.
/// Every read of the process comes here, libmpi's own included: the check
/// costs a comparison for any other descriptor.
#[no_mangle]
pub unsafe extern "C" fn read(fd: c_int, buf: *mut c_void, count: usize) -> isize {
    if stdin_closed_to_caller(fd) {
        return 0;
    }
    crate::interpose::real!("read": unsafe extern "C" fn(c_int, *mut c_void, usize) -> isize)(
        fd, buf, count,
    )
}

/// readv(2), as read.
#[no_mangle]
pub unsafe extern "C" fn readv(fd: c_int, iov: *const libc::iovec, count: c_int) -> isize {
    if stdin_closed_to_caller(fd) {
        return 0;
    }
    crate::interpose::real!("readv": unsafe extern "C" fn(c_int, *const libc::iovec, c_int) -> isize)(
        fd, iov, count,
    )
}

/// The checked read that _FORTIFY_SOURCE makes of read(2) where the
/// buffer's size is known.
#[no_mangle]
pub unsafe extern "C" fn __read_chk(
    fd: c_int,
    buf: *mut c_void,
    count: usize,
    size: usize,
) -> isize {
    if count <= size && stdin_closed_to_caller(fd) {
        return 0;
    }
    crate::interpose::real!("__read_chk": unsafe extern "C" fn(c_int, *mut c_void, usize, usize) -> isize)(
        fd, buf, count, size,
    )
}

/// Where a scanf entry goes: 0 for "return EOF", else libc's function.
extern "C" fn scanf_target() -> usize {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    if reads_end_of_file() {
        0
    } else {
        *LIBC_SCANF.get_or_init(|| crate::interpose::libc_symbol("__isoc99_scanf\0"))
    }
}

extern "C" fn old_scanf_target() -> usize {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    if reads_end_of_file() {
        0
    } else {
        *LIBC_OLD_SCANF.get_or_init(|| crate::interpose::libc_symbol("scanf\0"))
    }
}

static LIBC_SCANF: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
static LIBC_OLD_SCANF: std::sync::OnceLock<usize> = std::sync::OnceLock::new();

/// A variadic entry that asks `$target` where to go with the caller's
/// arguments untouched (the six integer argument registers, %al and the
/// eight vector registers of the x86-64 System V convention): to the address
/// it returns, or back with EOF (-1) for 0.
macro_rules! variadic_entry {
    ($name:ident => $target:ident) => {
        #[unsafe(naked)]
        #[no_mangle]
        pub unsafe extern "C" fn $name() {
            core::arch::naked_asm!(
                // 7 pushes after the return address: the stack is 16-aligned.
                "push rdi", "push rsi", "push rdx", "push rcx", "push r8", "push r9", "push rax",
                "sub rsp, 128",
                "movdqu [rsp], xmm0", "movdqu [rsp+16], xmm1", "movdqu [rsp+32], xmm2",
                "movdqu [rsp+48], xmm3", "movdqu [rsp+64], xmm4", "movdqu [rsp+80], xmm5",
                "movdqu [rsp+96], xmm6", "movdqu [rsp+112], xmm7",
                "call {target}",
                "mov r11, rax",
                "movdqu xmm0, [rsp]", "movdqu xmm1, [rsp+16]", "movdqu xmm2, [rsp+32]",
                "movdqu xmm3, [rsp+48]", "movdqu xmm4, [rsp+64]", "movdqu xmm5, [rsp+80]",
                "movdqu xmm6, [rsp+96]", "movdqu xmm7, [rsp+112]",
                "add rsp, 128",
                "pop rax", "pop r9", "pop r8", "pop rcx", "pop rdx", "pop rsi", "pop rdi",
                "test r11, r11",
                "jz 2f",
                "jmp r11",
                "2:",
                "mov eax, -1",
                "ret",
                target = sym $target,
            )
        }
    };
}

// <stdio.h> names scanf __isoc99_scanf; plain scanf is the pre-C99 entry.
variadic_entry!(__isoc99_scanf => scanf_target);
variadic_entry!(scanf => old_scanf_target);

/// Puts rank `rank`'s copy of a C++ standard input stream (`std::cin` or
/// `std::wcin`, an istream at `stream`) at end of file, unless the rank is 0:
/// `clear(eofbit | failbit)` on its basic_ios, as reading an empty stream
/// leaves it. `clear` names libstdc++'s basic_ios<C>::clear(iostate).
pub(crate) fn end_cxx_input(rank: usize, stream: *mut c_void, clear: &std::ffi::CStr) {
    if rank == 0 {
        return;
    }
    // SAFETY: a lookup by name; libstdc++ is loaded when a program has std::cin.
    let f = unsafe { libc::dlsym(libc::RTLD_DEFAULT, clear.as_ptr()) };
    if f.is_null() {
        return;
    }
    const EOFBIT: c_int = 2;
    const FAILBIT: c_int = 4;
    // SAFETY: `stream` is an istream object (the program's copy of std::cin,
    // filled at load): its first word is its vtable pointer, and the Itanium
    // C++ ABI keeps the offset of its virtual base (basic_ios) three words
    // before the address point. `f` is basic_ios::clear, called with `this`
    // first as the ABI passes it.
    unsafe {
        let vtable = *(stream as *const *const isize);
        let base_offset = *vtable.offset(-3);
        let ios = (stream as *mut u8).offset(base_offset).cast::<c_void>();
        let clear: unsafe extern "C" fn(*mut c_void, c_int) = std::mem::transmute(f);
        clear(ios, EOFBIT | FAILBIT);
    }
}
