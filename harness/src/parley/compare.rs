//! PV-TR-1, "two bindings, one decision": every vector that ran on both HTTP and MCP is
//! compared step by step (outcome class, refusal status and reason, success bodies modulo
//! ids, timestamps and cursors) as a derived check `PV-TR-1/<vector id>`.

use std::collections::{BTreeSet, HashMap};

use serde_json::json;

use crate::capability::transports::{HTTP, MCP};
use crate::engine::binding::Binding;
use crate::engine::check::{CheckOutcome, NO_RESPONSE, StepSignature, UNJUDGED};
use crate::engine::finding::{self, Finding, Source};
use crate::engine::protocol::{CheckRun, Suite};
use crate::engine::report::CheckResult;
use crate::engine::verdict::{Cause, Verdict};

/// The requirement the comparison checks.
pub const PV_TR_1: &str = "PV-TR-1";

/// Id of the derived check comparing the two bindings' runs of `check`.
pub fn derived_id(check: &str) -> String {
    format!("{PV_TR_1}/{check}")
}

/// One derived result per check planned on both bindings, in plan order. A comparison
/// needs both runs to have judged the target: when either did not (unsupported, skipped,
/// a harness error, no step sent) it is `unsupported`, never a pass (issue 26).
pub fn judge_across(suite: &Suite, runs: &[CheckRun<'_>]) -> Vec<CheckResult> {
    if suite.catalogue.get(PV_TR_1).is_none() {
        return Vec::new();
    }
    let mut outcomes: HashMap<(&str, Binding), &CheckOutcome> = HashMap::new();
    for r in runs.iter().filter(|r| r.check.compare_transports()) {
        if let Some(t) = r.transport {
            outcomes.insert((r.check.id(), t), r.outcome);
        }
    }
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for r in runs {
        let id = r.check.id();
        if !r.check.compare_transports() || !seen.insert(id) {
            continue;
        }
        let (Some(h), Some(m)) = (outcomes.get(&(id, HTTP)), outcomes.get(&(id, MCP))) else {
            continue;
        };
        let verdict = not_compared(h, m).unwrap_or_else(|| {
            let (hs, ms) = compared_steps(h, m);
            compare(id, hs, ms)
        });
        out.push(CheckResult {
            id: derived_id(id),
            check: derived_id(id),
            suite: suite.name.clone(),
            area: "transport".into(),
            title: format!("HTTP and MCP agree on {id}"),
            transport: None,
            requirements: vec![PV_TR_1.into()],
            required: suite.catalogue.any_required(&[PV_TR_1]),
            verdict,
            baseline: None,
            duration_ms: 0,
            // The evidence judged: the exchanges of the two runs compared.
            exchanges: h.exchange_count() + m.exchange_count(),
            self_test: false,
            reproduction: None,
        });
    }
    out
}

/// Why the two runs of a check cannot be compared, if they cannot: one of them judged
/// nothing. The comparison inherits that run's cause (a profile gap stays `untested`).
fn not_compared(http: &CheckOutcome, mcp: &CheckOutcome) -> Option<Verdict> {
    for (name, o) in [("HTTP", http), ("MCP", mcp)] {
        let why = match &o.verdict {
            Verdict::Unsupported { cause, .. } => Some(*cause),
            Verdict::Skipped { .. } | Verdict::HarnessError { .. } => Some(Cause::Target),
            _ if o.steps.is_empty() => Some(Cause::Target),
            _ => None,
        };
        if let Some(cause) = why {
            return Some(Verdict::Unsupported {
                reason: format!(
                    "nothing to compare: the {name} run was {} with {} step outcome(s)",
                    o.verdict.name(),
                    o.steps.len()
                ),
                cause,
            });
        }
    }
    None
}

/// The steps of two runs that say whether the bindings agree. When both runs failed, each on
/// a rule of its own (already reported, with its ID), where each stopped says which step
/// broke that rule — a model's sequence that meets a fault at another step on each binding,
/// the checks beside it filling the target differently — not that the bindings disagree:
/// only the steps both made are compared. Otherwise every step is (a run that stopped
/// early while the other went on is a disagreement).
fn compared_steps<'a>(
    http: &'a CheckOutcome,
    mcp: &'a CheckOutcome,
) -> (&'a [StepSignature], &'a [StepSignature]) {
    let failed = |o: &CheckOutcome| matches!(o.verdict, Verdict::Fail(_));
    if failed(http) && failed(mcp) {
        let n = http.steps.len().min(mcp.steps.len());
        (&http.steps[..n], &mcp.steps[..n])
    } else {
        (&http.steps, &mcp.steps)
    }
}

