//! FTI's C API (include/fti.h, FTI 1.6's calls that applications use) over
//! `mpcrs::ft`: each rank's protected pointers, its types, and its checkpoint
//! state, kept apart per rank so ranks that are threads of one process do not
//! share any of it. The head of FTI (a process per node taken from the
//! application) is helper tasks here: FTI_COMM_WORLD is every rank started.
//!
//! Errors print one line naming the call and the rank, and return FTI_NSCS.

#![allow(non_upper_case_globals, non_snake_case)]

use std::collections::{BTreeMap, HashMap};
use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};
use std::path::Path;
use std::sync::Mutex;

use mpcrs::ft::{Ft, Var};

use crate::handles::{comm_for, MPI_Comm, MPI_COMM_WORLD};

pub const FTI_SCES: c_int = 0;
pub const FTI_NSCS: c_int = -1;
pub const FTI_DONE: c_int = 1;

/// The application's communicator: every rank (no rank is a head).
#[no_mangle]
pub static FTI_COMM_WORLD: MPI_Comm = MPI_COMM_WORLD;

/// The basic types, numbered as FTI_Init numbers them, with their sizes.
const BASIC: [(&str, usize); 11] = [
    ("char", 1),
    ("short", 2),
    ("int", 4),
    ("long", 8),
    ("unsigned char", 1),
    ("unsigned short", 2),
    ("unsigned int", 4),
    ("unsigned long", 8),
    ("float", 4),
    ("double", 8),
    ("long double", 16),
];
#[no_mangle]
pub static FTI_CHAR: c_int = 0;
#[no_mangle]
pub static FTI_SHRT: c_int = 1;
#[no_mangle]
pub static FTI_INTG: c_int = 2;
#[no_mangle]
pub static FTI_LONG: c_int = 3;
#[no_mangle]
pub static FTI_UCHR: c_int = 4;
#[no_mangle]
pub static FTI_USHT: c_int = 5;
#[no_mangle]
pub static FTI_UINT: c_int = 6;
#[no_mangle]
pub static FTI_ULNG: c_int = 7;
#[no_mangle]
pub static FTI_SFLT: c_int = 8;
#[no_mangle]
pub static FTI_DBLE: c_int = 9;
#[no_mangle]
pub static FTI_LDBE: c_int = 10;

/// A protected variable: where it is, how many elements of which type.
#[derive(Clone, Copy)]
struct Protected {
    ptr: *mut c_void,
    count: i64,
    tid: c_int,
}

/// One rank's FTI state.
#[derive(Default)]
struct RankFti {
    ft: Option<Ft>,
    protected: BTreeMap<c_int, Protected>,
    /// Types the program made (FTI_InitType, FTI_InitCompositeType): sizes.
    types: HashMap<c_int, usize>,
    next_type: c_int,
    /// Whether FTI_RecoverVar may recover (between Init and Finalize).
    recovering: bool,
    /// Whether FTI_Snapshot recovered already after a restart.
    snapshot_recovered: bool,
}

// SAFETY: the pointers are the program's, used only by the rank that
// protected them (its entry is taken out of the table while it is used).
unsafe impl Send for RankFti {}

/// Each rank's state, by world rank; a call takes its rank's entry out while
/// it runs (a collective checkpoint must not hold the table).
static RANKS: Mutex<Option<HashMap<i32, RankFti>>> = Mutex::new(None);

fn me() -> i32 {
    mpcrs::current_rank().unwrap_or(0)
}

fn fail(call: &str, what: impl std::fmt::Display) -> c_int {
    mpcrs_settings::report!(error, "mpcrs: {call}: rank {}: {what}", me());
    FTI_NSCS
}

/// Forgets rank `rank`'s FTI state: a new run of a job recovered in place,
/// whose rank calls FTI_Init again from its fresh `main`.
pub(crate) fn forget_rank(rank: i32) {
    if let Some(m) = RANKS.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
        m.remove(&rank);
    }
}

/// Runs `f` on the calling rank's state.
fn with_rank<T>(f: impl FnOnce(&mut RankFti) -> T) -> T {
    let me = me();
    let mut st = RANKS
        .lock()
        .unwrap()
        .get_or_insert_with(HashMap::new)
        .remove(&me)
        .unwrap_or_else(|| RankFti {
            next_type: BASIC.len() as c_int,
            ..Default::default()
        });
    let out = f(&mut st);
    RANKS
        .lock()
        .unwrap()
        .get_or_insert_with(HashMap::new)
        .insert(me, st);
    out
}

