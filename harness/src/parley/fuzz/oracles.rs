//! What every answer to a hostile request must satisfy, whatever the server chose to do
//! with it. The oracles accept every reading the notes allow: they never ask *which*
//! refusal, only that a refusal is well-formed and declared, that nothing broke (5xx, no
//! answer, leaked internals) and that the two bindings agree.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::transport::{Reply, TransportError, TransportKind};

/// One oracle: a property of every answer (or of the target after the campaign).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Oracle {
    /// No 5xx.
    NoServerError,
    /// An answer within the timeout, no connection reset (on a well-formed request).
    Answers,
    /// Refusals in the protocol's shape, with a reason the manifest declares.
    RefusalShape,
    /// The same outcome on both bindings for the same logical request (PV-TR-1).
    BindingsAgree,
    /// The target still answers afterwards and reads back what it accepted.
    StateIntact,
    /// No stack traces, SQL or file paths in answers.
    NoLeak,
    /// A post the envelope rules certainly refuse is never accepted.
    InvalidRefused,
}

impl Oracle {
    /// Every oracle, in report order.
    pub const ALL: [Oracle; 7] = [
        Oracle::NoServerError,
        Oracle::Answers,
        Oracle::RefusalShape,
        Oracle::BindingsAgree,
        Oracle::StateIntact,
        Oracle::NoLeak,
        Oracle::InvalidRefused,
    ];

    /// The oracle as the engine reports it.
    pub const fn spec(self) -> crate::engine::fuzz::Oracle {
        crate::engine::fuzz::Oracle {
            name: self.name(),
            title: self.title(),
            requirements: self.requirements(),
        }
    }

    /// Check id suffix (`fuzz/<name>`).
    pub const fn name(self) -> &'static str {
        match self {
            Oracle::NoServerError => "no-5xx",
            Oracle::Answers => "answers",
            Oracle::RefusalShape => "refusal-shape",
            Oracle::BindingsAgree => "bindings-agree",
            Oracle::StateIntact => "state-intact",
            Oracle::NoLeak => "no-leak",
            Oracle::InvalidRefused => "invalid-refused",
        }
    }

    /// One line for the report.
    pub const fn title(self) -> &'static str {
        match self {
            Oracle::NoServerError => "Hostile requests never get a 5xx",
            Oracle::Answers => "Hostile requests get an answer within the timeout",
            Oracle::RefusalShape => {
                "Refusals of hostile requests have the refusal shape and a declared reason"
            }
            Oracle::BindingsAgree => {
                "The same hostile request gets the same outcome on both bindings"
            }
            Oracle::StateIntact => {
                "After the campaign the target answers and reads back every accepted post"
            }
            Oracle::NoLeak => "Answers leak no stack trace, SQL or file path",
            Oracle::InvalidRefused => {
                "A post the envelope rules certainly refuse (unknown member, missing or empty body, body over the limit, undeclared kind, reply without thread) is never accepted"
            }
        }
    }

    /// Requirement IDs cited (first = primary).
    pub const fn requirements(self) -> &'static [&'static str] {
        match self {
            Oracle::NoServerError | Oracle::Answers | Oracle::NoLeak => &["PV-TR-3", "PV-EN-1"],
            Oracle::RefusalShape => &["PV-TR-3", "PV-TR-2"],
            Oracle::BindingsAgree => &["PV-TR-1"],
            Oracle::StateIntact => &["PV-TR-3"],
            Oracle::InvalidRefused => &["PV-EN-1", "PV-EN-2", "PV-EN-3", "PV-EN-6"],
        }
    }
}

/// One violated oracle on one answer: the dedup key is (operation, oracle, `key`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Breach {
    /// The oracle.
    pub oracle: Oracle,
    /// What distinguishes this breach (status, reason, code…).
    pub key: String,
    /// One sentence.
    pub message: String,
}

fn breach(oracle: Oracle, key: impl Into<String>, message: impl Into<String>) -> Breach {
    Breach {
        oracle,
        key: key.into(),
        message: message.into(),
    }
}

/// The outcome class of an answer, compared across bindings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Accepted.
    Success,
    /// Refused with this reason.
    Refusal(String),
    /// JSON-RPC error (MCP only).
    JsonRpcError(i64),
    /// Anything else (no answer, unreadable).
    Other(String),
}

impl Outcome {
    /// One word for messages.
    pub fn show(&self) -> String {
        match self {
            Outcome::Success => "success".into(),
            Outcome::Refusal(r) => format!("refusal {r}"),
            Outcome::JsonRpcError(c) => format!("JSON-RPC error {c}"),
            Outcome::Other(s) => s.clone(),
        }
    }
}

