//! The wire variants: one service in front of the whole router (fallbacks included) that
//! maps moved public paths to the server's own routes, then rewrites what goes back —
//! statuses and bodies the notes allow in another form, JSON layout, headers, transfer
//! coding. It runs before routing (it wraps the router as a service), so a moved path is
//! routed like the original one and an abandoned one falls through to the 404 handlers.

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::Response;
use serde_json::{Value, json};

use super::catalogue::{PARLEY_MOVED, SSP_MOVED, SSP_PREFIX, Variant, Variants};
use super::json as rewrite;

/// Responses larger than this pass untouched (the server's own bodies stay far below).
const BODY_CAP: usize = 16 * 1024 * 1024;
/// A path that no route matches: where an abandoned public path is sent.
const GONE: &str = "/__variant_moved__";
/// Piece size of `chunked-responses`.
const CHUNK: usize = 256;

/// Who answers a path, after mapping: decides which body rewrites apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Area {
    Parley,
    Mcp,
    Ssp,
    Other,
}

fn area(path: &str) -> Area {
    if path.starts_with("/v1/") || path == "/v1" {
        Area::Parley
    } else if path == "/mcp" || path.starts_with("/mcp/") {
        Area::Mcp
    } else if path.starts_with("/.well-known/skill-sharing") || path.starts_with(SSP_PREFIX) {
        Area::Ssp
    } else {
        Area::Other
    }
}

/// `router` behind the wire variants `v`.
pub(super) fn wrap(router: Router, v: Variants) -> Router {
    let layer = axum::middleware::from_fn_with_state(v, rewrite_exchange);
    Router::new().fallback_service(tower::Layer::layer(&layer, router))
}

async fn rewrite_exchange(State(v): State<Variants>, mut req: Request, next: Next) -> Response {
    let path = internal_path(v, req.uri().path());
    let empty_filter = v.is_on(Variant::SspUnknownFilterEmpty) && unknown_filter(req.uri());
    if let Some(uri) = with_path(req.uri(), &path, empty_filter) {
        *req.uri_mut() = uri;
    }
    if v.is_on(Variant::SspFilterRegistrySpelling)
        && let Some(uri) = without_long_filter(req.uri())
    {
        *req.uri_mut() = uri;
    }
    if v.is_on(Variant::SspFilterSpellingRefused) && without_long_filter(req.uri()).is_some() {
        return spelling_refused(v);
    }
    let get = req.method() == axum::http::Method::GET;
    if v.is_on(Variant::BlankBodyAccepted) && req.method() == axum::http::Method::POST {
        req = hide_blank_body(req, &path).await;
    }
    let resp = next.run(req).await;
    let (mut parts, body) = resp.into_parts();
    let area = area(&path);
    let mut status_body = None;
    if area == Area::Ssp && get {
        status_body = ssp_status(v, &path, parts.status);
    }
    if let Some(&h) = parts.extensions.get::<crate::ssp::Hidden>()
        && v.is_on(Variant::SspHiddenExecutionRefused)
    {
        status_body = Some(hidden_refusal(h));
    }
    if area == Area::Ssp && v.is_on(Variant::SspBareErrors) {
        parts.headers.remove(header::WWW_AUTHENTICATE);
    }
    if area == Area::Other
        && parts.status == StatusCode::NOT_FOUND
        && v.is_on(Variant::ForeignNotFoundShape)
    {
        status_body = Some((
            StatusCode::NOT_FOUND,
            json!({"error": {"code": "SKILL_NOT_FOUND", "message": "no such resource on this origin"}}),
        ));
    }
    let Ok(bytes) = axum::body::to_bytes(body, BODY_CAP).await else {
        // Unreachable with the server's own bodies; a loud 500 rather than a silent cut.
        parts.status = StatusCode::INTERNAL_SERVER_ERROR;
        parts.headers.remove(header::CONTENT_LENGTH);
        return Response::from_parts(parts, Body::from("response over the variant cap"));
    };
    let bytes = match status_body {
        Some((status, body)) => {
            parts.status = status;
            parts.headers.remove(header::WWW_AUTHENTICATE);
            set_json(&mut parts.headers);
            Bytes::from(rewrite::render(v, &body))
        }
        None => rewrite_body(v, area, &parts.headers, bytes, empty_filter),
    };
    headers(v, &mut parts.headers);
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, body_of(v, bytes))
}