/// Compares the step signatures of one vector on HTTP and MCP (PV-TR-1). Steps that say
/// nothing about the binding's decision end the comparison there; when that is the first
/// step, nothing was compared and the verdict is `untested`, never a pass (issue 26).
pub fn compare(id: &str, http: &[StepSignature], mcp: &[StepSignature]) -> Verdict {
    let n = http.len().min(mcp.len());
    for i in 0..n {
        let (h, m) = (&http[i], &mcp[i]);
        if let Some(why) = undecided(h).or_else(|| undecided(m)) {
            // Nothing compared is no evidence either way: the rule stays untested (never
            // `n/a`, which would read as "does not apply").
            return if i == 0 {
                Verdict::untested(format!("nothing to compare: the first step {why}"))
            } else {
                Verdict::Pass
            };
        }
        let same = h.class == m.class
            && h.reason == m.reason
            && (h.class != "refusal" || h.status == m.status)
            && (h.body.is_none() || m.body.is_none() || h.body == m.body);
        if !same {
            let (hv, mv) = (
                serde_json::to_value(h).unwrap_or_default(),
                serde_json::to_value(m).unwrap_or_default(),
            );
            let pointer = if h.class == m.class && h.body != m.body {
                "/body"
            } else {
                ""
            };
            let message = format!(
                "step {}: the MCP outcome differs from the HTTP outcome",
                h.step
            );
            let f = Finding::fail(pointer, json!({"http": hv}), json!({"mcp": mv}), message);
            return disagreement(id, f.at(h.step));
        }
    }
    if http.len() != mcp.len() {
        let f = Finding::fail(
            "",
            json!({"http_steps": http.len()}),
            json!({"mcp_steps": mcp.len()}),
            "the vector stopped at a different step on each binding",
        );
        return disagreement(id, f.at(n + 1));
    }
    Verdict::Pass
}

/// The verdict of PV-TR-1 on vector `id` when its bindings disagree (`f`): a failure.
fn disagreement(id: &str, f: Box<Finding>) -> Verdict {
    let f = f.by(Source::Comparison);
    finding::found(&derived_id(id), &[PV_TR_1.into()], true, f, &[])
}

