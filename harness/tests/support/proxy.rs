//! The forwarding half of the rewriting proxies the tests put in front of an in-process
//! reference server ([`super::broken`], `legal_variants.rs`): each proxy decides what to
//! change, this sends the request on and brings the answer back unchanged.

use std::sync::OnceLock;

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode};

/// Where a proxy forwards to: set once the reference runs (a proxy may have to start first,
/// so that the reference can name the proxy's URL in its documents).
pub(crate) struct Upstream {
    base: OnceLock<String>,
    client: reqwest::Client,
}

impl Upstream {
    /// An upstream whose base URL is not known yet.
    pub(crate) fn new() -> Self {
        Self {
            base: OnceLock::new(),
            client: reqwest::Client::builder()
                .no_proxy()
                .build()
                .expect("client"),
        }
    }

    /// An upstream at `base` (`http://127.0.0.1:port`).
    pub(crate) fn at(base: String) -> Self {
        let u = Self::new();
        u.set(base);
        u
    }

    /// Sets the base URL (once).
    pub(crate) fn set(&self, base: String) {
        self.base.set(base).expect("upstream set once");
    }

    /// Sends `method path_and_query` with `headers` (but `Host` and `Content-Length`, which
    /// the client sets) and `body`; the answer's status, headers (but the framing ones) and
    /// body.
    pub(crate) async fn forward(
        &self,
        method: &Method,
        path_and_query: &str,
        headers: &HeaderMap,
        body: Bytes,
    ) -> (StatusCode, HeaderMap, Bytes) {
        let base = self.base.get().expect("upstream started");
        let mut rb = self
            .client
            .request(method.clone(), format!("{base}{path_and_query}"));
        for (k, v) in headers {
            if k != "host" && k != "content-length" {
                rb = rb.header(k, v);
            }
        }
        let resp = rb.body(body).send().await.expect("upstream");
        let status = StatusCode::from_u16(resp.status().as_u16()).expect("status");
        let mut hs = HeaderMap::new();
        for (k, v) in resp.headers() {
            if k != "content-length" && k != "transfer-encoding" {
                hs.append(k.clone(), v.clone());
            }
        }
        let bytes = resp.bytes().await.expect("body");
        (status, hs, bytes)
    }
}
