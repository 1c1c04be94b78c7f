//! What every SSP answer to a hostile request must satisfy, whatever the provider chose to
//! do with it: no 5xx, an answer, errors in the unified shape with one of the seven codes
//! and its status (SSP-ERR-1/2/3, one judge: `ssp::codes`), certainly-invalid requests refused (SSP-INV-2, SSP-AUTH-2), no leaked
//! internals. Like Parley's, they never ask *which* refusal: the notes leave that open.

use serde_json::Value;

use super::cases::Case;
use crate::capability::fuzz::Oracle;
use crate::engine::finding::Finding;
use crate::ssp::codes;
use crate::ssp::provider::env::Resp;
use crate::transport::Exchange;

/// No 5xx.
pub const NO_5XX: Oracle = Oracle {
    name: "no-5xx",
    title: "Hostile SSP requests never get a 5xx",
    requirements: &["SSP-ERR-1", "SSP-INV-2"],
    warns: false,
};
/// An answer in time.
pub const ANSWERS: Oracle = Oracle {
    name: "answers",
    title: "Hostile SSP requests get an answer within the timeout",
    requirements: &["SSP-ERR-1", "SSP-INV-2"],
    warns: false,
};
/// The unified error shape.
pub const ERROR_SHAPE: Oracle = Oracle {
    name: "error-shape",
    title: "Errors to hostile SSP requests have the unified shape, one of the seven codes and its status",
    requirements: &["SSP-ERR-1", "SSP-ERR-2", "SSP-ERR-3"],
    warns: false,
};
/// Invalid requests refused.
pub const REFUSED: Oracle = Oracle {
    name: "invalid-refused",
    title: "Malformed invocations and foreign credentials are refused, never executed",
    requirements: &["SSP-INV-2", "SSP-AUTH-2", "SSP-AUTH-4"],
    warns: false,
};
/// No internals.
pub const NO_LEAK: Oracle = Oracle {
    name: "no-leak",
    title: "SSP answers leak no stack trace, SQL or file path",
    requirements: &["SSP-ERR-1"],
    warns: false,
};
/// The provider still works afterwards.
pub const STATE_INTACT: Oracle = Oracle {
    name: "state-intact",
    title: "After the campaign the provider lists its skills and runs an invocation to its end",
    requirements: &["SSP-DISC-1", "SSP-INV-1", "SSP-INV-3"],
    warns: false,
};

/// A refusal raised before routing (SSP-ERR-4): judged on status, any JSON body conforms,
/// a non-JSON one is a finding of this oracle, whose check warns (a SHOULD).
pub const TRANSPORT_REFUSAL: Oracle = Oracle {
    name: "transport-refusal",
    title: "Refusals raised before an SSP route (oversized or hostile request targets and heads) carry a JSON body (a SHOULD: warnings)",
    requirements: &["SSP-ERR-4"],
    warns: true,
};

/// Every oracle, in report order.
pub static ALL: [Oracle; 7] = [
    NO_5XX,
    ANSWERS,
    ERROR_SHAPE,
    REFUSED,
    NO_LEAK,
    STATE_INTACT,
    TRANSPORT_REFUSAL,
];

/// A hostile request without a usable answer: an answer over the harness's limits is judged
/// on its status only; no answer at all is a breach unless the case may be dropped (or it
/// never left the harness).
fn unanswered(case: &Case, ex: &Exchange) -> Vec<Finding> {
    let why = ex.error.as_deref().unwrap_or("no response");
    // An answer came, over the harness's limits (depth, size): only its status is judged.
    if let Some(status) = ex.status {
        return (status >= 500)
            .then(|| {
                NO_5XX.breach(
                    format!("HTTP {status}"),
                    format!("HTTP {status} to a hostile request"),
                )
            })
            .into_iter()
            .collect();
    }
    // The harness could not build the request (e.g. a URI over hyper's 64 KiB): nothing
    // reached the server.
    if crate::transport::never_built(why) {
        return Vec::new();
    }
    let key = if why.contains("timeout") || why.contains("timed out") {
        "timeout"
    } else {
        "no answer"
    };
    if case.may_drop {
        Vec::new()
    } else {
        vec![ANSWERS.breach(key, format!("no answer: {why}"))]
    }
}

