//! The verdict table of the 2026-07-28 error rules (design note `mcp-2026-07-28.md`, "What
//! a check does"): which answers to a faulty modern request pass, warn or fail. Pure
//! functions over one [`Answer`], so that every path is unit-tested without a server.
//!
//! - the status and code of a condition the request breaks (any of them, MCP26-6): pass;
//! - the draft code of that condition (-32001, -32003, -32004) with its status: warning;
//! - MCP26-1 only: a 400 whose body is no JSON-RPC error (an intermediary may answer so):
//!   warning; MCP26-2: no `data.requested`: warning; MCP26-3 for a removed method (ping,
//!   logging/setLevel): a result is a warning;
//! - anything else fails, naming MCP26-7 when the code is one the revision forbids.

use serde_json::{Value, json};

use crate::engine::finding::{Finding, Step};
use crate::mcp::wire::Answer;

/// The answer the revision specifies for one condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Specified {
    /// The design note's ID.
    pub id: &'static str,
    /// HTTP status.
    pub status: u16,
    /// JSON-RPC error code.
    pub code: i64,
    /// The code the revision's draft used for the condition (note, "Two codes in the
    /// field"): in the legacy range, so accepted with a warning.
    pub draft: Option<i64>,
}

/// MCP26-1: a standard header missing, malformed or unequal to the body.
pub const HEADER_MISMATCH: Specified = Specified {
    id: "MCP26-1",
    status: 400,
    code: -32020,
    draft: Some(-32001),
};
/// MCP26-2: the requested version is not served.
pub const UNSUPPORTED_VERSION: Specified = Specified {
    id: "MCP26-2",
    status: 400,
    code: -32022,
    draft: Some(-32004),
};
/// MCP26-3: the method is not implemented.
pub const METHOD_NOT_FOUND: Specified = Specified {
    id: "MCP26-3",
    status: 404,
    code: -32601,
    draft: None,
};
/// MCP26-4: a required `_meta` key is missing.
pub const MISSING_META: Specified = Specified {
    id: "MCP26-4",
    status: 400,
    code: -32602,
    draft: None,
};
/// MCP26-5: a client capability the server needs is not declared.
pub const MISSING_CAPABILITY: Specified = Specified {
    id: "MCP26-5",
    status: 400,
    code: -32021,
    draft: Some(-32003),
};

/// What one faulty request may be answered.
#[derive(Debug)]
pub struct Probe<'a> {
    /// The catalogue rule a failure (or warning) breaks.
    pub rule: &'static str,
    /// Every condition the request breaks (MCP26-6: each one's answer passes).
    pub answers: &'a [Specified],
    /// The method is one the revision removed (MCP26-3): a result warns, never fails.
    pub removed: bool,
    /// The request names no version the server serves while the server also serves a
    /// legacy era: it may read the request as legacy traffic (note, "MCP26-4 scope": the
    /// era is chosen by how the client opens), whose rule for an unsupported
    /// `MCP-Protocol-Version` is a bare 400 (2025-06-18, transports): any 400 warns.
    pub legacy_400: bool,
    /// The request, for messages.
    pub what: &'a str,
}

/// MCP26-7: why `code` may never be emitted in the 2026-07-28 era (`None`: it may).
pub fn forbidden(code: i64) -> Option<&'static str> {
    match code {
        -32002 => Some("-32002 (resource not found) MUST NOT be emitted in 2026-07-28 (MCP26-7)"),
        -32042 => Some("-32042 MUST NOT be emitted in 2026-07-28 (MCP26-7)"),
        -32022..=-32020 => None,
        -32099..=-32023 => {
            Some("an undefined code of the specification's range -32020…-32099 (MCP26-7)")
        }
        _ => None,
    }
}

/// The answer `a` to a faulty modern request, judged against `p`; warnings are pushed to
/// `warnings`.
pub fn judge(warnings: &mut Vec<Box<Finding>>, a: &Answer, p: &Probe) -> Step<()> {
    warnings.extend(verdict(a, p)?);
    Ok(())
}

