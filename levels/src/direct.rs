//! Direct I/O for the levels' bulk copies (partner copies, parity inputs, the
//! L4 flush): their data goes between a reused, aligned buffer and the device,
//! bypassing the page cache. Buffered, every copy read an L1 image the dumper
//! had written around the cache back through it and wrote its copy into new
//! cache pages: two kernel copies into pages touched for the first time, plus
//! their writeback, all on the CPUs the ranks run on (reading images back was
//! 5.6% of all CPU time of heat -n 8 -p 2 with partner copies on 2 CPUs).
//!
//! Where the file system refuses O_DIRECT, or a piece is not aligned (an
//! image's last bytes, a buffer of the caller's), the same calls go through
//! the page cache instead: the result is the same file.

use std::alloc::{self, Layout};
use std::fs::File;
use std::io;
use std::ops::{Deref, DerefMut};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering};

/// Alignment of direct I/O's addresses, offsets and lengths: the largest
/// logical block size of the devices in use.
pub const ALIGN: usize = 4096;

/// A zeroed buffer whose address and length are multiples of [`ALIGN`].
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the buffer owns its allocation alone, as a Vec<u8> would.
unsafe impl Send for AlignedBuf {}
// SAFETY: shared access only reads through `Deref`, as for a Vec<u8>.
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// A buffer of at least `len` bytes (rounded up to [`ALIGN`]).
    pub fn new(len: usize) -> AlignedBuf {
        let len = len.max(1).next_multiple_of(ALIGN);
        let layout = Self::layout(len);
        // SAFETY: `layout` has a non-zero size.
        let ptr = unsafe { alloc::alloc_zeroed(layout) };
        let Some(ptr) = NonNull::new(ptr) else {
            alloc::handle_alloc_error(layout)
        };
        AlignedBuf { ptr, len }
    }

    fn layout(len: usize) -> Layout {
        Layout::from_size_align(len, ALIGN).expect("a buffer size below isize::MAX")
    }
}