/// Judges one answer (`resp` `None`: no usable response; `ex` says what came, if anything).
pub fn judge(case: &Case, resp: Option<&Resp>, ex: &Exchange) -> Vec<Finding> {
    let Some(r) = resp else {
        return unanswered(case, ex);
    };
    let mut found = Vec::new();
    // A 503 sheds load or caps connections (SSP-ERR-3's overload row; SSP-ERR-4's
    // connection cap, answered by the HTTP layer), not a crash; 505 is the HTTP layer's too
    // (PV-TR-6's table). Both are judged below: SSP's shape, or as a transport refusal.
    if r.status >= 500 && !matches!(r.status, 503 | 505) {
        found.push(NO_5XX.breach(
            format!("HTTP {}", r.status),
            format!("HTTP {} to a hostile request", r.status),
        ));
    }
    if let Some(m) = crate::capability::fuzz::leaked(&r.text) {
        found.push(NO_LEAK.breach(
            m.to_ascii_lowercase(),
            format!("the answer shows internals: {m:?}"),
        ));
    }
    if case.invalid && (200..300).contains(&r.status) {
        found.push(REFUSED.breach(
            format!("{} accepted", case.op),
            format!("HTTP {} to a request that must be refused", r.status),
        ));
    }
    // SSP-ERR-4: 414, 431 and 505 are answered by the HTTP layer before any route is
    // chosen; so are a 408, 413 or 503 (a connection cap) without SSP's unified error (SSP
    // has its own 408, 413 and 503),
    // and a 400 without JSON to a hostile URI (an encoded NUL, a long line). Such a refusal is
    // not one of SSP's error responses: its status alone is judged, any JSON body conforms.
    let ssp_error = (r.json.as_ref())
        .and_then(|j| j.pointer("/error/code"))
        .is_some();
    let http_layer = matches!(r.status, 414 | 431 | 505)
        || (matches!(r.status, 408 | 413 | 503) && !ssp_error)
        || (case.hostile_uri && r.status == 400 && !ssp_error);
    if r.status >= 400 && case.ssp_route && !http_layer {
        found.extend(shape(r));
    }
    if http_layer && (r.json.is_none() || r.status == 505) {
        found.push(TRANSPORT_REFUSAL.breach(format!("HTTP {} not JSON", r.status),
            format!(
                "transport refusal HTTP {} (505: another row's status) or without a JSON body (SSP-ERR-4: a warning): {}",
                r.status,
                r.text.chars().take(80).collect::<String>()
            ),
        ));
    }
    found
}

