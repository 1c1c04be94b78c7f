//! Parley HTTP binding (`/v1/...`), exactly the operation table of parley-v1.md §1.
//!
//! The binding only extracts what the wire carries — token, path parameters, query, body
//! size, content type, JSON body — into one [`Request`] and maps the service's
//! [`Response`] back to a status and JSON body (PV-TR-3). Every refusal, including the
//! ones caused by hostile input (oversized, invalid UTF-8, deep or invalid JSON, wrong
//! content type), is decided by the service at its place in the check order (PV-AU-6), so
//! the MCP binding necessarily agrees (PV-TR-1).

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request as HttpRequest, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response as HttpResponse};
use axum::routing::{get, post};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use serde_json::{Map, Value};

use super::{HARD_BODY_CAP, bearer_from_headers};
use crate::parley::service::{Args, ContentType, Operation, ParleyService, Request, Response};

/// The route table of parley-v1.md §1: method, path pattern, operation.
///
/// `{name}` segments are path parameters; their value lands in the operation's arguments
/// under the same name.
pub const ROUTES: [(Method, &str, Operation); 9] = [
    (Method::GET, "/v1/manifest", Operation::GetManifest),
    (Method::GET, "/v1/whoami", Operation::Whoami),
    (Method::POST, "/v1/messages", Operation::Post),
    (Method::GET, "/v1/threads/{thread}", Operation::ReadThread),
    (
        Method::GET,
        "/v1/threads/{thread}/events",
        Operation::ListEvents,
    ),
    (Method::GET, "/v1/inbox", Operation::Inbox),
    (Method::POST, "/v1/threads/{thread}/state", Operation::Mark),
    (
        Method::POST,
        "/v1/threads/{thread}/reopen",
        Operation::Reopen,
    ),
    (Method::GET, "/v1/claims/{claim}", Operation::ReadClaim),
];

/// The Parley HTTP routes over `service` (no fallback: [`crate::server::app`] installs the
/// 404/405 handlers once for the whole merged router).
pub fn routes(service: ParleyService) -> Router {
    let mut router = Router::new();
    for (method, pattern, op) in ROUTES {
        let handler = move |State(service): State<ParleyService>, req: HttpRequest| async move {
            dispatch(service, op, pattern, req).await
        };
        router = if method == Method::POST {
            router.route(pattern, post(handler))
        } else {
            router.route(pattern, get(handler))
        };
    }
    router.with_state(service)
}

/// Unknown route → 404 `not_found` with the refusal body (PV-TR-3, §10).
pub async fn not_found() -> HttpResponse {
    into_http(Response::refusal(
        404,
        "not_found",
        "no such route; see GET /v1/manifest for the operations",
    ))
}

/// Known route, wrong method → 405 `method_not_allowed` with the refusal body (§10).
pub async fn method_not_allowed() -> HttpResponse {
    into_http(Response::refusal(
        405,
        "method_not_allowed",
        "this route does not accept that method; see GET /v1/manifest",
    ))
}

