//! How much the harness reads from a target: a hostile or broken server must cost a verdict,
//! never unbounded memory or time.
//!
//! Every response the transports read is bounded: the body by [`Limits::response_body_bytes`]
//! (read chunk by chunk, the overflow stops the read), the header count by
//! [`Limits::response_headers`] (the header block as a whole by the HTTP stack's own buffer,
//! about 400 KiB), JSON nesting by [`Limits::json_depth`] and the events of one SSE stream by
//! [`Limits::sse_events`]. The total time of a request, body included, is the profile's
//! `timeout_ms`. A profile may change the limits in its `[limits]` table.

use serde::{Deserialize, Serialize};

/// Default cap of one response body: 16 MiB.
pub const DEFAULT_RESPONSE_BODY_BYTES: u64 = 16 * 1024 * 1024;
/// Default cap of the header count of one response (hyper's own default).
pub const DEFAULT_RESPONSE_HEADERS: usize = 100;
/// Default cap of JSON nesting (also `serde_json`'s recursion limit: it cannot be raised).
pub const DEFAULT_JSON_DEPTH: usize = 128;
/// Default cap of the events read from one SSE response.
pub const DEFAULT_SSE_EVENTS: usize = 1024;

/// What the harness reads from a target at most (the profile's `[limits]` table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Bytes of one response body (after transfer decoding).
    pub response_body_bytes: u64,
    /// Header fields of one response.
    pub response_headers: usize,
    /// Nesting depth of a JSON response (at most 128, `serde_json`'s limit).
    pub json_depth: usize,
    /// Events read from one `text/event-stream` response.
    pub sse_events: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            response_body_bytes: DEFAULT_RESPONSE_BODY_BYTES,
            response_headers: DEFAULT_RESPONSE_HEADERS,
            json_depth: DEFAULT_JSON_DEPTH,
            sse_events: DEFAULT_SSE_EVENTS,
        }
    }
}

impl Limits {
    /// Checks the values a profile set (all positive; JSON depth within `serde_json`'s limit).
    pub fn validate(&self) -> Result<(), String> {
        if self.response_body_bytes == 0 || self.response_headers == 0 || self.sse_events == 0 {
            return Err("[limits]: every limit must be positive".into());
        }
        if self.json_depth == 0 || self.json_depth > DEFAULT_JSON_DEPTH {
            return Err(format!(
                "[limits] json_depth must be between 1 and {DEFAULT_JSON_DEPTH}"
            ));
        }
        Ok(())
    }
}

/// The deepest nesting of arrays and objects in a JSON text, counted without parsing it
/// (strings are skipped), stopping as soon as `max` is exceeded. `true` when it is.
pub fn json_deeper_than(text: &str, max: usize) -> bool {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for b in text.bytes() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// Why a response was cut short by a limit (the message of the check's verdict).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitExceeded {
    /// The body is longer than the cap.
    #[error(
        "response body exceeds the limit of {limit} bytes (profile [limits] response_body_bytes)"
    )]
    Body {
        /// The cap.
        limit: u64,
    },
    /// The JSON nests deeper than the cap.
    #[error("response JSON nests deeper than {limit} levels (profile [limits] json_depth)")]
    JsonDepth {
        /// The cap.
        limit: usize,
    },
    /// The SSE stream has more events than the cap.
    #[error("response event stream has more than {limit} events (profile [limits] sse_events)")]
    SseEvents {
        /// The cap.
        limit: usize,
    },
}

#[cfg(test)]
#[expect(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;

    #[test]
    fn depth_ignores_strings_and_stops_early() {
        assert!(!json_deeper_than(r#"{"a":[1,{"b":"[[[[["}]}"#, 3));
        assert!(json_deeper_than(r#"{"a":[1,{"b":[]}]}"#, 3));
        assert!(!json_deeper_than(r#"{"a":"\"[[[[\\"}"#, 1));
        let deep = "[".repeat(200_000);
        assert!(json_deeper_than(&deep, 128));
    }

    #[test]
    fn profile_values_are_checked() {
        assert!(Limits::default().validate().is_ok());
        let l: Limits = toml::from_str("response_body_bytes = 1024").unwrap();
        assert_eq!(l.response_body_bytes, 1024);
        assert_eq!(l.sse_events, DEFAULT_SSE_EVENTS);
        assert!(toml::from_str::<Limits>("body = 1").is_err());
        let l: Limits = toml::from_str("json_depth = 1000").unwrap();
        assert!(l.validate().is_err());
    }
}
