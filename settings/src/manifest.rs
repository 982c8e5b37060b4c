//! The job manifest of a checkpoint epoch (`DIR/epoch-K/MANIFEST`): what
//! `mpcrs-run --restart` needs to start the same job again. JSON, written by the
//! checkpoint leader when the epoch commits.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::variables::{EXPORTED, NET, NET_CONFIG};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobManifest {
    pub ranks: usize,
    pub processes: usize,
    /// The host of each process.
    pub hosts: Vec<String>,
    /// The executable of the processes (for C programs, mpcrs-exec) and its
    /// whole command line, program name first.
    pub executable: PathBuf,
    pub args: Vec<String>,
    /// Working directory of the processes.
    pub cwd: PathBuf,
    /// Variables passed with -x.
    pub env: Vec<(String, String)>,
    /// Network option and rails configuration.
    pub net: Option<String>,
    pub net_config: Option<PathBuf>,
    /// The dynamic loader's settings ([`LOADER_VARIABLES`]) as the processes
    /// had them: they decide where libraries load, which a restore needs to be
    /// the same.
    #[serde(default)]
    pub loader_env: Vec<(String, String)>,
    /// Node-local storage of the epoch's L1 images, and the node of every
    /// process (whose `node-N/` holds its image). Absent in epochs whose
    /// images are all in the epoch directory.
    #[serde(default)]
    pub local: Option<PathBuf>,
    /// The checkpoint directory the epoch was written in (absent in epochs
    /// of earlier versions): a restart from a copy of it tells where
    /// node-local storage goes from there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir: Option<PathBuf>,
    /// The job's key (MPCRS_JOB_KEY), which its images record too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<u64>,
    #[serde(default)]
    pub nodes: Vec<u32>,
    /// The levels this epoch was to get (by number, 1 first), the levels
    /// complete for every process (rewritten as helpers finish them), and the
    /// size of the Reed-Solomon groups (L3).
    #[serde(default = "only_local")]
    pub levels: Vec<u8>,
    #[serde(default = "only_local")]
    pub complete: Vec<u8>,
    #[serde(default = "default_group_size")]
    pub group_size: usize,
    /// Application checkpoints: the process whose file holds each rank's data.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rank_processes: Vec<u32>,
    /// The epochs whose images this epoch's incremental images apply to,
    /// directly or through one another, oldest first (empty: every image is
    /// full). Kept as long as this epoch is.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub base: Vec<u64>,
    /// What taking the epoch cost the program (absent in application
    /// checkpoints and in epochs of earlier versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<CheckpointCost>,
}

/// What a checkpoint cost the program, over its processes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointCost {
    /// The longest stall of a process (its ranks stopped), microseconds.
    pub stall_us: u64,
    /// The most the processes of a host lost besides, while their images
    /// were written: their kernel time (copy-on-write faults) and their
    /// writers' CPU time, microseconds.
    pub lost_us: u64,
    /// Page faults of the processes while their images were written.
    pub faults: u64,
    /// Bytes copied in the stalls instead of being shared with the writers.
    pub staged: u64,
}

impl CheckpointCost {
    /// What the checkpoint cost besides its stall, as the progress line
    /// and `mpcrs-ckpt ls` say it.
    pub fn describe(&self) -> String {
        format!(
            "cost to the program at most {:.1} ms more ({} page faults during the write, {} MB copied in the stall)",
            self.lost_us as f64 / 1e3,
            self.faults,
            self.staged / 1_000_000
        )
    }
}

fn only_local() -> Vec<u8> {
    vec![1]
}

fn default_group_size() -> usize {
    4
}

/// Variables that change how the dynamic loader lays a process out.
pub const LOADER_VARIABLES: [&str; 4] = [
    "LD_LIBRARY_PATH",
    "LD_PRELOAD",
    "LD_BIND_NOW",
    "GLIBC_TUNABLES",
];

