//! `conform init` (issue 15, item 2) against the spawned reference with its demo tokens: the
//! profile parses, `whoami` gives each token its role (bare tokens included), the SSP
//! fixture roles come from the descriptors, and `conform run` passes with it; with tokens
//! missing, the profile says what is missing and which checks will be `unsupported`.
#![expect(clippy::expect_used, clippy::unwrap_used)] // tests: a panic is the failure report

mod support;

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use conform::engine::protocol::{default_vectors_dir, parse_profile};

/// Runs the `conform` binary with `args`: exit code and stdout + stderr.
async fn conform(args: &[&str]) -> (i32, String, String) {
    let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_conform"))
        .arg("--vectors")
        .arg(default_vectors_dir())
        .args(args)
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(120), child)
        .await
        .expect("conform ended within 120 s")
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

async fn reference() -> reference_impl::RunningServer {
    reference_impl::spawn(
        reference_impl::Config::demo_in_memory(),
        SocketAddr::from(([127, 0, 0, 1], 0)),
    )
    .await
    .unwrap()
}

fn table<'a>(p: &'a conform::engine::target::Profile, key: &str) -> &'a toml::Table {
    p.section(key).and_then(toml::Value::as_table).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_assigns_roles_and_the_profile_runs() {
    let server = reference().await;
    let base = server.base_url();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("target.toml");
    let file_s = file.display().to_string();
    // Bare tokens, the limited one before an agent (it must still land on `limited`), one
    // named role and the SSP credentials.
    let (code, _, err) = conform(&[
        "init",
        "--url",
        &base,
        "--token",
        "demo-agent-a",
        "--token",
        "demo-limited",
        "--token",
        "demo-agent-b",
        "--token",
        "moderator=demo-moderator",
        "--token",
        "demo-verifier",
        "--token",
        "demo-reader",
        "--token",
        "demo-human",
        "--token",
        "api_key=demo-ssp-key",
        "--token",
        "api_key_limited=demo-ssp-key-limited",
        "--token",
        "oauth2_token=demo-oauth-full",
        "--token",
        "oauth2_token_limited=demo-oauth-read",
        "--token",
        "hmac_secret=demo-hmac-secret",
        "--out",
        &file_s,
    ])
    .await;
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("CONTAINS SECRETS"), "{text}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "only the owner may read the tokens");
    }
    let profile = parse_profile(&text, &conform::registry::protocols()).expect(&text);
    let tokens = table(&profile, "tokens");
    for (role, token) in [
        ("agent_a", "demo-agent-a"),
        ("agent_b", "demo-agent-b"),
        ("moderator", "demo-moderator"),
        ("verifier", "demo-verifier"),
        ("reader", "demo-reader"),
        ("human", "demo-human"),
        ("limited", "demo-limited"),
    ] {
        assert_eq!(tokens[role].as_str(), Some(token), "{role}:\n{text}");
    }
    // Only the `!dialectic` vectors stay unsupported: the reference enables the profile.
    assert!(
        !text.contains("no token for role"),
        "every role has its token:\n{text}"
    );
    assert!(
        text.contains("12 of") && text.contains("the target's manifest enables `dialectic`"),
        "{text}"
    );
    let ssp = table(&profile, "ssp");
    let roles = ssp["roles"].as_table().unwrap();
    // What the descriptors reveal, mapped onto the reference's skills.
    let public_none = ["conform/always-fails", "conform/echo", "conform/overrun"];
    assert!(
        public_none.contains(&roles["auth_none"].as_str().unwrap()),
        "{text}"
    );
    assert_eq!(roles["auth_api_key"].as_str(), Some("conform/slow-task"));
    assert_eq!(roles["restricted"].as_str(), Some("conform/slow-task"));
    // Behaviour roles are never guessed.
    assert!(!roles.contains_key("instant") && !roles.contains_key("failing"));
    assert!(text.contains("# instant = \"…\"   # MISSING"), "{text}");
    let out = dir.path().join("out");
    let (code, stdout, err) = conform(&[
        "run",
        "--target",
        &file_s,
        "--filter",
        "{manifest/*,authority/*,SSP-DISC-*,SSP-AUTH-*}",
        "--format",
        "json",
        "--out",
        &out.display().to_string(),
    ])
    .await;
    assert_eq!(code, 0, "{stdout}{err}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let checks = report["checks"].as_array().unwrap();
    let passed = |suite: &str| {
        checks
            .iter()
            .filter(|c| c["suite"] == suite && c["verdict"]["verdict"] == "pass")
            .count()
    };
    assert!(passed("parley") > 10, "{stdout}");
    assert!(passed("ssp") >= 3, "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_with_missing_tokens_says_what_is_unsupported() {
    let server = reference().await;
    let base = server.base_url();
    let (code, text, err) = conform(&["init", "--url", &base, "--token", "demo-agent-a"]).await;
    assert_eq!(code, 0, "{err}");
    parse_profile(&text, &conform::registry::protocols()).expect(&text);
    assert!(text.contains("agent_a = \"demo-agent-a\""), "{text}");
    assert!(text.contains("# human = \"…\"   # MISSING"), "{text}");
    assert!(
        text.contains("the target profile has no token for role human"),
        "the runner's own reason is listed:\n{text}"
    );
    assert!(
        text.contains("# api_key = \"…\"   # not given"),
        "SSP credentials:\n{text}"
    );
    assert!(
        text.contains("SSP-AUTH-2/api-key — no skill for auth_api_key"),
        "{text}"
    );
    assert!(text.contains("needs --token api_key="), "{text}");
}

/// A server speaking neither protocol (404 to everything) gets no profile: exit 2 and one
/// message giving each protocol's reason (issue 26).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_against_neither_protocol_exits_2() {
    let base = support::http::serve(axum::Router::new()).await;
    let (code, text, err) = conform(&["init", "--url", &base]).await;
    assert_eq!(code, 2, "{text}{err}");
    assert_eq!(text, "", "no profile");
    assert!(err.contains("speaks none of the protocols"), "{err}");
    assert!(
        err.contains("parley: no manifest") && err.contains("ssp: no Skill Index"),
        "{err}"
    );
    assert_eq!(err.matches("error:").count(), 1, "one message: {err}");
}

