//! Node-local files a restart's launcher cannot see. Where the hosts keep
//! private node-local disks, the L1 images, partner copies (L2) and parity
//! shards (L3) that the first run's processes wrote on another host are only
//! there. The launcher asks that host, through the launch agent (ssh, or
//! srun for a task of a Slurm job), whether each file is there and whole and
//! what its header says (`mpcrs-ckpt facts`, one call per host and epoch),
//! and brings a file over (`cat` through the agent, into the restart's
//! directory in the checkpoint directory, which every host sees) only where
//! another host needs it: a process restarted on the host that keeps its
//! image reads it there.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use mpcrs_levels::recovery::{level_files, Expected};
use mpcrs_settings::manifest::JobManifest;

use crate::hosts::shell_quote;

/// What the restart needs of an image's header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderFacts {
    pub exe_size: u64,
    pub exe_crc: u32,
    pub meta_crc: u32,
    pub parent: Option<mpcrs_cr::image::Parent>,
}

impl HeaderFacts {
    pub fn of(h: &mpcrs_cr::image::ImageHeader) -> HeaderFacts {
        HeaderFacts {
            exe_size: h.exe.size,
            exe_crc: h.exe.crc,
            meta_crc: h.meta_crc,
            parent: h.parent,
        }
    }

    /// The header of the image at `path`, read here.
    pub fn read(path: &Path) -> Result<HeaderFacts, String> {
        let (_, h) = mpcrs_cr::image::read_header(path).map_err(|e| e.to_string())?;
        Ok(HeaderFacts::of(&h))
    }

    /// One line's words: exe size and CRC, metadata CRC, parent epoch and
    /// metadata CRC ("-" for none).
    fn words(&self) -> String {
        let (pe, pc) = match self.parent {
            Some(p) => (p.epoch.to_string(), format!("{:08x}", p.meta_crc)),
            None => ("-".into(), "-".into()),
        };
        format!(
            "{} {:08x} {:08x} {pe} {pc}",
            self.exe_size, self.exe_crc, self.meta_crc
        )
    }

    fn parse(words: &[&str]) -> Option<HeaderFacts> {
        let [size, crc, meta, pe, pc] = words else {
            return None;
        };
        let hex = |s: &str| u32::from_str_radix(s, 16).ok();
        let parent = match (*pe, *pc) {
            ("-", "-") => None,
            (e, c) => Some(mpcrs_cr::image::Parent {
                epoch: e.parse().ok()?,
                meta_crc: hex(c)?,
            }),
        };
        Some(HeaderFacts {
            exe_size: size.parse().ok()?,
            exe_crc: hex(crc)?,
            meta_crc: hex(meta)?,
            parent,
        })
    }
}

/// What a host says of one of its files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fact {
    /// An image, whole and the one expected.
    Intact(HeaderFacts),
    /// A file asked about for its presence only (a parity shard).
    Present,
    Missing,
    /// What is wrong with it.
    Damaged(String),
}

/// One question to a host: an image whose owner is `expected`, or a file
/// asked about for its presence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Question {
    Image(PathBuf, Expected),
    Presence(PathBuf),
}

impl Question {
    /// Its words on `mpcrs-ckpt facts`'s command line.
    pub fn to_arg(&self) -> String {
        match self {
            Question::Image(p, e) => format!("image:{}:{}:{}", e.epoch, e.process, p.display()),
            Question::Presence(p) => format!("file:{}", p.display()),
        }
    }

    pub fn parse(arg: &str) -> Result<Question, String> {
        let bad = || format!("{arg:?} is neither image:EPOCH:PROCESS:PATH nor file:PATH");
        if let Some(path) = arg.strip_prefix("file:") {
            return Ok(Question::Presence(path.into()));
        }
        let rest = arg.strip_prefix("image:").ok_or_else(bad)?;
        let mut it = rest.splitn(3, ':');
        let (Some(e), Some(p), Some(path)) = (it.next(), it.next(), it.next()) else {
            return Err(bad());
        };
        Ok(Question::Image(
            path.into(),
            Expected {
                epoch: e.parse().map_err(|_| bad())?,
                process: p.parse().map_err(|_| bad())?,
            },
        ))
    }

    pub fn path(&self) -> &Path {
        match self {
            Question::Image(p, _) | Question::Presence(p) => p,
        }
    }
}

