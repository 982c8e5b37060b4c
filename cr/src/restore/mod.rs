//! The restorer: turns a freshly started process back into the one an image
//! was taken of (DESIGN.md section 7).
//!
//! The first half (this module) runs as ordinary Rust before any other thread
//! exists: it verifies the image, checks that the executable and the runtime's
//! own object are the ones that wrote it and sit at the same addresses (the
//! launcher turns address randomization off for both runs), reads the image's
//! thread, signal and file records, reopens the files at their descriptors,
//! and lays out a [`resume::Plan`] in a scratch mapping outside every image
//! range. The second half ([`resume`]) then replaces memory and resumes each
//! thread at the signal frame where the snapshot stopped it; the dumper's
//! caller sees [`crate::Snapshot::Restored`].
//!
//! Memory is read from the images into anonymous memory, as the dumped
//! process had it: a page given back (MADV_DONTNEED) reads as zeros, as it
//! did there.

pub mod chain;
mod resume;
pub mod vouch;

use std::convert::Infallible;
use std::mem::{size_of, MaybeUninit};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::Ordering;

use resume::{
    Plan, PlanPiece, PlanRegion, Range, ThreadRec, HIGHEST, LOWEST, NO_DATA, PIECES, ZEROS,
};

use crate::image::{ExeIdentity, ImageError, ImageHeader, KERNEL};
use crate::kernel_state::{self, FileTable, KernelSigaction, FILES, SIGNALS};
use crate::maps::{own_mappings, Mapping};
use crate::sys::call;
use crate::threads::{
    ThreadSlot, MAX_THREADS, PROCESS_ID, RESTORES, THREADS, THREAD_COUNT, TID_OFFSET,
};

/// Set by the launcher to the image a process restores before anything else.
pub const RESTORE_ENV: &str = mpcrs_settings::variables::RESTORE.name;
/// Exit status of a process whose restore failed.
pub const RESTORE_FAILED: i32 = 3;
/// Names (comma-separated) of variables of the new process whose values are
/// descriptors to carry into the restored one (a launcher's connection, say).
/// They are moved above every descriptor the image uses, and the environment
/// handed over names them at their new numbers.
pub const CARRY_FDS_ENV: &str = mpcrs_settings::variables::RESTORE_CARRY_FDS.name;

/// Where the restorer leaves the new process's environment for the restored
/// one (whose own environment is the image's): address and length of
/// `KEY=VALUE\0` strings in the restorer's scratch mapping, which stays mapped.
static HANDOFF: [std::sync::atomic::AtomicU64; 2] =
    [const { std::sync::atomic::AtomicU64::new(0) }; 2];

/// The environment of the process that restored this one, if it was restored
/// (with carried descriptors at their new numbers); `None` in a first run.
pub fn handed_over_environment() -> Option<Vec<(String, String)>> {
    let at = HANDOFF[0].load(Ordering::Acquire);
    let len = HANDOFF[1].load(Ordering::Acquire);
    if at == 0 {
        return None;
    }
    // SAFETY: the restorer wrote `len` bytes at `at` in its scratch mapping, which
    // is never unmapped.
    let bytes = unsafe { std::slice::from_raw_parts(at as *const u8, len as usize) };
    Some(
        bytes
            .split(|&b| b == 0)
            .filter_map(|kv| {
                let kv = String::from_utf8_lossy(kv);
                let (k, v) = kv.split_once('=')?;
                Some((k.to_string(), v.to_string()))
            })
            .collect(),
    )
}

/// This process's environment, with the descriptors named by [`CARRY_FDS_ENV`]
/// duplicated at `first` and above: the variables, and those descriptors.
fn environment_to_hand_over(first: i32) -> Result<(Vec<u8>, Vec<u64>), String> {
    let carry: Vec<String> = std::env::var(CARRY_FDS_ENV)
        .unwrap_or_default()
        .split(',')
        .filter(|n| !n.is_empty())
        .map(String::from)
        .collect();
    let mut blob = Vec::new();
    let mut fds = Vec::new();
    for (k, v) in std::env::vars_os() {
        let (k, mut v) = (
            k.to_string_lossy().into_owned(),
            v.to_string_lossy().into_owned(),
        );
        if carry.contains(&k) {
            let fd: i32 = v
                .parse()
                .map_err(|_| format!("{k}={v:?} is not a descriptor ({CARRY_FDS_ENV} names it)"))?;
            // SAFETY: duplicating a descriptor of this process; the copy is ours.
            let moved = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, first) };
            if moved < 0 {
                return Err(format!(
                    "descriptor {fd} of {k}: {}",
                    std::io::Error::last_os_error()
                ));
            }
            fds.push(moved as u64);
            v = moved.to_string();
        }
        blob.extend_from_slice(k.as_bytes());
        blob.push(b'=');
        blob.extend_from_slice(v.as_bytes());
        blob.push(0);
    }
    Ok((blob, fds))
}

