//! L3: Reed-Solomon parity across a group of G processes (see
//! [`crate::placement::groups`]): the G images are the original shards, and
//! each member keeps one of G parity shards, so any G of the 2G shards, that is
//! any half of the group's members with their image and parity, rebuild the
//! others.
//!
//! Encoding runs chunk by chunk, the work of chunk `c` done by member
//! `c mod G`: every other member sends it its chunk `c` (zeros past the end of
//! its image), it encodes, and it sends each member that member's parity chunk.
//! Each member thus sends about twice its image, and the encoding is spread
//! evenly. Members go through the chunks in the same order, so the blocking
//! sends of one chunk always meet their receives.
//!
//! A parity file holds a header (the group, every member's image size, the
//! chunk size and a CRC-32C per parity chunk) and the parity chunks.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::path::Path;

use reed_solomon_simd::{ReedSolomonDecoder, ReedSolomonEncoder};

use crate::direct::{AlignedBuf, DirectFile};
use crate::partner::{give_name, sync_dir, with_path};
use crate::transport::{blocking, tag, Transport};

/// Bytes of each image per encoding step (even, as the coder requires).
pub const CHUNK: usize = 1 << 20;

const WORK: u32 = 3;
const MAGIC: &[u8; 8] = b"MPCRSL3\0";

/// What a parity file says of its group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParityHeader {
    pub epoch: u64,
    /// The group's processes, in shard order, and this file's member index.
    pub members: Vec<usize>,
    pub index: usize,
    /// Every member's image size.
    pub sizes: Vec<u64>,
    pub chunk: usize,
    /// CRC-32C of each parity chunk of this file.
    pub crcs: Vec<u32>,
}

impl ParityHeader {
    fn chunks(&self) -> usize {
        chunks(&self.sizes, self.chunk)
    }

    fn encoded_len(&self) -> usize {
        8 + 8 * 5 + 8 * self.members.len() * 2 + 4 * self.crcs.len()
    }

    fn encode(&self) -> Vec<u8> {
        let mut v = MAGIC.to_vec();
        for x in [
            self.epoch,
            self.members.len() as u64,
            self.index as u64,
            self.chunk as u64,
            self.crcs.len() as u64,
        ] {
            v.extend_from_slice(&x.to_le_bytes());
        }
        for &m in &self.members {
            v.extend_from_slice(&(m as u64).to_le_bytes());
        }
        for &s in &self.sizes {
            v.extend_from_slice(&s.to_le_bytes());
        }
        for &c in &self.crcs {
            v.extend_from_slice(&c.to_le_bytes());
        }
        v
    }

    /// Reads the header of the parity file at `path`.
    pub fn read(path: &Path) -> io::Result<ParityHeader> {
        let bad = |what: &str| {
            with_path(
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("not a parity file: {what}"),
                ),
                path,
            )
        };
        let mut f = File::open(path).map_err(|e| with_path(e, path))?;
        let mut fixed = [0u8; 48];
        f.read_exact(&mut fixed).map_err(|_| bad("too short"))?;
        if &fixed[..8] != MAGIC {
            return Err(bad("bad magic"));
        }
        let word = |i: usize| u64::from_le_bytes(fixed[8 + 8 * i..16 + 8 * i].try_into().unwrap());
        let (epoch, g, index, chunk, n) = (
            word(0),
            word(1) as usize,
            word(2) as usize,
            word(3) as usize,
            word(4) as usize,
        );
        if g == 0 || g > 1024 || index >= g || chunk == 0 || n > (1 << 32) {
            return Err(bad("inconsistent header"));
        }
        let mut rest = vec![0u8; 16 * g + 4 * n];
        f.read_exact(&mut rest)
            .map_err(|_| bad("truncated header"))?;
        let u64_at = |i: usize| u64::from_le_bytes(rest[8 * i..8 * i + 8].try_into().unwrap());
        let members = (0..g).map(|i| u64_at(i) as usize).collect();
        let sizes: Vec<u64> = (0..g).map(|i| u64_at(g + i)).collect();
        let crcs = (0..n)
            .map(|i| {
                u32::from_le_bytes(rest[16 * g + 4 * i..16 * g + 4 * i + 4].try_into().unwrap())
            })
            .collect();
        let h = ParityHeader {
            epoch,
            members,
            index,
            sizes,
            chunk,
            crcs,
        };
        if h.chunks() != n {
            return Err(bad("chunk count does not match the sizes"));
        }
        Ok(h)
    }
}

