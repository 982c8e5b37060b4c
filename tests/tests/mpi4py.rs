//! mpi4py, the wheel from PyPI (its MPICH binding), on libmpi: the launcher
//! puts our library first on the path of the Python processes, where
//! mpi4py loads it by name (libmpi.so, libmpi.so.12) when imported.
//!
//! The wheel is installed once into a virtual environment under the target
//! directory (target/mpi4py-venv), shared by later runs. Without the network
//! (or PyPI) the test fails, saying so: it does not skip.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use mpcrs_tests::{expect_success, profile_dir, run_command, run_job, text};

const MPI4PY: &str = "mpi4py==4.1.2";

/// The interpreter the environment is made from: Debian's (python3-venv,
/// scripts/setup-system.sh), else the first python3 on PATH.
fn base_python() -> PathBuf {
    let debian = Path::new("/usr/bin/python3");
    if debian.is_file() {
        debian.to_path_buf()
    } else {
        PathBuf::from("python3")
    }
}

/// The environment's interpreter, with mpi4py installed. A new environment
/// is made aside and renamed into place, so that concurrent runs never see
/// a half-made one (the loser of the race removes its own).
fn venv_python() -> PathBuf {
    let target = profile_dir()
        .parent()
        .expect("target directory")
        .to_path_buf();
    let venv = target.join("mpi4py-venv");
    let python = venv.join("bin").join("python");
    let ready = |py: &Path| {
        py.is_file()
            && Command::new(py)
                .args(["-c", "import mpi4py; assert mpi4py.__version__ == '4.1.2'"])
                .status()
                .is_ok_and(|s| s.success())
    };
    if ready(&python) {
        return python;
    }
    let aside = target.join(format!("mpi4py-venv.{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&aside);
    let o = run_command(
        Command::new(base_python()).args(["-m", "venv"]).arg(&aside),
        Duration::from_secs(300),
    );
    let (out, err) = text(&o);
    if !o.status.success() {
        let _ = std::fs::remove_dir_all(&aside);
        panic!("python3 -m venv failed (python3-venv, scripts/setup-system.sh):\n{out}{err}");
    }
    let o = run_command(
        Command::new(aside.join("bin").join("python")).args([
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--no-input",
            MPI4PY,
        ]),
        Duration::from_secs(600),
    );
    let (out, err) = text(&o);
    if !o.status.success() {
        let _ = std::fs::remove_dir_all(&aside);
        panic!("pip install {MPI4PY} failed: this test needs PyPI (the network):\n{out}{err}");
    }
    if std::fs::rename(&aside, &venv).is_err() {
        // Another run put its environment in place first.
        let _ = std::fs::remove_dir_all(&aside);
    }
    assert!(ready(&python), "{} has no mpi4py 4.1.2", venv.display());
    python
}

/// `python ARGS` as the 4 processes of a job, to its end.
fn python_job(python: &Path, args: &[&str]) -> std::process::Output {
    let mut a = vec!["-n", "4", "--process-mode", python.to_str().unwrap()];
    a.extend_from_slice(args);
    run_job(&a, Duration::from_secs(300))
}

#[test]
fn mpi4py_from_pypi_runs_its_benchmarks_and_reductions_over_4_processes() {
    let python = venv_python();

    let o = python_job(&python, &["-m", "mpi4py.bench", "helloworld"]);
    let out = expect_success(&o, "mpi4py.bench helloworld");
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let mut lines: Vec<&str> = out.lines().collect();
    lines.sort();
    let expected: Vec<String> = (0..4)
        .map(|r| format!("Hello, World! I am process {r} of 4 on {}.", host.trim()))
        .collect();
    assert_eq!(lines, expected, "helloworld:\n{out}");

    let o = python_job(
        &python,
        &["-m", "mpi4py.bench", "ringtest", "-n", "1024", "-l", "10"],
    );
    let out = expect_success(&o, "mpi4py.bench ringtest");
    assert!(
        out.lines().count() == 1
            && out.starts_with("time for 10 loops = ")
            && out
                .trim_end()
                .ends_with("seconds (4 processes, 1024 bytes)"),
        "ringtest:\n{out}"
    );

    // The library mpi4py chose is ours, under MPICH's ABI; reductions of
    // Python objects (pickled) and of buffers (array.array, bytearray).
    let script = r#"
from mpi4py import MPI
import array
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
assert "mpcrs" in MPI.Get_library_version(), MPI.Get_library_version()
# Lists add up by concatenation, in rank order.
total = comm.allreduce([rank], op=MPI.SUM)
assert total == list(range(size)), total
s = comm.allreduce(rank + 1)
assert s == size * (size + 1) // 2, s
a = array.array("i", [rank, 2 * rank, 3 * rank])
b = array.array("i", [0, 0, 0])
comm.Allreduce(a, b, op=MPI.SUM)
t = size * (size - 1) // 2
assert list(b) == [t, 2 * t, 3 * t], b
m = bytearray([rank])
x = bytearray(1)
comm.Allreduce(m, x, op=MPI.MAX)
assert x[0] == size - 1, x
import sys
# One write per line: the processes share the launcher's output.
sys.stdout.write(f"rank {rank}: {total} {s} {list(b)} {x[0]}\n")
sys.stdout.flush()
"#;
    let o = python_job(&python, &["-c", script]);
    let out = expect_success(&o, "allreduce script");
    let mut lines: Vec<&str> = out.lines().collect();
    lines.sort();
    let expected: Vec<String> = (0..4)
        .map(|r| format!("rank {r}: [0, 1, 2, 3] 10 [6, 12, 18] 3"))
        .collect();
    assert_eq!(lines, expected, "allreduce script:\n{out}");
}

/// Ranks sharing a process would share one Python interpreter: refused
/// before anything starts, saying why.
#[test]
fn python_ranks_cannot_share_a_process() {
    let python = base_python();
    let o = run_job(
        &[
            "-n",
            "4",
            "-p",
            "2",
            python.to_str().unwrap(),
            "-c",
            "print('ran')",
        ],
        Duration::from_secs(60),
    );
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(!out.contains("ran"), "{out}");
    assert!(
        err.contains("one interpreter per process") && err.contains("--process-mode"),
        "{err}"
    );
}