/// The refusal reason of a refusal body, checked against the manifest: `Err` = a breach.
fn refusal_reason(
    body: Option<&Value>,
    status: Option<u16>,
    declared: &BTreeSet<String>,
) -> Result<String, Breach> {
    let error = body.and_then(|b| b.get("error"));
    let reason = error.and_then(|e| e.get("reason")).and_then(Value::as_str);
    let Some(reason) = reason else {
        return Err(breach(
            Oracle::RefusalShape,
            format!("status {} without refusal body", status.unwrap_or(0)),
            "a refusal without {\"error\": {\"reason\", \"status\", \"message\"}}",
        ));
    };
    if !declared.contains(reason) {
        return Err(breach(
            Oracle::RefusalShape,
            format!("undeclared reason {reason}"),
            format!("refusal reason {reason:?} is not in the manifest's reasons"),
        ));
    }
    let e_status = error.and_then(|e| e.get("status")).and_then(Value::as_u64);
    let message_ok = error
        .and_then(|e| e.get("message"))
        .is_some_and(Value::is_string);
    if status.is_some_and(|s| e_status != Some(u64::from(s))) || e_status.is_none() || !message_ok {
        return Err(breach(
            Oracle::RefusalShape,
            format!("malformed refusal {reason}"),
            format!(
                "refusal {reason}: error.status must equal the HTTP status and error.message be a string"
            ),
        ));
    }
    Ok(reason.to_string())
}

/// Judges one answer; `tolerate_no_answer` for requests a server may drop (oversized heads).
pub fn judge(
    kind: TransportKind,
    reply: &Result<Reply, TransportError>,
    declared: &BTreeSet<String>,
    tolerate_no_answer: bool,
) -> (Outcome, Vec<Breach>) {
    let reply = match reply {
        Ok(r) => r,
        Err(e) => {
            let why = e.to_string();
            let key = if why.contains("timeout") {
                "timeout"
            } else {
                "no answer"
            };
            let found = if tolerate_no_answer {
                Vec::new()
            } else {
                vec![breach(Oracle::Answers, key, format!("no answer: {why}"))]
            };
            return (Outcome::Other(key.into()), found);
        }
    };
    let mut found = Vec::new();
    if reply.http_status >= 500 {
        found.push(breach(
            Oracle::NoServerError,
            format!("HTTP {}", reply.http_status),
            format!("HTTP {} to a hostile request", reply.http_status),
        ));
    }
    if let Some(m) = crate::engine::fuzz::leaked(&reply.text) {
        found.push(breach(
            Oracle::NoLeak,
            m.to_ascii_lowercase(),
            format!("the answer shows internals: {m:?}"),
        ));
    }
    let outcome = match kind {
        TransportKind::Http => http_outcome(reply, declared, &mut found),
        TransportKind::Mcp => mcp_outcome(reply, declared, &mut found),
    };
    (outcome, found)
}

fn http_outcome(reply: &Reply, declared: &BTreeSet<String>, found: &mut Vec<Breach>) -> Outcome {
    if reply.http_status < 400 {
        return Outcome::Success;
    }
    let labelled = reply
        .header("content-type")
        .is_some_and(|c| c.to_ascii_lowercase().starts_with("application/json"));
    if !labelled {
        found.push(breach(
            Oracle::RefusalShape,
            "refusal not labelled application/json",
            format!(
                "refusal HTTP {} with content type {:?}, not application/json",
                reply.http_status,
                reply.header("content-type")
            ),
        ));
    }
    match refusal_reason(reply.json.as_ref(), Some(reply.http_status), declared) {
        Ok(r) => Outcome::Refusal(r),
        Err(b) => {
            found.push(b);
            Outcome::Other(format!("HTTP {}", reply.http_status))
        }
    }
}

