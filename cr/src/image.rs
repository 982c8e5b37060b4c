//! The image file of one process.
//!
//! ```text
//! offset 0        header (HEADER_SIZE bytes): magic, version, identities of the
//!                 executable and of the object holding the mpcrs runtime, brk,
//!                 region count, CRC-32C of the header and region table,
//!                 whose image it is (job key, epoch, process; version 4 on)
//!                 and for an incremental image its parent (epoch, metadata CRC)
//! HEADER_SIZE     region table: REGION_SIZE bytes per mapping
//! then            the mappings' paths (for diagnostics and restore)
//! page-aligned    each region's stored bytes, page-aligned, CRC-32C per region:
//!                 its whole contents, or (DELTA) an extent table, padded to a
//!                 page, then the pages of its data extents in order;
//!                 either one as zstd frames when COMPRESSED
//! ```
//! An extent table is a u64 count, then per extent its offset in the region,
//! its length and its kind (EXTENT_DATA: stored here; EXTENT_ZERO: zeros); the
//! region's pages no extent names are those of the parent image.
//! Integers are little-endian. Contents are written straight from memory, in
//! large page-aligned writes.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

pub const MAGIC: &[u8; 8] = b"MPCRSIMG";
pub const VERSION: u32 = 4;
/// The oldest version read (images without an owner).
pub const OLDEST_VERSION: u32 = 3;
pub const HEADER_SIZE: usize = 4096;
pub const REGION_SIZE: usize = 48;
pub const PAGE: u64 = 4096;
/// Longest executable path the header holds.
pub const MAX_EXE_PATH: usize = 2048;
/// Longest path of the runtime's object the header holds.
pub const MAX_RUNTIME_PATH: usize = H_OWNER_JOB - H_RT_PATH;

/// Region flags.
pub const SHARED: u32 = 1;
pub const HAS_DATA: u32 = 2;
/// A mapping the kernel provides (vdso, vvar): recorded, without contents, so
/// that a restorer can check it sits where the image expects it.
pub const KERNEL: u32 = 4;
/// With HAS_DATA: the region stores the extents written since the parent
/// image (an extent table, then their pages), not its whole contents.
pub const DELTA: u32 = 8;
/// With HAS_DATA: the region stores its bytes as zstd frames
/// ([`crate::compress`]); `stored` and the CRC are those of the frames.
pub const COMPRESSED: u32 = 16;

/// Kinds of an extent of a DELTA region.
pub const EXTENT_ZERO: u64 = 0;
pub const EXTENT_DATA: u64 = 1;
/// Bytes of one extent in the table, and of the count before them.
pub const EXTENT_SIZE: usize = 24;
pub const EXTENT_COUNT_SIZE: usize = 8;

/// One extent of a DELTA region, as its table records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent {
    /// Offset in the region and length, in whole pages.
    pub offset: u64,
    pub len: u64,
    pub kind: u64,
}

/// The bytes an extent table of `count` extents takes, padded to a page.
pub fn extent_table_len(count: usize) -> u64 {
    ((EXTENT_COUNT_SIZE + count * EXTENT_SIZE) as u64).div_ceil(PAGE) * PAGE
}

/// Which executable an image belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExeIdentity {
    pub path: String,
    pub size: u64,
    /// CRC-32C of the whole file.
    pub crc: u32,
}

impl ExeIdentity {
    pub fn of(path: &Path) -> io::Result<ExeIdentity> {
        let bytes = std::fs::read(path)?;
        Ok(ExeIdentity {
            path: path.to_string_lossy().into_owned(),
            size: bytes.len() as u64,
            crc: crc32c::crc32c(&bytes),
        })
    }

    /// Whether both name the same contents (the path may differ).
    pub fn same_file(&self, other: &ExeIdentity) -> bool {
        self.size == other.size && self.crc == other.crc
    }
}

/// One mapping as the image records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    pub start: u64,
    pub end: u64,
    pub prot: u32,
    pub flags: u32,
    /// Where the contents are in the image (0 without contents), and how
    /// many bytes are stored there (the length, or a DELTA's table and pages).
    pub data_offset: u64,
    pub stored: u64,
    pub crc: u32,
    pub path: String,
}

impl Region {
    pub fn len(&self) -> u64 {
        self.end - self.start
    }
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
    pub fn has_data(&self) -> bool {
        self.flags & HAS_DATA != 0
    }
    /// Whether the region stores only what changed since the parent image.
    pub fn is_delta(&self) -> bool {
        self.flags & (HAS_DATA | DELTA) == HAS_DATA | DELTA
    }
}

