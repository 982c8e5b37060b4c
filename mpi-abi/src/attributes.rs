//! Attribute caching (MPI-3.1 section 6.7) for communicators and datatypes:
//! keyvals, the values set on each object in the order they were set, and
//! the copy and delete callbacks run on dup, free, replacement and deletion.
//!
//! A keyval freed while attributes still use it lives on until the last of
//! them is deleted (MPI-3.1 section 6.7.2): their callbacks still run. The
//! callbacks are the program's and may call MPI, so they run with no lock of
//! the rank's tables held. A callback's error code fails the call that ran it,
//! and the attribute it was for stays as it was.
//!
//! Values keep the language that set them (MPI-4.0 section 19.3.7): C's is a
//! pointer, Fortran's an address-sized integer. C reads a Fortran value
//! through a pointer to it, Fortran reads a C value as the pointer's bits, and
//! a keyval's callbacks get values in their own language.

use std::collections::HashMap;
use std::os::raw::{c_int, c_void};

use mpcrs::ErrorClass;

use crate::comm::{CopyAttrFn, DeleteAttrFn};
use crate::handles::*;

/// What a keyval's attributes are attached to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    Comm,
    Type,
    Win,
}

impl Kind {
    fn noun(self) -> &'static str {
        match self {
            Kind::Comm => "communicator",
            Kind::Type => "datatype",
            Kind::Win => "window",
        }
    }
}

/// The language of a keyval's callbacks or of the call that set a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Language {
    C,
    Fortran,
}

/// An attribute's value, as the language that set it gave it.
#[derive(Clone, Copy, Debug)]
enum Value {
    /// C's pointer.
    C(*mut c_void),
    /// Fortran's integer, in a cell of its own, so that C can be given its
    /// address; freed with the value.
    Fortran(*mut i64),
}

impl Value {
    fn new(v: *mut c_void, from: Language) -> Value {
        match from {
            Language::C => Value::C(v),
            Language::Fortran => Value::Fortran(Box::into_raw(Box::new(v as i64))),
        }
    }

    /// The value as `to` sees it, carried in a pointer: C's pointer, or
    /// Fortran's integer in a pointer's bits.
    fn seen_by(self, to: Language) -> *mut c_void {
        match (self, to) {
            (Value::C(p), _) => p,
            (Value::Fortran(cell), Language::C) => cell.cast(),
            // SAFETY: the cell lives as long as the value.
            (Value::Fortran(cell), Language::Fortran) => unsafe { *cell as *mut c_void },
        }
    }

    fn free(self) {
        if let Value::Fortran(cell) = self {
            // SAFETY: made by Box::into_raw in `new`, freed once, with the value.
            drop(unsafe { Box::from_raw(cell) });
        }
    }
}

/// A user keyval.
#[derive(Clone, Copy)]
struct Keyval {
    copy: Option<CopyAttrFn>,
    delete: Option<DeleteAttrFn>,
    extra: *mut c_void,
    /// What the callbacks take values as.
    language: Language,
    kind: Kind,
    /// Freed by the program; kept while `uses` attributes need its callbacks.
    freed: bool,
    uses: usize,
}

/// Handles of user keyvals: MPICH's kind bits for keyvals, then an index.
const KEYVAL_USER: c_int = 0xa400_0000u32 as c_int;
pub(crate) const KEYVAL_INVALID: c_int = 0x2400_0000;

/// Why an attribute call failed: the error class and what to say.
pub(crate) type Failure = (ErrorClass, String);

/// One rank's keyvals and attribute values.
#[derive(Default)]
pub(crate) struct Store {
    keyvals: Vec<Option<Keyval>>,
    /// (kind, object handle) -> (keyval, value), oldest first.
    values: HashMap<(Kind, c_int), Vec<(c_int, Value)>>,
    /// The language of the set call under way (see `set_from_fortran`).
    setting_from: Option<Language>,
}

