//! The in-process dumper: `fork()`, and the single-threaded child writes the
//! image of the copy-on-write snapshot while the parent goes on.
//!
//! Everything that allocates (reading /proc/self/maps, laying out the image,
//! encoding the region table, opening the file) happens in the parent before the
//! fork. The child only computes checksums, issues `pwrite`s straight from memory
//! and `fsync`, and leaves with `_exit`: no allocation, no lock, nothing another
//! thread of the parent could have held at the fork.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::image::{self, ExeIdentity, ImageError, ImageHeader, Region, HAS_DATA, SHARED};
use crate::maps::{own_mappings, Skip};

/// What one dump did.
#[derive(Debug, Clone)]
pub struct DumpReport {
    pub path: PathBuf,
    /// Image size, bytes actually stored (pages of zeros are holes), and memory
    /// contents in it.
    pub bytes: u64,
    pub stored_bytes: u64,
    pub data_bytes: u64,
    pub regions: usize,
    /// How long the calling thread was held: mappings read, table built, fork.
    pub stall: Duration,
    /// From the fork to the image being durable.
    pub write: Duration,
}

impl DumpReport {
    /// Bytes stored per second of writing (what the file system took).
    pub fn write_mb_per_s(&self) -> f64 {
        self.stored_bytes as f64 / 1e6 / self.write.as_secs_f64().max(1e-9)
    }
}

fn exe_identity() -> Result<&'static ExeIdentity, String> {
    static EXE: OnceLock<Result<ExeIdentity, String>> = OnceLock::new();
    EXE.get_or_init(|| {
        let path =
            std::fs::read_link("/proc/self/exe").map_err(|e| format!("/proc/self/exe: {e}"))?;
        ExeIdentity::of(&path).map_err(|e| format!("{}: {e}", path.display()))
    })
    .as_ref()
    .map_err(|e| e.clone())
}

/// The regions of this process an image records, in address order.
fn regions() -> std::io::Result<Vec<Region>> {
    Ok(own_mappings()?
        .into_iter()
        .filter_map(|m| {
            let data = match m.skip() {
                None => true,
                Some(Skip::Unreadable) => false,
                Some(Skip::Kernel | Skip::Device | Skip::Rail) => return None,
            };
            Some(Region {
                start: m.start,
                end: m.end,
                prot: m.prot(),
                flags: if m.shared { SHARED } else { 0 } | if data { HAS_DATA } else { 0 },
                data_offset: 0,
                crc: 0,
                path: m.path,
            })
        })
        .collect())
}

/// Exit statuses of the child.
const CHILD_SHORT_WRITE: i32 = 250;

/// Writes `len` bytes from `src` at `offset`, checksumming them on the way.
/// Returns 0 or an errno. Runs in the forked child: no allocation.
fn write_region(fd: i32, src: u64, len: u64, offset: u64, crc: &mut u32) -> i32 {
    const CHUNK: u64 = 8 << 20;
    let mut done = 0;
    while done < len {
        let n = (len - done).min(CHUNK);
        let ptr = (src + done) as *const u8;
        // SAFETY: [src, src+len) is a readable mapping of the snapshot (it was
        // listed readable in /proc/self/maps before the fork, and the child
        // has nothing that could unmap it).
        let bytes = unsafe { std::slice::from_raw_parts(ptr, n as usize) };
        *crc = crc32c::crc32c_append(*crc, bytes);
        // Pages of zeros are not written: the file was sized beforehand, so they
        // stay holes that read back as zeros (untouched stacks and heaps).
        let mut at = 0usize;
        while at < bytes.len() {
            let page_end = |p: usize| (p + PAGE_BYTES).min(bytes.len());
            if is_zero(&bytes[at..page_end(at)]) {
                at = page_end(at);
                continue;
            }
            let mut run_end = page_end(at);
            while run_end < bytes.len() && !is_zero(&bytes[run_end..page_end(run_end)]) {
                run_end = page_end(run_end);
            }
            let e = pwrite_all(fd, &bytes[at..run_end], offset + done + at as u64);
            if e != 0 {
                return e;
            }
            at = run_end;
        }
        done += n;
    }
    0
}

const PAGE_BYTES: usize = 4096;