/// The image an incremental image applies to: its epoch and the CRC of its
/// metadata (which covers every region's CRC), so that another file in its
/// place is told apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parent {
    pub epoch: u64,
    pub meta_crc: u32,
}

/// Whose image this is: the job (a key its launcher makes at the first run
/// and every restart keeps), the epoch and the process. A file put in the
/// place of another (copied from another epoch, another process or another
/// job) has checksums that hold but the wrong owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Owner {
    pub job: u64,
    pub epoch: u64,
    pub process: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageHeader {
    pub exe: ExeIdentity,
    /// The object whose code dumps and restores (the executable, or libmpi.so
    /// for C programs): a restorer runs from it and needs the same one.
    pub runtime: ExeIdentity,
    pub brk: u64,
    pub regions: Vec<Region>,
    /// For an incremental image, the image it applies to.
    pub parent: Option<Parent>,
    /// Whose image it is (`None`: taken outside a job's checkpoint, or by a
    /// version before 4).
    pub owner: Option<Owner>,
    /// The CRC of this image's metadata (as sealed; 0 before).
    pub meta_crc: u32,
}

/// Why an image cannot be used, with the file it is about.
#[derive(Debug, thiserror::Error)]
#[error("{}: {problem}", file.display())]
pub struct ImageError {
    pub file: PathBuf,
    pub problem: String,
}

fn put_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}
fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

// Header fields.
const H_VERSION: usize = 8;
const H_EXE_SIZE: usize = 16;
const H_EXE_CRC: usize = 24;
const H_BRK: usize = 32;
const H_REGIONS: usize = 40;
const H_PATHS_LEN: usize = 44;
const H_CRC: usize = 48;
const H_EXE_PATH_LEN: usize = 52;
const H_EXE_PATH: usize = 64;
const H_RT_SIZE: usize = H_EXE_PATH + MAX_EXE_PATH;
const H_RT_CRC: usize = H_RT_SIZE + 8;
const H_RT_PATH_LEN: usize = H_RT_SIZE + 12;
const H_RT_PATH: usize = H_RT_SIZE + 16;
const H_OWNER_JOB: usize = HEADER_SIZE - 40;
const H_OWNER_EPOCH: usize = HEADER_SIZE - 32;
const H_OWNER_PROCESS: usize = HEADER_SIZE - 24;
const H_OWNER_SET: usize = HEADER_SIZE - 20;
const H_PARENT_EPOCH: usize = HEADER_SIZE - 16;
const H_PARENT_CRC: usize = HEADER_SIZE - 8;

/// Size of header, table and paths, rounded to a page: where contents start.
pub fn metadata_size(regions: &[Region]) -> u64 {
    let paths: usize = regions.iter().map(|r| r.path.len()).sum();
    let raw = HEADER_SIZE + regions.len() * REGION_SIZE + paths;
    (raw as u64).div_ceil(PAGE) * PAGE
}

