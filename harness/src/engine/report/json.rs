//! JSON renderer: the [`Report`] itself, pretty-printed (the machine-readable source of truth),
//! and reading one back (`conform diff`, `conform merge`).

use std::path::Path;

use super::renderer::{Links, RenderError, Renderer};
use super::{REPORT_FORMAT_VERSION, Report};

/// Renders the report as pretty JSON.
pub fn render(report: &Report) -> Result<String, serde_json::Error> {
    serde_json::to_string_pretty(report).map(|mut s| {
        s.push('\n');
        s
    })
}

/// Why a `report.json` could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// File unreadable.
    #[error("{path}: {source}")]
    Io {
        /// File.
        path: String,
        /// OS error.
        source: std::io::Error,
    },
    /// Not a report of this format (invalid JSON, missing or unknown fields).
    #[error("{path}: not a conform report.json: {source}")]
    Parse {
        /// File.
        path: String,
        /// Parser error (with line and column).
        source: serde_json::Error,
    },
    /// A report format this version does not read.
    #[error(
        "{path}: report format_version {found} is not supported (this conform reads {REPORT_FORMAT_VERSION})"
    )]
    Version {
        /// File.
        path: String,
        /// Its version.
        found: u32,
    },
}

/// Reads a `report.json` written by `conform run` (or `conform merge`).
pub fn read(path: &Path) -> Result<Report, ReadError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ReadError::Io {
        path: shown.clone(),
        source,
    })?;
    // The version first, so that a newer format is named as such, not as an unknown field.
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text)
        && let Some(found) = v.get("format_version").and_then(serde_json::Value::as_u64)
        && found != u64::from(REPORT_FORMAT_VERSION)
    {
        return Err(ReadError::Version {
            path: shown,
            found: u32::try_from(found).unwrap_or(u32::MAX),
        });
    }
    serde_json::from_str(&text).map_err(|source| ReadError::Parse {
        path: shown,
        source,
    })
}

/// The json format ([`Renderer`]).
#[derive(Debug, Clone, Copy)]
pub struct Json;

impl Renderer for Json {
    fn name(&self) -> &'static str {
        "json"
    }

    fn about(&self) -> &'static str {
        "`report.json`, the machine-readable report every other format is rendered from"
    }

    fn file_name(&self) -> &'static str {
        "report.json"
    }

    fn render(&self, report: &Report, _links: Links<'_>) -> Result<String, RenderError> {
        render(report).map_err(|e| RenderError {
            file: self.file_name(),
            message: e.to_string(),
        })
    }
}
