//! Datatypes: the predefined ones (MPICH's handle values) and derived ones built
//! by the program. A datatype is flattened to the list of contiguous byte blocks
//! of one element; messages travel packed, and a non-contiguous buffer is packed
//! before sending and unpacked after receiving.

use std::os::raw::c_int;
use std::sync::Arc;

use mpcrs::raw::Elements;
use mpcrs::{ErrorClass, Kind};

use crate::handles::{rank_state, MPI_Datatype};

/// MPI_LB and MPI_UB: markers of a structure's bounds (MPI-1).
pub(crate) const MPI_LB: MPI_Datatype = 0x4c00_0010;
pub(crate) const MPI_UB: MPI_Datatype = 0x4c00_0011;

/// Size in bytes and element kind of a predefined datatype handle of mpi.h;
/// `None` if the handle is not one.
pub(crate) fn predefined(t: MPI_Datatype) -> Option<Elements> {
    let (size, kind) = match t as u32 {
        0x4c00_0101 | 0x4c00_0118 | 0x4c00_0137 => (1, Kind::I8), // CHAR, SIGNED_CHAR, INT8_T
        0x4c00_0102 | 0x4c00_010d | 0x4c00_010f | 0x4c00_013b | 0x4c00_013f => (1, Kind::U8), // UNSIGNED_CHAR, BYTE, PACKED, UINT8_T, C_BOOL
        0x4c00_0203 | 0x4c00_0238 => (2, Kind::I16), // SHORT, INT16_T
        0x4c00_0204 | 0x4c00_023c => (2, Kind::U16), // UNSIGNED_SHORT, UINT16_T
        0x4c00_0405 | 0x4c00_0439 | 0x4c00_040e => (4, Kind::I32), // INT, INT32_T, WCHAR
        0x4c00_0406 | 0x4c00_043d => (4, Kind::U32), // UNSIGNED, UINT32_T
        0x4c00_0807 | 0x4c00_0809 | 0x4c00_083a => (8, Kind::I64), // LONG, LONG_LONG, INT64_T
        0x4c00_0843..=0x4c00_0845 => (8, Kind::I64), // AINT, OFFSET, COUNT
        0x4c00_0808 | 0x4c00_0819 | 0x4c00_083e => (8, Kind::U64), // UNSIGNED_LONG, UNSIGNED_LONG_LONG, UINT64_T
        0x4c00_040a => (4, Kind::F32),                             // FLOAT
        0x4c00_080b => (8, Kind::F64),                             // DOUBLE
        0x4c00_100c => (16, Kind::Opaque),                         // LONG_DOUBLE
        0x8c00_0000 => (8, Kind::PairF32I32),                      // FLOAT_INT
        0x8c00_0001 => (16, Kind::PairF64I32),                     // DOUBLE_INT
        0x8c00_0002 => (16, Kind::PairI64I32),                     // LONG_INT
        0x8c00_0003 => (8, Kind::PairI16I32),                      // SHORT_INT
        0x4c00_0816 => (8, Kind::PairI32I32),                      // 2INT
        0x8c00_0004 => (32, Kind::Opaque),                         // LONG_DOUBLE_INT
        0x4c00_0010 | 0x4c00_0011 => (0, Kind::U8),                // LB, UB (bound markers)
        0x4c00_0133 => (1, Kind::U8),                              // CXX_BOOL
        // Complex numbers move as bytes; no predefined op reduces them yet.
        0x4c00_0840 | 0x4c00_0834 | 0x4c00_081e | 0x4c00_0828 => (8, Kind::Opaque),
        0x4c00_1041 | 0x4c00_1035 | 0x4c00_1022 | 0x4c00_102a => (16, Kind::Opaque),
        0x4c00_2042 | 0x4c00_2036 | 0x4c00_202c => (32, Kind::Opaque),
        // Fortran types, as the C types of the same size and meaning.
        0x4c00_011a => (1, Kind::I8),  // CHARACTER
        0x4c00_012d => (1, Kind::I8),  // INTEGER1
        0x4c00_022f => (2, Kind::I16), // INTEGER2
        0x4c00_041b | 0x4c00_0430 | 0x4c00_041d => (4, Kind::I32), // INTEGER, INTEGER4, LOGICAL
        0x4c00_0831 => (8, Kind::I64), // INTEGER8
        0x4c00_041c | 0x4c00_0427 => (4, Kind::F32), // REAL, REAL4
        0x4c00_081f | 0x4c00_0829 => (8, Kind::F64), // DOUBLE_PRECISION, REAL8
        0x4c00_102b => (16, Kind::Opaque), // REAL16
        0x4c00_0820 => (8, Kind::PairI32I32), // 2INTEGER
        0x4c00_0821 => (8, Kind::Opaque), // 2REAL
        0x4c00_1023 => (16, Kind::Opaque), // 2DOUBLE_PRECISION
        _ => return None,
    };
    Some(Elements { kind, size })
}

