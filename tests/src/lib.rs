//! Helpers of the end-to-end tests: where the built programs are, and running them
//! through `mpcrs-run` with a time limit.
//!
//! The programs run by the tests are this package's binaries (src/bin) and the
//! runtime's examples; `mpcrs-run` comes from the runtime package. All are built by
//! the workspace test command (`cargo nextest run --workspace`, see README.md).

pub mod netns;
pub mod slurm;

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

/// `mpcrs-ckpt ARGS`, run to its end (at most a minute).
pub fn mpcrs_ckpt(args: &[&str]) -> Output {
    run_command(
        Command::new(must_exist(profile_dir().join("mpcrs-ckpt"))).args(args),
        Duration::from_secs(60),
    )
}

/// Path of a test program of this package.
pub fn program(name: &str) -> PathBuf {
    must_exist(profile_dir().join(name))
}

/// Path of an example of the runtime package.
pub fn example(name: &str) -> PathBuf {
    must_exist(profile_dir().join("examples").join(name))
}

/// Compiles the C program `src` with `compiler` (mpcrs-cc by default) into the
/// test build directory as `out_name`.
pub fn build_c(src: &Path, out_name: &str, compiler: Option<&str>, extra: &[&str]) -> PathBuf {
    let out = profile_dir().join("c-tests");
    std::fs::create_dir_all(&out).unwrap();
    let bin = out.join(out_name);
    // Tests running at once may build the same program: each writes its own
    // file and renames it into place, so none runs a half-written one.
    static BUILDS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = BUILDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = out.join(format!("{out_name}.{}.{n}.tmp", std::process::id()));
    let cc = compiler
        .map(PathBuf::from)
        .unwrap_or_else(|| profile_dir().join("mpcrs-cc"));
    let o = run_command(
        Command::new(&cc)
            .args(["-O2", "-o", tmp.to_str().unwrap(), src.to_str().unwrap()])
            .args(extra),
        Duration::from_secs(120),
    );
    expect_success(&o, &format!("{} {}", cc.display(), src.display()));
    std::fs::rename(&tmp, &bin).unwrap();
    bin
}

/// A command running in the background, its output collected as it comes (on
/// threads, so a chatty child never blocks on a full pipe).
pub struct BackgroundJob {
    child: std::process::Child,
    what: String,
    out: Collected,
    err: Collected,
}

/// One output pipe: what came so far, and the thread draining it.
struct Collected {
    bytes: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    reader: std::thread::JoinHandle<()>,
}

impl Collected {
    fn drain(mut from: impl std::io::Read + Send + 'static) -> Collected {
        let bytes = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let to = bytes.clone();
        let reader = std::thread::spawn(move || {
            let mut chunk = [0u8; 4096];
            while let Ok(n) = from.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                to.lock().unwrap().extend_from_slice(&chunk[..n]);
            }
        });
        Collected { bytes, reader }
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes.lock().unwrap()).into_owned()
    }

    /// Everything, once the pipe closed.
    fn into_bytes(self) -> Vec<u8> {
        self.reader.join().unwrap();
        std::mem::take(&mut *self.bytes.lock().unwrap())
    }
}

impl BackgroundJob {
    /// Starts `mpcrs-run ARGS`.
    pub fn start(args: &[&str]) -> BackgroundJob {
        BackgroundJob::spawn(Command::new(mpcrs_run()).args(with_local_beside(args)))
    }

    pub fn spawn(cmd: &mut Command) -> BackgroundJob {
        BackgroundJob::spawn_fed(cmd, None)
    }