/// Maps a service [`Response`] to HTTP: status + JSON body (`application/json`), and
/// `Retry-After` on 429 (PV-TR-3, PV-TR-5).
pub fn into_http(resp: Response) -> HttpResponse {
    let status = StatusCode::from_u16(resp.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut out = (status, resp.body.into_bytes()).into_response();
    out.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if let Some(secs) = resp.retry_after_secs {
        out.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    out
}

/// Runs the (synchronous, SQLite-bound) service off the async workers.
pub async fn call_service(service: ParleyService, req: Request) -> Response {
    let permit = service.turn().await;
    match tokio::task::spawn_blocking(move || {
        let _permit = permit;
        service.handle(req)
    })
    .await
    {
        Ok(resp) => resp,
        Err(err) => {
            tracing::error!(%err, "service task failed");
            Response::refusal(
                500,
                "internal_error",
                "the server failed to process the request",
            )
        }
    }
}

async fn dispatch(
    service: ParleyService,
    op: Operation,
    pattern: &'static str,
    req: HttpRequest,
) -> HttpResponse {
    let (parts, body) = req.into_parts();
    let mut args = Map::new();
    for (name, value) in path_params(pattern, parts.uri.path()) {
        args.insert(name.to_owned(), Value::String(value));
    }
    if parts.method != Method::POST {
        let req = Request {
            op,
            auth: bearer_from_headers(&parts.headers),
            args: merge_query(args, parts.uri.query()),
            body_len: 0,
            content_type: ContentType::NotApplicable,
        };
        return into_http(call_service(service, req).await);
    }

    let bytes = match read_capped(body).await {
        Ok(bytes) => bytes,
        Err(BodyError::TooLarge) => {
            return into_http(Response::refusal(
                413,
                "payload_too_large",
                format!("request body exceeds {HARD_BODY_CAP} bytes"),
            ));
        }
        Err(BodyError::Io(msg)) => {
            // The client broke off the upload: nothing meaningful can be answered, but a 400
            // is what the service would say about an unreadable body.
            return into_http(Response::refusal(400, "invalid_body", msg));
        }
    };
    let (args, content_type) = if bytes.is_empty() {
        // A bodiless POST (`reopen`) needs no content type (PV-RS-4).
        (Args::Json(Value::Object(args)), ContentType::NotApplicable)
    } else {
        (merge_body(args, &bytes), content_type(&parts.headers))
    };
    let req = Request {
        op,
        auth: bearer_from_headers(&parts.headers),
        args,
        body_len: bytes.len(),
        content_type,
    };
    into_http(call_service(service, req).await)
}

/// Query parameters are the arguments of GET operations (`since`, `extension`, `limit`); the
/// service accepts `limit` as an integer or digit string.
///
/// The id in the path wins: a query parameter naming a path parameter (`?thread=` on
/// `/v1/threads/{thread}`) with another value is refused as malformed (→ 400 `invalid_body`,
/// like a body member contradicting the path); the same value is harmless.
fn merge_query(mut args: Map<String, Value>, query: Option<&str>) -> Args {
    let Some(query) = query else {
        return Args::Json(Value::Object(args));
    };
    let path = args.clone();
    for (key, value) in url::form_urlencoded::parse(query.as_bytes()) {
        match path.get(key.as_ref()) {
            Some(Value::String(id)) if *id != value => {
                return Args::Malformed(format!("query `{key}` contradicts the path"));
            }
            Some(_) => {}
            None => {
                let value = query_value(&key, value.into_owned());
                args.insert(key.into_owned(), value);
            }
        }
    }
    Args::Json(Value::Object(args))
}

/// `limit` becomes a JSON integer when it is all digits (and fits), else stays a string so
/// the service refuses it as `invalid_body`; every other query value stays a string.
fn query_value(key: &str, value: String) -> Value {
    if key == "limit"
        && !value.is_empty()
        && value.bytes().all(|b| b.is_ascii_digit())
        && let Ok(n) = value.parse::<u64>()
    {
        return Value::from(n);
    }
    Value::String(value)
}

/// Parses the JSON body and merges the path parameters into it.
///
/// Invalid UTF-8, invalid JSON and JSON nested deeper than serde_json's recursion limit
/// (128) become [`Args::Malformed`] (→ 400 `invalid_body` at the 400 step). A body that is
/// valid JSON but not an object is passed as is (the service refuses it as a wrong JSON
/// type). A body member that contradicts a path parameter is malformed too, and so is a
/// repeated member name (see [`crate::api::duplicates`]).
fn merge_body(path_args: Map<String, Value>, bytes: &[u8]) -> Args {
    let parsed: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => return Args::Malformed(format!("body is not valid JSON: {e}")),
    };
    if let Some(path) = crate::api::duplicates::first_duplicate(bytes) {
        return Args::Malformed(format!("duplicate member name `{}`", path.join(".")));
    }
    let Value::Object(mut body) = parsed else {
        return Args::Json(parsed);
    };
    for (key, value) in path_args {
        match body.get(&key) {
            Some(existing) if existing != &value => {
                return Args::Malformed(format!("`{key}` in the body contradicts the path"));
            }
            _ => {
                body.insert(key, value);
            }
        }
    }
    Args::Json(Value::Object(body))
}

/// `NotJson` also for a missing header on a POST with a body (PV-RS-4).
fn content_type(headers: &HeaderMap) -> ContentType {
    if crate::api::is_json_media_type(headers) {
        ContentType::Json
    } else {
        ContentType::NotJson
    }
}

/// Why a body could not be read.
#[derive(Debug)]
pub enum BodyError {
    /// Over [`HARD_BODY_CAP`].
    TooLarge,
    /// The connection failed or the client aborted mid-body.
    Io(String),
}

/// Reads a body, refusing to buffer more than [`HARD_BODY_CAP`] bytes.
pub async fn read_capped(body: Body) -> Result<Bytes, BodyError> {
    match Limited::new(body, HARD_BODY_CAP).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => Err(BodyError::TooLarge),
        Err(e) => {
            // axum wraps the limit error of an inner layer; look through the chain once more.
            let text = e.to_string();
            if text.contains("length limit exceeded") {
                Err(BodyError::TooLarge)
            } else {
                Err(BodyError::Io(format!(
                    "could not read the request body: {text}"
                )))
            }
        }
    }
}