/// The contiguous pieces of one element. Predefined types have one piece and need
/// no allocation: they are looked up on every call.
#[derive(Clone, Debug)]
pub(crate) enum Blocks {
    One([(isize, usize); 1]),
    Many(Arc<[(isize, usize)]>),
}

impl std::ops::Deref for Blocks {
    type Target = [(isize, usize)];
    fn deref(&self) -> &Self::Target {
        match self {
            Blocks::One(b) => b,
            Blocks::Many(b) => b,
        }
    }
}

impl From<Vec<(isize, usize)>> for Blocks {
    fn from(v: Vec<(isize, usize)>) -> Blocks {
        match v.as_slice() {
            [one] => Blocks::One([*one]),
            _ => Blocks::Many(Arc::from(v)),
        }
    }
}

/// Everything the library needs to know of a datatype.
#[derive(Clone, Debug)]
pub(crate) struct TypeInfo {
    /// Bytes of data in one element (its packed size).
    pub(crate) size: usize,
    /// Lower bound and extent: element i starts at i * extent.
    pub(crate) lb: isize,
    pub(crate) extent: isize,
    /// Span of the bytes actually touched (MPI_Type_get_true_extent).
    pub(crate) true_lb: isize,
    pub(crate) true_extent: isize,
    /// Contiguous pieces of one element: (offset from the element's start, bytes),
    /// in type-map order, adjacent pieces merged.
    pub(crate) blocks: Blocks,
    /// The basic element kind when the type is made of one kind only (reductions).
    pub(crate) elem: Option<Elements>,
    pub(crate) committed: bool,
    /// The basic elements of one element in packed order, as runs of
    /// (bytes per basic element, count): MPI_Get_elements, external32.
    pub(crate) basics: Arc<[(usize, usize)]>,
    /// How the program built the type (MPI_Type_get_envelope); `None` for a
    /// predefined type.
    pub(crate) envelope: Option<Arc<Envelope>>,
}

/// A constructor call and its arguments, as MPI_Type_get_contents returns them.
#[derive(Clone, Debug)]
pub(crate) struct Envelope {
    pub(crate) combiner: c_int,
    pub(crate) ints: Vec<c_int>,
    pub(crate) aints: Vec<isize>,
    /// The handles the program passed, with the description of each derived
    /// one (the program may free the handle; get_contents makes a new one).
    pub(crate) types: Vec<(MPI_Datatype, Option<TypeInfo>)>,
}

/// Appends `reps` copies of the runs `of` to `runs`, merging equal sizes.
fn push_basics(runs: &mut Vec<(usize, usize)>, of: &[(usize, usize)], reps: usize) {
    if reps == 0 {
        return;
    }
    if let [(size, n)] = of {
        return push_run(runs, *size, n * reps);
    }
    for _ in 0..reps {
        for &(size, n) in of {
            push_run(runs, size, n);
        }
    }
}

fn push_run(runs: &mut Vec<(usize, usize)>, size: usize, n: usize) {
    if n == 0 || size == 0 {
        return;
    }
    match runs.last_mut() {
        Some(last) if last.0 == size => last.1 += n,
        _ => runs.push((size, n)),
    }
}

impl TypeInfo {
    /// Basic elements in one element.
    pub(crate) fn basic_count(&self) -> usize {
        self.basics.iter().map(|r| r.1).sum()
    }

