//! The one trait every report format implements: its name on the command line, the file it
//! is written to, and how it renders a [`Report`]. A new format is one file implementing it
//! plus one line in [`super::write::FORMATS`].

use super::Report;

/// What a renderer may need beside the report.
#[derive(Debug, Clone, Copy, Default)]
pub struct Links<'a> {
    /// The absolute URL `report.html` will be published at (`--report-url`): SARIF rules
    /// link their requirement row there.
    pub report_url: Option<&'a url::Url>,
}

/// Why a format could not be rendered.
#[derive(Debug, thiserror::Error)]
#[error("rendering {file}: {message}")]
pub struct RenderError {
    /// The file being rendered.
    pub file: &'static str,
    /// What failed.
    pub message: String,
}

/// A report format.
pub trait Renderer: Sync {
    /// Its value of `--format` (`json`, `html`).
    fn name(&self) -> &'static str;
    /// One line for `--help`.
    fn about(&self) -> &'static str;
    /// The file it is written to in the output folder.
    fn file_name(&self) -> &'static str;
    /// The file's text.
    fn render(&self, report: &Report, links: Links<'_>) -> Result<String, RenderError>;
}
