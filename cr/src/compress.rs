//! Compression of the bytes an image stores for a region (`--compress
//! zstd[:LEVEL]`).
//!
//! A compressed region stores the same bytes an uncompressed one would (its
//! contents, or a DELTA region's extent table and pages) as zstd frames of at
//! most [`FRAME`] bytes each, then a skippable frame that pads them to a whole
//! page; its CRC-32C covers the stored (compressed) bytes. The dumper's child
//! compresses with a static context in memory it maps itself: zstd never
//! allocates there. A restore inflates the image into memory first
//! ([`inflate`]): an image of the uncompressed layout, so that everything
//! after it reads images one way.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::FromRawFd;
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::image::{self, ImageError, ImageHeader, COMPRESSED, PAGE};
use crate::sys::map_anonymous;

/// Raw bytes per frame.
pub const FRAME: usize = 1 << 20;
/// zstd's default level; `--compress zstd` uses it.
pub const DEFAULT_LEVEL: i32 = 3;

/// The start of a skippable frame (zstd's format: magic, then a 32-bit
/// length, then that many bytes every decoder skips).
const SKIPPABLE_MAGIC: u32 = 0x184D_2A50;

/// How images are compressed, from `--compress`: `zstd` or `zstd:LEVEL`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Compression {
    pub level: i32,
}

impl Compression {
    /// Parses `zstd` or `zstd:LEVEL` (LEVEL from -7 to 19), or `none`.
    pub fn parse(s: &str) -> Result<Option<Compression>, String> {
        let (name, level) = match s.split_once(':') {
            Some((n, l)) => (n, Some(l)),
            None => (s, None),
        };
        match (name, level) {
            ("none", None) => Ok(None),
            ("zstd", None) => Ok(Some(Compression {
                level: DEFAULT_LEVEL,
            })),
            ("zstd", Some(l)) => match l.parse::<i32>() {
                Ok(level) if (-7..=19).contains(&level) => Ok(Some(Compression { level })),
                _ => Err(format!(
                    "{s:?}: the zstd level must be a number from -7 to 19"
                )),
            },
            _ => Err(format!(
                "{s:?}: the compression is none, zstd or zstd:LEVEL"
            )),
        }
    }
}

/// Bytes the child maps for compression: the static context, a frame of
/// input and the compressed output of one frame plus a page.
fn context_bytes(level: i32) -> usize {
    // SAFETY: a pure function of its argument.
    unsafe { zstd_sys::ZSTD_estimateCCtxSize(level) }
}

fn output_bytes() -> usize {
    // SAFETY: a pure function of its argument.
    let bound = unsafe { zstd_sys::ZSTD_compressBound(FRAME) };
    (bound + 2 * PAGE as usize).div_ceil(PAGE as usize) * PAGE as usize
}

/// The compressing writer of the dumper's child: takes a region's bytes in
/// order and writes whole pages of frames at the region's place in the file.
pub(crate) struct Compressor {
    cctx: *mut zstd_sys::ZSTD_CCtx,
    level: i32,
    input: &'static mut [u8],
    filled: usize,
    output: &'static mut [u8],
    pending: usize,
    /// Where the next whole page of output goes, where the region began,
    /// and the CRC-32C of what it stored so far.
    at: u64,
    start: u64,
    crc: u32,
}

impl Compressor {
    /// In the child: maps its memory and makes the static context. `None`
    /// if the kernel or zstd refuses (the caller fails the image).
    pub(crate) fn new(c: Compression) -> Option<Compressor> {
        let ctx_len = context_bytes(c.level);
        let ctx = map_anonymous(ctx_len)?;
        // SAFETY: `ctx` is page-aligned (8-byte alignment needed), holds
        // ctx_len bytes and outlives the context (never unmapped).
        let cctx = unsafe { zstd_sys::ZSTD_initStaticCCtx(ctx.as_mut_ptr().cast(), ctx_len) };
        if cctx.is_null() {
            return None;
        }
        Some(Compressor {
            cctx,
            level: c.level,
            input: map_anonymous(FRAME)?,
            filled: 0,
            output: map_anonymous(output_bytes())?,
            pending: 0,
            at: 0,
            start: 0,
            crc: 0,
        })
    }

