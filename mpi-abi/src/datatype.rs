//! Datatypes: the predefined ones (MPICH's handle values) and derived ones built
//! by the program. A datatype is flattened to the list of contiguous byte blocks
//! of one element; messages travel packed, and a non-contiguous buffer is packed
//! before sending and unpacked after receiving.

use std::os::raw::c_int;
use std::sync::Arc;

use mpcrs::raw::Elements;
use mpcrs::{ErrorClass, Kind, Num};

use crate::handles::{rank_state, MPI_Datatype};

/// MPI_LB and MPI_UB: markers of a structure's bounds (MPI-1).
pub(crate) const MPI_LB: MPI_Datatype = 0x4c00_0010;
pub(crate) const MPI_UB: MPI_Datatype = 0x4c00_0011;

/// A (value, index) pair as the library holds it in flight: packed.
const fn pair(value: Num, index: Num) -> Kind {
    Kind::Pair {
        value,
        index,
        packed: true,
    }
}

/// The predefined datatypes of mpi.h (MPICH's handle values), sorted by handle:
/// name (MPI_Type_get_name), element kind and size (MPI_Type_size).
static PREDEFINED: &[(u32, &str, Kind, usize)] = PREDEFINED_TABLE;
const PREDEFINED_TABLE: &[(u32, &str, Kind, usize)] = &[
    (0x4c00_0010, "MPI_LB", Kind::Opaque, 0),
    (0x4c00_0011, "MPI_UB", Kind::Opaque, 0),
    (0x4c00_0101, "MPI_CHAR", Kind::I8, 1),
    (0x4c00_0102, "MPI_UNSIGNED_CHAR", Kind::U8, 1),
    (0x4c00_010d, "MPI_BYTE", Kind::Byte, 1),
    (0x4c00_010f, "MPI_PACKED", Kind::Opaque, 1),
    (0x4c00_0118, "MPI_SIGNED_CHAR", Kind::I8, 1),
    (0x4c00_011a, "MPI_CHARACTER", Kind::I8, 1),
    (0x4c00_012d, "MPI_INTEGER1", Kind::I8, 1),
    (0x4c00_0133, "MPI_CXX_BOOL", Kind::Bool, 1),
    (0x4c00_0137, "MPI_INT8_T", Kind::I8, 1),
    (0x4c00_013b, "MPI_UINT8_T", Kind::U8, 1),
    (0x4c00_013f, "MPI_C_BOOL", Kind::Bool, 1),
    (0x4c00_0203, "MPI_SHORT", Kind::I16, 2),
    (0x4c00_0204, "MPI_UNSIGNED_SHORT", Kind::U16, 2),
    (0x4c00_022f, "MPI_INTEGER2", Kind::I16, 2),
    (0x4c00_0238, "MPI_INT16_T", Kind::I16, 2),
    (0x4c00_023c, "MPI_UINT16_T", Kind::U16, 2),
    (0x4c00_0405, "MPI_INT", Kind::I32, 4),
    (0x4c00_0406, "MPI_UNSIGNED", Kind::U32, 4),
    (0x4c00_040a, "MPI_FLOAT", Kind::F32, 4),
    // wchar_t is a character type: MPI defines no operation on it.
    (0x4c00_040e, "MPI_WCHAR", Kind::Opaque, 4),
    (0x4c00_041b, "MPI_INTEGER", Kind::I32, 4),
    (0x4c00_041c, "MPI_REAL", Kind::F32, 4),
    (0x4c00_041d, "MPI_LOGICAL", Kind::Logical, 4),
    (0x4c00_0427, "MPI_REAL4", Kind::F32, 4),
    (0x4c00_0430, "MPI_INTEGER4", Kind::I32, 4),
    (0x4c00_0439, "MPI_INT32_T", Kind::I32, 4),
    (0x4c00_043d, "MPI_UINT32_T", Kind::U32, 4),
    (0x4c00_0807, "MPI_LONG", Kind::I64, 8),
    (0x4c00_0808, "MPI_UNSIGNED_LONG", Kind::U64, 8),
    (0x4c00_0809, "MPI_LONG_LONG_INT", Kind::I64, 8),
    (0x4c00_080b, "MPI_DOUBLE", Kind::F64, 8),
    (0x4c00_0816, "MPI_2INT", pair(Num::I32, Num::I32), 8),
    (0x4c00_0819, "MPI_UNSIGNED_LONG_LONG", Kind::U64, 8),
    (0x4c00_081e, "MPI_COMPLEX", Kind::C32, 8),
    (0x4c00_081f, "MPI_DOUBLE_PRECISION", Kind::F64, 8),
    (0x4c00_0820, "MPI_2INTEGER", pair(Num::I32, Num::I32), 8),
    (0x4c00_0821, "MPI_2REAL", pair(Num::F32, Num::F32), 8),
    (0x4c00_0828, "MPI_COMPLEX8", Kind::C32, 8),
    (0x4c00_0829, "MPI_REAL8", Kind::F64, 8),
    (0x4c00_0831, "MPI_INTEGER8", Kind::I64, 8),
    (0x4c00_0834, "MPI_CXX_FLOAT_COMPLEX", Kind::C32, 8),
    (0x4c00_083a, "MPI_INT64_T", Kind::I64, 8),
    (0x4c00_083e, "MPI_UINT64_T", Kind::U64, 8),
    // MPI_C_COMPLEX and MPI_C_FLOAT_COMPLEX are one handle.
    (0x4c00_0840, "MPI_C_COMPLEX", Kind::C32, 8),
    (0x4c00_0843, "MPI_AINT", Kind::I64, 8),
    (0x4c00_0844, "MPI_OFFSET", Kind::I64, 8),
    (0x4c00_0845, "MPI_COUNT", Kind::I64, 8),
    (0x4c00_100c, "MPI_LONG_DOUBLE", Kind::F80, 16),
    (0x4c00_1022, "MPI_DOUBLE_COMPLEX", Kind::C64, 16),
    (
        0x4c00_1023,
        "MPI_2DOUBLE_PRECISION",
        pair(Num::F64, Num::F64),
        16,
    ),
    (0x4c00_102a, "MPI_COMPLEX16", Kind::C64, 16),
    // Fortran's REAL*16 is IEEE binary128, which nothing here computes with.
    (0x4c00_102b, "MPI_REAL16", Kind::Opaque, 16),
    (0x4c00_1035, "MPI_CXX_DOUBLE_COMPLEX", Kind::C64, 16),
    (0x4c00_1041, "MPI_C_DOUBLE_COMPLEX", Kind::C64, 16),
    (0x4c00_202c, "MPI_COMPLEX32", Kind::Opaque, 32),
    (0x4c00_2036, "MPI_CXX_LONG_DOUBLE_COMPLEX", Kind::C80, 32),
    (0x4c00_2042, "MPI_C_LONG_DOUBLE_COMPLEX", Kind::C80, 32),
    (0x8c00_0000, "MPI_FLOAT_INT", pair(Num::F32, Num::I32), 8),
    (0x8c00_0001, "MPI_DOUBLE_INT", pair(Num::F64, Num::I32), 12),
    (0x8c00_0002, "MPI_LONG_INT", pair(Num::I64, Num::I32), 12),
    (0x8c00_0003, "MPI_SHORT_INT", pair(Num::I16, Num::I32), 6),
    (
        0x8c00_0004,
        "MPI_LONG_DOUBLE_INT",
        pair(Num::F80, Num::I32),
        20,
    ),
];

