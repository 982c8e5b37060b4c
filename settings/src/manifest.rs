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
        Ok(m)
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
            rank_processes: vec![0, 0, 1],
            base: vec![3, 4],
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
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
