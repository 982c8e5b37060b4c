//! How the ranks' output reaches the user, as Open MPI's and MPICH's
//! launchers show it: each line labelled with the rank that wrote it
//! (`--tag-output`: `[1,R]<stdout>:`, `-prepend-rank`: `[R] `), or each rank's
//! stdout and stderr in files of their own (`--output-filename DIR`:
//! `DIR/1/rank.R/stdout`, Open MPI 4's layout). The launcher labels the lines
//! of a process of one rank; a process of several labels its ranks' lines
//! itself (mpi-abi's stdout.rs), both with these functions.

use std::path::{Path, PathBuf};

/// How each line is labelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Labels {
    /// Open MPI's `--tag-output`: `[1,R]<stdout>:line`.
    Tag,
    /// MPICH's `-prepend-rank`: `[R] line`.
    Rank,
}

impl Labels {
    /// The value of [`crate::variables::OUTPUT_LABELS`] that asks for them.
    pub fn name(self) -> &'static str {
        match self {
            Labels::Tag => "tag",
            Labels::Rank => "rank",
        }
    }

    pub fn from_name(name: &str) -> Option<Labels> {
        match name {
            "tag" => Some(Labels::Tag),
            "rank" => Some(Labels::Rank),
            _ => None,
        }
    }

    /// The label of a line of `ranks` (one rank, or "first-last" for a
    /// process whose ranks cannot be told apart) written to `stream`.
    pub fn label(self, ranks: &str, stream: Stream) -> String {
        match self {
            Labels::Tag => format!("[1,{ranks}]<{}>:", stream.name()),
            Labels::Rank => format!("[{ranks}] "),
        }
    }
}

/// stdout or stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

impl Stream {
    pub fn name(self) -> &'static str {
        match self {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        }
    }
}

/// The directory of the job under `--output-filename DIR` (Open MPI numbers
/// a launcher's first job 1).
pub fn job_dir(dir: &Path) -> PathBuf {
    dir.join("1")
}

/// The file of rank `rank`'s `stream` under `--output-filename DIR`.
pub fn rank_file(dir: &Path, rank: usize, stream: Stream) -> PathBuf {
    job_dir(dir)
        .join(format!("rank.{rank}"))
        .join(stream.name())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_files_follow_open_mpi_and_mpich() {
        assert_eq!(Labels::Tag.label("3", Stream::Stderr), "[1,3]<stderr>:");
        assert_eq!(Labels::Rank.label("3", Stream::Stdout), "[3] ");
        assert_eq!(
            rank_file(Path::new("/o"), 2, Stream::Stdout),
            Path::new("/o/1/rank.2/stdout")
        );
        for l in [Labels::Tag, Labels::Rank] {
            assert_eq!(Labels::from_name(l.name()), Some(l));
        }
    }
}
