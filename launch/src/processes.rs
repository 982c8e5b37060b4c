//! The processes of a multi-process job: contiguous blocks of ranks, one PMI-2
//! connection per process served by the launcher's key-value store, and the
//! environment that tells each process who it is.

use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::Arc;

use mpcrs_auth::{JobSecret, Role};
use mpcrs_pmi::{self as pmi2, Ending, Server};
use mpcrs_settings::rank_blocks;
use mpcrs_settings::variables as env;

use crate::hosts::{self, Host};
use crate::options::Options;
use crate::supervise::ProcessSpec;

/// The id of the job this launcher runs (PMI-2's job id; it names the job's
/// shared-memory rings).
pub fn job_id() -> String {
    format!("mpcrs-{}", std::process::id())
}

/// The key of the job this mpcrs-run starts ([`env::JOB_KEY`]): random, made
/// once, the same for every run of it (a restart from a directory takes the
/// key its manifest records instead).
pub fn job_key() -> u64 {
    use std::hash::BuildHasher;
    static KEY: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *KEY.get_or_init(|| {
        let seed = (std::process::id(), std::time::SystemTime::now());
        // Never 0, which means "no key".
        std::collections::hash_map::RandomState::new().hash_one(seed) | 1
    })
}

/// The secret between the processes of this mpcrs-run's jobs and its
/// checkpoint services ([`env::CKPT_SERVICE_SECRET`]): made once, the same
/// for every run (the services outlive runs), apart from each run's own job
/// secret.
pub fn service_secret() -> io::Result<JobSecret> {
    static SECRET: std::sync::OnceLock<JobSecret> = std::sync::OnceLock::new();
    if let Some(s) = SECRET.get() {
        return Ok(s.clone());
    }
    let s = JobSecret::generate()?;
    Ok(SECRET.get_or_init(|| s).clone())
}

/// What tells process `index` of `processes` who it is: PMI's rank and size, and
/// mpcrs's own variables; for a process of one rank, that rank's place in
/// the job under Open MPI's and MPICH's names too (see
/// mpcrs_settings::rank_identity).
/// `blocks` are the ranks of every process, `nodes` lists the node of every
/// process (see [`env::NODES`]), `node_names` the host of every node
/// ([`env::NODE_NAMES`]).
fn identity(
    index: usize,
    blocks: &[std::ops::Range<usize>],
    nodes: &str,
    node_names: &str,
) -> Vec<(&'static str, String)> {
    let processes = blocks.len();
    let mut vars = vec![
        (pmi2::ENV_RANK, index.to_string()),
        (pmi2::ENV_SIZE, processes.to_string()),
        (env::PROCESSES.name, processes.to_string()),
        (env::PROCESS.name, index.to_string()),
        (env::NODES.name, nodes.to_string()),
        (env::NODE_NAMES.name, node_names.to_string()),
    ];
    if blocks[index].len() == 1 {
        // PMI_RANK and PMI_SIZE stay the process's: its PMI-2 identity, which
        // differs from its rank's when other processes hold several ranks
        // (-n 3 -p 2: process 1 holds rank 2).
        vars.extend(
            one_rank_identity(index, blocks, nodes)
                .into_iter()
                .filter(|(name, _)| *name != pmi2::ENV_RANK && *name != pmi2::ENV_SIZE),
        );
    }
    vars
}

/// The variables of the one rank of process `index` (see
/// mpcrs_settings::rank_identity); `nodes` as in [`identity`].
fn one_rank_identity(
    index: usize,
    blocks: &[std::ops::Range<usize>],
    nodes: &str,
) -> [(&'static str, String); 8] {
    let nodes: Vec<u32> = nodes
        .split(',')
        .filter_map(|n| n.trim().parse().ok())
        .collect();
    let rank = blocks[index].start;
    let size = blocks.last().map_or(0, |b| b.end);
    let (local, local_size) = mpcrs_settings::rank_identity::local_place(rank, blocks, &nodes);
    mpcrs_settings::rank_identity::rank_variables(rank, size, local, local_size)
}

/// A copy of `base` (program, arguments, environment, directory).
pub(crate) fn copy_command(base: &Command) -> Command {
    let mut c = Command::new(base.get_program());
    c.args(base.get_args());
    for (k, v) in base.get_envs() {
        match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        };
    }
    if let Some(d) = base.get_current_dir() {
        c.current_dir(d);
    }
    c
}