/// The restorer's stack, in the scratch mapping.
const STACK_BYTES: u64 = 256 << 10;
/// Room left below an image's main stack, which no longer grows by itself.
const MAIN_STACK_ROOM: u64 = 8 << 20;

/// Restores the image named by `MPCRS_RESTORE`, if set; never returns then (a
/// refusal ends the process with a message naming the file and the problem).
/// Call it first thing, before any thread is started.
pub fn restore_if_asked() {
    let Some(image) = std::env::var_os(RESTORE_ENV) else {
        return;
    };
    let Err(e) = restore(Path::new(&image));
    mpcrs_settings::report!(error, "mpcrs: restart refused: {e}");
    std::process::exit(RESTORE_FAILED);
}

/// Replaces this process with the one in `path` and resumes it.
pub fn restore(path: &Path) -> Result<Infallible, ImageError> {
    let fail = |problem: String| ImageError {
        file: path.to_path_buf(),
        problem,
    };
    let threads_now = std::fs::read_dir("/proc/self/task")
        .map(|d| d.count())
        .unwrap_or(1);
    if threads_now != 1 {
        return Err(fail(format!(
            "this process already runs {threads_now} threads; a restore must come before any"
        )));
    }
    let links = chain::open(path)?;
    let header = links[0].header.clone();
    let exe = crate::dump::exe_identity().map_err(&fail)?;
    same_identity(&header.exe, exe, "executable").map_err(&fail)?;
    let runtime = crate::dump::runtime_identity()
        .map_err(|e| fail(format!("the mpcrs runtime's object: {e}")))?;
    same_identity(&header.runtime, runtime, "mpcrs runtime").map_err(&fail)?;
    let mappings = own_mappings().map_err(|e| fail(format!("/proc/self/maps: {e}")))?;

    let read = |addr: u64, out: &mut [u8]| chain::read_memory(&links, addr, out);
    let threads: Box<[ThreadSlot; MAX_THREADS]> = image_static(&THREADS, read)?;
    let count = image_static(&THREAD_COUNT, read)?.into_inner();
    let pid = image_static(&PROCESS_ID, read)?.into_inner();
    let tid_offset = image_static(&TID_OFFSET, read)?.into_inner();
    let signals: Box<[KernelSigaction; 65]> = image_static(SIGNALS.get(), read)?;
    let files: Box<FileTable> = image_static(FILES.get(), read)?;

    let kept = kept_mappings(&header, &mappings, &runtime.path).map_err(&fail)?;
    let main_stack = header.regions.iter().find(|r| r.path == "[stack]");
    // Every region is read from the chain's pieces into anonymous memory (a
    // whole region of the newest image is one piece).
    let mut pieces: Vec<chain::Piece> = Vec::new();
    let mut regions: Vec<PlanRegion> = Vec::new();
    for r in header
        .regions
        .iter()
        .filter(|r| r.flags & KERNEL == 0)
        .filter(|r| !kept.iter().any(|k| k.start == r.start && k.end == r.end))
    {
        let from = pieces.len() as u64;
        let offset = if !r.has_data() {
            NO_DATA
        } else {
            let first = pieces.len();
            chain::resolve(&links, 0, r.start, r.end, &mut pieces)?;
            let resolved = pieces.split_off(first);
            for piece in resolved {
                split_at_holes(piece, &links, &mut pieces);
            }
            PIECES
        };
        regions.push(PlanRegion {
            start: r.start,
            end: r.end,
            prot: r.prot as u64,
            offset,
            pieces_from: from,
            pieces_to: pieces.len() as u64,
        });
    }
    if let Some(stack) = main_stack {
        // The kernel grew the main stack on demand; restored, it is a plain
        // mapping: leave room below it, as far as the next mapping allows.
        let below = header
            .regions
            .iter()
            .filter(|r| r.end <= stack.start)
            .map(|r| r.end)
            .max()
            .unwrap_or(LOWEST);
        let from = stack.start.saturating_sub(MAIN_STACK_ROOM).max(below);
        if from < stack.start {
            regions.push(PlanRegion {
                start: from,
                end: stack.start,
                prot: (libc::PROT_READ | libc::PROT_WRITE) as u64,
                offset: NO_DATA,
                pieces_from: 0,
                pieces_to: 0,
            });
        }
    }

    // Threads: every one the snapshot stopped; the main thread is this one.
    let mut recs: Vec<ThreadRec> = Vec::new();
    let mut main = None;
    for slot in threads.iter().take(count.min(MAX_THREADS)) {
        let tid = slot.tid.load(Ordering::Relaxed);
        if tid == 0 || slot.stopped.load(Ordering::Relaxed) == 0 {
            continue;
        }
        let fs_base = slot.fs_base.load(Ordering::Relaxed);
        let rec = ThreadRec {
            robust_head: slot.robust_head.load(Ordering::Relaxed),
            robust_len: slot.robust_len.load(Ordering::Relaxed),
            cpus_ptr: 0,
            cpus_len: 128,
            name_ptr: 0,
            frame: slot.frame.load(Ordering::Relaxed),
            fs_base,
            tid_addr: if tid_offset == 0 {
                0
            } else {
                fs_base + tid_offset as u64
            },
            cpus: std::array::from_fn(|i| slot.cpus[i].load(Ordering::Relaxed)),
            name: std::array::from_fn(|i| slot.name[i].load(Ordering::Relaxed)),
        };
        if tid == pid {
            main = Some(rec);
        } else {
            recs.push(rec);
        }
    }
    if recs.is_empty() && main.is_none() {
        return Err(fail("the image holds no stopped thread".into()));
    }

    // The images' descriptors go above every recorded one; then the files.
    let table = &files.files[..files.count.min(kernel_state::MAX_FILES)];
    let highest = table.iter().map(|f| f.fd).max().unwrap_or(2);
    let mut image_fds: Vec<u64> = Vec::new();
    for link in &links {
        // SAFETY: duplicating our own descriptor.
        let fd = unsafe {
            libc::fcntl(
                link.file.as_raw_fd(),
                libc::F_DUPFD_CLOEXEC,
                highest.max(1023) + 1,
            )
        };
        if fd < 0 {
            return Err(fail(format!(
                "descriptor: {}",
                std::io::Error::last_os_error()
            )));
        }
        image_fds.push(fd as u64);
    }
    let plan_pieces: Vec<PlanPiece> = pieces
        .iter()
        .map(|x| match x.source {
            chain::Source::File { link, offset } => PlanPiece {
                start: x.start,
                end: x.end,
                fd: image_fds[link],
                offset,
            },
            chain::Source::Zeros => PlanPiece {
                start: x.start,
                end: x.end,
                fd: ZEROS,
                offset: 0,
            },
        })
        .collect();
    for rec in table {
        kernel_state::reopen(rec).map_err(&fail)?;
    }
    let last_image_fd = *image_fds.iter().max().expect("one image at least") as i32;
    let (handoff, carried) = environment_to_hand_over(last_image_fd + 1).map_err(&fail)?;
    let mut fds: Vec<u64> = vec![0, 1, 2];
    fds.extend(table.iter().map(|f| f.fd as u64));
    fds.extend(&image_fds);
    fds.extend(carried);
    fds.sort_unstable();
    fds.dedup();

    let message = format!("mpcrs: restart from {} failed: ", path.display()).into_bytes();
    let scratch_len = STACK_BYTES
        + 4096
        + (size_of::<Range>() * (kept.len() + 1)
            + size_of::<PlanRegion>() * regions.len()
            + size_of::<PlanPiece>() * plan_pieces.len()
            + size_of::<u64>() * (fds.len() + image_fds.len())
            + size_of::<ThreadRec>() * (recs.len() + 1)
            + message.len()
            + handoff.len()
            + size_of::<Plan>()
            + 64 * 8) as u64;
    let scratch_len = scratch_len.div_ceil(4096) * 4096;
    let scratch = map_scratch(&header, &mappings, scratch_len).map_err(&fail)?;
    let mut kept = kept;
    kept.push(Range {
        start: scratch,
        end: scratch + scratch_len,
    });
    kept.sort_by_key(|k| k.start);

    // Lay the plan out after the stack.
    let mut at = scratch + STACK_BYTES;
    let mut place = |bytes: usize| {
        at = at.div_ceil(16) * 16;
        let p = at;
        at += bytes as u64;
        p
    };
    // SAFETY: each array is copied into its own part of the fresh scratch
    // mapping, sized above.
    let plan = unsafe {
        let kept_at = copy_to(place(size_of_val(&kept[..])), &kept);
        let regions_at = copy_to(place(size_of_val(&regions[..])), &regions);
        let pieces_at = copy_to(place(size_of_val(&plan_pieces[..])), &plan_pieces);
        let image_fds_at = copy_to(place(size_of_val(&image_fds[..])), &image_fds);
        let fds_at = copy_to(place(size_of_val(&fds[..])), &fds);
        let recs_at: *mut ThreadRec = copy_to(place(size_of_val(&recs[..])), &recs);
        for i in 0..recs.len() {
            point_into(&mut *recs_at.add(i));
        }
        let main_at = match main {
            Some(m) => {
                let p: *mut ThreadRec = copy_to(place(size_of::<ThreadRec>()), &[m]);
                point_into(&mut *p);
                p as *const ThreadRec
            }
            None => std::ptr::null(),
        };
        let message_at = copy_to(place(message.len()), &message);
        let handoff_at = copy_to(place(handoff.len()), &handoff);
        let plan_at = place(size_of::<Plan>()) as *mut Plan;
        plan_at.write(Plan {
            image_fds: image_fds_at,
            image_fds_len: image_fds.len() as u64,
            pieces: pieces_at,
            pieces_len: plan_pieces.len() as u64,
            brk: header.brk,
            kept: kept_at,
            kept_len: kept.len() as u64,
            regions: regions_at,
            regions_len: regions.len() as u64,
            fds: fds_at,
            fds_len: fds.len() as u64,
            threads: recs_at,
            threads_len: recs.len() as u64,
            main: main_at,
            restores: &RESTORES as *const _ as u64,
            handoff: HANDOFF.as_ptr() as u64,
            handoff_at: handoff_at as u64,
            handoff_len: handoff.len() as u64,
            message: message_at,
            message_len: message.len() as u64,
        });
        plan_at
    };

    // From here on nothing may fail back to the caller. Every signal is held
    // off (each thread gets its own mask back from its frame) and the image's
    // dispositions are set.
    let all: u64 = !0;
    // SAFETY: rt_sigprocmask with a full 8-byte set.
    unsafe {
        call!(
            libc::SYS_rt_sigprocmask,
            libc::SIG_SETMASK,
            &all as *const u64,
            0,
            8
        )
    };
    for (sig, act) in signals.iter().enumerate() {
        if kernel_state::settable_signal(sig) {
            kernel_state::apply_signal(sig, act);
        }
    }
    // SAFETY: the stack top is inside the kept scratch mapping; the plan is complete.
    unsafe { resume::enter(plan, scratch + STACK_BYTES - 64) }
}

