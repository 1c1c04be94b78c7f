//! SSP-INV-5: the one judgement of a timed-out execution's `error`, shared by the scripted
//! checks (`provider/checks/execution.rs`, the overrun fixtures) and the model (`model/lifecycle.rs`),
//! so the two never read the same answer differently.
//!
//! The code goes through the SSP code judge ([`crate::ssp::codes`]: `INVOCATION_TIMEOUT`
//! passes, upstream's alias `EXECUTION_TIMEOUT` warns, anything else fails SSP-ERR-2/3).
//! Everything else is a warning: seed §8.2 makes `details` and `retry` optional and §8.3.5
//! shows `{timeout_ms, execution_id}` as an example only (ssp.md's "required" details lose
//! to the seed); which timeout `details.timeout_ms` reports is not said (the effective one,
//! min(endpoint.timeout_ms, context.timeout_ms), is the binding's reading).

use serde_json::{Value, json};

use crate::ssp::codes::{self, Condition};
use crate::ssp::types::ErrorCode;

/// One finding on the error: where, what was expected and seen, why, and the rules.
#[derive(Debug, Clone, PartialEq)]
pub struct Note {
    /// The rules it concerns (a warning names one; a wrong code the code rule and INV-5).
    pub rules: Vec<&'static str>,
    /// JSON pointer into the execution body.
    pub pointer: &'static str,
    /// What was expected.
    pub expected: Value,
    /// What was seen.
    pub observed: Value,
    /// Why.
    pub message: String,
}

/// The judgement: `Err` is the broken rule, `Ok` the tolerated readings (warnings).
pub type Judged = Result<Vec<Note>, Box<Note>>;

/// Judges the `error` of an execution `body` that ended `timeout`: `execution_id` is the
/// execution's id, `effective_ms` its effective timeout when known.
pub fn judge(body: &Value, execution_id: &str, effective_ms: Option<f64>) -> Judged {
    let err = &body["error"];
    let mut notes: Vec<Note> = code_note(err)?.into_iter().collect();
    details_notes(err, execution_id, effective_ms, &mut notes);
    if err.get("retry").is_none() {
        notes.push(note(
            ["SSP-INV-5", ""],
            "/error/retry",
            json!({"suggested_delay_ms": {"$type": "number"}, "max_attempts": {"$type": "number"}}),
            None,
            "the timeout error SHOULD carry retry (seed §8.3.5 shows it; §8.2: retry optional)"
                .into(),
        ));
    }
    Ok(notes)
}