    /// Basic elements in the first `bytes` packed bytes of elements of this
    /// type; `None` if the bytes end inside a basic element.
    pub(crate) fn elements_in(&self, bytes: usize) -> Option<usize> {
        if self.size == 0 {
            return Some(0);
        }
        let mut count = bytes / self.size * self.basic_count();
        let mut rem = bytes % self.size;
        for &(size, n) in self.basics.iter() {
            if rem == 0 {
                break;
            }
            let whole = (rem / size).min(n);
            count += whole;
            rem -= whole * size;
            if whole < n {
                break;
            }
        }
        (rem == 0).then_some(count)
    }

    /// Packed bytes of `elements` basic elements (MPI_Status_set_elements).
    pub(crate) fn bytes_of_elements(&self, elements: usize) -> usize {
        let per = self.basic_count();
        if per == 0 {
            return 0;
        }
        let mut bytes = elements / per * self.size;
        let mut rem = elements % per;
        for &(size, n) in self.basics.iter() {
            let k = rem.min(n);
            bytes += k * size;
            rem -= k;
        }
        bytes
    }
}

impl TypeInfo {
    pub(crate) fn basic(el: Elements) -> TypeInfo {
        TypeInfo {
            size: el.size,
            lb: 0,
            extent: el.size as isize,
            true_lb: 0,
            true_extent: el.size as isize,
            blocks: Blocks::One([(0, el.size)]),
            elem: Some(el),
            committed: true,
            basics: if el.size == 0 {
                Arc::from([])
            } else {
                Arc::from([(el.size, 1)])
            },
            envelope: None,
        }
    }

    /// True when `count` elements occupy exactly `count * size` contiguous bytes
    /// from the buffer's start: no packing needed.
    pub(crate) fn is_contiguous(&self) -> bool {
        self.blocks.len() <= 1
            && self
                .blocks
                .first()
                .is_none_or(|&(o, l)| o == 0 && l == self.size)
            && self.extent == self.size as isize
    }

    /// The type of `count` consecutive copies of `self` placed at `stride` bytes
    /// apart, each copy given as (displacement, repetitions) — the shape every
    /// constructor reduces to.
    fn replicate(
        &self,
        placements: &[(isize, usize)],
        stride: isize,
    ) -> (Vec<(isize, usize)>, usize) {
        let mut blocks: Vec<(isize, usize)> = Vec::new();
        let mut size = 0;
        for &(disp, reps) in placements {
            for k in 0..reps {
                let base = disp + k as isize * stride;
                for &(o, l) in self.blocks.iter() {
                    push_merged(&mut blocks, base + o, l);
                    size += l;
                }
            }
        }
        (blocks, size)
    }
}

fn push_merged(blocks: &mut Vec<(isize, usize)>, off: isize, len: usize) {
    if len == 0 {
        return;
    }
    if let Some(last) = blocks.last_mut() {
        if last.0 + last.1 as isize == off {
            last.1 += len;
            return;
        }
    }
    blocks.push((off, len));
}

/// Builds a derived type from its pieces; bounds follow MPI's rules for types
/// without explicit markers (lb = lowest displacement, ub = highest end).
fn derived(
    blocks: Vec<(isize, usize)>,
    size: usize,
    elem: Option<Elements>,
    parts: &[(isize, &TypeInfo, usize)],
) -> TypeInfo {
    let mut basics = Vec::new();
    for &(_, t, reps) in parts {
        push_basics(&mut basics, &t.basics, reps);
    }
    // Bounds from each placed copy of the old types' own bounds.
    let mut lb = isize::MAX;
    let mut ub = isize::MIN;
    let mut tlb = isize::MAX;
    let mut tub = isize::MIN;
    for &(disp, t, reps) in parts {
        if reps == 0 {
            continue;
        }
        let first = disp;
        let last = disp + (reps as isize - 1) * t.extent;
        for base in [first, last] {
            lb = lb.min(base + t.lb);
            ub = ub.max(base + t.lb + t.extent);
            tlb = tlb.min(base + t.true_lb);
            tub = tub.max(base + t.true_lb + t.true_extent);
        }
    }
    if lb == isize::MAX {
        (lb, ub, tlb, tub) = (0, 0, 0, 0);
    }
    TypeInfo {
        size,
        lb,
        extent: ub - lb,
        true_lb: tlb,
        true_extent: tub - tlb,
        blocks: Blocks::from(blocks),
        elem,
        committed: false,
        basics: Arc::from(basics),
        envelope: None,
    }
}

