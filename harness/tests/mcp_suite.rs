//! `--suite mcp` (issue 12): the reference passes every MCP-layer check, and each check
//! bites — a proxy in front of the reference that breaks exactly one MCP rule makes the
//! check citing that rule fail.
#![expect(clippy::expect_used, clippy::unwrap_used)] // tests: a panic is the failure report

mod support;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use conform::engine::report::Report;
use conform::engine::run::{RunOptions, run};
use conform::engine::target::ConnectOptions;
use conform::engine::verdict::Verdict;
use serde_json::{Value, json};
use support::proxy::Upstream;

const MODERN: &str = "2026-07-28";
const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// The MCP rule the proxy breaks (each names the check that must then fail).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    None,
    OriginIgnored,
    VersionEcho,
    Initialized200,
    BogusHeaderServed,
    GetJson,
    PingNotEmpty,
    ToolsDuplicated,
    UnknownToolSucceeds,
    ContentMissing,
    DiscoverNoVersions,
    NoResultType,
    VersionHeaderIgnored,
    MethodHeaderIgnored,
    NameHeaderIgnored,
    UnsupportedVersionServed,
    MissingMetaServed,
    NotFoundAs200,
    ModernSessionMinted,
    ParseErrorAs200,
    InvalidRequestCrashes,
    HugeIdWrongCode,
    BatchAnswered,
    UnknownMethodWrongCode,
    NotificationAnswered,
    ToolsRefused,
    /// Fails the request id the duplicate-id probe uses (31) with a 5xx.
    DuplicateIdCrashes,
    NoServerInfo,
    OlderPinned,
    InitializeBadParamsUnknownMethod,
    AbsentHeaderRefused,
    CursorIgnored,
    UnadvertisedServed,
    /// The draft's codes (-32001, -32004) instead of the release's (-32020, -32022).
    DraftCodes,
    /// -32042 (MUST NOT in 2026-07-28, MCP26-7) instead of -32020.
    ForbiddenCode,
    /// -32022 without `data.supported` (MCP26-2).
    NoSupportedList,
    /// -32022 without `data.requested` (MCP26-2, SHOULD).
    NoRequested,
    /// A header mismatch refused with a bare 400 (MCP26-1: an intermediary's answer).
    BareMismatch,
    /// An unknown version refused with a bare 400, the legacy rule (a dual-era server may
    /// read a request naming no served version as legacy traffic).
    LegacyUnsupported,
    /// 2026-07-28 404s without a JSON-RPC body (MCP26-3).
    BareNotFound,
    /// ping and logging/setLevel served in 2026-07-28 (MCP26-3: a dual-era choice).
    RemovedServed,
    /// server/discover's supportedVersions without 2025-03-26 (MCP26-1 exception off).
    No20250326,
    /// A modern request without MCP-Protocol-Version is served (the header is added).
    HeaderlessServed,
    /// Both: the headerless request served by a server that does not serve 2025-03-26.
    HeaderlessServedNo20250326,
}

impl Fault {
    /// server/discover leaves 2025-03-26 out of supportedVersions.
    fn drops_20250326(self) -> bool {
        matches!(self, Self::No20250326 | Self::HeaderlessServedNo20250326)
    }
    /// A modern request without a version header is served.
    fn serves_headerless(self) -> bool {
        matches!(
            self,
            Self::HeaderlessServed | Self::HeaderlessServedNo20250326
        )
    }
}

struct Proxy {
    upstream: Upstream,
    fault: Fault,
}