    /// Starts a region at `at` (a page boundary).
    pub(crate) fn begin(&mut self, at: u64) {
        (self.at, self.start, self.crc, self.filled, self.pending) = (at, at, 0, 0, 0);
    }

    /// Takes the region's next bytes; 0 or an errno.
    pub(crate) fn push(&mut self, fd: i32, mut bytes: &[u8]) -> i32 {
        while !bytes.is_empty() {
            let n = bytes.len().min(FRAME - self.filled);
            self.input[self.filled..self.filled + n].copy_from_slice(&bytes[..n]);
            self.filled += n;
            bytes = &bytes[n..];
            if self.filled == FRAME {
                let e = self.frame(fd);
                if e != 0 {
                    return e;
                }
            }
        }
        0
    }

    /// Compresses the input taken into one frame and writes the whole pages
    /// of output.
    fn frame(&mut self, fd: i32) -> i32 {
        let out = &mut self.output[self.pending..];
        // SAFETY: the context is a static one over memory of this child;
        // input and output are its own buffers of the lengths given.
        let n = unsafe {
            zstd_sys::ZSTD_compressCCtx(
                self.cctx,
                out.as_mut_ptr().cast(),
                out.len(),
                self.input.as_ptr().cast(),
                self.filled,
                self.level,
            )
        };
        // SAFETY: as above, a pure function of its argument.
        if unsafe { zstd_sys::ZSTD_isError(n) } != 0 {
            return libc::ENOMEM;
        }
        self.filled = 0;
        self.pending += n;
        self.write_pages(fd)
    }

    /// Writes the whole pages of pending output; what is left moves to the
    /// front.
    fn write_pages(&mut self, fd: i32) -> i32 {
        let whole = self.pending / PAGE as usize * PAGE as usize;
        if whole == 0 {
            return 0;
        }
        self.crc = crc32c::crc32c_append(self.crc, &self.output[..whole]);
        let e = crate::dump::pwrite_all(fd, &self.output[..whole], self.at);
        self.at += whole as u64;
        self.output.copy_within(whole..self.pending, 0);
        self.pending -= whole;
        e
    }

    /// Ends the region: the last frame, and a skippable frame to the end of
    /// its page. The bytes stored and their CRC-32C, or an errno.
    pub(crate) fn finish(&mut self, fd: i32) -> Result<(u64, u32), i32> {
        if self.filled > 0 {
            let e = self.frame(fd);
            if e != 0 {
                return Err(e);
            }
        }
        let page = PAGE as usize;
        let mut pad = (page - self.pending % page) % page;
        if pad != 0 && pad < 8 {
            pad += page;
        }
        if pad != 0 {
            let p = self.pending;
            self.output[p..p + 4].copy_from_slice(&SKIPPABLE_MAGIC.to_le_bytes());
            self.output[p + 4..p + 8].copy_from_slice(&((pad - 8) as u32).to_le_bytes());
            self.output[p + 8..p + pad].fill(0);
            self.pending += pad;
        }
        let e = self.write_pages(fd);
        if e != 0 {
            return Err(e);
        }
        Ok((self.at - self.start, self.crc))
    }
}

/// Whether an image stores any region compressed.
pub fn is_compressed(h: &ImageHeader) -> bool {
    h.regions.iter().any(|r| r.flags & COMPRESSED != 0)
}

