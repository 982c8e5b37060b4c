//! Where a job's ranks are: blocks of ranks per process, and the name of the
//! host a process runs on. The launcher places processes by it and each
//! process finds its own ranks by it, so both must compute the same.

use std::ops::Range;

/// Ranks of each of `processes` processes: contiguous blocks, the first
/// `ranks % processes` processes holding one rank more.
pub fn rank_blocks(ranks: usize, processes: usize) -> Vec<Range<usize>> {
    let (base, extra) = (ranks / processes, ranks % processes);
    let mut start = 0;
    (0..processes)
        .map(|p| {
            let len = base + usize::from(p < extra);
            start += len;
            start - len..start
        })
        .collect()
}

/// This host's name (gethostname).
pub fn local_hostname() -> String {
    let mut buf = [0 as libc::c_char; 256];
    // SAFETY: gethostname writes at most len bytes; the last stays NUL.
    unsafe { libc::gethostname(buf.as_mut_ptr(), buf.len() - 1) };
    // SAFETY: NUL-terminated.
    unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_contiguous_and_the_first_processes_hold_the_remainder() {
        assert_eq!(rank_blocks(10, 4), vec![0..3, 3..6, 6..8, 8..10]);
        assert_eq!(rank_blocks(4, 4), vec![0..1, 1..2, 2..3, 3..4]);
        assert_eq!(rank_blocks(64, 1), vec![0..64]);
    }
}
