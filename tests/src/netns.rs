//! Hosts for tests of jobs across hosts: network namespaces joined by a
//! bridge stand for hosts (set up here, torn down when dropped), and `ip netns
//! exec` is the launch agent that starts a process "on" one of them, where ssh
//! would on a cluster. They share this machine's file system, as hosts share a
//! cluster's.

use std::path::PathBuf;
use std::process::Command;

fn ip(args: &[&str]) {
    let o = Command::new("ip")
        .args(args)
        .output()
        .expect("ip (iproute2)");
    assert!(
        o.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Hosts 10.213.S.2, .3, ... each in its own namespace, on a bridge that also
/// holds this (launcher's) host at 10.213.S.1.
pub struct Hosts {
    tag: String,
    pub subnet: u32,
    count: u32,
    pub agent: PathBuf,
    /// The agent appends each host it starts a process on.
    pub log: PathBuf,
}

impl Hosts {
    /// `which` tells apart the sets of hosts of tests running at once.
    pub fn new(count: u32, which: u32) -> Hosts {
        let pid = std::process::id();
        let tag = format!("{pid}{which}");
        let subnet = 20 + (pid * 2 + which) % 200;
        let h = Hosts {
            tag: tag.clone(),
            subnet,
            count,
            agent: std::env::temp_dir().join(format!("mpcrs-agent-{tag}.sh")),
            log: std::env::temp_dir().join(format!("mpcrs-agent-{tag}.log")),
        };
        let br = h.bridge();
        ip(&["link", "add", &br, "type", "bridge"]);
        ip(&["addr", "add", &format!("10.213.{subnet}.1/24"), "dev", &br]);
        ip(&["link", "set", &br, "up"]);
        let mut cases = String::new();
        for k in 1..=count {
            let (ns, outer, inner) = (
                h.ns(k),
                format!("mv{}a{k}", h.tag),
                format!("mv{}b{k}", h.tag),
            );
            ip(&["netns", "add", &ns]);
            ip(&[
                "link", "add", &outer, "type", "veth", "peer", "name", &inner,
            ]);
            ip(&["link", "set", &inner, "netns", &ns]);
            ip(&["link", "set", &outer, "master", &br]);
            ip(&["link", "set", &outer, "up"]);
            let addr = h.host(k);
            ip(&[
                "-n",
                &ns,
                "addr",
                "add",
                &format!("{addr}/24"),
                "dev",
                &inner,
            ]);
            ip(&["-n", &ns, "link", "set", &inner, "up"]);
            ip(&["-n", &ns, "link", "set", "lo", "up"]);
            cases.push_str(&format!("  {addr}) ns={ns};;\n"));
        }
        std::fs::write(
            &h.agent,
            format!(
                "host=$1; shift\ncase \"$host\" in\n{cases}  *) echo \"agent: unknown host $host\" >&2; exit 255;;\nesac\necho \"$host\" >> {}\nexec ip netns exec \"$ns\" sh -c \"$1\"\n",
                h.log.display()
            ),
        )
        .unwrap();
        h
    }
    fn bridge(&self) -> String {
        format!("mpb{}", self.tag)
    }
    fn ns(&self, k: u32) -> String {
        format!("mpcrs-{}-{k}", self.tag)
    }
    /// Gives every host a private disk at `root`: a process the agent starts
    /// on host `k` sees [`Hosts::disk`]`(root, k)` there (a bind mount in the
    /// mount namespace `ip netns exec` makes for each command), and this
    /// (launcher's) host sees `root` itself, empty.
    pub fn private_disks(&self, root: &std::path::Path) {
        std::fs::create_dir_all(root).unwrap();
        let mut cases = String::new();
        for k in 1..=self.count {
            let disk = Self::disk(root, k);
            std::fs::create_dir_all(&disk).unwrap();
            cases.push_str(&format!(
                "  {}) ns={}; disk={};;\n",
                self.host(k),
                self.ns(k),
                disk.display()
            ));
        }
        std::fs::write(
            &self.agent,
            format!(
                "host=$1; shift\ncase \"$host\" in\n{cases}  *) echo \"agent: unknown host $host\" >&2; exit 255;;\nesac\necho \"$host\" >> {}\nexec ip netns exec \"$ns\" sh -c 'mount --bind \"$0\" \"$1\" && exec sh -c \"$2\"' \"$disk\" {} \"$1\"\n",
                self.log.display(),
                root.display()
            ),
        )
        .unwrap();
    }

    /// Where host `k`'s private disk at `root` is kept on this machine.
    pub fn disk(root: &std::path::Path, k: u32) -> PathBuf {
        PathBuf::from(format!("{}.host-{k}", root.display()))
    }

    /// The file of host `k`'s network namespace (for `nsenter --net=`, which
    /// unlike `ip netns exec` keeps this machine's /sys mounts).
    pub fn namespace_file(&self, k: u32) -> String {
        format!("/run/netns/{}", self.ns(k))
    }

    /// The address of this (launcher's) host on the hosts' bridge.
    pub fn bridge_address(&self) -> String {
        format!("10.213.{}.1", self.subnet)
    }

    /// The address of host `k` (1 to count).
    pub fn host(&self, k: u32) -> String {
        format!("10.213.{}.{}", self.subnet, k + 1)
    }

    /// `--host`'s list of hosts `ks`.
    pub fn list(&self, ks: &[u32]) -> String {
        ks.iter()
            .map(|&k| self.host(k))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// `--launch-agent`'s command that starts processes on these hosts.
    pub fn agent_command(&self) -> String {
        format!("sh {}", self.agent.display())
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        for k in 1..=self.count {
            let _ = Command::new("ip")
                .args(["netns", "del", &self.ns(k)])
                .status();
        }
        let _ = Command::new("ip")
            .args(["link", "del", &self.bridge()])
            .status();
        let _ = std::fs::remove_file(&self.agent);
        let _ = std::fs::remove_file(&self.log);
    }
}
