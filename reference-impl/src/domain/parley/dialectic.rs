//! Dialectic profile (§9, PV-DI): claim states, evidence validation, claim transitions.

use serde::Serialize;
use serde_json::Value;

use super::kinds::Kind;
use super::limits::{Limits, char_len};
use super::reasons::{Reason, Refusal, refuse};

/// A claim's status (PV-DI).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClaimStatus {
    /// Just asserted.
    Unverified,
    /// At least one attestation.
    Supported,
    /// Sealed by a verifier.
    Verified,
    /// Refuted with proof; terminal (PV-DI-5).
    Refuted,
    /// Replaced by a newer claim (PV-DI-6).
    Superseded,
}

impl ClaimStatus {
    /// Every status (manifest `claim_states`).
    pub const ALL: [Self; 5] = [
        Self::Unverified,
        Self::Supported,
        Self::Verified,
        Self::Refuted,
        Self::Superseded,
    ];

    /// Wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unverified => "unverified",
            Self::Supported => "supported",
            Self::Verified => "verified",
            Self::Refuted => "refuted",
            Self::Superseded => "superseded",
        }
    }

    /// Parses the wire spelling.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

/// Evidence kinds of PV-DI-1.
pub const EVIDENCE_KINDS: [&str; 8] = [
    "url",
    "hash",
    "artifact",
    "commit",
    "log",
    "reproducer",
    "note",
    "other",
];

/// One evidence item `{kind, ref, note?}` — a pointer, never an opinion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
// Closed in the schema (`/openapi.json`) only: the envelope check refuses unknown members.
#[schemars(deny_unknown_fields)]
pub struct Evidence {
    /// One of [`EVIDENCE_KINDS`].
    pub kind: String,
    /// The pointer (URL, `<algo>:<hex>`, commit id, ...).
    #[serde(rename = "ref")]
    pub reference: String,
    /// Optional free note.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

fn is_hex(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `url`: an absolute http(s) URL with a host.
fn url_ok(s: &str) -> bool {
    match url::Url::parse(s) {
        Ok(u) => {
            matches!(u.scheme(), "http" | "https") && u.host_str().is_some_and(|h| !h.is_empty())
        }
        Err(_) => false,
    }
}

/// `hash`: `<algo>:<hex>` (algo: lowercase letters/digits/`-`).
fn hash_ok(s: &str) -> bool {
    match s.split_once(':') {
        Some((algo, hex)) => {
            !algo.is_empty()
                && algo
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && is_hex(hex)
        }
        None => false,
    }
}

/// PV-DI-1: a present ref must also fit the length limit and its kind's shape, so that
/// a pointer can be followed.
fn check_ref(kind: &str, reference: &str, limits: &Limits, i: usize) -> Result<(), Refusal> {
    if char_len(reference) > limits.evidence_ref_max_chars {
        return refuse(
            Reason::EvidenceInvalid,
            format!(
                "evidence[{i}]: ref longer than {} characters",
                limits.evidence_ref_max_chars
            ),
        );
    }
    let ok = match kind {
        "url" => url_ok(reference),
        "hash" => hash_ok(reference),
        "commit" => (7..=40).contains(&reference.len()) && is_hex(reference),
        _ => true,
    };
    if !ok {
        let expected = match kind {
            "url" => "an absolute http(s) URL",
            "hash" => "<algo>:<hex>",
            _ => "7 to 40 hex characters",
        };
        return refuse(
            Reason::EvidenceInvalid,
            format!("evidence[{i}]: {kind} ref must be {expected}"),
        );
    }
    Ok(())
}

fn validate_item(v: &Value, limits: &Limits, i: usize) -> Result<Evidence, Refusal> {
    let Value::Object(map) = v else {
        return refuse(
            Reason::InvalidBody,
            format!("evidence[{i}] must be an object"),
        );
    };
    if let Some(k) = map
        .keys()
        .find(|k| !matches!(k.as_str(), "kind" | "ref" | "note"))
    {
        return refuse(
            Reason::InvalidBody,
            format!("evidence[{i}]: unknown field {k:?}"),
        );
    }
    let string = |name: &str| -> Result<Option<String>, Refusal> {
        match map.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => refuse(
                Reason::InvalidBody,
                format!("evidence[{i}].{name} must be a string"),
            ),
        }
    };
    let kind = string("kind")?;
    let reference = string("ref")?;
    let note = string("note")?;
    let Some(kind) = kind else {
        return refuse(
            Reason::EvidenceInvalid,
            format!("evidence[{i}]: kind is required"),
        );
    };
    if !EVIDENCE_KINDS.contains(&kind.as_str()) {
        return refuse(
            Reason::EvidenceInvalid,
            format!(
                "evidence[{i}]: kind {kind:?} is not one of {}",
                EVIDENCE_KINDS.join(", ")
            ),
        );
    }
    let Some(reference) = reference.filter(|r| !r.trim().is_empty()) else {
        return refuse(
            Reason::EvidenceInvalid,
            format!("evidence[{i}]: ref is required"),
        );
    };
    check_ref(&kind, &reference, limits, i)?;
    Ok(Evidence {
        kind,
        reference,
        note,
    })
}

/// PV-DI-1: validates the `evidence` member of a dialectic act. Structure faults (not an
/// array, an item not an object, unknown item field, wrong type) → `invalid_body`
/// (PV-EN-1); 0 or more than `evidence_max` items → `evidence_required`; a ref that does not
/// fit its kind → `evidence_invalid`.
pub fn parse_evidence(v: Option<&Value>, limits: &Limits) -> Result<Vec<Evidence>, Refusal> {
    let items = match v {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(items)) => items.as_slice(),
        Some(_) => return refuse(Reason::InvalidBody, "evidence must be an array"),
    };
    // Structure first (400 invalid_body is about the envelope's shape).
    for (i, item) in items.iter().enumerate() {
        if !item.is_object() {
            return refuse(
                Reason::InvalidBody,
                format!("evidence[{i}] must be an object"),
            );
        }
    }
    if items.is_empty() || items.len() > limits.evidence_max {
        return refuse(
            Reason::EvidenceRequired,
            format!(
                "dialectic acts need 1..{} evidence items, got {}",
                limits.evidence_max,
                items.len()
            ),
        );
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| validate_item(item, limits, i))
        .collect()
}