/// Where a handle's entry is looked for first: its low byte (MPICH's index)
/// and the low half of the next (its size), which tell every predefined
/// handle of mpi.h apart.
const fn low_bits(t: u32) -> usize {
    ((t & 0xff) | ((t >> 8) & 0xf) << 8) as usize
}

/// PREDEFINED's index by [`low_bits`]: `u8::MAX` for none, `u8::MAX - 1` for
/// bits two handles share.
const fn by_low_bits() -> [u8; 4096] {
    let mut t = [u8::MAX; 4096];
    let mut i = 0;
    while i < PREDEFINED_TABLE.len() {
        let slot = low_bits(PREDEFINED_TABLE[i].0);
        t[slot] = if t[slot] == u8::MAX {
            i as u8
        } else {
            u8::MAX - 1
        };
        i += 1;
    }
    t
}

#[inline]
fn lookup(t: MPI_Datatype) -> Option<&'static (u32, &'static str, Kind, usize)> {
    // Every call looks its datatype up: first by a table made at compile
    // time, then (a handle that is not predefined) by binary search.
    static BY_LOW_BITS: [u8; 4096] = by_low_bits();
    if let Some(e) = PREDEFINED.get(BY_LOW_BITS[low_bits(t as u32)] as usize) {
        if e.0 == t as u32 {
            return Some(e);
        }
    }
    let i = PREDEFINED.binary_search_by_key(&(t as u32), |e| e.0).ok()?;
    Some(&PREDEFINED[i])
}

/// Kind and size (MPI_Type_size) of a predefined datatype handle of mpi.h;
/// `None` if the handle is not one.
#[inline]
pub(crate) fn predefined(t: MPI_Datatype) -> Option<Elements> {
    lookup(t).map(|&(_, _, kind, size)| Elements { kind, size })
}