/// Why a step's outcome says nothing about the binding's decision, if it does not.
fn undecided(s: &StepSignature) -> Option<&'static str> {
    // A quota refusal (PV-TR-5) depends on how many writes the token made, on both bindings
    // together, before that moment — not on the binding. From there on the two runs no
    // longer send the same effective requests.
    if s.reason.as_deref() == Some("rate_limited") {
        return Some("met the quota (PV-TR-5)");
    }
    // A step the harness could not judge (an assert that reached the target after its own
    // deadline on one binding).
    if s.class == UNJUDGED {
        return Some("could not be judged");
    }
    // No answer within the per-request timeout is no decision either: the run that got
    // none already failed on its own rule, naming the budget (two unanswered runs "agree"
    // on nothing).
    if s.class == NO_RESPONSE {
        return Some("got no answer");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parley::vectors::runner::normalise;
    use serde_json::json;
    use std::collections::HashMap;

    fn sig(
        step: usize,
        class: &str,
        reason: Option<&str>,
        body: Option<serde_json::Value>,
    ) -> StepSignature {
        StepSignature {
            step,
            class: class.into(),
            status: reason.map(|_| 409),
            reason: reason.map(str::to_string),
            body,
        }
    }

    #[test]
    fn pv_tr_1_comparison() {
        let mut ids_h = HashMap::new();
        let mut ids_m = HashMap::new();
        let h_body = normalise(
            &json!({"thread": {"id": "th_3", "created_at": "2026-11-30T04:00:00Z"}}),
            &mut ids_h,
        );
        let m_body = normalise(
            &json!({"thread": {"id": "th_91", "created_at": "2026-11-30T04:00:07Z"}}),
            &mut ids_m,
        );
        let h = vec![
            sig(1, "success", None, Some(h_body.clone())),
            sig(2, "refusal", Some("thread_locked"), None),
        ];
        let m = vec![
            sig(1, "success", None, Some(m_body)),
            sig(2, "refusal", Some("thread_locked"), None),
        ];
        assert_eq!(
            compare("v", &h, &m),
            Verdict::Pass,
            "ids and times are normalised"
        );
        let m2 = vec![
            sig(1, "success", None, Some(h_body.clone())),
            sig(2, "refusal", Some("invalid_transition"), None),
        ];
        let Verdict::Fail(v) = compare("v", &h, &m2) else {
            panic!("a different reason must fail PV-TR-1")
        };
        assert_eq!(
            (v.step, v.requirements),
            (Some(2), vec!["PV-TR-1".to_string()])
        );
        let m3 = vec![sig(
            1,
            "success",
            None,
            Some(json!({"thread": {"id": "<th#1>", "created_at": "<time>", "x": 1}})),
        )];
        let Verdict::Fail(v) = compare("v", &h[..1], &m3) else {
            panic!("a different body must fail PV-TR-1")
        };
        assert_eq!(v.pointer, "/body");
        // A quota refusal on one side ends the comparison; a difference before it still fails.
        let limited = vec![
            sig(1, "success", None, Some(h_body.clone())),
            sig(2, "refusal", Some("rate_limited"), None),
        ];
        assert_eq!(compare("v", &h, &limited), Verdict::Pass);
        let early = vec![
            sig(1, "refusal", Some("thread_locked"), None),
            sig(2, "refusal", Some("rate_limited"), None),
        ];
        assert!(matches!(compare("v", &h, &early), Verdict::Fail(_)));
        // So does a step the harness could not judge; a difference before it still fails.
        let unjudged = vec![
            sig(1, "success", None, Some(h_body)),
            sig(2, UNJUDGED, None, None),
        ];
        assert_eq!(compare("v", &h, &unjudged), Verdict::Pass);
        let before = vec![
            sig(1, "refusal", Some("thread_locked"), None),
            sig(2, UNJUDGED, None, None),
        ];
        assert!(matches!(compare("v", &h, &before), Verdict::Fail(_)));
    }

    #[test]
    fn steps_without_a_decision_first_compare_nothing_and_never_pass() {
        let silent = vec![sig(1, NO_RESPONSE, None, None)];
        // Two unanswered runs do not "agree": nothing was compared (issue 26).
        for (h, m) in [
            (silent.clone(), silent.clone()),
            (silent.clone(), vec![sig(1, "success", None, None)]),
            (vec![sig(1, UNJUDGED, None, None)], silent),
            (
                vec![sig(1, "refusal", Some("rate_limited"), None)],
                vec![sig(1, "success", None, None)],
            ),
        ] {
            let v = compare("v", &h, &m);
            assert!(
                matches!(&v, Verdict::Unsupported { reason, cause: Cause::Profile } if reason.starts_with("nothing to compare")),
                "{h:?} / {m:?}: {v:?}"
            );
        }
        // After an agreeing step, an unanswered one ends the comparison with that evidence.
        let ok = sig(1, "success", None, None);
        let h = vec![ok.clone(), sig(2, NO_RESPONSE, None, None)];
        let m = vec![ok, sig(2, "success", None, None)];
        assert_eq!(compare("v", &h, &m), Verdict::Pass);
    }

    #[test]
    fn two_failed_runs_are_compared_on_the_steps_both_made() {
        let failed = || {
            Verdict::Fail(crate::engine::verdict::Violation {
                check: "v".into(),
                requirements: vec!["PV-RD-3".into()],
                step: None,
                pointer: String::new(),
                expected: json!(null),
                observed: json!(null),
                message: "m".into(),
                transcript: Vec::new(),
                completed: false,
            })
        };
        let run = |verdict: Verdict, n: usize| {
            let mut o = CheckOutcome::verdict(verdict);
            o.steps = (1..=n).map(|i| sig(i, "success", None, None)).collect();
            o
        };
        let (h, m) = (run(failed(), 3), run(failed(), 5));
        let (hs, ms) = compared_steps(&h, &m);
        assert_eq!(compare("v", hs, ms), Verdict::Pass);
        // One run stopped early while the other passed on: a disagreement.
        let m = run(Verdict::Pass, 5);
        let (hs, ms) = compared_steps(&h, &m);
        assert!(matches!(compare("v", hs, ms), Verdict::Fail(_)));
    }

    #[test]
    fn unordered_name_lists_compare_as_sets() {
        let (mut a, mut b) = (HashMap::new(), HashMap::new());
        let h = normalise(&json!({"rights": ["read", "write"]}), &mut a);
        let m = normalise(&json!({"rights": ["write", "read"]}), &mut b);
        assert_eq!(h, m, "the notes fix no order for rights");
        let m = normalise(&json!({"rights": ["write"]}), &mut b);
        assert_ne!(h, m, "a missing right still differs");
        // Message ids keep their order (siblings in creation order, PV-RD-1).
        let h = normalise(&json!({"ids": ["msg_1", "msg_2"]}), &mut HashMap::new());
        let m = normalise(&json!({"ids": ["msg_2", "msg_1"]}), &mut HashMap::new());
        assert_eq!(
            h, m,
            "ids are renamed by first appearance, so both read <msg#1>, <msg#2>"
        );
    }
}