/// Encodes header, table and paths into `metadata_size` bytes. The region CRCs
/// are whatever `regions` holds; [`seal`] fills the header's own CRC.
pub fn encode(h: &ImageHeader) -> Vec<u8> {
    let mut b = vec![0u8; metadata_size(&h.regions) as usize];
    b[..8].copy_from_slice(MAGIC);
    put_u32(&mut b, H_VERSION, VERSION);
    put_u64(&mut b, H_EXE_SIZE, h.exe.size);
    put_u32(&mut b, H_EXE_CRC, h.exe.crc);
    put_u64(&mut b, H_BRK, h.brk);
    put_u32(&mut b, H_REGIONS, h.regions.len() as u32);
    let paths: usize = h.regions.iter().map(|r| r.path.len()).sum();
    put_u32(&mut b, H_PATHS_LEN, paths as u32);
    let exe = h.exe.path.as_bytes();
    let exe = &exe[..exe.len().min(MAX_EXE_PATH)];
    put_u32(&mut b, H_EXE_PATH_LEN, exe.len() as u32);
    b[H_EXE_PATH..H_EXE_PATH + exe.len()].copy_from_slice(exe);
    put_u64(&mut b, H_RT_SIZE, h.runtime.size);
    put_u32(&mut b, H_RT_CRC, h.runtime.crc);
    let rt = h.runtime.path.as_bytes();
    let rt = &rt[..rt.len().min(MAX_RUNTIME_PATH)];
    put_u32(&mut b, H_RT_PATH_LEN, rt.len() as u32);
    b[H_RT_PATH..H_RT_PATH + rt.len()].copy_from_slice(rt);
    if let Some(o) = h.owner {
        put_u64(&mut b, H_OWNER_JOB, o.job);
        put_u64(&mut b, H_OWNER_EPOCH, o.epoch);
        put_u32(&mut b, H_OWNER_PROCESS, o.process);
        put_u32(&mut b, H_OWNER_SET, 1);
    }
    if let Some(p) = h.parent {
        put_u64(&mut b, H_PARENT_EPOCH, p.epoch);
        put_u32(&mut b, H_PARENT_CRC, p.meta_crc);
    }
    let mut path_at = HEADER_SIZE + h.regions.len() * REGION_SIZE;
    for (i, r) in h.regions.iter().enumerate() {
        let at = HEADER_SIZE + i * REGION_SIZE;
        put_u64(&mut b, at, r.start);
        put_u64(&mut b, at + 8, r.end);
        put_u32(&mut b, at + 16, r.prot);
        put_u32(&mut b, at + 20, r.flags);
        put_u64(&mut b, at + 24, r.data_offset);
        put_u32(&mut b, at + 32, r.crc);
        put_u32(&mut b, at + 36, r.path.len() as u32);
        put_u64(&mut b, at + 40, r.stored);
        b[path_at..path_at + r.path.len()].copy_from_slice(r.path.as_bytes());
        path_at += r.path.len();
    }
    b
}

/// Sets region `i`'s flags, data offset, stored bytes and CRC in encoded
/// metadata, as the writer learns them. No allocation: the dumper's child
/// calls it.
pub fn set_region_data(meta: &mut [u8], i: usize, flags: u32, offset: u64, stored: u64, crc: u32) {
    let at = HEADER_SIZE + i * REGION_SIZE;
    put_u32(meta, at + 20, flags);
    put_u64(meta, at + 24, offset);
    put_u32(meta, at + 32, crc);
    put_u64(meta, at + 40, stored);
}

/// Fills the metadata's own CRC (over everything but that field). No allocation:
/// the dumper's child calls it.
pub fn seal(meta: &mut [u8]) {
    meta[H_CRC..H_CRC + 4].fill(0);
    let crc = crc32c::crc32c(meta);
    put_u32(meta, H_CRC, crc);
}

