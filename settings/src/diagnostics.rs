//! Diagnostics: the `tracing` events of every mpcrs crate, written to stderr
//! when `MPCRS_LOG` names a filter (as `RUST_LOG`: `debug`, or
//! `mpcrs::checkpoint=debug,mpcrs_launch=info`), and to nowhere otherwise.
//! Each line names the level, the module, the process and, when a rank's
//! thread logs, the rank.
//!
//! Messages meant for the user (errors, the checkpoint progress line) go
//! through [`report!`](crate::report): printed to stderr with their exact
//! text whatever the filter, and recorded as an event too (field
//! `user = true`), so that with `MPCRS_LOG` on they are followed by the same
//! message with its level, module, process and rank.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Once, OnceLock};

use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::EnvFilter;

use crate::variables::{LOG, PROCESS};

#[doc(hidden)]
pub use tracing as __tracing;

/// Finds the MPI rank the calling thread acts for; set by the runtime.
static RANK_OF_CALLER: OnceLock<fn() -> Option<usize>> = OnceLock::new();

/// This process's index in its job (`MPCRS_PROCESS`), or `usize::MAX` for a
/// process outside a job (the launcher).
static PROCESS_INDEX: AtomicUsize = AtomicUsize::new(usize::MAX);

/// Lets diagnostics name the rank of the thread that logs.
pub fn set_rank_source(rank_of_caller: fn() -> Option<usize>) {
    let _ = RANK_OF_CALLER.set(rank_of_caller);
}

/// Turns diagnostics on as `MPCRS_LOG` says; `who` names the program in the
/// error about a filter that does not parse. Later calls do nothing.
pub fn init(who: &str) {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if let Some(p) = PROCESS.get().and_then(|p| p.trim().parse().ok()) {
            PROCESS_INDEX.store(p, Ordering::Relaxed);
        }
        let Some(filter) = LOG.get().filter(|f| !f.trim().is_empty()) else {
            return;
        };
        let filter = match EnvFilter::try_new(&filter) {
            Ok(f) => f,
            Err(e) => {
                eprintln!(
                    "{who}: {}={filter:?} is not a diagnostics filter ({e}); diagnostics stay off",
                    LOG.name
                );
                return;
            }
        };
        let subscriber = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .event_format(Line)
            .finish();
        let _ = tracing::subscriber::set_global_default(subscriber);
    });
}

/// One line per event: `mpcrs LEVEL module process=P rank=R: message fields`.
struct Line;

impl<S, N> FormatEvent<S, N> for Line
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut w: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let meta = event.metadata();
        write!(w, "mpcrs {} {}", meta.level(), meta.target())?;
        match PROCESS_INDEX.load(Ordering::Relaxed) {
            usize::MAX => {}
            p => write!(w, " process={p}")?,
        }
        if let Some(rank) = RANK_OF_CALLER.get().and_then(|f| f()) {
            write!(w, " rank={rank}")?;
        }
        w.write_str(": ")?;
        ctx.field_format().format_fields(w.by_ref(), event)?;
        writeln!(w)
    }
}

/// Prints a message meant for the user on stderr, exactly as given (one line,
/// one write), and records it as a diagnostics event of `level` (`error`,
/// `warn` or `info`) from the caller's module.
///
/// ```
/// mpcrs_settings::report!(warn, "mpcrs: checkpoint on {} skipped", "SIGUSR1");
/// ```
#[macro_export]
macro_rules! report {
    (error, $($arg:tt)+) => { $crate::report!(@ ERROR, $($arg)+) };
    (warn, $($arg:tt)+) => { $crate::report!(@ WARN, $($arg)+) };
    (info, $($arg:tt)+) => { $crate::report!(@ INFO, $($arg)+) };
    (@ $level:ident, $($arg:tt)+) => {{
        let text = ::std::format!($($arg)+);
        $crate::diagnostics::write_line(&text);
        $crate::diagnostics::__tracing::event!(
            $crate::diagnostics::__tracing::Level::$level,
            user = true,
            "{}",
            text
        );
    }};
}

/// Writes `text` and a newline to stderr in one call, so that lines of
/// concurrent threads and processes do not interleave.
pub fn write_line(text: &str) {
    use std::io::Write;
    let mut line = String::with_capacity(text.len() + 1);
    line.push_str(text);
    line.push('\n');
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}
