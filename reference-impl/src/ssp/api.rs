//! SSP provider routes (seed §4–§5, ssp.md §3–§5, 6b).
//!
//! | method | path | what |
//! |---|---|---|
//! | GET | `/.well-known/skill-sharing[?capability_type=&type=]` | SkillIndex (auth-aware) |
//! | GET | `/ssp/skills/{slug}.json` | SkillDescriptor |
//! | POST | `/ssp/invoke/{slug}` | InvocationRequest → 202 InvocationResponse |
//! | GET | `/ssp/status/{execution_id}` | InvocationResponse |
//! | GET | `/ssp/result/{execution_id}` | 200 when terminal, 202 before |
//! | GET | `/ssp/schema.json` | the protocol schema |
//!
//! Every error — also unknown routes (404), wrong methods (405), huge bodies (413) and
//! non-JSON bodies (415) under `/ssp` and `/.well-known` — is the unified error object of
//! seed §8.2 (SSP-ERR-1). This module is a thin adapter: it extracts what the request
//! carries, calls one operation of the SSP service ([`SspState`]) and writes its
//! [`Answer`] or [`Refusal`] to the wire; it builds no error of its own.

use std::net::SocketAddr;

use axum::body::Body;
use axum::extract::rejection::PathRejection;
use axum::extract::{ConnectInfo, Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::{Extension, Router};

pub use crate::ssp::MAX_INVOCATION_BODY;
use crate::ssp::auth::Signed;
use crate::ssp::{Answer, Refusal, SspState};

/// One SSP provider route (a row of [`ROUTES`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SspRoute {
    /// SkillIndex (auth-aware, `?capability_type=` / `?type=` filter).
    Index,
    /// SkillDescriptor (`{file}` = `<slug>.json`).
    Descriptor,
    /// InvocationRequest → 202 InvocationResponse.
    Invoke,
    /// InvocationResponse of an execution.
    Status,
    /// InvocationResponse: 200 when terminal, 202 before.
    Result,
    /// The protocol schema file.
    Schema,
}

impl SspRoute {
    /// Every status the route answers with, successes first (what `/openapi.json`
    /// documents; seed §8.3, ssp.md §3–§5, issue 13 §3 for the 429).
    pub fn statuses(self) -> &'static [u16] {
        match self {
            Self::Index => &[200, 400],
            Self::Descriptor => &[200, 401, 404],
            Self::Invoke => &[202, 400, 401, 403, 404, 413, 415, 429, 503],
            Self::Status => &[200, 404],
            Self::Result => &[200, 202, 404],
            Self::Schema => &[200],
        }
    }
}

/// The provider's routes: method, path pattern (`{name}` = path parameter), route. Drives
/// the router below and the OpenAPI document (`crate::openapi`).
pub const ROUTES: [(Method, &str, SspRoute); 6] = [
    (Method::GET, "/.well-known/skill-sharing", SspRoute::Index),
    (Method::GET, "/ssp/skills/{file}", SspRoute::Descriptor),
    (Method::POST, "/ssp/invoke/{slug}", SspRoute::Invoke),
    (Method::GET, "/ssp/status/{id}", SspRoute::Status),
    (Method::GET, "/ssp/result/{id}", SspRoute::Result),
    (Method::GET, "/ssp/schema.json", SspRoute::Schema),
];

/// The provider's router, to be merged at the root of the server.
pub fn routes(state: SspState) -> Router {
    fn mna(
        allow: &'static str,
    ) -> impl Fn(Method) -> std::future::Ready<Response> + Clone + Send + Sync + 'static {
        move |m| std::future::ready(method_not_allowed(m, allow))
    }
    let mut router = Router::new();
    for (method, pattern, route) in ROUTES {
        let allow = if method == Method::POST {
            "POST"
        } else {
            "GET, HEAD"
        };
        let handler = match route {
            SspRoute::Index => get(index),
            SspRoute::Descriptor => get(descriptor),
            SspRoute::Invoke => post(invoke),
            SspRoute::Status => get(status),
            SspRoute::Result => get(result),
            SspRoute::Schema => get(schema),
        };
        router = router.route(pattern, handler.fallback(mna(allow)));
    }
    router
        .route("/ssp", any(not_found))
        .route("/ssp/", any(not_found))
        .route("/ssp/{*rest}", any(not_found))
        // A wildcard needs one character at least: the bare prefix is its own route, else
        // `/.well-known/` fell to Parley's fallback while `is_ssp_path` calls it SSP's
        // (fuzz/regressions/parley_http/well-known-bare-prefix).
        .route("/.well-known/", any(not_found))
        .route("/.well-known/{*rest}", any(not_found))
        .with_state(state)
}

/// Whether `path` belongs to the provider (`/ssp`, `/ssp/...`, `/.well-known/...`): the
/// paths whose every error is the unified error object (SSP-ERR-1).
pub fn is_ssp_path(path: &str) -> bool {
    path == "/ssp" || path.starts_with("/ssp/") || path.starts_with("/.well-known/")
}

/// 403 `PERMISSION_DENIED` in the unified shape, for a request the DNS-rebinding guard
/// (`crate::server::rebinding`) refuses before routing (SSP-ERR-1, SSP-ERR-2).
pub fn forbidden(message: &str) -> Response {
    refusal(Refusal::new(
        403,
        crate::domain::ssp::ErrorObject::new(crate::domain::ssp::codes::PERMISSION_DENIED, message),
    ))
}

