//! A process's recovery connection to mpcrs-run (`MPCRS_RECOVERY_PORT`): a TCP
//! stream that ran the job's handshake, carrying lines.
//!
//! Process to launcher: `hello P` (once, first), `done R` (every rank of this
//! process returned from its body in run R), `ready R` (this process's ranks
//! are in their body again, in run R).
//! Launcher to process: `end` (every process is done: the job ends), or
//! `run R` followed by the variables of run R's network, one per line as
//! `NAME=VALUE` (set) or `-NAME` (unset), and a line `.`.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use mpcrs_auth::JobSecret;
use mpcrs_settings::variables as env;

/// What the launcher said.
pub(crate) enum Word {
    End,
    /// A new run and the variables that change with it (`None`: unset).
    Run(u64, Vec<(String, Option<String>)>),
}

pub(crate) struct Notice {
    stream: TcpStream,
    /// Bytes read and not yet taken as lines.
    pending: Vec<u8>,
}

impl Notice {
    /// Connects to the launcher and says which process this is.
    pub(crate) fn connect(process: usize) -> Result<Notice, String> {
        let addr = env::RECOVERY_PORT.get().ok_or_else(|| {
            format!(
                "{} is in-place but {} is not set: start the job with mpcrs-run --recover in-place",
                env::RECOVER.name,
                env::RECOVERY_PORT.name
            )
        })?;
        let secret = env::JOB_SECRET
            .get()
            .ok_or_else(|| format!("{} is not set", env::JOB_SECRET.name))
            .and_then(|h| {
                JobSecret::from_hex(&h).map_err(|e| format!("{}: {e}", env::JOB_SECRET.name))
            })?;
        // A port alone is on the launcher's host: where the key-value store
        // is (PMI_PORT), or this one (PMI_FD).
        let addr = match addr.trim().parse::<u16>() {
            Ok(port) => {
                let host = std::env::var(mpcrs_pmi::ENV_PORT)
                    .ok()
                    .and_then(|p| p.rsplit_once(':').map(|(h, _)| h.to_string()))
                    .unwrap_or_else(|| "127.0.0.1".into());
                format!("{host}:{port}")
            }
            Err(_) => addr,
        };
        let connect = || -> io::Result<Notice> {
            let s = crate::craas::connect_proven(&addr, &secret)?;
            let mut n = Notice {
                stream: s,
                pending: Vec::new(),
            };
            n.say(&format!("hello {process}"))?;
            Ok(n)
        };
        connect().map_err(|e| format!("recovery connection to mpcrs-run at {addr}: {e}"))
    }

    pub(crate) fn say(&mut self, line: &str) -> io::Result<()> {
        self.stream.write_all(format!("{line}\n").as_bytes())
    }

    /// The next complete line, waiting at most `wait` for more bytes.
    fn line(&mut self, wait: Duration) -> io::Result<Option<String>> {
        loop {
            if let Some(i) = self.pending.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=i).collect();
                return String::from_utf8(line[..i].to_vec())
                    .map(Some)
                    .map_err(|_| {
                        io::Error::new(io::ErrorKind::InvalidData, "a line not in UTF-8")
                    });
            }
            self.stream.set_read_timeout(Some(wait))?;
            let mut buf = [0u8; 4096];
            match self.stream.read(&mut buf) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => self.pending.extend_from_slice(&buf[..n]),
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    return Ok(None)
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// The launcher's next word, if one comes within `wait`.
    pub(crate) fn next(&mut self, wait: Duration) -> io::Result<Option<Word>> {
        let Some(first) = self.line(wait)? else {
            return Ok(None);
        };
        let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_string());
        if first == "end" {
            return Ok(Some(Word::End));
        }
        let run = first
            .strip_prefix("run ")
            .and_then(|r| r.trim().parse::<u64>().ok())
            .ok_or_else(|| bad(&format!("unexpected line from mpcrs-run: {first:?}")))?;
        let mut vars = Vec::new();
        loop {
            // The rest of the notice follows at once.
            let Some(l) = self.line(Duration::from_secs(10))? else {
                return Err(bad("a notice of a new run ended early"));
            };
            if l == "." {
                return Ok(Some(Word::Run(run, vars)));
            }
            match l.strip_prefix('-') {
                Some(name) => vars.push((name.to_string(), None)),
                None => {
                    let (k, v) = l
                        .split_once('=')
                        .ok_or_else(|| bad(&format!("not a variable: {l:?}")))?;
                    vars.push((k.to_string(), Some(v.to_string())));
                }
            }
        }
    }
}