/// As [`predefined`], for the types whose elements follow one another with no
/// gap (all but the pairs with padding, as MPI_DOUBLE_INT): the fast path of
/// the calls, which use the program's buffer as it is.
#[inline]
pub(crate) fn predefined_contiguous(t: MPI_Datatype) -> Option<Elements> {
    predefined(t)
        .filter(|el| !matches!(el.kind, Kind::Pair { .. }) || pair_extent(el.kind) == el.size)
}

/// The name of a predefined datatype (MPI_Type_get_name).
pub(crate) fn predefined_name(t: MPI_Datatype) -> Option<&'static str> {
    lookup(t).map(|e| e.1)
}

/// The extent of a (value, index) pair: its C struct's size.
fn pair_extent(kind: Kind) -> usize {
    match kind {
        Kind::Pair { value, index, .. } => Kind::pair_layout(value, index, false).1,
        _ => unreachable!("a pair kind"),
    }
}

/// The C alignment of a predefined type's elements: what a structure
/// containing one pads to.
fn alignment(el: Elements) -> usize {
    match el.kind {
        Kind::C32 => 4,
        Kind::C64 => 8,
        Kind::F80 | Kind::C80 => 16,
        Kind::Pair { value, index, .. } => value.size().max(index.size()),
        _ => el.size.clamp(1, 16),
    }
}

/// The C type of a number in a pair, as a predefined handle (basic elements).
fn num_type(n: Num) -> MPI_Datatype {
    match n {
        Num::I16 => 0x4c00_0203,
        Num::I32 => 0x4c00_0405,
        Num::I64 => 0x4c00_0807,
        Num::F32 => 0x4c00_040a,
        Num::F64 => 0x4c00_080b,
        Num::F80 => 0x4c00_100c,
    }
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
    /// (predefined type, count): MPI_Get_elements, external32.
    pub(crate) basics: Arc<[(MPI_Datatype, usize)]>,
    /// The alignment C gives the widest basic element: a structure holding
    /// this type pads its extent to a multiple of it.
    pub(crate) align: usize,
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
    /// Built by a large-count constructor with a count beyond `int`: `ints`
    /// cannot hold the arguments (MPI_Type_get_envelope refuses the type).
    pub(crate) large: bool,
}

/// Appends `reps` copies of the runs `of` to `runs`, merging runs of one type.
fn push_basics(runs: &mut Vec<(MPI_Datatype, usize)>, of: &[(MPI_Datatype, usize)], reps: usize) {
    if reps == 0 {
        return;
    }
    if let [(t, n)] = of {
        return push_run(runs, *t, n * reps);
    }
    for _ in 0..reps {
        for &(t, n) in of {
            push_run(runs, t, n);
        }
    }
}

fn push_run(runs: &mut Vec<(MPI_Datatype, usize)>, t: MPI_Datatype, n: usize) {
    if n == 0 || basic_size(t) == 0 {
        return;
    }
    match runs.last_mut() {
        Some(last) if last.0 == t => last.1 += n,
        _ => runs.push((t, n)),
    }
}

/// Bytes of one basic element of the predefined type `t`.
pub(crate) fn basic_size(t: MPI_Datatype) -> usize {
    predefined(t).map_or(0, |el| el.size)
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
        for &(t, n) in self.basics.iter() {
            let size = basic_size(t);
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
        for &(t, n) in self.basics.iter() {
            let k = rem.min(n);
            bytes += k * basic_size(t);
            rem -= k;
        }
        bytes
    }
}

/// MPI_BYTE, the basic element of untyped bytes.
pub(crate) const MPI_BYTE: MPI_Datatype = 0x4c00_010d;