fn same_identity(then: &ExeIdentity, now: &ExeIdentity, what: &str) -> Result<(), String> {
    if then.same_file(now) {
        return Ok(());
    }
    Err(format!(
        "written by a different {what}: the image's is {} ({} bytes, CRC-32C {:08x}), this \
         process runs {} ({} bytes, CRC-32C {:08x})",
        then.path, then.size, then.crc, now.path, now.size, now.crc
    ))
}

/// A static of this crate as the image holds it (same address: same object,
/// same load address).
fn image_static<T>(
    s: *const T,
    read: impl Fn(u64, &mut [u8]) -> Result<(), ImageError>,
) -> Result<Box<T>, ImageError> {
    let mut b: Box<MaybeUninit<T>> = Box::new_uninit();
    // SAFETY: the buffer spans exactly size_of::<T>() bytes.
    let bytes =
        unsafe { std::slice::from_raw_parts_mut(b.as_mut_ptr() as *mut u8, size_of::<T>()) };
    bytes.fill(0);
    read(s as u64, bytes)?;
    // SAFETY: the statics read this way are integers, atomics and arrays of
    // them, for which every bit pattern is valid.
    Ok(unsafe { b.assume_init() })
}

/// The mappings the restorer runs from and keeps: the kernel's, and the
/// read-only mappings of the runtime's object. The image must have them at the
/// same places.
fn kept_mappings(
    header: &ImageHeader,
    now: &[Mapping],
    runtime: &str,
) -> Result<Vec<Range>, String> {
    let kernel = |m: &Mapping| m.skip() == Some(crate::maps::Skip::Kernel);
    let mut kept = Vec::new();
    for m in now
        .iter()
        .filter(|m| kernel(m) || (m.path == runtime && !m.write))
    {
        if m.start >= HIGHEST {
            continue; // vsyscall: above every user mapping.
        }
        let same = header.regions.iter().any(|r| {
            r.start == m.start && r.end == m.end && r.path == m.path && r.prot == m.prot()
        });
        if !same {
            return Err(format!(
                "{} is at {:#x}-{:#x} in this process but elsewhere in the image: both runs must \
                 have address randomization off (mpcrs-run turns it off)",
                m.path, m.start, m.end
            ));
        }
        kept.push(Range {
            start: m.start,
            end: m.end,
        });
    }
    for r in header.regions.iter().filter(|r| r.flags & KERNEL == 0) {
        let same_place = |k: &Range| k.start == r.start && k.end == r.end;
        if kept
            .iter()
            .any(|k| k.start < r.end && r.start < k.end && !same_place(k))
        {
            return Err(format!(
                "the image's mapping {:#x}-{:#x} {} overlaps one the restorer needs",
                r.start, r.end, r.path
            ));
        }
    }
    kept.sort_by_key(|k| k.start);
    Ok(kept)
}

