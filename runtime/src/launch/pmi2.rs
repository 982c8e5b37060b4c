//! The PMI-2 wire protocol (as MPICH's and Slurm's `srun --mpi=pmi2` speak it):
//! each message is a 6-character decimal length followed by `cmd=NAME;key=value;…`
//! with `;` inside values doubled. The launcher runs a [`Server`] per job and one
//! connection per process; processes use [`Client`]. Only the commands a job needs
//! are served: fullinit, job-getid, kvs-put, kvs-get, kvs-fence, finalize, abort.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::sync::{Condvar, Mutex};

/// A decoded message: `cmd` first, then the other keys in order.
pub type Message = Vec<(String, String)>;

fn get<'a>(m: &'a Message, key: &str) -> Option<&'a str> {
    m.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

/// Encodes one message with its length header.
pub fn encode(fields: &[(&str, &str)]) -> Vec<u8> {
    let mut body = String::new();
    for (k, v) in fields {
        body.push_str(k);
        body.push('=');
        body.push_str(&v.replace(';', ";;"));
        body.push(';');
    }
    let mut out = format!("{:6}", body.len()).into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

fn invalid(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

/// Decodes a message body (without the length header).
pub fn decode(body: &str) -> io::Result<Message> {
    let mut out = Vec::new();
    let mut chars = body.chars().peekable();
    while chars.peek().is_some() {
        let key: String = chars.by_ref().take_while(|&c| c != '=').collect();
        let mut value = String::new();
        loop {
            match chars.next() {
                Some(';') if chars.peek() == Some(&';') => {
                    chars.next();
                    value.push(';');
                }
                Some(';') | None => break,
                Some(c) => value.push(c),
            }
        }
        if key.is_empty() {
            return Err(invalid(format!(
                "PMI-2 message with an empty key: {body:?}"
            )));
        }
        out.push((key, value));
    }
    if out.first().is_none_or(|(k, _)| k != "cmd") {
        return Err(invalid(format!(
            "PMI-2 message without cmd first: {body:?}"
        )));
    }
    Ok(out)
}

/// Reads one message; `Ok(None)` at a clean end of stream.
pub fn read_message(r: &mut impl Read) -> io::Result<Option<Message>> {
    let mut header = [0u8; 6];
    let mut got = 0;
    while got < 6 {
        let n = r.read(&mut header[got..])?;
        if n == 0 {
            return if got == 0 {
                Ok(None)
            } else {
                Err(invalid("PMI-2 stream ended inside a length header"))
            };
        }
        got += n;
    }
    let len: usize = std::str::from_utf8(&header)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .ok_or_else(|| {
            invalid(format!(
                "bad PMI-2 length header {:?}",
                String::from_utf8_lossy(&header)
            ))
        })?;
    let mut body = vec![0u8; len];
    r.read_exact(&mut body)?;
    let body = String::from_utf8(body).map_err(|_| invalid("PMI-2 message is not UTF-8"))?;
    decode(&body).map(Some)
}

/// How a process's connection ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    Finalized,
    Aborted(String),
    /// The stream closed without finalize (the process died or exited early).
    Closed,
}

struct FenceState {
    arrived: usize,
    generation: u64,
}

/// The key-value store of one job.
pub struct Server {
    size: usize,
    jobid: String,
    kvs: Mutex<HashMap<String, String>>,
    fence: Mutex<FenceState>,
    fenced: Condvar,
    /// Ranks already introduced over network connections.
    claimed: Mutex<std::collections::HashSet<usize>>,
}

impl Server {
    pub fn new(size: usize, jobid: &str) -> Server {
        Server {
            size,
            jobid: jobid.to_string(),
            kvs: Mutex::new(HashMap::new()),
            fence: Mutex::new(FenceState {
                arrived: 0,
                generation: 0,
            }),
            fenced: Condvar::new(),
            claimed: Mutex::new(std::collections::HashSet::new()),
        }
    }

    fn fullinit_response(&self, rank: usize) -> Vec<(String, String)> {
        vec![
            ("cmd".into(), "fullinit-response".into()),
            ("rc".into(), "0".into()),
            ("pmi-version".into(), "2".into()),
            ("pmi-subversion".into(), "0".into()),
            ("rank".into(), rank.to_string()),
            ("size".into(), self.size.to_string()),
            ("appnum".into(), "0".into()),
            ("debugged".into(), "FALSE".into()),
            ("pmiverbose".into(), "FALSE".into()),
        ]
    }

    /// Serves process `rank` on `stream` until it finalizes, aborts or closes.
    pub fn serve(&self, rank: usize, stream: &mut (impl Read + Write)) -> io::Result<Ending> {
        self.serve_as(Some(rank), stream)
    }

    /// Serves a process that connected over the network (`PMI_PORT`): it is
    /// identified by the `pmirank` of its fullinit, which must be a rank of the
    /// job not claimed by another connection.
    pub fn serve_connected(&self, stream: &mut (impl Read + Write)) -> io::Result<Ending> {
        self.serve_as(None, stream)
    }

    fn serve_as(
        &self,
        known: Option<usize>,
        stream: &mut (impl Read + Write),
    ) -> io::Result<Ending> {
        let mut rank = known.unwrap_or(usize::MAX);
        loop {
            let Some(m) = read_message(stream)? else {
                return Ok(Ending::Closed);
            };
            let cmd = m[0].1.clone();
            let reply: Vec<(String, String)> = match cmd.as_str() {
                "fullinit" if known.is_none() => {
                    let r = get(&m, "pmirank")
                        .and_then(|r| r.parse::<usize>().ok())
                        .filter(|&r| r < self.size)
                        .ok_or_else(|| invalid("fullinit without a pmirank of this job"))?;
                    if !self.claimed.lock().unwrap().insert(r) {
                        return Err(invalid(format!(
                            "two processes introduced themselves as rank {r}"
                        )));
                    }
                    rank = r;
                    self.fullinit_response(rank)
                }
                "fullinit" => {
                    if let Some(r) = get(&m, "pmirank") {
                        if r.parse::<usize>().ok() != Some(rank) {
                            return Err(invalid(format!(
                                "process {rank} introduced itself as rank {r}"
                            )));
                        }
                    }
                    self.fullinit_response(rank)
                }
                _ if rank == usize::MAX => {
                    return Err(invalid(format!("{cmd} before fullinit")));
                }
                "job-getid" => vec![
                    ("cmd".into(), "job-getid-response".into()),
                    ("rc".into(), "0".into()),
                    ("jobid".into(), self.jobid.clone()),
                ],
                "kvs-put" => {
                    let (Some(k), Some(v)) = (get(&m, "key"), get(&m, "value")) else {
                        return Err(invalid("kvs-put without key or value"));
                    };
                    self.kvs
                        .lock()
                        .unwrap()
                        .insert(k.to_string(), v.to_string());
                    vec![
                        ("cmd".into(), "kvs-put-response".into()),
                        ("rc".into(), "0".into()),
                    ]
                }
                "kvs-get" => {
                    let k = get(&m, "key").ok_or_else(|| invalid("kvs-get without key"))?;
                    match self.kvs.lock().unwrap().get(k) {
                        Some(v) => vec![
                            ("cmd".into(), "kvs-get-response".into()),
                            ("rc".into(), "0".into()),
                            ("found".into(), "TRUE".into()),
                            ("value".into(), v.clone()),
                        ],
                        None => vec![
                            ("cmd".into(), "kvs-get-response".into()),
                            ("rc".into(), "0".into()),
                            ("found".into(), "FALSE".into()),
                        ],
                    }
                }
                "kvs-fence" => {
                    // Everyone's puts are visible to everyone's gets after the fence.
                    let mut f = self.fence.lock().unwrap();
                    let gen = f.generation;
                    f.arrived += 1;
                    if f.arrived == self.size {
                        f.arrived = 0;
                        f.generation += 1;
                        self.fenced.notify_all();
                    } else {
                        while f.generation == gen {
                            f = self.fenced.wait(f).unwrap();
                        }
                    }
                    vec![
                        ("cmd".into(), "kvs-fence-response".into()),
                        ("rc".into(), "0".into()),
                    ]
                }
                "finalize" => {
                    let bytes = encode(&[("cmd", "finalize-response"), ("rc", "0")]);
                    stream.write_all(&bytes)?;
                    return Ok(Ending::Finalized);
                }
                "abort" => return Ok(Ending::Aborted(get(&m, "msg").unwrap_or("").to_string())),
                other => return Err(invalid(format!("unsupported PMI-2 command {other:?}"))),
            };
            let fields: Vec<(&str, &str)> = reply
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            stream.write_all(&encode(&fields))?;
        }
    }
}

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
    pub fn init(mut stream: S, rank: usize) -> io::Result<Client<S>> {
        let r = rank.to_string();
        stream.write_all(&encode(&[
            ("cmd", "fullinit"),
            ("pmirank", &r),
            ("threaded", "FALSE"),
        ]))?;
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
            (None, Some(addr)) => match std::net::TcpStream::connect(&addr) {
                Ok(s) => PmiStream::Network(s),
                Err(e) => {
                    return Some(Err(io::Error::new(
                        e.kind(),
                        format!("cannot reach the launcher at {ENV_PORT}={addr}: {e}"),
                    )))
                }
            },
        };
        Some(Client::init(stream, rank))
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

impl<S: Read + Write> mpcrs_signaling::KeyValueStore for Client<S> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixStream;
    use std::sync::Arc;

    #[test]
    fn wire_format_round_trips_with_escaped_semicolons() {
        let bytes = encode(&[("cmd", "kvs-put"), ("key", "a"), ("value", "x;y")]);
        assert_eq!(&bytes[..6], b"    29");
        let body = std::str::from_utf8(&bytes[6..]).unwrap();
        assert_eq!(body, "cmd=kvs-put;key=a;value=x;;y;");
        let m = decode(body).unwrap();
        assert_eq!(m[2], ("value".to_string(), "x;y".to_string()));
        assert!(decode("key=a;").is_err());
    }

    #[test]
    fn processes_exchange_ring_addresses_through_the_store() {
        let n = 8;
        let server = Arc::new(Server::new(n, "job-7"));
        let mut servers = Vec::new();
        let mut clients = Vec::new();
        for rank in 0..n {
            let (a, b) = UnixStream::pair().unwrap();
            let s = server.clone();
            servers.push(std::thread::spawn(move || {
                let mut b = b;
                s.serve(rank, &mut b).unwrap()
            }));
            clients.push(std::thread::spawn(move || {
                let mut c = Client::init(a, rank).unwrap();
                assert_eq!((c.rank, c.size), (rank, n));
                assert_eq!(c.job_id().unwrap(), "job-7");
                c.put(
                    &format!("ring-{rank}"),
                    &format!("{rank}:node{}:{}", rank % 2, 4000 + rank),
                )
                .unwrap();
                c.fence().unwrap();
                let next = (rank + 1) % n;
                let v = c.get(&format!("ring-{next}")).unwrap();
                assert_eq!(
                    v.as_deref(),
                    Some(format!("{next}:node{}:{}", next % 2, 4000 + next).as_str())
                );
                assert_eq!(c.get("missing").unwrap(), None);
                if rank == 3 {
                    c.abort("giving up; on purpose").unwrap();
                } else {
                    c.finalize().unwrap();
                }
            }));
        }
        for c in clients {
            c.join().unwrap();
        }
        let endings: Vec<Ending> = servers.into_iter().map(|s| s.join().unwrap()).collect();
        assert_eq!(endings[3], Ending::Aborted("giving up; on purpose".into()));
        assert!(endings
            .iter()
            .enumerate()
            .all(|(i, e)| i == 3 || *e == Ending::Finalized));
    }
}
