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

    /// MCP 2026-07-28: whether this answer is the era's own refusal of a raw-text request
    /// (`request`) sent without the era's `Mcp-Method` header (MCP26-1: HTTP 400, -32020)
    /// or without `_meta` (MCP26-4: HTTP 400, -32602). The harness sends a vector's text as
    /// written, so it cannot add them, and with several faults in one request every
    /// applicable answer conforms (MCP26-6): such an answer judges nothing of the vector.
    pub(super) fn era_fault_of_raw_text(&self, request: &crate::transport::Exchange) -> bool {
        let sent = |name: &str| {
            request
                .request_headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str())
        };
        if !self.raw_mcp
            || self.http_status != 400
            || sent("mcp-protocol-version") != Some("2026-07-28")
        {
            return false;
        }
        let no_meta = !request
            .request_body
            .as_deref()
            .unwrap_or("")
            .contains("_meta");
        match self
            .rpc()
            .and_then(|m| m.pointer("/error/code"))
            .and_then(Value::as_i64)
        {
            Some(-32020) => sent("mcp-method").is_none(),
            Some(-32602) => no_meta,
            _ => false,
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

#[cfg(test)]
mod tests {
    //! MCP26-6: the era's refusal of a raw-text request that lacks its header or `_meta`.
    use super::*;
    use crate::transport::Exchange;

    fn answer(status: u16, code: i64) -> Observation {
        let msg = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": code, "message": "m"}});
        let reply = Reply {
            http_status: status,
            headers: Vec::new(),
            text: msg.to_string(),
            json: Some(msg),
            exchanges: Vec::new(),
        };
        Observation::new(TransportKind::Mcp, true, reply)
    }

    fn request(era: &str, method_header: bool, body: &str) -> Exchange {
        let mut headers = vec![("mcp-protocol-version".to_string(), era.to_string())];
        if method_header {
            headers.push(("mcp-method".into(), "tools/call".into()));
        }
        Exchange {
            transport: TransportKind::Mcp,
            method: "POST".into(),
            url: "http://127.0.0.1:9/mcp".into(),
            request_headers: headers,
            request_body: Some(body.into()),
            status: Some(400),
            response_headers: Vec::new(),
            response_body: None,
            error: None,
            elapsed_us: 0,
            resent_after: None,
        }
    }

    #[test]
    fn only_the_era_s_own_refusal_of_what_raw_text_lacks_is_set_aside() {
        let bare = request(
            "2026-07-28",
            false,
            "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ",
        );
        assert!(answer(400, -32020).era_fault_of_raw_text(&bare));
        assert!(answer(400, -32602).era_fault_of_raw_text(&bare));
        // Another code, another status, the legacy era, a header or `_meta` that was sent.
        assert!(!answer(400, -32700).era_fault_of_raw_text(&bare));
        assert!(!answer(200, -32020).era_fault_of_raw_text(&bare));
        assert!(!answer(400, -32020).era_fault_of_raw_text(&request("2025-11-25", false, "{")));
        let with_header = request("2026-07-28", true, "{");
        assert!(!answer(400, -32020).era_fault_of_raw_text(&with_header));
        let with_meta = request("2026-07-28", false, "{\"params\": {\"_meta\": {}}}");
        assert!(!answer(400, -32602).era_fault_of_raw_text(&with_meta));
        // Not a raw step: the harness added what the era needs.
        let mut op = answer(400, -32020);
        op.raw_mcp = false;
        assert!(!op.era_fault_of_raw_text(&bare));
    }
}
