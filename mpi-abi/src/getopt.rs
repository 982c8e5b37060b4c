//! getopt, getopt_long and getopt_long_only with their position kept per rank.
//!
//! glibc keeps the position inside a cluster of short options ("-ab") and the
//! bookkeeping of argument permutation in hidden statics, and writes `optind` and
//! `optarg` where libc has them, not in the program's copies of them. This is a
//! GNU-compatible parser over the rank's state: it permutes non-options to the
//! end unless the option string starts with '+' (or POSIXLY_CORRECT is set),
//! returns them as argument 1 when it starts with '-', reports a missing
//! argument as ':' when (after that) it starts with ':', and prints glibc's
//! messages.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int};

use crate::libc_state::LibcState;

#[derive(Default)]
pub(crate) struct GetoptState {
    /// The rest of the current cluster of short options.
    nextchar: usize,
    /// Where the skipped non-options begin and end.
    first_nonopt: c_int,
    last_nonopt: c_int,
    initialized: bool,
    ordering: Ordering,
}

#[derive(Default, Clone, Copy, PartialEq)]
enum Ordering {
    RequireOrder,
    #[default]
    Permute,
    ReturnInOrder,
}

/// `struct option` of <getopt.h>.
#[repr(C)]
pub(crate) struct LongOption {
    name: *const c_char,
    has_arg: c_int,
    flag: *mut c_int,
    val: c_int,
}

pub(crate) struct Call<'a> {
    pub(crate) argc: c_int,
    pub(crate) argv: *mut *mut c_char,
    pub(crate) optstring: &'a [u8],
    pub(crate) longopts: *const LongOption,
    pub(crate) longind: *mut c_int,
    pub(crate) long_only: bool,
    pub(crate) posix: bool,
}

impl<'a> Call<'a> {
    /// getopt (`posix`: __posix_getopt, which never permutes).
    pub(crate) fn short(
        argc: c_int,
        argv: *mut *mut c_char,
        optstring: &'a [u8],
        posix: bool,
    ) -> Self {
        Call {
            argc,
            argv,
            optstring,
            longopts: std::ptr::null(),
            longind: std::ptr::null_mut(),
            long_only: false,
            posix,
        }
    }

    /// getopt_long (`long_only`: getopt_long_only).
    pub(crate) fn long(
        argc: c_int,
        argv: *mut *mut c_char,
        optstring: &'a [u8],
        longopts: *const LongOption,
        longind: *mut c_int,
        long_only: bool,
    ) -> Self {
        Call {
            argc,
            argv,
            optstring,
            longopts,
            longind,
            long_only,
            posix: false,
        }
    }
}

/// One step of the parse, on the rank's state.
///
/// # Safety
/// `call` holds what getopt_long's caller passed: `argv` with `argc` strings,
/// `longopts` NULL or terminated by an all-zero entry.
pub(crate) unsafe fn getopt(st: &mut LibcState, call: &Call) -> c_int {
    let v = &st.vars;
    // SAFETY: the variables of the rank's copy (or its fallback storage).
    let (optind, opterr, optopt, optarg) =
        unsafe { (&mut *v.optind, *v.opterr, &mut *v.optopt, &mut *v.optarg) };
    let posixly = call.posix || !st.getenv(b"POSIXLY_CORRECT").is_null();
    let g = &mut st.getopt;
    let mut p = Parser {
        argc: call.argc,
        argv: call.argv,
        optind,
        optarg,
        optopt,
        g,
        print: opterr != 0,
    };
    // SAFETY: by contract.
    unsafe { p.step(call, posixly) }
}

struct Parser<'a> {
    argc: c_int,
    argv: *mut *mut c_char,
    optind: &'a mut c_int,
    optarg: &'a mut *mut c_char,
    optopt: &'a mut c_int,
    g: &'a mut GetoptState,
    print: bool,
}

