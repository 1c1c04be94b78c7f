//! The PV-TR-3 refusal body as one reading shared by the checks that judge it (the fuzz
//! oracles, PV-TR-6's pre-routing probes): `{"error": {"reason", "status", "message"}}`,
//! `status` equal to the HTTP status when there is one, the reason listed in the manifest's
//! `reasons` (PV-MF-1). Each caller decides what a missing part costs it.

use std::collections::BTreeSet;

use serde_json::Value;

/// What a refusal body holds, part by part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusalBody {
    /// `error.reason`, when a string.
    pub reason: Option<String>,
    /// `error.status` is present and equals the HTTP status (when one is given), and
    /// `error.message` is a string.
    pub shaped: bool,
    /// The reason is among the manifest's `reasons`.
    pub declared: bool,
}

/// Reads `body` as a PV-TR-3 refusal answered with HTTP `status` (`None`: no HTTP status to
/// match, as in an MCP tool result).
pub fn read(body: Option<&Value>, status: Option<u16>, declared: &BTreeSet<String>) -> RefusalBody {
    let error = body.and_then(|b| b.get("error"));
    let reason = error.and_then(|e| e.get("reason")).and_then(Value::as_str);
    let e_status = error.and_then(|e| e.get("status")).and_then(Value::as_u64);
    let message = error
        .and_then(|e| e.get("message"))
        .is_some_and(Value::is_string);
    let status_ok = e_status.is_some() && status.is_none_or(|s| e_status == Some(u64::from(s)));
    RefusalBody {
        reason: reason.map(str::to_string),
        shaped: status_ok && message,
        declared: reason.is_some_and(|r| declared.contains(r)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn reasons() -> BTreeSet<String> {
        ["not_found".to_string()].into()
    }

    #[test]
    fn each_part_is_read_on_its_own() {
        let ok = json!({"error": {"reason": "not_found", "status": 404, "message": "no"}});
        let r = read(Some(&ok), Some(404), &reasons());
        assert_eq!(
            (r.reason.as_deref(), r.shaped, r.declared),
            (Some("not_found"), true, true)
        );
        // The HTTP status must match; without one (MCP) any status number does.
        assert!(!read(Some(&ok), Some(400), &reasons()).shaped);
        assert!(read(Some(&ok), None, &reasons()).shaped);
        let odd = json!({"error": {"reason": "odd", "status": 404}});
        let r = read(Some(&odd), Some(404), &reasons());
        assert_eq!(
            (r.reason.as_deref(), r.shaped, r.declared),
            (Some("odd"), false, false)
        );
        let none = read(None, Some(404), &reasons());
        assert_eq!(
            (none.reason, none.shaped, none.declared),
            (None, false, false)
        );
    }
}
