//! Refusals an HTTP server raises before routing — an oversized request head or request
//! target, a malformed head — and the one status-only judgement both protocols apply to
//! them (parley-v1.md PV-TR-6 and its §10 transport table; ssp.md SSP-ERR-4 refers to it).
//!
//! Why status only: such a refusal comes from the HTTP layer (often a library's default),
//! before the request reaches either protocol's routes, so the notes ask only for the
//! status of its row (SHOULD); its reason and body shape are SHOULDs of their own, judged by
//! each protocol as warnings where it says so.

use super::Exchange;

/// The reasons of §10's transport table: a refusal naming another one came from a route.
pub const TRANSPORT_REASONS: [&str; 8] = [
    "invalid_request",
    "forbidden_origin",
    "forbidden_host",
    "request_timeout",
    "uri_too_long",
    "headers_too_large",
    "server_busy",
    "http_version_not_supported",
];

/// Whether an answer to a request breaking `cond` came from a route rather than the HTTP
/// layer: a 4xx that is not about size (413, 414, 431) with a refusal naming a reason outside
/// the transport table. The request was then within the server's own limit and a route
/// refused it for reasons of its own (an unknown query parameter…): judged as any refusal,
/// not here. Never a 5xx: a crash with a JSON body is still a crash.
pub fn routed(cond: Condition, status: u16, reason: Option<&str>) -> bool {
    (400..500).contains(&status)
        && !matches!(status, 413 | 414 | 431)
        && status != cond.status()
        && reason.is_some_and(|r| !TRANSPORT_REASONS.contains(&r))
}

/// The statuses of the transport table's rows (PV-TR-6): another row's status for the wrong
/// condition is a warning, not a server error.
const ROW_STATUSES: [u16; 7] = [400, 403, 408, 414, 431, 503, 505];

/// A condition the HTTP layer answers before routing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Condition {
    /// The header section is over the server's limit (§10: 431 `headers_too_large`).
    HeadTooLarge,
    /// The request target is over the server's limit (§10: 414 `uri_too_long`).
    UriTooLong,
}

impl Condition {
    /// The status of the condition's row.
    pub fn status(self) -> u16 {
        match self {
            Self::HeadTooLarge => 431,
            Self::UriTooLong => 414,
        }
    }

    /// The reason of the condition's row (a SHOULD: PV-TR-6).
    pub fn reason(self) -> &'static str {
        match self {
            Self::HeadTooLarge => "headers_too_large",
            Self::UriTooLong => "uri_too_long",
        }
    }
}

/// Sizes a probe of `cond` tries in turn: over the common limits (8–16 KiB request lines,
/// 64 KiB heads), then far over them. A request target stays under 64 KiB: the harness's
/// HTTP stack cannot send a longer one (`http::Uri`).
pub fn sizes(cond: Condition) -> [usize; 2] {
    match cond {
        Condition::UriTooLong => [16 * 1024, 60 * 1024],
        Condition::HeadTooLarge => [64 * 1024 + 1, 1024 * 1024],
    }
}

/// The request target (from `path`) and extra headers of `cond`'s probe at `size`.
pub fn oversized(cond: Condition, path: &str, size: usize) -> (String, Vec<(String, String)>) {
    let pad = "a".repeat(size);
    match cond {
        Condition::UriTooLong => {
            let sep = if path.contains('?') { '&' } else { '?' };
            (format!("{path}{sep}conform_pad={pad}"), Vec::new())
        }
        Condition::HeadTooLarge => (path.to_string(), vec![("x-conform-pad".into(), pad)]),
    }
}

/// One probe in words (`a request target of 16384 bytes`).
pub fn describe(cond: Condition, size: usize) -> String {
    match cond {
        Condition::UriTooLong => format!("a request target of {size} bytes"),
        Condition::HeadTooLarge => format!("a header of {size} bytes"),
    }
}

/// A probe's exchange with its padding cut down to a mention: a report keeps the exchange,
/// not the megabyte.
pub fn shortened(mut ex: Exchange) -> Exchange {
    const KEEP: usize = 80;
    // Here rather than the engine's `truncate`: the transport layer imports nothing above it.
    let cut = |s: &str| {
        let head: String = s.chars().take(KEEP).collect();
        format!("{head}… ({} bytes)", s.len())
    };
    if ex.url.len() > KEEP * 2 {
        ex.url = cut(&ex.url);
    }
    for (_, v) in &mut ex.request_headers {
        if v.len() > KEEP * 2 {
            *v = cut(v);
        }
    }
    ex
}

/// What the status of an answer to an oversized request says, before any body is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// The row's status: the body is judged next (warnings only).
    Row,
    /// 2xx: the request was within the server's own limit (no refusal to judge).
    Served,
    /// Another 4xx, another row's 5xx (503, 505) or no answer at all: a warning.
    Other(String),
    /// A 5xx no row gives (500, 502, 504…): a failure (PV-TR-6: "a 500 fails").
    ServerError(String),
}

/// The status-only judgement of PV-TR-6 for an answer to a request breaking `cond`
/// (`None`: the connection ended without an answer).
pub fn judge_status(cond: Condition, status: Option<u16>) -> Status {
    let row = cond.status();
    match status {
        None => Status::Other(format!(
            "no HTTP answer where §10 gives {row} {}",
            cond.reason()
        )),
        Some(s) if s == row => Status::Row,
        Some(s) if (200..300).contains(&s) => Status::Served,
        Some(s) if ROW_STATUSES.contains(&s) && s >= 500 => Status::Other(format!(
            "HTTP {s} (another row of the transport table) where §10 gives {row} {}",
            cond.reason()
        )),
        Some(s) if s >= 500 => Status::ServerError(format!(
            "HTTP {s} to an oversized request: a transport refusal is a 4xx ({row} {})",
            cond.reason()
        )),
        Some(s) => Status::Other(format!("HTTP {s} where §10 gives {row} {}", cond.reason())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_of_the_transport_table() {
        use Condition::*;
        assert_eq!(judge_status(UriTooLong, Some(414)), Status::Row);
        assert_eq!(judge_status(HeadTooLarge, Some(431)), Status::Row);
        assert_eq!(judge_status(HeadTooLarge, Some(200)), Status::Served);
        assert!(matches!(
            judge_status(HeadTooLarge, Some(400)),
            Status::Other(_)
        ));
        assert!(matches!(
            judge_status(UriTooLong, Some(431)),
            Status::Other(_)
        ));
        assert!(matches!(
            judge_status(UriTooLong, Some(503)),
            Status::Other(_)
        ));
        assert!(matches!(
            judge_status(UriTooLong, Some(505)),
            Status::Other(_)
        ));
        assert!(matches!(judge_status(UriTooLong, None), Status::Other(_)));
        assert!(matches!(
            judge_status(UriTooLong, Some(500)),
            Status::ServerError(_)
        ));
        assert!(matches!(
            judge_status(HeadTooLarge, Some(502)),
            Status::ServerError(_)
        ));
    }

    #[test]
    fn a_route_refusal_is_told_from_a_transport_one() {
        use Condition::*;
        assert!(routed(UriTooLong, 400, Some("invalid_body")));
        assert!(!routed(UriTooLong, 400, Some("invalid_request")));
        assert!(!routed(UriTooLong, 400, None));
        assert!(!routed(UriTooLong, 414, Some("not_found")));
        // A crash with a JSON body is no route's refusal; nor is a size refusal.
        assert!(!routed(UriTooLong, 500, Some("internal_error")));
        assert!(!routed(HeadTooLarge, 413, Some("payload_too_large")));
    }
}
