//! The terminal side of the `conform` binary (declared by `main.rs`, not part of the library):
//! standard output that ends quietly when its reader goes away, colour, what `conform run`
//! shows while its checks run, and the log file of a reference server spawned in process.
//! The one module that touches standard output and error: the library writes through the
//! [`Launcher`] this module implements ([`Terminal`]), and `harness/clippy.toml` refuses
//! `std::io::stdout`/`stderr` everywhere else (`lib.rs` refuses `print!` and `eprint!`).
#![expect(
    clippy::disallowed_methods,
    reason = "the command layer owns the terminal"
)]

use std::fs::File;
use std::io::{self, IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use conform::capability::command::Launcher;
use conform::engine::protocol::Protocol;
use conform::engine::run::ProgressFn;
use conform::engine::target::{ConnectOptions, Profile, Target, TargetError};
use futures::FutureExt as _;
use futures::future::BoxFuture;
use tracing_subscriber::Layer as _;
use tracing_subscriber::filter::{EnvFilter, filter_fn};
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// Set once standard output's reader has gone away.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes `text` to standard output. A reader that went away (`conform … | head -1`) ends
/// the output quietly instead of the panic `print!` gives (issue 26, exit 101 then): this and
/// every later write succeed writing nothing, so the command finishes its work (reports are
/// written before anything is printed) and exits with its own code. Other write errors are
/// returned to the command, which reports them.
pub(crate) fn out(text: &str) -> io::Result<()> {
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return Ok(());
    }
    let mut stdout = io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
            STDOUT_CLOSED.store(true, Ordering::Relaxed);
            Ok(())
        }
        r => r,
    }
}

/// The [`Launcher`] every command the library runs gets: targets through
/// [`conform::launcher`], output on this terminal.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Terminal;

impl Launcher for Terminal {
    fn out(&self, text: &str) -> io::Result<()> {
        out(text)
    }

    fn note(&self, line: &str) {
        note(line);
    }

    fn load_profile(&self, path: &Path) -> Result<Profile, TargetError> {
        conform::launcher::load_profile(path)
    }

    fn spawn_reference<'a>(
        &'a self,
        opts: &'a ConnectOptions,
        protocols: &'a [Arc<dyn Protocol>],
        faults: &'a [String],
    ) -> BoxFuture<'a, Result<Target, TargetError>> {
        conform::launcher::spawn_reference(opts, protocols, faults).boxed()
    }
}

/// Writes one line to standard error. A closed or failing stderr loses it: there is nowhere
/// left to say so, and it must not end the command (nor panic as `eprintln!` does).
pub(crate) fn note(line: &str) {
    let _ = writeln!(io::stderr().lock(), "{line}");
}

/// `--color`: when the summary's verdict line is coloured.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ColorChoice {
    /// On a terminal, unless `NO_COLOR` is set (and not empty).
    #[default]
    Auto,
    /// Always (even with `NO_COLOR` or off a terminal).
    Always,
    /// Never.
    Never,
}

impl ColorChoice {
    /// Whether a stream gets colour: `always` and `never` as said; `auto` only on a terminal
    /// and when `NO_COLOR` does not ask for none (<https://no-color.org>).
    pub(crate) fn enabled(self, terminal: bool, no_color: bool) -> bool {
        match self {
            Self::Always => true,
            Self::Never => false,
            Self::Auto => terminal && !no_color,
        }
    }

    /// [`ColorChoice::enabled`] for standard output and this process's `NO_COLOR`.
    pub(crate) fn for_stdout(self) -> bool {
        self.enabled(io::stdout().is_terminal(), no_color_env())
    }
}

/// Whether standard error is a terminal (a progress bar, colour).
pub(crate) fn stderr_is_terminal() -> bool {
    io::stderr().is_terminal()
}