/// The table's verdict on `a`: a failure, a warning (`Ok(Some)`), or a pass (`Ok(None)`).
fn verdict(a: &Answer, p: &Probe) -> Step<Option<Box<Finding>>> {
    if a.status >= 500 {
        return Err(fail(
            a,
            p,
            "",
            format!("HTTP {} (a server error)", a.status),
        ));
    }
    if a.result().is_some() {
        if p.removed {
            // MCP26-3: no sentence forbids a dual-era server to keep a removed method.
            return Ok(Some(warn(
                a,
                p,
                "/result",
                "served, though 2026-07-28 removed the method (MCP26-3: 404 + -32601 expected)"
                    .into(),
            )));
        }
        return Err(fail(a, p, "/result", "served instead of refused".into()));
    }
    let Some(code) = a.error_code() else {
        return bare(a, p);
    };
    if let Some(s) = p
        .answers
        .iter()
        .find(|s| (s.status, s.code) == (a.status, code))
    {
        return data(a, s, p);
    }
    if let Some(s) = p
        .answers
        .iter()
        .find(|s| s.status == a.status && s.draft == Some(code))
    {
        return Ok(Some(warn(
            a,
            p,
            "/error/code",
            format!(
                "JSON-RPC {code}, the draft's code for {} (the release renumbered it {}; the legacy range SHOULD NOT be used)",
                s.id, s.code
            ),
        )));
    }
    // MCP26-7 first: a code the revision forbids fails whatever era the request is read in.
    if forbidden(code).is_none()
        && let Some(w) = legacy_reading(a, p)
    {
        return Ok(Some(w));
    }
    let why = match forbidden(code) {
        Some(why) => why.to_string(),
        None => match [HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION]
            .iter()
            .find(|s| s.code == code && !p.answers.contains(s))
        {
            // MCP26-7: a defined code only with its meaning.
            Some(s) => format!(
                "{code} means the {} condition, which this request does not break (MCP26-7)",
                s.id
            ),
            None => "another status or code".to_string(),
        },
    };
    Err(fail(
        a,
        p,
        "/error/code",
        format!("HTTP {} with JSON-RPC {code}: {why}", a.status),
    ))
}

/// A 400 to a request a dual-era server may read as legacy traffic ([`Probe::legacy_400`]):
/// a warning instead of a failure.
fn legacy_reading(a: &Answer, p: &Probe) -> Option<Box<Finding>> {
    (p.legacy_400 && a.status == 400).then(|| {
        warn(
            a,
            p,
            "/error",
            "HTTP 400 without the 2026-07-28 answer (MCP26-2 expects -32022); a server that also serves a legacy era may answer an unknown version by the legacy rule (a 400)".into(),
        )
    })
}

/// An answer whose body is no JSON-RPC error.
fn bare(a: &Answer, p: &Probe) -> Step<Option<Box<Finding>>> {
    if let Some(w) = legacy_reading(a, p) {
        return Ok(Some(w));
    }
    if a.status == 400 && p.answers.contains(&HEADER_MISMATCH) {
        // MCP26-1 (streamable-http, "Server Validation", note): an intermediary may
        // refuse a header fault with a bare 400.
        return Ok(Some(warn(
            a,
            p,
            "/error",
            "HTTP 400 without a JSON-RPC error (MCP26-1 expects -32020 in the body)".into(),
        )));
    }
    let why = if a.status == 404 && p.answers.contains(&METHOD_NOT_FOUND) {
        // MCP26-3: the JSON-RPC body is what tells it from a legacy server's 404.
        "a 404 without a JSON-RPC -32601 body (MCP26-3)"
    } else {
        "no JSON-RPC error in the body"
    };
    Err(fail(
        a,
        p,
        "/error",
        format!("HTTP {} with {why}", a.status),
    ))
}

/// The `data` an accepted answer carries (MCP26-2, MCP26-5).
fn data(a: &Answer, s: &Specified, p: &Probe) -> Step<Option<Box<Finding>>> {
    let data = a.message.as_ref().and_then(|m| m.pointer("/error/data"));
    let member = |k: &str| data.and_then(|d| d.get(k)).filter(|v| !v.is_null());
    if *s == UNSUPPORTED_VERSION {
        let listed = member("supported").and_then(Value::as_array);
        if !listed.is_some_and(|l| !l.is_empty() && l.iter().all(Value::is_string)) {
            return Err(fail(
                a,
                p,
                "/error/data/supported",
                "-32022 without data.supported listing the served versions (MCP26-2)".into(),
            ));
        }
        if member("requested").is_none() {
            // MCP26-2: the source shows `requested` in an example only (SHOULD).
            return Ok(Some(warn(
                a,
                p,
                "/error/data/requested",
                "-32022 without data.requested echoing the version asked (MCP26-2)".into(),
            )));
        }
    }
    if *s == MISSING_CAPABILITY && member("requiredCapabilities").is_none() {
        return Err(fail(
            a,
            p,
            "/error/data/requiredCapabilities",
            "-32021 without data.requiredCapabilities (MCP26-5)".into(),
        ));
    }
    Ok(None)
}

/// What `p` allows, for a finding's `expected`.
fn expected(p: &Probe) -> Value {
    let answers: Vec<Value> = p
        .answers
        .iter()
        .map(|s| json!({"rule": s.id, "http_status": s.status, "jsonrpc_error_code": s.code}))
        .collect();
    json!({"any_of": answers})
}

