//! The conformance matrix (issue 30, items 1 and 4): several reports of one suite side by
//! side — requirements as rows, implementations as columns — as one JSON document that the
//! HTML and Markdown pages render.
//!
//! Only reports of one suite (the same [`SuiteDigest`]) are compared: a requirement checked
//! by different vectors is not the same row, so mixed reports are refused with each digest
//! named ([`MatrixError::MixedSuites`]), never shown side by side. A cell is what its
//! report's own requirement matrix says; a requirement the report has no row for (a suite
//! it did not select) is `untested`, and an untested cell is never drawn as passed. A column
//! whose run was partial, incomplete or interrupted says so in its header.

pub mod html;
pub mod markdown;
mod model;

use std::path::{Component, Path, PathBuf};

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

pub use model::*;

/// Writes `matrix.json`, `matrix.md` and `matrix.html` into `dir` (created); the paths.
pub fn write(m: &Matrix, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let json = serde_json::to_string_pretty(m).map_err(std::io::Error::other)?;
    let files = [
        ("matrix.json", json + "\n"),
        ("matrix.md", markdown::render(m)),
        ("matrix.html", html::render(m)),
    ];
    let mut out = Vec::new();
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::write(&path, text)?;
        out.push(path);
    }
    Ok(out)
}

/// `target` relative to the folder `from` (both made absolute against the current
/// directory; `None` when no relative path joins them, e.g. another drive).
pub fn relative(target: &Path, from: &Path) -> Option<String> {
    let abs = |p: &Path| -> Option<PathBuf> {
        let p = std::path::absolute(p).ok()?;
        // Normalised by components (no file system access: `from` may not exist yet).
        let mut out = PathBuf::new();
        for c in p.components() {
            match c {
                Component::ParentDir => {
                    out.pop();
                }
                Component::CurDir => {}
                c => out.push(c),
            }
        }
        Some(out)
    };
    let (t, f) = (abs(target)?, abs(from)?);
    let common = (t.components().zip(f.components()))
        .take_while(|(a, b)| a == b)
        .count();
    if common == 0 {
        return None;
    }
    let up = f.components().count() - common;
    let mut parts: Vec<String> = if up == 0 {
        // `./`: a first segment with a `:` would read as a URL scheme.
        vec![".".into()]
    } else {
        vec!["..".into(); up]
    };
    parts.extend(
        (t.components().skip(common)).map(|c| url_segment(&c.as_os_str().to_string_lossy())),
    );
    Some(parts.join("/"))
}

/// A path segment as a URL path segment: every byte outside RFC 3986's unreserved set
/// percent-encoded (a space, `#`, `?` or `%` in a folder name would break the link).
fn url_segment(s: &str) -> String {
    const RESERVED: &AsciiSet = &NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'.')
        .remove(b'_')
        .remove(b'~');
    utf8_percent_encode(s, RESERVED).to_string()
}

#[cfg(test)]
mod tests;
