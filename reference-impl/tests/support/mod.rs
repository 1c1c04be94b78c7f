//! Test support shared by every test binary of `reference-impl` and by its benches: the
//! one place that spawns servers and speaks HTTP to them.
//!
//! | module | what |
//! |---|---|
//! | [`app`] | the whole server in process (`reference_impl::app`, no socket): Parley over both bindings |
//! | [`ssp`] | the SSP provider routes in process, every emitted document checked against the schema |
//! | [`binary`] | the real `reference-server` binary on `127.0.0.1:0`, ready once it prints its line |
//! | [`http`] | real-socket helpers: a JSON request in one call, latency percentiles for the benches |
//!
//! How it is shared: a plain module tree rather than a dev-only crate. Each file under
//! `tests/` is its own crate and declares `mod support;`; each bench declares
//! `#[path = "../tests/support/mod.rs"] mod support;`. A crate would need its own manifest
//! and could not use `env!("CARGO_BIN_EXE_reference-server")` (cargo sets it only for this
//! package's tests and benches). Every binary uses a different subset, hence the
//! `dead_code` allowance below.

#![expect(dead_code)] // each test binary and bench uses a different subset
#![expect(clippy::unwrap_used, clippy::expect_used)] // test support: a panic is the report

pub(crate) mod app;
pub(crate) mod binary;
pub(crate) mod http;
pub(crate) mod ssp;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, Request};
use http_body_util::BodyExt;
use tower::ServiceExt;

/// Sends one request through `router` in process: status, headers, body bytes.
pub(crate) async fn oneshot(router: &Router, req: Request<Body>) -> (u16, HeaderMap, Bytes) {
    let resp = router
        .clone()
        .oneshot(req)
        .await
        .expect("infallible router");
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let body = resp.into_body().collect().await.expect("body").to_bytes();
    (status, headers, body)
}
