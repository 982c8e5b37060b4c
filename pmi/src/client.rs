//! A process's half: PMI2_Init and the key-value calls, over the connection the
//! launcher gave (`PMI_FD`) or named (`PMI_PORT`).

use std::io::{self, Read, Write};

use crate::wire::{encode, get, invalid, read_message, Message};
use crate::KeyValueStore;

/// A process's side of the protocol.
pub struct Client<S: Read + Write> {
    stream: S,
    pub rank: usize,
    pub size: usize,
}

impl<S: Read + Write> Client<S> {
    fn call(&mut self, fields: &[(&str, &str)], expect: &str) -> io::Result<Message> {
        self.stream.write_all(&encode(fields))?;
        let m = read_message(&mut self.stream)?
            .ok_or_else(|| invalid("the PMI-2 server closed the connection"))?;
        if m[0].1 != expect {
            return Err(invalid(format!("expected {expect}, got {}", m[0].1)));
        }
        if get(&m, "rc").is_some_and(|rc| rc != "0") {
            return Err(invalid(format!(
                "{expect} failed with rc={}",
                get(&m, "rc").unwrap()
            )));
        }
        Ok(m)
    }

    /// PMI2_Init: learns rank and size.
    /// `jobid`: the launcher's job id, if it gave one (`PMI_JOBID`: Slurm
    /// asks for it back).
    pub fn init(mut stream: S, rank: usize, jobid: Option<&str>) -> io::Result<Client<S>> {
        // PMI-1's init first, as Slurm's server expects of a PMI-2 client.
        stream.write_all(crate::wire::INIT_LINE)?;
        let line = crate::wire::read_line(&mut stream)?;
        let reply = crate::wire::decode_line(&line)?;
        if reply[0].1 != "response_to_init" || get(&reply, "rc") != Some("0") {
            return Err(invalid(format!(
                "the PMI server answered init with {line:?}"
            )));
        }
        let r = rank.to_string();
        let mut fields = vec![("cmd", "fullinit"), ("pmirank", r.as_str())];
        if let Some(id) = jobid {
            fields.push(("pmijobid", id));
        }
        fields.push(("threaded", "FALSE"));
        stream.write_all(&encode(&fields))?;
        let m = read_message(&mut stream)?
            .ok_or_else(|| invalid("the PMI-2 server closed the connection"))?;
        let num = |k: &str| {
            get(&m, k)
                .and_then(|v| v.parse::<usize>().ok())
                .ok_or_else(|| invalid(format!("fullinit-response without {k}")))
        };
        Ok(Client {
            rank: num("rank")?,
            size: num("size")?,
            stream,
        })
    }

    pub fn job_id(&mut self) -> io::Result<String> {
        let m = self.call(&[("cmd", "job-getid")], "job-getid-response")?;
        Ok(get(&m, "jobid").unwrap_or("").to_string())
    }

    /// A job attribute of the launcher's (`info-getjobattr`), such as
    /// `PMI_process_mapping`; `None` when the launcher has none by that name.
    pub fn job_attribute(&mut self, key: &str) -> io::Result<Option<String>> {
        let m = self.call(
            &[("cmd", "info-getjobattr"), ("key", key)],
            "info-getjobattr-response",
        )?;
        Ok(match get(&m, "found") {
            Some("TRUE") => get(&m, "value").map(String::from),
            _ => None,
        })
    }

    pub fn put(&mut self, key: &str, value: &str) -> io::Result<()> {
        self.call(
            &[("cmd", "kvs-put"), ("key", key), ("value", value)],
            "kvs-put-response",
        )
        .map(|_| ())
    }

    pub fn fence(&mut self) -> io::Result<()> {
        self.call(&[("cmd", "kvs-fence")], "kvs-fence-response")
            .map(|_| ())
    }

    pub fn get(&mut self, key: &str) -> io::Result<Option<String>> {
        let m = self.call(
            &[
                ("cmd", "kvs-get"),
                ("jobid", ""),
                ("srcid", "-1"),
                ("key", key),
            ],
            "kvs-get-response",
        )?;
        Ok((get(&m, "found") == Some("TRUE")).then(|| get(&m, "value").unwrap_or("").to_string()))
    }

    pub fn finalize(mut self) -> io::Result<()> {
        self.call(&[("cmd", "finalize")], "finalize-response")
            .map(|_| ())
    }

    pub fn abort(mut self, msg: &str) -> io::Result<()> {
        self.stream.write_all(&encode(&[
            ("cmd", "abort"),
            ("isworld", "TRUE"),
            ("msg", msg),
        ]))
    }
}

/// Environment of a process started by a PMI-2 launcher (mpcrs-run, Slurm's
/// `srun --mpi=pmi2`, MPICH's hydra): a descriptor already connected (`PMI_FD`),
/// or the launcher's address (`PMI_PORT`, host:port) for processes on other hosts;
/// and the process's rank.
pub const ENV_FD: &str = "PMI_FD";
pub const ENV_PORT: &str = "PMI_PORT";
pub const ENV_RANK: &str = "PMI_RANK";
pub const ENV_SIZE: &str = "PMI_SIZE";
pub const ENV_JOBID: &str = "PMI_JOBID";