/// The server's own path for a public one: moved routes map back, abandoned ones to
/// [`GONE`] (so the server's 404 handler answers them, in its own shape).
fn internal_path(v: Variants, public: &str) -> String {
    if v.is_on(Variant::OperationRoutesMoved) {
        if let Some(rest) = public.strip_prefix(PARLEY_MOVED) {
            return format!("/v1/{rest}");
        }
        if super::catalogue::moved_parley_path(public).is_some() {
            return format!("{GONE}{public}");
        }
    }
    if v.is_on(Variant::SspPathsMoved) {
        if let Some(rest) = public.strip_prefix(SSP_MOVED) {
            return format!("{SSP_PREFIX}{rest}");
        }
        if public.starts_with(SSP_PREFIX) {
            // Still under /ssp/, so the SSP 404 answers it in SSP's shape.
            return format!("{SSP_PREFIX}__moved__{public}");
        }
    }
    public.to_owned()
}

fn with_path(uri: &Uri, path: &str, drop_query: bool) -> Option<Uri> {
    if path == uri.path() && !drop_query {
        return None;
    }
    let pq = match uri.query() {
        Some(q) if !drop_query => format!("{path}?{q}"),
        _ => path.to_owned(),
    };
    let mut parts = uri.clone().into_parts();
    parts.path_and_query = pq.parse().ok();
    Uri::from_parts(parts).ok()
}

/// `ssp-filter-registry-spelling`: a discovery request without its `capability_type`
/// parameters (a server knowing only the registry's `?type=` never sees them).
fn without_long_filter(uri: &Uri) -> Option<Uri> {
    let query = uri.query()?;
    let pairs: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect();
    if uri.path() != "/.well-known/skill-sharing"
        || !pairs.iter().any(|(k, _)| k == "capability_type")
    {
        return None;
    }
    let kept = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs.iter().filter(|(k, _)| k != "capability_type"))
        .finish();
    let pq = if kept.is_empty() {
        uri.path().to_string()
    } else {
        format!("{}?{kept}", uri.path())
    };
    let mut parts = uri.clone().into_parts();
    parts.path_and_query = pq.parse().ok();
    Uri::from_parts(parts).ok()
}

/// `ssp-filter-spelling-refused`: `?capability_type=` as an unknown query parameter.
fn spelling_refused(v: Variants) -> Response {
    let body = json!({"error": {"code": "VALIDATION_ERROR",
        "message": "unknown query parameter capability_type (this provider filters on ?type=)"}});
    let mut resp = Response::new(body_of(v, Bytes::from(rewrite::render(v, &body))));
    *resp.status_mut() = StatusCode::BAD_REQUEST;
    set_json(resp.headers_mut());
    headers(v, resp.headers_mut());
    resp
}

/// An SSP discovery request filtering on a capability type the seed does not define.
fn unknown_filter(uri: &Uri) -> bool {
    uri.path() == "/.well-known/skill-sharing"
        && url::form_urlencoded::parse(uri.query().unwrap_or("").as_bytes()).any(|(k, val)| {
            (k == "capability_type" || k == "type")
                && !crate::ssp::CAPABILITY_TYPES.contains(&val.as_ref())
        })
}

/// The SSP status variants: a new status and body replacing the server's answer.
fn ssp_status(v: Variants, path: &str, status: StatusCode) -> Option<(StatusCode, Value)> {
    let skills = format!("{SSP_PREFIX}skills/");
    let result = format!("{SSP_PREFIX}result/");
    if v.is_on(Variant::SspPrivateDescriptor404)
        && status == StatusCode::UNAUTHORIZED
        && path.starts_with(&skills)
    {
        return Some((
            StatusCode::NOT_FOUND,
            json!({"error": {"code": "SKILL_NOT_FOUND", "message": "no such skill"}}),
        ));
    }
    if v.is_on(Variant::SspEarlyResult409)
        && status == StatusCode::ACCEPTED
        && path.starts_with(&result)
    {
        return Some((
            StatusCode::CONFLICT,
            json!({"error": {"code": "VALIDATION_ERROR",
                "message": "the execution has not completed yet",
                "retry": {"suggested_delay_ms": 100, "max_attempts": 50}}}),
        ));
    }
    None
}