impl Fact {
    /// Its line in `mpcrs-ckpt facts`'s answer.
    pub fn line(&self) -> String {
        match self {
            Fact::Intact(h) => format!("intact {}", h.words()),
            Fact::Present => "present".into(),
            Fact::Missing => "missing".into(),
            Fact::Damaged(why) => format!("damaged {}", why.replace('\n', " ")),
        }
    }

    pub fn parse(line: &str) -> Option<Fact> {
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        match word {
            "intact" => {
                let words: Vec<&str> = rest.split(' ').collect();
                HeaderFacts::parse(&words).map(Fact::Intact)
            }
            "present" => Some(Fact::Present),
            "missing" => Some(Fact::Missing),
            "damaged" => Some(Fact::Damaged(rest.to_string())),
            _ => None,
        }
    }
}

/// The answer to `question` on this host (what `mpcrs-ckpt facts` prints):
/// `check` says whether an image is whole and the one expected.
pub fn answer(question: &Question, check: &dyn Fn(&Path, Expected) -> Result<(), String>) -> Fact {
    let path = question.path();
    if !path.is_file() {
        return Fact::Missing;
    }
    match question {
        Question::Presence(_) => Fact::Present,
        Question::Image(_, expected) => {
            match check(path, *expected).and_then(|()| HeaderFacts::read(path)) {
                Ok(h) => Fact::Intact(h),
                Err(why) => Fact::Damaged(why),
            }
        }
    }
}

/// Whether a question round was made; held while it is.
type Once = Arc<Mutex<bool>>;

/// How a command reaches another host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Agent {
    /// A remote login's words, as `--launch-agent`: `WORDS HOST LINE`, the
    /// line run by the host's shell (ssh).
    Login(Vec<String>),
    /// srun, from inside a Slurm job: a step of one task on the node,
    /// sharing the job's resources with the steps running.
    Srun,
}

impl Agent {
    /// The command that runs the shell line `line` on `host`.
    pub fn on(&self, host: &str, line: String) -> Command {
        let mut c = match self {
            Agent::Login(words) => {
                let mut c = Command::new(&words[0]);
                c.args(&words[1..]).arg(host).arg(line);
                c
            }
            Agent::Srun => {
                let mut c = Command::new("srun");
                c.args([
                    "--overlap",
                    "--mpi=none",
                    "-N1",
                    "-n1",
                    "--cpus-per-task=1",
                    "-w",
                ])
                .arg(host)
                .args(["sh", "-c"])
                .arg(line);
                // The step's own layout, which the new step must not take.
                for var in [
                    "SLURM_CPUS_PER_TASK",
                    "SLURM_NTASKS",
                    "SLURM_NPROCS",
                    "SLURM_TASKS_PER_NODE",
                    "SLURM_NTASKS_PER_NODE",
                    "SLURM_DISTRIBUTION",
                    "SLURM_NNODES",
                    "SLURM_JOB_NUM_NODES",
                    "SLURM_NODELIST",
                    "SLURM_STEP_NUM_NODES",
                    "SLURM_STEP_NUM_TASKS",
                    "PMI_FD",
                    "PMI_RANK",
                    "PMI_SIZE",
                    "PMI_JOBID",
                ] {
                    c.env_remove(var);
                }
                c
            }
        };
        c.stdin(Stdio::null());
        c
    }

    /// What to call it in messages.
    fn name(&self) -> &str {
        match self {
            Agent::Login(words) => &words[0],
            Agent::Srun => "srun",
        }
    }
}

/// How the restart on this host reaches the first run's other hosts.
#[derive(Debug, Clone)]
pub struct OtherHosts {
    pub agent: Agent,
    /// This host's name as the first run's manifest may name it.
    pub own: String,
}

/// The other hosts of a checkpointed job, reached through the launch agent.
pub struct Elsewhere {
    agent: Agent,
    /// mpcrs-ckpt, at the same path on every host as mpcrs-run.
    tool: PathBuf,
    job: Option<u64>,
    /// The job's node-local root (the manifest's).
    root: PathBuf,
    /// The host of each node of the first run that is not this host.
    hosts: HashMap<u32, String>,
    facts: Mutex<HashMap<PathBuf, Fact>>,
    /// Per (host, epoch): whether it was asked; held while it is, so that a
    /// caller wanting its answer meanwhile waits for it.
    asked: Mutex<HashMap<(String, u64), Once>>,
}

