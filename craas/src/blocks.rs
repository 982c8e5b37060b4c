//! Arrays are compared block by block: a 64-bit hash per block of the last
//! committed array, so a commit sends only the blocks whose hash changed (as
//! FTI's differential checkpoints do). A block is 64 KiB: small enough that
//! a tile row of a matrix is a few blocks, large enough that hashes are
//! 1/8192 of the data.

/// The size of a block, in bytes (the last block of an array may be shorter).
pub const BLOCK: usize = 64 * 1024;

/// The hash of every block of `data`.
pub fn hashes(data: &[u8]) -> Vec<u64> {
    data.chunks(BLOCK).map(xxhash_rust::xxh3::xxh3_64).collect()
}

/// The number of blocks of an array of `len` bytes.
pub fn count(len: usize) -> usize {
    len.div_ceil(BLOCK)
}

/// The byte range of block `i` of an array of `len` bytes.
pub fn range(i: usize, len: usize) -> std::ops::Range<usize> {
    let start = i * BLOCK;
    start.min(len)..(start + BLOCK).min(len)
}

/// The blocks of `data` that differ from those hashed in `before` (every
/// block when the length changed), and the hashes of `data`.
pub fn changed(before: Option<(&[u64], usize)>, data: &[u8]) -> (Vec<u32>, Vec<u64>) {
    let now = hashes(data);
    let changed = match before {
        Some((old, len)) if len == data.len() => now
            .iter()
            .zip(old)
            .enumerate()
            .filter(|(_, (a, b))| a != b)
            .map(|(i, _)| i as u32)
            .collect(),
        _ => (0..now.len() as u32).collect(),
    };
    (changed, now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_changed_blocks_are_named() {
        let mut data = vec![7u8; 3 * BLOCK + 10];
        let (all, h) = changed(None, &data);
        assert_eq!(all, vec![0, 1, 2, 3]);
        data[BLOCK + 5] = 1;
        data[3 * BLOCK + 9] = 1;
        let (some, _) = changed(Some((&h, data.len())), &data);
        assert_eq!(some, vec![1, 3]);
        let (grown, _) = changed(Some((&h, data.len())), &data[..BLOCK]);
        assert_eq!(grown, vec![0]);
        assert_eq!(range(3, data.len()), 3 * BLOCK..3 * BLOCK + 10);
        assert_eq!(count(0), 0);
    }
}