/// The job's secret (64 hex digits) that mpcrs-run gives its processes: a
/// connection to its `PMI_PORT` proves it knows it before PMI starts. Other
/// launchers give none and take no proof.
pub const ENV_SECRET: &str = "MPCRS_JOB_SECRET";

/// Opens the launcher's `PMI_PORT` at `addr`, proving the job's secret first
/// when the launcher gave one.
fn connect(addr: &str, secret: Option<&str>) -> io::Result<std::net::TcpStream> {
    let mut stream = std::net::TcpStream::connect(addr)?;
    if let Some(text) = secret {
        let secret = mpcrs_auth::JobSecret::from_hex(text)
            .map_err(|e| invalid(format!("{ENV_SECRET}: {e}")))?;
        // The launcher answers at once; a silent peer is not the launcher.
        stream.set_read_timeout(Some(std::time::Duration::from_secs(30)))?;
        mpcrs_auth::over_stream(&mut stream, &secret, mpcrs_auth::Role::Connector)?;
        stream.set_read_timeout(None)?;
    }
    Ok(stream)
}

/// The connection to the launcher: inherited, or opened over the network.
pub enum PmiStream {
    Inherited(std::os::unix::net::UnixStream),
    Network(std::net::TcpStream),
}

impl Read for PmiStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            PmiStream::Inherited(s) => s.read(buf),
            PmiStream::Network(s) => s.read(buf),
        }
    }
}

impl Write for PmiStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            PmiStream::Inherited(s) => s.write(buf),
            PmiStream::Network(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            PmiStream::Inherited(s) => s.flush(),
            PmiStream::Network(s) => s.flush(),
        }
    }
}

impl Client<PmiStream> {
    /// Connects as the launcher said (`PMI_FD` or `PMI_PORT`), as process
    /// `PMI_RANK`. `None` when the process was not started by a PMI launcher.
    pub fn from_env() -> Option<io::Result<Self>> {
        static TAKEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        let started_by_pmi =
            std::env::var_os(ENV_FD).is_some() || std::env::var_os(ENV_PORT).is_some();
        if started_by_pmi && TAKEN.swap(true, std::sync::atomic::Ordering::AcqRel) {
            return Some(Err(invalid("the PMI-2 connection is already in use")));
        }
        Self::from_variables(|k| std::env::var(k).ok())
    }

    /// [`Client::from_env`] with the variables of `var` (a restored process reads
    /// those of the process that restored it). The descriptor of `PMI_FD` becomes
    /// the client's: nothing else of the process may use it.
    pub fn from_variables(var: impl Fn(&str) -> Option<String>) -> Option<io::Result<Self>> {
        let rank = var(ENV_RANK).and_then(|r| r.parse().ok()).unwrap_or(0);
        let fd = var(ENV_FD);
        let port = var(ENV_PORT);
        let stream = match (fd, port) {
            (None, None) => return None,
            (Some(fd), _) => {
                use std::os::fd::FromRawFd;
                let Ok(fd) = fd.parse::<i32>() else {
                    return Some(Err(invalid(format!("{ENV_FD}={fd:?} is not a descriptor"))));
                };
                // SAFETY: fcntl only inspects the descriptor number; an invalid one fails.
                if unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
                    return Some(Err(invalid(format!(
                        "{ENV_FD}={fd} is not an open descriptor"
                    ))));
                }
                // SAFETY: the launcher gave this process the descriptor for PMI alone,
                // and the callers take it once (see above).
                PmiStream::Inherited(unsafe { std::os::unix::net::UnixStream::from_raw_fd(fd) })
            }
            (None, Some(addr)) => match connect(&addr, var(ENV_SECRET).as_deref()) {
                Ok(s) => PmiStream::Network(s),
                Err(e) => {
                    return Some(Err(io::Error::new(
                        e.kind(),
                        format!("cannot reach the launcher at {ENV_PORT}={addr}: {e}"),
                    )))
                }
            },
        };
        Some(Client::init(stream, rank, var(ENV_JOBID).as_deref()))
    }

    /// The address of this host as the launcher sees it (over a network
    /// connection), which other processes of the job can reach too.
    pub fn reachable_address(&self) -> Option<std::net::IpAddr> {
        match &self.stream {
            PmiStream::Network(s) => s.local_addr().ok().map(|a| a.ip()),
            PmiStream::Inherited(_) => None,
        }
    }
}

impl<S: Read + Write> KeyValueStore for Client<S> {
    fn put(&mut self, key: &str, value: &str) -> io::Result<()> {
        Client::put(self, key, value)
    }
    fn fence(&mut self) -> io::Result<()> {
        Client::fence(self)
    }
    fn get(&mut self, key: &str) -> io::Result<Option<String>> {
        Client::get(self, key)
    }
}