/// `blank-body-accepted`: a post whose `body` is ASCII whitespace only reaches the service
/// with stand-ins for its characters (see `json::hide_blank`); every other request passes
/// byte for byte (a JSON body is re-serialised only when a blank body was replaced).
async fn hide_blank_body(req: Request, path: &str) -> Request {
    let mcp = area(path) == Area::Mcp;
    if !(mcp || path == "/v1/messages") {
        return req;
    }
    let (mut parts, body) = req.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, BODY_CAP).await else {
        // Over the variant's cap (far above every limit of the server): refused as empty.
        return Request::from_parts(parts, Body::empty());
    };
    let mut doc: Value = match serde_json::from_slice(&bytes) {
        Ok(d) => d,
        Err(_) => return Request::from_parts(parts, Body::from(bytes)),
    };
    let is_post = !mcp
        || (doc["method"] == "tools/call" && doc.pointer("/params/name") == Some(&json!("post")));
    let pointer = if mcp {
        "/params/arguments/body"
    } else {
        "/body"
    };
    let hidden = match doc.pointer_mut(pointer) {
        Some(Value::String(s)) if is_post => rewrite::hide_blank(s).map(|h| *s = h),
        _ => None,
    };
    let bytes = match (hidden, serde_json::to_vec(&doc)) {
        (Some(()), Ok(b)) => {
            parts.headers.remove(header::CONTENT_LENGTH);
            Bytes::from(b)
        }
        _ => bytes,
    };
    Request::from_parts(parts, Body::from(bytes))
}

/// `ssp-hidden-execution-refused`: the other reading SSP-INV-6 allows for an execution
/// the caller may not read.
fn hidden_refusal(h: crate::ssp::Hidden) -> (StatusCode, Value) {
    use crate::ssp::Hidden;
    match h {
        Hidden::Anonymous => (
            StatusCode::UNAUTHORIZED,
            json!({"error": {"code": "AUTH_REQUIRED",
                "message": "credentials are required to read this execution"}}),
        ),
        Hidden::OtherCredential => (
            StatusCode::FORBIDDEN,
            json!({"error": {"code": "PERMISSION_DENIED",
                "message": "these credentials may not read this execution"}}),
        ),
    }
}

fn rewrite_body(
    v: Variants,
    area: Area,
    headers: &HeaderMap,
    bytes: Bytes,
    empty_filter: bool,
) -> Bytes {
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|c| c.to_str().ok())
        .is_some_and(|c| c.starts_with("application/json"));
    if !json {
        return bytes;
    }
    let Ok(mut body) = serde_json::from_slice::<Value>(&bytes) else {
        return bytes;
    };
    match area {
        Area::Parley => rewrite::parley(v, &mut body),
        Area::Mcp => mcp(v, &mut body),
        Area::Ssp => {
            if empty_filter && let Some(Value::Array(skills)) = body.get_mut("skills") {
                skills.clear();
            }
            rewrite::ssp(v, &mut body);
        }
        Area::Other => rewrite::common(v, &mut body),
    }
    Bytes::from(rewrite::render(v, &body))
}

/// An MCP answer: the Parley rewrites apply to a tool result's `structuredContent`, and
/// `content[0].text` is regenerated from it (PV-TR-2: the same JSON as text).
/// Each part is rewritten once: the common rewrites of the JSON-RPC envelope must not reach
/// `structuredContent` a second time (reversing members twice restores their order).
fn mcp(v: Variants, body: &mut Value) {
    let content = body
        .pointer_mut("/result/structuredContent")
        .map(Value::take);
    rewrite::common(v, body);
    let Some(mut sc) = content else {
        return;
    };
    rewrite::parley(v, &mut sc);
    let text = String::from_utf8(rewrite::render(v, &sc)).unwrap_or_default();
    if let Some(t) = body.pointer_mut("/result/content/0/text") {
        *t = Value::String(text);
    }
    if let Some(slot) = body.pointer_mut("/result/structuredContent") {
        *slot = sc;
    }
}