impl Elsewhere {
    /// The other hosts of the job of `m`, if it had any (and node-local
    /// storage), as `others` reaches them.
    pub fn of(m: &JobManifest, others: &OtherHosts) -> Option<Elsewhere> {
        let root = m.local.clone()?;
        if m.hosts.len() != m.processes || matches!(&others.agent, Agent::Login(w) if w.is_empty())
        {
            return None;
        }
        let mut hosts = HashMap::new();
        for (p, host) in m.hosts.iter().enumerate() {
            let node = m.nodes.get(p).copied().unwrap_or(0);
            if !crate::hosts::is_local(host, &others.own).unwrap_or(false) {
                hosts.insert(node, host.clone());
            }
        }
        if hosts.is_empty() {
            return None;
        }
        let tool = std::env::current_exe().ok()?.with_file_name("mpcrs-ckpt");
        Some(Elsewhere {
            agent: others.agent.clone(),
            tool,
            job: m.job,
            root,
            hosts,
            facts: Mutex::default(),
            asked: Mutex::default(),
        })
    }

    /// The host that keeps the node-local file at `path`, where that is
    /// another host and the file cannot be seen here.
    pub fn host_of(&self, path: &Path) -> Option<&str> {
        let rel = path.strip_prefix(&self.root).ok()?;
        let first = rel.components().next()?.as_os_str().to_str()?;
        let node: u32 = first.strip_prefix("node-")?.parse().ok()?;
        let host = self.hosts.get(&node)?;
        (!path.exists()).then_some(host.as_str())
    }

    /// What the host keeping `path` says of it (asking it, with the rest of
    /// epoch `epoch` of the job of `m` under `epoch_dir`, the first time).
    pub fn fact(&self, m: &JobManifest, epoch_dir: &Path, epoch: u64, path: &Path) -> Fact {
        let Some(host) = self.host_of(path) else {
            return Fact::Missing;
        };
        let host = host.to_string();
        if let Some(f) = self.facts.lock().unwrap().get(path) {
            return f.clone();
        }
        let once = Arc::clone(
            self.asked
                .lock()
                .unwrap()
                .entry((host.clone(), epoch))
                .or_default(),
        );
        let mut asked = once.lock().unwrap();
        if !*asked {
            let questions = self.questions(m, epoch_dir, epoch, &host);
            let answers = self
                .ask(&host, &questions)
                .unwrap_or_else(|why| vec![Fact::Damaged(why); questions.len()]);
            let mut facts = self.facts.lock().unwrap();
            for (q, a) in questions.iter().zip(answers) {
                facts.insert(q.path().to_path_buf(), a);
            }
            *asked = true;
        }
        drop(asked);
        self.facts
            .lock()
            .unwrap()
            .get(path)
            .cloned()
            .unwrap_or(Fact::Missing)
    }

    /// What the header of the image at `path` says: from its host's answer
    /// where it is elsewhere, else read here.
    pub fn header(&self, path: &Path) -> Result<HeaderFacts, String> {
        match self.facts.lock().unwrap().get(path) {
            Some(Fact::Intact(h)) => Ok(h.clone()),
            _ => HeaderFacts::read(path),
        }
    }

    /// The questions for `host` about epoch `epoch`: every level's file of
    /// every process that it keeps.
    fn questions(
        &self,
        m: &JobManifest,
        epoch_dir: &Path,
        epoch: u64,
        host: &str,
    ) -> Vec<Question> {
        let mut v = Vec::new();
        let on_host = |p: &Path| self.host_of(p) == Some(host);
        for process in 0..m.processes {
            let f = level_files(m, epoch_dir, epoch, process);
            let expected = Expected { epoch, process };
            if let Some(l1) = f.local.filter(|p| on_host(p)) {
                v.push(Question::Image(l1, expected));
            }
            if let Some((copy, _)) = f.partner.filter(|(p, _)| on_host(p)) {
                v.push(Question::Image(copy, expected));
            }
            if let Some(parity) = f.parity.filter(|p| on_host(p)) {
                v.push(Question::Presence(parity));
            }
        }
        v
    }

