//! Parley's two wire bindings: [`http`] (`/v1/…`) and [`mcp`] (`POST /mcp`, the nine tools).
//! Both translate the wire into a [`crate::parley::service::Request`] and the
//! [`crate::parley::service::Response`] back, so they cannot disagree (PV-TR-1); what they
//! share with the SSP routes is in [`crate::api`]; the bearer token and the body cap are
//! Parley's own (PV-TR-4, PV-TR-5).

pub mod http;
pub mod mcp;

use axum::http::HeaderMap;

use crate::parley::service::BearerToken;

/// Hard cap on any request body read by a Parley binding (1 MiB).
///
/// Well above `limits.request_max_bytes` (64 KiB) on purpose: bodies between the two are read
/// and handed to the service with their size, so the service answers `413 payload_too_large`
/// at its place in the check order (PV-AU-6, PV-TR-5). Only bodies beyond this cap are cut
/// off early (413 straight from the binding), so a hostile client cannot make the server
/// buffer unbounded input.
pub const HARD_BODY_CAP: usize = 1024 * 1024;

/// Extracts the bearer token of PV-TR-4 from the `Authorization` header.
///
/// Absent header → `None` (`token_missing`); `Bearer <token>` (scheme case-insensitive, one
/// token) → the token; anything else — another scheme, an empty token, non-ASCII bytes,
/// several `Authorization` headers — → [`BearerToken::Malformed`] (`token_invalid`).
pub fn bearer_from_headers(headers: &HeaderMap) -> Option<BearerToken> {
    let mut values = headers.get_all(axum::http::header::AUTHORIZATION).iter();
    let first = values.next()?;
    if values.next().is_some() {
        return Some(BearerToken::Malformed);
    }
    let Ok(text) = first.to_str() else {
        return Some(BearerToken::Malformed);
    };
    Some(parse_bearer(text))
}

/// Parses an `Authorization` value (`Bearer <token>`); see [`bearer_from_headers`].
pub fn parse_bearer(value: &str) -> BearerToken {
    let value = value.trim();
    let Some((scheme, token)) = value.split_once(' ') else {
        return BearerToken::Malformed;
    };
    let token = token.trim();
    if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() || token.contains(' ') {
        return BearerToken::Malformed;
    }
    BearerToken::Token(token.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_parsing_follows_pv_tr_4() {
        assert!(matches!(parse_bearer("Bearer abc"), BearerToken::Token(t) if t == "abc"));
        assert!(matches!(parse_bearer("bearer abc"), BearerToken::Token(t) if t == "abc"));
        assert!(matches!(parse_bearer("Basic abc"), BearerToken::Malformed));
        assert!(matches!(parse_bearer("Bearer"), BearerToken::Malformed));
        assert!(matches!(parse_bearer("Bearer "), BearerToken::Malformed));
        assert!(matches!(parse_bearer("Bearer a b"), BearerToken::Malformed));
        let headers = HeaderMap::new();
        assert!(bearer_from_headers(&headers).is_none());
    }
}
