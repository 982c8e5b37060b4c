//! mpcrs-ckptd: the checkpoint service of a job (seed 003's memory node).
//! It holds the ranks' CRaaS checkpoints in memory, updated in place by the
//! changed blocks of each commit, and flushes them to `DIR/craas/` as the
//! flush policy says, from a thread of its own.
//!
//! Started by `mpcrs-run --ckpt-service HOST`: the first line of its
//! standard input is the secret the job's processes prove (never on a
//! command line); it then
//! prints `mpcrs-ckptd: listening on PORT` on its standard output. When its
//! standard input ends (the launcher is done, or gone), it flushes every
//! checkpoint with unflushed commits and exits.

use std::io::{BufRead, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use mpcrs_auth::JobSecret;
use mpcrs_craas::service::{self, Store};
use mpcrs_craas::FlushPolicy;

#[derive(Parser)]
#[command(
    name = "mpcrs-ckptd",
    about = "The checkpoint service of an mpcrs job (started by mpcrs-run --ckpt-service)"
)]
struct Args {
    /// Where flushes go: the job's checkpoint directory (files in DIR/craas/).
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// When to flush: K commits, Ts seconds, K,Ts, or never.
    #[arg(long, value_name = "POLICY", default_value = "10,30s", value_parser = FlushPolicy::parse)]
    flush: FlushPolicy,
    /// At the end, print what it received (commits, bytes of changed blocks
    /// against bytes committed) and served on standard error.
    #[arg(long)]
    stats: bool,
    /// The address to listen on.
    #[arg(long, value_name = "IP", default_value = "0.0.0.0")]
    listen: std::net::IpAddr,
    /// The port to listen on (0: any free port).
    #[arg(long, value_name = "PORT", default_value_t = 0)]
    port: u16,
    /// Run on its own: the secret is FILE's (made, 0600, when missing; a
    /// file others may read is refused), and the service runs until SIGTERM
    /// or SIGINT.
    #[arg(long, value_name = "FILE")]
    secret_file: Option<PathBuf>,
}

/// Blocks SIGTERM and SIGINT in every thread (call before any starts);
/// [`wait_for_signal`] then takes them.
fn block_end_signals() -> libc::sigset_t {
    // SAFETY: a zeroed sigset_t is filled by sigemptyset before use.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid sigset_t; pthread_sigmask changes only this
    // thread's mask, which threads started later inherit.
    unsafe {
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
    set
}

fn wait_for_signal(set: &libc::sigset_t) {
    let mut sig = 0;
    // SAFETY: `set` holds the blocked signals; sigwait writes `sig`.
    unsafe { libc::sigwait(set, &mut sig) };
}

fn report(line: &str) {
    mpcrs_settings::diagnostics::write_line(&format!("mpcrs-ckptd: {line}"));
}

fn main() -> ExitCode {
    let args = Args::parse();
    let signals = args.secret_file.is_some().then(block_end_signals);
    let mut input = std::io::stdin().lock();
    let secret = match &args.secret_file {
        Some(f) => mpcrs_launch::service::secret_from_file(f, true),
        None => {
            let mut first = String::new();
            input
                .read_line(&mut first)
                .map_err(|e| e.to_string())
                .and_then(|_| JobSecret::from_hex(first.trim()))
                .map_err(|e| {
                    format!("the first line of standard input is not the services' secret ({e})")
                })
        }
    };
    let secret = match secret {
        Ok(s) => s,
        Err(e) => {
            report(&e);
            return ExitCode::from(2);
        }
    };
    let listener = match TcpListener::bind((args.listen, args.port)) {
        Ok(l) => l,
        Err(e) => {
            report(&format!(
                "cannot listen on {}:{}: {e}",
                args.listen, args.port
            ));
            return ExitCode::from(1);
        }
    };
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    let store = Arc::new(Store::new(args.dir.clone(), args.flush));
    {
        let store = store.clone();
        std::thread::spawn(move || service::serve(listener, secret, store, |l| report(&l)));
    }
    {
        let store = store.clone();
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(50));
            for e in store.flush(false).errors {
                report(&format!("flush failed: {e}"));
            }
        });
    }
    println!("mpcrs-ckptd: listening on {port}");
    let _ = std::io::stdout().flush();
    match &signals {
        // On its own: until SIGTERM or SIGINT.
        Some(set) => wait_for_signal(set),
        // Until the launcher closes our standard input.
        None => {
            let mut rest = Vec::new();
            let _ = std::io::copy(&mut input, &mut rest);
        }
    }
    let flushed = store.flush(true);
    for e in &flushed.errors {
        report(&format!("flush failed: {e}"));
    }
    if args.stats {
        report(&format!(
            "{}; the last flush wrote {} files ({} bytes)",
            store.stats(),
            flushed.files,
            flushed.bytes
        ));
    }
    if flushed.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
