//! What every answer to a hostile request must satisfy, whatever the server chose to do
//! with it. The oracles accept every reading the notes allow: they never ask *which*
//! refusal, only that a refusal is well-formed and declared, that nothing broke (5xx, no
//! answer, leaked internals) and that the two bindings agree.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::engine::finding::{Finding, Source};
use crate::transport::pre_routing::{Condition, Status, judge_status, routed};
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
    /// A request refused before routing gets its §10 transport status, in the PV-TR-3 shape
    /// with the row's reason (PV-TR-6: SHOULDs, so its findings are warnings).
    TransportRefusal,
}

impl Oracle {
    /// Every oracle, in report order.
    pub const ALL: [Self; 8] = [
        Self::NoServerError,
        Self::Answers,
        Self::RefusalShape,
        Self::BindingsAgree,
        Self::StateIntact,
        Self::NoLeak,
        Self::InvalidRefused,
        Self::TransportRefusal,
    ];

    /// A breach of this oracle on one answer ([`crate::capability::fuzz::Oracle::breach`]).
    pub fn breach(self, key: impl Into<String>, message: impl Into<String>) -> Finding {
        self.spec().breach(key, message)
    }

    /// The oracle as the engine reports it.
    pub const fn spec(self) -> crate::capability::fuzz::Oracle {
        crate::capability::fuzz::Oracle {
            name: self.name(),
            title: self.title(),
            requirements: self.requirements(),
            warns: matches!(self, Self::TransportRefusal),
        }
    }

    /// Check id suffix (`fuzz/<name>`).
    pub const fn name(self) -> &'static str {
        match self {
            Self::NoServerError => "no-5xx",
            Self::Answers => "answers",
            Self::RefusalShape => "refusal-shape",
            Self::BindingsAgree => "bindings-agree",
            Self::StateIntact => "state-intact",
            Self::NoLeak => "no-leak",
            Self::InvalidRefused => "invalid-refused",
            Self::TransportRefusal => "transport-refusal",
        }
    }

    /// One line for the report.
    pub const fn title(self) -> &'static str {
        match self {
            Self::NoServerError => "Hostile requests never get a 5xx",
            Self::Answers => "Hostile requests get an answer within the timeout",
            Self::RefusalShape => {
                "Refusals of hostile requests have the refusal shape and a declared reason"
            }
            Self::BindingsAgree => {
                "The same hostile request gets the same outcome on both bindings"
            }
            Self::StateIntact => {
                "After the campaign the target answers and reads back every accepted post"
            }
            Self::NoLeak => "Answers leak no stack trace, SQL or file path",
            Self::InvalidRefused => {
                "A post the envelope rules certainly refuse (unknown member, missing or empty body, body over the limit, undeclared kind, reply without thread) is never accepted"
            }
            Self::TransportRefusal => {
                "An oversized head or request target refused before routing gets its §10 transport status (431, 414) in the refusal shape with that row's reason (SHOULD: warnings)"
            }
        }
    }

    /// Requirement IDs cited (first = primary).
    pub const fn requirements(self) -> &'static [&'static str] {
        match self {
            Self::NoServerError | Self::Answers | Self::NoLeak => &["PV-TR-3", "PV-EN-1"],
            Self::RefusalShape => &["PV-TR-3", "PV-TR-2"],
            Self::BindingsAgree => &["PV-TR-1"],
            Self::StateIntact => &["PV-TR-3"],
            Self::InvalidRefused => &["PV-EN-1", "PV-EN-2", "PV-EN-3", "PV-EN-6"],
            Self::TransportRefusal => &["PV-TR-6"],
        }
    }
}

/// The oracle a finding of a Parley campaign comes from.
pub fn oracle_of(f: &Finding) -> Option<Oracle> {
    Oracle::ALL
        .into_iter()
        .find(|o| f.source == Source::Fuzz(o.name()))
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
            Self::Success => "success".into(),
            Self::Refusal(r) => format!("refusal {r}"),
            Self::JsonRpcError(c) => format!("JSON-RPC error {c}"),
            Self::Other(s) => s.clone(),
        }
    }
}

/// Why a refusal body breaks the refusal shape: what tells it apart, and one sentence (the
/// oracle that judged the answer makes it a breach of its own).
type ShapeFault = (String, String);

/// The refusal reason of a refusal body, checked against the manifest.
fn refusal_reason(
    body: Option<&Value>,
    status: Option<u16>,
    declared: &BTreeSet<String>,
) -> Result<String, ShapeFault> {
    let read = crate::parley::refusal::read(body, status, declared);
    let Some(reason) = read.reason else {
        return Err((
            format!("status {} without refusal body", status.unwrap_or(0)),
            "a refusal without {\"error\": {\"reason\", \"status\", \"message\"}}".into(),
        ));
    };
    if !read.declared {
        return Err((
            format!("undeclared reason {reason}"),
            format!("refusal reason {reason:?} is not in the manifest's reasons"),
        ));
    }
    if !read.shaped {
        return Err((
            format!("malformed refusal {reason}"),
            format!(
                "refusal {reason}: error.status must equal the HTTP status and error.message be a string"
            ),
        ));
    }
    Ok(reason)
}

