//! Issue 14: every legal variant really changes what a client sees. `conform`'s
//! `variants_accepted` test proves the suite accepts each variant; that proof is worth
//! nothing for a variant that silently does nothing, so here each one is switched on alone
//! and its observable difference from the reference is asserted on the wire.

#![cfg(feature = "variants")]
#![expect(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use std::time::Duration;

use reference_impl::variants::Variant;
use reference_impl::{Config, RunningServer};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

async fn server(variant: &str) -> RunningServer {
    let mut config = Config::demo_in_memory();
    config.variants = vec![variant.to_string()];
    reference_impl::spawn(config, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap()
}

/// One observation: status, lowercase header map as text lines, body.
struct Seen {
    status: u16,
    headers: reqwest::header::HeaderMap,
    body: String,
}

impl Seen {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
    fn header(&self, name: &str) -> String {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string()
    }
}

async fn send(
    base: &str,
    method: &str,
    path: &str,
    auth: &[(&str, &str)],
    body: Option<Value>,
) -> Seen {
    let client = reqwest::Client::new();
    let mut req = client.request(method.parse().unwrap(), format!("{base}{path}"));
    for (k, v) in auth {
        req = req.header(*k, *v);
    }
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let body = resp.text().await.unwrap();
    Seen {
        status,
        headers,
        body,
    }
}

/// The response head exactly as written on the socket (header casing is invisible to reqwest).
async fn raw_head(addr: std::net::SocketAddr, path: &str) -> String {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut out))
        .await
        .unwrap()
        .unwrap();
    let text = String::from_utf8_lossy(&out).into_owned();
    text.split("\r\n\r\n").next().unwrap_or("").to_string()
}

const BEARER_A: (&str, &str) = ("authorization", "Bearer demo-agent-a");
const API_KEY: (&str, &str) = ("x-api-key", "demo-ssp-key");

/// Polls an SSP status URL until the execution is terminal (bounded by a timeout).
async fn until_terminal(status_url: &str, auth: &[(&str, &str)]) -> Value {
    let poll = async {
        loop {
            let s = send("", "GET", status_url, auth, None).await.json();
            if ["completed", "failed", "timeout"].contains(&s["status"].as_str().unwrap_or("")) {
                return s;
            }
            tokio::task::yield_now().await;
        }
    };
    tokio::time::timeout(Duration::from_secs(15), poll)
        .await
        .expect("the execution reaches a terminal state")
}