impl Store {
    fn keyval(&self, kind: Kind, k: c_int) -> Result<Keyval, Failure> {
        let found = (k & !INDEX_MASK == KEYVAL_USER)
            .then(|| {
                self.keyvals
                    .get((k & INDEX_MASK) as usize)
                    .copied()
                    .flatten()
            })
            .flatten();
        match found {
            Some(kv) if kv.kind == kind => Ok(kv),
            Some(kv) => Err((
                ErrorClass::Keyval,
                format!(
                    "keyval {k:#x} is a {} keyval, not a {} one",
                    kv.kind.noun(),
                    kind.noun()
                ),
            )),
            None => Err((ErrorClass::Keyval, format!("invalid keyval {k:#x}"))),
        }
    }

    /// Whether `k` is a live keyval of any kind.
    fn keyval_any(&self, k: c_int) -> bool {
        k & !INDEX_MASK == KEYVAL_USER
            && matches!(self.keyvals.get((k & INDEX_MASK) as usize), Some(Some(_)))
    }

    fn slot(&mut self, k: c_int) -> &mut Keyval {
        self.keyvals[(k & INDEX_MASK) as usize]
            .as_mut()
            .expect("a live keyval")
    }

    /// One attribute fewer uses keyval `k`; a freed keyval goes with its last.
    fn release(&mut self, k: c_int) {
        let kv = self.slot(k);
        kv.uses -= 1;
        if kv.freed && kv.uses == 0 {
            self.keyvals[(k & INDEX_MASK) as usize] = None;
        }
    }

    fn value(&self, kind: Kind, obj: c_int, k: c_int) -> Option<Value> {
        let list = self.values.get(&(kind, obj))?;
        list.iter().find(|(key, _)| *key == k).map(|&(_, v)| v)
    }

    /// Stores `v` under `k` on `obj`: replaces the value in place (keeping
    /// its position) or appends it.
    fn put(&mut self, kind: Kind, obj: c_int, k: c_int, v: Value) {
        let list = self.values.entry((kind, obj)).or_default();
        match list.iter_mut().find(|(key, _)| *key == k) {
            Some(slot) => std::mem::replace(&mut slot.1, v).free(),
            None => {
                list.push((k, v));
                self.slot(k).uses += 1;
            }
        }
    }

    fn remove(&mut self, kind: Kind, obj: c_int, k: c_int) {
        if let Some(list) = self.values.get_mut(&(kind, obj)) {
            if let Some(i) = list.iter().position(|(key, _)| *key == k) {
                list.remove(i).1.free();
                if list.is_empty() {
                    self.values.remove(&(kind, obj));
                }
                self.release(k);
            }
        }
    }
}

fn store() -> mpcrs_scheduler::sync::MutexGuard<'static, RankState> {
    rank_state().expect("inside a rank")
}

/// The class a callback's error code belongs to (MPI_ERR_OTHER if none).
fn class_of_code(rc: c_int) -> ErrorClass {
    ErrorClass::from_code(rc)
        .or_else(|| crate::errors::user_error(rc).and_then(|(c, _)| ErrorClass::from_code(c)))
        .unwrap_or(ErrorClass::Other)
}

/// Runs `k`'s delete callback, if it has one, on `v`.
fn run_delete(kv: &Keyval, obj: c_int, k: c_int, v: Value) -> Result<(), Failure> {
    let Some(f) = kv.delete else { return Ok(()) };
    // SAFETY: the program's own callback, called as MPI specifies, with the
    // value and extra state the program gave.
    let rc = unsafe { f(obj, k, v.seen_by(kv.language), kv.extra) };
    if rc == MPI_SUCCESS {
        Ok(())
    } else {
        Err((
            class_of_code(rc),
            format!("the delete callback of keyval {k:#x} returned error code {rc}"),
        ))
    }
}

