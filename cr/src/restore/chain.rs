//! The images a restore reads: the newest one and, when it is incremental,
//! its parents down to a full image; and, per region, where each page comes
//! from: the newest image that stores it (each page is read once).

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::image::{self, Extent, ImageError, ImageHeader, Region, EXTENT_DATA};

/// Names the parent images of an incremental image to restore, newest
/// first, one path per line (set by the launcher, which may have recovered
/// them from other levels). Without it, a parent of `DIR/epoch-K/NAME` is
/// looked for at `DIR/epoch-J/NAME`.
pub const CHAIN_ENV: &str = mpcrs_settings::variables::RESTORE_CHAIN.name;

/// One image of a chain, opened and verified.
pub(super) struct Link {
    pub path: PathBuf,
    pub file: File,
    pub header: ImageHeader,
    /// Per region, a DELTA region's extents with where each one's data is
    /// in the file (read once: a restore looks them up for every gap of
    /// the images above); empty for other regions.
    extents: Vec<Vec<(Extent, u64)>>,
}

/// The extents of every DELTA region of an opened image, each with the
/// offset of its data.
fn extents_of(
    path: &Path,
    file: &File,
    h: &ImageHeader,
) -> Result<Vec<Vec<(Extent, u64)>>, ImageError> {
    h.regions
        .iter()
        .map(|r| {
            if !r.is_delta() {
                return Ok(Vec::new());
            }
            let extents = image::read_extents(path, file, r)?;
            let mut data = r.data_offset + image::extent_table_len(extents.len());
            Ok(extents
                .into_iter()
                .map(|x| {
                    let at = data;
                    if x.kind == EXTENT_DATA {
                        data += x.len;
                    }
                    (x, at)
                })
                .collect())
        })
        .collect()
}

/// Where a piece of memory comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Source {
    /// Link `link` of the chain at `offset`.
    File {
        link: usize,
        offset: u64,
    },
    Zeros,
}

/// A piece of a region: `[start, end)` from `source`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Piece {
    pub start: u64,
    pub end: u64,
    pub source: Source,
}

/// The images of a chain, newest first, each verified whole and each the
/// parent its child names.
pub(super) fn open(newest: &Path) -> Result<Vec<Link>, ImageError> {
    let given: Vec<PathBuf> = std::env::var(CHAIN_ENV)
        .ok()
        .map(|v| {
            v.lines()
                .filter(|l| !l.is_empty())
                .map(PathBuf::from)
                .collect()
        })
        .unwrap_or_default();
    let vouched = std::env::var(super::vouch::VOUCHED_ENV).unwrap_or_default();
    let mut links = Vec::new();
    let mut path = newest.to_path_buf();
    loop {
        let contents = if super::vouch::is_vouched(&vouched, &path) {
            image::Contents::Trusted
        } else {
            image::Contents::Checksummed
        };
        let header = image::verify_with(&path, contents)?.header;
        let file = File::open(&path).map_err(|e| ImageError {
            file: path.clone(),
            problem: format!("cannot open: {e}"),
        })?;
        // A compressed image is read through its inflated copy in memory.
        let (file, header) = if crate::compress::is_compressed(&header) {
            crate::compress::inflate(&path, &file, &header)?
        } else {
            (file, header)
        };
        let parent = header.parent;
        let extents = extents_of(&path, &file, &header)?;
        links.push(Link {
            path: path.clone(),
            file,
            header,
            extents,
        });
        let Some(parent) = parent else {
            return Ok(links);
        };
        let next = match given.get(links.len() - 1) {
            Some(p) => p.clone(),
            None => sibling(&path, parent.epoch).ok_or_else(|| ImageError {
                file: path.clone(),
                problem: format!("no epoch-{} beside it for its parent image", parent.epoch),
            })?,
        };
        let (_, h) = image::read_header(&next).map_err(|e| ImageError {
            file: path.clone(),
            problem: format!("its parent image (epoch {}): {e}", parent.epoch),
        })?;
        if h.meta_crc != parent.meta_crc {
            return Err(ImageError {
                file: path.clone(),
                problem: format!(
                    "{} is not its parent image (metadata CRC-32C {:08x}, the incremental image \
                     applies to {:08x})",
                    next.display(),
                    h.meta_crc,
                    parent.meta_crc
                ),
            });
        }
        path = next;
    }
}

