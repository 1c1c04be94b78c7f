//! One reference server per process, in process (no socket), and the runtime its requests
//! run on: a fuzz target sends millions of requests through the same `app()`.

use std::sync::OnceLock;

use axum::Router;
use axum::body::Body;
use axum::http::Request;
use http_body_util::BodyExt as _;
use tower::ServiceExt as _;

/// The reply of one request: status, content type, body.
#[derive(Debug)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// `Content-Type`, when present and text.
    pub content_type: Option<String>,
    /// The body.
    pub body: Vec<u8>,
}

struct Shared {
    runtime: tokio::runtime::Runtime,
    router: Router,
}

fn shared() -> &'static Shared {
    static SHARED: OnceLock<Shared> = OnceLock::new();
    SHARED.get_or_init(|| {
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(rt) => rt,
            Err(e) => panic!("fuzz set-up: runtime: {e}"),
        };
        let router = match reference_impl::app(reference_impl::Config::demo_in_memory()) {
            Ok(r) => r,
            Err(e) => panic!("fuzz set-up: reference app: {e}"),
        };
        Shared { runtime, router }
    })
}

/// Sends one request through the reference's router.
pub fn send(req: Request<Body>) -> Reply {
    let s = shared();
    s.runtime.block_on(async {
        let resp = match s.router.clone().oneshot(req).await {
            Ok(r) => r,
            Err(never) => match never {},
        };
        let status = resp.status().as_u16();
        let content_type = resp
            .headers()
            .get(axum::http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let body = match resp.into_body().collect().await {
            Ok(c) => c.to_bytes().to_vec(),
            Err(e) => panic!("reading a response body of the reference failed: {e}"),
        };
        Reply {
            status,
            content_type,
            body,
        }
    })
}