/// The reference (demo, in memory) behind a proxy breaking `fault`, and an MCP-only run of
/// `--suite mcp` against it.
async fn run_against(fault: Fault) -> Report {
    let server = reference_impl::spawn(
        reference_impl::Config::demo_in_memory(),
        SocketAddr::from(([127, 0, 0, 1], 0)),
    )
    .await
    .expect("reference server");
    let state = Arc::new(Proxy {
        upstream: Upstream::at(format!("http://{}", server.addr)),
        fault,
    });
    let base = support::http::serve(Router::new().fallback(handle).with_state(state)).await;
    let profile = conform::reference::demo_profile(&base);
    let target = conform::registry::connect(profile, &ConnectOptions::default(), &["mcp"])
        .await
        .expect("pre-flight");
    let suite = support::vectors::suite("mcp").expect("suite");
    let report = run(Arc::new(target), &[suite], &RunOptions::default())
        .await
        .expect("run");
    drop(server);
    report
}

fn verdicts(r: &Report) -> BTreeMap<String, &Verdict> {
    r.checks
        .iter()
        .map(|c| (c.check.clone(), &c.verdict))
        .collect()
}

fn body_json(body: &Bytes) -> Option<Value> {
    serde_json::from_slice(body).ok()
}

fn method_of(body: &Option<Value>) -> String {
    body.as_ref()
        .and_then(|b| b.get("method"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

fn header(h: &HeaderMap, name: &str) -> Option<String> {
    h.get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

fn set(h: &mut HeaderMap, name: &'static str, value: &str) {
    h.insert(name, HeaderValue::from_str(value).expect("header value"));
}

fn json_reply(status: StatusCode, v: &Value) -> Response {
    (
        status,
        [("content-type", "application/json")],
        v.to_string(),
    )
        .into_response()
}

/// Request-side breakage: what the server would have let through.
fn break_request(f: Fault, h: &mut HeaderMap, body: &mut Option<Value>) {
    let meta_version = body
        .as_ref()
        .and_then(|b| {
            b.pointer(&format!(
                "/params/_meta/{}",
                META_VERSION.replace('/', "~1")
            ))
        })
        .and_then(Value::as_str)
        .map(str::to_string);
    match f {
        Fault::OriginIgnored => {
            h.remove("origin");
        }
        _ if f.serves_headerless()
            && !h.contains_key("mcp-protocol-version")
            && meta_version.as_deref() == Some(MODERN) =>
        {
            set(h, "mcp-protocol-version", MODERN);
        }
        Fault::CursorIgnored if method_of(body) == "tools/list" => {
            if let Some(p) = body
                .as_mut()
                .and_then(|b| b.get_mut("params"))
                .and_then(Value::as_object_mut)
            {
                p.remove("cursor");
            }
        }
        Fault::BogusHeaderServed
            if header(h, "mcp-protocol-version")
                .is_some_and(|v| !v.starts_with("20") || v.starts_with("1999")) =>
        {
            set(h, "mcp-protocol-version", "2025-11-25");
        }
        Fault::VersionHeaderIgnored => {
            if let Some(v) = meta_version {
                set(h, "mcp-protocol-version", &v);
            }
        }
        Fault::MethodHeaderIgnored if h.contains_key("mcp-method") => {
            let m = method_of(body);
            set(h, "mcp-method", &m);
        }
        Fault::NameHeaderIgnored if h.contains_key("mcp-name") => {
            if let Some(n) = body
                .as_ref()
                .and_then(|b| b.pointer("/params/name"))
                .and_then(Value::as_str)
            {
                set(h, "mcp-name", n);
            }
        }
        Fault::UnsupportedVersionServed if meta_version.as_deref() == Some("1999-01-01") => {
            set(h, "mcp-protocol-version", MODERN);
            if let Some(b) = body.as_mut() {
                b["params"]["_meta"][META_VERSION] = json!(MODERN);
            }
        }
        Fault::MissingMetaServed
            if header(h, "mcp-protocol-version").as_deref() == Some(MODERN)
                && meta_version.is_none() =>
        {
            if let Some(p) = body
                .as_mut()
                .and_then(|b| b.get_mut("params"))
                .and_then(Value::as_object_mut)
            {
                p.insert(
                    "_meta".into(),
                    json!({META_VERSION: MODERN, "io.modelcontextprotocol/clientCapabilities": {}}),
                );
            }
        }
        _ => {}
    }
}

/// Response-side breakage of a 2026-07-28 answer `v` to `method` (MCP26-1, -2, -7).
fn break_modern_message(f: Fault, method: &str, v: &mut Value) {
    match f {
        _ if f.drops_20250326() && method == "server/discover" => {
            if let Some(vs) = v
                .pointer_mut("/result/supportedVersions")
                .and_then(Value::as_array_mut)
            {
                vs.retain(|x| x != "2025-03-26");
            }
        }
        Fault::DraftCodes => {
            let draft = match v.pointer("/error/code").and_then(Value::as_i64) {
                Some(-32020) => -32001,
                Some(-32022) => -32004,
                _ => return,
            };
            v["error"]["code"] = json!(draft);
        }
        Fault::ForbiddenCode if v.pointer("/error/code") == Some(&json!(-32020)) => {
            v["error"]["code"] = json!(-32042);
        }
        Fault::NoSupportedList | Fault::NoRequested
            if v.pointer("/error/code") == Some(&json!(-32022)) =>
        {
            let member = if f == Fault::NoSupportedList {
                "supported"
            } else {
                "requested"
            };
            if let Some(d) = v.pointer_mut("/error/data").and_then(Value::as_object_mut) {
                d.remove(member);
            }
        }
        _ => {}
    }
}

/// Response-side breakage of a JSON-RPC answer `v` to `req`.
fn break_message(f: Fault, req: &Value, v: &mut Value) {
    let method = method_of(&Some(req.clone()));
    break_modern_message(f, &method, v);
    match f {
        Fault::VersionEcho if method == "initialize" => {
            if let Some(asked) = req.pointer("/params/protocolVersion").cloned() {
                v["result"]["protocolVersion"] = asked;
            }
        }
        Fault::PingNotEmpty if method == "ping" && v.get("result").is_some() => {
            v["result"] = json!({"pong": true});
        }
        Fault::ToolsDuplicated if method == "tools/list" => {
            if let Some(t) = v.pointer_mut("/result/tools").and_then(Value::as_array_mut)
                && let Some(first) = t.first().cloned()
            {
                t.push(first);
            }
        }
        Fault::UnknownToolSucceeds if method == "tools/call" && v.get("error").is_some() => {
            *v = json!({"jsonrpc": "2.0", "id": v["id"], "result": {"content": []}});
        }
        Fault::ContentMissing if method == "tools/call" => {
            if let Some(r) = v.get_mut("result").and_then(Value::as_object_mut) {
                r.remove("content");
            }
        }
        Fault::DiscoverNoVersions if method == "server/discover" => {
            if let Some(r) = v.get_mut("result").and_then(Value::as_object_mut) {
                r.remove("supportedVersions");
            }
        }
        Fault::NoResultType => {
            if let Some(r) = v.get_mut("result").and_then(Value::as_object_mut) {
                r.remove("resultType");
            }
        }
        Fault::UnknownMethodWrongCode if v.pointer("/error/code") == Some(&json!(-32601)) => {
            v["error"]["code"] = json!(-32600);
        }
        Fault::NoServerInfo if method == "initialize" => {
            if let Some(r) = v.get_mut("result").and_then(Value::as_object_mut) {
                r.remove("serverInfo");
            }
        }
        Fault::OlderPinned if method == "initialize" && v.get("result").is_some() => {
            v["result"]["protocolVersion"] = json!("2025-11-25");
        }
        Fault::InitializeBadParamsUnknownMethod
            if method == "initialize" && v.get("error").is_some() =>
        {
            v["error"]["code"] = json!(-32601);
        }
        Fault::UnadvertisedServed
            if v.pointer("/error/code") == Some(&json!(-32601)) && method.ends_with("/list") =>
        {
            *v = json!({"jsonrpc": "2.0", "id": v["id"], "result": {"prompts": [], "resources": []}});
        }
        Fault::ToolsRefused if method == "tools/list" => {
            *v = json!({"jsonrpc": "2.0", "id": v["id"], "error": {"code": -32601, "message": "tools/list"}});
        }
        _ => {}
    }
}

async fn handle(
    State(p): State<Arc<Proxy>>,
    method: Method,
    uri: Uri,
    mut headers: HeaderMap,
    body: Bytes,
) -> Response {
    let f = p.fault;
    let raw = String::from_utf8_lossy(&body).into_owned();
    if f == Fault::GetJson && method == Method::GET {
        return json_reply(StatusCode::OK, &json!({}));
    }
    if f == Fault::BatchAnswered && raw.trim_start().starts_with('[') {
        return json_reply(
            StatusCode::OK,
            &json!([{"jsonrpc": "2.0", "id": 21, "result": {}}, {"jsonrpc": "2.0", "id": 22, "result": {}}]),
        );
    }
    if f == Fault::HugeIdWrongCode && raw.contains("18446744073709551616") {
        return json_reply(
            StatusCode::OK,
            &json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32602, "message": "bad id"}}),
        );
    }
    if f == Fault::DuplicateIdCrashes && raw.contains("\"id\":31") {
        return (StatusCode::BAD_GATEWAY, "upstream confused").into_response();
    }
    if f == Fault::AbsentHeaderRefused
        && method == Method::POST
        && !headers.contains_key("mcp-protocol-version")
        && !raw.contains("\"initialize\"")
    {
        return json_reply(
            StatusCode::BAD_REQUEST,
            &json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "MCP-Protocol-Version required"}}),
        );
    }
    let mut req = body_json(&body);
    if f == Fault::InvalidRequestCrashes
        && req.as_ref().and_then(|b| b.get("jsonrpc")) == Some(&json!("1.0"))
    {
        return (StatusCode::INTERNAL_SERVER_ERROR, "panic").into_response();
    }
    break_request(f, &mut headers, &mut req);
    let sent = req
        .as_ref()
        .map_or(body.clone(), |v| Bytes::from(v.to_string()));
    let path = uri.path_and_query().map_or("/", |x| x.as_str());
    let (mut status, mut hs, bytes) = p.upstream.forward(&method, path, &headers, sent).await;
    let modern = header(&headers, "mcp-protocol-version").as_deref() == Some(MODERN);
    match f {
        Fault::Initialized200 | Fault::NotificationAnswered if status == StatusCode::ACCEPTED => {
            let m = method_of(&req);
            if f == Fault::NotificationAnswered || m == "notifications/initialized" {
                return json_reply(StatusCode::OK, &json!({"jsonrpc": "2.0", "result": {}}));
            }
        }
        Fault::NotFoundAs200 if status == StatusCode::NOT_FOUND => status = StatusCode::OK,
        Fault::ParseErrorAs200 if req.is_none() && status.is_client_error() => {
            status = StatusCode::OK;
        }
        Fault::ModernSessionMinted if modern => set(&mut hs, "mcp-session-id", "minted-by-fault"),
        _ => {}
    }
    if let Some(resp) = break_modern(f, modern, status, req.as_ref(), &bytes) {
        return resp;
    }
    let mut out = bytes.to_vec();
    if let (Some(r), Ok(mut v)) = (req.as_ref(), serde_json::from_slice::<Value>(&bytes)) {
        break_message(f, r, &mut v);
        out = v.to_string().into_bytes();
    }
    hs.remove("content-length");
    let mut resp = (status, out).into_response();
    resp.headers_mut().extend(hs);
    resp
}

