//! `conform verify REPORT.json --key PUB` (issue 30): a report's evidence checked offline —
//! its Ed25519 signature against a key the user trusts, its suite digest against this
//! `conform`'s suite, that it is the file `conform` wrote, and that the run it records was
//! complete (the judgements are `engine::report::evidence`'s). Exit 0 when all hold, 1 with
//! every reason when one does not (a file that is not a report of this format included), 2 when
//! the report file, the key or the suite cannot be read.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use conform::engine::report::evidence;
use conform::engine::report::{Report, json};
use serde::Deserialize as _;

/// Arguments of `conform verify`.
#[derive(Debug, clap::Args)]
pub(crate) struct VerifyArgs {
    /// The report.json to check (written by `conform run --sign KEYFILE`).
    #[arg(value_name = "REPORT.json")]
    report: PathBuf,
    /// The signer's Ed25519 public key you trust (SPKI PEM: `openssl pkey -in KEY -pubout`).
    #[arg(long, value_name = "PUB.pem")]
    key: PathBuf,
}

/// Runs the command: what held and what did not, one line each, on stdout.
pub(crate) fn execute(args: &VerifyArgs, vectors: &Path) -> anyhow::Result<u8> {
    let shown = args.report.display();
    let text = std::fs::read_to_string(&args.report).with_context(|| format!("reading {shown}"))?;
    let key = evidence::verifying_key(&args.key)?;
    let local = evidence::digest_dir(vectors)?;
    // A file that was read but is not a report (one byte edited can do that) is a mismatch
    // like any other, not an input that could not be read.
    let (value, report) = match parse(&text) {
        Ok(parsed) => parsed,
        Err(reason) => {
            super::out(&format!("FAIL  form: {reason}\nNOT VERIFIED: {shown}\n"))?;
            return Ok(1);
        }
    };
    let written = json::render(&report)?;
    let judged = [
        evidence::verify(&value, &key)
            .map(|()| "signature: Ed25519, by the given key, over the whole report".to_string())
            .map_err(|e| format!("signature: {e}")),
        // A member given twice parses as its last value here, yet reads as its first to a
        // person or another parser: only the file conform itself renders is accepted.
        if written.trim_end() == text.trim_end() {
            Ok("form: the file is the report as conform renders it".into())
        } else {
            Err("form: the file is not as conform renders this report (a member repeated, reordered or reformatted)".into())
        },
        evidence::judge_digest(report.suite_digest.as_ref(), &local),
        evidence::judge_completeness(&report),
    ];
    let mut lines: Vec<String> = judged
        .iter()
        .map(|j| match j {
            Ok(l) => format!("ok    {l}"),
            Err(l) => format!("FAIL  {l}"),
        })
        .collect();
    let s = &report.summary;
    lines.push(format!(
        "note  its verdict: exit {} — {} pass, {} fail ({} required), {} warn, {} unsupported, {} harness errors",
        report.exit_code(),
        s.pass,
        s.fail,
        s.required_failures,
        s.warn,
        s.unsupported,
        s.harness_error
    ));
    let version = env!("CARGO_PKG_VERSION");
    lines.push(format!(
        "note  written by conform {}{}; target {} ({})",
        report.tool.version,
        if report.tool.version == version {
            String::new()
        } else {
            format!(" — this is conform {version}: its checks' code may differ")
        },
        report.target.name,
        (report.target.server_version.as_deref()).unwrap_or("no declared version")
    ));
    let (verdict, code) = if judged.iter().any(Result::is_err) {
        ("NOT VERIFIED", 1)
    } else {
        ("verified", 0)
    };
    lines.push(format!("{verdict}: {shown}"));
    super::out(&(lines.join("\n") + "\n"))?;
    Ok(code)
}

/// The report as JSON and as conform's report type, or why the file is neither.
fn parse(text: &str) -> Result<(serde_json::Value, Report), String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("the file is not JSON: {e}"))?;
    let report = Report::deserialize(&value)
        .map_err(|e| format!("the file is not a conform report of this format: {e}"))?;
    Ok((value, report))
}