fn is_zero(page: &[u8]) -> bool {
    // SAFETY: u64 has no invalid bit patterns; align_to splits off the unaligned ends.
    let (head, words, tail) = unsafe { page.align_to::<u64>() };
    head.iter().all(|&b| b == 0) && words.iter().all(|&w| w == 0) && tail.iter().all(|&b| b == 0)
}

/// Writes all of `bytes` at `offset`; 0 or an errno. No allocation.
fn pwrite_all(fd: i32, bytes: &[u8], offset: u64) -> i32 {
    let mut at = 0usize;
    while at < bytes.len() {
        // A raw system call: glibc's pwrite is a cancellation point and writes
        // the thread descriptor, which lives in a mapping being dumped.
        // SAFETY: pwrite64 reads from a valid slice into an open descriptor.
        let w = unsafe {
            libc::syscall(
                libc::SYS_pwrite64,
                fd,
                bytes[at..].as_ptr(),
                bytes.len() - at,
                (offset + at as u64) as libc::off_t,
            )
        };
        if w < 0 {
            let e = std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO);
            if e == libc::EINTR {
                continue;
            }
            return e;
        }
        if w == 0 {
            return CHILD_SHORT_WRITE;
        }
        at += w as usize;
    }
    0
}

/// The child's whole work; returns its exit status.
fn child_writes(fd: i32, regions: &[Region], meta: &mut [u8]) -> i32 {
    for (i, r) in regions.iter().enumerate() {
        if !r.has_data() {
            continue;
        }
        let mut crc = 0;
        let e = write_region(fd, r.start, r.len(), r.data_offset, &mut crc);
        if e != 0 {
            return e;
        }
        let at = image::region_crc_at(i);
        meta[at..at + 4].copy_from_slice(&crc.to_le_bytes());
    }
    image::seal(meta);
    let mut crc_unused = 0;
    let e = write_region(
        fd,
        meta.as_ptr() as u64,
        meta.len() as u64,
        0,
        &mut crc_unused,
    );
    if e != 0 {
        return e;
    }
    // SAFETY: fsync (raw, as above) on the descriptor opened before the fork.
    if unsafe { libc::syscall(libc::SYS_fsync, fd) } != 0 {
        return std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO);
    }
    0
}

/// Dumps this process into the image file `path` and waits until it is durable.
pub fn dump_image(path: &Path) -> Result<DumpReport, ImageError> {
    start_dump(path)?.wait()
}

/// A dump whose writer (the forked child) may still be running.
pub struct PendingDump {
    path: PathBuf,
    tmp: PathBuf,
    pid: libc::pid_t,
    fd: i32,
    bytes: u64,
    data_bytes: u64,
    regions: usize,
    stall: Duration,
    forked: Instant,
}