    /// Starts `cmd` with `input` on its standard input (written by a thread
    /// of its own, then closed), or /dev/null.
    pub fn spawn_fed(cmd: &mut Command, input: Option<Vec<u8>>) -> BackgroundJob {
        let stdin = if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        };
        let mut child = cmd
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
        if let (Some(input), Some(mut to)) = (input, child.stdin.take()) {
            std::thread::spawn(move || {
                use std::io::Write;
                // A job that ends before reading all of it closes the pipe.
                let _ = to.write_all(&input);
            });
        }
        let out = Collected::drain(child.stdout.take().unwrap());
        let err = Collected::drain(child.stderr.take().unwrap());
        BackgroundJob {
            child,
            what: format!("{cmd:?}"),
            out,
            err,
        }
    }

    /// Standard output and error so far.
    pub fn output(&self) -> (String, String) {
        (self.out.text(), self.err.text())
    }
    /// Waits until `done(stdout, stderr)` holds; panics after `limit`, or
    /// when mpcrs-run ended first.
    pub fn wait_for(&self, what: &str, limit: Duration, done: impl Fn(&str, &str) -> bool) {
        let start = Instant::now();
        let pid = self.child.id();
        loop {
            let (o, e) = self.output();
            if done(&o, &e) {
                return;
            }
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let ended = stat
                .rsplit(')')
                .next()
                .and_then(|s| s.split_whitespace().next());
            assert!(
                ended != Some("Z"),
                "mpcrs-run ended while waiting for {what}\n--- stdout\n{o}\n--- stderr\n{e}"
            );
            assert!(
                start.elapsed() < limit,
                "waited {limit:?} for {what}\n--- stdout\n{o}\n--- stderr\n{e}"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Sends `sig` to mpcrs-run.
    pub fn signal_launcher(&self, sig: i32) {
        // SAFETY: kill only sends a signal.
        unsafe { libc::kill(self.child.id() as i32, sig) };
    }

    /// The processes mpcrs-run started (the job's processes).
    pub fn job_processes(&self) -> Vec<i32> {
        child_processes(self.child.id() as i32)
    }

    /// SIGKILLs the job's processes, as a crash would, and waits for mpcrs-run
    /// to end; returns its status and output.
    pub fn kill_processes(self) -> (std::process::ExitStatus, String, String) {
        let procs = self.job_processes();
        assert!(!procs.is_empty(), "the job has no process to kill");
        for p in procs {
            // SAFETY: kill only sends a signal.
            unsafe { libc::kill(p, libc::SIGKILL) };
        }
        let o = self.finish(Duration::from_secs(10));
        let (out, err) = text(&o);
        (o.status, out, err)
    }

    /// Waits for the command to end and returns its whole output; after
    /// `limit` it is killed, with the processes it started, and this panics.
    pub fn finish(mut self, limit: Duration) -> Output {
        let start = Instant::now();
        let status = loop {
            if let Some(s) = self.child.try_wait().expect("wait") {
                break s;
            }
            if start.elapsed() > limit {
                // What every process of the tree was doing, for the message.
                let states = thread_states(self.child.id() as i32);
                // The whole tree: mpcrs-run's processes, or mpirun's proxies
                // and their programs, would go on running without it.
                for pid in descendants(self.child.id() as i32) {
                    // SAFETY: signalling a process id; at worst it has gone.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                }
                let _ = self.child.kill();
                let _ = self.child.wait();
                let (o, e) = self.output();
                panic!(
                    "{} ran longer than {limit:?}\n--- stdout\n{o}\n--- stderr\n{e}\n--- threads then\n{states}",
                    self.what
                );
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        Output {
            status,
            stdout: self.out.into_bytes(),
            stderr: self.err.into_bytes(),
        }
    }
}

/// The tcp ports process `pid` listens on (its sockets in state LISTEN, from
/// /proc/PID/net/tcp and tcp6 matched against its descriptors).
pub fn listening_ports(pid: i32) -> Vec<u16> {
    let inodes: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|dir| {
            dir.flatten()
                .filter_map(|e| std::fs::read_link(e.path()).ok())
                .filter_map(|l| {
                    let l = l.to_string_lossy().into_owned();
                    Some(l.strip_prefix("socket:[")?.strip_suffix(']')?.to_string())
                })
                .collect()
        })
        .unwrap_or_default();
    let mut ports = Vec::new();
    for table in ["tcp", "tcp6"] {
        let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/net/{table}")) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            // local address, remote address, state (0A: LISTEN), ..., inode
            if f.len() > 9 && f[3] == "0A" && inodes.iter().any(|i| i == f[9]) {
                if let Some(port) = f[1].rsplit(':').next() {
                    ports.push(u16::from_str_radix(port, 16).unwrap());
                }
            }
        }
    }
    ports.sort_unstable();
    ports.dedup();
    ports
}

/// Variable `name` of running process `pid`'s environment.
pub fn environment_variable(pid: i32, name: &str) -> Option<String> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    environ.split(|&b| b == 0).find_map(|kv| {
        let kv = String::from_utf8_lossy(kv);
        kv.strip_prefix(&format!("{name}=")).map(str::to_string)
    })
}

/// Every thread of process `pid` and of its descendants: name, state (R, S,
/// D...) and the kernel function it waits in.
pub fn thread_states(pid: i32) -> String {
    let mut out = String::new();
    for p in std::iter::once(pid).chain(descendants(pid)) {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{p}/task")) else {
            continue;
        };
        for t in tasks.flatten() {
            let dir = t.path();
            let stat = std::fs::read_to_string(dir.join("stat")).unwrap_or_default();
            // pid (comm) state ...: the comm may hold spaces, the state follows ')'.
            let (name, state) = match (stat.find('('), stat.rfind(')')) {
                (Some(a), Some(b)) => (
                    &stat[a + 1..b],
                    stat[b + 1..].split_whitespace().next().unwrap_or("?"),
                ),
                _ => ("?", "?"),
            };
            let wchan = std::fs::read_to_string(dir.join("wchan")).unwrap_or_default();
            out.push_str(&format!(
                "process {p} thread {}: {name} {state} {wchan}\n",
                t.file_name().to_string_lossy()
            ));
        }
    }
    out
}

/// The children of process `pid`, whichever of its threads started them.
pub fn child_processes(pid: i32) -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|list| {
            list.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<i32>>()
        })
        .collect()
}

