//! A file view (MPI-3.1 13.3): where the bytes of a rank's data stream lie in
//! the file. The filetype, tiled from the displacement, selects the file's
//! bytes; the data stream is those bytes in order, counted in etypes.

use mpcrs::ErrorClass;

/// A datatype as the file sees it: the bytes of one element, at offsets from
/// the element's origin, in type-map order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Bytes of data in one element.
    pub size: u64,
    /// Distance from one element's origin to the next one's.
    pub extent: i64,
    /// (offset, bytes), adjacent blocks merged.
    pub blocks: Vec<(i64, u64)>,
}

impl Layout {
    /// `size` contiguous bytes (MPI_BYTE and the predefined types).
    pub fn bytes(size: u64) -> Layout {
        Layout {
            size,
            extent: size as i64,
            blocks: if size == 0 { vec![] } else { vec![(0, size)] },
        }
    }

    /// MPI-3.1 13.3: the displacements of an etype or filetype are
    /// non-negative and non-decreasing, and its blocks do not overlap where
    /// the file is written. A violation is MPI_ERR_IO, as ROMIO reports it
    /// (programs test for that class).
    fn check_for_files(&self, what: &str, read_only: bool) -> Result<(), (ErrorClass, String)> {
        let (mut start, mut end) = (0i64, 0i64);
        for &(o, l) in &self.blocks {
            let why = if o < 0 {
                Some("a negative displacement")
            } else if o < start {
                Some("decreasing displacements")
            } else if o < end && !read_only {
                Some("overlapping blocks (allowed only in files opened MPI_MODE_RDONLY)")
            } else {
                None
            };
            if let Some(why) = why {
                return Err((
                    ErrorClass::Io,
                    format!("the {what} has {why} (MPI-3.1 13.3)"),
                ));
            }
            start = o;
            end = end.max(o + l as i64);
        }
        if self.size > 0 && self.extent <= 0 {
            return Err((
                ErrorClass::Io,
                format!("the {what}'s extent {} is not positive", self.extent),
            ));
        }
        Ok(())
    }

    fn is_contiguous(&self) -> bool {
        self.extent == self.size as i64 && self.blocks.as_slice() == [(0, self.size)]
    }
}

/// A rank's view of a file.
#[derive(Clone, Debug)]
pub struct View {
    /// Where the first tile starts, in bytes from the file's start.
    pub disp: u64,
    /// Bytes of one etype: offsets and counts of the view are in etypes.
    pub etype_size: u64,
    pub filetype: Layout,
    /// Data bytes before each block of the filetype (searching a position).
    pub(crate) before: Vec<u64>,
}

impl Default for View {
    /// The view of a newly opened file: every byte, from the start.
    fn default() -> View {
        View::new(0, &Layout::bytes(1), Layout::bytes(1), false).expect("the byte view is valid")
    }
}

impl View {
    /// Checks a view as MPI_File_set_view takes it; errors name what is wrong.
    /// Overlapping blocks are allowed in a view of a file only read.
    pub fn new(
        disp: u64,
        etype: &Layout,
        filetype: Layout,
        read_only: bool,
    ) -> Result<View, (ErrorClass, String)> {
        let etype_size = etype.size;
        etype.check_for_files("etype", read_only)?;
        filetype.check_for_files("filetype", read_only)?;
        if etype_size > 0 && filetype.size % etype_size != 0 {
            return Err((
                ErrorClass::Type,
                format!(
                    "the filetype holds {} bytes, not a whole number of etypes of {etype_size} bytes",
                    filetype.size
                ),
            ));
        }
        let mut before = Vec::with_capacity(filetype.blocks.len());
        let mut sum = 0;
        for &(_, l) in &filetype.blocks {
            before.push(sum);
            sum += l;
        }
        Ok(View {
            disp,
            etype_size,
            filetype,
            before,
        })
    }

    /// The file extents (offset, bytes) holding `len` bytes of the data
    /// stream from data byte `pos`, in stream order, adjacent ones merged.
    pub fn extents(&self, pos: u64, len: u64) -> Vec<(u64, u64)> {
        let mut out: Vec<(u64, u64)> = Vec::new();
        if len == 0 || self.filetype.size == 0 {
            return out;
        }
        let ft = &self.filetype;
        if ft.is_contiguous() {
            out.push((self.disp + pos, len));
            return out;
        }
        let mut tile = pos / ft.size;
        let within = pos % ft.size;
        // The block holding the first byte, and how far into it.
        let mut b = self.before.partition_point(|&s| s <= within) - 1;
        let mut skip = within - self.before[b];
        let mut left = len;
        while left > 0 {
            let (o, l) = ft.blocks[b];
            let take = (l - skip).min(left);
            let at = (self.disp as i64 + tile as i64 * ft.extent + o) as u64 + skip;
            match out.last_mut() {
                Some(last) if last.0 + last.1 == at => last.1 += take,
                _ => out.push((at, take)),
            }
            left -= take;
            skip = 0;
            b += 1;
            if b == ft.blocks.len() {
                b = 0;
                tile += 1;
            }
        }
        out
    }

