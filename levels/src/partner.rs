//! L2: a copy of each process's image kept by its partner (see
//! [`crate::placement::partners`]). The sender streams its image in chunks;
//! the partner writes it beside its own images under a temporary name, makes
//! it durable, then gives it its name, so a copy is either whole or absent.
//! Sending and receiving are separate calls, run by separate helpers: a send
//! may wait for its receiver, and partners form cycles.

use std::fs::File;
use std::io;
use std::path::Path;

use crate::direct::{AlignedBuf, DirectFile};
use crate::transport::{blocking, stopped_error, tag, Transport};

/// Bytes per message: large enough to stream at the rails' speed, small
/// enough that a helper yields often.
pub const CHUNK: usize = 1 << 20;

const WORK: u32 = 2;

/// The processes whose copies process `me` keeps.
pub fn kept_by(partners: &[Option<usize>], me: usize) -> Vec<usize> {
    (0..partners.len())
        .filter(|&p| partners[p] == Some(me))
        .collect()
}

/// Sends the image at `image` to process `partner` for epoch `epoch`; returns
/// its size.
pub fn send_copy(t: &dyn Transport, partner: usize, epoch: u64, image: &Path) -> io::Result<u64> {
    let (len, file) =
        blocking(t, || DirectFile::open_sized(image)).map_err(|e| with_path(e, image))?;
    let tag = tag(WORK, epoch);
    t.send(partner, tag, &len.to_le_bytes())?;
    let mut buf = AlignedBuf::new(CHUNK);
    let mut at = 0u64;
    while at < len {
        let n = (len - at).min(CHUNK as u64) as usize;
        blocking(t, || file.read_exact_at(&mut buf, n, at)).map_err(|e| with_path(e, image))?;
        t.send(partner, tag, &buf[..n])?;
        at += n as u64;
        t.pause();
        if t.stopped() && at < len {
            // An empty chunk tells the partner the copy ends here.
            t.send(partner, tag, &[])?;
            return Err(stopped_error());
        }
    }
    Ok(len)
}

/// Receives process `from`'s image of epoch `epoch` and writes it at `dest`
/// (durable before it takes that name); returns its size.
pub fn receive_copy(t: &dyn Transport, from: usize, epoch: u64, dest: &Path) -> io::Result<u64> {
    let tag = tag(WORK, epoch);
    let header = t.receive(from, tag)?;
    let len =
        u64::from_le_bytes(header.as_slice().try_into().map_err(|_| {
            io::Error::new(io::ErrorKind::InvalidData, "copy header of a wrong size")
        })?);
    let partial = dest.with_extension("partial");
    let file = blocking(t, || DirectFile::create(&partial)).map_err(|e| with_path(e, &partial))?;
    let mut buf = AlignedBuf::new(CHUNK);
    let mut got = 0u64;
    while got < len {
        // Only the sender decides to stop (it then sends an empty chunk): a
        // receiver that left first would leave the sender waiting for ever.
        let n = t.receive_into(from, tag, &mut buf)?;
        if n == 0 {
            // The sender stopped (the next checkpoint began).
            drop(file);
            let _ = std::fs::remove_file(&partial);
            return Err(stopped_error());
        }
        if got + n as u64 > len {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("copy of process {from}: {n} bytes past {got} of {len}"),
            ));
        }
        blocking(t, || file.write_all_at(&buf[..n], got)).map_err(|e| with_path(e, &partial))?;
        got += n as u64;
        t.pause();
    }
    blocking(t, || give_name(file.file(), &partial, dest)).map_err(|e| with_path(e, dest))?;
    Ok(len)
}

/// Makes `file`, written at `partial`, durable and gives it its name `dest`,
/// durably too.
pub(crate) fn give_name(file: &File, partial: &Path, dest: &Path) -> io::Result<()> {
    file.sync_all()?;
    std::fs::rename(partial, dest)?;
    sync_dir(dest)
}

/// Makes the entry of `path` in its directory durable.
pub(crate) fn sync_dir(path: &Path) -> io::Result<()> {
    match path.parent() {
        Some(d) => File::open(d)?.sync_all(),
        None => Ok(()),
    }
}

pub(crate) fn with_path(e: io::Error, path: &Path) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}