/// Answer-side breakage of the 2026-07-28 status mapping (MCP26-1, MCP26-3): `Some` is the
/// answer to send instead of the reference's.
fn break_modern(
    f: Fault,
    modern: bool,
    status: StatusCode,
    req: Option<&Value>,
    bytes: &Bytes,
) -> Option<Response> {
    let code = serde_json::from_slice::<Value>(bytes)
        .ok()
        .and_then(|v| v.pointer("/error/code").and_then(Value::as_i64));
    let method = method_of(&req.cloned());
    match f {
        Fault::BareMismatch if status == StatusCode::BAD_REQUEST && code == Some(-32020) => {
            Some((StatusCode::BAD_REQUEST, "Bad Request").into_response())
        }
        Fault::LegacyUnsupported if status == StatusCode::BAD_REQUEST && code == Some(-32022) => {
            Some((StatusCode::BAD_REQUEST, "Bad Request").into_response())
        }
        Fault::BareNotFound if modern && status == StatusCode::NOT_FOUND => {
            Some((StatusCode::NOT_FOUND, "Not Found").into_response())
        }
        Fault::RemovedServed
            if modern
                && status == StatusCode::NOT_FOUND
                && (method == "ping" || method == "logging/setLevel") =>
        {
            let id = req.and_then(|r| r.get("id")).cloned();
            Some(json_reply(
                StatusCode::OK,
                &json!({"jsonrpc": "2.0", "id": id, "result": {}}),
            ))
        }
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_reference_passes_every_mcp_check() {
    let target = conform::reference::spawn(
        &ConnectOptions::default(),
        &conform::registry::select(&["mcp".into()]).unwrap(),
    )
    .await
    .expect("reference");
    let suite = support::vectors::suite("mcp").expect("suite");
    let report = run(Arc::new(target), &[suite], &RunOptions::default())
        .await
        .expect("run");
    let v = verdicts(&report);
    let bad: Vec<_> = v
        .iter()
        .filter(|(_, v)| {
            matches!(
                v,
                Verdict::Fail(_) | Verdict::HarnessError { .. } | Verdict::Warn(_)
            )
        })
        .collect();
    assert!(
        bad.is_empty(),
        "the reference must pass every MCP check: {bad:#?}"
    );
    // The reference is stateless: only the session checks are not applicable, nothing else
    // may silently not run.
    let na: Vec<&String> = v
        .iter()
        .filter(|(_, v)| matches!(v, Verdict::Unsupported { .. }))
        .map(|(k, _)| k)
        .collect();
    // The stdio checks need a command line: tools/mcp-third-party/run.sh runs them against
    // `reference-server stdio`.
    assert_eq!(
        na,
        [
            "MCP-LC-12/missing-session",
            "MCP-LC-8/unknown-session",
            "MCP-LC-9/delete-session",
            "MCP-ST-1/stdout-only-jsonrpc",
            "MCP-ST-2/garbage-line",
        ]
    );
}

/// The proxy alone (no fault) changes nothing but the Host the reference sees (which is how
/// `foreign_host_served_warns_or_2` gets a server that serves a foreign Host).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_proxy_alone_breaks_nothing() {
    let r = run_against(Fault::None).await;
    let fails: Vec<_> = r
        .checks
        .iter()
        .filter(|c| matches!(c.verdict, Verdict::Fail(_) | Verdict::HarnessError { .. }))
        .map(|c| &c.check)
        .collect();
    assert!(fails.is_empty(), "{fails:?}");
}

/// `fault` makes `check` fail (a MUST rule) or, for a SHOULD rule, warn.
async fn assert_bites(fault: Fault, check: &str) {
    let r = run_against(fault).await;
    let v = verdicts(&r);
    let fails: Vec<&String> = v
        .iter()
        .filter(|(_, v)| matches!(v, Verdict::Fail(_) | Verdict::Warn(_)))
        .map(|(k, _)| k)
        .collect();
    eprintln!("{fault:?}: failing or warning checks {fails:?}");
    let catalogue = support::vectors::catalogue("mcp").expect("catalogue");
    let primary = check.split('/').next().unwrap_or(check);
    let must = catalogue.any_required(&[primary]);
    let bit = match v.get(check) {
        Some(Verdict::Fail(_)) => must,
        Some(Verdict::Warn(_)) => !must,
        _ => false,
    };
    let want = if must { "fail" } else { "warn" };
    assert!(bit, "{fault:?}: {check} did not {want}: {:?}", v.get(check));
}

/// `fault` makes each of `checks` (MUST rules) warn, not fail: the answer is one the
/// 2026-07-28 note accepts with a warning.
async fn assert_warns(fault: Fault, checks: &[&str]) {
    let r = run_against(fault).await;
    let v = verdicts(&r);
    for check in checks {
        assert!(
            matches!(v.get(*check), Some(Verdict::Warn(_))),
            "{fault:?}: {check} did not warn: {:?}",
            v.get(*check)
        );
    }
    let fails: Vec<&String> = v
        .iter()
        .filter(|(_, v)| matches!(v, Verdict::Fail(_) | Verdict::HarnessError { .. }))
        .map(|(k, _)| k)
        .collect();
    assert!(
        fails.is_empty(),
        "{fault:?}: a warned answer failed {fails:?}"
    );
}

/// `fault` leaves each of `checks` passing, and nothing fails.
async fn assert_passes(fault: Fault, checks: &[&str]) {
    let r = run_against(fault).await;
    let v = verdicts(&r);
    for check in checks {
        assert!(
            matches!(v.get(*check), Some(Verdict::Pass)),
            "{fault:?}: {check} did not pass: {:?}",
            v.get(*check)
        );
    }
    let fails: Vec<&String> = v
        .iter()
        .filter(|(_, v)| matches!(v, Verdict::Fail(_) | Verdict::HarnessError { .. }))
        .map(|(k, _)| k)
        .collect();
    assert!(fails.is_empty(), "{fault:?}: {fails:?}");
}

/// MCP26-1 exception: a server that serves 2025-03-26 may read a request without
/// MCP-Protocol-Version as 2025-03-26 and serve it; one that does not, refusing it with
/// -32020 (what the reference answers), passes as well.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_headerless_request_is_judged_only_without_2025_03_26() {
    assert_passes(
        Fault::HeaderlessServed,
        &["MCP-MD-3/version-header-mismatch"],
    )
    .await;
    assert_passes(Fault::No20250326, &["MCP-MD-3/version-header-mismatch"]).await;
}

