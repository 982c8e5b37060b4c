//! A process's connections to a checkpoint service: a stream to `IP:PORT`
//! that ran the job's handshake, carrying [`mpcrs_craas::wire`] frames. Its
//! system calls go through the scheduler's blocking pool (a rank or helper
//! parks meanwhile), so no worker sleeps in them.

use std::io::{self, BufReader, BufWriter};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

use mpcrs_auth::{JobSecret, Role};
use mpcrs_craas::wire::{self, Request, Response};
use mpcrs_levels::blocking;

/// One connection.
pub(super) struct Link {
    r: BufReader<TcpStream>,
    w: BufWriter<TcpStream>,
}

/// A TCP stream to `addr` (IP:PORT) that proved `secret` as the connecting
/// side, without a read timeout.
pub(crate) fn connect_proven(addr: &str, secret: &JobSecret) -> io::Result<TcpStream> {
    let sock = addr
        .parse::<std::net::SocketAddr>()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("{addr}: {e}")))?;
    let mut s = TcpStream::connect_timeout(&sock, Duration::from_secs(10))?;
    s.set_nodelay(true)?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    mpcrs_auth::over_stream(&mut s, secret, Role::Connector)?;
    s.set_read_timeout(None)?;
    Ok(s)
}

impl Link {
    /// Connects to `addr` and proves the services' `secret`.
    pub(super) fn connect(addr: &str, secret: &JobSecret) -> io::Result<Link> {
        let io = crate::checkpoint::helper_io();
        blocking(&io, || {
            let s = connect_proven(addr, secret)?;
            Ok(Link {
                r: BufReader::with_capacity(1 << 16, s.try_clone()?),
                w: BufWriter::with_capacity(1 << 20, s),
            })
        })
    }

    /// Sends `req` with `payload` and returns the response and its payload.
    pub(super) fn call(
        &mut self,
        req: &Request,
        payload: &[&[u8]],
    ) -> io::Result<(Response, Vec<u8>)> {
        let io = crate::checkpoint::helper_io();
        blocking(&io, || {
            wire::send(&mut self.w, req, payload)?;
            wire::receive(&mut self.r)
        })
    }
}

/// The services of the job (`MPCRS_CKPT_SERVICE`) and their secret.
pub(super) struct Services {
    pub(super) addrs: Vec<String>,
    pub(super) secret: Arc<JobSecret>,
}

impl Services {
    /// From the environment; `Ok(None)` without services.
    pub(super) fn from_env() -> Result<Option<Services>, String> {
        use mpcrs_settings::variables as env;
        let Some(list) = env::CKPT_SERVICE.get().filter(|s| !s.trim().is_empty()) else {
            return Ok(None);
        };
        let secret = env::CKPT_SERVICE_SECRET
            .get()
            .ok_or_else(|| {
                format!(
                    "{} is set but {} is not",
                    env::CKPT_SERVICE.name,
                    env::CKPT_SERVICE_SECRET.name
                )
            })
            .and_then(|h| {
                JobSecret::from_hex(&h)
                    .map_err(|e| format!("{}: {e}", env::CKPT_SERVICE_SECRET.name))
            })?;
        Ok(Some(Services {
            addrs: list.split(',').map(|a| a.trim().to_string()).collect(),
            secret: Arc::new(secret),
        }))
    }

    /// The service of world rank `rank`.
    pub(super) fn of(&self, rank: u32) -> &str {
        &self.addrs[rank as usize % self.addrs.len()]
    }
}