impl TypeInfo {
    /// `el.size` contiguous bytes of kind `el.kind`, counted as bytes by
    /// MPI_Get_elements (the library's own buffers of no particular type).
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
                Arc::from([(MPI_BYTE, el.size)])
            },
            align: 1,
            envelope: None,
        }
    }

    /// The description of a predefined type. A (value, index) pair is laid
    /// out as C's struct: its extent counts the padding, its size does not.
    fn predefined(t: MPI_Datatype, el: Elements) -> TypeInfo {
        let align = alignment(el);
        if let Kind::Pair { value, index, .. } = el.kind {
            let (at, extent) = Kind::pair_layout(value, index, false);
            let mut blocks = Vec::new();
            push_merged(&mut blocks, 0, value.size());
            push_merged(&mut blocks, at as isize, index.size());
            let mut basics = Vec::new();
            push_run(&mut basics, num_type(value), 1);
            push_run(&mut basics, num_type(index), 1);
            return TypeInfo {
                size: el.size,
                lb: 0,
                extent: extent as isize,
                true_lb: 0,
                true_extent: (at + index.size()) as isize,
                blocks: Blocks::from(blocks),
                elem: Some(el),
                committed: true,
                basics: Arc::from(basics),
                align,
                envelope: None,
            };
        }
        TypeInfo {
            basics: if el.size == 0 {
                Arc::from([])
            } else {
                Arc::from([(t, 1)])
            },
            align,
            ..TypeInfo::basic(el)
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
        if self.is_contiguous() {
            // Copies of a contiguous type are one block each, however many.
            for &(disp, reps) in placements {
                push_merged(&mut blocks, disp, reps * self.size);
                size += reps * self.size;
            }
            return (blocks, size);
        }
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
        align: parts.iter().map(|p| p.1.align).max().unwrap_or(1),
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
    let align = t.align as isize;
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
        Some(el) => Some(TypeInfo::predefined(t, el)),
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

/// Runs `f(input, inout, count)` on the packed elements of `t` in `input` and
/// `inout` laid out as the type says (what a user reduction function expects),
/// then packs `inout`'s result back. Contiguous types need no copy.
pub(crate) fn in_layout(
    t: &TypeInfo,
    input: &[u8],
    inout: &mut [u8],
    f: impl FnOnce(*mut u8, *mut u8, usize),
) {
    let n = inout.len() / t.size.max(1);
    if t.is_contiguous() {
        return f(input.as_ptr() as *mut u8, inout.as_mut_ptr(), n);
    }
    // Element i's bytes lie in [i * extent + true_lb, .. + true_extent).
    let span = n.saturating_sub(1) * t.extent.max(0) as usize + t.true_extent.max(0) as usize;
    let mut a = vec![0u128; span.div_ceil(16)];
    let mut b = vec![0u128; span.div_ceil(16)];
    let base_a = a.as_mut_ptr().cast::<u8>().wrapping_offset(-t.true_lb);
    let base_b = b.as_mut_ptr().cast::<u8>().wrapping_offset(-t.true_lb);
    // SAFETY: the scratch areas cover every block of `n` elements placed from
    // the shifted bases (computed above); the packed slices hold `n` elements.
    unsafe {
        unpack(input, base_a, n, t);
        unpack(inout, base_b, n, t);
    }
    f(base_a, base_b, n);
    let mut out = Vec::with_capacity(inout.len());
    // SAFETY: as above.
    unsafe { pack(base_b, n, t, &mut out) };
    inout.copy_from_slice(&out);
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

    fn named(t: MPI_Datatype) -> TypeInfo {
        info(t).expect("a predefined type")
    }

    fn int() -> TypeInfo {
        named(0x4c00_0405)
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
        let dbl = named(0x4c00_080b);
        // struct { int a; double b; } : a at 0, b at 8, extent 16
        let s = structure(&[(0, 1, int()), (8, 1, dbl)]);
        assert_eq!((s.size, s.extent), (12, 16));
        assert!(s.elem.is_none());
        // struct { char a; double _Complex b; }: complex aligns as its parts.
        let chr = named(0x4c00_0101);
        let z = contiguous(1, &named(0x4c00_1041));
        let s = structure(&[(0, 1, chr.clone()), (8, 1, z)]);
        assert_eq!((s.size, s.extent), (17, 24));
        // struct { char a; long double b; }: 16.
        let s = structure(&[(0, 1, chr), (16, 1, named(0x4c00_100c))]);
        assert_eq!(s.extent, 32);
    }

    #[test]
    fn predefined_table_is_sorted_and_sized() {
        assert!(PREDEFINED.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(PREDEFINED.len() < 250, "indices fit the low-byte table");
        for e in PREDEFINED {
            assert_eq!(lookup(e.0 as MPI_Datatype).map(|f| f.0), Some(e.0));
        }
        assert!(lookup(0x4c00_0499).is_none());
        for &(h, name, kind, size) in PREDEFINED {
            if !matches!(kind, Kind::Opaque | Kind::Pair { .. }) {
                assert_eq!(mpcrs::kind_size(kind), size, "{name}");
            }
            assert_eq!(predefined_name(h as MPI_Datatype), Some(name));
        }
    }

    #[test]
    fn pairs_count_their_data_and_extend_over_their_padding() {
        // (size, extent, basic elements) of MPICH's pair types.
        for (h, size, extent) in [
            (0x8c00_0000u32, 8, 8),
            (0x8c00_0001, 12, 16),
            (0x8c00_0002, 12, 16),
            (0x8c00_0003, 6, 8),
            (0x4c00_0816, 8, 8),
            (0x8c00_0004, 20, 32),
        ] {
            let t = named(h as MPI_Datatype);
            assert_eq!((t.size, t.extent), (size, extent), "{h:#x}");
            assert_eq!(t.basic_count(), 2);
            assert_eq!(
                predefined_contiguous(h as MPI_Datatype).is_some(),
                size == extent as usize
            );
        }
        assert_eq!(
            &*named(0x8c00_0003u32 as MPI_Datatype).blocks,
            &[(0, 2), (4, 4)]
        );
    }
}
