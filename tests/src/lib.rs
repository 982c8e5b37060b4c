//! Helpers of the end-to-end tests: where the built programs are, and running them
//! through `mpcrs-run` with a time limit.
//!
//! The programs run by the tests are this package's binaries (src/bin) and the
//! runtime's examples; `mpcrs-run` comes from the runtime package. All are built by
//! the workspace test command (`cargo nextest run --workspace`, see README.md).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The cargo profile directory (target/debug or target/release) of the test binary.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    // target/<profile>/deps/<test>-<hash>
    exe.parent()
        .and_then(Path::parent)
        .expect("test binary lives in target/<profile>/deps")
        .to_path_buf()
}

fn must_exist(p: PathBuf) -> PathBuf {
    assert!(
        p.exists(),
        "{} is not built: run the workspace test command from README.md \
         (cargo nextest run --workspace --release), which builds every binary and example",
        p.display()
    );
    p
}

/// Path of `mpcrs-run`.
pub fn mpcrs_run() -> PathBuf {
    must_exist(profile_dir().join("mpcrs-run"))
}

/// Path of a test program of this package.
pub fn program(name: &str) -> PathBuf {
    must_exist(profile_dir().join(name))
}

/// Path of an example of the runtime package.
pub fn example(name: &str) -> PathBuf {
    must_exist(profile_dir().join("examples").join(name))
}

/// Runs `mpcrs-run ARGS` and returns its output; panics if it runs longer than
/// `limit` (the process is killed first).
pub fn run_job(args: &[&str], limit: Duration) -> Output {
    run_command(Command::new(mpcrs_run()).args(args), limit)
}

/// Runs a command with a time limit and collects its output.
pub fn run_command(cmd: &mut Command, limit: Duration) -> Output {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    // Drain the pipes on threads so a chatty child never blocks on a full pipe.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut out, &mut v).ok();
        v
    });
    let t_err = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut err, &mut v).ok();
        v
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if start.elapsed() > limit {
            // mpcrs-run's child is in our process group only through it: kill both.
            let _ = Command::new("pkill")
                .args(["-KILL", "-P", &child.id().to_string()])
                .status();
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} ran longer than {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Output {
        status,
        stdout: t_out.join().unwrap(),
        stderr: t_err.join().unwrap(),
    }
}

/// Stdout and stderr as text, for assertion messages.
pub fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Asserts the job succeeded, showing its output otherwise; returns stdout.
pub fn expect_success(o: &Output, what: &str) -> String {
    let (out, err) = text(o);
    assert!(
        o.status.success(),
        "{what} failed with {}\nstdout:\n{out}\nstderr:\n{err}",
        o.status
    );
    out
}

/// The `checksum …` line a heat program prints.
pub fn heat_checksum(out: &str) -> String {
    out.lines()
        .find_map(|l| l.strip_prefix("checksum "))
        .unwrap_or_else(|| panic!("no checksum line in:\n{out}"))
        .trim()
        .to_string()
}

/// A program of ../shared/bench (or of $MPCRS_SHARED/bench).
pub fn shared_bench(name: &str) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    std::env::var_os("MPCRS_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("../shared"))
        .join("bench")
        .join(name)
}

/// Runs `bin` (built with mpicc.openmpi) under Open MPI's mpirun with `ranks`
/// processes, oversubscribing this machine's cores as our ranks do.
pub fn run_openmpi(bin: &Path, ranks: usize, args: &[&str]) -> Output {
    run_command(
        Command::new("mpirun.openmpi")
            .args([
                "--allow-run-as-root",
                "--oversubscribe",
                "-n",
                &ranks.to_string(),
            ])
            .arg(bin)
            .args(args),
        Duration::from_secs(300),
    )
}

/// The line of `out` in which process `p` reports (`process P: ...`).
pub fn process_report(out: &str, p: u32) -> &str {
    out.lines()
        .find(|l| l.starts_with(&format!("process {p}: ")))
        .unwrap_or_else(|| panic!("no report of process {p} in {out}"))
}

/// A test process started by a PMI launcher (`mpcrs-run -p`): its connection to
/// the key-value store, its rank among the processes, and the signaling network
/// booted on this host's address as the launcher reached it (loopback when the
/// connection was inherited).
pub struct JobProcess {
    pub kvs: mpcrs::launch::pmi2::Client<mpcrs::launch::pmi2::PmiStream>,
    pub me: u32,
    pub count: u32,
    pub host: std::net::IpAddr,
    pub net: mpcrs_signaling::Signaling,
}

pub fn join_job(topology: mpcrs_signaling::StaticTopology, wait: Duration) -> JobProcess {
    let mut kvs = mpcrs::launch::pmi2::Client::from_env()
        .expect("started without PMI_FD or PMI_PORT (run it with mpcrs-run -p)")
        .unwrap();
    let (me, count) = (kvs.rank as u32, kvs.size as u32);
    let host = kvs
        .reachable_address()
        .unwrap_or_else(|| "127.0.0.1".parse().unwrap());
    let net =
        mpcrs_signaling::Signaling::bootstrap(me, count, host, topology, &mut kvs, wait).unwrap();
    JobProcess {
        kvs,
        me,
        count,
        host,
        net,
    }
}
