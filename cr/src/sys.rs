//! Raw Linux system calls (x86-64), for code that must not go through glibc:
//! signal handlers of stopped threads, the dumper's child and the restorer,
//! which replaces glibc's own memory while it runs. Nothing here touches errno,
//! thread-local storage or any static: results are returned as `-errno`.

use core::arch::asm;

/// One system call with up to six arguments; returns the kernel's result
/// (negative errno on failure).
///
/// # Safety
/// The arguments must be valid for the call `nr`.
#[inline(always)]
pub unsafe fn syscall(nr: i64, a1: u64, a2: u64, a3: u64, a4: u64, a5: u64, a6: u64) -> i64 {
    let ret: i64;
    // SAFETY: the caller vouches for the arguments; `syscall` clobbers only
    // rax, rcx and r11, and needs no stack.
    unsafe {
        asm!(
            "syscall",
            inlateout("rax") nr => ret,
            in("rdi") a1,
            in("rsi") a2,
            in("rdx") a3,
            in("r10") a4,
            in("r8") a5,
            in("r9") a6,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    ret
}

macro_rules! call {
    ($nr:expr) => {
        $crate::sys::syscall($nr, 0, 0, 0, 0, 0, 0)
    };
    ($nr:expr, $a:expr) => {
        $crate::sys::syscall($nr, $a as u64, 0, 0, 0, 0, 0)
    };
    ($nr:expr, $a:expr, $b:expr) => {
        $crate::sys::syscall($nr, $a as u64, $b as u64, 0, 0, 0, 0)
    };
    ($nr:expr, $a:expr, $b:expr, $c:expr) => {
        $crate::sys::syscall($nr, $a as u64, $b as u64, $c as u64, 0, 0, 0)
    };
    ($nr:expr, $a:expr, $b:expr, $c:expr, $d:expr) => {
        $crate::sys::syscall($nr, $a as u64, $b as u64, $c as u64, $d as u64, 0, 0)
    };
    ($nr:expr, $a:expr, $b:expr, $c:expr, $d:expr, $e:expr) => {
        $crate::sys::syscall(
            $nr, $a as u64, $b as u64, $c as u64, $d as u64, $e as u64, 0,
        )
    };
    ($nr:expr, $a:expr, $b:expr, $c:expr, $d:expr, $e:expr, $f:expr) => {
        $crate::sys::syscall(
            $nr, $a as u64, $b as u64, $c as u64, $d as u64, $e as u64, $f as u64,
        )
    };
}
pub(crate) use call;

/// arch_prctl codes (asm/prctl.h).
pub const ARCH_SET_FS: u64 = 0x1002;
pub const ARCH_GET_FS: u64 = 0x1003;

pub fn gettid() -> i32 {
    // SAFETY: gettid takes no arguments.
    unsafe { call!(libc::SYS_gettid) as i32 }
}

pub fn getpid() -> i32 {
    // SAFETY: getpid takes no arguments.
    unsafe { call!(libc::SYS_getpid) as i32 }
}

/// The calling thread's FS base (its thread pointer).
pub fn fs_base() -> u64 {
    let mut base = 0u64;
    // SAFETY: ARCH_GET_FS stores one u64 at the address given.
    unsafe { call!(libc::SYS_arch_prctl, ARCH_GET_FS, &mut base as *mut u64) };
    base
}

pub fn futex_wait(word: &core::sync::atomic::AtomicU32, expected: u32) {
    // SAFETY: `word` is a valid aligned u32; no timeout.
    unsafe {
        call!(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            0
        )
    };
}

pub fn futex_wake_all(word: &core::sync::atomic::AtomicU32) {
    // SAFETY: FUTEX_WAKE only identifies the futex by its address.
    unsafe {
        call!(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            i32::MAX
        )
    };
}

/// Writes `bytes` to descriptor `fd`, ignoring failures (diagnostics only).
pub fn write_all(fd: i32, bytes: &[u8]) {
    let mut at = 0;
    while at < bytes.len() {
        // SAFETY: write reads from a valid slice.
        let n = unsafe {
            call!(
                libc::SYS_write,
                fd,
                bytes.as_ptr() as u64 + at as u64,
                bytes.len() - at
            )
        };
        if n == -(libc::EINTR as i64) {
            continue;
        }
        if n <= 0 {
            return;
        }
        at += n as usize;
    }
}

/// Ends the whole process at once, without running anything of the program.
pub fn exit_group(code: i32) -> ! {
    // SAFETY: exit_group does not return.
    unsafe { call!(libc::SYS_exit_group, code) };
    #[allow(clippy::empty_loop)]
    loop {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_calls_agree_with_libc() {
        assert_eq!(getpid() as u32, std::process::id());
        // SAFETY: gettid has no preconditions.
        assert_eq!(gettid(), unsafe { libc::gettid() });
        let local = 0u8;
        // The thread pointer is above nothing in particular, but it is glibc's
        // thread descriptor, which points to itself.
        let tp = fs_base();
        // SAFETY: on x86-64 glibc, the word at the thread pointer is its address.
        assert_eq!(unsafe { *(tp as *const u64) }, tp);
        let _ = &local;
        // SAFETY: a bad descriptor is reported, not acted on.
        assert_eq!(
            unsafe { call!(libc::SYS_close, -1i32) },
            -(libc::EBADF as i64)
        );
    }
}

/// Maps `len` bytes of private anonymous memory with a raw call (no
/// allocation: the dumper's child uses it); `None` if the kernel refuses.
/// The mapping lives as long as the process (never unmapped).
pub fn map_anonymous(len: usize) -> Option<&'static mut [u8]> {
    // SAFETY: an anonymous private mapping nobody else knows.
    let p = unsafe {
        call!(
            libc::SYS_mmap,
            0,
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1i64,
            0
        )
    };
    if p < 0 {
        return None;
    }
    // SAFETY: the mapping just made holds `len` writable bytes, and nothing
    // unmaps it.
    Some(unsafe { std::slice::from_raw_parts_mut(p as *mut u8, len) })
}
