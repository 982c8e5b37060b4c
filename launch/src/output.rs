//! The ranks' output as the launcher hands it on: as written, labelled per
//! line with its rank (`--tag-output`, `-prepend-rank`), or into a file per
//! rank and stream (`--output-filename DIR`); formats in
//! mpcrs_settings::output.
//!
//! A process of several ranks of a C program labels or files its ranks'
//! output itself (mpi-abi's stdout.rs, asked through MPCRS_OUTPUT_*), since
//! only it knows which rank wrote a line: the launcher passes that output on
//! untouched. The launcher labels (or files) the output of every other
//! process: one of one rank, or of several ranks of a Rust program, whose
//! lines carry the process's ranks as `first-last`.

use std::io::{BufRead, BufReader, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use mpcrs_settings::output::{self, Labels, Stream};

/// What the user asked of the job's output.
#[derive(Debug, Clone, Default)]
pub struct OutputPlan {
    pub labels: Option<Labels>,
    /// `--output-filename`, absolute and with its job directory made.
    pub dir: Option<PathBuf>,
    /// The program's processes of several ranks label their ranks' lines
    /// themselves (a C program whose ranks run as threads).
    pub ranks_label_themselves: bool,
}

/// How the launcher treats one process's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Handling {
    /// Straight to the launcher's stdout and stderr.
    AsWritten,
    /// Through the launcher, each line labelled with `ranks`.
    Labelled { labels: Labels, ranks: String },
    /// Into the files of its one rank.
    Files { rank: usize },
}

impl OutputPlan {
    /// The plan for a job of `program`: `labels`, and `dir` made ready (see
    /// [`prepare_dir`]).
    pub fn new(
        labels: Option<Labels>,
        dir: Option<&Path>,
        program: &str,
    ) -> Result<OutputPlan, String> {
        let dir = dir.map(prepare_dir).transpose()?;
        let ranks_label_themselves = crate::program::resolve_program(program)
            .and_then(|p| mpcrs_elf::mpi_program(&p))
            .is_some_and(|k| k.position_independent);
        Ok(OutputPlan {
            labels,
            dir,
            ranks_label_themselves,
        })
    }

    /// How a process of `ranks` is treated.
    pub fn handling(&self, ranks: &Range<usize>) -> Handling {
        let by_itself = self.ranks_label_themselves && ranks.len() > 1;
        if by_itself {
            return Handling::AsWritten;
        }
        if self.dir.is_some() && ranks.len() == 1 {
            return Handling::Files { rank: ranks.start };
        }
        match self.labels {
            Some(labels) => Handling::Labelled {
                labels,
                ranks: rank_text(ranks),
            },
            None => Handling::AsWritten,
        }
    }

    /// The variables that ask a process of several ranks to label or file
    /// its ranks' output.
    pub fn variables(&self) -> Vec<(&'static str, String)> {
        use mpcrs_settings::variables as env;
        let mut vars = Vec::new();
        if let Some(l) = self.labels {
            vars.push((env::OUTPUT_LABELS.name, l.name().to_string()));
        }
        if let Some(d) = &self.dir {
            vars.push((env::OUTPUT_DIR.name, d.to_string_lossy().into_owned()));
        }
        vars
    }

    /// Sets up `command`'s stdout and stderr as `handling` says.
    pub fn prepare(&self, handling: &Handling, command: &mut Command) -> std::io::Result<()> {
        match handling {
            Handling::AsWritten => {}
            Handling::Labelled { .. } => {
                command.stdout(Stdio::piped()).stderr(Stdio::piped());
            }
            Handling::Files { rank } => {
                let dir = self.dir.as_deref().expect("files only with a directory");
                command
                    .stdout(rank_file(dir, *rank, Stream::Stdout)?)
                    .stderr(rank_file(dir, *rank, Stream::Stderr)?);
            }
        }
        Ok(())
    }
}

/// "R" for one rank, "first-last" for several.
fn rank_text(ranks: &Range<usize>) -> String {
    match ranks.len() {
        1 => ranks.start.to_string(),
        _ => format!("{}-{}", ranks.start, ranks.end.saturating_sub(1)),
    }
}

/// Rank `rank`'s file of `stream`, created (emptied) with its directory.
fn rank_file(dir: &Path, rank: usize, stream: Stream) -> std::io::Result<std::fs::File> {
    let path = output::rank_file(dir, rank, stream);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::File::create(&path)
        .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))
}

/// `--output-filename DIR` made ready before anything starts: DIR and its
/// job directory created; the path every process gets (absolute: --wdir
/// starts them elsewhere), or what is wrong, naming the option and the path.
pub fn prepare_dir(dir: &Path) -> Result<PathBuf, String> {
    let absolute = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let job = output::job_dir(&absolute);
    std::fs::create_dir_all(&job).map_err(|e| {
        format!(
            "--output-filename {}: cannot create {}: {e}",
            dir.display(),
            job.display()
        )
    })?;
    Ok(absolute)
}

/// Starts the threads that hand on a labelled process's lines; none for
/// other processes.
pub fn forward_labelled(
    handling: &Handling,
    child: &mut Child,
) -> Vec<std::thread::JoinHandle<()>> {
    let Handling::Labelled { labels, ranks } = handling else {
        return Vec::new();
    };
    let mut threads = Vec::new();
    if let Some(out) = child.stdout.take() {
        threads.push(forward(
            out,
            labels.label(ranks, Stream::Stdout),
            Stream::Stdout,
        ));
    }
    if let Some(err) = child.stderr.take() {
        threads.push(forward(
            err,
            labels.label(ranks, Stream::Stderr),
            Stream::Stderr,
        ));
    }
    threads
}

/// Hands on `stream` line by line, each prefixed by `label`; a last line
/// without its newline gets one.
fn forward(
    from: impl std::io::Read + Send + 'static,
    label: String,
    to: Stream,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        for line in BufReader::new(from).split(b'\n') {
            let Ok(line) = line else { break };
            let mut labelled = Vec::with_capacity(label.len() + line.len() + 1);
            labelled.extend_from_slice(label.as_bytes());
            labelled.extend_from_slice(&line);
            labelled.push(b'\n');
            // One write per line: lines of processes never mix.
            let _ = match to {
                Stream::Stdout => std::io::stdout().lock().write_all(&labelled),
                Stream::Stderr => std::io::stderr().lock().write_all(&labelled),
            };
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processes_of_one_rank_are_labelled_or_filed_by_the_launcher() {
        let plan = OutputPlan {
            labels: Some(Labels::Tag),
            dir: None,
            ranks_label_themselves: true,
        };
        assert_eq!(
            plan.handling(&(3..4)),
            Handling::Labelled {
                labels: Labels::Tag,
                ranks: "3".into()
            }
        );
        assert_eq!(plan.handling(&(0..4)), Handling::AsWritten);
        let rust = OutputPlan {
            ranks_label_themselves: false,
            ..plan.clone()
        };
        assert_eq!(
            rust.handling(&(0..4)),
            Handling::Labelled {
                labels: Labels::Tag,
                ranks: "0-3".into()
            }
        );
        let files = OutputPlan {
            dir: Some("/o".into()),
            ..plan
        };
        assert_eq!(files.handling(&(2..3)), Handling::Files { rank: 2 });
    }
}