impl Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: `ptr` points to `len` initialized (zeroed) bytes owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`, borrowed mutably through `&mut self`.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), Self::layout(self.len)) }
    }
}

/// A file read or written with direct I/O where possible (see the module).
pub struct DirectFile {
    file: File,
    /// Whether the descriptor still has O_DIRECT set.
    direct: AtomicBool,
}

impl DirectFile {
    /// Opens `path` for reading.
    pub fn open(path: &Path) -> io::Result<DirectFile> {
        Self::with(path, |o| {
            o.read(true);
        })
    }

    /// Opens `path` for reading; returns its size too.
    pub fn open_sized(path: &Path) -> io::Result<(u64, DirectFile)> {
        let f = Self::open(path)?;
        Ok((f.file.metadata()?.len(), f))
    }

    /// Creates `path` for writing (truncated if it exists).
    pub fn create(path: &Path) -> io::Result<DirectFile> {
        // Checkpoint data: this user's only (0600, whatever the umask).
        Self::with(path, |o| {
            o.write(true).create(true).truncate(true).mode(0o600);
        })
    }

    fn with(path: &Path, how: impl Fn(&mut std::fs::OpenOptions)) -> io::Result<DirectFile> {
        let mut o = std::fs::OpenOptions::new();
        how(&mut o);
        match o.clone().custom_flags(libc::O_DIRECT).open(path) {
            Ok(file) => Ok(DirectFile {
                file,
                direct: AtomicBool::new(true),
            }),
            // A file system without direct I/O (tmpfs before Linux 6.6).
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Ok(DirectFile {
                file: o.open(path)?,
                direct: AtomicBool::new(false),
            }),
            Err(e) => Err(e),
        }
    }

    pub fn file(&self) -> &File {
        &self.file
    }

    /// Whether a piece at `pos` from `buf` of `len` bytes can go direct.
    fn aligned(&self, buf: *const u8, len: usize, pos: u64) -> bool {
        self.direct.load(Ordering::Relaxed)
            && (buf as usize).is_multiple_of(ALIGN)
            && len.is_multiple_of(ALIGN)
            && pos.is_multiple_of(ALIGN as u64)
    }

    /// Goes through the page cache from now on (for a piece that is not
    /// aligned).
    fn buffered(&self) -> io::Result<()> {
        if !self.direct.swap(false, Ordering::Relaxed) {
            return Ok(());
        }
        let fd = self.file.as_raw_fd();
        // SAFETY: fcntl on a descriptor this value owns.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        // SAFETY: as above.
        if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_DIRECT) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Reads exactly `want` bytes at `pos` into `buf[..want]`. Direct when
    /// `buf` is aligned and long enough for `want` rounded up to [`ALIGN`]
    /// (an [`AlignedBuf`] of at least `want` bytes is).
    pub fn read_exact_at(&self, buf: &mut [u8], want: usize, pos: u64) -> io::Result<()> {
        let mut got = 0;
        while got < want {
            let at = pos + got as u64;
            let len = (want - got).next_multiple_of(ALIGN);
            let rest = &mut buf[got..];
            let n = if rest.len() >= len && self.aligned(rest.as_ptr(), len, at) {
                // Past the end of the file, a direct read returns what is there.
                self.file.read_at(&mut rest[..len], at)?
            } else {
                self.buffered()?;
                self.file.read_at(&mut rest[..want - got], at)?
            };
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("{} bytes missing at offset {at}", want - got),
                ));
            }
            got += n.min(want - got);
        }
        Ok(())
    }

    /// Writes all of `data` at `pos`: its aligned part direct, the rest
    /// through the page cache.
    pub fn write_all_at(&self, data: &[u8], pos: u64) -> io::Result<()> {
        let whole = if self.aligned(data.as_ptr(), 0, pos) {
            data.len() / ALIGN * ALIGN
        } else {
            0
        };
        if whole > 0 {
            self.file.write_all_at(&data[..whole], pos)?;
        }
        if whole < data.len() {
            self.buffered()?;
            self.file.write_all_at(&data[whole..], pos + whole as u64)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("mpcrs-direct-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn pattern(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 + i / 4096) as u8).collect()
    }

    #[test]
    fn aligned_buffers_are_aligned_and_zeroed() {
        let b = AlignedBuf::new(5000);
        assert_eq!(b.len(), 2 * ALIGN);
        assert!((b.as_ptr() as usize).is_multiple_of(ALIGN));
        assert!(b.iter().all(|&x| x == 0));
    }

    #[test]
    fn a_file_of_any_length_round_trips_in_aligned_and_unaligned_pieces() {
        let d = scratch("round-trip");
        for len in [0, 1, 4095, 4096, 3 * 4096 + 17, (1 << 20) + 4096 * 3 + 1] {
            let data = pattern(len);
            let path = d.join(format!("f{len}"));
            let out = DirectFile::create(&path).unwrap();
            let mut buf = AlignedBuf::new(1 << 20);
            let mut at = 0;
            // Pieces as a copy writes them: whole aligned chunks, then the tail.
            for piece in data.chunks(1 << 20) {
                buf[..piece.len()].copy_from_slice(piece);
                out.write_all_at(&buf[..piece.len()], at).unwrap();
                at += piece.len() as u64;
            }
            out.file().sync_all().unwrap();
            drop(out);
            assert_eq!(std::fs::read(&path).unwrap(), data, "written, length {len}");
            let src = DirectFile::open(&path).unwrap();
            let mut back = Vec::new();
            let mut at = 0;
            while at < len {
                let want = (len - at).min(1 << 20);
                src.read_exact_at(&mut buf, want, at as u64).unwrap();
                back.extend_from_slice(&buf[..want]);
                at += want;
            }
            assert_eq!(back, data, "read, length {len}");
        }
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn unaligned_buffers_and_offsets_go_through_the_page_cache() {
        let d = scratch("unaligned");
        let path = d.join("f");
        let data = pattern(3 * ALIGN);
        let out = DirectFile::create(&path).unwrap();
        // A Vec's address is not aligned in general, and offset 1 never is.
        out.write_all_at(&data[1..], 1).unwrap();
        out.write_all_at(&data[..1], 0).unwrap();
        drop(out);
        let src = DirectFile::open(&path).unwrap();
        let mut v = vec![0u8; 100];
        src.read_exact_at(&mut v, 100, 4000).unwrap();
        assert_eq!(v, data[4000..4100]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn reading_past_the_end_says_how_much_is_missing() {
        let d = scratch("short");
        let path = d.join("f");
        std::fs::write(&path, pattern(5000)).unwrap();
        let src = DirectFile::open(&path).unwrap();
        let mut buf = AlignedBuf::new(8192);
        let e = src.read_exact_at(&mut buf, 6000, 0).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
        assert!(
            e.to_string().contains("1000 bytes missing at offset 5000"),
            "{e}"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }
}
