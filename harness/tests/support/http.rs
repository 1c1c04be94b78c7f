//! Small HTTP servers for tests: an axum router served on an ephemeral loopback port, a
//! base URL nothing listens on, and JSON responses.

use axum::Router;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::Value;

/// Serves `router` on `127.0.0.1:0` for the rest of the test (the task ends with the test's
/// runtime) and returns its base URL, `http://127.0.0.1:<port>`.
pub(crate) async fn serve(router: Router) -> String {
    serve_at(|_| router).await
}

/// Like [`serve`], for a router whose documents name its own address: the port is bound
/// first and `router` is built with the base URL.
pub(crate) async fn serve_at(router: impl FnOnce(&str) -> Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let app = router(&base);
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    base
}

/// A base URL whose port was bound and then released: connecting is refused.
pub(crate) fn refused_base() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    drop(listener);
    base
}

/// `body` as an `application/json` response with `status`.
pub(crate) fn json_response(status: StatusCode, body: Value) -> Response {
    (
        status,
        [("content-type", "application/json")],
        body.to_string(),
    )
        .into_response()
}
