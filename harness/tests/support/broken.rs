//! A deliberately broken Parley server for the "checks bite" test: an axum proxy in front of
//! an in-process reference server that breaks exactly one rule on the HTTP binding.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use reference_impl::config::{Right, TokenRow};
use serde_json::Value;

use super::proxy::Upstream;

/// The rule the proxy breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fault {
    /// Accepts bodies over 500 characters (truncates them to 500 before storing): PV-EN-2.
    AcceptsLongBody,
    /// Lets the read-only token post (swaps in a writer token of the same identity): PV-AU-1.
    ReaderWrites,
    /// Forgets the lock: a post or mark refused with `thread_locked` is retried after a
    /// silent human reopen: PV-ST-4.
    ForgetsLock,
    /// Declares every MCP binding `null` in its manifest (an HTTP-only server): PV-TR-1a.
    HttpOnly,
}

struct Proxy {
    upstream: Upstream,
    fault: Fault,
}

/// The running pair. Dropping it stops the reference server; the proxy's task ends with the
/// test's runtime.
pub(crate) struct Broken {
    /// Base URL of the broken server.
    pub base_url: String,
    _server: reference_impl::RunningServer,
}

/// Token of the hidden writer row with the reader's identity (used by [`Fault::ReaderWrites`]).
const SHADOW_READER: &str = "shadow-reader-writes";

/// Starts a reference server and a proxy that breaks `fault`.
pub(crate) async fn start(fault: Fault) -> Broken {
    let mut config = reference_impl::Config::demo_in_memory();
    config.tokens.push(TokenRow {
        token: SHADOW_READER.into(),
        identity: "ainotes:reader".into(),
        rights: vec![Right::Read, Right::Write],
        lock_label: None,
        quota_per_minute: None,
    });
    let server = reference_impl::spawn(config, SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .expect("reference server");
    let state = Arc::new(Proxy {
        upstream: Upstream::at(format!("http://{}", server.addr)),
        fault,
    });
    let base_url = super::http::serve(Router::new().fallback(handle).with_state(state)).await;
    Broken {
        base_url,
        _server: server,
    }
}

async fn forward(
    p: &Proxy,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: Bytes,
) -> (StatusCode, HeaderMap, Bytes) {
    let path = uri.path_and_query().map(|x| x.as_str()).unwrap_or("/");
    p.upstream.forward(method, path, headers, body).await
}

async fn handle(
    State(p): State<Arc<Proxy>>,
    method: Method,
    uri: Uri,
    mut headers: HeaderMap,
    mut body: Bytes,
) -> Response {
    let path = uri.path().to_string();
    let is_post_message = method == Method::POST && path == "/v1/messages";
    match p.fault {
        // Requests over the byte limit are left alone: their 413 is another rule (PV-TR-5).
        Fault::AcceptsLongBody if is_post_message && body.len() < 65_536 => {
            if let Ok(mut v) = serde_json::from_slice::<Value>(&body)
                && let Some(Value::String(s)) = v.get_mut("body")
                && s.chars().count() > 500
            {
                *s = s.chars().take(500).collect();
                body = Bytes::from(v.to_string());
            }
        }
        Fault::ReaderWrites
            if method == Method::POST
                && path.starts_with("/v1/")
                && headers
                    .get("authorization")
                    .is_some_and(|v| v == "Bearer demo-reader") =>
        {
            headers.insert(
                "authorization",
                HeaderValue::from_static("Bearer shadow-reader-writes"),
            );
        }
        _ => {}
    }
    let (status, hs, bytes) = forward(&p, &method, &uri, &headers, body.clone()).await;
    if p.fault == Fault::ForgetsLock && status == StatusCode::CONFLICT {
        let reason = serde_json::from_slice::<Value>(&bytes)
            .ok()
            .and_then(|v| v.pointer("/error/reason").cloned());
        let thread = if is_post_message {
            serde_json::from_slice::<Value>(&body)
                .ok()
                .and_then(|v| v.get("thread").cloned())
        } else if method == Method::POST && path.ends_with("/state") {
            path.split('/').nth(3).map(|t| Value::String(t.to_string()))
        } else {
            None
        };
        if reason.as_ref().and_then(Value::as_str) == Some("thread_locked")
            && let Some(t) = thread
        {
            let t = match t {
                Value::String(s) => s,
                other => other.to_string(),
            };
            let mut h = HeaderMap::new();
            h.insert(
                "authorization",
                HeaderValue::from_static("Bearer demo-human"),
            );
            let reopen: Uri = format!("/v1/threads/{t}/reopen").parse().expect("uri");
            let _ = forward(&p, &Method::POST, &reopen, &h, Bytes::new()).await;
            let (status, hs, bytes) = forward(&p, &method, &uri, &headers, body).await;
            return (status, hs, bytes).into_response();
        }
    }
    if p.fault == Fault::HttpOnly
        && method == Method::GET
        && path == "/v1/manifest"
        && let Ok(mut v) = serde_json::from_slice::<Value>(&bytes)
    {
        if let Some(ops) = v.get_mut("operations").and_then(Value::as_array_mut) {
            for op in ops {
                op["mcp"] = Value::Null;
            }
        }
        return (status, axum::Json(v)).into_response();
    }
    (status, hs, bytes).into_response()
}
