//! Issue 14, the three known false failures: a server that behaves as the user's independent,
//! correct server did must pass the checks concerned, and a server that breaks the rule each
//! check exists for must still not pass it (the relaxations keep the checks biting).
//!
//! The "servers" are an axum proxy in front of an in-process reference server that rewrites
//! one kind of answer: legal variants the notes allow, and broken ones they forbid.
#![expect(clippy::expect_used)] // tests: a panic is the failure report

mod support;

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use conform::engine::run::{RunOptions, run};
use conform::engine::target::ConnectOptions;
use conform::engine::verdict::Verdict;
use conform::reference::demo_profile;
use conform::transport::TransportKind;
use serde_json::{Value, json};
use support::proxy::Upstream;

/// What the proxy changes in the reference's answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rewrite {
    /// Legal (PV-MF-1 shows only `"kinds":[...]`): the dialectic profile's `kinds` written as
    /// kind objects, the shape of the top-level `kinds`.
    ProfileKindsAsObjects,
    /// Broken: the profile's kind objects omit `verify`, a kind the server accepts.
    ProfileKindsMissingVerify,
    /// Legal ("the table above, machine-readable"): each MCP binding a bare tool name.
    McpBindingAsString,
    /// Legal: each MCP binding `{"name": <tool>}`.
    McpBindingAsName,
    /// Broken (PV-TR-1a): the operations declare no MCP binding at all.
    McpBindingMissing,
    /// Legal (PV-MF-1 fixes no layout): `operations` an object keyed by operation.
    OperationsKeyed,
    /// Legal (the preamble: the harness adapts to declared "operation routes"): every route
    /// declared and served under `/alt/` instead of `/v1/` (the manifest itself excepted);
    /// `/v1/...` answers 404.
    OtherRoutes,
    /// Legal: `/v2/...` (outside Parley v1) answered 404 in SSP's error shape, as by a
    /// server serving SSP on the same origin.
    V2InSspShape,
    /// Broken: the Parley manifest served again under `/v2/manifest` (version prefix ignored).
    V2ServesManifest,
    /// Legal (seed §4.5 fixes no query spelling): the SSP index filters on `?type=` only,
    /// `?capability_type=` is ignored.
    SspFilterOnlyType,
    /// Broken (SSP-DISC-3): the index ignores every filter.
    SspFilterIgnored,
    /// Legal (seed §8.2: `details` and `retry` optional; §8.3.2: details DEVRAIT): 401
    /// AUTH_REQUIRED without `details` nor `retry`.
    SspAuthRequiredBare,
    /// Broken (SSP-AUTH-2): 401 with another code than AUTH_REQUIRED.
    SspAuthRequiredOtherCode,
}

struct Proxy {
    /// Set once the reference runs (it is started after the proxy, to learn its URL).
    upstream: Upstream,
    rewrite: Rewrite,
}

/// The running pair; dropping it stops the reference server.
struct Variant {
    base_url: String,
    _server: reference_impl::RunningServer,
}

async fn start(rewrite: Rewrite) -> Variant {
    let state = Arc::new(Proxy {
        upstream: Upstream::new(),
        rewrite,
    });
    let base_url =
        support::http::serve(Router::new().fallback(handle).with_state(state.clone())).await;
    let server = support::reference::spawn_behind(&base_url).await;
    state.upstream.set(format!("http://{}", server.addr));
    Variant {
        base_url,
        _server: server,
    }
}

async fn forward(
    p: &Proxy,
    method: Method,
    path: &str,
    headers: &HeaderMap,
    body: Bytes,
) -> Response {
    let (status, hs, bytes) = p.upstream.forward(&method, path, headers, body).await;
    if status == StatusCode::UNAUTHORIZED
        && matches!(
            p.rewrite,
            Rewrite::SspAuthRequiredBare | Rewrite::SspAuthRequiredOtherCode
        )
        && let Ok(mut v) = serde_json::from_slice::<Value>(&bytes)
        && v.pointer("/error/code").is_some()
    {
        let e = v["error"].as_object_mut().expect("error object");
        if p.rewrite == Rewrite::SspAuthRequiredBare {
            e.remove("details");
            e.remove("retry");
        } else {
            e.insert("code".into(), json!("UNAUTHENTICATED"));
        }
        let mut resp = (status, axum::Json(v)).into_response();
        if let Some(w) = hs.get("www-authenticate") {
            resp.headers_mut().insert("www-authenticate", w.clone());
        }
        return resp;
    }
    if path == "/v1/manifest"
        && let Ok(mut manifest) = serde_json::from_slice::<Value>(&bytes)
    {
        rewrite_manifest(p.rewrite, &mut manifest);
        return (status, axum::Json(manifest)).into_response();
    }
    (status, hs, bytes).into_response()
}

