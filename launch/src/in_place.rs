//! Recovery in place, the launcher's half (`mpcrs-run --recover in-place`; the
//! processes' half is the runtime's recovery/): when a process of the job dies,
//! the others run on; a replacement starts in its place and every process
//! joins a new run of the job, whose ranks start again from `main`.
//!
//! Every process keeps a recovery connection to the launcher
//! (`MPCRS_RECOVERY_PORT`, the job's handshake first). On a failure the
//! launcher opens a new key-value store for run R+1 (a new job id, so new
//! shared-memory names), tells every survivor `run R+1` with the variables
//! that reach it, and starts the replacement with them. The recovery took the
//! time from the failure seen to every survivor `ready` and the replacement
//! connected. The job ends when every process said `done R` of the current
//! run: each then hears `end`.

use std::collections::{HashMap, HashSet};
use std::io::{self, BufRead, BufReader, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::process::Command;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mpcrs_auth::{JobSecret, Role};
use mpcrs_pmi::{self as pmi2, Server};
use mpcrs_settings::variables as env;

use crate::processes::{copy_command, job_id, serve_network_port};
use crate::supervise::{Outcome, ProcessSpec, Recover};

/// How long a connection may take to prove itself and say who it is.
const HANDSHAKE_TIME: Duration = Duration::from_secs(10);

/// What a process said on its recovery connection.
enum Event {
    Hello(usize),
    Done(usize, u64),
    Ready(usize, u64),
}

/// A recovery under way.
struct Pending {
    seen: Instant,
    failed: usize,
    ready: HashSet<usize>,
}

/// The launcher's half of recovery in place for one job.
pub struct InPlace {
    processes: usize,
    /// The job's secret, known once its processes are made ([`InPlace::prepare`]).
    secret: Arc<std::sync::OnceLock<JobSecret>>,
    /// Where the processes reach this host (the key-value store's address).
    ip: IpAddr,
    port: u16,
    events: mpsc::Receiver<Event>,
    writers: Arc<Mutex<HashMap<usize, TcpStream>>>,
    /// What each process got on its standard input (a process on another
    /// host: the job's secrets, for its agent's shell).
    first_inputs: HashMap<usize, String>,
    run: u64,
    recoveries: u32,
    max: u32,
    done: HashSet<usize>,
    pending: Option<Pending>,
}

impl InPlace {
    /// Listens for the recovery connections of a job of `processes`
    /// processes, on every address of this host (each connection proves the
    /// job's secret first); at most `max` recoveries.
    pub fn start(processes: usize, max: u32) -> io::Result<InPlace> {
        let listener = TcpListener::bind((std::net::Ipv4Addr::UNSPECIFIED, 0))?;
        let port = listener.local_addr()?.port();
        let (tx, events) = mpsc::channel();
        let writers: Arc<Mutex<HashMap<usize, TcpStream>>> = Arc::default();
        let secret: Arc<std::sync::OnceLock<JobSecret>> = Arc::default();
        let (w, s) = (writers.clone(), secret.clone());
        std::thread::Builder::new()
            .name("recovery-accept".into())
            .spawn(move || {
                for stream in listener.incoming() {
                    let Ok(stream) = stream else { continue };
                    let (w, s, tx) = (w.clone(), s.clone(), tx.clone());
                    std::thread::spawn(move || {
                        // No process connects before the secret is known.
                        let Some(secret) = s.get() else { return };
                        if let Err(e) = serve(stream, secret, &w, &tx) {
                            tracing::debug!("recovery connection: {e}");
                        }
                    });
                }
            })?;
        Ok(InPlace {
            processes,
            secret,
            ip: std::net::Ipv4Addr::LOCALHOST.into(),
            port,
            events,
            writers,
            first_inputs: HashMap::new(),
            run: 1,
            recoveries: 0,
            max,
            done: HashSet::new(),
            pending: None,
        })
    }

    /// The variables every process of the job starts with.
    pub fn variables(&self) -> [(&'static str, String); 2] {
        [
            (env::RECOVER.name, "in-place".into()),
            (env::RECOVERY_PORT.name, self.port.to_string()),
        ]
    }

    /// Learns from the job's processes, before they start, its secret, where
    /// they reach this host and what each reads first.
    pub fn prepare(&mut self, specs: &[ProcessSpec]) -> Result<(), String> {
        let secret = specs
            .iter()
            .find_map(secret_of)
            .ok_or("the job's processes have no secret")?;
        let _ = self.secret.set(secret);
        if let Some(ip) = specs.iter().find_map(key_value_store_of) {
            self.ip = ip;
        }
        for s in specs {
            if let Some(i) = &s.first_input {
                self.first_inputs.insert(s.index, i.clone());
            }
        }
        Ok(())
    }

    /// Says `words` to process `index`.
    fn tell(&self, index: usize, words: &str) -> io::Result<()> {
        let mut w = self.writers.lock().unwrap();
        let s = w.get_mut(&index).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotConnected,
                format!("process {index} never connected"),
            )
        })?;
        s.write_all(words.as_bytes())
    }
}

