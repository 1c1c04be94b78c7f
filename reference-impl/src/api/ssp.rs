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
//! seed §8.2 (SSP-ERR-1).

use axum::Router;
use axum::body::Body;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use http_body_util::BodyExt;
use serde_json::{Value, json};

use crate::domain::ssp::{ErrorObject, codes};
use crate::ssp::{Answer, FALLBACK_BASE, Refusal, SspState};

/// Largest accepted invocation body (64 KiB); larger → 413 with the unified error.
pub const MAX_INVOCATION_BODY: usize = 64 * 1024;

/// The provider's router, to be merged at the root of the server.
pub fn routes(state: SspState) -> Router {
    fn mna(
        allow: &'static str,
    ) -> impl Fn(Method) -> std::future::Ready<Response> + Clone + Send + Sync + 'static {
        move |m| std::future::ready(method_not_allowed(m, allow))
    }
    Router::new()
        .route(
            "/.well-known/skill-sharing",
            get(index).fallback(mna("GET, HEAD")),
        )
        .route(
            "/ssp/skills/{file}",
            get(descriptor).fallback(mna("GET, HEAD")),
        )
        .route("/ssp/invoke/{slug}", post(invoke).fallback(mna("POST")))
        .route("/ssp/status/{id}", get(status).fallback(mna("GET, HEAD")))
        .route("/ssp/result/{id}", get(result).fallback(mna("GET, HEAD")))
        .route("/ssp/schema.json", get(schema).fallback(mna("GET, HEAD")))
        .route("/ssp", any(not_found))
        .route("/ssp/", any(not_found))
        .route("/ssp/{*rest}", any(not_found))
        .route("/.well-known/{*rest}", any(not_found))
        .with_state(state)
}

fn json_response(status: u16, body: &Value) -> Response {
    let code = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut r = (code, body.to_string()).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

fn answer(a: Answer) -> Response {
    let mut r = json_response(a.status, &a.body);
    if let Some(loc) = a.location.and_then(|l| HeaderValue::from_str(&l).ok()) {
        r.headers_mut().insert(header::LOCATION, loc);
    }
    r
}

fn refusal(f: Refusal) -> Response {
    let mut r = json_response(f.status, &f.error.to_body());
    if let Some(ch) = f
        .www_authenticate
        .and_then(|c| HeaderValue::from_str(&c).ok())
    {
        r.headers_mut().insert(header::WWW_AUTHENTICATE, ch);
    }
    r
}

fn reply(r: Result<Answer, Refusal>) -> Response {
    r.map_or_else(refusal, answer)
}

/// The 405 answer. Seed §8.2 says `error.code` is one of the seven protocol codes: a method
/// the resource does not accept makes the request invalid → `VALIDATION_ERROR`, with the
/// seed §8.3.1 details array (SSP-ERR-3 would allow any code; the seed is stricter).
fn method_not_allowed(method: Method, allow: &'static str) -> Response {
    let mut r = refusal(Refusal::new(
        405,
        crate::domain::ssp::validation_error(
            &format!("Method {method} not allowed here; allowed: {allow}"),
            vec![crate::domain::ssp::ValidationDetail {
                path: String::new(),
                message: "HTTP method not allowed for this resource".into(),
                expected: json!(allow.split(", ").collect::<Vec<_>>()),
                actual: json!(method.as_str()),
            }],
        ),
    ));
    r.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static(allow));
    r
}

async fn not_found(uri: axum::http::Uri) -> Response {
    refusal(Refusal::new(
        404,
        ErrorObject::new(
            codes::SKILL_NOT_FOUND,
            format!("No SSP resource at {}", uri.path()),
        )
        .with_details(json!({ "path": uri.path() })),
    ))
}

/// The base URL for URLs in documents: configured, else `http://<Host>` (only a
/// well-formed host), else `http://127.0.0.1`.
fn base_url(state: &SspState, headers: &HeaderMap) -> String {
    if let Some(b) = state.base_url() {
        return b.to_string();
    }
    headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| well_formed_host(h))
        .map(|h| format!("http://{h}"))
        .unwrap_or_else(|| FALLBACK_BASE.to_string())
}