/// Checks the parity file at `path`: its header, and every parity chunk
/// against its CRC-32C.
pub fn verify_parity(path: &Path) -> io::Result<ParityHeader> {
    let h = ParityHeader::read(path)?;
    let f = File::open(path).map_err(|e| with_path(e, path))?;
    let mut buf = vec![0u8; h.chunk];
    let damaged = |what: String| with_path(io::Error::new(io::ErrorKind::InvalidData, what), path);
    for c in 0..h.chunks() {
        let at = h.encoded_len() as u64 + (c * h.chunk) as u64;
        f.read_exact_at(&mut buf, at)
            .map_err(|e| damaged(format!("parity chunk {c}: {e}")))?;
        if crc32c::crc32c(&buf) != h.crcs[c] {
            return Err(damaged(format!("parity chunk {c}: CRC-32C mismatch")));
        }
    }
    Ok(h)
}

fn chunks(sizes: &[u64], chunk: usize) -> usize {
    let max = sizes.iter().copied().max().unwrap_or(0);
    max.div_ceil(chunk as u64) as usize
}

/// Chunk `c` of an image of `size` bytes read from `file` into `buf[..chunk]`,
/// zero-padded.
fn read_chunk(
    file: &DirectFile,
    size: u64,
    c: usize,
    chunk: usize,
    buf: &mut [u8],
) -> io::Result<()> {
    let start = (c * chunk) as u64;
    let n = if start < size {
        ((size - start) as usize).min(chunk)
    } else {
        0
    };
    if n > 0 {
        file.read_exact_at(buf, n, start)?;
    }
    buf[n..chunk].fill(0);
    Ok(())
}

fn coder_error(e: reed_solomon_simd::Error) -> io::Error {
    io::Error::other(format!("Reed-Solomon: {e}"))
}

/// Encodes the images of `group` (process ids in shard order; the caller is
/// one of them) for epoch `epoch`: this process's image is at `image`, its
/// parity shard goes to `parity` (durable before it takes that name).
pub fn encode(
    t: &dyn Transport,
    group: &[usize],
    epoch: u64,
    image: &Path,
    parity: &Path,
) -> io::Result<ParityHeader> {
    let g = group.len();
    let me = t.me();
    let index = group.iter().position(|&p| p == me).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("process {me} is not in group {group:?}"),
        )
    })?;
    let tag = tag(WORK, epoch);
    // Every member's size, from every member.
    let (size, file) =
        blocking(t, || DirectFile::open_sized(image)).map_err(|e| with_path(e, image))?;
    for (i, &p) in group.iter().enumerate() {
        if i != index {
            t.send(p, tag, &size.to_le_bytes())?;
        }
    }
    let mut sizes = vec![0u64; g];
    for (i, &p) in group.iter().enumerate() {
        sizes[i] = if i == index {
            size
        } else {
            let b = t.receive(p, tag)?;
            u64::from_le_bytes(b.as_slice().try_into().map_err(|_| {
                io::Error::new(io::ErrorKind::InvalidData, "size of a wrong length")
            })?)
        };
    }
    let n = chunks(&sizes, CHUNK);
    let mut header = ParityHeader {
        epoch,
        members: group.to_vec(),
        index,
        sizes,
        chunk: CHUNK,
        crcs: vec![0; n],
    };
    let partial = parity.with_extension("partial");
    let out = blocking(t, || mpcrs_cr::commit::create_private(&partial))
        .map_err(|e| with_path(e, &partial))?;
    let data_at = header.encoded_len() as u64;
    // Buffers reused for every chunk: this member's chunk, the other members'
    // chunks it encodes, and its parity chunk.
    let mut mine = AlignedBuf::new(CHUNK);
    let mut others: Vec<AlignedBuf> = (1..g).map(|_| AlignedBuf::new(CHUNK)).collect();
    let mut own = AlignedBuf::new(CHUNK);
    let mut encoder = ReedSolomonEncoder::new(g, g, CHUNK).map_err(coder_error)?;
    for c in 0..n {
        let e = c % g;
        blocking(t, || read_chunk(&file, size, c, CHUNK, &mut mine))
            .map_err(|e| with_path(e, image))?;
        if e == index {
            // Gather chunk c of every member, in shard order, and encode.
            let mut received = others.iter_mut();
            let mut shards: Vec<&[u8]> = Vec::with_capacity(g);
            for (i, &p) in group.iter().enumerate() {
                if i == index {
                    shards.push(&mine[..CHUNK]);
                    continue;
                }
                let buf = received.next().expect("a buffer per other member");
                let len = t.receive_into(p, tag, buf)?;
                if len != CHUNK {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("chunk {c} of process {p}: {len} bytes"),
                    ));
                }
                shards.push(&buf[..CHUNK]);
            }
            for shard in shards {
                encoder.add_original_shard(shard).map_err(coder_error)?;
            }
            let result = encoder.encode().map_err(coder_error)?;
            for (j, shard) in result.recovery_iter().enumerate() {
                if j == index {
                    own[..CHUNK].copy_from_slice(shard);
                } else {
                    t.send(group[j], tag, shard)?;
                }
            }
        } else {
            t.send(group[e], tag, &mine[..CHUNK])?;
            let len = t.receive_into(group[e], tag, &mut own)?;
            if len != CHUNK {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("parity chunk {c} from process {}: {len} bytes", group[e]),
                ));
            }
        }
        let shard = &own[..CHUNK];
        header.crcs[c] = crc32c::crc32c(shard);
        blocking(t, || out.write_all_at(shard, data_at + (c * CHUNK) as u64))
            .map_err(|e| with_path(e, &partial))?;
        t.pause();
    }
    let bytes = header.encode();
    blocking(t, || {
        out.write_all_at(&bytes, 0)?;
        give_name(&out, &partial, parity)
    })
    .map_err(|e| with_path(e, parity))?;
    Ok(header)
}

