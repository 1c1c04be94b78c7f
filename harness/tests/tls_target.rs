//! `https://` targets (issue 15, item 1): the reference behind a TLS proxy whose certificate
//! a CA generated at test time signed. With `--ca-cert` (or the profile's `[tls]`) a run
//! over HTTP, MCP, SSP and a raw-request vector passes; without it the pre-flight refuses the
//! certificate with a clear error (exit 2, no check failures); `--insecure` passes and the
//! report records it.
#![expect(clippy::expect_used, clippy::unwrap_used)] // tests: a panic is the failure report

mod support;

use std::path::Path;
use std::time::Duration;

use conform::engine::protocol::default_vectors_dir;
use serde_json::Value;

/// A subset over every kind of exchange: Parley on both bindings (manifest checks), a
/// raw-HTTP vector (malformed JSON body), and SSP discovery, invocation and consumer checks.
const FILTER: &str =
    "{manifest/core-members,envelope/http-malformed-json,SSP-DISC-1*,SSP-INV-1*,SSP-VER-1*}";

/// The demo profile of the reference at `base` (Parley tokens, the SSP mapping of
/// `vectors/ssp/provider/reference-demo.profile.toml`) with `extra` TOML appended.
fn write_profile(dir: &Path, base: &str, extra: &str) -> std::path::PathBuf {
    let mut profile = conform::reference::demo_profile(base);
    let ssp_demo = default_vectors_dir().join("ssp/provider/reference-demo.profile.toml");
    let mut demo: toml::Table =
        toml::from_str(&std::fs::read_to_string(ssp_demo).unwrap()).unwrap();
    profile
        .sections
        .insert("ssp".into(), demo.remove("ssp").unwrap());
    let text = format!("{}\n{extra}", toml::to_string(&profile).unwrap());
    let path = dir.join("target.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// Runs `conform run --target PROFILE ARGS…`: exit code, output, and the JSON report.
async fn conform_run(profile: &Path, out: &Path, args: &[&str]) -> (i32, String, Option<Value>) {
    let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_conform"))
        .arg("--vectors")
        .arg(default_vectors_dir())
        .args(["run", "--format", "json", "--filter", FILTER, "--target"])
        .arg(profile)
        .arg("--out")
        .arg(out)
        .args(args)
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(Duration::from_secs(120), child)
        .await
        .expect("conform ended within 120 s")
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let report = std::fs::read_to_string(out.join("report.json"))
        .ok()
        .map(|t| serde_json::from_str(&t).unwrap());
    (output.status.code().unwrap_or(-1), text, report)
}

/// Every check of `report` passed, and the subset covered HTTP, MCP, SSP and a raw request.
fn assert_all_kinds_passed(report: &Value, out: &str) {
    let checks = report["checks"].as_array().unwrap();
    let not_passed: Vec<_> = checks
        .iter()
        .filter(|c| c["verdict"]["verdict"] != "pass")
        .map(|c| format!("{} {}", c["id"], c["verdict"]))
        .collect();
    assert!(not_passed.is_empty(), "{not_passed:?}\n{out}");
    let ran = |pred: &dyn Fn(&Value) -> bool| checks.iter().any(pred);
    assert!(ran(&|c| c["transport"] == "http"), "an HTTP check ran");
    assert!(ran(&|c| c["transport"] == "mcp"), "an MCP check ran");
    assert!(
        ran(&|c| c["suite"] == "ssp"),
        "an SSP check ran: {checks:?}"
    );
    assert!(
        ran(&|c| c["check"] == "envelope/http-malformed-json"),
        "the raw-HTTP vector ran"
    );
    // Nothing was sent in clear: the proxy port speaks only TLS, and the reference writes
    // `https://` URLs into its SSP documents, so a plain request would have failed a check.
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ca_cert_run_passes_over_tls() {
    let server = support::tls::spawn().await;
    let profile = write_profile(server.dir.path(), &server.base_url, "");
    let out = server.dir.path().join("out");
    let ca = server.ca_pem.display().to_string();
    let (code, text, report) = conform_run(&profile, &out, &["--ca-cert", &ca]).await;
    assert_eq!(code, 0, "{text}");
    let report = report.expect("report.json");
    assert_all_kinds_passed(&report, &text);
    assert_eq!(report["target"]["tls"]["insecure"], false);
    assert_eq!(report["target"]["tls"]["ca_cert"], ca.as_str());
    assert!(text.contains("TLS: verified"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn profile_tls_section_names_the_ca_relative_to_the_profile() {
    let server = support::tls::spawn().await;
    let profile = write_profile(
        server.dir.path(),
        &server.base_url,
        "[tls]\nca_cert = \"ca.pem\"\n",
    );
    let out = server.dir.path().join("out");
    let (code, text, _) = conform_run(&profile, &out, &["--suite", "parley"]).await;
    assert_eq!(code, 0, "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_certificate_is_a_clear_preflight_error() {
    let server = support::tls::spawn().await;
    let profile = write_profile(server.dir.path(), &server.base_url, "");
    let out = server.dir.path().join("out");
    for suite in ["parley", "ssp"] {
        let (code, text, report) = conform_run(&profile, &out, &["--suite", suite]).await;
        assert_eq!(code, 2, "{suite}: exit 2, not a failed run:\n{text}");
        assert!(report.is_none(), "{suite}: no report of failed checks");
        assert!(
            text.contains("invalid peer certificate") && text.contains("UnknownIssuer"),
            "{suite}: the certificate error is named:\n{text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insecure_run_passes_and_the_report_records_it() {
    let server = support::tls::spawn().await;
    let profile = write_profile(server.dir.path(), &server.base_url, "");
    let out = server.dir.path().join("out");
    let (code, text, report) = conform_run(&profile, &out, &["--insecure"]).await;
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("WARNING: --insecure"),
        "a loud warning:\n{text}"
    );
    assert!(text.contains("TLS: INSECURE"), "{text}");
    let report = report.expect("report.json");
    assert_all_kinds_passed(&report, &text);
    assert_eq!(report["target"]["tls"]["insecure"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn validate_fetches_an_https_document_with_the_ca() {
    use conform::ssp::cli::{EXIT_VALID, ValidateArgs, run};
    let server = support::tls::spawn().await;
    let mut args = ValidateArgs {
        source: format!("{}/.well-known/skill-sharing", server.base_url),
        doc_type: None,
        lenient: false,
        json: false,
        tls: Default::default(),
    };
    let mut out = Vec::new();
    let err = run(&args, &mut out).await.expect_err("unknown CA refused");
    assert!(err.to_string().contains("UnknownIssuer"), "{err}");
    args.tls.ca_cert = Some(server.ca_pem.clone());
    assert_eq!(run(&args, &mut out).await.unwrap(), EXIT_VALID);
}