impl JobManifest {
    /// The manifest of the job this process belongs to.
    pub fn of_this_job(ranks: usize, processes: usize, hosts: Vec<String>) -> JobManifest {
        let exported = std::env::var(EXPORTED.name).unwrap_or_default();
        JobManifest {
            ranks,
            processes,
            hosts,
            executable: std::fs::read_link("/proc/self/exe").unwrap_or_default(),
            args: std::env::args_os()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            cwd: std::env::current_dir().unwrap_or_default(),
            env: exported
                .split(',')
                .filter(|n| !n.is_empty())
                .filter_map(|n| Some((n.to_string(), std::env::var(n).ok()?)))
                .collect(),
            net: NET.get(),
            net_config: NET_CONFIG.get_os().map(PathBuf::from),
            loader_env: LOADER_VARIABLES
                .iter()
                .filter_map(|&n| Some((n.to_string(), std::env::var(n).ok()?)))
                .collect(),
            local: None,
            dir: None,
            job: None,
            nodes: Vec::new(),
            levels: only_local(),
            complete: only_local(),
            group_size: default_group_size(),
            rank_processes: Vec::new(),
            base: Vec::new(),
            cost: None,
        }
    }

    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("a manifest serializes");
        s.push('\n');
        s
    }

    /// Reads a manifest; errors name the file, line and column.
    pub fn read(path: &Path) -> Result<JobManifest, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let m: JobManifest = serde_json::from_str(&text).map_err(|e| {
            format!(
                "{}:{}:{}: not a job manifest: {e}",
                path.display(),
                e.line(),
                e.column()
            )
        })?;
        if m.processes == 0 || m.ranks < m.processes || m.args.is_empty() {
            return Err(format!(
                "{}: inconsistent manifest ({} ranks, {} processes, {} arguments)",
                path.display(),
                m.ranks,
                m.processes,
                m.args.len()
            ));
        }
        m.check()
            .map_err(|e| format!("{}: inconsistent manifest: {e}", path.display()))?;
        Ok(m)
    }

    /// The fields that readers index or count with: a manifest edited by hand
    /// or forged is refused here, naming the field, instead of tripping a
    /// reader later.
    fn check(&self) -> Result<(), String> {
        let p = self.processes;
        if self.ranks > i32::MAX as usize {
            return Err(format!(
                "ranks: {} is above an MPI rank's range",
                self.ranks
            ));
        }
        if !self.hosts.is_empty() && self.hosts.len() != p {
            return Err(format!("hosts: {} for {p} processes", self.hosts.len()));
        }
        if !self.nodes.is_empty() && self.nodes.len() != p {
            return Err(format!("nodes: {} for {p} processes", self.nodes.len()));
        }
        if let Some(n) = self.nodes.iter().find(|&&n| n as usize >= p) {
            return Err(format!("nodes: node {n} in a job of {p} processes"));
        }
        if !self.rank_processes.is_empty() && self.rank_processes.len() != self.ranks {
            return Err(format!(
                "rank_processes: {} for {} ranks",
                self.rank_processes.len(),
                self.ranks
            ));
        }
        if let Some(q) = self.rank_processes.iter().find(|&&q| q as usize >= p) {
            return Err(format!("rank_processes: process {q} in a job of {p}"));
        }
        for (name, levels) in [("levels", &self.levels), ("complete", &self.complete)] {
            if let Some(l) = levels.iter().find(|l| !(1..=4).contains(*l)) {
                return Err(format!("{name}: level {l} is not one of 1 to 4"));
            }
        }
        if self.group_size < 2 {
            return Err(format!("group_size: {} (2 or more)", self.group_size));
        }
        if self.base.contains(&0) {
            return Err("base: epoch 0 (epochs count from 1)".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_reads_back_and_errors_name_the_place() {
        let m = JobManifest {
            ranks: 8,
            processes: 2,
            hosts: vec!["a".into(), "b".into()],
            executable: "/bin/app".into(),
            args: vec!["app".into(), "with \"quotes\"\nand a newline".into()],
            cwd: "/work".into(),
            env: vec![("NOTE".into(), "x=y".into())],
            net: Some("default".into()),
            net_config: None,
            loader_env: vec![("LD_LIBRARY_PATH".into(), "/opt/lib".into())],
            local: Some("/tmp/local".into()),
            dir: Some("/shared/ckpt".into()),
            job: Some(0x1234_5678_9abc_def0),
            nodes: vec![0, 1],
            levels: vec![1, 2, 4],
            complete: vec![1, 2],
            group_size: 2,
            rank_processes: vec![0, 0, 0, 0, 1, 1, 1, 1],
            base: vec![3, 4],
            cost: Some(CheckpointCost {
                stall_us: 52_100,
                lost_us: 201_000,
                faults: 75,
                staged: 537 << 20,
            }),
        };
        let dir = std::env::temp_dir().join(format!("mpcrs-manifest-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("MANIFEST");
        std::fs::write(&path, m.to_json()).unwrap();
        assert_eq!(JobManifest::read(&path).unwrap(), m);
        std::fs::write(&path, "{\n  \"ranks\": 8,\n  \"processes\": oops\n}").unwrap();
        let e = JobManifest::read(&path).unwrap_err();
        assert!(e.contains("MANIFEST:3:"), "{e}");
        let mut bad = m.clone();
        bad.processes = 9;
        std::fs::write(&path, bad.to_json()).unwrap();
        let e = JobManifest::read(&path).unwrap_err();
        assert!(e.contains("inconsistent"), "{e}");
        let mut bad = m.clone();
        bad.rank_processes[3] = 2;
        std::fs::write(&path, bad.to_json()).unwrap();
        let e = JobManifest::read(&path).unwrap_err();
        assert!(e.contains("rank_processes: process 2 in a job of 2"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A valid manifest of 8 ranks in 2 processes.
    fn sample() -> JobManifest {
        let mut m = JobManifest::of_this_job(8, 2, vec!["a".into(), "b".into()]);
        m.nodes = vec![0, 1];
        m.levels = vec![1, 2, 4];
        m.complete = vec![1, 2];
        m.rank_processes = vec![0, 0, 0, 0, 1, 1, 1, 1];
        m.base = vec![3];
        m
    }

    /// JSON values worth putting in a field.
    fn value() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        let number = prop_oneof![
            any::<u64>(),
            0u64..10,
            Just(u32::MAX as u64 + 1),
            Just(u64::MAX)
        ];
        prop_oneof![
            number.clone().prop_map(serde_json::Value::from),
            proptest::collection::vec(number, 0..12).prop_map(serde_json::Value::from),
            "[a-z]{0,4}".prop_map(serde_json::Value::from),
            Just(serde_json::Value::Null),
            any::<i64>().prop_map(serde_json::Value::from),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(512))]

        /// Any field of a manifest replaced by any value, or the text cut
        /// anywhere: read answers an error naming the file, or a manifest
        /// whose per-process and per-rank lists fit its counts.
        #[test]
        fn a_forged_or_cut_manifest_is_refused_or_consistent(
            field in proptest::sample::select(vec![
                "ranks", "processes", "hosts", "nodes", "levels", "complete",
                "group_size", "rank_processes", "base", "job", "args",
            ]),
            v in value(),
            cut in proptest::num::usize::ANY,
        ) {
            let dir = std::env::temp_dir().join(format!("mpcrs-manifest-forged-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let path = dir.join("MANIFEST");
            let mut json: serde_json::Value = serde_json::from_str(&sample().to_json()).unwrap();
            json[field] = v;
            let text = json.to_string();
            for text in [&text[..], &text[..cut % (text.len() + 1)]] {
                std::fs::write(&path, text).unwrap();
                match JobManifest::read(&path) {
                    Err(e) => proptest::prop_assert!(e.starts_with(&path.display().to_string()), "{}", e),
                    Ok(m) => {
                        proptest::prop_assert!(m.processes >= 1 && m.ranks >= m.processes);
                        proptest::prop_assert!(m.hosts.is_empty() || m.hosts.len() == m.processes);
                        proptest::prop_assert!(m.nodes.iter().all(|&n| (n as usize) < m.processes));
                        proptest::prop_assert!(m.rank_processes.is_empty() || m.rank_processes.len() == m.ranks);
                        proptest::prop_assert!(m.rank_processes.iter().all(|&q| (q as usize) < m.processes));
                        proptest::prop_assert!(m.levels.iter().chain(&m.complete).all(|l| (1..=4).contains(l)));
                    }
                }
            }
        }
    }
}