/// A new keyval for attributes of `kind`.
pub(crate) fn create_keyval(
    kind: Kind,
    copy: Option<CopyAttrFn>,
    delete: Option<DeleteAttrFn>,
    extra: *mut c_void,
) -> c_int {
    let mut st = store();
    let kv = Keyval {
        copy,
        delete,
        extra,
        language: Language::C,
        kind,
        freed: false,
        uses: 0,
    };
    let s = &mut st.attributes;
    let i = match s.keyvals.iter().position(|k| k.is_none()) {
        Some(i) => {
            s.keyvals[i] = Some(kv);
            i
        }
        None => {
            s.keyvals.push(Some(kv));
            s.keyvals.len() - 1
        }
    };
    KEYVAL_USER | i as c_int
}

/// Frees keyval `k` (freeing it again while its attributes keep it is a no-op).
pub(crate) fn free_keyval(kind: Kind, k: c_int) -> Result<(), Failure> {
    let mut st = store();
    let s = &mut st.attributes;
    s.keyval(kind, k)?;
    let kv = s.slot(k);
    kv.freed = true;
    if kv.uses == 0 {
        s.keyvals[(k & INDEX_MASK) as usize] = None;
    }
    Ok(())
}

/// Makes keyval `k`'s callbacks take values as Fortran procedures do (for
/// keyvals made by the Fortran bindings).
pub(crate) fn speaks_fortran(k: c_int) {
    let mut st = store();
    if st.attributes.keyval_any(k) {
        st.attributes.slot(k).language = Language::Fortran;
    }
}

/// Runs `set_call` (a C set-attribute entry point) as a Fortran one: the
/// value it stores is Fortran's integer.
pub(crate) fn set_from_fortran<R>(set_call: impl FnOnce() -> R) -> R {
    store().attributes.setting_from = Some(Language::Fortran);
    let r = set_call();
    store().attributes.setting_from = None;
    r
}

/// Sets attribute `k` of `obj` to `v`; an old value is deleted first, and
/// stays if its delete callback fails.
pub(crate) fn set(kind: Kind, obj: c_int, k: c_int, v: *mut c_void) -> Result<(), Failure> {
    let (kv, old, from) = {
        let mut st = store();
        // Taken now: callbacks below may set attributes from C.
        let from = st.attributes.setting_from.take().unwrap_or(Language::C);
        let kv = st.attributes.keyval(kind, k)?;
        (kv, st.attributes.value(kind, obj, k), from)
    };
    if let Some(old) = old {
        run_delete(&kv, obj, k, old)?;
    }
    store().attributes.put(kind, obj, k, Value::new(v, from));
    Ok(())
}

/// The value of attribute `k` of `obj` as C sees it, if set.
pub(crate) fn get(kind: Kind, obj: c_int, k: c_int) -> Result<Option<*mut c_void>, Failure> {
    let st = store();
    st.attributes.keyval(kind, k)?;
    Ok(st
        .attributes
        .value(kind, obj, k)
        .map(|v| v.seen_by(Language::C)))
}

/// The value of attribute `k` of `obj` as Fortran sees it, if set (`None`
/// also for an invalid keyval: the C call made first reported that).
pub(crate) fn fortran_value(kind: Kind, obj: c_int, k: c_int) -> Option<i64> {
    let st = store();
    st.attributes.keyval(kind, k).ok()?;
    let v = st.attributes.value(kind, obj, k)?;
    Some(v.seen_by(Language::Fortran) as i64)
}

/// Deletes attribute `k` of `obj` through its delete callback.
pub(crate) fn delete(kind: Kind, obj: c_int, k: c_int) -> Result<(), Failure> {
    let (kv, v) = {
        let st = store();
        let kv = st.attributes.keyval(kind, k)?;
        match st.attributes.value(kind, obj, k) {
            Some(v) => (kv, v),
            None => {
                return Err((
                    ErrorClass::Keyval,
                    format!("no attribute for keyval {k:#x} on this {}", kind.noun()),
                ))
            }
        }
    };
    run_delete(&kv, obj, k, v)?;
    store().attributes.remove(kind, obj, k);
    Ok(())
}