/// The size of type `tid`: a basic type, or one of `types`.
fn type_size(types: &HashMap<c_int, usize>, tid: c_int) -> Option<usize> {
    match usize::try_from(tid).ok().and_then(|t| BASIC.get(t)) {
        Some((_, s)) => Some(*s),
        None => types.get(&tid).copied(),
    }
}

/// The protected variables as bytes.
fn vars<'a>(
    protected: &'a BTreeMap<c_int, Protected>,
    types: &HashMap<c_int, usize>,
) -> Vec<Var<'a>> {
    protected
        .iter()
        .map(|(&id, p)| {
            let size = type_size(types, p.tid).unwrap_or(1);
            let len = p.count as usize * size;
            // SAFETY: FTI_Protect checked the pointer is not NULL when the
            // count is not 0; the program keeps `count` elements there while
            // the variable is protected (FTI's contract).
            let bytes: &[u8] = if len == 0 {
                &[]
            } else {
                unsafe { std::slice::from_raw_parts(p.ptr.cast::<u8>(), len) }
            };
            Var {
                id,
                elem_size: size as u32,
                bytes,
            }
        })
        .collect()
}

impl RankFti {
    fn type_size(&self, tid: c_int) -> Option<usize> {
        type_size(&self.types, tid)
    }

    /// Copies stored variable `v` into its protected memory.
    fn restore(&self, call: &str, v: &mpcrs::ft::Stored) -> Result<(), c_int> {
        let Some(p) = self.protected.get(&v.id) else {
            return Ok(());
        };
        let size = self.type_size(p.tid).unwrap_or(1);
        let len = p.count as usize * size;
        if len != v.bytes.len() {
            return Err(fail(
                call,
                format!(
                    "variable {}: {len} bytes protected, {} stored (FTI_Realloc gives it the stored size)",
                    v.id,
                    v.bytes.len()
                ),
            ));
        }
        if len > 0 {
            // SAFETY: as in `vars`: `len` bytes of the program's memory at
            // `ptr`, not aliased by `v` (a copy read from the file).
            unsafe { std::ptr::copy_nonoverlapping(v.bytes.as_ptr(), p.ptr.cast::<u8>(), len) };
        }
        Ok(())
    }
}

/// # Safety
/// `config` is NULL or a NUL-terminated path.
#[no_mangle]
pub unsafe extern "C-unwind" fn FTI_Init(config: *const c_char, comm: MPI_Comm) -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    if config.is_null() {
        return fail("FTI_Init", "NULL configuration file");
    }
    // SAFETY: the caller passes a NUL-terminated string.
    let path = unsafe { CStr::from_ptr(config) }
        .to_string_lossy()
        .into_owned();
    let Ok(c) = comm_for("FTI_Init", comm) else {
        return fail("FTI_Init", format!("invalid communicator {comm:#x}"));
    };
    with_rank(|st| {
        if st.ft.is_some() {
            return fail("FTI_Init", "called twice");
        }
        match Ft::init(Path::new(&path), &c) {
            Ok(ft) => {
                st.ft = Some(ft);
                FTI_SCES
            }
            Err(e) => fail("FTI_Init", e),
        }
    })
}

#[no_mangle]
pub extern "C-unwind" fn FTI_Status() -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    with_rank(|st| match &st.ft {
        Some(ft) => ft.status().is_some() as c_int,
        None => 0,
    })
}

/// # Safety
/// `ptr` points to `count` elements of type `tid` while the variable stays
/// protected.
#[no_mangle]
pub unsafe extern "C-unwind" fn FTI_Protect(
    id: c_int,
    ptr: *mut c_void,
    count: i64,
    tid: c_int,
) -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    with_rank(|st| {
        if st.ft.is_none() {
            return fail("FTI_Protect", "called before FTI_Init");
        }
        if count < 0 {
            return fail(
                "FTI_Protect",
                format!("variable {id}: negative count {count}"),
            );
        }
        if ptr.is_null() && count > 0 {
            return fail(
                "FTI_Protect",
                format!("variable {id}: NULL pointer with count {count}"),
            );
        }
        if st.type_size(tid).is_none() {
            return fail("FTI_Protect", format!("variable {id}: unknown type {tid}"));
        }
        st.protected.insert(id, Protected { ptr, count, tid });
        FTI_SCES
    })
}