/// The effect of an act on a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimEffect {
    /// Recorded (e.g. one more attestation) without a status change: no event.
    Recorded,
    /// The claim moves to a new status: one event (PV-DI-7).
    Moves(ClaimStatus),
}

/// PV-DI-3..5: what `attest`, `verify` or `refute` does to a claim in `status`.
/// `attest`: unverified → supported; supported/verified: one more support; refuted or
/// superseded → 409. `verify`: unverified|supported → verified; verified: recorded;
/// refuted/superseded → 409. `refute`: unverified|supported|verified → refuted; refuted:
/// one more refutation (nothing leaves refuted); superseded → 409.
pub fn claim_act(status: ClaimStatus, kind: Kind) -> Result<ClaimEffect, Refusal> {
    use ClaimStatus::*;
    let effect = match (kind, status) {
        (Kind::Attest, Unverified) => ClaimEffect::Moves(Supported),
        (Kind::Attest, Supported | Verified) => ClaimEffect::Recorded,
        (Kind::Verify, Unverified | Supported) => ClaimEffect::Moves(Verified),
        (Kind::Verify, Verified) => ClaimEffect::Recorded,
        (Kind::Refute, Unverified | Supported | Verified) => ClaimEffect::Moves(Refuted),
        (Kind::Refute, Refuted) => ClaimEffect::Recorded,
        (Kind::Attest | Kind::Verify | Kind::Refute, Refuted | Superseded) => {
            return refuse(
                Reason::InvalidTransition,
                format!(
                    "claim is {}; {} does not apply",
                    status.as_str(),
                    kind.as_str()
                ),
            );
        }
        _ => {
            return refuse(
                Reason::InvalidBody,
                format!("{} does not act on a claim", kind.as_str()),
            );
        }
    };
    Ok(effect)
}

