//! mpif.h's special addresses: MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE,
//! MPI_STATUSES_IGNORE, MPI_ERRCODES_IGNORE, MPI_UNWEIGHTED and
//! MPI_WEIGHTS_EMPTY are variables of one common block, `/MPCRS_FCONST/`, so a
//! Fortran program passes their addresses, and a binding recognises them by
//! address and hands C's values on.
//!
//! The block lives in the program (a common block is allocated where it is
//! used), so in thread mode each rank's copy has its own: the loader records
//! the copy's address for its rank (dlsym on the copy). A program started
//! directly has one, found in the global scope. libmpi defines the symbol too:
//! that makes the linker export the program's block (a definition in a shared
//! library is what makes an executable's common symbol dynamic), and it is what
//! the search finds in a program that never includes mpif.h.

use std::os::raw::{c_int, c_void};
use std::sync::OnceLock;

use crate::ctypes::{MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY};

/// The symbol gfortran gives `COMMON /MPCRS_FCONST/`.
pub(crate) const SYMBOL: &std::ffi::CStr = c"mpcrs_fconst_";

/// Integers in the block, in mpif.h's order (build/fortran.rs writes it).
const WORDS: usize = 15;
const BOTTOM: usize = 0;
const IN_PLACE: usize = 1;
const STATUS_IGNORE: usize = 2;
const STATUSES_IGNORE: usize = 7;
const ERRCODES_IGNORE: usize = 12;
const UNWEIGHTED: usize = 13;
const WEIGHTS_EMPTY: usize = 14;

/// The library's own block (see the module's comment); never read.
#[no_mangle]
pub static mut mpcrs_fconst_: [c_int; WORDS] = [0; WORDS];

/// The block of a program started directly, found once.
static DIRECT: OnceLock<usize> = OnceLock::new();

/// The calling rank's block of special addresses.
pub(crate) struct Specials {
    base: usize,
}

impl Specials {
    pub(crate) fn of_rank() -> Specials {
        let base = crate::handles::fortran_addresses().unwrap_or_else(|| {
            *DIRECT.get_or_init(|| {
                // SAFETY: a NUL-terminated name; RTLD_DEFAULT searches the
                // global scope, the executable first.
                unsafe { libc::dlsym(libc::RTLD_DEFAULT, SYMBOL.as_ptr()) as usize }
            })
        });
        Specials { base }
    }

    fn is(&self, p: *const c_void, word: usize) -> bool {
        self.base != 0 && p as usize == self.base + word * std::mem::size_of::<c_int>()
    }

    /// A choice buffer: MPI_BOTTOM and MPI_IN_PLACE become C's.
    pub(crate) fn buffer(&self, p: *mut c_void) -> *mut c_void {
        if self.is(p, BOTTOM) {
            std::ptr::null_mut()
        } else if self.is(p, IN_PLACE) {
            // C's MPI_IN_PLACE: (void *)-1.
            std::ptr::without_provenance_mut(usize::MAX)
        } else {
            p
        }
    }

    /// A status or an array of them: the IGNOREs become C's.
    pub(crate) fn status(&self, p: *mut c_void) -> *mut c_void {
        if self.is(p, STATUS_IGNORE) || self.is(p, STATUSES_IGNORE) {
            // C's MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE: (MPI_Status *)1.
            std::ptr::without_provenance_mut(1)
        } else {
            p
        }
    }

    /// An integer array: MPI_ERRCODES_IGNORE, MPI_UNWEIGHTED and
    /// MPI_WEIGHTS_EMPTY become C's.
    pub(crate) fn ints(&self, p: *mut c_void) -> *mut c_void {
        if self.is(p, ERRCODES_IGNORE) {
            std::ptr::null_mut()
        } else if self.is(p, UNWEIGHTED) {
            MPI_UNWEIGHTED.as_ptr() as *mut c_void
        } else if self.is(p, WEIGHTS_EMPTY) {
            MPI_WEIGHTS_EMPTY.as_ptr() as *mut c_void
        } else {
            p
        }
    }
}

/// Finds the block in a rank's copy of the program (by the loader, after dlopen).
pub(crate) fn note_copy(rank: usize, handle: *mut c_void) {
    // SAFETY: a handle dlopen returned, and a NUL-terminated name.
    let at = unsafe { libc::dlsym(handle, SYMBOL.as_ptr()) } as usize;
    if at != 0 {
        crate::handles::note_fortran_addresses(rank, at);
    }
}
