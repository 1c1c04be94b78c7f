//! Promotion (`conform fuzz --promote DIR`): each finding becomes a golden vector, so the
//! hostile request that broke an oracle runs forever after in the plain vector suite and
//! against every other target. The request is kept as sent (a raw HTTP or MCP step, or the
//! post on both bindings when the finding compared them, PV-TR-1); its expectation is
//! `{"well_formed": true}` — the fuzzer's oracles, since what the right answer *is* the notes
//! may leave open, but that it is well formed they do not.

use serde_json::{Map, Value, json};

use super::cases::Case;
use crate::capability::fuzz::Found;
use crate::capability::transports;
use crate::transport::TransportKind;

/// The step that replays `f`, `None` for findings with no request of their own (the state
/// read back after the campaign).
fn step(f: &Found<Case>) -> Option<Value> {
    let expect = json!({"well_formed": true});
    let c = &f.case;
    let mut s = Map::new();
    s.insert("as".into(), json!("agent_a"));
    match f.transport.and_then(transports::kind) {
        None => {
            s.insert("op".into(), json!(c.op));
            s.insert("args".into(), c.logical.clone()?);
        }
        Some(TransportKind::Http) => {
            s.insert("http".into(), serde_json::to_value(c.http.as_ref()?).ok()?);
        }
        Some(TransportKind::Mcp) => {
            s.insert("mcp".into(), serde_json::to_value(c.mcp.as_ref()?).ok()?);
        }
    }
    s.insert("expect".into(), expect);
    s.insert(
        "note".into(),
        json!(format!("fuzz finding: {}", f.finding.message)),
    );
    Some(Value::Object(s))
}

/// The vector file of a campaign's findings on `seed`: one vector per finding that has a
/// request of its own, citing its oracle's requirement IDs (and PV-TR-1 for a comparison);
/// `None` when no finding has one.
pub fn vector_file(findings: &[Found<Case>], seed: u64) -> Option<Value> {
    let mut vectors = Vec::new();
    for (i, f) in findings.iter().enumerate() {
        // Its vector would need "refused" as the expectation, which `well_formed` is not;
        // the campaign's report keeps such a finding with its reproduction. A transport
        // refusal's finding is a warning (PV-TR-6): `well_formed` would make it a failure.
        let oracle = super::oracles::oracle_of(&f.finding);
        if matches!(
            oracle,
            Some(super::oracles::Oracle::InvalidRefused | super::oracles::Oracle::TransportRefusal)
        ) {
            continue;
        }
        let Some(step) = step(f) else { continue };
        let mut requirements: Vec<String> = f.finding.rules.clone();
        if f.transport.is_none() && !requirements.iter().any(|r| r == "PV-TR-1") {
            requirements.insert(0, "PV-TR-1".into());
        }
        let binding = f.transport.map_or("both", |b| b.as_str());
        vectors.push(json!({
            "id": format!("fuzz/seed-{seed}-{}-{}-{binding}-{}", f.op, f.oracle(), i + 1),
            "requirements": requirements,
            "title": format!("promoted fuzz finding (seed {seed}): {} — {}", f.mutation, f.finding.message),
            "roles": ["agent_a"],
            "steps": [step],
        }));
    }
    (!vectors.is_empty()).then(
        || json!({"format_version": 1, "suite": "parley", "area": "fuzz", "vectors": vectors}),
    )
}