/// The 2026-07-28 draft's codes are warned for their condition (MCP26-1, MCP26-2).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn draft_codes_warn_md_3_to_6() {
    assert_warns(
        Fault::DraftCodes,
        &[
            "MCP-MD-3/version-header-mismatch",
            "MCP-MD-4/method-header-mismatch",
            "MCP-MD-5/name-header-mismatch",
            "MCP-MD-6/unsupported-version",
        ],
    )
    .await;
}

/// MCP26-1: a bare 400 for a header fault (an intermediary's answer) is warned.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn bare_400_for_a_header_fault_warns_md_4() {
    assert_warns(
        Fault::BareMismatch,
        &[
            "MCP-MD-3/version-header-mismatch",
            "MCP-MD-4/method-header-mismatch",
        ],
    )
    .await;
}

/// MCP26-2: `data.requested` is a SHOULD.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_requested_version_warns_md_6() {
    assert_warns(Fault::NoRequested, &["MCP-MD-6/unsupported-version"]).await;
}

/// MCP26-2 and the note's MCP26-4 scope: the reference serves legacy eras too, so a bare 400
/// (the legacy rule) for a version it does not serve is warned, not failed.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn legacy_400_for_an_unknown_version_warns_md_6() {
    assert_warns(Fault::LegacyUnsupported, &["MCP-MD-6/unsupported-version"]).await;
}