/// # Safety
/// `type_` points to an `fti_id_t`.
#[no_mangle]
pub unsafe extern "C-unwind" fn FTI_InitType(type_: *mut c_int, size: c_int) -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    if type_.is_null() || size < 0 {
        return fail("FTI_InitType", "NULL type or negative size");
    }
    with_rank(|st| {
        let t = st.next_type;
        st.next_type += 1;
        st.types.insert(t, size as usize);
        // SAFETY: checked not NULL; the caller's fti_id_t.
        unsafe { *type_ = t };
        FTI_SCES
    })
}

/// # Safety
/// `name` is NULL or NUL-terminated; `h5group` is not read.
#[no_mangle]
pub unsafe extern "C-unwind" fn FTI_InitCompositeType(
    _name: *const c_char,
    size: usize,
    _h5group: *mut c_void,
) -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    with_rank(|st| {
        let t = st.next_type;
        st.next_type += 1;
        st.types.insert(t, size);
        t
    })
}

/// Checks a field of composite type `id` at `offset` of `bytes` bytes.
fn field(call: &str, id: c_int, offset: i64, bytes: usize) -> c_int {
    with_rank(|st| match st.types.get(&id) {
        None => fail(call, format!("{id} is not a composite type")),
        Some(&size) if offset < 0 || offset as usize + bytes > size => fail(
            call,
            format!("a field of {bytes} bytes at offset {offset} leaves the type's {size} bytes"),
        ),
        Some(_) => FTI_SCES,
    })
}

/// # Safety
/// `name` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C-unwind" fn FTI_AddScalarField(
    id: c_int,
    _name: *const c_char,
    fid: c_int,
    offset: i64,
) -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    let Some(size) = with_rank(|st| st.type_size(fid)) else {
        return fail("FTI_AddScalarField", format!("unknown field type {fid}"));
    };
    field("FTI_AddScalarField", id, offset, size)
}

/// # Safety
/// `name` is NULL or NUL-terminated; `dim_sizes` holds `ndims` sizes.
#[no_mangle]
pub unsafe extern "C-unwind" fn FTI_AddVectorField(
    id: c_int,
    _name: *const c_char,
    tid: c_int,
    offset: i64,
    ndims: c_int,
    dim_sizes: *const i64,
) -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    let Some(size) = with_rank(|st| st.type_size(tid)) else {
        return fail("FTI_AddVectorField", format!("unknown field type {tid}"));
    };
    if ndims < 0 || (ndims > 0 && dim_sizes.is_null()) {
        return fail("FTI_AddVectorField", "NULL dimensions");
    }
    // SAFETY: `ndims` sizes at `dim_sizes` (checked not NULL).
    let dims = unsafe { std::slice::from_raw_parts(dim_sizes, ndims as usize) };
    let n: i64 = dims.iter().product();
    field("FTI_AddVectorField", id, offset, size * n.max(0) as usize)
}

#[no_mangle]
pub extern "C-unwind" fn FTI_Checkpoint(_id: c_int, level: c_int) -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    with_rank(|st| {
        let vars = vars(&st.protected, &st.types);
        let r = match st.ft.as_mut() {
            None => Err("called before FTI_Init".to_string()),
            Some(ft) => ft.checkpoint(&vars, level).map_err(|e| e.to_string()),
        };
        match r {
            Ok(_) => FTI_DONE,
            Err(e) => fail("FTI_Checkpoint", e),
        }
    })
}

#[no_mangle]
pub extern "C-unwind" fn FTI_Recover() -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    with_rank(|st| {
        let stored = match st.ft.as_ref().map(|ft| ft.stored()) {
            None => return fail("FTI_Recover", "called before FTI_Init"),
            Some(Err(e)) => return fail("FTI_Recover", e),
            Some(Ok(s)) => s,
        };
        for (id, _) in st.protected.iter() {
            if !stored.iter().any(|v| v.id == *id) {
                return fail(
                    "FTI_Recover",
                    format!("variable {id} is not in the checkpoint"),
                );
            }
        }
        for v in stored {
            if let Err(c) = st.restore("FTI_Recover", v) {
                return c;
            }
        }
        FTI_SCES
    })
}

#[no_mangle]
pub extern "C-unwind" fn FTI_RecoverVarInit() -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    with_rank(|st| match st.ft.as_ref().map(|ft| ft.stored()) {
        None => fail("FTI_RecoverVarInit", "called before FTI_Init"),
        Some(Err(e)) => fail("FTI_RecoverVarInit", e),
        Some(Ok(_)) => {
            st.recovering = true;
            FTI_SCES
        }
    })
}