    /// Asks `host` the `questions` (one call); its answers in their order.
    fn ask(&self, host: &str, questions: &[Question]) -> Result<Vec<Fact>, String> {
        if questions.is_empty() {
            return Ok(Vec::new());
        }
        let mut line = shell_quote(&self.tool.to_string_lossy());
        line.push_str(" facts");
        if let Some(job) = self.job {
            line.push_str(&format!(" --job {job:x}"));
        }
        line.push_str(" --");
        for q in questions {
            line.push(' ');
            line.push_str(&shell_quote(&q.to_arg()));
        }
        let o = self
            .agent
            .on(host, line)
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| format!("{}: {e}", self.agent.name()))?;
        let text = String::from_utf8_lossy(&o.stdout);
        let answers: Vec<Fact> = text.lines().filter_map(Fact::parse).collect();
        if !o.status.success() || answers.len() != questions.len() {
            return Err(format!(
                "host {host} did not answer for its node-local files ({}): {}",
                o.status,
                String::from_utf8_lossy(&o.stderr).trim()
            ));
        }
        Ok(answers)
    }

    /// A copy, in `into` (a directory every host sees), of the file at
    /// `path` that another host keeps; `path` itself where it is seen here.
    pub fn bring(&self, path: &Path, into: &Path) -> Result<PathBuf, String> {
        match self.host_of(path) {
            Some(host) => bring(&self.agent, host, path, into),
            None => Ok(path.to_path_buf()),
        }
    }

    /// Whether the file at `path` is kept by another host (not seen here).
    pub fn keeps(&self, path: &Path) -> bool {
        self.host_of(path).is_some()
    }
}

/// Where a copy of `host`'s file at `path` goes in `into`
/// (`into/from-HOST/PATH`), its directory made.
fn destination(host: &str, path: &Path, into: &Path) -> Result<PathBuf, String> {
    let rel = path.strip_prefix("/").unwrap_or(path);
    let to = into.join(format!("from-{host}")).join(rel);
    let parent = to.parent().unwrap_or(into);
    mpcrs_cr::commit::private_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    Ok(to)
}

/// Brings the file at `path` on `host` (through `agent`) into `into`, a
/// directory every host sees, at `into/from-HOST/PATH`; returns where.
pub fn bring(agent: &Agent, host: &str, path: &Path, into: &Path) -> Result<PathBuf, String> {
    let to = destination(host, path, into)?;
    let file = std::fs::File::create(&to).map_err(|e| format!("{}: {e}", to.display()))?;
    let line = format!("cat {}", shell_quote(&path.to_string_lossy()));
    let o = agent
        .on(host, line)
        .stdout(file)
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("{}: {e}", agent.name()))?;
    if !o.status.success() {
        let _ = std::fs::remove_file(&to);
        return Err(format!(
            "cannot bring {} from host {host}: {}",
            path.display(),
            String::from_utf8_lossy(&o.stderr).trim()
        ));
    }
    Ok(to)
}

/// Copies the node-local file at `path`, which host `host` wrote and this
/// host sees, into `into` as [`bring`] would (holes kept).
pub fn copy_here(host: &str, path: &Path, into: &Path) -> Result<PathBuf, String> {
    let to = destination(host, path, into)?;
    mpcrs_levels::store::copy_durably(&mpcrs_levels::transport::PlainIo, path, &to)
        .map_err(|e| format!("cannot copy {} to {}: {e}", path.display(), to.display()))?;
    Ok(to)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_and_facts_cross_a_command_line_and_its_output() {
        let q = Question::Image(
            "/scratch/a:b/node-2/epoch-3/process-1.img".into(),
            Expected {
                epoch: 3,
                process: 1,
            },
        );
        assert_eq!(Question::parse(&q.to_arg()), Ok(q));
        let q = Question::Presence("/scratch/node-2/epoch-3/parity-1.rs".into());
        assert_eq!(Question::parse(&q.to_arg()), Ok(q));
        assert!(Question::parse("image:x:1:/p").is_err());
        assert!(Question::parse("/p").is_err());
        for fact in [
            Fact::Intact(HeaderFacts {
                exe_size: 123,
                exe_crc: 0xdead_beef,
                meta_crc: 7,
                parent: Some(mpcrs_cr::image::Parent {
                    epoch: 2,
                    meta_crc: 0x0102_0304,
                }),
            }),
            Fact::Intact(HeaderFacts {
                exe_size: 1,
                exe_crc: 0,
                meta_crc: 0,
                parent: None,
            }),
            Fact::Present,
            Fact::Missing,
            Fact::Damaged("block 3: CRC-32C mismatch".into()),
        ] {
            assert_eq!(Fact::parse(&fact.line()), Some(fact));
        }
        assert_eq!(Fact::parse("intact 1 2"), None);
    }
}