fn rewrite_manifest(rewrite: Rewrite, m: &mut Value) {
    match rewrite {
        Rewrite::ProfileKindsAsObjects | Rewrite::ProfileKindsMissingVerify => {
            for p in m["profiles"].as_array_mut().expect("profiles") {
                // The reference also publishes its profile kinds as objects (`kind_details`).
                let mut objects = p["kind_details"].as_array().expect("kind_details").clone();
                if rewrite == Rewrite::ProfileKindsMissingVerify {
                    objects.retain(|k| k["name"] != "verify");
                }
                assert!(objects.iter().all(|k| k["name"].is_string()));
                p["kinds"] = Value::Array(objects);
                p.as_object_mut().expect("profile").remove("kind_details");
            }
        }
        Rewrite::McpBindingAsString | Rewrite::McpBindingAsName | Rewrite::McpBindingMissing => {
            for op in m["operations"].as_array_mut().expect("operations") {
                let tool = op["mcp"]["tool"]
                    .as_str()
                    .expect("reference shape")
                    .to_string();
                match rewrite {
                    Rewrite::McpBindingAsString => op["mcp"] = json!(tool),
                    Rewrite::McpBindingAsName => op["mcp"] = json!({"name": tool}),
                    _ => {
                        op.as_object_mut().expect("operation").remove("mcp");
                    }
                }
            }
        }
        Rewrite::OperationsKeyed => {
            let rows = m["operations"].as_array().expect("operations").clone();
            let keyed: serde_json::Map<String, Value> = rows
                .into_iter()
                .map(|mut row| {
                    let name = row["name"].as_str().expect("name").to_string();
                    row.as_object_mut().expect("row").remove("name");
                    (name, row)
                })
                .collect();
            m["operations"] = Value::Object(keyed);
        }
        Rewrite::OtherRoutes => {
            for op in m["operations"].as_array_mut().expect("operations") {
                if op["name"] == "get_manifest" {
                    continue;
                }
                let path = op["http"]["path"]
                    .as_str()
                    .expect("path")
                    .replacen("/v1/", "/alt/", 1);
                op["http"]["path"] = json!(path);
            }
        }
        _ => {}
    }
}

async fn handle(
    State(p): State<Arc<Proxy>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut path = uri.path_and_query().map_or("/", |x| x.as_str()).to_string();
    if uri.path().ends_with("/.well-known/skill-sharing") {
        let drop_query = match p.rewrite {
            Rewrite::SspFilterIgnored => true,
            Rewrite::SspFilterOnlyType => {
                uri.query().is_some_and(|q| q.contains("capability_type="))
            }
            _ => false,
        };
        if drop_query {
            path = uri.path().to_string();
        }
    }
    if p.rewrite == Rewrite::OtherRoutes {
        if uri.path().starts_with("/alt/") {
            path = path.replacen("/alt/", "/v1/", 1);
        } else if uri.path().starts_with("/v1/") && uri.path() != "/v1/manifest" {
            return support::http::json_response(
                StatusCode::NOT_FOUND,
                json!({"error": {"reason": "not_found", "status": 404, "message": "routes live under /alt/"}}),
            );
        }
    }
    if uri.path().starts_with("/v2/") {
        match p.rewrite {
            Rewrite::V2InSspShape => {
                return support::http::json_response(
                    StatusCode::NOT_FOUND,
                    json!({"error": {"code": "SKILL_NOT_FOUND", "message": "no such skill path"}}),
                );
            }
            Rewrite::V2ServesManifest => {
                let v1 = path.replacen("/v2/", "/v1/", 1);
                return forward(&p, method, &v1, &headers, body).await;
            }
            _ => {}
        }
    }
    forward(&p, method, &path, &headers, body).await
}