/// The processes of a job on this host: `base` itself for a single process,
/// else copies of it sharing a key-value store ([`with_key_value_store`]); each
/// as `launch` says.
pub fn on_this_host(
    base: Command,
    processes: usize,
    ranks: usize,
    host: &str,
    launch: &Launch,
) -> io::Result<Vec<ProcessSpec>> {
    let mut specs = if processes == 1 {
        let mut base = base;
        if ranks == 1 {
            // A job of one rank: that rank alone, on this host.
            base.envs(mpcrs_settings::rank_identity::rank_variables(0, 1, 0, 1));
        }
        vec![ProcessSpec {
            index: 0,
            ranks: 0..ranks,
            host: host.to_string(),
            command: base,
            first_input: None,
            cpus: None,
        }]
    } else {
        with_key_value_store(&base, processes, ranks, host)?
    };
    // Each process's own command: copies made for a key-value store carry no
    // pre-exec step of the base command.
    for spec in &mut specs {
        launch.apply_here(spec.index, &mut spec.command);
    }
    Ok(specs)
}

/// Prepares `processes` copies of `base`, each with its own PMI-2 connection
/// (`PMI_FD`, `PMI_RANK`, `PMI_SIZE`, as Slurm and hydra set them) served by a
/// thread of the launcher until the process finalizes, aborts or dies.
pub fn with_key_value_store(
    base: &Command,
    processes: usize,
    ranks: usize,
    host: &str,
) -> io::Result<Vec<ProcessSpec>> {
    let jobid = job_id();
    let server = Arc::new(Server::new(processes, &jobid));
    let secret = JobSecret::generate()?;
    let mut specs = Vec::with_capacity(processes);
    let nodes = vec!["0"; processes].join(",");
    // --bind-to none: each process as many workers as its share of the CPUs
    // would give, but no cpuset.
    let unbound = base
        .get_envs()
        .any(|(k, v)| k == env::BIND_TO.name && v.is_some_and(|v| v == "none"));
    let given = |name: &str| base.get_envs().any(|(k, v)| k == name && v.is_some());
    let shares = cpu_shares(processes);
    let blocks = rank_blocks(ranks, processes);
    for (index, block) in blocks.iter().cloned().enumerate() {
        // Both ends are close-on-exec; the child clears the flag on its own end
        // only, so no process inherits another's connection.
        let (ours, theirs) = UnixStream::pair()?;
        let fd = theirs.as_raw_fd();
        let mut command = copy_command(base);
        command
            .env(pmi2::ENV_FD, fd.to_string())
            .env(env::JOB_SECRET.name, secret.to_hex())
            .envs(identity(index, &blocks, &nodes, host));
        let keep_open = theirs;
        let cpus = match &shares {
            Some(s) if unbound => {
                if !given(env::WORKERS.name) {
                    // SAFETY: CPU_COUNT only reads the set.
                    let share = unsafe { libc::CPU_COUNT(&s[index]) };
                    command.env(env::WORKERS.name, share.max(1).to_string());
                }
                None
            }
            Some(s) => Some(s[index]),
            None => {
                // More processes than CPUs: one worker each, unless -c said
                // otherwise, and waiting threads give their CPU to the others.
                // (A variable the launcher removed is listed with no value.)
                if !given(env::WORKERS.name) {
                    command.env(env::WORKERS.name, "1");
                }
                if !given(env::YIELD_WHEN_IDLE.name)
                    && std::env::var_os(env::YIELD_WHEN_IDLE.name).is_none()
                {
                    command.env(env::YIELD_WHEN_IDLE.name, "1");
                }
                None
            }
        };
        // SAFETY: runs in the forked child before exec; fcntl is
        // async-signal-safe and touches only the child.
        unsafe {
            command.pre_exec(move || {
                let _ = &keep_open;
                if libc::fcntl(fd, libc::F_SETFD, 0) < 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let server = server.clone();
        std::thread::Builder::new()
            .name(format!("pmi2-{index}"))
            .spawn(move || {
                let mut stream = ours;
                report(index, server.serve(index, &mut stream));
            })?;
        specs.push(ProcessSpec {
            index,
            ranks: block,
            host: host.to_string(),
            command,
            first_input: None,
            cpus,
        });
    }
    Ok(specs)
}

/// The CPUs this process may use (its cpuset, as the scheduler's topology sees
/// it) split into `processes` contiguous shares of whole cores (as mpirun binds
/// processes to cores), so that the processes of a node do not pin their workers
/// to the same cores; `None` when there are more processes than CPUs.
fn cpu_shares(processes: usize) -> Option<Vec<libc::cpu_set_t>> {
    let mut cpus = mpcrs_scheduler::Topology::detect().cpus;
    if processes > cpus.len() {
        return None;
    }
    cpus.sort_by_key(|c| (c.package, c.core, c.cpu));
    Some(
        rank_blocks(cpus.len(), processes)
            .into_iter()
            .map(|share| {
                // SAFETY: a zeroed cpu_set_t is an empty set; CPU_SET takes OS CPU
                // indices from the cpuset, below CPU_SETSIZE.
                let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
                for c in &cpus[share] {
                    unsafe { libc::CPU_SET(c.cpu, &mut set) };
                }
                set
            })
            .collect(),
    )
}

fn report(index: usize, ending: io::Result<Ending>) {
    if let Ok(Ending::Aborted(msg)) = ending {
        mpcrs_settings::report!(error, "mpcrs-run: process {index} called abort: {msg}");
    }
    // Otherwise it finalized, or died and the supervisor reports it.
}

/// Prepares `processes` copies of `base` spread over `hosts`. Processes on other
/// hosts are started through `agent` (`ssh -o BatchMode=yes` by default: the
/// agent's words, then the host, then one shell command). Every process then
/// reaches the key-value store over the network (`PMI_PORT`), at this host's
/// address on the route to the first remote host, so each one also learns an
/// address of its own that the other hosts can reach.
///
/// `launch` says what each process gets besides `base`: its own variables (a
/// restart's image) and, for jobs with checkpoints, the settings that make it
/// restorable; those reach processes on other hosts through their command line.
pub fn across_hosts(
    base: &Command,
    ranks: usize,
    hosts: &[Host],
    placement: &[usize],
    agent: &[String],
    own_name: &str,
    launch: &Launch,
) -> Result<Vec<ProcessSpec>, String> {
    let processes = placement.len();
    let local: Vec<bool> = hosts
        .iter()
        .map(|h| hosts::is_local(&h.name, own_name))
        .collect::<Result<_, _>>()?;
    let Some(first_remote) = hosts.iter().zip(&local).find(|(_, &l)| !l).map(|(h, _)| h) else {
        let mut specs =
            with_key_value_store(base, processes, ranks, own_name).map_err(|e| e.to_string())?;
        for spec in &mut specs {
            launch.apply_here(spec.index, &mut spec.command);
        }
        return Ok(specs);
    };
    if agent.is_empty() {
        return Err("the launch agent is empty".into());
    }
    let ip = hosts::address_towards(&first_remote.name)?;
    let listener = std::net::TcpListener::bind((ip, 0))
        .map_err(|e| format!("key-value store on {ip}: {e}"))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let server = Arc::new(Server::new(processes, &job_id()));
    let secret = JobSecret::generate().map_err(|e| e.to_string())?;
    serve_network_port(listener, server, secret.clone(), processes).map_err(|e| e.to_string())?;
    let cwd = match base.get_current_dir() {
        Some(d) => d.to_path_buf(),
        None => std::env::current_dir().map_err(|e| e.to_string())?,
    };
    let blocks = rank_blocks(ranks, processes);
    // Every host of this machine is node 0; the others are numbered by host.
    let nodes = placement
        .iter()
        .map(|&h| if local[h] { 0 } else { h + 1 }.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let node_names = std::iter::once(own_name)
        .chain(hosts.iter().map(|h| h.name.as_str()))
        .collect::<Vec<_>>()
        .join(",");
    // The checkpoint services' secret goes as the job's does.
    let service_secret = base
        .get_envs()
        .find(|(k, _)| *k == env::CKPT_SERVICE_SECRET.name)
        .and_then(|(_, v)| v)
        .map(|v| v.to_string_lossy().into_owned());
    let mut specs = Vec::with_capacity(processes);
    for (index, block) in blocks.iter().cloned().enumerate() {
        let host = &hosts[placement[index]];
        let mut env: Vec<(String, String)> = base
            .get_envs()
            .filter(|(k, _)| *k != env::JOB_SECRET.name && *k != env::CKPT_SERVICE_SECRET.name)
            .filter_map(|(k, v)| {
                Some((
                    k.to_string_lossy().into_owned(),
                    v?.to_string_lossy().into_owned(),
                ))
            })
            .collect();
        env.extend([(pmi2::ENV_PORT.to_string(), format!("{ip}:{port}"))]);
        env.extend(
            identity(index, &blocks, &nodes, &node_names)
                .into_iter()
                .map(|(k, v)| (k.to_string(), v)),
        );
        env.extend((launch.own_env)(index));
        let mut first_input = None;
        let command = if local[placement[index]] {
            let mut c = copy_command(base);
            c.envs(env.iter().map(|(k, v)| (k, v)));
            c.env(env::JOB_SECRET.name, secret.to_hex());
            if launch.restorable {
                restorable(&mut c);
            }
            c
        } else {
            // Variables the base command removes are removed there too (the
            // remote login's environment has its own).
            let removed = base
                .get_envs()
                .filter(|(_, v)| v.is_none())
                .map(|(k, _)| k.to_string_lossy().into_owned());
            // The secrets come first on the agent's standard input, read by a
            // POSIX shell whatever the login shell: on a command line, anyone
            // on either host could read them with ps.
            let mut names = vec![env::JOB_SECRET.name];
            let mut input = format!("{}\n", secret.to_hex());
            if let Some(s) = &service_secret {
                names.push(env::CKPT_SERVICE_SECRET.name);
                input.push_str(&format!("{s}\n"));
            }
            let reads: Vec<String> = names
                .iter()
                .map(|n| format!("IFS= read -r {n} && "))
                .collect();
            let mut line = format!(
                "cd {} && exec sh -c {} sh",
                hosts::shell_quote(&cwd.to_string_lossy()),
                hosts::shell_quote(&format!(
                    "{}export {} && exec \"$@\"",
                    reads.concat(),
                    names.join(" ")
                ))
            );
            first_input = Some(input);
            if launch.restorable {
                // The launcher's personality does not cross ssh: ASLR off there.
                line.push_str(" setarch \"$(uname -m)\" -R");
                env.push(("GLIBC_TUNABLES".into(), restorable_tunables()));
            }
            line.push_str(" env");
            for k in removed {
                line.push_str(" -u ");
                line.push_str(&hosts::shell_quote(&k));
            }
            for (k, v) in &env {
                line.push(' ');
                line.push_str(&hosts::shell_quote(&format!("{k}={v}")));
            }
            line.push(' ');
            line.push_str(&hosts::shell_quote(&base.get_program().to_string_lossy()));
            for a in base.get_args() {
                line.push(' ');
                line.push_str(&hosts::shell_quote(&a.to_string_lossy()));
            }
            let mut c = Command::new(&agent[0]);
            c.args(&agent[1..]).arg(&host.name).arg(line);
            c
        };
        specs.push(ProcessSpec {
            index,
            ranks: block,
            host: host.name.clone(),
            command,
            first_input,
            cpus: None,
        });
    }
    Ok(specs)
}

/// Serves the key-value store on `listener` (`PMI_PORT`) to the job's
/// `processes` processes: each connection proves first that it knows the job's
/// `secret`; one that does not (or says nothing for a while) is closed and the
/// port keeps accepting until every process of the job came in.
pub(crate) fn serve_network_port(
    listener: std::net::TcpListener,
    server: Arc<Server>,
    secret: JobSecret,
    processes: usize,
) -> io::Result<()> {
    /// How long a connection may take to prove itself.
    const HANDSHAKE_TIME: std::time::Duration = std::time::Duration::from_secs(10);
    let admitted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    std::thread::Builder::new()
        .name("pmi2-accept".into())
        .spawn(move || {
            while admitted.load(std::sync::atomic::Ordering::Acquire) < processes {
                let Ok((mut stream, from)) = listener.accept() else {
                    return;
                };
                let (server, secret, admitted) = (server.clone(), secret.clone(), admitted.clone());
                std::thread::spawn(move || {
                    let _ = stream.set_nodelay(true);
                    let _ = stream.set_read_timeout(Some(HANDSHAKE_TIME));
                    if let Err(e) = mpcrs_auth::over_stream(&mut stream, &secret, Role::Acceptor) {
                        mpcrs_settings::report!(
                            warn,
                            "mpcrs-run: refused a connection to the key-value store from {from}: {e}"
                        );
                        return;
                    }
                    let _ = stream.set_read_timeout(None);
                    admitted.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
                    if let Ok(Ending::Aborted(msg)) = server.serve_connected(&mut stream) {
                        mpcrs_settings::report!(error, "mpcrs-run: a process called abort: {msg}");
                    }
                });
            }
        })?;
    Ok(())
}

/// What each process of a job gets besides the base command.
pub struct Launch<'a> {
    /// Started so that its images can be restored (jobs with checkpoints).
    pub restorable: bool,
    /// Variables of process `index` alone (a restart names its image).
    pub own_env: &'a dyn Fn(usize) -> Vec<(String, String)>,
}

impl Launch<'_> {
    /// A first run: nothing of its own, restorable with checkpoints.
    pub fn first_run(checkpoints: bool) -> Launch<'static> {
        Launch {
            restorable: checkpoints,
            own_env: &|_| Vec::new(),
        }
    }

    /// Applies to a process started on this host.
    pub fn apply_here(&self, index: usize, cmd: &mut Command) {
        cmd.envs((self.own_env)(index));
        if self.restorable {
            restorable(cmd);
        }
    }
}

/// glibc's tunables for a restorable process: the launcher's, with rseq
/// registration off.
fn restorable_tunables() -> String {
    match std::env::var("GLIBC_TUNABLES") {
        Ok(t) if !t.is_empty() => format!("{t}:glibc.pthread.rseq=0"),
        _ => "glibc.pthread.rseq=0".to_string(),
    }
}

/// Runs a process of this host so that its images can be restored at the same
/// addresses: ASLR off (as DMTCP does for MPI jobs) and glibc's rseq
/// registration off (restored memory would carry a registration the new thread
/// does not have).
pub fn restorable(cmd: &mut Command) {
    cmd.env("GLIBC_TUNABLES", restorable_tunables());
    // SAFETY: personality is async-signal-safe and changes only the child.
    unsafe {
        cmd.pre_exec(|| {
            let current = libc::personality(0xffff_ffff);
            if current == -1
                || libc::personality((current | libc::ADDR_NO_RANDOMIZE) as libc::c_ulong) == -1
            {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// How `--map-by` lays processes on hosts (by slot without it).
fn map_by_of(args: &Options) -> hosts::MapBy {
    args.map_by.map(|m| m.by).unwrap_or_default()
}

/// The host each of a job's `processes` processes runs on as [`place`] lays
/// them out (`None`: this host).
pub fn hosts_of_processes(args: &Options, processes: usize) -> Result<Vec<Option<String>>, String> {
    let Some(hosts) = crate::options::hosts(args) else {
        return Ok(vec![None; processes]);
    };
    let hosts: Vec<Host> = hosts?
        .into_iter()
        .filter(|h| !args.left_out.contains(&h.name))
        .collect();
    let own = mpcrs_settings::local_hostname();
    hosts::place(processes, &hosts, map_by_of(args))
        .into_iter()
        .map(|h| {
            let name = &hosts[h].name;
            Ok((!hosts::is_local(name, &own)?).then(|| name.clone()))
        })
        .collect()
}

/// The processes of a job: on the hosts of `--host`/`--hostfile`, or on this
/// one. An error comes with mpcrs-run's exit status: 2 for hosts it cannot use,
/// 1 for a key-value store that cannot start.
pub fn place(
    args: &Options,
    cmd: Command,
    processes: usize,
    ranks: usize,
    launch: &Launch,
) -> Result<Vec<ProcessSpec>, (u8, String)> {
    let host = mpcrs_settings::local_hostname();
    let hosts = crate::options::hosts(args).map(|h| {
        h.map(|h| {
            h.into_iter()
                .filter(|h| !args.left_out.contains(&h.name))
                .collect::<Vec<Host>>()
        })
    });
    match hosts {
        Some(hosts) => hosts
            .and_then(|h| {
                across_hosts(
                    &cmd,
                    ranks,
                    &h,
                    &hosts::place(processes, &h, map_by_of(args)),
                    &crate::options::launch_agent(args),
                    &host,
                    launch,
                )
            })
            .map_err(|e| (2, e)),
        None => on_this_host(cmd, processes, ranks, &host, launch)
            .map_err(|e| (1, format!("cannot start the key-value store: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::with_key_value_store;
    use mpcrs_settings::variables as env;

    fn var_of(cmd: &std::process::Command, name: &str) -> Option<String> {
        cmd.get_envs()
            .find(|(k, _)| *k == name)
            .and_then(|(_, v)| v.map(|v| v.to_string_lossy().into_owned()))
    }

    #[test]
    fn processes_that_outnumber_the_cpus_yield_when_idle_with_one_worker_each() {
        let cpus = mpcrs_scheduler::Topology::detect().cpus.len();
        let mut base = std::process::Command::new("true");
        // As mpcrs-run without -c: the variable removed from the environment.
        base.env_remove(env::WORKERS.name);
        let many = with_key_value_store(&base, cpus + 1, cpus + 1, "localhost").unwrap();
        for spec in &many {
            assert_eq!(
                var_of(&spec.command, env::YIELD_WHEN_IDLE.name).as_deref(),
                Some("1")
            );
            assert_eq!(
                var_of(&spec.command, env::WORKERS.name).as_deref(),
                Some("1")
            );
        }
        // One process per share of the CPUs: they spin.
        let few = with_key_value_store(&base, 1, 1, "localhost").unwrap();
        assert_eq!(var_of(&few[0].command, env::YIELD_WHEN_IDLE.name), None);
        // -c is kept.
        base.env(env::WORKERS.name, "3");
        let many = with_key_value_store(&base, cpus + 1, cpus + 1, "localhost").unwrap();
        assert_eq!(
            var_of(&many[0].command, env::WORKERS.name).as_deref(),
            Some("3")
        );
    }

    #[test]
    fn every_launch_hands_its_processes_one_new_secret() {
        assert_eq!(mpcrs_pmi::ENV_SECRET, env::JOB_SECRET.name);
        let base = std::process::Command::new("true");
        let secret_of = |specs: &[crate::supervise::ProcessSpec]| {
            let all: Vec<String> = specs
                .iter()
                .map(|s| var_of(&s.command, env::JOB_SECRET.name).unwrap())
                .collect();
            assert!(all.iter().all(|s| *s == all[0]), "one secret per job");
            mpcrs_auth::JobSecret::from_hex(&all[0]).unwrap();
            all[0].clone()
        };
        let first = secret_of(&with_key_value_store(&base, 3, 3, "localhost").unwrap());
        let second = secret_of(&with_key_value_store(&base, 3, 3, "localhost").unwrap());
        assert_ne!(first, second);
    }

    #[test]
    fn the_network_port_serves_the_job_s_processes_and_closes_on_strangers() {
        use std::io::{Read, Write};
        use std::net::{TcpListener, TcpStream};
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let secret = mpcrs_auth::JobSecret::generate().unwrap();
        let server = std::sync::Arc::new(mpcrs_pmi::Server::new(1, "strangers"));
        super::serve_network_port(listener, server, secret.clone(), 1).unwrap();
        // One that says nothing holds only its own thread.
        let _silent = TcpStream::connect(addr).unwrap();
        // A PMI client that skips the handshake is closed unanswered.
        let mut plain = TcpStream::connect(addr).unwrap();
        plain.write_all(b"000023cmd=init;pmi_version=2;").unwrap();
        plain
            .set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        let mut got = Vec::new();
        match plain.read_to_end(&mut got) {
            Ok(_) => {}
            // Closed with our bytes unread.
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
            Err(e) => panic!("the port should close the connection: {e}"),
        }
        assert!(
            !String::from_utf8_lossy(&got).contains("cmd="),
            "no PMI answer"
        );
        // One with another secret is refused.
        let mut forger = TcpStream::connect(addr).unwrap();
        let e = mpcrs_auth::over_stream(
            &mut forger,
            &mpcrs_auth::JobSecret::generate().unwrap(),
            mpcrs_auth::Role::Connector,
        )
        .unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied, "{e}");
        // The job's process gets in and is served.
        let port = addr.to_string();
        let hex = secret.to_hex();
        let var = |k: &str| match k {
            mpcrs_pmi::ENV_PORT => Some(port.clone()),
            mpcrs_pmi::ENV_RANK => Some("0".to_string()),
            mpcrs_pmi::ENV_SECRET => Some(hex.clone()),
            _ => None,
        };
        let mut c = mpcrs_pmi::Client::from_variables(var).unwrap().unwrap();
        c.put("key", "value").unwrap();
        c.fence().unwrap();
        assert_eq!(c.get("key").unwrap().as_deref(), Some("value"));
        c.finalize().unwrap();
    }
}
