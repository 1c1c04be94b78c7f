//! What the wire adapters of both wings share: the JSON media type of a request and
//! duplicate members ([`duplicates`]). The bindings themselves live in their wings:
//! [`crate::parley::api`] (HTTP, MCP) and [`crate::ssp::api`] (the SSP routes); the OpenAPI
//! document of both is [`crate::openapi`].

pub mod duplicates;

/// Whether `Content-Type` is `application/json` or `application/*+json` (parameters
/// ignored): the one JSON test of the Parley HTTP binding (PV-RS-4) and the SSP routes.
pub fn is_json_media_type(headers: &axum::http::HeaderMap) -> bool {
    let Some(value) = headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let essence = value
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
}
