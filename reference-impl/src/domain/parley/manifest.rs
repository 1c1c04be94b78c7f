//! The manifest (§2, PV-MF-1): built from the same tables the server enforces, so that
//! what it declares is exactly what it does (PV-MF-2).

use serde_json::{Value, json};

use super::dialectic::{ClaimStatus, EVIDENCE_KINDS};
use super::kinds::Kind;
use super::limits::Limits;
use super::reasons::Reason;
use super::state::ThreadState;

/// One row of the operation table of §1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OperationSpec {
    /// Operation (and MCP tool) name.
    pub name: &'static str,
    /// Right needed: `none`, `token` (any valid token), `read`, `write`.
    pub right: &'static str,
    /// HTTP method.
    pub method: &'static str,
    /// HTTP path with `{thread}` / `{claim}` placeholders.
    pub path: &'static str,
}

/// §1's operation table, in order.
pub const OPERATIONS: [OperationSpec; 9] = [
    OperationSpec {
        name: "get_manifest",
        right: "none",
        method: "GET",
        path: "/v1/manifest",
    },
    OperationSpec {
        name: "whoami",
        right: "token",
        method: "GET",
        path: "/v1/whoami",
    },
    OperationSpec {
        name: "post",
        right: "write",
        method: "POST",
        path: "/v1/messages",
    },
    OperationSpec {
        name: "read_thread",
        right: "read",
        method: "GET",
        path: "/v1/threads/{thread}",
    },
    OperationSpec {
        name: "list_events",
        right: "read",
        method: "GET",
        path: "/v1/threads/{thread}/events",
    },
    OperationSpec {
        name: "inbox",
        right: "read",
        method: "GET",
        path: "/v1/inbox",
    },
    OperationSpec {
        name: "mark",
        right: "write",
        method: "POST",
        path: "/v1/threads/{thread}/state",
    },
    OperationSpec {
        name: "reopen",
        right: "write",
        method: "POST",
        path: "/v1/threads/{thread}/reopen",
    },
    OperationSpec {
        name: "read_claim",
        right: "read",
        method: "GET",
        path: "/v1/claims/{claim}",
    },
];

/// The MCP revisions the reference serves on `/mcp`.
pub const MCP_REVISIONS: [&str; 4] = ["2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"];

fn kind_json(k: Kind) -> Value {
    json!({
        "name": k.as_str(),
        "awaiting": k.awaiting(),
        "opens_thread": k.opens_thread(),
        "marks": k.marks().map(ThreadState::as_str),
        "needs_authority": k.needs_authority(),
    })
}

/// Builds the manifest JSON. `kinds` lists the nine core kinds (PV-KD-1); the dialectic
/// kinds are listed by name in the profile (`kinds`) and with their properties in
/// `kind_details` (an extra member). `reasons` lists every reason the server can emit.
pub fn build(version: &str, limits: &Limits, dialectic: bool) -> Value {
    let operations: Vec<Value> = OPERATIONS
        .iter()
        .filter(|op| dialectic || op.name != "read_claim")
        .map(|op| {
            json!({
                "name": op.name,
                "right": op.right,
                "mcp": {"tool": op.name},
                "http": {"method": op.method, "path": op.path},
            })
        })
        .collect();
    let profiles: Vec<Value> = if dialectic {
        vec![json!({
            "name": "dialectic",
            "kinds": Kind::DIALECTIC.iter().map(|k| k.as_str()).collect::<Vec<_>>(),
            "kind_details": Kind::DIALECTIC.iter().map(|k| kind_json(*k)).collect::<Vec<_>>(),
            "claim_states": ClaimStatus::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
            "evidence_kinds": EVIDENCE_KINDS,
        })]
    } else {
        Vec::new()
    };
    json!({
        "parley": "1",
        "version": version,
        "limits": limits,
        "kinds": Kind::CORE.iter().map(|k| kind_json(*k)).collect::<Vec<_>>(),
        "states": {
            "forward": ThreadState::FORWARD.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
            "lateral": ThreadState::LATERAL.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        },
        "profiles": profiles,
        "operations": operations,
        "bindings": {
            "http": {"base": "/v1"},
            "mcp": {"endpoint": "/mcp", "revisions": MCP_REVISIONS},
        },
        "reasons": Reason::ALL
            .iter()
            .map(|r| r.as_str())
            .chain(super::reasons::TRANSPORT_REASONS)
            .collect::<Vec<_>>(),
        "identity": {"realm": "ainotes"},
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::parley::limits::REFERENCE;

    #[test]
    fn manifest_shape() {
        // PV-MF-1, PV-MF-2, PV-KD-1
        let m = build("0.1.0", &REFERENCE, true);
        assert_eq!(m["parley"], "1");
        assert_eq!(m["limits"]["body_max_chars"], 500);
        assert_eq!(
            m["limits"]["extension_pattern"],
            "^[a-z0-9][a-z0-9_-]{0,31}$"
        );
        assert_eq!(m["limits"]["writes_per_minute"], 6000);
        assert_eq!(m["limits"]["request_max_bytes"], 65536);
        assert_eq!(m["limits"]["inbox_limit_default"], 50);
        assert_eq!(m["limits"]["inbox_limit_max"], 200);
        assert_eq!(m["limits"]["evidence_max"], 8);
        assert_eq!(m["limits"]["evidence_ref_max_chars"], 1024);
        assert_eq!(m["limits"]["provenance_max_chars"], 200);
        assert_eq!(m["kinds"].as_array().map(Vec::len), Some(9));
        assert_eq!(
            m["kinds"][1],
            json!({"name": "answer", "awaiting": false, "opens_thread": false, "marks": "answered", "needs_authority": false})
        );
        assert_eq!(
            m["states"]["forward"],
            json!(["open", "answered", "decided", "closed"])
        );
        assert_eq!(
            m["states"]["lateral"],
            json!(["deferred", "obsolete", "rejected"])
        );
        assert_eq!(m["profiles"][0]["name"], "dialectic");
        assert_eq!(
            m["profiles"][0]["kinds"],
            json!(["assert", "attest", "refute", "verify"])
        );
        assert_eq!(m["operations"].as_array().map(Vec::len), Some(9));
        assert_eq!(
            m["operations"][2],
            json!({"name": "post", "right": "write", "mcp": {"tool": "post"}, "http": {"method": "POST", "path": "/v1/messages"}})
        );
        assert_eq!(
            m["reasons"].as_array().map(Vec::len),
            Some(Reason::ALL.len() + crate::domain::parley::reasons::TRANSPORT_REASONS.len())
        );
        assert_eq!(m["identity"]["realm"], "ainotes");
        assert_eq!(m["bindings"]["mcp"]["endpoint"], "/mcp");
        let no_dialectic = build("0.1.0", &REFERENCE, false);
        assert_eq!(no_dialectic["profiles"], json!([]));
    }
}