/// A server speaking one protocol still gets its profile, the other section omitted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_against_one_protocol_writes_its_section() {
    let manifest = serde_json::json!({"version": "1.0.0", "profiles": []});
    let router = axum::Router::new().route(
        "/v1/manifest",
        axum::routing::get(move || {
            let m = manifest.clone();
            async move { axum::Json(m) }
        }),
    );
    let base = support::http::serve(router).await;
    let (code, text, err) = conform(&["init", "--url", &base]).await;
    assert_eq!(code, 0, "{err}");
    let profile = parse_profile(&text, &conform::registry::protocols()).expect(&text);
    assert!(profile.section("ssp").is_none());
    assert!(text.contains("No SSP Skill Index"), "{text}");
    assert!(!text.contains("No Parley manifest"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_refuses_an_unknown_role() {
    let (code, _, err) = conform(&[
        "init",
        "--url",
        "http://127.0.0.1:9",
        "--token",
        "agnet_a=x",
    ])
    .await;
    assert_eq!(code, 2);
    assert!(
        err.contains("no protocol knows the role \"agnet_a\""),
        "{err}"
    );
}

/// The profile `conform init` writes for a TLS server names the CA and passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_over_tls_writes_the_tls_section() {
    let server = support::tls::spawn().await;
    let ca = server.ca_pem.display().to_string();
    let (code, text, err) = conform(&[
        "init",
        "--url",
        &server.base_url,
        "--ca-cert",
        &ca,
        "--token",
        "demo-agent-a",
    ])
    .await;
    assert_eq!(code, 0, "{err}");
    let profile = parse_profile(&text, &conform::registry::protocols()).expect(&text);
    assert_eq!(
        profile.tls.ca_cert.as_deref(),
        Some(Path::new(&std::fs::canonicalize(&server.ca_pem).unwrap()))
    );
    assert!(text.contains("agent_a = \"demo-agent-a\""), "{text}");
}
