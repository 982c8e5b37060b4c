//! The holes of sparse files: an image leaves its pages of zeros as holes (a
//! 65,536-rank process's image is 65 GB of stack address space around 600 MB
//! of data), and whoever reads an image reads its data only. Where a file's
//! data is ([`DataRanges`]), and the CRC-32C of zeros without reading them
//! ([`append_zeros`]).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::OnceLock;

/// Asks the file system where `file`'s data is (SEEK_DATA, SEEK_HOLE). That
/// moves the file's offset, which readers of an image rely on: it is put back
/// when this is dropped.
pub(crate) struct DataRanges<'a> {
    file: &'a File,
    kept: libc::off_t,
}

impl<'a> DataRanges<'a> {
    pub(crate) fn new(file: &'a File) -> DataRanges<'a> {
        // SAFETY: lseek on a descriptor the caller owns.
        let kept = unsafe { libc::lseek(file.as_raw_fd(), 0, libc::SEEK_CUR) };
        DataRanges { file, kept }
    }

    /// The next range at or after `at` that holds data, `None` if none does.
    /// A file system that cannot tell holes reports the rest of the file as
    /// data (the range's end is then `u64::MAX`).
    pub(crate) fn next(&self, at: u64) -> io::Result<Option<(u64, u64)>> {
        let fd = self.file.as_raw_fd();
        // SAFETY: lseek on a descriptor we own; the offset is put back on drop.
        let data = unsafe { libc::lseek(fd, at as libc::off_t, libc::SEEK_DATA) };
        if data < 0 {
            let e = io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::ENXIO) => Ok(None),
                Some(libc::EINVAL) => Ok(Some((at, u64::MAX))),
                _ => Err(e),
            };
        }
        // SAFETY: as above.
        let hole = unsafe { libc::lseek(fd, data, libc::SEEK_HOLE) };
        if hole < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Some((data as u64, hole as u64)))
    }
}

impl Drop for DataRanges<'_> {
    fn drop(&mut self) {
        if self.kept >= 0 {
            // SAFETY: as in `new`.
            unsafe { libc::lseek(self.file.as_raw_fd(), self.kept, libc::SEEK_SET) };
        }
    }
}

const PAGE: usize = 4096;

/// A linear map of CRC-32C registers over GF(2): column `i` is the image of
/// bit `i`. Feeding zeros to the register is such a map.
type Map = [u32; 32];

fn apply(m: &Map, x: u32) -> u32 {
    (0..32).filter(|i| x >> i & 1 == 1).fold(0, |r, i| r ^ m[i])
}

/// What feeding 2^k pages of zeros does to the register, k = 0..48 (each the
/// square of the one before; crc32c_combine per hole was 90% of a restart's
/// checking).
fn table() -> &'static [Map; 48] {
    static TABLE: OnceLock<[Map; 48]> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = [[0u32; 32]; 48];
        // The register is the complement of the CRC before and after.
        for (i, column) in t[0].iter_mut().enumerate() {
            *column = !crc32c::crc32c_append(!(1u32 << i), &[0u8; PAGE]);
        }
        for k in 1..48 {
            let prev = t[k - 1];
            t[k] = std::array::from_fn(|i| apply(&prev, prev[i]));
        }
        t
    })
}

/// `crc` extended by `len` bytes of zeros, without reading them.
pub(crate) fn append_zeros(crc: u32, len: u64) -> u32 {
    let pages = len / PAGE as u64;
    let mut register = !crc;
    for (k, map) in table().iter().enumerate() {
        if pages >> k & 1 == 1 {
            register = apply(map, register);
        }
    }
    let rest = (len % PAGE as u64) as usize;
    crc32c::crc32c_append(!register, &[0u8; PAGE][..rest])
}

#[cfg(test)]
mod tests {
    #[test]
    fn zeros_appended_without_reading_them_match_zeros_read() {
        for len in [
            0u64,
            1,
            4095,
            4096,
            4097,
            3 * 4096 + 17,
            1 << 20,
            (5 << 20) + 100,
        ] {
            let read = crc32c::crc32c_append(0xdead_beef, &vec![0u8; len as usize]);
            assert_eq!(super::append_zeros(0xdead_beef, len), read, "{len}");
        }
    }
}