/// Extracts `{name}` segments of `pattern` from `path`, percent-decoded (invalid UTF-8 is
/// replaced, so an undecodable id simply matches nothing → 404 from the service).
fn path_params(pattern: &'static str, path: &str) -> Vec<(&'static str, String)> {
    pattern
        .split('/')
        .zip(path.split('/'))
        .filter_map(|(pat, seg)| {
            let name = pat.strip_prefix('{')?.strip_suffix('}')?;
            Some((name, percent_decode(seg)))
        })
        .collect()
}

fn percent_decode(segment: &str) -> String {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex_val(bytes[i + 1]), hex_val(bytes[i + 2]))
        {
            out.push(h * 16 + l);
            i += 3;
            continue;
        }
        out.push(b);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex_val(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_params_are_extracted_and_decoded() {
        assert_eq!(
            path_params("/v1/threads/{thread}/events", "/v1/threads/th_1/events"),
            vec![("thread", "th_1".to_owned())]
        );
        assert_eq!(
            path_params("/v1/claims/{claim}", "/v1/claims/cl%5F2"),
            vec![("claim", "cl_2".to_owned())]
        );
        assert_eq!(
            path_params("/v1/claims/{claim}", "/v1/claims/%FF")[0].1,
            "\u{fffd}"
        );
        assert_eq!(percent_decode("a%2"), "a%2");
    }

    #[test]
    fn limit_query_becomes_integer_only_when_digits() {
        assert_eq!(query_value("limit", "10".into()), Value::from(10));
        assert_eq!(query_value("limit", "-1".into()), Value::from("-1"));
        assert_eq!(query_value("limit", "ten".into()), Value::from("ten"));
        assert_eq!(query_value("since", "5".into()), Value::from("5"));
    }

    #[test]
    fn path_ids_win_over_the_query() {
        let mut path = Map::new();
        path.insert("thread".into(), Value::from("th_1"));
        assert!(matches!(
            merge_query(path.clone(), Some("thread=th_2")),
            Args::Malformed(m) if m.contains("thread")
        ));
        let Args::Json(same) = merge_query(path.clone(), Some("thread=th_1&since=3&limit=2"))
        else {
            panic!("a query repeating the path id is fine");
        };
        assert_eq!(same["thread"], "th_1");
        assert_eq!(same["since"], "3");
        assert_eq!(same["limit"], 2);
        let Args::Json(repeated) = merge_query(Map::new(), Some("since=1&since=2")) else {
            panic!("repeated non-path parameters are not contradictions");
        };
        assert_eq!(repeated["since"], "2");
    }

    #[test]
    fn body_merge_rejects_contradictions_and_garbage() {
        let mut path = Map::new();
        path.insert("thread".into(), Value::from("th_1"));
        assert!(matches!(
            merge_body(path.clone(), b"{\"state\":\"closed\"}"),
            Args::Json(_)
        ));
        assert!(matches!(
            merge_body(path.clone(), b"{\"thread\":\"th_2\"}"),
            Args::Malformed(_)
        ));
        assert!(matches!(
            merge_body(path.clone(), b"\xff\xfe"),
            Args::Malformed(_)
        ));
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(matches!(
            merge_body(path, deep.as_bytes()),
            Args::Malformed(_)
        ));
    }
}
