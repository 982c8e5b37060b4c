//! The job's checkpoint services (`--ckpt-service HOST[,HOST]`): one
//! `mpcrs-ckptd` per host named, started before the job's first run and
//! kept across its restarts (so a restarted run finds its ranks' CRaaS data
//! in their memory), on this host directly or on another through the launch
//! agent. Each gets the services' secret (one for all runs of mpcrs-run,
//! apart from each run's job secret) as the first line of its standard input
//! and answers with its port; closing that input at the end of mpcrs-run
//! makes it flush what it holds and exit.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use mpcrs_auth::JobSecret;
use mpcrs_craas::FlushPolicy;

use crate::elsewhere::Agent;
use crate::hosts;

/// One running service.
struct Running {
    host: String,
    child: Child,
    input: Option<ChildStdin>,
}

/// The services of the job, ended (flushed) when dropped.
pub struct Services {
    running: Vec<Running>,
    /// Their addresses as the ranks reach them (`IP:PORT`), in the order of
    /// the hosts given.
    pub addrs: Vec<String>,
}

/// The secret in `path` (hex, one line). A file that group or others may
/// read is refused, naming it; with `make`, a missing one is made (0600)
/// with a new secret.
pub fn secret_from_file(path: &Path, make: bool) -> Result<JobSecret, String> {
    use std::os::unix::fs::PermissionsExt;
    let name = path.display();
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && make => {
            let s = JobSecret::generate().map_err(|e| format!("{name}: {e}"))?;
            let mut f =
                mpcrs_cr::commit::create_private(path).map_err(|e| format!("{name}: {e}"))?;
            writeln!(f, "{}", s.to_hex()).map_err(|e| format!("{name}: {e}"))?;
            return Ok(s);
        }
        Err(e) => return Err(format!("the secret file {name}: {e}")),
        Ok(m) if m.permissions().mode() & 0o077 != 0 => {
            return Err(format!(
                "the secret file {name} may be read by others (mode {:o}); make it 0600",
                m.permissions().mode() & 0o777
            ))
        }
        Ok(_) => {}
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("the secret file {name}: {e}"))?;
    JobSecret::from_hex(text.trim()).map_err(|e| format!("the secret file {name}: {e}"))
}

/// Where the job's ranks reach a service on `host` from: this host's
/// loopback when every process runs here, else an address of the host that
/// the other hosts can reach.
fn address_of(host: &str, local: bool, job_hosts: &[String]) -> Result<std::net::IpAddr, String> {
    if local {
        match job_hosts
            .iter()
            .find(|h| !hosts::is_local(h, &mpcrs_settings::local_hostname()).unwrap_or(true))
        {
            Some(remote) => hosts::address_towards(remote),
            None => Ok(std::net::Ipv4Addr::LOCALHOST.into()),
        }
    } else {
        hosts::resolve(host)?
            .into_iter()
            .next()
            .ok_or_else(|| format!("host {host:?} has no address"))
    }
}