fn fail(a: &Answer, p: &Probe, pointer: &str, why: String) -> Box<Finding> {
    Finding::fail(
        pointer,
        expected(p),
        a.observed(),
        format!("{}: {why}", p.what),
    )
    .on(&[p.rule])
}

fn warn(a: &Answer, p: &Probe, pointer: &str, why: String) -> Box<Finding> {
    Finding::warn(
        pointer,
        expected(p),
        a.observed(),
        format!("{}: {why}", p.what),
    )
    .on(&[p.rule])
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::engine::finding::Severity;

    /// An answer with `status` and the JSON `body` (`Null`: a plain-text body).
    pub(crate) fn answer(status: u16, body: Value) -> Answer {
        let text = if body.is_null() {
            "Bad Request".to_string()
        } else {
            body.to_string()
        };
        Answer {
            status,
            headers: Vec::new(),
            text,
            message: (!body.is_null()).then_some(body),
        }
    }

    /// A JSON-RPC error `code` with `data`, over `status`.
    pub(crate) fn error(status: u16, code: i64, data: Value) -> Answer {
        let mut e = json!({"code": code, "message": "m"});
        if !data.is_null() {
            e["data"] = data;
        }
        answer(status, json!({"jsonrpc": "2.0", "id": 1, "error": e}))
    }

    /// A JSON-RPC result over 200.
    pub(crate) fn result() -> Answer {
        answer(200, json!({"jsonrpc": "2.0", "id": 1, "result": {}}))
    }

    /// `pass`, `warn` or `fail`, and the rule the finding names.
    fn verdict(a: &Answer, answers: &[Specified], removed: bool) -> (&'static str, Vec<String>) {
        let mut warnings = Vec::new();
        let p = Probe {
            rule: "MCP-MD-X",
            answers,
            removed,
            legacy_400: false,
            what: "probe",
        };
        match judge(&mut warnings, a, &p) {
            Err(f) => {
                assert_eq!(f.severity, Severity::Fail);
                ("fail", f.rules)
            }
            Ok(()) => match warnings.first() {
                Some(w) => ("warn", w.rules.clone()),
                None => ("pass", Vec::new()),
            },
        }
    }

    fn v(a: &Answer, answers: &[Specified]) -> &'static str {
        verdict(a, answers, false).0
    }

    #[test]
    fn the_specified_answer_passes_and_a_failure_names_the_rule() {
        let h = [HEADER_MISMATCH];
        assert_eq!(v(&error(400, -32020, Value::Null), &h), "pass");
        let (what, rules) = verdict(&error(400, -32600, Value::Null), &h, false);
        assert_eq!((what, rules), ("fail", vec!["MCP-MD-X".to_string()]));
        // Another status with the right code, a result, a 5xx: failures.
        assert_eq!(v(&error(200, -32020, Value::Null), &h), "fail");
        assert_eq!(v(&error(404, -32020, Value::Null), &h), "fail");
        assert_eq!(v(&result(), &h), "fail");
        assert_eq!(v(&error(500, -32020, Value::Null), &h), "fail");
    }

    #[test]
    fn draft_codes_warn_with_their_status_only() {
        assert_eq!(
            v(&error(400, -32001, Value::Null), &[HEADER_MISMATCH]),
            "warn"
        );
        assert_eq!(
            v(&error(200, -32001, Value::Null), &[HEADER_MISMATCH]),
            "fail"
        );
        assert_eq!(
            v(&error(400, -32004, Value::Null), &[UNSUPPORTED_VERSION]),
            "warn"
        );
        assert_eq!(
            v(&error(400, -32003, Value::Null), &[MISSING_CAPABILITY]),
            "warn"
        );
        // A draft code for a condition the request does not break is another code.
        assert_eq!(
            v(&error(400, -32004, Value::Null), &[HEADER_MISMATCH]),
            "fail"
        );
    }

    #[test]
    fn a_bare_400_warns_for_mcp26_1_only() {
        let bare400 = answer(400, Value::Null);
        assert_eq!(v(&bare400, &[HEADER_MISMATCH]), "warn");
        assert_eq!(v(&bare400, &[MISSING_META, HEADER_MISMATCH]), "warn");
        assert_eq!(v(&bare400, &[UNSUPPORTED_VERSION]), "fail");
        assert_eq!(v(&bare400, &[MISSING_META]), "fail");
        // A JSON body that is no JSON-RPC error is as bare.
        assert_eq!(
            v(&answer(400, json!({"detail": "x"})), &[HEADER_MISMATCH]),
            "warn"
        );
        assert_eq!(v(&answer(403, Value::Null), &[HEADER_MISMATCH]), "fail");
    }

    #[test]
    fn unsupported_version_needs_data_supported_and_should_echo_requested() {
        let u = [UNSUPPORTED_VERSION];
        let full = json!({"supported": ["2026-07-28"], "requested": "1999-01-01"});
        assert_eq!(v(&error(400, -32022, full), &u), "pass");
        let no_requested = json!({"supported": ["2026-07-28"]});
        assert_eq!(v(&error(400, -32022, no_requested), &u), "warn");
        assert_eq!(v(&error(400, -32022, Value::Null), &u), "fail");
        let renamed = json!({"supportedVersions": ["2026-07-28"], "requested": "1999-01-01"});
        assert_eq!(v(&error(400, -32022, renamed), &u), "fail");
        let empty = json!({"supported": [], "requested": "1999-01-01"});
        assert_eq!(v(&error(400, -32022, empty), &u), "fail");
    }

    #[test]
    fn missing_capability_needs_data_required_capabilities() {
        let c = [HEADER_MISMATCH, MISSING_CAPABILITY];
        let data = json!({"requiredCapabilities": {"elicitation": {}}});
        assert_eq!(v(&error(400, -32021, data), &c), "pass");
        assert_eq!(v(&error(400, -32021, json!({})), &c), "fail");
    }

    #[test]
    fn method_not_found_needs_404_and_a_json_rpc_body() {
        let m = [METHOD_NOT_FOUND];
        assert_eq!(v(&error(404, -32601, Value::Null), &m), "pass");
        assert_eq!(v(&answer(404, Value::Null), &m), "fail");
        assert_eq!(v(&error(200, -32601, Value::Null), &m), "fail");
        assert_eq!(v(&error(400, -32601, Value::Null), &m), "fail");
        // ping / logging/setLevel: a dual-era server may still serve them.
        assert_eq!(verdict(&result(), &m, true).0, "warn");
        assert_eq!(verdict(&result(), &m, false).0, "fail");
        assert_eq!(verdict(&answer(404, Value::Null), &m, true).0, "fail");
    }

    #[test]
    fn several_faults_accept_each_answer() {
        // MCP26-6, the note's example: no `_meta` version, a version header present.
        let both = [MISSING_META, HEADER_MISMATCH];
        assert_eq!(v(&error(400, -32602, Value::Null), &both), "pass");
        assert_eq!(v(&error(400, -32020, Value::Null), &both), "pass");
        assert_eq!(v(&error(400, -32600, Value::Null), &both), "fail");
        assert_eq!(v(&error(200, -32602, Value::Null), &both), "fail");
    }

    #[test]
    fn forbidden_and_misused_codes_fail() {
        let h = [HEADER_MISMATCH];
        for code in [-32002, -32042, -32023, -32050, -32099] {
            assert!(forbidden(code).is_some(), "{code}");
            assert_eq!(v(&error(400, code, Value::Null), &h), "fail", "{code}");
        }
        for code in [-32020, -32021, -32022, -32019, -32100, -32601, -32602] {
            assert!(forbidden(code).is_none(), "{code}");
        }
        // A defined code used for a condition the request does not break (MCP26-7).
        let sup = json!({"supported": ["2026-07-28"], "requested": "x"});
        assert_eq!(v(&error(400, -32022, sup), &h), "fail");
    }

    #[test]
    fn a_dual_era_server_may_answer_an_unknown_version_by_the_legacy_rule() {
        let answers = [UNSUPPORTED_VERSION, MISSING_CAPABILITY];
        let probe = |legacy_400| Probe {
            rule: "MCP-MD-6",
            answers: &answers,
            removed: false,
            legacy_400,
            what: "probe",
        };
        let judged = |a: &Answer, legacy_400| {
            let mut warnings = Vec::new();
            match judge(&mut warnings, a, &probe(legacy_400)) {
                Err(_) => "fail",
                Ok(()) if warnings.is_empty() => "pass",
                Ok(()) => "warn",
            }
        };
        let bare_400 = answer(400, Value::Null);
        let other_400 = error(400, -32600, Value::Null);
        // A server that also serves a legacy era: any 400 warns; another status still fails.
        assert_eq!(judged(&bare_400, true), "warn");
        assert_eq!(judged(&other_400, true), "warn");
        assert_eq!(judged(&error(404, -32600, Value::Null), true), "fail");
        assert_eq!(judged(&result(), true), "fail");
        // A modern-only server: the request is modern traffic, MCP26-2 holds.
        assert_eq!(judged(&bare_400, false), "fail");
        assert_eq!(judged(&other_400, false), "fail");
    }
}