/// Whether `NO_COLOR` is set to something other than the empty string.
fn no_color_env() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// The summary with its verdict line — its last line, `PASS…` green, `FAIL…` red, `ERROR…`
/// yellow — in colour; every other line as it was.
pub(crate) fn paint_verdict(summary: &str) -> String {
    let body = summary.trim_end_matches('\n');
    let (head, last) = match body.rfind('\n') {
        Some(i) => body.split_at(i + 1),
        None => ("", body),
    };
    let word = last.split([':', ' ']).next().unwrap_or_default();
    let colour = match word {
        "PASS" => "32",
        "FAIL" => "31",
        "ERROR" => "33",
        _ => return summary.to_string(),
    };
    let tail = &summary[body.len()..];
    format!("{head}\x1b[1;{colour}m{last}\x1b[0m{tail}")
}

/// What `conform run` shows while its checks run.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Feedback {
    /// Nothing (`--quiet`, or off a terminal without `--verbose`).
    Silent,
    /// A progress bar on stderr, cleared at the end (a terminal).
    Bar,
    /// One `[n/total] verdict id` line per result on stderr (`--verbose`).
    Lines,
}

impl Feedback {
    /// `--quiet` wins, then `--verbose`; otherwise a bar on a terminal and nothing elsewhere.
    pub(crate) fn choose(quiet: bool, verbose: bool, terminal: bool) -> Self {
        if quiet {
            Self::Silent
        } else if verbose {
            Self::Lines
        } else if terminal {
            Self::Bar
        } else {
            Self::Silent
        }
    }

    /// The progress callback of a run, and the bar to clear when it ends.
    pub(crate) fn reporter(self) -> (Option<ProgressFn>, Option<indicatif::ProgressBar>) {
        match self {
            Self::Silent => (None, None),
            Self::Lines => {
                let f: ProgressFn = Arc::new(|r, done, total| {
                    note(&format!("[{done}/{total}] {} {}", r.verdict.name(), r.id));
                });
                (Some(f), None)
            }
            Self::Bar => {
                let bar = indicatif::ProgressBar::new(0);
                if let Ok(style) = indicatif::ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} results {msg}",
                ) {
                    bar.set_style(style);
                }
                let b = bar.clone();
                let f: ProgressFn = Arc::new(move |r, done, total| {
                    b.set_length(total as u64);
                    b.set_position(done as u64);
                    if !r.verdict.is_pass() {
                        b.set_message(format!("last problem: {} {}", r.verdict.name(), r.id));
                    }
                });
                (Some(f), Some(bar))
            }
        }
    }
}

/// Crates of the reference server spawned in process (`--spawn-reference`): their events (a
/// refused DNS-rebinding probe, rmcp's "response error" on a malformed request — provoked by
/// the checks on purpose) go to the reference log, not to the user's stderr.
const REFERENCE_TARGETS: &[&str] = &["reference_impl", "rmcp", "axum", "tower_http"];

/// Whether an event's target is one of [`REFERENCE_TARGETS`] or a module of one.
fn is_reference(target: &str) -> bool {
    REFERENCE_TARGETS.iter().any(|c| {
        target
            .strip_prefix(c)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
    })
}

/// Where the spawned reference's events go once `conform run` named a file.
struct ReferenceLog {
    path: OnceLock<PathBuf>,
    file: Mutex<Option<File>>,
    written: AtomicBool,
}

static REFERENCE_LOG: ReferenceLog = ReferenceLog {
    path: OnceLock::new(),
    file: Mutex::new(None),
    written: AtomicBool::new(false),
};

/// Sends the spawned reference's log to `path` from now on. The file is created at its first
/// line, so a run the reference logs nothing in leaves none behind.
pub(crate) fn log_reference_to(path: PathBuf) {
    let _ = REFERENCE_LOG.path.set(path);
}

/// The reference log, when something was written to it.
pub(crate) fn reference_log() -> Option<&'static Path> {
    let written = REFERENCE_LOG.written.load(Ordering::Relaxed);
    REFERENCE_LOG
        .path
        .get()
        .filter(|_| written)
        .map(PathBuf::as_path)
}