/// Reads and checks an image's metadata.
pub fn read_header(path: &Path) -> Result<(File, ImageHeader), ImageError> {
    let fail = |problem: String| ImageError {
        file: path.to_path_buf(),
        problem,
    };
    let file = File::open(path).map_err(|e| fail(format!("cannot open: {e}")))?;
    let size = file.metadata().map_err(|e| fail(e.to_string()))?.len();
    let mut head = vec![0u8; HEADER_SIZE];
    if size < HEADER_SIZE as u64 {
        return Err(fail(format!("truncated: {size} bytes, not even a header")));
    }
    file.read_exact_at(&mut head, 0)
        .map_err(|e| fail(e.to_string()))?;
    if &head[..8] != MAGIC {
        return Err(fail("not an mpcrs image (bad magic)".into()));
    }
    let version = u32_at(&head, H_VERSION);
    if !(OLDEST_VERSION..=VERSION).contains(&version) {
        return Err(fail(format!(
            "image version {version} (this mpcrs reads {OLDEST_VERSION} to {VERSION})"
        )));
    }
    let count = u32_at(&head, H_REGIONS) as usize;
    let paths = u32_at(&head, H_PATHS_LEN) as usize;
    let raw = HEADER_SIZE + count * REGION_SIZE + paths;
    let meta_len = (raw as u64).div_ceil(PAGE) * PAGE;
    if size < meta_len {
        return Err(fail(format!(
            "truncated: {size} bytes, the region table needs {meta_len}"
        )));
    }
    let mut meta = vec![0u8; meta_len as usize];
    file.read_exact_at(&mut meta, 0)
        .map_err(|e| fail(e.to_string()))?;
    let stored = u32_at(&meta, H_CRC);
    seal(&mut meta);
    if u32_at(&meta, H_CRC) != stored {
        return Err(fail(
            "header or region table corrupted (checksum mismatch)".into(),
        ));
    }
    let exe_len = (u32_at(&meta, H_EXE_PATH_LEN) as usize).min(MAX_EXE_PATH);
    let exe = ExeIdentity {
        path: String::from_utf8_lossy(&meta[H_EXE_PATH..H_EXE_PATH + exe_len]).into_owned(),
        size: u64_at(&meta, H_EXE_SIZE),
        crc: u32_at(&meta, H_EXE_CRC),
    };
    // Version 3 gave the runtime's path the owner's bytes too.
    let rt_room = if version < 4 {
        H_PARENT_EPOCH - H_RT_PATH
    } else {
        MAX_RUNTIME_PATH
    };
    let rt_len = (u32_at(&meta, H_RT_PATH_LEN) as usize).min(rt_room);
    let runtime = ExeIdentity {
        path: String::from_utf8_lossy(&meta[H_RT_PATH..H_RT_PATH + rt_len]).into_owned(),
        size: u64_at(&meta, H_RT_SIZE),
        crc: u32_at(&meta, H_RT_CRC),
    };
    // The fields are checked before use: a checksum only says the metadata is
    // as written, and a file made to pass it must still not steer the reader
    // or the restorer out of bounds.
    let path_lens: u64 = (0..count)
        .map(|i| u32_at(&meta, HEADER_SIZE + i * REGION_SIZE + 36) as u64)
        .sum();
    if path_lens != paths as u64 {
        return Err(fail(format!(
            "region table: its paths' lengths add up to {path_lens} bytes, the header says {paths}"
        )));
    }
    let mut regions = Vec::with_capacity(count);
    let mut path_at = HEADER_SIZE + count * REGION_SIZE;
    for i in 0..count {
        let at = HEADER_SIZE + i * REGION_SIZE;
        let plen = u32_at(&meta, at + 36) as usize;
        regions.push(Region {
            start: u64_at(&meta, at),
            end: u64_at(&meta, at + 8),
            prot: u32_at(&meta, at + 16),
            flags: u32_at(&meta, at + 20),
            data_offset: u64_at(&meta, at + 24),
            stored: u64_at(&meta, at + 40),
            crc: u32_at(&meta, at + 32),
            path: String::from_utf8_lossy(&meta[path_at..path_at + plen]).into_owned(),
        });
        path_at += plen;
        check_region(i, &regions, meta_len, size).map_err(&fail)?;
    }
    Ok((
        file,
        ImageHeader {
            exe,
            runtime,
            brk: u64_at(&meta, H_BRK),
            regions,
            owner: (version >= 4 && u32_at(&meta, H_OWNER_SET) == 1).then(|| Owner {
                job: u64_at(&meta, H_OWNER_JOB),
                epoch: u64_at(&meta, H_OWNER_EPOCH),
                process: u32_at(&meta, H_OWNER_PROCESS),
            }),
            parent: match u64_at(&meta, H_PARENT_EPOCH) {
                0 => None,
                epoch => Some(Parent {
                    epoch,
                    meta_crc: u32_at(&meta, H_PARENT_CRC),
                }),
            },
            meta_crc: stored,
        },
    ))
}

/// The highest end a mapping of a process may have (x86-64, 4-level page
/// tables); the kernel's own mappings ([`KERNEL`]) lie above it.
pub const USER_TOP: u64 = 0x7fff_ffff_f000;

/// Every flag an image may set.
const KNOWN_FLAGS: u32 = SHARED | HAS_DATA | KERNEL | DELTA | COMPRESSED;

/// Checks the last of `regions` (region `i`) read from an image of `size`
/// bytes whose metadata takes `meta_len`: whole pages of the user address
/// space, after the region before, known flags and protections, its data
/// inside the file after the metadata. Names the field that is wrong.
fn check_region(i: usize, regions: &[Region], meta_len: u64, size: u64) -> Result<(), String> {
    let r = &regions[i];
    let what = format!("region {i} ({:#x}-{:#x})", r.start, r.end);
    // The kernel's own mappings ([vsyscall]) are recorded, never restored,
    // and lie above user space.
    let top = if r.flags & KERNEL != 0 {
        u64::MAX
    } else {
        USER_TOP
    };
    if r.start % PAGE != 0 || r.end % PAGE != 0 || r.start >= r.end || r.end > top {
        return Err(format!(
            "{what}: start and end are not whole pages of the user address space in order"
        ));
    }
    if let Some(before) = i.checked_sub(1).map(|b| &regions[b]) {
        if r.start < before.end {
            return Err(format!(
                "{what}: starts before the end of region {} ({:#x})",
                i - 1,
                before.end
            ));
        }
    }
    if r.flags & !KNOWN_FLAGS != 0 {
        return Err(format!(
            "{what}: unknown flags {:#x}",
            r.flags & !KNOWN_FLAGS
        ));
    }
    if r.prot & !((libc::PROT_READ | libc::PROT_WRITE | libc::PROT_EXEC) as u32) != 0 {
        return Err(format!(
            "{what}: protection {:#x} is not one of r, w, x",
            r.prot
        ));
    }
    if r.has_data() {
        match r.data_offset.checked_add(r.stored) {
            Some(_) if r.data_offset < meta_len => {
                return Err(format!(
                    "{what}: its data offset {} is inside the metadata ({meta_len} bytes)",
                    r.data_offset
                ))
            }
            // A file cut short, or a length no file reaches.
            Some(end) if end > size => {
                return Err(format!(
                    "truncated: {what} {} needs bytes up to {end}, the file has {size}",
                    r.path
                ))
            }
            Some(_) => {}
            None => {
                return Err(format!(
                    "{what}: its data ({} bytes at {}) ends past any file",
                    r.stored, r.data_offset
                ))
            }
        }
    }
    Ok(())
}

