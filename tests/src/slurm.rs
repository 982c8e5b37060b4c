//! A real single-node Slurm for tests: munged, slurmctld and slurmd from
//! Debian's packages (scripts/setup-system.sh installs them), configured in a
//! directory of their own with ports of their own, started here and stopped
//! when dropped. `srun` reaches it through `SLURM_CONF`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub struct Slurm {
    pub dir: PathBuf,
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
        let dir = std::env::temp_dir().join(format!("mpcrs-slurm-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for d in ["state", "spool", "munge"] {
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
        let conf = format!(
            "ClusterName=mpcrstest\n\
             SlurmctldHost={host}(127.0.0.1)\n\
             SlurmUser=root\nSlurmdUser=root\n\
             AuthType=auth/munge\nCredType=cred/munge\n\
             AuthInfo=socket={socket}\n\
             StateSaveLocation={d}/state\nSlurmdSpoolDir={d}/spool\n\
             SlurmctldPidFile={d}/slurmctld.pid\nSlurmdPidFile={d}/slurmd.pid\n\
             SlurmctldPort={ctld}\nSlurmdPort={slurmd}\n\
             ProctrackType=proctrack/pgid\nTaskPlugin=task/none\n\
             ReturnToService=2\nSchedulerType=sched/builtin\n\
             SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n\
             MpiDefault=none\nJobCompType=jobcomp/none\n\
             AccountingStorageType=accounting_storage/none\n\
             SlurmctldLogFile={d}/slurmctld.log\nSlurmdLogFile={d}/slurmd.log\n\
             SlurmdParameters=config_overrides\n\
             NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN\n\
             PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES\n",
            socket = socket.display(),
            ctld = free_port(),
            slurmd = free_port(),
        );
        std::fs::write(dir.join("slurm.conf"), conf).unwrap();
        let mut slurm = Slurm {
            dir: dir.clone(),
            daemons: Vec::new(),
        };
        for (daemon, name) in [("slurmctld", "slurmctld"), ("slurmd", "slurmd")] {
            let child = start(
                Command::new(daemon)
                    .arg("-D")
                    .env("SLURM_CONF", dir.join("slurm.conf")),
                &dir,
                name,
            );
            slurm.daemons.push(child);
        }
        let start = Instant::now();
        loop {
            let o = slurm
                .command("sinfo")
                .args(["-h", "-o", "%t"])
                .output()
                .unwrap();
            if String::from_utf8_lossy(&o.stdout).trim() == "idle" {
                return slurm;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "the Slurm node never became idle: {}\n{}",
                String::from_utf8_lossy(&o.stderr),
                std::fs::read_to_string(dir.join("slurmctld.log")).unwrap_or_default()
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