/// What a rebuild has of one member: its image (known intact) and its parity
/// file (checked chunk by chunk against its CRCs), each if present.
pub struct Shards<'a> {
    pub image: Option<&'a Path>,
    pub parity: Option<&'a Path>,
}

/// Rebuilds, from the shards at hand, the images of the members in `lost`
/// (indexes in the group), writing member `i`'s image to `out(i)`. Needs, for
/// every chunk, G intact shards among the images and parity chunks: a parity
/// chunk whose CRC does not match counts as missing.
pub fn rebuild(
    shards: &[Shards<'_>],
    lost: &[usize],
    out: &dyn Fn(usize) -> std::path::PathBuf,
) -> io::Result<()> {
    let header = shards
        .iter()
        .filter_map(|s| s.parity)
        .find_map(|p| ParityHeader::read(p).ok())
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                "no readable parity file in the group",
            )
        })?;
    let g = header.members.len();
    if shards.len() != g {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} members given for a group of {g}", shards.len()),
        ));
    }
    let open = |p: Option<&Path>| p.and_then(|p| DirectFile::open(p).ok());
    let images: Vec<Option<DirectFile>> = shards
        .iter()
        .enumerate()
        .map(|(i, s)| {
            if lost.contains(&i) {
                None
            } else {
                open(s.image)
            }
        })
        .collect();
    let parities: Vec<Option<(File, ParityHeader)>> = shards
        .iter()
        .map(|s| {
            let p = s.parity?;
            let h = ParityHeader::read(p).ok()?;
            (h.members == header.members && h.sizes == header.sizes && h.epoch == header.epoch)
                .then_some(())?;
            Some((File::open(p).ok()?, h))
        })
        .collect();
    let mut outs: Vec<(usize, std::path::PathBuf, File)> = Vec::new();
    for &i in lost {
        let path = out(i);
        let partial = path.with_extension("partial");
        let f = mpcrs_cr::commit::create_private(&partial).map_err(|e| with_path(e, &partial))?;
        outs.push((i, path, f));
    }
    let chunk = header.chunk;
    let mut decoder = ReedSolomonDecoder::new(g, g, chunk).map_err(coder_error)?;
    let mut buf = AlignedBuf::new(chunk);
    let buf = &mut buf[..];
    for c in 0..header.chunks() {
        let mut have = 0;
        for (i, f) in images.iter().enumerate() {
            if let Some(f) = f {
                read_chunk(f, header.sizes[i], c, chunk, buf)?;
                decoder
                    .add_original_shard(i, &buf[..chunk])
                    .map_err(coder_error)?;
                have += 1;
            }
        }
        for (j, p) in parities.iter().enumerate() {
            if have >= g {
                break;
            }
            let Some((f, h)) = p else { continue };
            let at = h.encoded_len() as u64 + (c * chunk) as u64;
            let piece = &mut buf[..chunk];
            if f.read_exact_at(piece, at).is_ok() && crc32c::crc32c(piece) == h.crcs[c] {
                decoder.add_recovery_shard(j, piece).map_err(coder_error)?;
                have += 1;
            }
        }
        if have < g {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("chunk {c}: {have} intact shards of the {g} needed"),
            ));
        }
        let result = decoder.decode().map_err(coder_error)?;
        let restored: Vec<(usize, Vec<u8>)> = result
            .restored_original_iter()
            .map(|(i, d)| (i, d.to_vec()))
            .collect();
        drop(result);
        for (i, _, f) in &outs {
            let size = header.sizes[*i];
            let start = (c * chunk) as u64;
            if start >= size {
                continue;
            }
            let n = ((size - start) as usize).min(chunk);
            let data = restored
                .iter()
                .find(|(k, _)| k == i)
                .map(|(_, d)| &d[..n])
                .ok_or_else(|| io::Error::other(format!("chunk {c} of member {i} not restored")))?;
            f.write_all_at(data, start)?;
        }
    }
    for (_, path, f) in outs {
        f.sync_all()?;
        std::fs::rename(path.with_extension("partial"), &path)?;
        sync_dir(&path)?;
    }
    Ok(())
}