/// Judges one answer; `pre_routing` for a request that breaks a condition of PV-TR-6's
/// transport table (an oversized head or target): judged on status, the rest warnings.
pub fn judge(
    kind: TransportKind,
    reply: &Result<Reply, TransportError>,
    declared: &BTreeSet<String>,
    pre_routing: Option<Condition>,
) -> (Outcome, Vec<Finding>) {
    let reply = match reply {
        Ok(r) => r,
        Err(e) => {
            let why = e.to_string();
            let key = if why.contains("timeout") {
                "timeout"
            } else {
                "no answer"
            };
            let found = match pre_routing {
                None => vec![Oracle::Answers.breach(key, format!("no answer: {why}"))],
                // The harness's HTTP stack refused to build it: nothing reached the target.
                Some(_) if crate::transport::never_built(&why) => Vec::new(),
                // A server may drop an oversized head; PV-TR-6 asks for its status (SHOULD).
                Some(cond) => vec![Oracle::TransportRefusal.breach(
                    key,
                    format!(
                        "no answer where §10 gives {} {}: {why}",
                        cond.status(),
                        cond.reason()
                    ),
                )],
            };
            return (Outcome::Other(key.into()), found);
        }
    };
    let mut found = Vec::new();
    let reason = reply
        .json
        .as_ref()
        .and_then(|j| j.pointer("/error/reason"))
        .and_then(Value::as_str);
    if let Some(cond) = pre_routing
        && !routed(cond, reply.http_status, reason)
    {
        no_leak(reply, &mut found);
        let outcome = transport_outcome(cond, reply, declared, &mut found);
        return (outcome, found);
    }
    if reply.http_status >= 500 {
        found.push(Oracle::NoServerError.breach(
            format!("HTTP {}", reply.http_status),
            format!("HTTP {} to a hostile request", reply.http_status),
        ));
    }
    no_leak(reply, &mut found);
    let outcome = match kind {
        TransportKind::Http => http_outcome(reply, declared, &mut found),
        TransportKind::Mcp => mcp_outcome(reply, declared, &mut found),
    };
    (outcome, found)
}

fn no_leak(reply: &Reply, found: &mut Vec<Finding>) {
    if let Some(m) = crate::capability::fuzz::leaked(&reply.text) {
        found.push(Oracle::NoLeak.breach(
            m.to_ascii_lowercase(),
            format!("the answer shows internals: {m:?}"),
        ));
    }
}

/// PV-TR-6 on the answer to a request breaking `cond`: its status decides (a 5xx fails, the
/// row's status or a 2xx passes, anything else warns); with the row's status, the PV-TR-3
/// shape, the row's reason and its listing in the manifest are warnings when missing.
fn transport_outcome(
    cond: Condition,
    reply: &Reply,
    declared: &BTreeSet<String>,
    found: &mut Vec<Finding>,
) -> Outcome {
    let status = reply.http_status;
    let warn = |key: String, message: String| Oracle::TransportRefusal.breach(key, message);
    match judge_status(cond, Some(status)) {
        Status::Served => Outcome::Success,
        Status::ServerError(m) => {
            found.push(Oracle::NoServerError.breach(format!("HTTP {status}"), m));
            Outcome::Other(format!("HTTP {status}"))
        }
        Status::Other(m) => {
            found.push(warn(format!("HTTP {status}"), m));
            Outcome::Other(format!("HTTP {status}"))
        }
        Status::Row => {
            let labelled = reply.labelled_json();
            if !labelled {
                found.push(warn(
                    format!("HTTP {status} not labelled application/json"),
                    format!("transport refusal HTTP {status} is not application/json (PV-TR-3 shape, a SHOULD here)"),
                ));
            }
            match refusal_reason(reply.json.as_ref(), Some(status), declared) {
                Ok(r) if r == cond.reason() => Outcome::Refusal(r),
                Ok(r) => {
                    found.push(warn(
                        format!("reason {r}"),
                        format!("transport refusal HTTP {status} with reason {r:?} where §10 gives {:?}", cond.reason()),
                    ));
                    Outcome::Refusal(r)
                }
                Err((key, message)) => {
                    found.push(Oracle::TransportRefusal.breach(key, message));
                    Outcome::Other(format!("HTTP {status}"))
                }
            }
        }
    }
}