/// Invokes `skill` (slug) from the index and returns the accepted response and the descriptor.
async fn invoke(base: &str, slug: &str, inputs: Value, auth: &[(&str, &str)]) -> (Seen, Value) {
    let index = send(base, "GET", "/.well-known/skill-sharing", auth, None)
        .await
        .json();
    let entry = index["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == format!("conform/{slug}"))
        .cloned()
        .unwrap();
    let d = send(
        "",
        "GET",
        entry["descriptor_url"].as_str().unwrap(),
        auth,
        None,
    )
    .await
    .json();
    let call = json!({"caller": {"id": "t", "type": "service"}, "skill_id": format!("conform/{slug}"), "inputs": inputs});
    let url = d["endpoint"]["url"].as_str().unwrap().to_string();
    (send("", "POST", &url, auth, Some(call)).await, d)
}

/// POSTs raw JSON text (`body`) with `auth`; the status.
/// The descriptor's `endpoint.<key>` template with the accepted execution's id in it.
fn execution_url(accepted: &Seen, descriptor: &Value, key: &str) -> String {
    let id = accepted.json()["execution_id"]
        .as_str()
        .unwrap()
        .to_string();
    descriptor["endpoint"][key]
        .as_str()
        .unwrap()
        .replace("{execution_id}", &id)
}

async fn send_raw(base: &str, path: &str, auth: (&str, &str), body: String) -> u16 {
    reqwest::Client::new()
        .post(format!("{base}{path}"))
        .header(auth.0, auth.1)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// What `variant` changes, observed against a server running it alone.
async fn observe(variant: Variant) {
    let name = variant.name();
    let srv = server(name).await;
    let base = srv.base_url();
    let manifest = || async { send(&base, "GET", "/v1/manifest", &[], None).await };
    match variant {
        Variant::ProfileKindsAsObjects => {
            assert!(manifest().await.json()["profiles"][0]["kinds"][0].is_object());
        }
        Variant::OperationBindingsAsStrings => {
            assert!(manifest().await.json()["operations"][0]["mcp"].is_string());
        }
        Variant::ManifestInformationalMembers => {
            assert!(manifest().await.json()["server"].is_object());
        }
        Variant::ServerVersionPrerelease => {
            let m = manifest().await.json();
            assert!(m["version"].as_str().unwrap().contains("-rc."));
        }
        Variant::IdentityRealmForum => {
            let w = send(&base, "GET", "/v1/whoami", &[BEARER_A], None)
                .await
                .json();
            assert_eq!(w["identity"], "forum:agent-a");
            assert_eq!(manifest().await.json()["identity"]["realm"], "forum");
        }
        Variant::OperationRoutesMoved => {
            let post = json!({"kind": "ask", "body": "moved?"});
            let old = send(
                &base,
                "POST",
                "/v1/messages",
                &[BEARER_A],
                Some(post.clone()),
            )
            .await;
            assert_eq!(old.status, 404);
            let new = send(
                &base,
                "POST",
                "/forum/api/messages",
                &[BEARER_A],
                Some(post),
            )
            .await;
            assert_eq!(new.status, 201);
        }
        Variant::ForeignNotFoundShape => {
            let r = send(&base, "GET", "/v2/manifest", &[], None).await;
            assert_eq!(
                (r.status, r.json()["error"]["code"].clone()),
                (404, json!("SKILL_NOT_FOUND"))
            );
        }
        Variant::BlankBodyAccepted => {
            let post = json!({"kind": "ask", "body": " \t\n "});
            let r = send(&base, "POST", "/v1/messages", &[BEARER_A], Some(post)).await;
            assert_eq!(
                (r.status, r.json()["message"]["body"].clone()),
                (201, json!(" \t\n "))
            );
            let t = r.json()["thread"]["id"].as_str().unwrap().to_string();
            let read = send(&base, "GET", &format!("/v1/threads/{t}"), &[BEARER_A], None).await;
            assert_eq!(
                read.json()["messages"][0]["body"],
                " \t\n ",
                "stored as sent"
            );
        }
        Variant::LimitsLarger => {
            assert_eq!(manifest().await.json()["limits"]["inbox_limit_max"], 1000);
            // 70 KB of JSON (over the reference's 64 KiB): accepted, so enforced as declared.
            let big = format!(
                "{{\"kind\": \"ask\", \"body\": \"big\"{}}}",
                " ".repeat(70_000)
            );
            let r = send_raw(&base, "/v1/messages", BEARER_A, big).await;
            assert_eq!(r, 201);
        }
        Variant::InboxLimitsSmall => {
            assert_eq!(manifest().await.json()["limits"]["inbox_limit_max"], 25);
        }
        Variant::EvidenceLimitsSmall => {
            assert_eq!(manifest().await.json()["limits"]["evidence_max"], 3);
        }
        Variant::RequestMax16k => {
            let big = json!({"kind": "ask", "body": "a".repeat(20_000)});
            let r = send(&base, "POST", "/v1/messages", &[BEARER_A], Some(big)).await;
            assert_eq!(r.status, 413, "enforced, not only declared");
        }
        Variant::QuotaLower => {
            assert_eq!(manifest().await.json()["limits"]["writes_per_minute"], 3000);
        }
        Variant::ExtraResponseMembers => {
            let w = send(&base, "GET", "/v1/whoami", &[BEARER_A], None)
                .await
                .json();
            assert!(w.get("x_server").is_some());
        }
        Variant::MembersReversed => {
            let m = manifest().await;
            assert!(!m.body.starts_with("{\"parley\""), "{}", &m.body[..40]);
            // An MCP tool result's `structuredContent` is reversed too (once: the envelope's
            // rewrite must not reverse it back).
            let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}});
            let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "whoami", "arguments": {}, "_meta": meta}});
            let headers = [
                BEARER_A,
                ("mcp-method", "tools/call"),
                ("mcp-name", "whoami"),
                ("mcp-protocol-version", "2026-07-28"),
                ("accept", "application/json, text/event-stream"),
            ];
            let r = send(&base, "POST", "/mcp", &headers, Some(call))
                .await
                .json();
            let sc = r["result"]["structuredContent"].as_object().unwrap();
            let first = sc.keys().next().unwrap();
            assert_ne!(first, "identity", "structuredContent not reversed: {sc:?}");
        }
        Variant::PrettyJson => assert!(manifest().await.body.contains("\n  ")),
        Variant::JsonCharsetParameter => {
            assert!(
                manifest()
                    .await
                    .header("content-type")
                    .contains("charset=utf-8")
            );
        }
        Variant::ChunkedResponses => {
            let m = manifest().await;
            assert!(m.header("content-length").is_empty(), "no Content-Length");
            assert!(m.json()["parley"] == "1");
        }
        Variant::RefusalMessagesFrench => {
            let r = send(&base, "GET", "/v1/whoami", &[], None).await.json();
            assert!(r["error"]["message"].as_str().unwrap().contains("refusée"));
        }
        Variant::TimestampsWithOffset => {
            let post = json!({"kind": "ask", "body": "when?"});
            let r = send(&base, "POST", "/v1/messages", &[BEARER_A], Some(post))
                .await
                .json();
            assert!(
                r["message"]["created_at"]
                    .as_str()
                    .unwrap()
                    .ends_with("+00:00")
            );
        }
        Variant::RetryAfterHttpDate => {
            let limited = ("authorization", "Bearer demo-limited");
            let mut last = None;
            for i in 0..8 {
                let post = json!({"kind": "ask", "body": format!("quota {i}")});
                last = Some(send(&base, "POST", "/v1/messages", &[limited], Some(post)).await);
            }
            let last = last.unwrap();
            assert_eq!(last.status, 429);
            assert!(
                last.header("retry-after").ends_with(" GMT"),
                "{}",
                last.header("retry-after")
            );
        }
        Variant::TitleCaseHeaders => {
            let head = raw_head(srv.addr, "/v1/manifest").await;
            assert!(head.contains("\r\nContent-Type: "), "{head}");
        }
        Variant::TransportRefusalsPlain => {
            let long = format!("/v1/manifest?pad={}", "a".repeat(16 * 1024));
            let r = send(&base, "GET", &long, &[], None).await;
            assert_eq!(r.status, 414);
            assert!(r.header("content-type").starts_with("text/plain"));
        }
        Variant::ConnectionClose => {
            assert_eq!(manifest().await.header("connection"), "close");
        }
        Variant::SspPrivateDescriptor404 => {
            let index = send(&base, "GET", "/.well-known/skill-sharing", &[API_KEY], None)
                .await
                .json();
            let private = index["skills"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["access"] == "private")
                .cloned()
                .unwrap();
            let r = send(
                "",
                "GET",
                private["descriptor_url"].as_str().unwrap(),
                &[],
                None,
            )
            .await;
            assert_eq!(r.status, 404);
        }
        Variant::SspEarlyResult409 => {
            let (accepted, d) =
                invoke(&base, "slow-task", json!({"delay_ms": 3000}), &[API_KEY]).await;
            let url = execution_url(&accepted, &d, "result_url");
            assert_eq!(send("", "GET", &url, &[API_KEY], None).await.status, 409);
        }
        Variant::SspUnknownFilterEmpty => {
            let r = send(
                &base,
                "GET",
                "/.well-known/skill-sharing?capability_type=bogus",
                &[],
                None,
            )
            .await;
            assert_eq!((r.status, r.json()["skills"].clone()), (200, json!([])));
        }
        Variant::SspFilterRegistrySpelling => {
            let q = |query: &'static str| {
                let base = base.clone();
                async move {
                    let path = format!("/.well-known/skill-sharing{query}");
                    send(&base, "GET", &path, &[], None).await.json()["skills"]
                        .as_array()
                        .map_or(0, Vec::len)
                }
            };
            let all = q("").await;
            assert!(all > 1);
            assert_eq!(
                q("?capability_type=api").await,
                all,
                "capability_type ignored"
            );
            assert!(q("?type=api").await < all, "type filters");
        }
        Variant::SspFilterSpellingRefused => {
            let q = |query: &'static str| {
                let base = base.clone();
                async move {
                    let path = format!("/.well-known/skill-sharing{query}");
                    send(&base, "GET", &path, &[], None).await
                }
            };
            let refused = q("?capability_type=api").await;
            assert_eq!(refused.status, 400, "{}", refused.body);
            assert_eq!(refused.json()["error"]["code"], "VALIDATION_ERROR");
            let all = q("").await.json()["skills"].as_array().map_or(0, Vec::len);
            let some = q("?type=api").await.json()["skills"]
                .as_array()
                .map_or(0, Vec::len);
            assert!(some < all, "type filters");
        }
        Variant::SspAuthRetryOther => {
            let (refused, _) = invoke(&base, "slow-task", json!({"delay_ms": 1}), &[]).await;
            assert_eq!(refused.status, 401);
            assert_eq!(
                refused.json()["error"]["retry"],
                json!({"suggested_delay_ms": 1000, "max_attempts": 3})
            );
        }
        Variant::SspTemplatesWithoutId => {
            let (accepted, d) = invoke(&base, "echo", json!({"message": "x"}), &[]).await;
            assert_eq!(accepted.status, 202, "{}", accepted.body);
            let template = d["endpoint"]["status_url"].as_str().unwrap().to_string();
            assert!(!template.contains("{execution_id}"), "{template}");
            let id = accepted.json()["execution_id"]
                .as_str()
                .unwrap()
                .to_string();
            let polled = send("", "GET", &format!("{template}/{id}"), &[], None).await;
            assert_eq!(polled.status, 200, "{}", polled.body);
        }
        Variant::SspExecutionTimeoutAlias => {
            let (accepted, d) = invoke(&base, "overrun", json!({}), &[]).await;
            let url = execution_url(&accepted, &d, "status_url");
            let done = until_terminal(&url, &[]).await;
            assert_eq!(done["error"]["code"], "EXECUTION_TIMEOUT");
        }
        Variant::SspExtraMembers => {
            let index = send(&base, "GET", "/.well-known/skill-sharing", &[], None)
                .await
                .json();
            assert!(
                index.get("x_provider").is_some() && index["skills"][0].get("x_provider").is_some()
            );
        }
        Variant::SspBareErrors => {
            let r = send(&base, "GET", "/ssp/status/no-such-execution", &[], None).await;
            assert_eq!(r.status, 404);
            assert!(r.json()["error"].get("details").is_none(), "{}", r.body);
            let (refused, _) = invoke(&base, "slow-task", json!({"delay_ms": 1}), &[]).await;
            assert_eq!(refused.status, 401);
            assert!(refused.header("www-authenticate").is_empty());
            assert!(refused.json()["error"].get("retry").is_none());
        }
        Variant::SspValidationDetailsUpstream => {
            let (refused, _) = invoke(&base, "echo", json!({}), &[]).await;
            assert_eq!(refused.status, 400, "{}", refused.body);
            let details = refused.json()["error"]["details"].clone();
            let first = &details[0];
            assert!(
                first.get("field").is_some() && first.get("path").is_none(),
                "{details}"
            );
        }
        Variant::SspHiddenExecutionRefused => {
            let (accepted, d) =
                invoke(&base, "slow-task", json!({"delay_ms": 1}), &[API_KEY]).await;
            let url = execution_url(&accepted, &d, "status_url");
            let other = ("x-api-key", "demo-ssp-key-limited");
            let r = send("", "GET", &url, &[other], None).await;
            assert_eq!(
                (r.status, r.json()["error"]["code"].clone()),
                (403, json!("PERMISSION_DENIED"))
            );
            let r = send("", "GET", &url, &[], None).await;
            assert_eq!(
                (r.status, r.json()["error"]["code"].clone()),
                (401, json!("AUTH_REQUIRED"))
            );
            let mine = send("", "GET", &url, &[API_KEY], None).await;
            assert_eq!(mine.status, 200, "the creator still reads it");
        }
        Variant::SspPathsMoved => {
            let index = send(&base, "GET", "/.well-known/skill-sharing", &[], None)
                .await
                .json();
            let url = index["skills"][0]["descriptor_url"]
                .as_str()
                .unwrap()
                .to_string();
            assert!(url.contains("/skills-api/"), "{url}");
            assert_eq!(send("", "GET", &url, &[], None).await.status, 200);
            let old = url.replace("/skills-api/", "/ssp/");
            assert_eq!(send("", "GET", &old, &[], None).await.status, 404);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_variant_changes_what_a_client_sees() {
    for v in Variant::ALL {
        // A panic names the variant through the task's output.
        let outcome = tokio::spawn(observe(*v)).await;
        assert!(outcome.is_ok(), "variant {} did not take effect", v.name());
    }
}

#[tokio::test]
async fn the_reference_has_none_of_them() {
    let srv = reference_impl::spawn(Config::demo_in_memory(), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let base = srv.base_url();
    let m = send(&base, "GET", "/v1/manifest", &[], None).await;
    assert!(m.body.starts_with("{\"parley\"") && !m.body.contains('\n'));
    assert_eq!(m.header("content-type"), "application/json");
    assert!(!m.header("content-length").is_empty());
    assert_eq!(m.json()["identity"]["realm"], "ainotes");
    let head = raw_head(srv.addr, "/v1/manifest").await;
    assert!(head.contains("\r\ncontent-type: "), "{head}");
}