/// The job's secret as a process gets it: in its environment, or (on another
/// host) first on its standard input.
fn secret_of(spec: &ProcessSpec) -> Option<JobSecret> {
    let hex = match &spec.first_input {
        Some(input) => input.lines().next()?.to_string(),
        None => spec
            .command
            .get_envs()
            .find(|(k, _)| *k == env::JOB_SECRET.name)?
            .1?
            .to_str()?
            .to_string(),
    };
    JobSecret::from_hex(&hex).ok()
}

/// The address of the key-value store a process reaches (`PMI_PORT`, in its
/// environment or its agent's command line), if over the network.
fn key_value_store_of(spec: &ProcessSpec) -> Option<IpAddr> {
    let in_env = spec
        .command
        .get_envs()
        .find(|(k, _)| *k == pmi2::ENV_PORT)
        .and_then(|(_, v)| v)
        .and_then(|v| v.to_str().map(str::to_string));
    let text = match in_env {
        Some(t) => t,
        None => {
            let line = spec.command.get_args().last()?.to_str()?;
            let at = line.find(&format!(" {}=", pmi2::ENV_PORT))?;
            line[at + pmi2::ENV_PORT.len() + 2..]
                .split(' ')
                .next()?
                .to_string()
        }
    };
    text.parse::<SocketAddr>().ok().map(|a| a.ip())
}

/// The command of a replacement for the process `spec` started, with `vars`
/// changed (`None`: removed). A process on another host gets them on its
/// agent's command line, where mpcrs-run writes them as `NAME=VALUE` words
/// (processes::across_hosts): each changed one is written again after its
/// old one, which env(1) then overrides.
fn replacement_command(
    spec: &ProcessSpec,
    vars: &[(String, Option<String>)],
    remote: bool,
) -> Command {
    let mut command = copy_command(&spec.command);
    if !remote {
        for (k, v) in vars {
            match v {
                Some(v) => command.env(k, v),
                None => command.env_remove(k),
            };
        }
        return command;
    }
    let mut args: Vec<String> = spec
        .command
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if let Some(line) = args.last_mut() {
        // After the last word of these variables (an earlier replacement's
        // included), which come before the program's.
        let at = vars
            .iter()
            .filter_map(|(k, _)| line.rfind(&format!(" {k}=")))
            .max()
            .map(|i| i + 1 + line[i + 1..].find(' ').unwrap_or(line.len() - i - 1))
            .unwrap_or(line.len());
        let words: String = vars
            .iter()
            .filter_map(|(k, v)| {
                Some(format!(
                    " {}",
                    crate::hosts::shell_quote(&format!("{k}={}", v.as_ref()?))
                ))
            })
            .collect();
        line.insert_str(at, &words);
    }
    let mut c = Command::new(spec.command.get_program());
    c.args(args);
    c
}

/// Serves one recovery connection: handshake, `hello P`, then the process's
/// words.
fn serve(
    mut stream: TcpStream,
    secret: &JobSecret,
    writers: &Mutex<HashMap<usize, TcpStream>>,
    tx: &mpsc::Sender<Event>,
) -> io::Result<()> {
    stream.set_nodelay(true)?;
    stream.set_read_timeout(Some(HANDSHAKE_TIME))?;
    mpcrs_auth::over_stream(&mut stream, secret, Role::Acceptor)?;
    let mut lines = BufReader::new(stream.try_clone()?).lines();
    let hello = lines.next().ok_or(io::ErrorKind::UnexpectedEof)??;
    let index: usize = hello
        .strip_prefix("hello ")
        .and_then(|p| p.trim().parse().ok())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, format!("{hello:?}")))?;
    stream.set_read_timeout(None)?;
    writers.lock().unwrap().insert(index, stream);
    let _ = tx.send(Event::Hello(index));
    for line in lines {
        let line = line?;
        let word = |p: &str| {
            line.strip_prefix(p)
                .and_then(|r| r.trim().parse::<u64>().ok())
        };
        let event = match (word("done "), word("ready ")) {
            (Some(r), _) => Event::Done(index, r),
            (_, Some(r)) => Event::Ready(index, r),
            _ => continue,
        };
        if tx.send(event).is_err() {
            break;
        }
    }
    Ok(())
}