/// Forks the image writer for `path` (written as `path.tmp`, made durable, then
/// renamed by [`PendingDump::wait`]) and returns as soon as the fork does: the
/// caller's memory is from then on free to change.
pub fn start_dump(path: &Path) -> Result<PendingDump, ImageError> {
    let fail = |problem: String| ImageError {
        file: path.to_path_buf(),
        problem,
    };
    let started = Instant::now();
    let exe = exe_identity().map_err(|e| fail(format!("executable identity: {e}")))?;
    let mut regions = regions().map_err(|e| fail(format!("reading the mappings: {e}")))?;
    let bytes = image::lay_out(&mut regions);
    let data_bytes = regions
        .iter()
        .filter(|r| r.has_data())
        .map(|r| r.len())
        .sum();
    // SAFETY: sbrk(0) only reads the current program break.
    let brk = unsafe { libc::sbrk(0) } as u64;
    let header = ImageHeader {
        exe: exe.clone(),
        brk,
        regions,
    };
    let mut meta = image::encode(&header);
    let tmp = PathBuf::from(format!("{}.tmp", path.display()));
    let ctmp = CString::new(tmp.as_os_str().as_bytes())
        .map_err(|_| fail("path holds a NUL byte".into()))?;
    // SAFETY: open with a NUL-terminated path.
    let fd = unsafe {
        libc::open(
            ctmp.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_CLOEXEC,
            0o600,
        )
    };
    if fd < 0 {
        return Err(fail(format!(
            "cannot create {}: {}",
            tmp.display(),
            std::io::Error::last_os_error()
        )));
    }
    // Full length now: pages of zeros are left as holes by the writer.
    // SAFETY: ftruncate on the descriptor just opened.
    if unsafe { libc::ftruncate(fd, bytes as libc::off_t) } != 0 {
        let e = std::io::Error::last_os_error();
        // SAFETY: closing the descriptor this function opened.
        unsafe { libc::close(fd) };
        let _ = std::fs::remove_file(&tmp);
        return Err(fail(format!("sizing {}: {e}", tmp.display())));
    }
    // The child works on a stack of its own, mapped after the mappings were read
    // and so outside every region: the calling thread's stack is in the image and
    // must not change while it is checksummed and written.
    let child_stack = match corosensei::stack::DefaultStack::new(256 * 1024) {
        Ok(s) => s,
        Err(e) => {
            // SAFETY: closing the descriptor this function opened.
            unsafe { libc::close(fd) };
            let _ = std::fs::remove_file(&tmp);
            return Err(fail(format!("stack for the image writer: {e}")));
        }
    };
    // SAFETY: the child runs only `child_writes` (no allocation, no locks) and
    // leaves with _exit, so no state shared with the parent's other threads is
    // touched; the parent closes its copy of the descriptor after the child ends.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let regions = &header.regions;
        let meta = &mut meta;
        let status = corosensei::on_stack(child_stack, move || child_writes(fd, regions, meta));
        // SAFETY: _exit ends the child without running the parent's destructors.
        unsafe { libc::_exit(status) };
    }
    drop(child_stack);
    let stall = started.elapsed();
    let forked = Instant::now();
    if pid < 0 {
        // SAFETY: closing the descriptor this function opened.
        unsafe { libc::close(fd) };
        let _ = std::fs::remove_file(&tmp);
        return Err(fail(format!("fork: {}", std::io::Error::last_os_error())));
    }
    Ok(PendingDump {
        path: path.to_path_buf(),
        tmp,
        pid,
        fd,
        bytes,
        data_bytes,
        regions: header.regions.len(),
        stall,
        forked,
    })
}

impl PendingDump {
    /// Waits for the writer; on success the image is durable under its name.
    pub fn wait(self) -> Result<DumpReport, ImageError> {
        let PendingDump {
            path,
            tmp,
            pid,
            fd,
            bytes,
            data_bytes,
            regions,
            stall,
            forked,
        } = self;
        let path = path.as_path();
        let fail = |problem: String| ImageError {
            file: path.to_path_buf(),
            problem,
        };
        let mut status = 0;
        loop {
            // SAFETY: waiting for the child this function forked.
            let r = unsafe { libc::waitpid(pid, &mut status, 0) };
            if r == pid {
                break;
            }
            if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                break;
            }
        }
        // SAFETY: closing the descriptor this function opened.
        unsafe { libc::close(fd) };
        let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
        if !ok {
            let _ = std::fs::remove_file(&tmp);
            let why = if libc::WIFEXITED(status) {
                match libc::WEXITSTATUS(status) {
                    CHILD_SHORT_WRITE => "the file system took no more bytes".to_string(),
                    e => std::io::Error::from_raw_os_error(e).to_string(),
                }
            } else {
                format!("the writer was killed by signal {}", libc::WTERMSIG(status))
            };
            return Err(fail(format!("writing the image failed: {why}")));
        }
        std::fs::rename(&tmp, path)
            .map_err(|e| fail(format!("rename from {}: {e}", tmp.display())))?;
        if let Some(dir) = path.parent() {
            crate::commit::sync_dir(dir)
                .map_err(|e| fail(format!("fsync of the directory: {e}")))?;
        }
        let write = forked.elapsed();
        let stored_bytes = std::fs::metadata(path)
            .map(|m| std::os::unix::fs::MetadataExt::blocks(&m) * 512)
            .unwrap_or(bytes)
            .min(bytes);
        Ok(DumpReport {
            path: path.to_path_buf(),
            bytes,
            stored_bytes,
            data_bytes,
            regions,
            stall,
            write,
        })
    }
}