/// `DIR/epoch-J/NAME` for `DIR/epoch-K/NAME`.
pub fn sibling(image: &Path, epoch: u64) -> Option<PathBuf> {
    let name = image.file_name()?;
    let root = image.parent()?.parent()?;
    Some(root.join(crate::commit::epoch_name(epoch)).join(name))
}

/// Where the pages of `[start, end)` come from, looking at link `i` and,
/// for what it does not store, at its parents.
pub(super) fn resolve(
    links: &[Link],
    i: usize,
    start: u64,
    end: u64,
    out: &mut Vec<Piece>,
) -> Result<(), ImageError> {
    let link = &links[i];
    let fail = |problem: String| ImageError {
        file: link.path.clone(),
        problem,
    };
    let mut at = start;
    // Regions are in address order: the first that ends after `start` on.
    let regions = &link.header.regions;
    let first = regions.partition_point(|r| r.end <= start);
    for (index, r) in regions
        .iter()
        .enumerate()
        .skip(first)
        .take_while(|(_, r)| r.start < end)
    {
        if r.start > at {
            return Err(fail(format!("no region holds {at:#x}-{:#x}", r.start)));
        }
        let (from, to) = (at.max(r.start), end.min(r.end));
        if !r.has_data() {
            return Err(fail(format!(
                "region {:#x}-{:#x} {} has no contents for an image that applies to it",
                r.start, r.end, r.path
            )));
        }
        if !r.is_delta() {
            out.push(Piece {
                start: from,
                end: to,
                source: Source::File {
                    link: i,
                    offset: r.data_offset + (from - r.start),
                },
            });
        } else {
            delta_pieces(links, i, index, from, to, out)?;
        }
        at = to;
    }
    if at < end {
        return Err(fail(format!("no region holds {at:#x}-{end:#x}")));
    }
    Ok(())
}

/// The pieces of `[from, to)` of DELTA region `r` of link `i`: its extents,
/// and the parent's pages between them.
fn delta_pieces(
    links: &[Link],
    i: usize,
    region: usize,
    from: u64,
    to: u64,
    out: &mut Vec<Piece>,
) -> Result<(), ImageError> {
    let link = &links[i];
    let r: &Region = &link.header.regions[region];
    let extents = &link.extents[region];
    // The first extent that ends after `from` on.
    let first = extents.partition_point(|(x, _)| r.start + x.offset + x.len <= from);
    let mut at = from;
    let parent = |at: u64, until: u64, out: &mut Vec<Piece>| {
        if i + 1 >= links.len() {
            return Err(ImageError {
                file: link.path.clone(),
                problem: "an incremental image without its parent".into(),
            });
        }
        resolve(links, i + 1, at, until, out)
    };
    for &(x, data) in &extents[first..] {
        let (xs, xe) = (r.start + x.offset, r.start + x.offset + x.len);
        if xs >= to {
            break;
        }
        if xs > at {
            parent(at, xs, out)?;
        }
        let (s, e) = (xs.max(from), xe.min(to));
        out.push(Piece {
            start: s,
            end: e,
            source: if x.kind == EXTENT_DATA {
                Source::File {
                    link: i,
                    offset: data + (s - xs),
                }
            } else {
                Source::Zeros
            },
        });
        at = e;
    }
    if at < to {
        parent(at, to, out)?;
    }
    Ok(())
}

/// Reads `len` bytes of memory at address `addr` as the image at `path`
/// (and, for an incremental one, its chain) restores it.
pub fn read_memory_at(path: &Path, addr: u64, len: usize) -> Result<Vec<u8>, ImageError> {
    let links = open(path)?;
    let mut out = vec![0u8; len];
    read_memory(&links, addr, &mut out)?;
    Ok(out)
}

/// Reads `out.len()` bytes of the memory at `addr` as the chain restores it.
pub(super) fn read_memory(links: &[Link], addr: u64, out: &mut [u8]) -> Result<(), ImageError> {
    let mut pieces = Vec::new();
    resolve(links, 0, addr, addr + out.len() as u64, &mut pieces)?;
    for p in pieces {
        let dst = &mut out[(p.start - addr) as usize..(p.end - addr) as usize];
        match p.source {
            Source::Zeros => dst.fill(0),
            Source::File { link, offset } => {
                links[link]
                    .file
                    .read_exact_at(dst, offset)
                    .map_err(|e| ImageError {
                        file: links[link].path.clone(),
                        problem: e.to_string(),
                    })?
            }
        }
    }
    Ok(())
}
