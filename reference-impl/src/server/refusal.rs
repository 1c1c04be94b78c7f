//! Refusals the transport emits before (or instead of) routing, in the Parley refusal shape.
//!
//! hyper answers a malformed or oversized request head with an empty-bodied 400/414/431, and
//! a connection cut for idleness or a connection over the cap gets no HTTP answer at all.
//! Every one of those goes through here so that a client always sees
//! `{"error":{"reason","status","message"}}` with `Content-Type: application/json`, like any
//! other refusal of the server (PV-TR-3). The reasons are transport-level and therefore
//! outside the operation refusal table of parley-v1.md §10.

use axum::http::{HeaderValue, header};
use axum::response::Response as HttpResponse;
use serde_json::json;

/// A refusal raised by the transport, identified by its status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportRefusal {
    /// 400: the request head is not valid HTTP/1.1 (hyper's parse error).
    InvalidRequest,
    /// 408: no complete request head, or no complete request, within the deadline.
    RequestTimeout,
    /// 414: the request target is longer than the limit.
    UriTooLong,
    /// 431: the request head is larger than the limit or has too many header fields.
    HeadersTooLarge,
    /// 503: the server is at its concurrent-connection cap.
    ServerBusy,
    /// 505: an HTTP/2 (h2c) connection preface; the server speaks HTTP/1.1 only.
    VersionNotSupported,
    /// 403: the `Host` names a host this server does not answer to (DNS rebinding,
    /// [`super::rebinding`]).
    ForbiddenHost,
    /// 403: the `Origin` is present and not allowed (DNS rebinding, [`super::rebinding`]).
    ForbiddenOrigin,
}

impl TransportRefusal {
    /// The HTTP status code.
    pub fn status(self) -> u16 {
        match self {
            Self::InvalidRequest => 400,
            Self::RequestTimeout => 408,
            Self::UriTooLong => 414,
            Self::HeadersTooLarge => 431,
            Self::ServerBusy => 503,
            Self::VersionNotSupported => 505,
            Self::ForbiddenHost | Self::ForbiddenOrigin => 403,
        }
    }

    /// The machine-readable reason of the refusal body.
    pub fn reason(self) -> &'static str {
        match self {
            Self::InvalidRequest => "invalid_request",
            Self::RequestTimeout => "request_timeout",
            Self::UriTooLong => "uri_too_long",
            Self::HeadersTooLarge => "headers_too_large",
            Self::ServerBusy => "server_busy",
            Self::VersionNotSupported => "http_version_not_supported",
            Self::ForbiddenHost => "forbidden_host",
            Self::ForbiddenOrigin => "forbidden_origin",
        }
    }

    fn phrase(self) -> &'static str {
        match self {
            Self::InvalidRequest => "Bad Request",
            Self::RequestTimeout => "Request Timeout",
            Self::UriTooLong => "URI Too Long",
            Self::HeadersTooLarge => "Request Header Fields Too Large",
            Self::ServerBusy => "Service Unavailable",
            Self::VersionNotSupported => "HTTP Version Not Supported",
            Self::ForbiddenHost | Self::ForbiddenOrigin => "Forbidden",
        }
    }

    /// The human-readable message of the refusal body.
    pub fn message(self) -> &'static str {
        match self {
            Self::InvalidRequest => "the request head is not valid HTTP/1.1",
            Self::RequestTimeout => {
                "the request (or its head) did not arrive within the server's deadline"
            }
            Self::UriTooLong => "the request target exceeds the server's URI limit",
            Self::HeadersTooLarge => {
                "the request head exceeds the server's size or header-count limit"
            }
            Self::ServerBusy => "the server is at its connection limit; retry shortly",
            Self::VersionNotSupported => "this server speaks HTTP/1.1 only (no h2c)",
            Self::ForbiddenHost => {
                "the Host header names a host this server does not answer to \
                 (DNS-rebinding protection; see --allowed-host)"
            }
            Self::ForbiddenOrigin => {
                "the Origin header is not allowed by this server \
                 (DNS-rebinding protection; see --allowed-origin)"
            }
        }
    }

    /// Maps the status of an automatic hyper response to the refusal it stands for.
    pub fn from_hyper_status(status: &[u8]) -> Option<Self> {
        match status {
            b"400" => Some(Self::InvalidRequest),
            b"408" => Some(Self::RequestTimeout),
            b"414" => Some(Self::UriTooLong),
            b"431" => Some(Self::HeadersTooLarge),
            _ => None,
        }
    }

    /// The JSON body.
    pub fn body(self) -> Vec<u8> {
        let body = json!({"error": {
            "reason": self.reason(),
            "status": self.status(),
            "message": self.message(),
        }});
        // Serialising a `Value` built from string literals and integers cannot fail.
        serde_json::to_vec(&body).unwrap_or_default()
    }

    /// The whole response as raw HTTP/1.1 bytes, for the places that write on the socket
    /// themselves (no request was routed). Always `Connection: close`.
    pub fn raw(self) -> Vec<u8> {
        let body = self.body();
        let retry = if self == Self::ServerBusy {
            "retry-after: 1\r\n"
        } else {
            ""
        };
        let mut out = format!(
            "HTTP/1.1 {} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
             connection: close\r\n{retry}\r\n",
            self.status(),
            self.phrase(),
            body.len()
        )
        .into_bytes();
        out.extend_from_slice(&body);
        out
    }

    /// The refusal as a stock HTTP stack sends it: the status and its phrase in plain text
    /// (variant `transport-refusals-plain`, a reading PV-TR-6 allows).
    pub fn plain(self) -> HttpResponse {
        self.with_body(
            self.phrase().as_bytes().to_vec(),
            "text/plain; charset=utf-8",
        )
    }

    /// The response for a routed request (the request deadline, the URI limit), in the
    /// Parley refusal shape. Closes the connection: the request was not read to its end.
    pub fn response(self) -> HttpResponse {
        self.with_body(self.body(), "application/json")
    }

    fn with_body(self, body: Vec<u8>, content_type: &'static str) -> HttpResponse {
        let mut out = HttpResponse::new(axum::body::Body::from(body));
        *out.status_mut() = axum::http::StatusCode::from_u16(self.status())
            .unwrap_or(axum::http::StatusCode::BAD_REQUEST);
        let headers = out.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
        headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
        out
    }
}