/// Starts a service on each of `service_hosts`, flushing to `dir` by
/// `policy`; `job_hosts` are the hosts of the job's processes; `stats`: each
/// prints what it received at its end (`--net-stats`).
pub fn start(
    service_hosts: &[String],
    job_hosts: &[String],
    agent: &[String],
    dir: Option<&Path>,
    policy: FlushPolicy,
    secret: &JobSecret,
    stats: bool,
) -> Result<Services, String> {
    let own = mpcrs_settings::local_hostname();
    let program = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(|d| d.join("mpcrs-ckptd")))
        .ok_or("cannot tell where mpcrs-ckptd is (beside mpcrs-run)")?;
    let mut services = Services {
        running: Vec::new(),
        addrs: Vec::new(),
    };
    for host in service_hosts {
        // HOST:PORT: a service already running (on its own, with this
        // secret), used and left running.
        if let Some((h, port)) = host.rsplit_once(':') {
            let port: u16 = port
                .parse()
                .map_err(|_| format!("--ckpt-service {host}: {port:?} is not a port"))?;
            let ip = hosts::resolve(h)?
                .into_iter()
                .next()
                .ok_or_else(|| format!("--ckpt-service {host}: host {h:?} has no address"))?;
            services
                .addrs
                .push(std::net::SocketAddr::new(ip, port).to_string());
            continue;
        }
        let local = hosts::is_local(host, &own)?;
        let mut words = vec![program.to_string_lossy().into_owned()];
        if let Some(d) = dir {
            words.extend(["--dir".into(), d.to_string_lossy().into_owned()]);
        }
        words.extend(["--flush".into(), policy.to_arg()]);
        if stats {
            words.push("--stats".into());
        }
        let mut cmd = if local {
            let mut c = Command::new(&words[0]);
            c.args(&words[1..]);
            c
        } else {
            if agent.is_empty() {
                return Err("the launch agent is empty".into());
            }
            let line = format!(
                "exec {}",
                words
                    .iter()
                    .map(|w| hosts::shell_quote(w))
                    .collect::<Vec<_>>()
                    .join(" ")
            );
            Agent::Login(agent.to_vec()).on(host, line)
        };
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("--ckpt-service {host}: cannot start {}: {e}", words[0]))?;
        let mut input = child.stdin.take();
        if let Some(i) = &mut input {
            let _ = writeln!(i, "{}", secret.to_hex()).and_then(|_| i.flush());
        }
        let port = read_port(&mut child, Duration::from_secs(30));
        let running = Running {
            host: host.clone(),
            child,
            input,
        };
        services.running.push(running);
        let port = port.map_err(|e| format!("--ckpt-service {host}: {e}"))?;
        let ip = address_of(host, local, job_hosts)
            .map_err(|e| format!("--ckpt-service {host}: {e}"))?;
        services
            .addrs
            .push(std::net::SocketAddr::new(ip, port).to_string());
    }
    Ok(services)
}

/// The port a starting service announces on its standard output.
fn read_port(child: &mut Child, limit: Duration) -> Result<u16, String> {
    let out = child.stdout.take().ok_or("no standard output")?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(out).lines();
        let first = lines.next();
        let _ = tx.send(first);
        // Whatever else it prints is drained, so it never blocks on a pipe.
        for _ in lines {}
    });
    let line = match rx.recv_timeout(limit) {
        Ok(Some(Ok(l))) => l,
        Ok(_) => return Err("mpcrs-ckptd ended before it listened".into()),
        Err(_) => {
            return Err(format!(
                "mpcrs-ckptd did not listen within {} s",
                limit.as_secs()
            ))
        }
    };
    line.strip_prefix("mpcrs-ckptd: listening on ")
        .and_then(|p| p.trim().parse().ok())
        .ok_or_else(|| format!("mpcrs-ckptd said {line:?}, not its port"))
}

impl Drop for Services {
    /// Ends every service: each flushes what it holds, then exits.
    fn drop(&mut self) {
        for r in &mut self.running {
            drop(r.input.take());
        }
        let limit = Instant::now() + Duration::from_secs(300);
        for r in &mut self.running {
            loop {
                match r.child.try_wait() {
                    Ok(Some(st)) if !st.success() => {
                        mpcrs_settings::report!(
                            warn,
                            "mpcrs-run: the checkpoint service on {} ended with {st}",
                            r.host
                        );
                        break;
                    }
                    Ok(Some(_)) | Err(_) => break,
                    Ok(None) if Instant::now() > limit => {
                        mpcrs_settings::report!(
                            warn,
                            "mpcrs-run: the checkpoint service on {} did not end its last flush within 300 s; killed",
                            r.host
                        );
                        let _ = r.child.kill();
                        let _ = r.child.wait();
                        break;
                    }
                    Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                }
            }
        }
    }
}