/// A note on `rules` (an empty name is dropped).
fn note(
    rules: [&'static str; 2],
    pointer: &'static str,
    expected: Value,
    observed: Option<&Value>,
    message: String,
) -> Note {
    Note {
        rules: rules.into_iter().filter(|r| !r.is_empty()).collect(),
        pointer,
        expected,
        observed: observed.cloned().unwrap_or(Value::Null),
        message,
    }
}

/// The code, through the SSP code judge: a warning, or the broken rules — the code rule
/// (SSP-ERR-2/3) and SSP-INV-5, which names the code: a timed-out execution's error is
/// INVOCATION_TIMEOUT (ssp.md).
fn code_note(err: &Value) -> Result<Option<Note>, Box<Note>> {
    let code = err["code"].as_str().unwrap_or("");
    let want = json!(ErrorCode::INVOCATION_TIMEOUT);
    match codes::judge(Condition::Timeout, None, code) {
        codes::Verdict::Pass => Ok(None),
        codes::Verdict::Warn(m) => Ok(Some(note(
            ["SSP-ERR-3", ""],
            "/error/code",
            want,
            err.get("code"),
            format!("timeout error code: {m}"),
        ))),
        codes::Verdict::Fail { rule, message } => {
            let message = if code.is_empty() {
                "a timed-out execution's error carries no code (INVOCATION_TIMEOUT expected)".into()
            } else {
                format!("timeout error code: {message}")
            };
            Err(Box::new(note(
                [rule, "SSP-INV-5"],
                "/error/code",
                want,
                err.get("code"),
                message,
            )))
        }
    }
}

/// `details {timeout_ms, execution_id}` (seed §8.3.5 example; §8.2: optional): each miss,
/// or a timeout other than the effective one, is a warning.
fn details_notes(
    err: &Value,
    execution_id: &str,
    effective_ms: Option<f64>,
    notes: &mut Vec<Note>,
) {
    let details =
        "details {timeout_ms, execution_id} (seed §8.3.5 example; §8.2: details optional)";
    let id = err.pointer("/details/execution_id");
    if id.and_then(Value::as_str) != Some(execution_id) {
        notes.push(note(
            ["SSP-INV-5", ""],
            "/error/details/execution_id",
            json!(execution_id),
            id,
            format!("{details}: it SHOULD name this execution"),
        ));
    }
    let tm = err.pointer("/details/timeout_ms");
    match (tm.and_then(Value::as_f64), effective_ms) {
        (None, _) => notes.push(note(
            ["SSP-INV-5", ""],
            "/error/details/timeout_ms",
            json!({"$type": "number"}),
            tm,
            details.to_string(),
        )),
        (Some(t), Some(eff)) if (t - eff).abs() > 1.0 && !(eff <= 0.0 && t <= 0.0) => {
            notes.push(note(
                ["SSP-INV-5", ""],
                "/error/details/timeout_ms",
                json!(eff),
                tm,
                format!(
                    "details.timeout_ms {t} SHOULD be the effective timeout {eff} ms, min(endpoint.timeout_ms, context.timeout_ms)"
                ),
            ));
        }
        _ => {}
    }
}

#[cfg(test)]
#[expect(clippy::expect_used, reason = "tests: a panic is the failure report")]
mod tests {
    use super::*;

    fn body(error: Value) -> Value {
        json!({"status": "timeout", "error": error})
    }

    fn full() -> Value {
        json!({
            "code": "INVOCATION_TIMEOUT", "message": "over",
            "details": {"timeout_ms": 50, "execution_id": "e1"},
            "retry": {"suggested_delay_ms": 100, "max_attempts": 2}
        })
    }

    #[test]
    fn the_seed_example_passes_without_notes() {
        assert_eq!(judge(&body(full()), "e1", Some(50.0)), Ok(vec![]));
    }

    #[test]
    fn optional_members_and_the_alias_warn() {
        let bare = json!({"code": "EXECUTION_TIMEOUT", "message": "over"});
        let notes = judge(&body(bare), "e1", Some(50.0)).expect("warnings only");
        let pointers: Vec<_> = notes.iter().map(|n| n.pointer).collect();
        assert_eq!(
            pointers,
            [
                "/error/code",
                "/error/details/execution_id",
                "/error/details/timeout_ms",
                "/error/retry"
            ]
        );
        // Another execution's id, another timeout: warnings too (details are an example).
        let mut other = full();
        other["details"] = json!({"timeout_ms": 999, "execution_id": "e2"});
        let notes = judge(&body(other), "e1", Some(50.0)).expect("warnings only");
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes.iter().all(|n| n.rules == ["SSP-INV-5"]));
    }

    #[test]
    fn another_code_fails_on_the_code_rules() {
        let mut e = full();
        e["code"] = json!("SKILL_FAILED");
        let n = judge(&body(e), "e1", None).expect_err("a code outside the seven");
        assert_eq!(
            (n.rules.as_slice(), n.pointer),
            (["SSP-ERR-3", "SSP-INV-5"].as_slice(), "/error/code")
        );
        let mut e = full();
        e["code"] = json!("ENDPOINT_UNREACHABLE");
        let n = judge(&body(e), "e1", None).expect_err("the seed names the timeout's code");
        assert_eq!(n.rules, ["SSP-ERR-2", "SSP-INV-5"]);
        let n = judge(&body(json!({"message": "over"})), "e1", None).expect_err("no code");
        assert!(n.message.contains("carries no code"), "{}", n.message);
    }
}