/// Deletes every attribute of `obj`, the last set first (on free, and for
/// MPI_COMM_SELF and MPI_COMM_WORLD at MPI_Finalize, MPI-3.1 section 8.7.1).
/// Stops at the first callback that fails.
pub(crate) fn delete_all(kind: Kind, obj: c_int) -> Result<(), Failure> {
    loop {
        let last = {
            let st = store();
            let s = &st.attributes;
            s.values
                .get(&(kind, obj))
                .and_then(|l| l.last().copied())
                .map(|(k, v)| (k, v, s.keyval(kind, k).expect("kept while used")))
        };
        let Some((k, v, kv)) = last else {
            return Ok(());
        };
        run_delete(&kv, obj, k, v)?;
        store().attributes.remove(kind, obj, k);
    }
}

/// Gives `to`, a new duplicate of `from`, the attributes whose copy callbacks
/// ask for it. If a callback fails, the attributes copied so far are deleted
/// again and the failure returned.
pub(crate) fn copy_all(kind: Kind, from: c_int, to: c_int) -> Result<(), Failure> {
    let entries: Vec<(c_int, Value, Keyval)> = {
        let st = store();
        let s = &st.attributes;
        s.values
            .get(&(kind, from))
            .map(|l| {
                l.iter()
                    .map(|&(k, v)| (k, v, s.keyval(kind, k).expect("kept while used")))
                    .collect()
            })
            .unwrap_or_default()
    };
    for (k, v, kv) in entries {
        let Some(f) = kv.copy else { continue };
        let mut out: *mut c_void = std::ptr::null_mut();
        let mut flag: c_int = 0;
        // SAFETY: the program's own callback, called as MPI specifies:
        // `out` receives the new value and `flag` whether to keep it.
        let rc = unsafe {
            f(
                from,
                k,
                kv.extra,
                v.seen_by(kv.language),
                (&mut out as *mut *mut c_void).cast(),
                &mut flag,
            )
        };
        if rc != MPI_SUCCESS {
            // The duplicate is not made: what it got so far goes again.
            let _ = delete_all(kind, to);
            return Err((
                class_of_code(rc),
                format!("the copy callback of keyval {k:#x} returned error code {rc}"),
            ));
        }
        if flag != 0 {
            store()
                .attributes
                .put(kind, to, k, Value::new(out, kv.language));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(kind: Kind) -> Keyval {
        Keyval {
            copy: None,
            delete: None,
            extra: std::ptr::null_mut(),
            language: Language::C,
            kind,
            freed: false,
            uses: 0,
        }
    }

    #[test]
    fn values_keep_their_order_and_freed_keyvals_live_while_used() {
        let mut s = Store::default();
        s.keyvals = vec![Some(kv(Kind::Comm)), Some(kv(Kind::Comm))];
        let (a, b) = (KEYVAL_USER, KEYVAL_USER | 1);
        s.put(Kind::Comm, 7, b, Value::C(2 as *mut c_void));
        s.put(
            Kind::Comm,
            7,
            a,
            Value::new(1 as *mut c_void, Language::Fortran),
        );
        s.put(Kind::Comm, 7, b, Value::C(3 as *mut c_void));
        let order: Vec<c_int> = s.values[&(Kind::Comm, 7)].iter().map(|e| e.0).collect();
        assert_eq!(order, vec![b, a]);
        let fortran = s.value(Kind::Comm, 7, a).unwrap();
        assert_eq!(fortran.seen_by(Language::Fortran) as usize, 1);
        // C reads a Fortran value through a pointer to it.
        // SAFETY: the cell of a live Fortran value.
        assert_eq!(unsafe { *(fortran.seen_by(Language::C) as *const i64) }, 1);
        assert_eq!(
            s.value(Kind::Comm, 7, b)
                .unwrap()
                .seen_by(Language::Fortran) as usize,
            3
        );
        s.slot(a).freed = true;
        assert!(s.keyval(Kind::Comm, a).is_ok());
        s.remove(Kind::Comm, 7, a);
        assert!(s.keyval(Kind::Comm, a).is_err());
        assert!(s.keyval(Kind::Type, b).is_err());
    }
}
