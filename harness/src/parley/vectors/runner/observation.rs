//! What a vector observed for one request, in binding-neutral terms: the status, the
//! reason, the body as the binding answered it (HTTP or MCP), read without copies.

use serde_json::{Value, json};

use crate::engine::check::StepSignature;
use crate::json::matcher::Mismatch;
use crate::transport::{Reply, TransportKind};

/// What the vector observed for one request, in binding-neutral terms.
///
/// Owns the reply (no copies of the parsed JSON: inbox pages can be large).
#[derive(Debug)]
pub(super) struct Observation {
    pub(super) kind: TransportKind,
    pub(super) raw_mcp: bool,
    pub(super) http_status: u16,
    pub(super) headers: Vec<(String, String)>,
    pub(super) text: String,
    /// HTTP: the body. MCP: the JSON-RPC message.
    pub(super) doc: Option<Value>,
    /// The vector's body is `doc.result.structuredContent` (MCP `op` steps), not `doc` itself.
    pub(super) in_result: bool,
    /// `paginate`: the assembled `{"items", "cursor"}` body.
    pub(super) synthetic: Option<Value>,
    /// MCP tool result: `isError`.
    pub(super) is_error: Option<bool>,
    /// PV-RS-2 (text mirror of `structuredContent`) problem.
    pub(super) mirror: Option<Mismatch>,
}

impl Observation {
    pub(super) fn new(kind: TransportKind, raw_mcp: bool, reply: Reply) -> Self {
        let Reply {
            http_status,
            headers,
            json,
            text,
            ..
        } = reply;
        let mut o = Self {
            kind,
            raw_mcp,
            http_status,
            headers,
            text,
            doc: json,
            in_result: kind == TransportKind::Mcp && !raw_mcp,
            synthetic: None,
            is_error: None,
            mirror: None,
        };
        if kind == TransportKind::Mcp
            && let Some(r) = o.doc.as_ref().and_then(|m| m.get("result"))
        {
            o.is_error = Some(r.get("isError").and_then(Value::as_bool).unwrap_or(false));
            let text = r.pointer("/content/0/text").and_then(Value::as_str);
            if let Some(sc) = r.get("structuredContent") {
                let mirrored = text.and_then(|t| serde_json::from_str::<Value>(t).ok());
                if mirrored.as_ref() != Some(sc) {
                    o.mirror = Some(Mismatch {
                        pointer: "/content/0/text".into(),
                        expected: json!("the JSON text of structuredContent (PV-RS-2)"),
                        observed: text.map(|t| json!(t)).unwrap_or(Value::Null),
                        message:
                            "content[0].text does not carry the same JSON as structuredContent"
                                .into(),
                    });
                }
            }
        }
        o
    }

    /// HTTP body / MCP `structuredContent` / raw MCP message.
    pub(super) fn body(&self) -> Option<&Value> {
        if let Some(s) = &self.synthetic {
            return Some(s);
        }
        let doc = self.doc.as_ref()?;
        if self.in_result {
            doc.pointer("/result/structuredContent")
        } else {
            Some(doc)
        }
    }

    /// Moves the body out (pagination).
    pub(super) fn take_body(&mut self) -> Option<Value> {
        if let Some(s) = self.synthetic.take() {
            return Some(s);
        }
        if self.in_result {
            self.doc
                .as_mut()?
                .pointer_mut("/result/structuredContent")
                .map(Value::take)
        } else {
            self.doc.take()
        }
    }

    /// MCP: the JSON-RPC message.
    pub(super) fn rpc(&self) -> Option<&Value> {
        if self.kind == TransportKind::Mcp {
            self.doc.as_ref()
        } else {
            None
        }
    }

    pub(super) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// A compact JSON picture of the response for violations.
    pub(super) fn summary(&self) -> Value {
        match self.kind {
            TransportKind::Http => json!({
                "status": self.http_status,
                "body": self.body().cloned().unwrap_or_else(|| json!(truncate(&self.text, 2000))),
            }),
            TransportKind::Mcp => json!({
                "http_status": self.http_status,
                "jsonrpc": self.rpc().cloned().unwrap_or_else(|| json!(truncate(&self.text, 2000))),
            }),
        }
    }

    pub(super) fn signature(&self, step: usize, compare_body: bool) -> StepSignature {
        let err = self.body().and_then(|b| b.get("error"));
        let refusal = match self.kind {
            TransportKind::Http => self.http_status >= 400,
            TransportKind::Mcp => self.is_error == Some(true),
        };
        if let Some(code) = self.rpc().and_then(|m| m.pointer("/error/code")) {
            return StepSignature {
                step,
                class: "jsonrpc_error".into(),
                status: code.as_u64(),
                reason: None,
                body: None,
            };
        }
        if refusal {
            return StepSignature {
                step,
                class: "refusal".into(),
                status: err
                    .and_then(|e| e.get("status"))
                    .and_then(Value::as_u64)
                    .or(match self.kind {
                        TransportKind::Http => Some(u64::from(self.http_status)),
                        TransportKind::Mcp => None,
                    }),
                reason: err
                    .and_then(|e| e.get("reason"))
                    .and_then(Value::as_str)
                    .map(str::to_string),
                body: None,
            };
        }
        let success = match self.kind {
            TransportKind::Http => (200..300).contains(&self.http_status),
            TransportKind::Mcp => self.is_error == Some(false),
        };
        StepSignature {
            step,
            class: if success { "success" } else { "other" }.into(),
            status: None,
            reason: None,
            body: if success && compare_body {
                self.body().cloned()
            } else {
                None
            },
        }
    }
}

pub(super) fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}