/// The verdict of each of `checks` (on HTTP) against the variant.
async fn verdicts(rewrite: Rewrite, checks: &[&str]) -> Vec<(String, Verdict)> {
    let variant = start(rewrite).await;
    let opts = ConnectOptions {
        transports: vec![TransportKind::Http.into()],
        ..ConnectOptions::default()
    };
    let target = conform::registry::connect(demo_profile(&variant.base_url), &opts, &["parley"])
        .await
        .expect("pre-flight");
    let mut suite = support::vectors::suite("parley").expect("parley suite");
    suite.checks.retain(|c| checks.contains(&c.id()));
    assert_eq!(suite.checks.len(), checks.len(), "every named check exists");
    let run_opts = RunOptions {
        transports: vec![TransportKind::Http.into()],
        ..RunOptions::default()
    };
    let report = run(Arc::new(target), &[suite], &run_opts)
        .await
        .expect("run");
    let out: Vec<(String, Verdict)> = report
        .checks
        .into_iter()
        .filter(|c| c.transport == Some(TransportKind::Http.into()))
        .map(|c| (c.check, c.verdict))
        .collect();
    assert_eq!(
        out.len(),
        checks.len(),
        "one HTTP verdict per check: {out:?}"
    );
    out
}

fn assert_all(rewrite: Rewrite, got: &[(String, Verdict)], want: fn(&Verdict) -> bool, what: &str) {
    for (check, verdict) in got {
        assert!(
            want(verdict),
            "{rewrite:?}: {check} must {what}, got {}",
            support::verdicts::describe(verdict)
        );
    }
}