/// Every process below `pid`: its children, theirs, and so on.
pub fn descendants(pid: i32) -> Vec<i32> {
    let mut all = child_processes(pid);
    let mut i = 0;
    while i < all.len() {
        let below = child_processes(all[i]);
        all.extend(below);
        i += 1;
    }
    all
}

/// The iteration after which rank 0 of heat (`../shared/bench/heat.c`)
/// says a restarted run resumed.
pub fn restarted_after(out: &str) -> Option<u64> {
    out.lines()
        .find_map(|l| l.strip_prefix("restarted after iteration "))
        .map(|n| n.trim().parse().unwrap())
}

/// The epoch `DIR/latest` names, if any.
pub fn latest_epoch(dir: &Path) -> Option<u64> {
    std::fs::read_to_string(dir.join("latest"))
        .ok()?
        .trim()
        .strip_prefix("epoch-")?
        .parse()
        .ok()
}

/// Runs `mpcrs-run ARGS` and returns its output; panics if it runs longer than
/// `limit` (the process is killed first).
pub fn run_job(args: &[&str], limit: Duration) -> Output {
    run_command(
        Command::new(mpcrs_run()).args(with_local_beside(args)),
        limit,
    )
}

/// `args` with, after `--checkpoint DIR` and unless they name one, the
/// node-local storage at `DIR/node-local`: removed with the test's checkpoint
/// directory (the default is under TMPDIR, and outlives the test).
pub fn with_local_beside(args: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    if args.contains(&"--checkpoint-local") {
        return out;
    }
    if let Some(i) = args.iter().position(|&a| a == "--checkpoint") {
        if let Some(dir) = args.get(i + 1) {
            out.insert(i + 2, "--checkpoint-local".into());
            out.insert(i + 3, format!("{}/node-local", dir.trim_end_matches('/')));
        }
    }
    out
}

/// Runs `mpcrs-run ARGS` with `input` on its standard input; returns its
/// stdout once it succeeded (panics otherwise, or past two minutes).
pub fn run_with_input(args: &[&str], input: &[u8]) -> String {
    let o = BackgroundJob::spawn_fed(Command::new(mpcrs_run()).args(args), Some(input.to_vec()))
        .finish(Duration::from_secs(120));
    expect_success(&o, &format!("{args:?}"))
}

/// Runs a command with a time limit and collects its output.
pub fn run_command(cmd: &mut Command, limit: Duration) -> Output {
    BackgroundJob::spawn(cmd).finish(limit)
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
    pub kvs: mpcrs_pmi::Client<mpcrs_pmi::PmiStream>,
    /// The job's secret, which every tcp link of the job proves it knows.
    pub secret: mpcrs_auth::JobSecret,
    pub me: u32,
    pub count: u32,
    pub host: std::net::IpAddr,
    pub net: mpcrs_signaling::Signaling,
}

pub fn join_job(topology: mpcrs_signaling::StaticTopology, wait: Duration) -> JobProcess {
    let mut kvs = mpcrs_pmi::Client::from_env()
        .expect("started without PMI_FD or PMI_PORT (run it with mpcrs-run -p)")
        .unwrap();
    let (me, count) = (kvs.rank as u32, kvs.size as u32);
    let host = kvs
        .reachable_address()
        .unwrap_or_else(|| "127.0.0.1".parse().unwrap());
    let secret = mpcrs_signaling::job_secret(&|k| std::env::var(k).ok(), me, &mut kvs).unwrap();
    let net =
        mpcrs_signaling::Signaling::bootstrap(me, count, host, topology, &mut kvs, &secret, wait)
            .unwrap();
    JobProcess {
        kvs,
        secret,
        me,
        count,
        host,
        net,
    }
}

/// A C test program of tests/c.
pub fn c_source(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("c")
        .join(name)
}

