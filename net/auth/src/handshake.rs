//! The handshake of one link, as a state machine fed the peer's frames: the
//! caller frames and carries the bytes, so the same code serves non-blocking
//! rails and blocking streams.
//!
//! Protocol, the same on both sides (each sends its challenge at once):
//!
//! ```text
//! -> CHALLENGE own nonce
//! <- CHALLENGE peer nonce        -> PROOF mac(own role, peer nonce, own nonce)
//! <- PROOF peer's mac            checked against mac(peer role, own nonce, peer nonce)
//! ```
//!
//! Frames: 8 bytes of magic, a kind byte, 32 bytes; anything else refuses the
//! link, and so does a proof before the challenge or a proof that does not check.

use std::fmt;

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::JobSecret;

/// Which end of the connection this side is: the roles enter the proofs, so
/// that neither side's proof is ever the one the other side expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Opened the connection.
    Connector,
    /// Accepted it.
    Acceptor,
}

impl Role {
    fn byte(self) -> u8 {
        match self {
            Role::Connector => b'c',
            Role::Acceptor => b'a',
        }
    }

    fn other(self) -> Role {
        match self {
            Role::Connector => Role::Acceptor,
            Role::Acceptor => Role::Connector,
        }
    }
}

const MAGIC: &[u8; 8] = b"mpcrs\x00a1";
const CHALLENGE: u8 = 1;
const PROOF: u8 = 2;
const NONCE: usize = 32;
/// Every handshake frame has this length: a peer announcing a longer one is
/// refused before its bytes are buffered.
pub const MAX_FRAME: usize = MAGIC.len() + 1 + NONCE;

/// Why a link was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The peer does not speak the handshake (wrong length or magic).
    NotAHandshake { bytes: usize },
    /// A proof came before the peer's challenge, or a frame after the end.
    OutOfOrder,
    /// The peer's proof does not check: it does not know the job's secret.
    WrongProof,
    /// The peer sent our own challenge back.
    Reflected,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::NotAHandshake { bytes } => {
                write!(f, "a {bytes}-byte frame that is not an mpcrs handshake")
            }
            Refusal::OutOfOrder => f.write_str("handshake frames out of order"),
            Refusal::WrongProof => f.write_str("a proof that does not match the job's secret"),
            Refusal::Reflected => f.write_str("our own challenge sent back"),
        }
    }
}

impl std::error::Error for Refusal {}

/// What to do after a frame of the peer.
#[derive(Debug, PartialEq, Eq)]
pub enum Reply {
    /// Send this frame (our proof); the peer's proof is still to come.
    Send(Vec<u8>),
    /// The peer proved it knows the secret: the link is the job's.
    Trusted,
}

/// One side of one link's handshake.
pub struct Handshake {
    secret: JobSecret,
    role: Role,
    own: [u8; NONCE],
    peer: Option<[u8; NONCE]>,
    trusted: bool,
}

impl Handshake {
    /// Starts this side's handshake: the handshake, and the challenge to send
    /// before anything else.
    pub fn start(secret: &JobSecret, role: Role) -> std::io::Result<(Handshake, Vec<u8>)> {
        let mut own = [0u8; NONCE];
        getrandom::fill(&mut own)
            .map_err(|e| std::io::Error::other(format!("no random bytes for a challenge: {e}")))?;
        let hs = Handshake {
            secret: secret.clone(),
            role,
            own,
            peer: None,
            trusted: false,
        };
        Ok((hs, frame(CHALLENGE, &own)))
    }

    /// Whether the peer has proved it knows the secret.
    pub fn is_trusted(&self) -> bool {
        self.trusted
    }

    /// Takes the peer's next frame.
    pub fn take(&mut self, bytes: &[u8]) -> Result<Reply, Refusal> {
        if bytes.len() != MAX_FRAME || &bytes[..MAGIC.len()] != MAGIC {
            return Err(Refusal::NotAHandshake { bytes: bytes.len() });
        }
        let body: &[u8; NONCE] = bytes[MAGIC.len() + 1..].try_into().unwrap();
        match (bytes[MAGIC.len()], self.peer, self.trusted) {
            (CHALLENGE, None, false) => {
                if *body == self.own {
                    return Err(Refusal::Reflected);
                }
                self.peer = Some(*body);
                let proof = self.mac(self.role, body, &self.own);
                Ok(Reply::Send(frame(PROOF, &proof)))
            }
            (PROOF, Some(peer), false) => {
                let mac = self.keyed(self.role.other(), &self.own, &peer);
                // Constant-time comparison.
                mac.verify_slice(body).map_err(|_| Refusal::WrongProof)?;
                self.trusted = true;
                Ok(Reply::Trusted)
            }
            (CHALLENGE | PROOF, _, _) => Err(Refusal::OutOfOrder),
            _ => Err(Refusal::NotAHandshake { bytes: bytes.len() }),
        }
    }

