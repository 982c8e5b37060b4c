//! The processes of a multi-process job: contiguous blocks of ranks, one PMI-2
//! connection per process served by the launcher's key-value store, and the
//! environment that tells each process who it is.

use std::io;
use std::ops::Range;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::Arc;

use super::pmi2::{self, Ending, Server};
use super::supervise::ProcessSpec;
use crate::run::env;

/// Ranks of each of `processes` processes: contiguous blocks, the first
/// `ranks % processes` processes holding one rank more.
pub fn rank_blocks(ranks: usize, processes: usize) -> Vec<Range<usize>> {
    let (base, extra) = (ranks / processes, ranks % processes);
    let mut start = 0;
    (0..processes)
        .map(|p| {
            let len = base + usize::from(p < extra);
            start += len;
            start - len..start
        })
        .collect()
}

/// A copy of `base` (program, arguments, environment, directory).
fn copy_command(base: &Command) -> Command {
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

/// Prepares `processes` copies of `base`, each with its own PMI-2 connection
/// (`PMI_FD`, `PMI_RANK`, `PMI_SIZE`, as Slurm and hydra set them) served by a
/// thread of the launcher until the process finalizes, aborts or dies.
pub fn with_key_value_store(
    base: &Command,
    processes: usize,
    ranks: usize,
    host: &str,
) -> io::Result<Vec<ProcessSpec>> {
    let jobid = format!("mpcrs-{}", std::process::id());
    let server = Arc::new(Server::new(processes, &jobid));
    let mut specs = Vec::with_capacity(processes);
    for (index, block) in rank_blocks(ranks, processes).into_iter().enumerate() {
        // Both ends are close-on-exec; the child clears the flag on its own end
        // only, so no process inherits another's connection.
        let (ours, theirs) = UnixStream::pair()?;
        let fd = theirs.as_raw_fd();
        let mut command = copy_command(base);
        command
            .env(pmi2::ENV_FD, fd.to_string())
            .env(pmi2::ENV_RANK, index.to_string())
            .env(pmi2::ENV_SIZE, processes.to_string())
            .env(env::PROCESSES, processes.to_string())
            .env(env::PROCESS, index.to_string());
        let keep_open = theirs;
        // SAFETY: runs in the forked child before exec; fcntl is async-signal-safe
        // and touches only the child's copy of the descriptor.
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
                match server.serve(index, &mut stream) {
                    Ok(Ending::Aborted(msg)) => {
                        eprintln!("mpcrs-run: process {index} called abort: {msg}")
                    }
                    Ok(_) => {}
                    // The process died; the supervisor reports it.
                    Err(_) => {}
                }
            })?;
        specs.push(ProcessSpec {
            index,
            ranks: block,
            host: host.to_string(),
            command,
        });
    }
    Ok(specs)
}

#[cfg(test)]
mod tests {
    use super::rank_blocks;

    #[test]
    fn blocks_are_contiguous_and_balanced() {
        assert_eq!(rank_blocks(10, 4), vec![0..3, 3..6, 6..8, 8..10]);
        assert_eq!(rank_blocks(4, 4), vec![0..1, 1..2, 2..3, 3..4]);
        assert_eq!(rank_blocks(64, 1), vec![0..64]);
    }
}