/// MCP26-3: a dual-era server may keep ping and logging/setLevel.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn removed_methods_served_warn_md_8() {
    assert_warns(Fault::RemovedServed, &["MCP-MD-8/unknown-methods"]).await;
}

macro_rules! bites {
    ($($name:ident: $fault:ident => $check:literal;)*) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
        async fn $name() {
            assert_bites(Fault::$fault, $check).await;
        }
    )*};
}

bites! {
    foreign_origin_served_fails_or_1: OriginIgnored => "MCP-OR-1/foreign-origin";
    echoed_versions_fail_lc_2: VersionEcho => "MCP-LC-2/negotiation";
    initialized_200_fails_lc_5: Initialized200 => "MCP-LC-5/initialized-202";
    bogus_version_header_served_fails_lc_6: BogusHeaderServed => "MCP-LC-6/bogus-version-header";
    get_answering_json_fails_lc_10: GetJson => "MCP-LC-10/get";
    ping_with_a_result_fails_lc_11: PingNotEmpty => "MCP-LC-11/ping";
    duplicate_tools_fail_tl_1: ToolsDuplicated => "MCP-TL-1/list";
    unknown_tool_success_fails_tl_3: UnknownToolSucceeds => "MCP-TL-3/unknown-tool";
    result_without_content_fails_tl_4: ContentMissing => "MCP-TL-4/call-result";
    discover_without_versions_fails_md_1: DiscoverNoVersions => "MCP-MD-1/discover";
    results_without_result_type_fail_md_2: NoResultType => "MCP-MD-2/result-type";
    version_header_mismatch_served_fails_md_3: VersionHeaderIgnored => "MCP-MD-3/version-header-mismatch";
    method_header_mismatch_served_fails_md_4: MethodHeaderIgnored => "MCP-MD-4/method-header-mismatch";
    name_header_mismatch_served_fails_md_5: NameHeaderIgnored => "MCP-MD-5/name-header-mismatch";
    unsupported_version_served_fails_md_6: UnsupportedVersionServed => "MCP-MD-6/unsupported-version";
    missing_meta_served_fails_md_7: MissingMetaServed => "MCP-MD-7/missing-meta";
    unknown_method_200_fails_md_8: NotFoundAs200 => "MCP-MD-8/unknown-methods";
    modern_session_fails_md_9: ModernSessionMinted => "MCP-MD-9/no-session";
    parse_error_200_fails_rpc_1: ParseErrorAs200 => "MCP-RPC-1/unparsable";
    invalid_request_5xx_fails_rpc_2: InvalidRequestCrashes => "MCP-RPC-2/invalid-requests";
    huge_id_wrong_code_fails_rpc_3: HugeIdWrongCode => "MCP-RPC-3/huge-id";
    batch_answered_warns_rpc_4: BatchAnswered => "MCP-RPC-4/batch";
    unknown_method_wrong_code_fails_rpc_5: UnknownMethodWrongCode => "MCP-RPC-5/unknown-method";
    notification_answered_fails_rpc_6: NotificationAnswered => "MCP-RPC-6/notification";
    advertised_tools_refused_fails_cap_1: ToolsRefused => "MCP-CAP-1/advertised-served";
    duplicate_ids_5xx_warns_rpc_7: DuplicateIdCrashes => "MCP-RPC-7/duplicate-ids";
    no_server_info_fails_lc_1: NoServerInfo => "MCP-LC-1/initialize";
    older_versions_pinned_warn_lc_3: OlderPinned => "MCP-LC-3/older-versions";
    initialize_bad_params_as_unknown_method_fails_lc_4: InitializeBadParamsUnknownMethod => "MCP-LC-4/initialize-bad-params";
    absent_version_header_refused_warns_lc_7: AbsentHeaderRefused => "MCP-LC-7/absent-version-header";
    cursor_ignored_warns_tl_2: CursorIgnored => "MCP-TL-2/bad-cursor";
    unadvertised_capability_served_warns_cap_2: UnadvertisedServed => "MCP-CAP-2/unadvertised-refused";
    foreign_host_served_warns_or_2: None => "MCP-OR-2/foreign-host";
    forbidden_code_fails_md_4: ForbiddenCode => "MCP-MD-4/method-header-mismatch";
    no_supported_list_fails_md_6: NoSupportedList => "MCP-MD-6/unsupported-version";
    bare_404_fails_md_8: BareNotFound => "MCP-MD-8/unknown-methods";
    headerless_served_without_2025_03_26_fails_md_3: HeaderlessServedNo20250326 => "MCP-MD-3/version-header-mismatch";
}

