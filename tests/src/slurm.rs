//! A real Slurm for tests: munged, slurmctld and slurmd from Debian's
//! packages (scripts/setup-system.sh installs them), configured in a
//! directory of their own with ports of their own, started here and stopped
//! when dropped. `srun` reaches it through `SLURM_CONF`. One node is this
//! host; several nodes are network-namespace hosts (mpcrs_tests::netns), one
//! slurmd in each, with slurmctld on the hosts' bridge.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub struct Slurm {
    pub dir: PathBuf,
    /// This cluster's job ids are from here on (each test's cluster has its
    /// own: jobs name their files in /dev/shm after their ids).
    pub first_job_id: u64,
    daemons: Vec<Child>,
}

/// A tcp port free now (the daemons take it a moment later).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn start(cmd: &mut Command, dir: &Path, name: &str) -> Child {
    let log = std::fs::File::create(dir.join(format!("{name}.out"))).unwrap();
    cmd.stdout(log.try_clone().unwrap())
        .stderr(log)
        .stdin(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "cannot start {name} (scripts/setup-system.sh installs slurm-wlm and munge): {e}"
            )
        })
}

impl Slurm {
    /// Starts the daemons with `cpus` CPUs declared for this node; returns
    /// once the node is idle.
    pub fn start(cpus: usize) -> Slurm {
        let host = mpcrs_settings::local_hostname();
        let host = host.split('.').next().unwrap().to_string();
        let node = format!("NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN\n");
        let mut slurm = Slurm::configure("127.0.0.1", &node);
        slurm.start_daemon(Command::new("slurmd"), "slurmd");
        slurm.wait_until_idle(1);
        slurm
    }

    /// Starts a cluster of nodes `n1`, `n2`, ... on `hosts` (host `k` is node
    /// `nk`), `cpus` CPUs declared on each; returns once every node is idle.
    pub fn start_on(hosts: &crate::netns::Hosts, count: u32, cpus: usize) -> Slurm {
        Self::start_with_disks(hosts, count, cpus, None)
    }

    /// [`Slurm::start_on`], each node with a private disk at `root` (as
    /// [`crate::netns::Hosts::private_disks`]: node `nk`'s steps see
    /// `Hosts::disk(root, k)` there, this host sees `root` itself).
    pub fn start_on_private_disks(
        hosts: &crate::netns::Hosts,
        count: u32,
        cpus: usize,
        root: &std::path::Path,
    ) -> Slurm {
        Self::start_with_disks(hosts, count, cpus, Some(root))
    }

    fn start_with_disks(
        hosts: &crate::netns::Hosts,
        count: u32,
        cpus: usize,
        root: Option<&std::path::Path>,
    ) -> Slurm {
        let nodes: String = (1..=count)
            .map(|k| {
                format!(
                    "NodeName=n{k} NodeAddr={} CPUs={cpus} State=UNKNOWN\n",
                    hosts.host(k)
                )
            })
            .collect();
        let mut slurm = Slurm::configure(&hosts.bridge_address(), &nodes);
        for k in 1..=count {
            let mut slurmd = Command::new("nsenter");
            slurmd.arg(format!("--net={}", hosts.namespace_file(k)));
            if let Some(root) = root {
                // slurmd, and the steps it starts, in a mount namespace of
                // their own where the node's disk is at `root`.
                let disk = crate::netns::Hosts::disk(root, k);
                std::fs::create_dir_all(&disk).unwrap();
                std::fs::create_dir_all(root).unwrap();
                slurmd
                    .args(["unshare", "--mount", "--propagation", "private", "sh", "-c"])
                    .arg("mount --bind \"$1\" \"$2\" && shift 2 && exec \"$@\"")
                    .arg("sh")
                    .arg(&disk)
                    .arg(root);
            }
            slurmd.args(["slurmd", "-N", &format!("n{k}")]);
            slurm.start_daemon(slurmd, &format!("slurmd-n{k}"));
        }
        slurm.wait_until_idle(count as usize);
        slurm
    }

