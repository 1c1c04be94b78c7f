//! `conform validate FILE-or-URL [--type descriptor|index|request|response|error] [--lenient] [--json]`
//!
//! A tool implementers use on its own: it prints every violation (JSON Pointer, message,
//! expected, actual — seed §8.3.1) and exits non-zero on an invalid document, so it slots
//! into a provider's CI. The lead wires [`ValidateArgs`] into `main.rs` as a subcommand and
//! calls [`run`], returning its exit code.

use crate::ssp::validator::{DocType, Mode, SspValidator, ValidationIssue, ValidationReport};
use crate::transport::limits::DEFAULT_RESPONSE_BODY_BYTES;
use serde_json::Value;
use std::io::Write;
use std::time::Duration;

/// Exit code: the document is valid.
pub const EXIT_VALID: i32 = 0;
/// Exit code: the document is invalid (violations printed).
pub const EXIT_INVALID: i32 = 1;
/// Exit code: the document could not be read or is not JSON, or the schema is broken.
pub const EXIT_ERROR: i32 = 2;

/// Arguments of `conform validate`.
#[derive(Debug, Clone, clap::Args)]
pub struct ValidateArgs {
    /// A file path, `-` for stdin, or an `http://` / `https://` URL to fetch.
    pub source: String,
    /// Document type; guessed from the members when omitted.
    #[arg(long = "type", value_name = "descriptor|index|request|response|error")]
    pub doc_type: Option<DocType>,
    /// Unknown members (and restricted/private skills without auth) are warnings, not errors.
    #[arg(long)]
    pub lenient: bool,
    /// Print the unified VALIDATION_ERROR object (seed §8.3.1) as JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// `--ca-cert`/`--insecure` for an `https://` URL.
    #[command(flatten)]
    pub tls: crate::transport::tls::TlsOptions,
}

/// Why `conform validate` could not validate at all (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Reading the file failed.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The path.
        path: String,
        /// The IO error.
        source: std::io::Error,
    },
    /// Fetching the URL failed.
    #[error("cannot fetch {url}: {reason}")]
    Fetch {
        /// The URL.
        url: String,
        /// What went wrong.
        reason: String,
    },
    /// The content is not JSON.
    #[error("{source_name} is not JSON: {error}")]
    NotJson {
        /// File or URL.
        source_name: String,
        /// Parser error.
        error: serde_json::Error,
    },
    /// The embedded schema is broken.
    #[error(transparent)]
    Schema(#[from] crate::ssp::validator::SchemaError),
    /// Writing the output failed.
    #[error("cannot write output: {0}")]
    Output(#[from] std::io::Error),
}

/// Runs `conform validate`; prints to `out` and returns the exit code (0 valid, 1 invalid).
pub async fn run(args: &ValidateArgs, out: &mut dyn Write) -> Result<i32, CliError> {
    let text = load(&args.source, &args.tls).await?;
    let doc: Value = serde_json::from_str(&text).map_err(|error| CliError::NotJson {
        source_name: args.source.clone(),
        error,
    })?;
    let doc_type = args.doc_type.unwrap_or_else(|| DocType::detect(&doc));
    let mode = if args.lenient {
        Mode::Lenient
    } else {
        Mode::Strict
    };
    let report = SspValidator::global()?.validate(&doc, doc_type, mode);
    if args.json {
        let body = if report.valid {
            serde_json::json!({ "valid": true, "warnings": report.warnings })
        } else {
            serde_json::to_value(report.to_error_response(doc_type)).unwrap_or(Value::Null)
        };
        let text = serde_json::to_string_pretty(&body).map_err(std::io::Error::other)?;
        writeln!(out, "{text}")?;
    } else {
        out.write_all(render(&args.source, doc_type, mode, &report).as_bytes())?;
    }
    Ok(if report.valid {
        EXIT_VALID
    } else {
        EXIT_INVALID
    })
}

/// Human-readable rendering of a report (stable: snapshot-tested).
pub fn render(source: &str, doc_type: DocType, mode: Mode, report: &ValidationReport) -> String {
    let mode_name = match mode {
        Mode::Strict => "strict",
        Mode::Lenient => "lenient",
    };
    let mut s = String::new();
    let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    if report.valid {
        s.push_str(&format!(
            "{source}: valid {} ({mode_name}){}\n",
            doc_type.def_name(),
            if report.warnings.is_empty() {
                String::new()
            } else {
                format!(", {}", plural(report.warnings.len(), "warning"))
            }
        ));
    } else {
        s.push_str(&format!(
            "{source}: invalid {} ({mode_name}): {}{}\n",
            doc_type.def_name(),
            plural(report.errors.len(), "error"),
            if report.warnings.is_empty() {
                String::new()
            } else {
                format!(", {}", plural(report.warnings.len(), "warning"))
            }
        ));
    }
    let mut section = |label: &str, items: &[ValidationIssue]| {
        for i in items {
            let path = if i.path.is_empty() {
                "(document)"
            } else {
                &i.path
            };
            s.push_str(&format!("  {label} {path}: {}\n", i.message));
            s.push_str(&format!("      expected: {}\n", i.expected));
            s.push_str(&format!("      actual:   {}\n", i.actual));
        }
    };
    section("error", &report.errors);
    section("warning", &report.warnings);
    s
}

async fn load(source: &str, tls: &crate::transport::tls::TlsOptions) -> Result<String, CliError> {
    if source.starts_with("http://") || source.starts_with("https://") {
        let fetch_err = |reason: String| CliError::Fetch {
            url: source.to_owned(),
            reason,
        };
        let mut builder = reqwest::Client::builder().timeout(Duration::from_secs(30));
        // Loopback is always reached directly; other hosts honour HTTP(S)_PROXY.
        let loopback = url::Url::parse(source)
            .ok()
            .and_then(|u| {
                u.host_str()
                    .map(|h| h == "localhost" || h == "127.0.0.1" || h == "[::1]")
            })
            .unwrap_or(false);
        if loopback {
            builder = builder.no_proxy();
        }
        if let Some(w) = tls.warning() {
            tracing::warn!("{w}");
        }
        let client = (tls.apply(builder).map_err(|e| fetch_err(e.to_string()))?)
            .build()
            .map_err(|e| fetch_err(crate::transport::tls::error_chain(&e)))?;
        let resp = client
            .get(source)
            .header("accept", "application/json")
            .send()
            .await
            .map_err(|e| fetch_err(crate::transport::tls::error_chain(&e)))?;
        let status = resp.status();
        let bytes = crate::transport::read_body(resp, DEFAULT_RESPONSE_BODY_BYTES)
            .await
            .map_err(fetch_err)?;
        let body = String::from_utf8_lossy(&bytes).into_owned();
        if !status.is_success() {
            return Err(fetch_err(format!(
                "HTTP {status}: {}",
                body.chars().take(200).collect::<String>()
            )));
        }
        Ok(body)
    } else if source == "-" {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s).map_err(|e| {
            CliError::Read {
                path: "-".into(),
                source: e,
            }
        })?;
        Ok(s)
    } else {
        std::fs::read_to_string(source).map_err(|e| CliError::Read {
            path: source.to_owned(),
            source: e,
        })
    }
}