/// The lines the C suite `tests/c/NAME.c` prints (rank 0) when every check passed.
pub fn c_suite_lines(name: &str) -> &'static [&'static str] {
    match name {
        "mpi41_surface" => &[
            "small counts ok",
            "beyond int ok",
            "handles as ints ok",
            "status fields ok",
            "request status ok",
            "value index and error removal ok",
            "session error handlers ok",
            "communicator buffers ok",
            "persistent neighbourhood collectives ok",
            "unsupported calls ok",
        ],
        "basics" => &[
            "sendrecv ok",
            "nonblocking ok",
            "probe ok",
            "collectives ok",
            "communicators ok",
            "errors ok",
        ],
        "datatypes" => &[
            "vector ok",
            "struct ok",
            "indexed subarray ok",
            "pack ok",
            "vcollectives ok",
            "reduce_scatter ok",
        ],
        "p2p_more" => &[
            "rsend bsend ok",
            "persistent ok",
            "mprobe ok",
            "cancel ok",
            "cancel send ok",
            "test wait ok",
            "replace ok",
        ],
        "comms" => &[
            "groups ok",
            "communicators ok",
            "attributes ok",
            "cartesian ok",
        ],
        "nbc" => &["ibarrier ok", "ireduce ok", "inonblocking ok"],
        "rma" => &[
            "fence ok",
            "accumulate ok",
            "datatypes ok",
            "pscw ok",
            "locks ok",
            "requests dynamic ok",
            "attributes shared ok",
            "errors ok",
        ],
        "io" => &[
            "explicit offsets ok",
            "views ok",
            "collective ok",
            "shared pointers ok",
            "atomicity ok",
            "errors ok",
            "external32 ok",
            "self files ok",
        ],
        "nbc_order" => &[
            "order ok",
            "freed handles ok",
            "user op layout ok",
            "intercomm v ok",
            "threads ok",
        ],
        "mpi4_coll" => &["persistent ok", "isendrecv ok", "idup_with_info ok"],
        "misc" => &["misc ok"],
        "request_edges" => &["inactive request status ok", "freed synchronous send ok"],
        "types_ops" => &[
            "reductions ok",
            "pairs ok",
            "names ok",
            "alignment ok",
            "external32 ok",
            "handles ok",
            "large count ok",
        ],
        "coll_edges" => &[
            "alltoallv alltoallw zero and in place ok",
            "user op on long vectors ok",
        ],
        "intercomm" => &[
            "intercomm p2p ok",
            "intercomm collectives ok",
            "intercomm dup split create ok",
            "intercomm merge ok",
        ],
        "surface" => &[
            "unsupported ok",
            "conversions ok",
            "datatypes ok",
            "nonblocking ok",
            "communicators ok",
        ],
        "handlers" => &[
            "persistent buffered and ready sends ok",
            "error handlers ok",
            "generalized requests ok",
        ],
        "topologies" => &[
            "periodic grid ok",
            "open grid ok",
            "ring graph ok",
            "dist graph ok",
            "shared split ok",
        ],
        _ => panic!("no C suite named {name}"),
    }
}

/// The `--net-stats` line of `process` about `what` (a rail's name, or
/// "signaling") in a job's stderr.
pub fn net_stats_line<'a>(err: &'a str, process: u32, what: &str) -> &'a str {
    let prefix = if what == "signaling" || what == "collectives" {
        format!("mpcrs: net-stats process {process}: {what}:")
    } else {
        format!("mpcrs: net-stats process {process}: rail {what}:")
    };
    err.lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no {prefix:?} line in:\n{err}"))
}

/// The numbers of a line, in order (a rail's line: process, endpoints static and
/// on demand, messages, bytes, smallest and largest frame).
pub fn numbers(line: &str) -> Vec<u64> {
    line.split(|c: char| !c.is_ascii_digit())
        .filter(|w| !w.is_empty())
        .map(|w| w.parse().unwrap())
        .collect()
}

/// A scratch directory `mpcrs-KIND-NAME-PID` under the temporary directory,
/// empty.
pub fn scratch_dir(kind: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mpcrs-{kind}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// tests/c/craas_matmul.c built with mpcrs-cc (seed 003's tiled multiply on
/// CRaaS).
pub fn craas_matmul() -> PathBuf {
    build_c(
        &c_source("craas_matmul.c"),
        "craas_matmul",
        None,
        &["-lcraas"],
    )
}

/// The `checksum X` a program printed.
pub fn printed_checksum(out: &str) -> String {
    out.lines()
        .find_map(|l| l.strip_prefix("checksum "))
        .unwrap_or_else(|| panic!("no checksum in {out}"))
        .to_string()
}