/// The extent table of DELTA region `r` of an opened image, checked against
/// the region: extents in order, inside it, in whole pages, their data within
/// what the region stores.
pub fn read_extents(path: &Path, file: &File, r: &Region) -> Result<Vec<Extent>, ImageError> {
    let fail = |problem: String| ImageError {
        file: path.to_path_buf(),
        problem: format!("region {:#x}-{:#x} {}: {problem}", r.start, r.end, r.path),
    };
    let mut count = [0u8; EXTENT_COUNT_SIZE];
    file.read_exact_at(&mut count, r.data_offset)
        .map_err(|e| fail(format!("extent table: {e}")))?;
    let count = u64::from_le_bytes(count);
    // Every extent takes a table entry of the stored bytes: a count past that
    // is refused before anything is allocated for it.
    if count > r.stored / EXTENT_SIZE as u64 || extent_table_len(count as usize) > r.stored {
        return Err(fail(format!(
            "{count} extents do not fit in its {} stored bytes",
            r.stored
        )));
    }
    let count = count as usize;
    let mut table = vec![0u8; count * EXTENT_SIZE];
    file.read_exact_at(&mut table, r.data_offset + EXTENT_COUNT_SIZE as u64)
        .map_err(|e| fail(format!("extent table: {e}")))?;
    let mut out = Vec::with_capacity(count);
    let mut end = 0;
    let mut data = extent_table_len(count);
    for e in table.chunks_exact(EXTENT_SIZE) {
        let x = Extent {
            offset: u64_at(e, 0),
            len: u64_at(e, 8),
            kind: u64_at(e, 16),
        };
        if x.offset < end
            || x.len == 0
            || x.offset % PAGE != 0
            || x.len % PAGE != 0
            || x.offset.checked_add(x.len).is_none_or(|e| e > r.len())
            || x.kind > EXTENT_DATA
        {
            return Err(fail(format!(
                "extent {:#x}+{:#x} (kind {}) is out of order or outside the region",
                x.offset, x.len, x.kind
            )));
        }
        if x.kind == EXTENT_DATA {
            data += x.len;
        }
        end = x.offset + x.len;
        out.push(x);
    }
    if data != r.stored {
        return Err(fail(format!(
            "its extents hold {data} bytes, the region table says {}",
            r.stored
        )));
    }
    Ok(out)
}

/// CRC-32C of `len` bytes of `file` at `offset`: the file's holes counted as
/// zeros without being read ([`crate::holes`]), its data read through a read-only
/// mapping of the file: the page cache's pages are checksummed where they are,
/// not copied first. Each chunk is brought in with one call
/// (MADV_POPULATE_READ, not a fault per page), the next ones asked for ahead
/// so the device stays busy while a chunk is checksummed. Images are replaced
/// by rename, never cut short in place, so the mapping stays readable.
fn checksum(file: &File, offset: u64, len: u64) -> io::Result<u32> {
    let ranges = crate::holes::DataRanges::new(file);
    let end = offset + len;
    let mut crc = 0;
    let mut at = offset;
    while at < end {
        let (data, hole) = match ranges.next(at)? {
            Some((d, h)) => (d.min(end), h.min(end)),
            None => (end, end),
        };
        crc = crate::holes::append_zeros(crc, data - at);
        if data < hole {
            crc = checksum_mapped(crc, file, data, hole - data)?;
        }
        at = hole.max(data);
    }
    Ok(crc)
}