    /// The file offset of data byte `pos` (MPI_File_get_byte_offset).
    pub fn byte_of(&self, pos: u64) -> u64 {
        let ft = &self.filetype;
        if ft.size == 0 {
            return self.disp;
        }
        let tile = pos / ft.size;
        let within = pos % ft.size;
        let b = self.before.partition_point(|&s| s <= within) - 1;
        (self.disp as i64 + tile as i64 * ft.extent + ft.blocks[b].0) as u64 + within
            - self.before[b]
    }

    /// Data bytes of the view lying before file offset `end` (the end of the
    /// file as the view sees it, for MPI_SEEK_END).
    pub fn data_before(&self, end: u64) -> u64 {
        let ft = &self.filetype;
        if end <= self.disp || ft.size == 0 {
            return 0;
        }
        let rel = end - self.disp;
        let tile = rel / ft.extent as u64;
        let into = (rel % ft.extent as u64) as i64;
        let mut data = tile * ft.size;
        for &(o, l) in &ft.blocks {
            if into > o {
                data += ((into - o) as u64).min(l);
            }
        }
        data
    }

    /// `bytes` of data as etypes, or the error when they are not whole ones.
    pub fn etypes(&self, bytes: u64) -> Result<u64, (ErrorClass, String)> {
        if self.etype_size == 0 {
            return Ok(0);
        }
        if bytes % self.etype_size != 0 {
            return Err((
                ErrorClass::Type,
                format!(
                    "{bytes} bytes of data are not a whole number of etypes of {} bytes",
                    self.etype_size
                ),
            ));
        }
        Ok(bytes / self.etype_size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    /// Every file byte of the first `tiles` tiles, in stream order.
    fn naive(v: &View, tiles: u64) -> Vec<u64> {
        let mut out = Vec::new();
        for t in 0..tiles {
            for &(o, l) in &v.filetype.blocks {
                for k in 0..l {
                    out.push((v.disp as i64 + t as i64 * v.filetype.extent + o) as u64 + k);
                }
            }
        }
        out
    }

    #[test]
    fn extents_agree_with_the_tiled_type_map() {
        let mut rng = rand::rng();
        for _ in 0..300 {
            let mut blocks = Vec::new();
            let mut at = 0i64;
            for _ in 0..rng.random_range(1..5) {
                at += rng.random_range(0..4);
                let l = rng.random_range(1..5);
                blocks.push((at, l));
                at += l as i64;
            }
            let size = blocks.iter().map(|b| b.1).sum();
            let extent = at + rng.random_range(0..4);
            let v = View::new(
                rng.random_range(0..7),
                &Layout::bytes(1),
                Layout {
                    size,
                    extent,
                    blocks,
                },
                false,
            )
            .unwrap();
            let bytes = naive(&v, 6);
            let pos = rng.random_range(0..size * 3);
            let len = rng.random_range(0..size * 2);
            let got: Vec<u64> = v
                .extents(pos, len)
                .iter()
                .flat_map(|&(o, l)| o..o + l)
                .collect();
            assert_eq!(got, bytes[pos as usize..(pos + len) as usize]);
            assert_eq!(v.byte_of(pos), bytes[pos as usize]);
            let end = bytes[pos as usize];
            assert_eq!(
                v.data_before(end),
                bytes.iter().filter(|&&b| b < end).count() as u64
            );
        }
    }

    #[test]
    fn overlaps_are_refused_unless_the_file_is_only_read() {
        let over = Layout {
            size: 4,
            extent: 3,
            blocks: vec![(0, 3), (1, 1)],
        };
        assert_eq!(
            View::new(0, &Layout::bytes(1), over.clone(), false)
                .unwrap_err()
                .0,
            ErrorClass::Io
        );
        assert!(View::new(0, &Layout::bytes(1), over, true).is_ok());
    }

    #[test]
    fn a_filetype_that_is_not_whole_etypes_is_refused() {
        let e = View::new(0, &Layout::bytes(4), Layout::bytes(6), false).unwrap_err();
        assert_eq!(e.0, ErrorClass::Type);
        let back = Layout {
            size: 2,
            extent: 8,
            blocks: vec![(4, 1), (0, 1)],
        };
        assert_eq!(
            View::new(0, &Layout::bytes(1), back.clone(), true)
                .unwrap_err()
                .0,
            ErrorClass::Io
        );
        assert_eq!(
            View::new(0, &back, Layout::bytes(2), true).unwrap_err().0,
            ErrorClass::Io
        );
    }
}