/// A refusal the transport raises before an SSP route (SSP-ERR-4, SHOULD: the unified
/// shape where the path is an SSP one): the seed's code for its status (408 →
/// `INVOCATION_TIMEOUT`, 503 → `ENDPOINT_UNREACHABLE`, another 4xx → `VALIDATION_ERROR`,
/// SSP-ERR-2/3), the §10 transport reason in `details.reason`. Closes the connection: the
/// request was not read to its end.
pub fn transport_refusal(status: u16, reason: &str, message: &str) -> Response {
    use crate::domain::ssp::codes;
    let code = match status {
        408 => codes::INVOCATION_TIMEOUT,
        503 => codes::ENDPOINT_UNREACHABLE,
        _ => codes::VALIDATION_ERROR,
    };
    let error = crate::domain::ssp::ErrorObject::new(code, message)
        .with_details(serde_json::json!({"reason": reason}));
    let mut r = refusal(Refusal::new(status, error));
    r.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    r
}

fn json_response(status: u16, body: String) -> Response {
    let code = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut r = (code, body).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

fn answer(a: Answer) -> Response {
    let mut r = json_response(a.status, String::from(Box::<str>::from(a.body)));
    if let Some(loc) = a.location.and_then(|l| HeaderValue::from_str(&l).ok()) {
        r.headers_mut().insert(header::LOCATION, loc);
    }
    r
}

fn refusal(f: Refusal) -> Response {
    let mut r = json_response(f.status, f.error.to_body().to_string());
    if let Some(h) = f.hidden {
        r.extensions_mut().insert(h);
    }
    if let Some(ch) = f
        .www_authenticate
        .and_then(|c| HeaderValue::from_str(&c).ok())
    {
        r.headers_mut().insert(header::WWW_AUTHENTICATE, ch);
    }
    if let (429, Some(retry)) = (f.status, f.error.retry) {
        // `Retry-After` (whole seconds, rounded up) repeats the unified error's retry.
        let secs = retry.suggested_delay_ms.div_ceil(1000);
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    r
}

fn reply(r: Result<Answer, Refusal>) -> Response {
    r.map_or_else(refusal, answer)
}

/// 405 with the `Allow` header.
fn method_not_allowed(method: Method, allow: &'static str) -> Response {
    let mut r = refusal(Refusal::method_not_allowed(method.as_str(), allow));
    r.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static(allow));
    r
}

async fn not_found(uri: Uri) -> Response {
    refusal(Refusal::no_resource(uri.path()))
}

/// The `capability_type` / `type` query values.
fn filters(query: Option<&str>) -> Vec<String> {
    url::form_urlencoded::parse(query.unwrap_or("").as_bytes())
        .filter(|(k, _)| k == "capability_type" || k == "type")
        .map(|(_, v)| v.into_owned())
        .collect()
}

/// What a read's HMAC signature covers (no body): method and path.
fn read<'a>(method: &'a Method, uri: &'a Uri) -> Signed<'a> {
    Signed {
        method: method.as_str(),
        path: uri.path(),
        body: b"",
    }
}

async fn index(
    State(state): State<SspState>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    RawQuery(q): RawQuery,
) -> Response {
    reply(state.index(&headers, &filters(q.as_deref()), &read(&method, &uri)))
}

/// Answers with `f` of the decoded path segment; a segment axum could not decode (not
/// UTF-8 after percent-decoding) gets the service's 404, never axum's plain-text rejection.
fn with_segment(
    uri: &Uri,
    segment: Result<Path<String>, PathRejection>,
    f: impl FnOnce(String) -> Response,
) -> Response {
    match segment {
        Ok(Path(s)) => f(s),
        Err(_) => refusal(Refusal::bad_path(uri.path())),
    }
}

async fn descriptor(
    State(state): State<SspState>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    file: Result<Path<String>, PathRejection>,
) -> Response {
    with_segment(&uri, file, |file| {
        reply(state.descriptor(&headers, &file, &read(&method, &uri)))
    })
}

/// The schema file byte for byte (embedded at build time; no per-request serialization).
async fn schema() -> Response {
    let mut r = (StatusCode::OK, crate::ssp::schema::SCHEMA_JSON).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

async fn invoke(
    State(state): State<SspState>,
    uri: Uri,
    slug: Result<Path<String>, PathRejection>,
    peer: Option<Extension<ConnectInfo<SocketAddr>>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let Ok(Path(slug)) = slug else {
        return refusal(Refusal::bad_path(uri.path()));
    };
    let json = crate::api::is_json_media_type(&headers);
    let peer = peer.map(|Extension(ConnectInfo(a))| a);
    reply(
        state
            .invoke(&slug, &headers, body, json, peer, uri.path())
            .await,
    )
}

async fn status(
    State(state): State<SspState>,
    method: Method,
    uri: Uri,
    id: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
) -> Response {
    with_segment(&uri, id, |id| {
        reply(state.status(&id, &headers, &read(&method, &uri)))
    })
}

async fn result(
    State(state): State<SspState>,
    method: Method,
    uri: Uri,
    id: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
) -> Response {
    with_segment(&uri, id, |id| {
        reply(state.result(&id, &headers, &read(&method, &uri)))
    })
}
