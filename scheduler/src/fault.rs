//! When a ULT or a worker fails: the one line that names who failed, then the
//! end of the process (its launcher ends the rest of the job).
//!
//! - A fault (SIGSEGV, SIGBUS) in a ULT: the handler, on the worker's alternate
//!   signal stack, says which ULT faulted, of which signal, at which
//!   instruction and in which function where the code namer the runtime
//!   installs knows it ([`set_code_namer`]), or that it hit its stack's guard
//!   page (an overflow), then lets the fault kill the process as it would have.
//!   Faults outside ULTs go to the handler that was there before.
//! - An overwritten stack canary (stacks without a guard, see [`crate::stack`]),
//!   seen when the ULT switches out: reported as an overflow, then the same end.
//! - A panic in a worker outside any ULT's own code, or a resource the
//!   scheduler cannot get (a stack): one line, exit status 1.
//!
//! Who a ULT is comes from the label function the runtime installs
//! ([`set_ult_label`]): "rank 17". Everything written from a signal handler is
//! formatted into a fixed buffer and written with write(2): no allocation, no lock.

use std::fmt::{self, Write as _};
use std::sync::OnceLock;

use crate::task::Task;

/// Writes a ULT's name, given its local word (see [`crate::set_ult_local`]).
pub type UltLabel = fn(usize, &mut dyn fmt::Write) -> fmt::Result;

static LABEL: OnceLock<UltLabel> = OnceLock::new();

/// Writes what the code at an instruction address is (" in f+0x14
/// (./prog)"), or nothing when it does not know. Called in a signal handler:
/// it must not allocate, lock or call anything but async-signal-safe
/// functions.
pub type CodeNamer = fn(usize, &mut dyn fmt::Write) -> fmt::Result;

static CODE_NAMER: OnceLock<CodeNamer> = OnceLock::new();

/// Installs the function that names the code a ULT faulted in; false if one
/// already is.
pub fn set_code_namer(namer: CodeNamer) -> bool {
    CODE_NAMER.set(namer).is_ok()
}

/// The instruction a fault happened at, from the context the kernel saved.
fn faulting_instruction(ctx: *mut libc::c_void) -> Option<usize> {
    if ctx.is_null() {
        return None;
    }
    // SAFETY: for an SA_SIGINFO handler, `ctx` is the ucontext_t the kernel
    // saved for this thread; it stays valid while the handler runs.
    let uc = unsafe { &*(ctx as *const libc::ucontext_t) };
    #[cfg(target_arch = "x86_64")]
    let pc = uc.uc_mcontext.gregs[libc::REG_RIP as usize] as usize;
    #[cfg(target_arch = "aarch64")]
    let pc = uc.uc_mcontext.pc as usize;
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let pc = {
        let _ = uc;
        return None;
    };
    Some(pc)
}

/// Installs the function that names ULTs in failure reports; false if one
/// already is.
pub fn set_ult_label(label: UltLabel) -> bool {
    LABEL.set(label).is_ok()
}

/// A line formatted without allocating; longer text is cut.
struct Line {
    bytes: [u8; 512],
    len: usize,
}

impl Line {
    fn new() -> Line {
        Line {
            bytes: [0; 512],
            len: 0,
        }
    }

    fn write_to_stderr(&mut self) {
        if self.len == self.bytes.len() {
            self.bytes[self.len - 1] = b'\n';
        } else {
            self.bytes[self.len] = b'\n';
            self.len += 1;
        }
        let mut done = 0;
        while done < self.len {
            // SAFETY: writes initialised bytes of our own buffer to fd 2.
            let n = unsafe { libc::write(2, self.bytes[done..].as_ptr().cast(), self.len - done) };
            if n <= 0 {
                break;
            }
            done += n as usize;
        }
    }
}

