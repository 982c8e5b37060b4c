//! Fortran character arguments: a pointer and a hidden length (gfortran passes
//! it as `size_t` after all other arguments), blank-padded, with no NUL.

use std::ffi::CString;
use std::os::raw::c_char;

/// An input string for C: trailing blanks trimmed, NUL-terminated.
pub(crate) struct InString(CString);

impl InString {
    /// # Safety
    /// `p` points to `len` readable bytes.
    pub(crate) unsafe fn new(p: *const c_char, len: usize) -> InString {
        let bytes: &[u8] = if p.is_null() || len == 0 {
            &[]
        } else {
            // SAFETY: by the caller's contract.
            unsafe { std::slice::from_raw_parts(p.cast(), len) }
        };
        let end = bytes.iter().rposition(|&b| b != b' ').map_or(0, |i| i + 1);
        // A NUL inside ends the string, as C would read it.
        let text: Vec<u8> = bytes[..end]
            .iter()
            .copied()
            .take_while(|&b| b != 0)
            .collect();
        InString(CString::new(text).expect("NULs removed"))
    }

    /// An info key or value: leading blanks are dropped too.
    ///
    /// # Safety
    /// As `new`.
    pub(crate) unsafe fn info(p: *const c_char, len: usize) -> InString {
        // SAFETY: by the caller's contract.
        let s = unsafe { InString::new(p, len) };
        let bytes = s.0.as_bytes();
        let start = bytes.iter().position(|&b| b != b' ').unwrap_or(bytes.len());
        InString(CString::new(&bytes[start..]).expect("no NUL inside"))
    }

    pub(crate) fn as_ptr(&self) -> *const c_char {
        self.0.as_ptr()
    }
}

/// Room for a C function to write a string into, copied back blank-padded
/// into the Fortran variable, only if the function wrote one (MPI_Info_get
/// leaves its value alone when the key is absent).
pub(crate) struct OutString {
    target: *mut c_char,
    len: usize,
    room: Vec<u8>,
}

/// Never a string's first byte from C (it writes UTF-8 or ASCII): tells
/// whether the function wrote anything.
const UNTOUCHED: u8 = 0xff;

/// The C functions write at most MPI_MAX_LIBRARY_VERSION_STRING (8192)
/// characters or the length they are given; the room holds the larger.
const LEAST_ROOM: usize = 8192 + 1;

impl OutString {
    pub(crate) fn new(target: *mut c_char, len: usize) -> OutString {
        let mut room = vec![0u8; LEAST_ROOM.max(len + 1)];
        room[0] = UNTOUCHED;
        OutString { target, len, room }
    }

    pub(crate) fn as_mut_ptr(&mut self) -> *mut c_char {
        self.room.as_mut_ptr().cast()
    }

    /// # Safety
    /// The target holds `len` writable bytes.
    pub(crate) unsafe fn write_back(self) {
        if self.target.is_null() || self.room[0] == UNTOUCHED {
            return;
        }
        let n = self
            .room
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(self.room.len());
        let n = n.min(self.len);
        // SAFETY: by the caller's contract; `room` holds at least `n` bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(self.room.as_ptr(), self.target.cast::<u8>(), n);
            std::ptr::write_bytes(self.target.cast::<u8>().add(n), b' ', self.len - n);
        }
    }
}