/// If `buf` is exactly one automatic hyper refusal head (`HTTP/1.1 400|408|414|431`, no
/// body, nothing after the head), the refusal it stands for.
///
/// Why this is safe to recognise by bytes: the application never emits a bodiless response
/// with those statuses (all its refusals carry the JSON body), and a write that starts with
/// `HTTP/1.1 ` is a response head — bodies are JSON and never start that way.
pub fn hyper_refusal(buf: &[u8]) -> Option<TransportRefusal> {
    let rest = buf.strip_prefix(b"HTTP/1.1 ")?;
    let refusal = TransportRefusal::from_hyper_status(rest.get(..3)?)?;
    let head_end = buf.windows(4).position(|w| w == b"\r\n\r\n")?;
    if head_end + 4 != buf.len() {
        return None;
    }
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    head.contains("\r\ncontent-length: 0").then_some(refusal)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The manifest's `reasons` (PV-MF-1) name every reason the transport emits.
    #[test]
    fn transport_reasons_are_declared_in_the_manifest() {
        let all = [
            TransportRefusal::InvalidRequest,
            TransportRefusal::RequestTimeout,
            TransportRefusal::UriTooLong,
            TransportRefusal::HeadersTooLarge,
            TransportRefusal::ServerBusy,
            TransportRefusal::VersionNotSupported,
            TransportRefusal::ForbiddenHost,
            TransportRefusal::ForbiddenOrigin,
        ];
        let declared = crate::domain::parley::reasons::TRANSPORT_REASONS;
        let emitted: Vec<&str> = all.iter().map(|r| r.reason()).collect();
        assert_eq!(emitted, declared);
    }

    #[test]
    fn raw_refusal_is_a_complete_json_response() {
        let raw = TransportRefusal::HeadersTooLarge.raw();
        let text = String::from_utf8(raw).unwrap_or_default();
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or_default();
        assert!(head.starts_with("HTTP/1.1 431 "));
        assert!(head.contains("content-type: application/json"));
        assert!(head.contains(&format!("content-length: {}", body.len())));
        let v: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
        assert_eq!(v["error"]["status"], 431);
        assert_eq!(v["error"]["reason"], "headers_too_large");
    }

    #[test]
    fn only_bodiless_hyper_heads_are_recognised() {
        let hyper = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\ndate: x\r\n\r\n";
        assert_eq!(hyper_refusal(hyper), Some(TransportRefusal::InvalidRequest));
        let app = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 12\r\n\r\n";
        assert_eq!(hyper_refusal(app), None);
        let with_body = b"HTTP/1.1 431 X\r\ncontent-length: 0\r\n\r\nmore";
        assert_eq!(hyper_refusal(with_body), None);
        assert_eq!(
            hyper_refusal(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"),
            None
        );
        assert_eq!(hyper_refusal(b"{\"error\":1}"), None);
    }
}
