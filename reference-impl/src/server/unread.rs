//! `Connection: close` on the answer to a request whose body was not read to its end (an
//! early 401, a 413 over the size limit, a 403 before routing).
//!
//! Why: hyper cannot reuse such a connection and closes it after the response, but says
//! nothing. A client that had already sent the whole body then returns the connection to its
//! pool and loses its next request on it ("connection reset"): found by `conform fuzz`'s SSP
//! campaign (issue 11). With `close` the client knows (RFC 9112 §9.6).

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;
use hyper::body::{Frame, SizeHint};

/// A request body that records when it has been read to its end.
struct Tracked {
    inner: Body,
    done: Arc<AtomicBool>,
}

impl hyper::body::Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(None) = polled {
            self.done.store(true, Ordering::Relaxed);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        let end = self.inner.is_end_stream();
        if end {
            self.done.store(true, Ordering::Relaxed);
        }
        end
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Whether the request announces a body (`Content-Length` above 0, or chunked).
fn has_body(req: &Request) -> bool {
    let h = req.headers();
    h.contains_key(header::TRANSFER_ENCODING)
        || h.get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .is_some_and(|n| n > 0)
}

/// The layer: tracks the body, marks the answer `Connection: close` when it was left unread.
pub(super) async fn close_if_unread(req: Request, next: Next) -> Response {
    if !has_body(&req) {
        return next.run(req).await;
    }
    let done = Arc::new(AtomicBool::new(false));
    let req = req.map(|inner| {
        Body::new(Tracked {
            inner,
            done: done.clone(),
        })
    });
    let mut resp = next.run(req).await;
    if !done.load(Ordering::Relaxed) {
        resp.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    resp
}

#[cfg(test)]
#[expect(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;
    use axum::Router;
    use axum::routing::post;
    use tower::ServiceExt as _;

    fn app() -> Router {
        Router::new()
            .route(
                "/read",
                post(|body: Bytes| async move { body.len().to_string() }),
            )
            .route("/ignore", post(|| async { "refused early" }))
            .layer(axum::middleware::from_fn(close_if_unread))
    }

    async fn connection(path: &str, body: &'static str) -> Option<String> {
        let req = Request::post(path)
            .header(header::CONTENT_LENGTH, body.len())
            .body(Body::from(body))
            .unwrap();
        let resp = app().oneshot(req).await.unwrap();
        resp.headers()
            .get(header::CONNECTION)
            .map(|v| v.to_str().unwrap().to_string())
    }

    #[tokio::test]
    async fn an_unread_body_closes_the_connection() {
        assert_eq!(
            connection("/ignore", "{\"x\":1}").await.as_deref(),
            Some("close")
        );
    }

    #[tokio::test]
    async fn a_read_body_or_no_body_keeps_it() {
        assert_eq!(connection("/read", "{\"x\":1}").await, None);
        assert_eq!(connection("/ignore", "").await, None);
    }
}
