//! Reference servers spawned with a given configuration (faults, variants) and the suites
//! run against them: the plumbing `conform faults` and `conform variants` share, and what
//! they read from the reports (failures, warnings, harness errors).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::capability::command::Launcher;
use crate::engine::protocol::{Suite, SuiteError};
use crate::engine::report::Report;
use crate::engine::report::power::FailedCheck;
use crate::engine::run::{RunError, RunOptions, run};
use crate::engine::target::ConnectOptions;
use crate::engine::verdict::Verdict;

/// Why a measurement could not be made at all.
#[derive(Debug, thiserror::Error)]
pub enum PowerError {
    /// A suite could not be loaded.
    #[error(transparent)]
    Suite(#[from] SuiteError),
    /// An unknown fault name was asked for.
    #[error("unknown fault {0:?} (`conform faults --list` shows the catalogue)")]
    UnknownFault(String),
    /// An unknown variant name was asked for.
    #[error("unknown variant {0:?} (`conform variants --list` shows the catalogue)")]
    UnknownVariant(String),
    /// Writing the output failed.
    #[error("writing {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// OS error.
        source: std::io::Error,
    },
    /// The async runtime could not start.
    #[error("starting the async runtime: {0}")]
    Runtime(std::io::Error),
    /// The runs' matrix could not be made.
    #[error(transparent)]
    Matrix(#[from] crate::engine::report::matrix::MatrixError),
}

/// Loads every registered protocol's suite.
pub fn load_suites(vectors_dir: &Path) -> Result<Vec<Suite>, PowerError> {
    Ok(crate::registry::load(
        &crate::registry::protocols(),
        vectors_dir,
    )?)
}

/// Spawns a reference server with `config` (named `name` in the report, started by
/// `serve --demo` plus `flags` in its reproduction line) and runs `suites` against it with
/// `run` (its jobs, counterexamples, progress and stop; the reproduction command is set here).
pub(crate) async fn run_configured(
    config: reference_impl::Config,
    (name, flags): (String, &str),
    suites: &[Suite],
    run_opts: RunOptions,
) -> Result<Report, String> {
    let protocols: Vec<_> = suites.iter().map(|s| s.protocol.clone()).collect();
    let opts = ConnectOptions {
        transports: RunOptions::default().transports,
        ..ConnectOptions::default()
    };
    let mut target = crate::reference::spawn_with(config, &opts, &protocols)
        .await
        .map_err(|e| e.to_string())?;
    target.info.name = name;
    let opts = RunOptions {
        command: format!(
            "reference-server serve --demo --listen 127.0.0.1:0{flags} & conform run --target <profile>"
        ),
        ..run_opts
    };
    // The server stops when the last reference to the target is dropped.
    run(Arc::new(target), suites, &opts)
        .await
        .map_err(|e| match e {
            RunError::Empty(_) => "no check cites the fault's requirement IDs".to_string(),
            other => other.to_string(),
        })
}

/// The checks that failed (MUST), with the IDs of the rule each broke.
pub fn failed(report: &Report) -> Vec<FailedCheck> {
    with_verdict(report, false)
}

/// The checks that failed (`warnings`: drew a warning instead), with the IDs of the rule.
pub fn with_verdict(report: &Report, warnings: bool) -> Vec<FailedCheck> {
    report
        .checks
        .iter()
        .filter_map(|c| match &c.verdict {
            // The IDs of the broken rule: a vector's violation cites the vector's IDs; a
            // model's cites only the postcondition that broke, not every rule it exercises.
            Verdict::Fail(v) if !warnings => Some(FailedCheck {
                id: c.id.clone(),
                requirements: v.requirements.clone(),
                message: v.message.clone(),
            }),
            Verdict::Warn(v) if warnings => Some(FailedCheck {
                id: c.id.clone(),
                requirements: v.requirements.clone(),
                message: v.message.clone(),
            }),
            _ => None,
        })
        .collect()
}

/// The checks that ended in a harness error, as `id: message`.
pub fn harness_errors(report: &Report) -> Vec<String> {
    report
        .checks
        .iter()
        .filter_map(|c| match &c.verdict {
            Verdict::HarnessError { message } => Some(format!("{}: {message}", c.id)),
            _ => None,
        })
        .collect()
}

/// Creates `dir` and writes each `(file name, text)` into it.
pub fn write_files(dir: &Path, files: &[(&str, String)]) -> Result<(), PowerError> {
    std::fs::create_dir_all(dir).map_err(|source| PowerError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|source| PowerError::Io { path, source })?;
    }
    Ok(())
}

/// One column of the matrix of `conform faults` or `conform variants`: its name, its run's
/// report, and where that report's page already is (`None`: written under `runs/<name>/`).
pub type Column = (String, Report, Option<PathBuf>);

/// Writes the matrix of the runs (issue 30 item 2: faults or variants as columns) into
/// `out/matrix.{html,md,json}`, and each run's `report.json` and `report.html` not yet
/// written into `out/runs/<name>/`, so every cell links the failing checks it names.
pub fn write_matrix(out: &Path, columns: Vec<Column>) -> Result<PathBuf, PowerError> {
    use crate::engine::report::{html, json, matrix};
    let io = |path: PathBuf| move |source| PowerError::Io { path, source };
    let mut inputs = Vec::with_capacity(columns.len());
    for (name, report, page) in columns {
        let page = match page {
            Some(p) => p,
            None => {
                let dir = out.join("runs").join(folder(&name));
                let text = json::render(&report)
                    .map_err(|e| io(dir.join("report.json"))(std::io::Error::other(e)))?;
                write_files(
                    &dir,
                    &[
                        ("report.json", text),
                        ("report.html", html::render(&report)),
                    ],
                )?;
                dir.join("report.html")
            }
        };
        inputs.push(matrix::Input {
            name: Some(name),
            html: matrix::relative(&page, out),
            report,
        });
    }
    let m = matrix::build(&inputs)?;
    matrix::write(&m, out).map_err(io(out.join("matrix.*")))?;
    Ok(out.join("matrix.html"))
}

/// [`write_matrix`], its outcome a note to the user: the measurement's own files are
/// written and its verdict stands whether or not the matrix could be.
pub fn write_matrix_or_warn(out: &Path, columns: Vec<Column>, of: &str, launcher: &dyn Launcher) {
    if columns.is_empty() {
        return;
    }
    match write_matrix(out, columns) {
        Ok(page) => launcher.note(&format!("matrix of the {of}: {}", page.display())),
        Err(e) => launcher.note(&format!(
            "warning: the matrix of the {of} was not written: {e}"
        )),
    }
}

/// A run's folder under `runs/`: its name with every character but `[A-Za-z0-9._-]` as `-`
/// (no separator, no space, never `..` alone).
fn folder(name: &str) -> String {
    let f: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    if f.chars().all(|c| c == '.') {
        format!("run{f}")
    } else {
        f
    }
}

/// Writes a command's Markdown as its output: a reader that went away ends it quietly,
/// another write error is the command's error.
pub fn print(text: &str, launcher: &dyn Launcher) -> Result<(), PowerError> {
    launcher.out(text).map_err(|source| PowerError::Io {
        path: "standard output".into(),
        source,
    })
}
