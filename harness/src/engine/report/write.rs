//! Writing a report's files: one list of formats and their file names, used by every command
//! that writes reports (`run`, `merge`, `fuzz`), so they write the same set the same way.

use std::path::{Path, PathBuf};

use super::{Report, badge, html, json, junit, markdown, sarif};

/// A report format and the file it is written to.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// `report.json`, the machine-readable report every other format is rendered from.
    Json,
    /// `junit.xml` for CI test views.
    Junit,
    /// `report.md`.
    Md,
    /// `report.html`, one self-contained page.
    Html,
    /// SARIF 2.1.0 (`report.sarif`) for code-scanning UIs.
    Sarif,
    /// Status badge (`badge.svg`).
    Badge,
}

impl Format {
    /// Every format: what a command writes by default.
    pub const ALL: [Format; 6] = [
        Format::Json,
        Format::Junit,
        Format::Md,
        Format::Html,
        Format::Sarif,
        Format::Badge,
    ];

    /// The file name it is written to.
    pub fn file_name(self) -> &'static str {
        match self {
            Format::Json => "report.json",
            Format::Junit => "junit.xml",
            Format::Md => "report.md",
            Format::Html => "report.html",
            Format::Sarif => "report.sarif",
            Format::Badge => "badge.svg",
        }
    }
}

/// Why the reports could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The folder or a file could not be written.
    #[error("writing {path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The JSON report could not be serialised.
    #[error("rendering report.json: {0}")]
    Json(#[from] serde_json::Error),
}

/// Writes `report` in each of `formats` into `out` (created if needed); SARIF rules link to
/// `report_url` when given. Returns the files written.
pub fn write_all(
    report: &Report,
    out: &Path,
    formats: &[Format],
    report_url: Option<&url::Url>,
) -> Result<Vec<PathBuf>, WriteError> {
    std::fs::create_dir_all(out).map_err(|source| WriteError::Io {
        path: out.to_path_buf(),
        source,
    })?;
    let mut written = Vec::new();
    for f in formats {
        let text = match f {
            Format::Json => json::render(report)?,
            Format::Junit => junit::render(report),
            Format::Md => markdown::render(report),
            Format::Html => html::render(report),
            Format::Sarif => sarif::render(report, report_url),
            Format::Badge => badge::render(report),
        };
        let path = out.join(f.file_name());
        std::fs::write(&path, text).map_err(|source| WriteError::Io {
            path: path.clone(),
            source,
        })?;
        written.push(path);
    }
    Ok(written)
}