impl Parser<'_> {
    /// `argv[i]` as bytes.
    unsafe fn arg(&self, i: c_int) -> &'static [u8] {
        // SAFETY: i < argc, argv holds argc strings.
        unsafe { CStr::from_ptr(*self.argv.add(i as usize)) }.to_bytes()
    }

    unsafe fn prog(&self) -> String {
        // SAFETY: argc >= 1.
        String::from_utf8_lossy(unsafe { self.arg(0) }).into_owned()
    }

    unsafe fn nonoption(&self, i: c_int) -> bool {
        // SAFETY: i < argc.
        let a = unsafe { self.arg(i) };
        a.len() < 2 || a[0] != b'-'
    }

    /// Moves the skipped non-options [first_nonopt, last_nonopt) after the
    /// options since [last_nonopt, optind).
    unsafe fn exchange(&mut self) {
        let (first, last, end) = (
            self.g.first_nonopt as usize,
            self.g.last_nonopt as usize,
            *self.optind as usize,
        );
        // SAFETY: first <= last <= end <= argc: argv[first..end] is the program's.
        let args = unsafe { std::slice::from_raw_parts_mut(self.argv.add(first), end - first) };
        args.rotate_left(last - first);
        self.g.first_nonopt += (end - last) as c_int;
        self.g.last_nonopt = *self.optind;
    }

    unsafe fn step(&mut self, call: &Call, posixly: bool) -> c_int {
        if self.argc < 1 {
            return -1;
        }
        *self.optarg = std::ptr::null_mut();
        let mut opts = call.optstring;
        if *self.optind == 0 || !self.g.initialized {
            if *self.optind == 0 {
                *self.optind = 1;
            }
            self.g.first_nonopt = *self.optind;
            self.g.last_nonopt = *self.optind;
            self.g.nextchar = 0;
            self.g.ordering = match opts.first() {
                Some(b'-') => Ordering::ReturnInOrder,
                Some(b'+') => Ordering::RequireOrder,
                _ if posixly => Ordering::RequireOrder,
                _ => Ordering::Permute,
            };
            self.g.initialized = true;
        }
        if matches!(opts.first(), Some(b'-' | b'+')) {
            opts = &opts[1..];
        }
        let colon = opts.first() == Some(&b':');
        if colon {
            self.print = false;
        }
        // SAFETY (all blocks below): indices are checked against argc.
        let at_cluster_end = self.g.nextchar == 0
            || *self.optind >= self.argc
            || unsafe { self.arg(*self.optind) }.len() <= self.g.nextchar;
        if at_cluster_end {
            self.g.nextchar = 0;
            self.g.last_nonopt = self.g.last_nonopt.min(*self.optind);
            self.g.first_nonopt = self.g.first_nonopt.min(*self.optind);
            if self.g.ordering == Ordering::Permute {
                if self.g.first_nonopt != self.g.last_nonopt && self.g.last_nonopt != *self.optind {
                    unsafe { self.exchange() };
                } else if self.g.last_nonopt != *self.optind {
                    self.g.first_nonopt = *self.optind;
                }
                while *self.optind < self.argc && unsafe { self.nonoption(*self.optind) } {
                    *self.optind += 1;
                }
                self.g.last_nonopt = *self.optind;
            }
            if *self.optind != self.argc && unsafe { self.arg(*self.optind) } == b"--" {
                *self.optind += 1;
                if self.g.first_nonopt != self.g.last_nonopt && self.g.last_nonopt != *self.optind {
                    unsafe { self.exchange() };
                } else if self.g.first_nonopt == self.g.last_nonopt {
                    self.g.first_nonopt = *self.optind;
                }
                self.g.last_nonopt = self.argc;
                *self.optind = self.argc;
            }
            if *self.optind == self.argc {
                if self.g.first_nonopt != self.g.last_nonopt {
                    *self.optind = self.g.first_nonopt;
                }
                return -1;
            }
            if unsafe { self.nonoption(*self.optind) } {
                if self.g.ordering == Ordering::RequireOrder {
                    return -1;
                }
                *self.optarg = unsafe { *self.argv.add(*self.optind as usize) };
                *self.optind += 1;
                return 1;
            }
            let a = unsafe { self.arg(*self.optind) };
            if !call.longopts.is_null() {
                if a[1] == b'-' {
                    self.g.nextchar = 2;
                    return unsafe { self.long(call, "--", opts, colon) }.unwrap_or(b'?' as c_int);
                }
                if call.long_only && (a.len() > 2 || !opts.contains(&a[1])) {
                    self.g.nextchar = 1;
                    if let Some(r) = unsafe { self.long(call, "-", opts, colon) } {
                        return r;
                    }
                }
            }
            self.g.nextchar = 1;
        }
        let a = unsafe { self.arg(*self.optind) };
        let c = a[self.g.nextchar];
        self.g.nextchar += 1;
        let rest_at = self.g.nextchar;
        let cluster_done = rest_at >= a.len();
        if cluster_done {
            *self.optind += 1;
        }
        let spec = opts.iter().position(|&o| o == c);
        let Some(i) = spec.filter(|_| c != b':' && c != b';') else {
            if self.print {
                eprintln!(
                    "{}: invalid option -- '{}'",
                    unsafe { self.prog() },
                    c as char
                );
            }
            *self.optopt = c as c_int;
            return b'?' as c_int;
        };
        if opts.get(i + 1) == Some(&b':') {
            let optional = opts.get(i + 2) == Some(&b':');
            if !cluster_done {
                // The rest of this argument: "-x3".
                let cur = unsafe { *self.argv.add(*self.optind as usize) };
                *self.optarg = unsafe { cur.add(rest_at) };
                *self.optind += 1;
            } else if optional {
                *self.optarg = std::ptr::null_mut();
            } else if *self.optind == self.argc {
                if self.print {
                    eprintln!(
                        "{}: option requires an argument -- '{}'",
                        unsafe { self.prog() },
                        c as char
                    );
                }
                *self.optopt = c as c_int;
                self.g.nextchar = 0;
                return if colon { b':' } else { b'?' } as c_int;
            } else {
                *self.optarg = unsafe { *self.argv.add(*self.optind as usize) };
                *self.optind += 1;
            }
            self.g.nextchar = 0;
        }
        c as c_int
    }

    /// A long option at argv[optind][nextchar..]; `None` when getopt_long_only
    /// should try it as short options, or on an error (then '?' was decided).
    unsafe fn long(
        &mut self,
        call: &Call,
        prefix: &str,
        opts: &[u8],
        colon: bool,
    ) -> Option<c_int> {
        let cur = unsafe { *self.argv.add(*self.optind as usize) };
        let a = unsafe { self.arg(*self.optind) };
        let text = &a[self.g.nextchar..];
        let name_len = text.iter().position(|&b| b == b'=').unwrap_or(text.len());
        let name = &text[..name_len];
        let mut found: Option<(usize, &LongOption)> = None;
        let mut ambiguous = false;
        let mut i = 0;
        loop {
            // SAFETY: the table ends with an entry whose name is NULL.
            let o = unsafe { &*call.longopts.add(i) };
            if o.name.is_null() {
                break;
            }
            let oname = unsafe { CStr::from_ptr(o.name) }.to_bytes();
            if oname.starts_with(name) {
                if oname.len() == name.len() {
                    found = Some((i, o));
                    ambiguous = false;
                    break;
                }
                match found {
                    None => found = Some((i, o)),
                    Some((_, f))
                        if f.has_arg != o.has_arg || f.flag != o.flag || f.val != o.val =>
                    {
                        ambiguous = true
                    }
                    _ => {}
                }
            }
            i += 1;
        }
        let show = String::from_utf8_lossy(text).into_owned();
        if ambiguous {
            if self.print {
                eprintln!("{}: option '{prefix}{show}' is ambiguous", unsafe {
                    self.prog()
                });
            }
            self.g.nextchar = 0;
            *self.optind += 1;
            *self.optopt = 0;
            return Some(b'?' as c_int);
        }
        let Some((index, o)) = found else {
            if call.long_only && prefix == "-" && opts.contains(&text[0]) {
                return None;
            }
            if self.print {
                eprintln!("{}: unrecognized option '{prefix}{show}'", unsafe {
                    self.prog()
                });
            }
            self.g.nextchar = 0;
            *self.optind += 1;
            *self.optopt = 0;
            return Some(b'?' as c_int);
        };
        let oname =
            String::from_utf8_lossy(unsafe { CStr::from_ptr(o.name) }.to_bytes()).into_owned();
        *self.optind += 1;
        self.g.nextchar = 0;
        if name_len < text.len() {
            if o.has_arg == 0 {
                if self.print {
                    eprintln!(
                        "{}: option '{prefix}{oname}' doesn't allow an argument",
                        unsafe { self.prog() }
                    );
                }
                *self.optopt = o.val;
                return Some(b'?' as c_int);
            }
            let at = a.len() - text.len() + name_len + 1;
            *self.optarg = unsafe { cur.add(at) };
        } else if o.has_arg == 1 {
            if *self.optind < self.argc {
                *self.optarg = unsafe { *self.argv.add(*self.optind as usize) };
                *self.optind += 1;
            } else {
                if self.print {
                    eprintln!(
                        "{}: option '{prefix}{oname}' requires an argument",
                        unsafe { self.prog() }
                    );
                }
                *self.optopt = o.val;
                return Some(if colon { b':' } else { b'?' } as c_int);
            }
        }
        if !call.longind.is_null() {
            unsafe { *call.longind = index as c_int };
        }
        if !o.flag.is_null() {
            unsafe { *o.flag = o.val };
            return Some(0);
        }
        Some(o.val)
    }
}