/// A minimal stdio MCP server in Python: `ok` is correct, `noisy` logs to stdout, `fragile`
/// exits on a line that is no JSON-RPC message.
const FAKE_STDIO: &str = r#"
import json, sys
mode = sys.argv[1]
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        if mode == "fragile":
            sys.exit(1)
        print(json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}}), flush=True)
        continue
    if not isinstance(m, dict) or "method" not in m:
        if mode == "fragile":
            sys.exit(1)
        continue
    if "id" not in m:
        continue
    if mode == "noisy":
        print("handling " + m["method"], flush=True)
    result = {}
    if m["method"] == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "fake", "version": "0"}}
    elif m["method"] == "tools/list":
        result = {"tools": []}
    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": result}), flush=True)
"#;

async fn stdio_verdicts(mode: &str) -> BTreeMap<String, Verdict> {
    let text = format!(
        "format_version = 1\nbase_url = \"{}\"\n[mcp]\nstdio_command = [\"python3\", \"-c\", {}, \"{mode}\"]\n",
        support::http::refused_base(),
        toml::Value::from(FAKE_STDIO)
    );
    let protocols = conform::registry::select(&["mcp".into()]).unwrap();
    let profile = conform::engine::protocol::parse_profile(&text, &protocols).expect("profile");
    let target = conform::registry::connect(profile, &ConnectOptions::default(), &["mcp"])
        .await
        .expect("pre-flight");
    let suite = support::vectors::suite("mcp").expect("suite");
    let opts = RunOptions {
        filter: Some("MCP-ST-*".into()),
        ..RunOptions::default()
    };
    let report = run(Arc::new(target), &[suite], &opts).await.expect("run");
    report
        .checks
        .into_iter()
        .map(|c| (c.check, c.verdict))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_correct_stdio_server_passes_the_stdio_checks() {
    let v = stdio_verdicts("ok").await;
    assert_eq!(v.len(), 2);
    assert!(v.values().all(Verdict::is_pass), "{v:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logging_to_stdout_fails_st_1() {
    let v = stdio_verdicts("noisy").await;
    assert!(
        matches!(v["MCP-ST-1/stdout-only-jsonrpc"], Verdict::Fail(_)),
        "{v:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dying_on_a_garbage_line_fails_st_2() {
    let v = stdio_verdicts("fragile").await;
    assert!(
        matches!(v["MCP-ST-2/garbage-line"], Verdict::Fail(_)),
        "{v:#?}"
    );
    assert!(v["MCP-ST-1/stdout-only-jsonrpc"].is_pass(), "{v:#?}");
}

/// A server may keep a POST's event stream open after the response (it only SHOULD close
/// it): the harness reads up to the response and never waits for the stream's end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_stream_left_open_after_the_response_is_not_a_timeout() {
    use futures::StreamExt as _;
    let router = Router::new().fallback(|| async {
        let event = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n";
        let open = futures::stream::iter([Ok::<_, std::convert::Infallible>(Bytes::from(event))])
            .chain(futures::stream::pending());
        (
            [("content-type", "text/event-stream")],
            axum::body::Body::from_stream(open),
        )
    });
    let base = support::http::serve(router).await;
    let client = conform::transport::Client::new(
        std::time::Duration::from_secs(2),
        conform::transport::limits::Limits::default(),
    )
    .unwrap();
    let mut w = conform::mcp::wire::Wire::new(client, &format!("{base}/mcp"), None);
    let a = w
        .post(&[], &json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .await
        .unwrap_or_else(|f| panic!("{}", f.message));
    assert_eq!(a.result(), Some(&json!({})));
}
