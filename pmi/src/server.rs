//! The launcher's half: the key-value store of one job, serving one connection
//! per process (inherited descriptor or network connection).

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::sync::{Condvar, Mutex};

use crate::wire::{encode, get, invalid, read_message};

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
                "init" => {
                    if get(&m, "pmi_version") != Some("2") {
                        return Err(invalid("a PMI-1 init for another version than 2"));
                    }
                    stream.write_all(crate::wire::INIT_REPLY)?;
                    continue;
                }
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