fn http_outcome(reply: &Reply, declared: &BTreeSet<String>, found: &mut Vec<Finding>) -> Outcome {
    if reply.http_status < 400 {
        return Outcome::Success;
    }
    let labelled = reply.labelled_json();
    if !labelled {
        found.push(Oracle::RefusalShape.breach(
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
        Err((key, message)) => {
            found.push(Oracle::RefusalShape.breach(key, message));
            Outcome::Other(format!("HTTP {}", reply.http_status))
        }
    }
}

fn mcp_outcome(reply: &Reply, declared: &BTreeSet<String>, found: &mut Vec<Finding>) -> Outcome {
    let Some(msg) = reply.json.as_ref() else {
        if reply.http_status == 202 || (reply.http_status < 300 && reply.text.trim().is_empty()) {
            return Outcome::Other("no body".into());
        }
        found.push(Oracle::RefusalShape.breach(
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
                found.push(Oracle::RefusalShape.breach(
                    "JSON-RPC error without integer code",
                    "a JSON-RPC error needs an integer code",
                ));
                Outcome::Other("error".into())
            }
        };
    }
    let Some(result) = msg.get("result") else {
        found.push(Oracle::RefusalShape.breach(
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
        Err((key, message)) => {
            found.push(Oracle::RefusalShape.breach(key, message));
            Outcome::Other("tool error".into())
        }
    }
}

/// PV-TR-1 on one logical request: `None` when the outcomes agree.
pub fn compare(http: &Outcome, mcp: &Outcome) -> Option<Finding> {
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
        Oracle::BindingsAgree.breach(
            format!("http {} / mcp {}", http.show(), mcp.show()),
            format!("HTTP answered {}, MCP {}", http.show(), mcp.show()),
        )
    })
}

#[cfg(test)]
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
        let (o, b) = judge(TransportKind::Http, &ok, &declared, None);
        assert_eq!((o, b), (Outcome::Refusal("invalid_body".into()), vec![]));
        let odd = reply(
            400,
            json!({"error": {"reason": "nope", "status": 400, "message": "m"}}),
        );
        let (_, b) = judge(TransportKind::Http, &odd, &declared, None);
        assert_eq!(oracle_of(&b[0]), Some(Oracle::RefusalShape));
        let (_, b) = judge(TransportKind::Http, &reply(500, json!({})), &declared, None);
        assert!(
            b.iter()
                .any(|b| oracle_of(b) == Some(Oracle::NoServerError))
        );
        let leak = reply(
            400,
            json!({"error": {"reason": "invalid_body", "status": 400,
            "message": "thread 'x' panicked at src/service/post.rs:12:5"}}),
        );
        let (_, b) = judge(TransportKind::Http, &leak, &declared, None);
        assert!(b.iter().any(|b| oracle_of(b) == Some(Oracle::NoLeak)));
        let tool = reply(
            200,
            json!({"jsonrpc": "2.0", "id": 1, "result": {"isError": true,
            "structuredContent": {"error": {"reason": "invalid_body", "status": 400, "message": "m"}}}}),
        );
        let (o, b) = judge(TransportKind::Mcp, &tool, &declared, None);
        assert_eq!((o, b), (Outcome::Refusal("invalid_body".into()), vec![]));
        assert!(compare(&Outcome::Success, &Outcome::Refusal("x".into())).is_some());
        assert!(compare(&Outcome::Refusal("x".into()), &Outcome::Refusal("x".into())).is_none());
        let quota = Outcome::Refusal("rate_limited".into());
        assert!(compare(&Outcome::Refusal("x".into()), &quota).is_none());
        assert!(compare(&quota, &Outcome::Success).is_none());
    }

    /// PV-TR-6: an oversized head is judged on status; shape and reason only warn.
    #[test]
    fn transport_refusals_are_judged_on_status() {
        let declared: BTreeSet<String> = ["headers_too_large".to_string()].into();
        let head = Some(Condition::HeadTooLarge);
        let oracles = |r: &Result<Reply, TransportError>| {
            let (_, b) = judge(TransportKind::Http, r, &declared, head);
            b.iter().filter_map(oracle_of).collect::<Vec<_>>()
        };
        let right =
            json!({"error": {"reason": "headers_too_large", "status": 431, "message": "m"}});
        assert_eq!(oracles(&reply(431, right)), []);
        assert_eq!(oracles(&reply(200, json!({}))), []);
        // hyper's default: no body; nginx's 400 to a large header; no answer at all
        let bare = Ok(Reply {
            http_status: 431,
            headers: Vec::new(),
            text: String::new(),
            json: None,
            exchanges: Vec::new(),
        });
        assert!(
            oracles(&bare)
                .iter()
                .all(|o| *o == Oracle::TransportRefusal)
        );
        assert!(!oracles(&bare).is_empty());
        let other = json!({"error": {"reason": "invalid_request", "status": 400, "message": "m"}});
        assert_eq!(oracles(&reply(400, other)), [Oracle::TransportRefusal]);
        // Within the server's limit, a route refused it for its own reason: judged as any
        // refusal (this one's reason is undeclared: the refusal shape oracle says so).
        let routed = json!({"error": {"reason": "invalid_body", "status": 400, "message": "m"}});
        assert_eq!(oracles(&reply(400, routed)), [Oracle::RefusalShape]);
        let dropped = Err(TransportError::Io {
            message: "connection reset".into(),
            exchanges: Vec::new(),
        });
        assert_eq!(oracles(&dropped), [Oracle::TransportRefusal]);
        // A 5xx is no refusal: it fails.
        assert_eq!(oracles(&reply(500, json!({}))), [Oracle::NoServerError]);
        assert!(Oracle::TransportRefusal.spec().warns);
        assert!(!Oracle::NoServerError.spec().warns);
    }
}