/// `count` copies of `old`, contiguous.
pub(crate) fn contiguous(count: usize, old: &TypeInfo) -> TypeInfo {
    hvector(count.min(1), count, old.extent, old)
}

/// `count` blocks of `blocklen` elements, block starts `stride_bytes` apart.
pub(crate) fn hvector(
    count: usize,
    blocklen: usize,
    stride_bytes: isize,
    old: &TypeInfo,
) -> TypeInfo {
    let placements: Vec<(isize, usize)> = (0..count)
        .map(|i| (i as isize * stride_bytes, blocklen))
        .collect();
    hindexed(&placements, old)
}

/// Blocks of (byte displacement, element count) of `old`.
pub(crate) fn hindexed(placements: &[(isize, usize)], old: &TypeInfo) -> TypeInfo {
    let (blocks, size) = old.replicate(placements, old.extent);
    let parts: Vec<(isize, &TypeInfo, usize)> =
        placements.iter().map(|&(d, n)| (d, old, n)).collect();
    derived(blocks, size, old.elem, &parts)
}

/// A structure: (byte displacement, count, type) per member.
pub(crate) fn structure(members: &[(isize, usize, TypeInfo)]) -> TypeInfo {
    let mut blocks = Vec::new();
    let mut size = 0;
    let mut elem: Option<Option<Elements>> = None;
    for (disp, n, t) in members {
        let (b, s) = t.replicate(&[(*disp, *n)], t.extent);
        for (o, l) in b {
            push_merged(&mut blocks, o, l);
        }
        size += s;
        if *n > 0 {
            elem = Some(match elem {
                None => t.elem,
                Some(prev) if same_kind(prev, t.elem) => prev,
                Some(_) => None,
            });
        }
    }
    let parts: Vec<(isize, &TypeInfo, usize)> =
        members.iter().map(|(d, n, t)| (*d, t, *n)).collect();
    let mut t = derived(blocks, size, elem.flatten(), &parts);
    // Structures are padded to the alignment of their widest member, as C does.
    let align = members
        .iter()
        .filter_map(|(_, _, t)| t.elem.map(|e| e.size.min(16)))
        .max()
        .unwrap_or(1) as isize;
    if align > 1 && t.extent % align != 0 {
        t.extent += align - t.extent % align;
    }
    t
}

fn same_kind(a: Option<Elements>, b: Option<Elements>) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => x.kind == y.kind && x.size == y.size,
        _ => false,
    }
}

/// MPI_Type_create_resized.
pub(crate) fn resized(old: &TypeInfo, lb: isize, extent: isize) -> TypeInfo {
    TypeInfo {
        lb,
        extent,
        committed: false,
        envelope: None,
        ..old.clone()
    }
}

/// MPI_Type_create_subarray (order: true for C order).
pub(crate) fn subarray(
    sizes: &[usize],
    subsizes: &[usize],
    starts: &[usize],
    c_order: bool,
    old: &TypeInfo,
) -> TypeInfo {
    let nd = sizes.len();
    // Dimension indices from the fastest-varying one outwards.
    let dims: Vec<usize> = if c_order {
        (0..nd).rev().collect()
    } else {
        (0..nd).collect()
    };
    // Build from the fastest dimension: a contiguous run, then strided copies.
    let mut t = old.clone();
    let mut stride = old.extent; // bytes between consecutive indices of the current dimension
    let mut offset: isize = 0;
    for (level, &d) in dims.iter().enumerate() {
        offset += starts[d] as isize * stride;
        t = if level == 0 {
            contiguous(subsizes[d], &t)
        } else {
            hvector(subsizes[d], 1, stride, &t)
        };
        stride *= sizes[d] as isize;
    }
    // Move the block to its start and give the type the full array's extent.
    let shifted = hindexed(&[(offset, 1)], &t);
    TypeInfo {
        lb: 0,
        extent: stride,
        committed: false,
        ..shifted
    }
}

/// How MPI_Type_create_darray spreads one dimension over the processes.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Distribution {
    /// Blocks of `darg` indices (0: as even as possible).
    Block(usize),
    /// Blocks of `darg` indices dealt round-robin.
    Cyclic(usize),
    None,
}