/// Maps `len` bytes at an address free in the image and among `now` (mappings
/// made since are avoided by MAP_FIXED_NOREPLACE).
fn map_scratch(header: &ImageHeader, now: &[Mapping], len: u64) -> Result<u64, String> {
    let busy = |a: u64| {
        let end = a + len;
        header.regions.iter().any(|r| r.start < end && a < r.end)
            || now.iter().any(|m| m.start < end && a < m.end)
    };
    let mut at: u64 = 0x1000_0000_0000;
    while at + len < HIGHEST {
        if !busy(at) {
            // SAFETY: a fresh anonymous mapping at a free address.
            let got = unsafe {
                libc::mmap(
                    at as *mut libc::c_void,
                    len as usize,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
                    -1,
                    0,
                )
            };
            if got as u64 == at {
                return Ok(at);
            }
        }
        at += 1 << 30;
    }
    Err("no free address range for the restorer".into())
}

/// Copies `items` to `at` in the scratch mapping.
///
/// # Safety
/// `[at, at + size_of_val(items))` is writable scratch memory.
unsafe fn copy_to<T: Copy>(at: u64, items: &[T]) -> *mut T {
    let p = at as *mut T;
    // SAFETY: per the contract; source and destination do not overlap.
    unsafe { std::ptr::copy_nonoverlapping(items.as_ptr(), p, items.len()) };
    p
}