/// `host[:port]` with a DNS name / IPv4 address or a bracketed IPv6 address: anything else
/// could make the served URLs invalid (or inject text into them).
fn well_formed_host(h: &str) -> bool {
    let port_ok = |p: &str| !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit());
    let (host, port) = if let Some(rest) = h.strip_prefix('[') {
        let Some((v6, after)) = rest.split_once(']') else {
            return false;
        };
        if v6.is_empty()
            || !v6
                .bytes()
                .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.')
        {
            return false;
        }
        return after.is_empty() || after.strip_prefix(':').is_some_and(port_ok);
    } else {
        match h.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (h, None),
        }
    };
    !host.is_empty()
        && host.len() <= 253
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
        && port.is_none_or(port_ok)
}

fn filters(query: Option<&str>) -> Vec<String> {
    url::form_urlencoded::parse(query.unwrap_or("").as_bytes())
        .filter(|(k, _)| k == "capability_type" || k == "type")
        .map(|(_, v)| v.into_owned())
        .collect()
}

async fn index(
    State(state): State<SspState>,
    headers: HeaderMap,
    RawQuery(q): RawQuery,
) -> Response {
    let authenticated = !state.valid_credentials(&headers, b"").is_empty();
    reply(state.index(
        &base_url(&state, &headers),
        authenticated,
        &filters(q.as_deref()),
    ))
}

/// A path segment that is not valid UTF-8 after percent-decoding: a 404 like any unknown
/// resource, in the unified shape (never axum's plain-text rejection).
fn bad_path(uri: &axum::http::Uri) -> Response {
    refusal(Refusal::new(
        404,
        ErrorObject::new(codes::SKILL_NOT_FOUND, "No SSP resource at this path")
            .with_details(json!({ "path": uri.path() })),
    ))
}

async fn descriptor(
    State(state): State<SspState>,
    uri: axum::http::Uri,
    headers: HeaderMap,
    file: Result<Path<String>, PathRejection>,
) -> Response {
    let Ok(Path(file)) = file else {
        return bad_path(&uri);
    };
    let authenticated = !state.valid_credentials(&headers, b"").is_empty();
    reply(state.descriptor(&base_url(&state, &headers), &file, authenticated))
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
    uri: axum::http::Uri,
    slug: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let Ok(Path(slug)) = slug else {
        return bad_path(&uri);
    };
    let base = base_url(&state, &headers);
    if state.skill_by_slug(&slug).is_none() {
        return refusal(Refusal::skill_not_found(&slug));
    }
    // 413 / 415 use VALIDATION_ERROR: the seed's §8.2 restricts error.code to its seven
    // codes, and an oversized or non-JSON body is an invalid request.
    let too_large = || {
        refusal(Refusal::new(
            413,
            crate::domain::ssp::validation_error(
                &format!("Request body exceeds {MAX_INVOCATION_BODY} bytes"),
                vec![crate::domain::ssp::ValidationDetail {
                    path: String::new(),
                    message: "request body too large".into(),
                    expected: json!({ "max_bytes": MAX_INVOCATION_BODY }),
                    actual: json!("larger body"),
                }],
            ),
        ))
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_INVOCATION_BODY as u64) {
        return too_large();
    }
    let bytes = match http_body_util::Limited::new(body, MAX_INVOCATION_BODY)
        .collect()
        .await
    {
        Ok(c) => c.to_bytes(),
        Err(e)
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some() =>
        {
            return too_large();
        }
        Err(e) => {
            return refusal(Refusal::new(
                400,
                crate::domain::ssp::validation_error(
                    "Request body could not be read",
                    vec![crate::domain::ssp::ValidationDetail {
                        path: String::new(),
                        message: e.to_string(),
                        expected: json!("a complete request body"),
                        actual: json!("unreadable body"),
                    }],
                ),
            ));
        }
    };
    if !super::is_json_media_type(&headers) {
        let ct = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok());
        return refusal(Refusal::new(
            415,
            crate::domain::ssp::validation_error(
                "Content-Type must be application/json",
                vec![crate::domain::ssp::ValidationDetail {
                    path: String::new(),
                    message: "unsupported media type".into(),
                    expected: json!("application/json"),
                    actual: json!(ct),
                }],
            ),
        ));
    }
    reply(state.invoke(&base, &slug, &headers, &bytes))
}

async fn status(
    State(state): State<SspState>,
    uri: axum::http::Uri,
    id: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
) -> Response {
    let Ok(Path(id)) = id else {
        return bad_path(&uri);
    };
    reply(state.status(&id, &headers))
}

async fn result(
    State(state): State<SspState>,
    uri: axum::http::Uri,
    id: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
) -> Response {
    let Ok(Path(id)) = id else {
        return bad_path(&uri);
    };
    reply(state.result(&id, &headers))
}