#[no_mangle]
pub extern "C-unwind" fn FTI_RecoverVar(id: c_int) -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    with_rank(|st| {
        if !st.recovering {
            return fail(
                "FTI_RecoverVar",
                "called outside FTI_RecoverVarInit/Finalize",
            );
        }
        let stored = match st.ft.as_ref().map(|ft| ft.stored()) {
            Some(Ok(s)) => s.iter().find(|v| v.id == id),
            Some(Err(e)) => return fail("FTI_RecoverVar", e),
            None => return fail("FTI_RecoverVar", "called before FTI_Init"),
        };
        match stored {
            None => fail(
                "FTI_RecoverVar",
                format!("variable {id} is not in the checkpoint"),
            ),
            Some(_) if !st.protected.contains_key(&id) => {
                fail("FTI_RecoverVar", format!("variable {id} is not protected"))
            }
            Some(v) => match st.restore("FTI_RecoverVar", v) {
                Ok(()) => FTI_SCES,
                Err(c) => c,
            },
        }
    })
}

#[no_mangle]
pub extern "C-unwind" fn FTI_RecoverVarFinalize() -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    with_rank(|st| {
        st.recovering = false;
        FTI_SCES
    })
}

/// The stored size in bytes of variable `id` in the checkpoint to recover
/// (0 when there is none).
#[no_mangle]
pub extern "C-unwind" fn FTI_GetStoredSize(id: c_int) -> i64 {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    with_rank(|st| match st.ft.as_ref().map(|ft| ft.stored()) {
        Some(Ok(s)) => s
            .iter()
            .find(|v| v.id == id)
            .map_or(0, |v| v.bytes.len() as i64),
        _ => 0,
    })
}

/// # Safety
/// `ptr` is the protected pointer of `id`, from malloc (or NULL).
#[no_mangle]
pub unsafe extern "C-unwind" fn FTI_Realloc(id: c_int, ptr: *mut c_void) -> *mut c_void {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    with_rank(|st| {
        let stored = match st.ft.as_ref().map(|ft| ft.stored()) {
            Some(Ok(s)) => s.iter().find(|v| v.id == id).map(|v| v.bytes.len()),
            _ => None,
        };
        let (Some(stored_len), Some(p)) = (stored, st.protected.get(&id).copied()) else {
            fail(
                "FTI_Realloc",
                format!("variable {id} is not protected and stored"),
            );
            return std::ptr::null_mut();
        };
        let size = st.type_size(p.tid).unwrap_or(1).max(1);
        // SAFETY: the program's malloc'd pointer (FTI's contract).
        let new = unsafe { libc::realloc(ptr, stored_len.max(1)) };
        if new.is_null() {
            fail("FTI_Realloc", format!("variable {id}: out of memory"));
            return std::ptr::null_mut();
        }
        st.protected.insert(
            id,
            Protected {
                ptr: new,
                count: (stored_len / size) as i64,
                tid: p.tid,
            },
        );
        new
    })
}

/// Recovers after a restart (on the first call), else checkpoints when an
/// interval of the configuration ends: FTI_DONE then, FTI_SCES otherwise.
#[no_mangle]
pub extern "C-unwind" fn FTI_Snapshot() -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    let restarted = with_rank(|st| {
        st.ft.as_ref().is_some_and(|ft| ft.status().is_some())
            && !std::mem::replace(&mut st.snapshot_recovered, true)
    });
    if restarted {
        return FTI_Recover();
    }
    let due = with_rank(|st| st.ft.as_mut().map(|ft| ft.snapshot_level()));
    match due {
        None => fail("FTI_Snapshot", "called before FTI_Init"),
        Some(Err(e)) => fail("FTI_Snapshot", e),
        Some(Ok(None)) => FTI_SCES,
        Some(Ok(Some(level))) => FTI_Checkpoint(0, level),
    }
}

#[no_mangle]
pub extern "C-unwind" fn FTI_Finalize() -> c_int {
    // What it allocates is the runtime's, not the program's.
    let _heap = crate::rank_heap::in_runtime();
    let ft = with_rank(|st| {
        st.protected.clear();
        st.ft.take()
    });
    match ft {
        None => fail("FTI_Finalize", "called before FTI_Init"),
        Some(ft) => match ft.finalize() {
            Ok(()) => FTI_SCES,
            Err(e) => fail("FTI_Finalize", e),
        },
    }
}