    /// munged and slurmctld (at `address`), for the nodes of `nodes` (lines
    /// of slurm.conf).
    fn configure(address: &str, nodes: &str) -> Slurm {
        let dir = std::env::temp_dir().join(format!("mpcrs-slurm-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for d in ["state", "munge"] {
            std::fs::create_dir_all(dir.join(d)).unwrap();
        }
        let key = dir.join("munge/munge.key");
        let bytes: Vec<u8> = (0..1024)
            .map(|i| (i * 7919 % 251) as u8 ^ std::process::id() as u8)
            .collect();
        std::fs::write(&key, bytes).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
        let socket = dir.join("munge/socket");
        let munged = Command::new("munged")
            .arg("--force")
            .arg(format!("--socket={}", socket.display()))
            .arg(format!("--key-file={}", key.display()))
            .arg(format!("--pid-file={}", dir.join("munge/pid").display()))
            .arg(format!("--log-file={}", dir.join("munge/log").display()))
            .arg(format!("--seed-file={}", dir.join("munge/seed").display()))
            .output()
            .expect("munged (scripts/setup-system.sh installs munge)");
        assert!(
            munged.status.success(),
            "munged: {}",
            String::from_utf8_lossy(&munged.stderr)
        );
        let host = mpcrs_settings::local_hostname();
        let host = host.split('.').next().unwrap().to_string();
        let d = dir.display();
        let first_job_id = (std::process::id() as u64 % 60_000) * 1000 + 1;
        // %n: each slurmd of the cluster has its own spool, pid file and log.
        let conf = format!(
            "ClusterName=mpcrstest\n\
             SlurmctldHost={host}({address})\n\
             SlurmUser=root\nSlurmdUser=root\n\
             AuthType=auth/munge\nCredType=cred/munge\n\
             AuthInfo=socket={socket}\n\
             StateSaveLocation={d}/state\nSlurmdSpoolDir={d}/spool-%n\n\
             SlurmctldPidFile={d}/slurmctld.pid\nSlurmdPidFile={d}/slurmd-%n.pid\n\
             SlurmctldPort={ctld}\nSlurmdPort={slurmd}\n\
             ProctrackType=proctrack/pgid\nTaskPlugin=task/none\n\
             ReturnToService=2\nSchedulerType=sched/builtin\n\
             SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n\
             MpiDefault=none\nJobCompType=jobcomp/none\n\
             AccountingStorageType=accounting_storage/none\n\
             SlurmctldLogFile={d}/slurmctld.log\nSlurmdLogFile={d}/slurmd-%n.log\n\
             SlurmdParameters=config_overrides\n\
             FirstJobId={first_job_id}\n\
             {nodes}\
             PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES\n",
            socket = socket.display(),
            ctld = free_port(),
            slurmd = free_port(),
        );
        std::fs::write(dir.join("slurm.conf"), conf).unwrap();
        let mut slurm = Slurm {
            dir,
            first_job_id,
            daemons: Vec::new(),
        };
        slurm.start_daemon(Command::new("slurmctld"), "slurmctld");
        slurm
    }

    fn start_daemon(&mut self, mut cmd: Command, name: &str) {
        cmd.arg("-D").env("SLURM_CONF", self.dir.join("slurm.conf"));
        let child = start(&mut cmd, &self.dir, name);
        self.daemons.push(child);
    }

    fn wait_until_idle(&self, nodes: usize) {
        let start = Instant::now();
        loop {
            let o = self
                .command("sinfo")
                .args(["-h", "-N", "-o", "%t"])
                .output()
                .unwrap();
            let states = String::from_utf8_lossy(&o.stdout).into_owned();
            if states.lines().filter(|l| l.trim() == "idle").count() == nodes {
                return;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "the Slurm nodes never became idle ({states:?}): {}\n{}",
                String::from_utf8_lossy(&o.stderr),
                std::fs::read_to_string(self.dir.join("slurmctld.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// A command of Slurm's (srun, sinfo) talking to these daemons.
    pub fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", self.dir.join("slurm.conf"));
        c
    }

    /// `srun ARGS`, with the environment `env` added, within `limit`.
    pub fn srun(&self, env: &[(&str, &str)], args: &[&str], limit: Duration) -> Output {
        let mut c = self.command("srun");
        c.args(args).envs(env.iter().copied());
        crate::run_command(&mut c, limit)
    }
}

impl Drop for Slurm {
    fn drop(&mut self) {
        for d in &mut self.daemons {
            let _ = d.kill();
            let _ = d.wait();
        }
        if let Ok(pid) = std::fs::read_to_string(self.dir.join("munge/pid")) {
            if let Ok(pid) = pid.trim().parse::<i32>() {
                // SAFETY: signalling the munged this test started.
                unsafe { libc::kill(pid, libc::SIGTERM) };
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