const PROFILE_CHECKS: &[&str] = &[
    "manifest/dialectic-profile",
    "kinds/dialectic-kind-known-when-profile-listed",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn profile_kinds_as_objects_pass_and_a_missing_kind_fails() {
    let got = verdicts(Rewrite::ProfileKindsAsObjects, PROFILE_CHECKS).await;
    assert_all(
        Rewrite::ProfileKindsAsObjects,
        &got,
        Verdict::is_pass,
        "pass",
    );
    let got = verdicts(Rewrite::ProfileKindsMissingVerify, PROFILE_CHECKS).await;
    assert_all(
        Rewrite::ProfileKindsMissingVerify,
        &got,
        |v| matches!(v, Verdict::Fail(_)),
        "fail (the profile no longer lists verify)",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_bindings_in_other_shapes_pass_and_a_missing_binding_fails() {
    let checks = &["manifest/operations", "manifest/dialectic-profile"];
    for legal in [Rewrite::McpBindingAsString, Rewrite::McpBindingAsName] {
        let got = verdicts(legal, checks).await;
        assert_all(legal, &got, Verdict::is_pass, "pass");
    }
    let got = verdicts(Rewrite::McpBindingMissing, checks).await;
    assert_all(
        Rewrite::McpBindingMissing,
        &got,
        |v| matches!(v, Verdict::Fail(_)),
        "fail (no MCP binding declared)",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_404_outside_the_namespace_passes_and_a_served_v2_manifest_warns() {
    let checks = &["transport/http-unknown-version-prefix"];
    let got = verdicts(Rewrite::V2InSspShape, checks).await;
    assert_all(Rewrite::V2InSspShape, &got, Verdict::is_pass, "pass");
    // The notes fix nothing outside Parley's namespace: what the check exists for (the
    // version prefix ignored) is reported, as a warning, never as a failure.
    let got = verdicts(Rewrite::V2ServesManifest, checks).await;
    assert_all(
        Rewrite::V2ServesManifest,
        &got,
        |v| matches!(v, Verdict::Warn(_)),
        "warn",
    );
    // On the plain reference (a Parley-only origin) it is the §10 404 not_found: a pass.
    let got = verdicts(Rewrite::McpBindingAsString, checks).await;
    assert_all(Rewrite::McpBindingAsString, &got, Verdict::is_pass, "pass");
}

/// The verdict of each SSP check of `checks` against the variant.
async fn ssp_verdicts(rewrite: Rewrite, checks: &[&str]) -> Vec<(String, Verdict)> {
    let variant = start(rewrite).await;
    let profile = support::reference::proxied_demo_profile(&variant.base_url);
    let target = conform::registry::connect(profile, &ConnectOptions::default(), &["ssp"])
        .await
        .expect("pre-flight");
    let mut suite = support::vectors::suite("ssp").expect("ssp suite");
    suite.checks.retain(|c| checks.contains(&c.id()));
    assert_eq!(suite.checks.len(), checks.len(), "every named check exists");
    let report = run(Arc::new(target), &[suite], &RunOptions::default())
        .await
        .expect("run");
    let out: Vec<(String, Verdict)> = report
        .checks
        .into_iter()
        .map(|c| (c.check, c.verdict))
        .collect();
    assert_eq!(out.len(), checks.len(), "one verdict per check: {out:?}");
    out
}

fn not_failed(v: &Verdict) -> bool {
    matches!(v, Verdict::Pass | Verdict::Warn(_))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ssp_filter_in_either_spelling_passes_and_an_ignored_filter_fails() {
    let checks = &["SSP-DISC-3/filter"];
    let got = ssp_verdicts(Rewrite::SspFilterOnlyType, checks).await;
    // Reported (the note's own spelling is not honoured), never failed.
    assert_all(
        Rewrite::SspFilterOnlyType,
        &got,
        |v| matches!(v, Verdict::Warn(_)),
        "warn",
    );
    let got = ssp_verdicts(Rewrite::SspFilterIgnored, checks).await;
    assert_all(
        Rewrite::SspFilterIgnored,
        &got,
        |v| matches!(v, Verdict::Fail(_)),
        "fail",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ssp_auth_required_without_details_passes_and_another_code_fails() {
    let checks = &[
        "SSP-AUTH-2/api-key",
        "SSP-AUTH-2/oauth2",
        "SSP-AUTH-2/custom",
    ];
    let got = ssp_verdicts(Rewrite::SspAuthRequiredBare, checks).await;
    assert_all(Rewrite::SspAuthRequiredBare, &got, not_failed, "not fail");
    assert!(
        got.iter().all(|(_, v)| matches!(v, Verdict::Warn(_))),
        "the missing details are still reported: {got:?}"
    );
    let got = ssp_verdicts(Rewrite::SspAuthRequiredOtherCode, checks).await;
    assert_all(
        Rewrite::SspAuthRequiredOtherCode,
        &got,
        |v| matches!(v, Verdict::Fail(_)),
        "fail",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operations_keyed_by_name_pass() {
    let checks = &[
        "manifest/core-members",
        "manifest/operations",
        "manifest/dialectic-profile",
        "transport/both-bindings-declared",
    ];
    let got = verdicts(Rewrite::OperationsKeyed, checks).await;
    assert_all(Rewrite::OperationsKeyed, &got, Verdict::is_pass, "pass");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declared_routes_are_followed_by_op_and_raw_steps() {
    // Raw steps written against /v1/... (415, 405, malformed JSON, query strings) and plain
    // operations all reach the declared /alt/ routes; only the advisory check comparing the
    // routes with the §1 table reports the difference.
    let checks = &[
        "shapes/415-text-plain",
        "shapes/415-on-mark",
        "shapes/json-with-charset-accepted",
        "shapes/bodiless-reopen-needs-no-content-type",
        "envelope/http-malformed-json",
        "transport/http-405-delete-v1-messages",
        "transport/http-inbox-query-parameters",
        "transport/request-one-over-max-bytes",
        "reading/tree-nested-by-parent",
        "manifest/operations",
    ];
    let got = verdicts(Rewrite::OtherRoutes, checks).await;
    assert_all(Rewrite::OtherRoutes, &got, Verdict::is_pass, "pass");
    let got = verdicts(
        Rewrite::OtherRoutes,
        &["manifest/operations-reference-routes"],
    )
    .await;
    assert_all(
        Rewrite::OtherRoutes,
        &got,
        |v| matches!(v, Verdict::Warn(_)),
        "warn",
    );
}
