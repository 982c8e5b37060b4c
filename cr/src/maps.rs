//! The mappings of this process (/proc/self/maps) and which of them an image
//! holds.

use std::io;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    pub start: u64,
    pub end: u64,
    pub read: bool,
    pub write: bool,
    pub exec: bool,
    pub shared: bool,
    pub inode: u64,
    pub path: String,
}

/// Why a mapping's contents are left out of an image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    /// The kernel provides it in every process (vdso, vvar, vsyscall).
    Kernel,
    /// A device (its contents are not memory of ours).
    Device,
    /// A shared-memory rail between processes: closed before a checkpoint and
    /// re-created after a restart.
    Rail,
    /// No read permission (guard pages): recorded without contents.
    Unreadable,
}

/// Prefix of the POSIX shared-memory objects of the shm rail (net/rails).
pub const RAIL_SHM_PREFIX: &str = "/dev/shm/mpcrs-";

impl Mapping {
    pub fn len(&self) -> u64 {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }

    pub fn skip(&self) -> Option<Skip> {
        if matches!(
            self.path.as_str(),
            "[vdso]" | "[vvar]" | "[vsyscall]" | "[vvar_vclock]"
        ) {
            return Some(Skip::Kernel);
        }
        if self.path.starts_with(RAIL_SHM_PREFIX) {
            return Some(Skip::Rail);
        }
        if self.path.starts_with("/dev/")
            && !self.path.starts_with("/dev/shm/")
            && !self.path.starts_with("/dev/zero")
        {
            return Some(Skip::Device);
        }
        if !self.read {
            return Some(Skip::Unreadable);
        }
        None
    }

    /// Protection bits as mmap takes them.
    pub fn prot(&self) -> u32 {
        (self.read as u32 * libc::PROT_READ as u32)
            | (self.write as u32 * libc::PROT_WRITE as u32)
            | (self.exec as u32 * libc::PROT_EXEC as u32)
    }
}

/// Parses one line of /proc/PID/maps.
pub fn parse_line(line: &str) -> Option<Mapping> {
    let mut f = line.split_ascii_whitespace();
    let (start, end) = f.next()?.split_once('-')?;
    let perms = f.next()?.as_bytes();
    let _offset = f.next()?;
    let _dev = f.next()?;
    let inode = f.next()?.parse().ok()?;
    // The path may contain spaces: it is the rest of the line after the inode.
    let path = line
        .splitn(6, |c: char| c.is_ascii_whitespace())
        .nth(5)
        .map(|p| p.trim_start().to_string())
        .unwrap_or_default();
    if perms.len() < 4 {
        return None;
    }
    Some(Mapping {
        start: u64::from_str_radix(start, 16).ok()?,
        end: u64::from_str_radix(end, 16).ok()?,
        read: perms[0] == b'r',
        write: perms[1] == b'w',
        exec: perms[2] == b'x',
        shared: perms[3] == b's',
        inode,
        path,
    })
}

/// The mappings of this process, in address order.
pub fn own_mappings() -> io::Result<Vec<Mapping>> {
    parse_maps(&std::fs::read("/proc/self/maps")?)
}

/// Parses the whole text of a /proc/PID/maps file.
pub fn parse_maps(text: &[u8]) -> io::Result<Vec<Mapping>> {
    let text = String::from_utf8_lossy(text);
    text.lines()
        .map(|l| {
            parse_line(l).ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("/proc/self/maps: unreadable line {l:?}"),
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_parse_and_classify() {
        let m =
            parse_line("7f00a000-7f00b000 r-xp 00001000 08:01 1234   /usr/lib/lib with space.so")
                .unwrap();
        assert_eq!((m.start, m.end, m.len()), (0x7f00a000, 0x7f00b000, 0x1000));
        assert!(m.read && m.exec && !m.write && !m.shared);
        assert_eq!(m.path, "/usr/lib/lib with space.so");
        assert_eq!(m.skip(), None);
        let anon = parse_line("55550000-55551000 rw-p 00000000 00:00 0").unwrap();
        assert_eq!((anon.path.as_str(), anon.skip()), ("", None));
        let kinds = [
            (
                "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0  [vsyscall]",
                Some(Skip::Kernel),
            ),
            (
                "7ffd1000-7ffd3000 r-xp 00000000 00:00 0  [vdso]",
                Some(Skip::Kernel),
            ),
            (
                "7f000000-7f100000 rw-s 00000000 00:1a 77  /dev/shm/mpcrs-ring-12",
                Some(Skip::Rail),
            ),
            (
                "7f000000-7f100000 rw-s 00000000 00:05 9  /dev/dri/card0",
                Some(Skip::Device),
            ),
            (
                "7f000000-7f001000 ---p 00000000 00:00 0",
                Some(Skip::Unreadable),
            ),
        ];
        for (line, skip) in kinds {
            assert_eq!(parse_line(line).unwrap().skip(), skip, "{line}");
        }
    }

    #[test]
    fn this_process_has_a_stack_and_a_heap() {
        let maps = own_mappings().unwrap();
        assert!(maps
            .iter()
            .any(|m| m.path == "[stack]" && m.skip().is_none()));
        let local = 0u8;
        let at = &local as *const u8 as u64;
        assert!(maps.iter().any(|m| m.start <= at && at < m.end));
    }
}