/// The unified error shape of seed §8.2 (SSP-ERR-1) and the status of a protocol code
/// (SSP-ERR-2).
fn shape(r: &Resp) -> Option<Finding> {
    let error = r.json.as_ref().and_then(|j| j.get("error"));
    let code = error.and_then(|e| e.get("code")).and_then(Value::as_str);
    let message = error.and_then(|e| e.get("message")).map(Value::is_string);
    let (Some(code), Some(true)) = (code, message) else {
        return Some(ERROR_SHAPE.breach(
            format!("HTTP {} not in the unified shape", r.status),
            format!(
                "HTTP {} without {{\"error\": {{\"code\", \"message\"}}}}: {}",
                r.status,
                r.text.chars().take(120).collect::<String>()
            ),
        ));
    };
    if let Some(retry) = error.and_then(|e| e.get("retry"))
        && !(retry.get("suggested_delay_ms").is_some() && retry.get("max_attempts").is_some())
    {
        return Some(ERROR_SHAPE.breach(
            format!("{code}: partial retry"),
            format!("{code}: `retry` needs suggested_delay_ms and max_attempts (seed §8.2)"),
        ));
    }
    // SSP-ERR-2/3 through the one judge: the condition is read from the status (a fuzz
    // case provokes no one condition on purpose); a tolerated code is not a breach.
    match codes::judge(codes::Condition::ByStatus, Some(r.status), code) {
        codes::Verdict::Fail { rule, message } => Some(ERROR_SHAPE.breach(
            format!("{code} with HTTP {}", r.status),
            format!("{message} ({rule})"),
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    //! Each oracle fails on the answer that breaks it and passes the readings the notes allow.
    use super::*;
    use crate::ssp::provider::env::Cred;
    use crate::transport::TransportKind;
    use serde_json::json;

    fn case(invalid: bool) -> Case {
        Case {
            op: "invoke",
            mutation: "test".into(),
            method: "POST".into(),
            url: "http://127.0.0.1:9/ssp/invoke/echo".into(),
            headers: Vec::new(),
            body: None,
            cred: Cred::None,
            ssp_route: true,
            invalid,
            hostile_uri: false,
            may_drop: false,
        }
    }

    fn exchange(status: Option<u16>, error: Option<&str>) -> Exchange {
        Exchange {
            transport: TransportKind::Http,
            method: "POST".into(),
            url: "http://127.0.0.1:9/".into(),
            request_headers: Vec::new(),
            request_body: None,
            status,
            response_headers: Vec::new(),
            response_body: None,
            error: error.map(str::to_string),
            elapsed_us: 0,
            resent_after: None,
        }
    }

    fn resp(status: u16, text: &str) -> Resp {
        Resp {
            status,
            headers: Vec::new(),
            text: text.into(),
            json: serde_json::from_str(text).ok(),
        }
    }

    fn oracles(c: &Case, r: Option<&Resp>, ex: &Exchange) -> Vec<&'static str> {
        judge(c, r, ex)
            .into_iter()
            .filter_map(|b| b.source.oracle())
            .collect()
    }

    const OK_ERROR: &str = r#"{"error":{"code":"VALIDATION_ERROR","message":"bad"}}"#;

    #[test]
    fn each_oracle_fails_on_its_breach() {
        let ex = exchange(Some(400), None);
        let c = case(false);
        assert_eq!(oracles(&c, Some(&resp(500, OK_ERROR)), &ex), ["no-5xx"]);
        // A 503 without a JSON body: the HTTP layer's connection cap, judged on its status,
        // warns (SSP-ERR-4); an SSP-shaped 503 must carry a code of its row.
        assert_eq!(
            oracles(&c, Some(&resp(503, "<html>down</html>")), &ex),
            ["transport-refusal"]
        );
        let wrong = r#"{"error":{"code":"AUTH_REQUIRED","message":"busy"}}"#;
        assert_eq!(oracles(&c, Some(&resp(503, wrong)), &ex), ["error-shape"]);
        assert_eq!(
            oracles(&c, Some(&resp(400, "bad request")), &ex),
            ["error-shape"]
        );
        let wrong_status = r#"{"error":{"code":"AUTH_REQUIRED","message":"x"}}"#;
        assert_eq!(
            oracles(&c, Some(&resp(403, wrong_status)), &ex),
            ["error-shape"]
        );
        let partial_retry = r#"{"error":{"code":"X","message":"x","retry":{"max_attempts":1}}}"#;
        assert_eq!(
            oracles(&c, Some(&resp(400, partial_retry)), &ex),
            ["error-shape"]
        );
        let leak =
            r#"{"error":{"code":"VALIDATION_ERROR","message":"panicked at src/main.rs:3:5"}}"#;
        assert_eq!(oracles(&c, Some(&resp(400, leak)), &ex), ["no-leak"]);
        assert_eq!(
            oracles(&case(true), Some(&resp(202, "{}")), &ex),
            ["invalid-refused"]
        );
        // SSP-ERR-3: a code outside the seven is a breach on every status.
        let own = json!({"error": {"code": "PAYLOAD_TOO_LARGE", "message": "x"}});
        assert_eq!(
            oracles(&c, Some(&resp(413, &own.to_string())), &ex),
            ["error-shape"]
        );
        let reset = exchange(None, Some("request failed: connection reset"));
        assert_eq!(oracles(&c, None, &reset), ["answers"]);
    }

    #[test]
    fn the_readings_the_notes_allow_pass() {
        let ex = exchange(Some(400), None);
        let c = case(true);
        // A refusal in the unified shape, the table's code or another of the seven (a
        // warning, not a breach: SSP-ERR-3), a 503 shedding load, an answer over the
        // harness's limits.
        assert!(judge(&c, Some(&resp(400, OK_ERROR)), &ex).is_empty());
        let table = json!({"error": {"code": "VALIDATION_ERROR", "message": "x"}});
        assert!(judge(&c, Some(&resp(413, &table.to_string())), &ex).is_empty());
        let other = json!({"error": {"code": "SKILL_NOT_FOUND", "message": "x"}});
        assert!(judge(&c, Some(&resp(405, &other.to_string())), &ex).is_empty());
        let unreachable = r#"{"error":{"code":"ENDPOINT_UNREACHABLE","message":"busy"}}"#;
        let mut shed = resp(503, unreachable);
        assert!(
            judge(&c, Some(&shed), &ex).is_empty(),
            "SSP-ERR-3's overload row"
        );
        shed.headers = vec![("retry-after".into(), "1".into())];
        assert!(judge(&c, Some(&shed), &ex).is_empty());
        // A connection cap in Parley's shape, from a server hosting both (SSP-ERR-4).
        let parley_busy = r#"{"error":{"reason":"server_busy","status":503,"message":"m"}}"#;
        assert!(judge(&c, Some(&resp(503, parley_busy)), &ex).is_empty());
        let over = exchange(Some(400), Some("JSON deeper than 128"));
        assert!(judge(&c, None, &over).is_empty());
        // A head a server may drop, and a non-JSON 400 to a hostile URI.
        let mut dropped = case(false);
        dropped.may_drop = true;
        assert!(judge(&dropped, None, &exchange(None, Some("reset"))).is_empty());
        // SSP-ERR-4: a transport refusal's status alone is judged: any JSON body conforms
        // (Parley's shape from a server hosting both), a non-JSON one only warns.
        let mut uri = case(false);
        uri.hostile_uri = true;
        assert_eq!(
            oracles(&uri, Some(&resp(400, "<html>")), &ex),
            ["transport-refusal"]
        );
        let parley = r#"{"error":{"reason":"payload_too_large","status":413,"message":"m"}}"#;
        assert!(judge(&c, Some(&resp(413, parley)), &ex).is_empty());
        let invalid = r#"{"error":{"reason":"invalid_request","status":400,"message":"m"}}"#;
        assert!(judge(&uri, Some(&resp(400, invalid)), &ex).is_empty());
        assert_eq!(
            oracles(&c, Some(&resp(505, "{}")), &ex),
            ["transport-refusal"]
        );
        assert_eq!(
            oracles(&c, Some(&resp(431, "Request Header Fields Too Large")), &ex),
            ["transport-refusal"]
        );
        const { assert!(TRANSPORT_REFUSAL.warns && !ERROR_SHAPE.warns) };
    }
}