/// MPI_Type_create_darray: the part of a global array owned by the process at
/// `coords` of a `psizes` grid. Dimensions are given in the array's order;
/// `c_order` says which varies fastest.
pub(crate) fn darray(
    gsizes: &[usize],
    dist: &[Distribution],
    psizes: &[usize],
    coords: &[usize],
    c_order: bool,
    old: &TypeInfo,
) -> TypeInfo {
    let nd = gsizes.len();
    let dims: Vec<usize> = if c_order {
        (0..nd).rev().collect()
    } else {
        (0..nd).collect()
    };
    let mut t = old.clone();
    let mut stride = old.extent;
    for &d in &dims {
        let (g, p, c) = (gsizes[d], psizes[d], coords[d]);
        // Index ranges (start, length) this process owns along dimension d.
        let ranges: Vec<(usize, usize)> = match dist[d] {
            Distribution::None => vec![(0, g)],
            Distribution::Block(b) => {
                let b = if b == 0 { g.div_ceil(p.max(1)) } else { b };
                let start = (c * b).min(g);
                vec![(start, b.min(g - start))]
            }
            Distribution::Cyclic(k) => {
                let k = k.max(1);
                (c * k..g)
                    .step_by(p.max(1) * k)
                    .map(|s| (s, k.min(g - s)))
                    .collect()
            }
        };
        let placements: Vec<(isize, usize)> = ranges
            .iter()
            .map(|&(s, n)| (s as isize * stride, n))
            .collect();
        t = hindexed(&placements, &resized(&t, 0, stride));
        stride *= g as isize;
    }
    TypeInfo {
        lb: 0,
        extent: stride,
        committed: false,
        ..t
    }
}

/// Looks a datatype handle up (predefined or created by the calling rank).
pub(crate) fn info(t: MPI_Datatype) -> Option<TypeInfo> {
    match predefined(t) {
        Some(el) => Some(TypeInfo::basic(el)),
        None => rank_state()?.datatype(t),
    }
}

/// Bytes (packed) of `count` elements of `t`, with its description, or the error.
pub(crate) fn describe(
    count: c_int,
    t: MPI_Datatype,
) -> Result<(usize, TypeInfo), (ErrorClass, String)> {
    let Some(ti) = info(t) else {
        return Err((ErrorClass::Type, format!("invalid datatype handle {t:#x}")));
    };
    if !ti.committed {
        return Err((
            ErrorClass::Type,
            format!("datatype {t:#x} is not committed (MPI_Type_commit)"),
        ));
    }
    if count < 0 {
        return Err((ErrorClass::Count, format!("negative count {count}")));
    }
    Ok((count as usize * ti.size, ti))
}

/// Copies `count` elements of `t` from a user buffer into packed bytes.
///
/// # Safety
/// `buf` holds `count` elements laid out as `t` describes.
pub(crate) unsafe fn pack(buf: *const u8, count: usize, t: &TypeInfo, out: &mut Vec<u8>) {
    out.reserve(count * t.size);
    for i in 0..count {
        let base = i as isize * t.extent;
        for &(o, l) in t.blocks.iter() {
            // SAFETY: the block lies within element i of the caller's buffer.
            out.extend_from_slice(unsafe { std::slice::from_raw_parts(buf.offset(base + o), l) });
        }
    }
}

/// Copies packed bytes into `count` elements of `t` of a user buffer; stops after
/// `data.len()` bytes (a shorter message fills only its first elements).
///
/// # Safety
/// `buf` holds `count` elements laid out as `t` describes.
pub(crate) unsafe fn unpack(data: &[u8], buf: *mut u8, count: usize, t: &TypeInfo) {
    let mut at = 0;
    for i in 0..count {
        let base = i as isize * t.extent;
        for &(o, l) in t.blocks.iter() {
            if at >= data.len() {
                return;
            }
            let n = l.min(data.len() - at);
            // SAFETY: the block lies within element i of the caller's buffer.
            unsafe { std::ptr::copy_nonoverlapping(data[at..].as_ptr(), buf.offset(base + o), n) };
            at += n;
        }
    }
}

/// The bytes behind a (buffer, count, datatype) argument: the user's own memory
/// when the type is contiguous, else a packed copy (send side) or a scratch area
/// unpacked into the user's buffer afterwards (receive side).
pub(crate) struct Staging {
    data: Vec<u8>,
    user: *mut u8,
    count: usize,
    ti: TypeInfo,
    unpack_after: bool,
}