/// `crc` extended by `len` bytes of data at `offset` of `file`, read through
/// a mapping (see [`checksum`]).
fn checksum_mapped(crc: u32, file: &File, offset: u64, len: u64) -> io::Result<u32> {
    if len == 0 {
        return Ok(crc);
    }
    let from = offset & !(PAGE - 1);
    let map_len = (offset + len - from) as usize;
    // SAFETY: a new read-only shared mapping of an open file; unmapped below.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            map_len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            from as libc::off_t,
        )
    };
    if base == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    let advise = |at: usize, n: usize, advice: i32| {
        let at = at.min(map_len);
        let n = n.min(map_len - at);
        // SAFETY: advice on pages of the mapping made above.
        let r = unsafe { libc::madvise(base.cast::<u8>().add(at).cast(), n, advice) };
        if r == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    };
    let mut crc = crc;
    let mut result = Ok(());
    let skip = (offset - from) as usize;
    let _ = advise(0, VERIFY_AHEAD as usize, libc::MADV_WILLNEED);
    let mut at = 0;
    while at < map_len {
        let n = VERIFY_CHUNK.min(map_len - at);
        let _ = advise(
            at + VERIFY_AHEAD as usize,
            VERIFY_CHUNK,
            libc::MADV_WILLNEED,
        );
        if let Err(e) = advise(at, n, libc::MADV_POPULATE_READ) {
            result = Err(e);
            break;
        }
        let lo = at.max(skip);
        // SAFETY: bytes of the mapping, populated just above.
        let bytes = unsafe { std::slice::from_raw_parts(base.cast::<u8>().add(lo), at + n - lo) };
        crc = crc32c::crc32c_append(crc, bytes);
        at += n;
    }
    // SAFETY: unmapping the mapping made above; no slice of it outlives this.
    unsafe { libc::munmap(base, map_len) };
    result.map(|()| crc)
}

/// Summary of a verified image.
#[derive(Debug, Clone)]
pub struct Verified {
    pub header: ImageHeader,
    /// Bytes of memory contents the image holds.
    pub data_bytes: u64,
}

/// Bytes [`verify`] reads at a time, and how far ahead of them it asks the
/// kernel to read.
const VERIFY_CHUNK: usize = 4 << 20;
const VERIFY_AHEAD: u64 = 32 << 20;

/// Whether [`verify_with`] reads and checksums the regions' contents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contents {
    Checksummed,
    /// Only the metadata, lengths and extent tables: for an image verified
    /// whole by someone else since it last changed.
    Trusted,
}

/// Checks an image completely: metadata, every region's length and checksum.
pub fn verify(path: &Path) -> Result<Verified, ImageError> {
    verify_with(path, Contents::Checksummed)
}

/// Checks an image's metadata, every region's length and extent table, and
/// with [`Contents::Checksummed`] every region's checksum.
pub fn verify_with(path: &Path, contents: Contents) -> Result<Verified, ImageError> {
    let (file, header) = read_header(path)?;
    let fail = |problem: String| ImageError {
        file: path.to_path_buf(),
        problem,
    };
    let what =
        |i: usize, r: &Region| format!("region {i} ({:#x}-{:#x} {})", r.start, r.end, r.path);
    let with_data = || {
        header
            .regions
            .iter()
            .enumerate()
            .filter(|(_, r)| r.has_data())
    };
    // Every length first (read_header found each region's data inside the
    // file): a region stored short is named, whichever comes first.
    for (i, r) in with_data() {
        if !r.is_delta() && r.flags & COMPRESSED == 0 && r.stored != r.len() {
            return Err(fail(format!(
                "{} stores {} bytes of its {}",
                what(i, r),
                r.stored,
                r.len()
            )));
        }
    }
    let mut data_bytes = 0;
    for (i, r) in with_data() {
        let what = what(i, r);
        let crc = match contents {
            Contents::Trusted => r.crc,
            Contents::Checksummed => checksum(&file, r.data_offset, r.stored)
                .map_err(|e| fail(format!("{what}: {e}")))?,
        };
        if crc != r.crc {
            return Err(fail(format!("{what} corrupted (checksum mismatch)")));
        }
        if r.is_delta() && r.flags & COMPRESSED == 0 {
            read_extents(path, &file, r)?;
        }
        data_bytes += r.stored;
    }
    Ok(Verified { header, data_bytes })
}