impl Recover for InPlace {
    fn replace(&mut self, failed: &ProcessSpec, outcome: &Outcome) -> Option<ProcessSpec> {
        let Outcome::Failed { reason, .. } = outcome else {
            return None;
        };
        if let Some(p) = &self.pending {
            // Its survivors may be waiting for the dead one in the new run's
            // key-value store: nothing would tell them of another run.
            mpcrs_settings::report!(
                error,
                "mpcrs-run: process {} {reason} while the job was recovering from process {}'s failure ({:.0} ms ago); ending the job",
                failed.index,
                p.failed,
                p.seen.elapsed().as_secs_f64() * 1e3
            );
            return None;
        }
        if self.recoveries >= self.max {
            mpcrs_settings::report!(
                error,
                "mpcrs-run: process {} {reason}; no recovery in place left (--max-restarts {})",
                failed.index,
                self.max
            );
            return None;
        }
        let run = self.run + 1;
        // The new run's key-value store, under a job id of its own.
        let jobid = format!("{}-r{run}", job_id());
        let started = (|| -> io::Result<SocketAddr> {
            let server = Arc::new(Server::new(self.processes, &jobid));
            let listener = TcpListener::bind((self.ip, 0))?;
            let port = listener.local_addr()?;
            let secret = self
                .secret
                .get()
                .cloned()
                .ok_or(io::ErrorKind::NotConnected)?;
            serve_network_port(listener, server, secret, self.processes)?;
            Ok(port)
        })();
        let port = match started {
            Ok(p) => p,
            Err(e) => {
                mpcrs_settings::report!(error, "mpcrs-run: cannot start run {run} of the job: {e}");
                return None;
            }
        };
        let vars: Vec<(String, Option<String>)> = vec![
            (pmi2::ENV_FD.into(), None),
            (pmi2::ENV_PORT.into(), Some(port.to_string())),
            (env::RUN.name.into(), Some(run.to_string())),
        ];
        let mut notice = format!("run {run}\n");
        for (k, v) in &vars {
            match v {
                Some(v) => notice.push_str(&format!("{k}={v}\n")),
                None => notice.push_str(&format!("-{k}\n")),
            }
        }
        notice.push_str(".\n");
        for i in (0..self.processes).filter(|&i| i != failed.index) {
            if let Err(e) = self.tell(i, &notice) {
                mpcrs_settings::report!(
                    error,
                    "mpcrs-run: process {} {reason}, and process {i} cannot be told of run {run}: {e}",
                    failed.index
                );
                return None;
            }
        }
        let first_input = self.first_inputs.get(&failed.index).cloned();
        let command = replacement_command(failed, &vars, first_input.is_some());
        self.recoveries += 1;
        self.run = run;
        self.done.clear();
        self.pending = Some(Pending {
            seen: Instant::now(),
            failed: failed.index,
            ready: HashSet::new(),
        });
        mpcrs_settings::report!(
            warn,
            "mpcrs-run: process {} (ranks {}-{}, {}) {reason}; recovering in place ({} of {}): run {run} of the job, a replacement for process {} starts",
            failed.index,
            failed.ranks.start,
            failed.ranks.end.saturating_sub(1),
            failed.host,
            self.recoveries,
            self.max,
            failed.index
        );
        Some(ProcessSpec {
            index: failed.index,
            ranks: failed.ranks.clone(),
            host: failed.host.clone(),
            command,
            first_input,
            cpus: failed.cpus,
        })
    }

    fn tick(&mut self) {
        while let Ok(e) = self.events.try_recv() {
            match e {
                Event::Hello(i) => {
                    if let Some(p) = &mut self.pending {
                        if i == p.failed {
                            p.ready.insert(i);
                        }
                    }
                }
                Event::Ready(i, r) if r == self.run => {
                    if let Some(p) = &mut self.pending {
                        p.ready.insert(i);
                    }
                }
                Event::Done(i, r) if r == self.run => {
                    self.done.insert(i);
                }
                _ => {}
            }
        }
        if let Some(p) = &self.pending {
            if p.ready.len() == self.processes {
                mpcrs_settings::report!(
                    warn,
                    "mpcrs-run: recovered in place in {:.0} ms: every process is in run {} and every rank starts again from main",
                    p.seen.elapsed().as_secs_f64() * 1e3,
                    self.run
                );
                self.pending = None;
            }
        }
        if self.done.len() == self.processes {
            self.done.clear();
            for i in 0..self.processes {
                // A process that cannot hear it has ended already.
                let _ = self.tell(i, "end\n");
            }
        }
    }
}

impl Drop for InPlace {
    fn drop(&mut self) {
        // Rings of the later runs' names that no process removed.
        for run in 2..=self.run {
            mpcrs_rails::shm_rail::remove_job_rings(&format!("{}-r{run}", job_id()));
        }
    }
}