/// Points a record's affinity and name fields at its own copies.
fn point_into(rec: &mut ThreadRec) {
    rec.cpus_ptr = rec.cpus.as_ptr() as u64;
    rec.name_ptr = rec.name.as_ptr() as u64;
}

/// Pushes `piece` as the pieces of data and of zeros its image file holds:
/// the dumper leaves pages of zeros as holes, and reading a hole would commit
/// memory for every page of it (65,536 ranks' stacks: 64 GiB of address
/// space, 600 MB of it touched). Where the file system cannot tell holes
/// (no SEEK_DATA), the piece is read whole.
fn split_at_holes(piece: chain::Piece, links: &[chain::Link], out: &mut Vec<chain::Piece>) {
    let chain::Source::File { link, offset } = piece.source else {
        out.push(piece);
        return;
    };
    let ranges = crate::holes::DataRanges::new(&links[link].file);
    let file_end = offset + (piece.end - piece.start);
    let mut push = |from: u64, to: u64, data: bool| {
        if to > from {
            out.push(chain::Piece {
                start: piece.start + (from - offset),
                end: piece.start + (to - offset),
                source: if data {
                    chain::Source::File { link, offset: from }
                } else {
                    chain::Source::Zeros
                },
            });
        }
    };
    let mut at = offset;
    while at < file_end {
        let (data, hole) = match ranges.next(at) {
            Ok(Some((d, h))) => (d.min(file_end), h.min(file_end)),
            Ok(None) => (file_end, file_end),
            Err(_) => (at, file_end),
        };
        push(at, data, false);
        push(data, hole, true);
        at = hole.max(data);
    }
}
