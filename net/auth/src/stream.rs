//! The handshake over a blocking stream (the PMI-2 port of a job across
//! hosts), framed as the tcp rail frames it: a 4-byte little-endian length,
//! then the frame.

use std::io::{self, Read, Write};

use crate::{Handshake, JobSecret, Reply, Role, MAX_FRAME};

/// Runs the handshake on `stream` as `role`; returns once the peer proved it
/// knows `secret`. A peer that does not is an error of kind
/// [`io::ErrorKind::PermissionDenied`] naming why. Set a read timeout on the
/// stream first if a silent peer must not hold the caller.
pub fn over_stream(
    stream: &mut (impl Read + Write),
    secret: &JobSecret,
    role: Role,
) -> io::Result<()> {
    let (mut hs, challenge) = Handshake::start(secret, role)?;
    send(stream, &challenge)?;
    loop {
        let frame = receive(stream)?;
        match hs
            .take(&frame)
            .map_err(|r| io::Error::new(io::ErrorKind::PermissionDenied, r))?
        {
            Reply::Send(proof) => send(stream, &proof)?,
            Reply::Trusted => return Ok(()),
        }
    }
}

fn send(stream: &mut impl Write, frame: &[u8]) -> io::Result<()> {
    let mut bytes = (frame.len() as u32).to_le_bytes().to_vec();
    bytes.extend_from_slice(frame);
    stream.write_all(&bytes)?;
    stream.flush()
}

fn receive(stream: &mut impl Read) -> io::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    stream.read_exact(&mut len)?;
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_FRAME {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            crate::Refusal::NotAHandshake { bytes: len },
        ));
    }
    let mut frame = vec![0u8; len];
    stream.read_exact(&mut frame)?;
    Ok(frame)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixStream;

    #[test]
    fn both_ends_of_a_socket_agree_or_refuse() {
        let k = JobSecret::generate().unwrap();
        let (mut a, mut b) = UnixStream::pair().unwrap();
        let k2 = k.clone();
        let t = std::thread::spawn(move || over_stream(&mut b, &k2, Role::Acceptor));
        over_stream(&mut a, &k, Role::Connector).unwrap();
        t.join().unwrap().unwrap();

        let (mut a, mut b) = UnixStream::pair().unwrap();
        let t = std::thread::spawn(move || over_stream(&mut b, &k, Role::Acceptor));
        let e = over_stream(&mut a, &JobSecret::generate().unwrap(), Role::Connector).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
        assert!(
            e.to_string().contains("does not match the job's secret"),
            "{e}"
        );
        assert_eq!(
            t.join().unwrap().unwrap_err().kind(),
            io::ErrorKind::PermissionDenied
        );
    }

    #[test]
    fn a_peer_announcing_a_long_frame_is_refused_unread() {
        let (mut a, mut b) = UnixStream::pair().unwrap();
        b.write_all(&(1u32 << 30).to_le_bytes()).unwrap();
        let e = over_stream(&mut a, &JobSecret::generate().unwrap(), Role::Acceptor).unwrap_err();
        assert!(e.to_string().contains("not an mpcrs handshake"), "{e}");
    }
}