impl fmt::Write for Line {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        // Keep one byte for the newline.
        let room = self.bytes.len() - 1 - self.len;
        let n = s.len().min(room);
        self.bytes[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

fn write_label(line: &mut Line, word: usize) {
    match LABEL.get() {
        Some(label) => {
            let _ = label(word, line);
        }
        None => {
            let _ = line.write_str("a user-level thread");
        }
    }
}

/// The text a panic was raised with, if it was text.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> Option<String> {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
}

/// Prints `mpcrs: <what>` and exits with status 1 (stdout flushed, as the
/// runtime's own ending of a job).
pub(crate) fn fatal(what: fmt::Arguments<'_>) -> ! {
    let mut line = Line::new();
    let _ = write!(line, "mpcrs: {what}");
    line.write_to_stderr();
    std::process::exit(1)
}

/// The name of the ULT whose local word is `word`, for messages.
pub(crate) fn ult_name(word: usize) -> String {
    let mut line = Line::new();
    write_label(&mut line, word);
    String::from_utf8_lossy(&line.bytes[..line.len]).into_owned()
}

/// Reports that `task` overflowed its unguarded stack (its canary is gone) and
/// ends the process as the fault of a guarded stack would.
pub(crate) fn canary_overwritten(task: &Task) -> ! {
    let mut line = Line::new();
    let _ = line.write_str("mpcrs: ");
    write_label(&mut line, task.local.get());
    let _ = write!(
        line,
        " overflowed its stack ({} bytes; this stack had no guard page, and the \
         canary below it was overwritten): raise --stack-size (MPCRS_STACK_SIZE)",
        task.stack.get().usable
    );
    line.write_to_stderr();
    die_of(libc::SIGSEGV)
}

/// Ends the process with `sig`'s default action.
fn die_of(sig: libc::c_int) -> ! {
    // SAFETY: restoring a default disposition and raising a signal at ourselves.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
    std::process::abort()
}

/// The actions for SIGSEGV and SIGBUS that were installed before ours.
static PREVIOUS: OnceLock<[libc::sigaction; 2]> = OnceLock::new();

/// Installs the fault handler for the process (once).
pub(crate) fn install_handler() {
    PREVIOUS.get_or_init(|| {
        let mut previous: [libc::sigaction; 2] = [
            // SAFETY: sigaction is plain data; all-zero is a valid value.
            unsafe { std::mem::zeroed() },
            // SAFETY: as above.
            unsafe { std::mem::zeroed() },
        ];
        for (i, sig) in [libc::SIGSEGV, libc::SIGBUS].into_iter().enumerate() {
            // SAFETY: installs a handler that only reads its arguments, formats
            // into a stack buffer, calls write(2), and then restores a disposition.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_fault as *const () as usize;
                action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(sig, &action, &mut previous[i]);
            }
        }
        previous
    });
}

/// Gives the calling thread an alternate signal stack if it has none, so the
/// handler runs after an overflow too.
pub(crate) fn ensure_alt_stack() {
    const ALT_STACK: usize = 64 * 1024;
    // SAFETY: queries and sets the calling thread's own signal stack; the
    // mapping is never freed (workers live until the process ends).
    unsafe {
        let mut old: libc::stack_t = std::mem::zeroed();
        if libc::sigaltstack(std::ptr::null(), &mut old) != 0
            || old.ss_flags & libc::SS_DISABLE == 0
        {
            return;
        }
        let p = libc::mmap(
            std::ptr::null_mut(),
            ALT_STACK,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if p == libc::MAP_FAILED {
            return;
        }
        let stack = libc::stack_t {
            ss_sp: p,
            ss_flags: 0,
            ss_size: ALT_STACK,
        };
        libc::sigaltstack(&stack, std::ptr::null_mut());
    }
}

extern "C" fn on_fault(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers.
    let addr = unsafe { (*info).si_addr() } as usize;
    let Some(task) = crate::worker::current_task_ptr() else {
        return pass_on(sig, info, ctx);
    };
    // SAFETY: the task being resumed by this worker is alive for the resume.
    let task = unsafe { &*task };
    let stack = task.stack.get();
    let mut line = Line::new();
    let _ = line.write_str("mpcrs: ");
    write_label(&mut line, task.local.get());
    if stack.contains_guard(addr) {
        let _ = write!(
            line,
            " overflowed its stack ({} bytes): raise --stack-size (MPCRS_STACK_SIZE)",
            stack.usable
        );
    } else {
        let (name, what) = if sig == libc::SIGBUS {
            ("SIGBUS", "bus error")
        } else {
            ("SIGSEGV", "segmentation fault")
        };
        let _ = write!(line, " died of {name} ({what} at address {addr:#x})");
        if let Some(pc) = faulting_instruction(ctx) {
            let _ = write!(line, " at {pc:#x}");
            if let Some(namer) = CODE_NAMER.get() {
                let _ = namer(pc, &mut line);
            }
        }
    }
    line.write_to_stderr();
    // Returning re-runs the faulting instruction, which now kills the process
    // with the signal, as if no handler had been there.
    // SAFETY: restoring the default disposition is async-signal-safe.
    unsafe { libc::signal(sig, libc::SIG_DFL) };
}

/// Hands a fault that is not a ULT's to the handler installed before ours.
fn pass_on(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    let i = usize::from(sig == libc::SIGBUS);
    let Some(previous) = PREVIOUS.get().map(|p| p[i]) else {
        // SAFETY: as in `on_fault`.
        unsafe { libc::signal(sig, libc::SIG_DFL) };
        return;
    };
    let handler = previous.sa_sigaction;
    if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
        // SAFETY: as in `on_fault`.
        unsafe { libc::signal(sig, libc::SIG_DFL) };
    } else if previous.sa_flags & libc::SA_SIGINFO != 0 {
        // SAFETY: the previous handler was installed for this signal with
        // SA_SIGINFO, so it has this signature.
        let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
            unsafe { std::mem::transmute(handler) };
        f(sig, info, ctx);
    } else {
        // SAFETY: installed without SA_SIGINFO: a one-argument handler.
        let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(handler) };
        f(sig);
    }
}