// SAFETY: the user pointer is only dereferenced by the rank that created the
// staging, when its operation completes (MPI's buffer rules keep it valid).
unsafe impl Send for Staging {}

impl Staging {
    /// Bytes to send for `count` elements of `ti` at `buf`: the buffer itself, or
    /// a packed copy held by the returned staging.
    ///
    /// # Safety
    /// `buf` holds `count` elements of `ti`.
    pub(crate) unsafe fn send(
        buf: *const u8,
        count: usize,
        ti: &TypeInfo,
    ) -> (*const u8, Option<Staging>) {
        if ti.is_contiguous() {
            return (buf, None);
        }
        let mut data = Vec::new();
        // SAFETY: forwarded.
        unsafe { pack(buf, count, ti, &mut data) };
        let p = data.as_ptr();
        (
            p,
            Some(Staging {
                data,
                user: buf as *mut u8,
                count,
                ti: ti.clone(),
                unpack_after: false,
            }),
        )
    }

    /// Where to receive `count` elements of `ti` for `buf`; `with_contents` also
    /// packs the buffer's current contents in (in-place operations).
    ///
    /// # Safety
    /// `buf` holds `count` elements of `ti`.
    pub(crate) unsafe fn recv(
        buf: *mut u8,
        count: usize,
        ti: &TypeInfo,
        with_contents: bool,
    ) -> (*mut u8, Option<Staging>) {
        if ti.is_contiguous() {
            return (buf, None);
        }
        let mut data = Vec::new();
        if with_contents {
            // SAFETY: forwarded.
            unsafe { pack(buf, count, ti, &mut data) };
        } else {
            data.resize(count * ti.size, 0);
        }
        let p = data.as_mut_ptr();
        (
            p,
            Some(Staging {
                data,
                user: buf,
                count,
                ti: ti.clone(),
                unpack_after: true,
            }),
        )
    }

    /// Completes a receive staging: unpacks the first `bytes` into the user buffer.
    pub(crate) fn finish(self, bytes: usize) {
        if self.unpack_after {
            // SAFETY: the user buffer was valid for `count` elements when staged and
            // MPI keeps it so until the operation completes, which is now.
            unsafe {
                unpack(
                    &self.data[..bytes.min(self.data.len())],
                    self.user,
                    self.count,
                    &self.ti,
                )
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int() -> TypeInfo {
        TypeInfo::basic(Elements {
            kind: Kind::I32,
            size: 4,
        })
    }

    #[test]
    fn vector_and_subarray_flatten_to_the_right_blocks() {
        let v = hvector(3, 2, 5 * 4, &int());
        assert_eq!(&*v.blocks, &[(0, 8), (20, 8), (40, 8)]);
        assert_eq!((v.size, v.lb, v.extent), (24, 0, 48));
        let c = contiguous(4, &int());
        assert!(c.is_contiguous());
        // 4x5 C array, the 2x3 block starting at (1, 2).
        let s = subarray(&[4, 5], &[2, 3], &[1, 2], true, &int());
        assert_eq!(&*s.blocks, &[(28, 12), (48, 12)]);
        assert_eq!((s.size, s.lb, s.extent), (24, 0, 80));
    }

    #[test]
    fn pack_unpack_round_trip() {
        let v = hvector(2, 1, 8, &int());
        let src: [i32; 4] = [1, 2, 3, 4];
        let mut packed = Vec::new();
        // SAFETY: two elements of `v` span 4 ints... one element spans [0, 12).
        unsafe { pack(src.as_ptr().cast(), 1, &v, &mut packed) };
        assert_eq!(packed.len(), 8);
        let mut dst = [0i32; 4];
        // SAFETY: as above.
        unsafe { unpack(&packed, dst.as_mut_ptr().cast(), 1, &v) };
        assert_eq!(dst, [1, 0, 3, 0]);
    }

    #[test]
    fn structures_pad_to_their_widest_member() {
        let dbl = TypeInfo::basic(Elements {
            kind: Kind::F64,
            size: 8,
        });
        // struct { int a; double b; } : a at 0, b at 8, extent 16
        let s = structure(&[(0, 1, int()), (8, 1, dbl)]);
        assert_eq!((s.size, s.extent), (12, 16));
        assert!(s.elem.is_none());
    }
}