    /// The MAC of `prover` over (the verifier's nonce, the prover's nonce).
    fn keyed(&self, prover: Role, verifier_nonce: &[u8], prover_nonce: &[u8]) -> Hmac<Sha256> {
        let mut mac = <Hmac<Sha256>>::new_from_slice(self.secret.bytes())
            .expect("HMAC takes keys of any length");
        mac.update(MAGIC);
        mac.update(&[prover.byte()]);
        mac.update(verifier_nonce);
        mac.update(prover_nonce);
        mac
    }

    fn mac(&self, prover: Role, verifier_nonce: &[u8], prover_nonce: &[u8]) -> [u8; NONCE] {
        self.keyed(prover, verifier_nonce, prover_nonce)
            .finalize()
            .into_bytes()
            .into()
    }
}

fn frame(kind: u8, body: &[u8; NONCE]) -> Vec<u8> {
    let mut f = Vec::with_capacity(MAX_FRAME);
    f.extend_from_slice(MAGIC);
    f.push(kind);
    f.extend_from_slice(body);
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(a: &JobSecret, b: &JobSecret) -> (Handshake, Vec<u8>, Handshake, Vec<u8>) {
        let (c, cc) = Handshake::start(a, Role::Connector).unwrap();
        let (s, sc) = Handshake::start(b, Role::Acceptor).unwrap();
        (c, cc, s, sc)
    }

    fn proof(r: Reply) -> Vec<u8> {
        match r {
            Reply::Send(p) => p,
            Reply::Trusted => panic!("a proof was expected"),
        }
    }

    #[test]
    fn two_sides_with_the_secret_trust_each_other() {
        let k = JobSecret::generate().unwrap();
        let (mut c, cc, mut s, sc) = pair(&k, &k);
        let cp = proof(c.take(&sc).unwrap());
        let sp = proof(s.take(&cc).unwrap());
        assert_eq!(c.take(&sp).unwrap(), Reply::Trusted);
        assert_eq!(s.take(&cp).unwrap(), Reply::Trusted);
        assert!(c.is_trusted() && s.is_trusted());
        // Nothing is taken after the end.
        assert_eq!(c.take(&sp), Err(Refusal::OutOfOrder));
    }

    #[test]
    fn another_secret_is_refused_on_both_sides() {
        let (mut c, cc, mut s, sc) = pair(
            &JobSecret::generate().unwrap(),
            &JobSecret::generate().unwrap(),
        );
        let cp = proof(c.take(&sc).unwrap());
        let sp = proof(s.take(&cc).unwrap());
        assert_eq!(c.take(&sp), Err(Refusal::WrongProof));
        assert_eq!(s.take(&cp), Err(Refusal::WrongProof));
        assert!(!c.is_trusted() && !s.is_trusted());
    }

    #[test]
    fn a_side_cannot_be_fooled_with_its_own_frames() {
        let k = JobSecret::generate().unwrap();
        let (mut s, sc) = Handshake::start(&k, Role::Acceptor).unwrap();
        // Our own challenge back.
        assert_eq!(s.take(&sc), Err(Refusal::Reflected));
        // A stranger sends a challenge, then returns our proof to us: the
        // proof names the acceptor's role, not the connector's it expects.
        let (mut s, _) = Handshake::start(&k, Role::Acceptor).unwrap();
        let (_, stranger_challenge) =
            Handshake::start(&JobSecret::generate().unwrap(), Role::Connector).unwrap();
        let ours = proof(s.take(&stranger_challenge).unwrap());
        assert_eq!(s.take(&ours), Err(Refusal::WrongProof));
    }

    #[test]
    fn garbage_and_order_are_refused() {
        let k = JobSecret::generate().unwrap();
        let (mut s, _) = Handshake::start(&k, Role::Acceptor).unwrap();
        assert_eq!(s.take(b"hello"), Err(Refusal::NotAHandshake { bytes: 5 }));
        let (mut c, _) = Handshake::start(&k, Role::Connector).unwrap();
        let mut early_proof = frame(PROOF, &[7; NONCE]);
        assert_eq!(c.take(&early_proof), Err(Refusal::OutOfOrder));
        early_proof[MAGIC.len()] = 9;
        assert_eq!(
            c.take(&early_proof),
            Err(Refusal::NotAHandshake { bytes: MAX_FRAME })
        );
    }
}