fn mcp_outcome(reply: &Reply, declared: &BTreeSet<String>, found: &mut Vec<Breach>) -> Outcome {
    let Some(msg) = reply.json.as_ref() else {
        if reply.http_status == 202 || (reply.http_status < 300 && reply.text.trim().is_empty()) {
            return Outcome::Other("no body".into());
        }
        found.push(breach(
            Oracle::RefusalShape,
            format!("HTTP {} without JSON-RPC", reply.http_status),
            format!(
                "MCP answer HTTP {} is not a JSON-RPC message",
                reply.http_status
            ),
        ));
        return Outcome::Other(format!("HTTP {}", reply.http_status));
    };
    if let Some(code) = msg
        .get("error")
        .map(|e| e.get("code").and_then(Value::as_i64))
    {
        return match code {
            Some(c) => Outcome::JsonRpcError(c),
            None => {
                found.push(breach(
                    Oracle::RefusalShape,
                    "JSON-RPC error without integer code",
                    "a JSON-RPC error needs an integer code",
                ));
                Outcome::Other("error".into())
            }
        };
    }
    let Some(result) = msg.get("result") else {
        found.push(breach(
            Oracle::RefusalShape,
            "JSON-RPC without result or error",
            "a JSON-RPC response needs result or error",
        ));
        return Outcome::Other("no result".into());
    };
    if result.get("isError") != Some(&Value::Bool(true)) {
        return Outcome::Success;
    }
    match refusal_reason(result.get("structuredContent"), None, declared) {
        Ok(r) => Outcome::Refusal(r),
        Err(b) => {
            found.push(b);
            Outcome::Other("tool error".into())
        }
    }
}

/// PV-TR-1 on one logical request: `None` when the outcomes agree.
pub fn compare(http: &Outcome, mcp: &Outcome) -> Option<Breach> {
    let quota = |o: &Outcome| matches!(o, Outcome::Refusal(r) if r == "rate_limited");
    let same = match (http, mcp) {
        // A write quota may run out between the two sends of the same request.
        _ if quota(http) || quota(mcp) => true,
        (Outcome::Success, Outcome::Success) => true,
        (Outcome::Refusal(a), Outcome::Refusal(b)) => a == b,
        // Neither readable: other oracles report it.
        (Outcome::Other(_), _) | (_, Outcome::Other(_)) => true,
        _ => false,
    };
    (!same).then(|| {
        breach(
            Oracle::BindingsAgree,
            format!("http {} / mcp {}", http.show(), mcp.show()),
            format!("HTTP answered {}, MCP {}", http.show(), mcp.show()),
        )
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;
    use serde_json::json;

    fn reply(status: u16, body: Value) -> Result<Reply, TransportError> {
        Ok(Reply {
            http_status: status,
            headers: vec![("content-type".into(), "application/json".into())],
            text: body.to_string(),
            json: Some(body),
            exchanges: Vec::new(),
        })
    }

    #[test]
    fn judges_shapes_reasons_and_leaks() {
        let declared: BTreeSet<String> = ["invalid_body".to_string()].into();
        let ok = reply(
            400,
            json!({"error": {"reason": "invalid_body", "status": 400, "message": "m"}}),
        );
        let (o, b) = judge(TransportKind::Http, &ok, &declared, false);
        assert_eq!((o, b), (Outcome::Refusal("invalid_body".into()), vec![]));
        let odd = reply(
            400,
            json!({"error": {"reason": "nope", "status": 400, "message": "m"}}),
        );
        let (_, b) = judge(TransportKind::Http, &odd, &declared, false);
        assert_eq!(b[0].oracle, Oracle::RefusalShape);
        let (_, b) = judge(
            TransportKind::Http,
            &reply(500, json!({})),
            &declared,
            false,
        );
        assert!(b.iter().any(|b| b.oracle == Oracle::NoServerError));
        let leak = reply(
            400,
            json!({"error": {"reason": "invalid_body", "status": 400,
            "message": "thread 'x' panicked at src/service/post.rs:12:5"}}),
        );
        let (_, b) = judge(TransportKind::Http, &leak, &declared, false);
        assert!(b.iter().any(|b| b.oracle == Oracle::NoLeak));
        let tool = reply(
            200,
            json!({"jsonrpc": "2.0", "id": 1, "result": {"isError": true,
            "structuredContent": {"error": {"reason": "invalid_body", "status": 400, "message": "m"}}}}),
        );
        let (o, b) = judge(TransportKind::Mcp, &tool, &declared, false);
        assert_eq!((o, b), (Outcome::Refusal("invalid_body".into()), vec![]));
        assert!(compare(&Outcome::Success, &Outcome::Refusal("x".into())).is_some());
        assert!(compare(&Outcome::Refusal("x".into()), &Outcome::Refusal("x".into())).is_none());
        let quota = Outcome::Refusal("rate_limited".into());
        assert!(compare(&Outcome::Refusal("x".into()), &quota).is_none());
        assert!(compare(&quota, &Outcome::Success).is_none());
    }
}