/// The writer of the reference's events: the reference log once named, else stderr (the
/// other commands that spawn a reference: `fuzz`, `model`, `faults`, …).
#[derive(Clone, Copy, Debug)]
struct ReferenceSink;

impl<'a> MakeWriter<'a> for ReferenceSink {
    type Writer = Self;

    fn make_writer(&'a self) -> Self::Writer {
        *self
    }
}

impl io::Write for ReferenceSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let Some(path) = REFERENCE_LOG.path.get() else {
            return io::stderr().write(buf);
        };
        let mut file = REFERENCE_LOG
            .file
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let f = match &mut *file {
            Some(f) => f,
            None => match File::create(path) {
                Ok(f) => file.insert(f),
                // The output folder was proven writable before the run; if it no longer is,
                // the line is not lost.
                Err(_) => return io::stderr().write(buf),
            },
        };
        let n = f.write(buf)?;
        REFERENCE_LOG.written.store(true, Ordering::Relaxed);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        let mut file = REFERENCE_LOG
            .file
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match &mut *file {
            Some(f) => f.flush(),
            None => io::stderr().flush(),
        }
    }
}

/// The tracing subscriber: `RUST_LOG` (default `warn`); conform's own events on stderr (in
/// colour on a terminal without `NO_COLOR`), the spawned reference's through
/// [`ReferenceSink`] (never in colour).
pub(crate) fn init_tracing() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn"));
    let ansi = ColorChoice::Auto.enabled(io::stderr().is_terminal(), no_color_env());
    let own = tracing_subscriber::fmt::layer()
        .with_writer(io::stderr)
        .with_ansi(ansi)
        .with_filter(filter_fn(|m| !is_reference(m.target())));
    let reference = tracing_subscriber::fmt::layer()
        .with_writer(ReferenceSink)
        .with_ansi(false)
        .with_filter(filter_fn(|m| is_reference(m.target())));
    let _ = tracing_subscriber::registry()
        .with(filter)
        .with(own)
        .with(reference)
        .try_init();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_only_where_asked() {
        assert!(ColorChoice::Auto.enabled(true, false));
        assert!(!ColorChoice::Auto.enabled(true, true), "NO_COLOR");
        assert!(!ColorChoice::Auto.enabled(false, false), "off a terminal");
        assert!(ColorChoice::Always.enabled(false, true));
        assert!(!ColorChoice::Never.enabled(true, false));
    }

    #[test]
    fn only_the_verdict_line_is_painted() {
        let s = "conform 0.1.0\nFAIL x\n  fail 1\nFAIL: a required check failed (exit 1)\n";
        assert_eq!(
            paint_verdict(s),
            "conform 0.1.0\nFAIL x\n  fail 1\n\x1b[1;31mFAIL: a required check failed (exit 1)\x1b[0m\n"
        );
        assert_eq!(paint_verdict("PASS: ok"), "\x1b[1;32mPASS: ok\x1b[0m");
        assert!(paint_verdict("a\nPASS (partial run): ok\n").starts_with("a\n\x1b[1;32mPASS ("));
        assert!(paint_verdict("ERROR: x\n").starts_with("\x1b[1;33m"));
        assert_eq!(paint_verdict("no verdict\n"), "no verdict\n");
    }

    #[test]
    fn reference_targets_by_crate() {
        assert!(is_reference("reference_impl::server::rebinding"));
        assert!(is_reference("rmcp"));
        assert!(is_reference("rmcp::service"));
        assert!(!is_reference("rmcpx"));
        assert!(!is_reference("conform::engine::run"));
    }

    #[test]
    fn feedback_by_flags() {
        assert_eq!(Feedback::choose(true, false, true), Feedback::Silent);
        assert_eq!(Feedback::choose(false, true, false), Feedback::Lines);
        assert_eq!(Feedback::choose(false, false, true), Feedback::Bar);
        assert_eq!(Feedback::choose(false, false, false), Feedback::Silent);
    }
}