/// PV-DI-6: superseding moves a claim to `superseded`, except refuted claims (they stay
/// refuted) and claims already superseded (unchanged).
pub fn supersede(status: ClaimStatus) -> Option<ClaimStatus> {
    match status {
        ClaimStatus::Refuted | ClaimStatus::Superseded => None,
        _ => Some(ClaimStatus::Superseded),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::parley::limits::REFERENCE;
    use serde_json::json;

    fn reason(v: Value) -> Option<Reason> {
        parse_evidence(Some(&v), &REFERENCE).err().map(|r| r.reason)
    }

    #[test]
    fn evidence_table() {
        // PV-DI-1
        let table: Vec<(Value, Option<Reason>)> = vec![
            (
                json!([{"kind": "url", "ref": "https://example.org/x"}]),
                None,
            ),
            (json!([{"kind": "url", "ref": "http://h"}]), None),
            (
                json!([{"kind": "url", "ref": "ftp://example.org/x"}]),
                Some(Reason::EvidenceInvalid),
            ),
            (
                json!([{"kind": "url", "ref": "/relative"}]),
                Some(Reason::EvidenceInvalid),
            ),
            (json!([{"kind": "hash", "ref": "sha256:abcdef0123"}]), None),
            (
                json!([{"kind": "hash", "ref": "sha256:xyz"}]),
                Some(Reason::EvidenceInvalid),
            ),
            (
                json!([{"kind": "hash", "ref": "abcdef"}]),
                Some(Reason::EvidenceInvalid),
            ),
            (json!([{"kind": "commit", "ref": "abc1234"}]), None),
            (json!([{"kind": "commit", "ref": "a".repeat(40)}]), None),
            (
                json!([{"kind": "commit", "ref": "abc123"}]),
                Some(Reason::EvidenceInvalid),
            ),
            (
                json!([{"kind": "commit", "ref": "a".repeat(41)}]),
                Some(Reason::EvidenceInvalid),
            ),
            (
                json!([{"kind": "commit", "ref": "abcdefg"}]),
                Some(Reason::EvidenceInvalid),
            ),
            (
                json!([{"kind": "note", "ref": "see the log", "note": "n"}]),
                None,
            ),
            (
                json!([{"kind": "artifact", "ref": "x"}, {"kind": "log", "ref": "y"}, {"kind": "reproducer", "ref": "z"}, {"kind": "other", "ref": "w"}]),
                None,
            ),
            (
                json!([{"kind": "opinion", "ref": "x"}]),
                Some(Reason::EvidenceInvalid),
            ),
            (
                json!([{"kind": "note", "ref": ""}]),
                Some(Reason::EvidenceInvalid),
            ),
            (json!([{"kind": "note"}]), Some(Reason::EvidenceInvalid)),
            (json!([{"kind": "note", "ref": "x".repeat(1024)}]), None),
            (
                json!([{"kind": "note", "ref": "x".repeat(1025)}]),
                Some(Reason::EvidenceInvalid),
            ),
            (
                json!([{"kind": "note", "ref": "x", "extra": 1}]),
                Some(Reason::InvalidBody),
            ),
            (json!([{"kind": 3, "ref": "x"}]), Some(Reason::InvalidBody)),
            (json!(["x"]), Some(Reason::InvalidBody)),
            (json!({"kind": "note"}), Some(Reason::InvalidBody)),
            (json!([]), Some(Reason::EvidenceRequired)),
            (
                Value::Array(vec![json!({"kind": "note", "ref": "x"}); 8]),
                None,
            ),
            (
                Value::Array(vec![json!({"kind": "note", "ref": "x"}); 9]),
                Some(Reason::EvidenceRequired),
            ),
        ];
        for (v, want) in table {
            assert_eq!(reason(v.clone()), want, "{v}");
        }
        assert_eq!(
            parse_evidence(None, &REFERENCE).err().map(|r| r.reason),
            Some(Reason::EvidenceRequired)
        );
    }

    #[test]
    fn claim_act_table() {
        // PV-DI-3, PV-DI-4, PV-DI-5
        use ClaimEffect::*;
        use ClaimStatus::*;
        let it = Err(Reason::InvalidTransition);
        let table: Vec<(Kind, ClaimStatus, Result<ClaimEffect, Reason>)> = vec![
            (Kind::Attest, Unverified, Ok(Moves(Supported))),
            (Kind::Attest, Supported, Ok(Recorded)),
            (Kind::Attest, Verified, Ok(Recorded)),
            (Kind::Attest, Refuted, it),
            (Kind::Attest, Superseded, it),
            (Kind::Verify, Unverified, Ok(Moves(Verified))),
            (Kind::Verify, Supported, Ok(Moves(Verified))),
            (Kind::Verify, Verified, Ok(Recorded)),
            (Kind::Verify, Refuted, it),
            (Kind::Verify, Superseded, it),
            (Kind::Refute, Unverified, Ok(Moves(Refuted))),
            (Kind::Refute, Supported, Ok(Moves(Refuted))),
            (Kind::Refute, Verified, Ok(Moves(Refuted))),
            (Kind::Refute, Refuted, Ok(Recorded)),
            (Kind::Refute, Superseded, it),
        ];
        for (k, s, want) in table {
            assert_eq!(
                claim_act(s, k).map_err(|r| r.reason),
                want,
                "{k:?} on {s:?}"
            );
        }
        assert_eq!(supersede(Refuted), None);
        assert_eq!(supersede(Verified), Some(Superseded));
    }
}
