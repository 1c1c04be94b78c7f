//! `conform verify REPORT.json --key PUB` (issue 30): a report's evidence checked offline —
//! its Ed25519 signature against a key the user trusts, its suite digest against this
//! `conform`'s suite, and that the run it records was complete. Exit 0 when all three hold,
//! 1 with every reason when one does not, 2 when the report or the key cannot be read.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use conform::engine::report::Report;
use conform::engine::report::evidence::{self, SuiteDigest};

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
    let text = std::fs::read_to_string(&args.report)
        .with_context(|| format!("reading {}", args.report.display()))?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("{} is not JSON", args.report.display()))?;
    let report: Report = serde_json::from_value(value.clone()).with_context(|| {
        format!(
            "{} is not a conform report of this version",
            args.report.display()
        )
    })?;
    let key = evidence::verifying_key(&args.key)?;
    let local = evidence::digest_dir(vectors)?;
    let mut lines = Vec::new();
    let mut failed = false;
    let mut judge = |ok: Result<String, String>| match ok {
        Ok(l) => lines.push(format!("ok    {l}")),
        Err(l) => {
            failed = true;
            lines.push(format!("FAIL  {l}"));
        }
    };
    judge(match evidence::verify(&value, &key) {
        Ok(()) => Ok("signature: Ed25519, by the given key, over the whole report".into()),
        Err(e) => Err(format!("signature: {e}")),
    });
    judge(digest(report.suite_digest.as_ref(), &local));
    judge(completeness(&report));
    lines.push(format!(
        "note  written by conform {} (this is conform {}); target {} ({})",
        report.tool.version,
        env!("CARGO_PKG_VERSION"),
        report.target.name,
        report
            .target
            .server_version
            .as_deref()
            .unwrap_or("no declared version")
    ));
    println!("{}", lines.join("\n"));
    if failed {
        println!("NOT VERIFIED: {}", args.report.display());
        Ok(1)
    } else {
        println!("verified: {}", args.report.display());
        Ok(0)
    }
}

/// The report's suite digest against this `conform`'s suite.
fn digest(recorded: Option<&SuiteDigest>, local: &SuiteDigest) -> Result<String, String> {
    match recorded {
        None => Err("suite digest: the report names none (written before reports carried one, or by another tool)".into()),
        Some(d) if d == local => Ok(format!(
            "suite digest: {} over {} files, the suite of this conform",
            d.sha256, d.files
        )),
        Some(d) => Err(format!(
            "suite digest: the report was judged by another suite ({} over {} files) than this conform's ({} over {} files)",
            d.sha256, d.files, local.sha256, local.files
        )),
    }
}

/// Whether the report records a whole run: not interrupted, not chosen partial, every
/// suite complete (a 0-of-0 run is no evidence of conformance).
fn completeness(r: &Report) -> Result<String, String> {
    let c = &r.completeness;
    let mut why = Vec::new();
    if r.interrupted {
        why.push("the run was interrupted".to_string());
    }
    if !c.partial.is_empty() {
        why.push(format!("a partial run ({})", c.partial.join(", ")));
    }
    if c.suites.is_empty() {
        why.push("no completeness recorded per suite".into());
    }
    for s in c.suites.iter().filter(|s| !s.complete) {
        why.push(format!(
            "suite {} judged the target in {} of {} results, {} required rules untested",
            s.suite, s.executed, s.declared, s.untested_required
        ));
    }
    if why.is_empty() && c.complete {
        let n: usize = c.suites.iter().map(|s| s.executed).sum();
        Ok(format!(
            "completeness: every suite complete ({n} results judged the target)"
        ))
    } else {
        if why.is_empty() {
            why.push("the report says the run was incomplete".into());
        }
        Err(format!("completeness: {}", why.join("; ")))
    }
}
