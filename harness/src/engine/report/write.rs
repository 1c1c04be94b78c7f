//! Writing a report's files: the one list of formats ([`FORMATS`], each a [`Renderer`]), used by every command
//! that writes reports (`run`, `merge`, `fuzz`), so they write the same set the same way.

use std::path::{Path, PathBuf};

use super::renderer::{Links, RenderError, Renderer};
use super::{Report, badge, html, json, junit, markdown, sarif};

/// Every report format, in the order a command writes them by default: the one
/// registration of a format.
pub static FORMATS: [Format; 6] = [
    Format(&json::Json),
    Format(&junit::Junit),
    Format(&markdown::Markdown),
    Format(&html::Html),
    Format(&sarif::Sarif),
    Format(&badge::Badge),
];

/// A report format (a value of `--format`): one of [`FORMATS`].
#[derive(Clone, Copy)]
pub struct Format(pub &'static dyn Renderer);

impl Format {
    /// Every format: what a command writes by default.
    pub const ALL: &'static [Self] = &FORMATS;

    /// The file name it is written to.
    pub fn file_name(self) -> &'static str {
        self.0.file_name()
    }
}

impl std::fmt::Debug for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.name())
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.name())
    }
}

impl PartialEq for Format {
    fn eq(&self, other: &Self) -> bool {
        self.0.name() == other.0.name()
    }
}

impl Eq for Format {}

impl clap::ValueEnum for Format {
    fn value_variants<'a>() -> &'a [Self] {
        &FORMATS
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.0.name()).help(self.0.about()))
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
    /// A format could not be rendered.
    #[error(transparent)]
    Render(#[from] RenderError),
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
        let text = f.0.render(report, Links { report_url })?;
        let path = out.join(f.file_name());
        std::fs::write(&path, text).map_err(|source| WriteError::Io {
            path: path.clone(),
            source,
        })?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
#[expect(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use std::collections::BTreeSet;

    use clap::ValueEnum as _;

    use super::*;

    /// Each registered format answers to its own `--format` name, writes its own file, and
    /// renders a report.
    #[test]
    fn every_format_is_registered_once_and_renders() {
        let names: BTreeSet<&str> = FORMATS.iter().map(|f| f.0.name()).collect();
        let files: BTreeSet<&str> = FORMATS.iter().map(|f| f.file_name()).collect();
        assert_eq!(names.len(), FORMATS.len(), "{names:?}");
        assert_eq!(files.len(), FORMATS.len(), "{files:?}");
        let report = super::super::tests::empty_report();
        for f in &FORMATS {
            assert_eq!(Format::from_str(f.0.name(), false).unwrap(), *f);
            let text = f.0.render(&report, Links::default()).unwrap();
            assert!(!text.is_empty(), "{} rendered nothing", f.0.name());
        }
    }
}
