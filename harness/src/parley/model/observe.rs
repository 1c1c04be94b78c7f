//! What the target answered to one model step, binding-neutral: a success body, a refusal
//! (status, reason) or a protocol fault, read the same way on HTTP and on MCP (PV-TR-2/3).

use serde_json::{Value, json};

use crate::transport::{Reply, TransportKind};

/// The class of one answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// Accepted: the success body (HTTP body, MCP `structuredContent`).
    Success(Value),
    /// Refused with `error.status` and `error.reason`.
    Refusal {
        /// Status (HTTP status, or `error.status` on MCP).
        status: u16,
        /// Reason.
        reason: String,
    },
    /// Neither: a JSON-RPC error, a non-JSON body, an HTTP status without error object.
    Other(String),
}

impl Answer {
    /// Reads a reply, taking its JSON out (`reply.json` is `None` after): inbox pages and
    /// thread reads are large, and a copy of each was a measurable share of a model run's
    /// CPU (issue 25).
    pub fn read(kind: TransportKind, reply: &mut Reply) -> Self {
        match kind {
            TransportKind::Http => read_http(reply),
            TransportKind::Mcp => read_mcp(reply),
        }
    }

    /// A compact picture for violations.
    pub fn summary(&self) -> Value {
        match self {
            Self::Success(_) => json!("accepted"),
            Self::Refusal { status, reason } => json!({"status": status, "reason": reason}),
            Self::Other(s) => json!(s),
        }
    }
}

fn read_http(reply: &mut Reply) -> Answer {
    let Some(body) = reply.json.take() else {
        return Answer::Other(format!(
            "HTTP {} without a JSON body: {}",
            reply.http_status,
            crate::engine::target::truncate(&reply.text, 200)
        ));
    };
    if (200..300).contains(&reply.http_status) {
        return Answer::Success(body);
    }
    match body.pointer("/error/reason").and_then(Value::as_str) {
        Some(reason) => Answer::Refusal {
            status: reply.http_status,
            reason: reason.to_string(),
        },
        None => Answer::Other(format!("HTTP {} without error.reason", reply.http_status)),
    }
}

fn read_mcp(reply: &mut Reply) -> Answer {
    let Some(mut msg) = reply.json.take() else {
        return Answer::Other(format!(
            "MCP HTTP {} without a JSON-RPC message",
            reply.http_status
        ));
    };
    if let Some(e) = msg.get("error") {
        return Answer::Other(format!("JSON-RPC error {e}"));
    }
    let Some(result) = msg.get_mut("result") else {
        return Answer::Other("JSON-RPC message without result".into());
    };
    let sc = result
        .get_mut("structuredContent")
        .map(Value::take)
        .unwrap_or(Value::Null);
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        let status = sc.pointer("/error/status").and_then(Value::as_u64);
        let reason = sc.pointer("/error/reason").and_then(Value::as_str);
        return match (status, reason) {
            (Some(s), Some(r)) => Answer::Refusal {
                status: u16::try_from(s).unwrap_or(0),
                reason: r.to_string(),
            },
            _ => Answer::Other("isError without error.status/reason".into()),
        };
    }
    Answer::Success(sc)
}

/// A JSON string member.
pub fn str_at<'a>(v: &'a Value, pointer: &str) -> Option<&'a str> {
    v.pointer(pointer).and_then(Value::as_str)
}

/// An extension as the model holds it: `null`, absent and `""` all mean none.
pub fn extension_of(party: &Value) -> Option<&str> {
    party
        .get("extension")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}
