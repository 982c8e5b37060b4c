//! The job's processes that share this machine's CPUs although the job puts
//! them on different hosts (containers or network namespaces of one machine):
//! their launcher cannot see it, and workers that spin while they wait would
//! take turns on the CPUs a scheduler tick at a time. Each process notes its
//! CPUs and worker count in one file of the machine's /dev/shm before the
//! bootstrap's fence, and reads everyone's notes after it: if the workers of
//! the processes whose CPUs overlap this one's outnumber those CPUs, this
//! process's workers yield when idle.
//!
//! Processes that do not see the same /dev/shm count as different machines,
//! as they are taken to be today. The file's name starts with `mpcrs-<job>-`,
//! which the launcher removes with the job's rings.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

/// One process's note: its index, its workers, the CPUs it may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Note {
    pub(crate) process: u32,
    pub(crate) workers: usize,
    pub(crate) cpus: Vec<usize>,
}

impl Note {
    /// This process's note: the CPUs of its main thread (a worker may be
    /// pinned to one of them).
    pub(crate) fn of_this_process(process: u32, workers: usize) -> Note {
        Note {
            process,
            workers,
            cpus: process_cpus(),
        }
    }

    fn line(&self) -> String {
        let cpus: Vec<String> = self.cpus.iter().map(|c| c.to_string()).collect();
        format!("{} {} {}\n", self.process, self.workers, cpus.join(","))
    }

    fn parse(line: &str) -> Option<Note> {
        let mut words = line.split_whitespace();
        let process = words.next()?.parse().ok()?;
        let workers = words.next()?.parse().ok()?;
        let cpus = words
            .next()?
            .split(',')
            .map(|c| c.parse().ok())
            .collect::<Option<Vec<usize>>>()?;
        Some(Note {
            process,
            workers,
            cpus,
        })
    }
}

/// The machine's notes of the launch whose job id is `job` (a restart is a
/// launch of its own).
pub(crate) struct Notes {
    path: PathBuf,
}

impl Notes {
    pub(crate) fn of_job(job: &str) -> Notes {
        Notes {
            path: PathBuf::from(format!("/dev/shm/mpcrs-{job}-machine")),
        }
    }

    /// Adds `note` (one short append: whole, whoever else appends).
    pub(crate) fn add(&self, note: &Note) -> std::io::Result<()> {
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .open(&self.path)?
            .write_all(note.line().as_bytes())
    }

    /// Removes the notes: once every process passed the job's last fence
    /// (under mpcrs-run its launcher would; under srun, nobody else does).
    pub(crate) fn remove(&self) {
        let _ = std::fs::remove_file(&self.path);
    }

    /// Every note there (those of every process on this machine, once all have
    /// passed a fence after adding theirs).
    pub(crate) fn read(&self) -> std::io::Result<Vec<Note>> {
        Ok(std::fs::read_to_string(&self.path)?
            .lines()
            .filter_map(Note::parse)
            .collect())
    }
}

/// Whether the workers of the processes whose CPUs overlap `mine` (`mine`
/// among them) outnumber the CPUs they may use between them.
pub(crate) fn cpus_oversubscribed(mine: &Note, notes: &[Note]) -> bool {
    let mut cpus: Vec<usize> = mine.cpus.clone();
    let mut workers = mine.workers;
    for n in notes {
        if n.process != mine.process && n.cpus.iter().any(|c| mine.cpus.contains(c)) {
            workers += n.workers;
            cpus.extend(&n.cpus);
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    workers > cpus.len()
}

/// The CPUs the process's main thread may use.
fn process_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is a valid out-parameter of the size given;
    // CPU_ISSET reads indices below CPU_SETSIZE only.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(
            libc::getpid(),
            std::mem::size_of::<libc::cpu_set_t>(),
            &mut set,
        ) != 0
        {
            return vec![0];
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(process: u32, workers: usize, cpus: &[usize]) -> Note {
        Note {
            process,
            workers,
            cpus: cpus.to_vec(),
        }
    }

    #[test]
    fn a_note_reads_back_as_written() {
        let n = note(12, 3, &[0, 2, 5]);
        assert_eq!(Note::parse(&n.line()), Some(n));
        assert_eq!(Note::parse("7 x 1"), None);
        assert_eq!(Note::parse("7 1"), None);
    }

    #[test]
    fn processes_on_disjoint_cpus_do_not_share_them() {
        let notes = [note(0, 1, &[0]), note(1, 1, &[1])];
        assert!(!cpus_oversubscribed(&notes[0], &notes));
        assert!(!cpus_oversubscribed(&notes[1], &notes));
    }

    #[test]
    fn two_hosts_on_one_machine_oversubscribe_its_cpus() {
        // Two processes per "host", each host's pair split over CPUs 0 and 1.
        let notes = [
            note(0, 1, &[0]),
            note(1, 1, &[1]),
            note(2, 1, &[0]),
            note(3, 1, &[1]),
        ];
        assert!(notes.iter().all(|n| cpus_oversubscribed(n, &notes)));
        // Unpinned, with a worker per CPU each.
        let notes = [note(0, 2, &[0, 1]), note(1, 2, &[0, 1])];
        assert!(cpus_oversubscribed(&notes[0], &notes));
        // Alone with two workers on two CPUs.
        assert!(!cpus_oversubscribed(&notes[0], &notes[..1]));
    }

    #[test]
    fn notes_are_appended_and_read_by_every_process() {
        let notes = Notes::of_job(&format!("test{}", std::process::id()));
        notes.add(&note(0, 2, &[0, 1])).unwrap();
        notes.add(&note(1, 2, &[0, 1])).unwrap();
        let read = notes.read().unwrap();
        std::fs::remove_file(&notes.path).unwrap();
        assert_eq!(read, [note(0, 2, &[0, 1]), note(1, 2, &[0, 1])]);
    }
}