fn set_json(headers: &mut HeaderMap) {
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
}

/// The header variants: the charset parameter and `Retry-After` as an HTTP-date.
fn headers(v: Variants, headers: &mut HeaderMap) {
    if v.is_on(Variant::JsonCharsetParameter)
        && headers
            .get(header::CONTENT_TYPE)
            .is_some_and(|c| c.as_bytes() == b"application/json")
    {
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json; charset=utf-8"),
        );
    }
    if v.is_on(Variant::RetryAfterHttpDate)
        && let Some(secs) = headers
            .get(header::RETRY_AFTER)
            .and_then(|h| h.to_str().ok())
            .and_then(|s| s.trim().parse::<i64>().ok())
    {
        // Rounded up to the next whole second, so the date is never earlier than the delay.
        let at = chrono::Utc::now() + chrono::Duration::seconds(secs + 1);
        let date = at.format("%a, %d %b %Y %H:%M:%S GMT").to_string();
        if let Ok(h) = HeaderValue::from_str(&date) {
            headers.insert(header::RETRY_AFTER, h);
        }
    }
}

fn body_of(v: Variants, bytes: Bytes) -> Body {
    if !v.is_on(Variant::ChunkedResponses) || bytes.is_empty() {
        return Body::from(bytes);
    }
    let pieces: Vec<Result<Bytes, std::convert::Infallible>> = bytes
        .chunks(CHUNK)
        .map(|c| Ok(Bytes::copy_from_slice(c)))
        .collect();
    Body::from_stream(futures::stream::iter(pieces))
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used)] // tests: a panic is the failure report
    use super::*;

    fn on(names: &[&str]) -> Variants {
        Variants::from_names(names).unwrap()
    }

    #[test]
    fn moved_routes_map_back_and_old_ones_are_gone() {
        let v = on(&["operation-routes-moved"]);
        assert_eq!(internal_path(v, "/forum/api/messages"), "/v1/messages");
        assert_eq!(internal_path(v, "/v1/manifest"), "/v1/manifest");
        assert!(internal_path(v, "/v1/messages").starts_with(GONE));
        let v = on(&["ssp-paths-moved"]);
        assert_eq!(internal_path(v, "/skills-api/status/7"), "/ssp/status/7");
        assert!(internal_path(v, "/ssp/status/7").starts_with("/ssp/__moved__"));
    }

    #[test]
    fn the_registry_spelling_variant_drops_only_capability_type() {
        let u = |s: &str| s.parse::<Uri>().unwrap();
        let got = without_long_filter(&u(
            "/.well-known/skill-sharing?capability_type=api&type=task",
        ));
        assert_eq!(
            got.unwrap().to_string(),
            "/.well-known/skill-sharing?type=task"
        );
        let got = without_long_filter(&u("/.well-known/skill-sharing?capability_type=api"));
        assert_eq!(got.unwrap().to_string(), "/.well-known/skill-sharing");
        assert!(without_long_filter(&u("/.well-known/skill-sharing?type=api")).is_none());
        assert!(without_long_filter(&u("/ssp/skills/x.json?capability_type=api")).is_none());
    }

    #[test]
    fn unknown_filters_are_recognised() {
        let u = |s: &str| s.parse::<Uri>().unwrap();
        assert!(unknown_filter(&u(
            "/.well-known/skill-sharing?capability_type=bogus"
        )));
        assert!(unknown_filter(&u("/.well-known/skill-sharing?type=bogus")));
        assert!(!unknown_filter(&u("/.well-known/skill-sharing?type=api")));
        assert!(!unknown_filter(&u("/.well-known/skill-sharing")));
    }
}