/// An unnamed file to inflate an image into: in the image's directory
/// (disk, whose pages the kernel may drop: a chain inflated whole can be
/// larger than memory), else in memory.
fn scratch_beside(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    match std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_TMPFILE | libc::O_CLOEXEC)
        .mode(0o600)
        .open(dir)
    {
        Ok(f) => Ok(f),
        Err(_) => {
            let name = c"mpcrs-inflated-image";
            // SAFETY: memfd_create with a NUL-terminated name.
            let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: fd was just made and is owned here alone.
            Ok(unsafe { File::from_raw_fd(fd) })
        }
    }
}

/// An image of the uncompressed layout in an unnamed file (see `scratch_beside`), holding what the
/// compressed image at `path` stores, and its header. Every frame is checked
/// by zstd as it is decompressed; a region that does not decompress to its
/// length is named.
pub fn inflate(
    path: &Path,
    file: &File,
    h: &ImageHeader,
) -> Result<(File, ImageHeader), ImageError> {
    let fail = |problem: String| ImageError {
        file: path.to_path_buf(),
        problem,
    };
    let out = scratch_beside(path).map_err(|e| fail(format!("a file to inflate it into: {e}")))?;
    let mut header = h.clone();
    let mut at = image::metadata_size(&header.regions);
    for (i, r) in h.regions.iter().enumerate() {
        if !r.has_data() {
            continue;
        }
        let what = || format!("region {i} ({:#x}-{:#x} {})", r.start, r.end, r.path);
        let region = &mut header.regions[i];
        let mut src = FileRegion {
            file,
            at: r.data_offset,
            end: r.data_offset + r.stored,
        };
        let mut dst = Placed {
            file: &out,
            at,
            crc: 0,
        };
        let len = if r.flags & COMPRESSED != 0 {
            let mut decoder = zstd::stream::read::Decoder::new(&mut src)
                .map_err(|e| fail(format!("{}: {e}", what())))?;
            io::copy(&mut decoder, &mut dst).map_err(|e| fail(format!("{}: {e}", what())))?
        } else {
            io::copy(&mut src, &mut dst).map_err(|e| fail(format!("{}: {e}", what())))?
        };
        if !r.is_delta() && len != r.len() {
            return Err(fail(format!(
                "{} decompresses to {len} bytes, not its {}",
                what(),
                r.len()
            )));
        }
        region.flags &= !COMPRESSED;
        region.data_offset = at;
        region.stored = len;
        region.crc = dst.crc;
        at += len.div_ceil(PAGE) * PAGE;
    }
    out.set_len(at)
        .map_err(|e| fail(format!("inflated copy: {e}")))?;
    let mut meta = image::encode(&header);
    image::seal(&mut meta);
    out.write_all_at(&meta, 0)
        .map_err(|e| fail(format!("inflated copy: {e}")))?;
    Ok((out, header))
}

/// Bytes `[at, end)` of a file, read in order.
struct FileRegion<'f> {
    file: &'f File,
    at: u64,
    end: u64,
}

impl Read for FileRegion<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = (self.end - self.at).min(buf.len() as u64) as usize;
        if n == 0 {
            return Ok(0);
        }
        let n = self.file.read_at(&mut buf[..n], self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

/// Writes in order from `at` of a file, checksumming.
struct Placed<'f> {
    file: &'f File,
    at: u64,
    crc: u32,
}

impl Write for Placed<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write_all_at(buf, self.at)?;
        self.crc = crc32c::crc32c_append(self.crc, buf);
        self.at += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_parse_and_bad_ones_are_named() {
        assert_eq!(
            Compression::parse("zstd").unwrap(),
            Some(Compression { level: 3 })
        );
        assert_eq!(
            Compression::parse("zstd:-3").unwrap(),
            Some(Compression { level: -3 })
        );
        assert_eq!(Compression::parse("none").unwrap(), None);
        assert!(Compression::parse("zstd:30")
            .unwrap_err()
            .contains("from -7 to 19"));
        assert!(Compression::parse("gzip")
            .unwrap_err()
            .contains("none, zstd or zstd:LEVEL"));
    }
}
