//! The dialectic profile's vocabulary as the model holds it (PV-DI, `parley-v1.md` §9):
//! a claim and its status, the acts on it, evidence, `valid_until`, who superseded it, and
//! what each act does to a status — including where the notes leave the outcome open.

use super::party::Party;

/// A claim's status (PV-DI, §9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClaimSt {
    /// Fresh.
    Unverified,
    /// Attested at least once.
    Supported,
    /// Sealed by a verifier or a human.
    Verified,
    /// Refuted with proof; nothing leaves it (PV-DI-5).
    Refuted,
    /// Replaced by a newer claim (PV-DI-6).
    Superseded,
}

impl ClaimSt {
    /// Wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unverified => "unverified",
            Self::Supported => "supported",
            Self::Verified => "verified",
            Self::Refuted => "refuted",
            Self::Superseded => "superseded",
        }
    }
}

/// A claim act posted as a reply to the claim's message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Act {
    /// `attest` (PV-DI-3).
    Attest,
    /// `verify` (PV-DI-4).
    Verify,
    /// `refute` (PV-DI-5).
    Refute,
}

/// The evidence a dialectic post carries (PV-DI-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Evidence {
    /// One valid item.
    Valid,
    /// None at all: `evidence_required`.
    Missing,
    /// One item with a relative URL: `evidence_invalid`.
    Invalid,
}

/// The `valid_until` an assert carries (PV-DI-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Until {
    /// No `valid_until`.
    Never,
    /// A couple of seconds ahead of the target's clock: it expires during the sequence.
    Soon,
    /// A day in the past: refused `invalid_body`.
    Past,
}

/// Which claim superseded this one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SupersededBy {
    /// Nobody.
    Nobody,
    /// This claim (index).
    Claim(usize),
    /// Superseded more than once: the notes do not say whether `superseded_by` names the
    /// first or the latest claim, so it is not compared.
    Either,
    /// A refuted claim another claim lists in `supersedes`: PV-DI-6 fixes only that its
    /// status stays `refuted`, so `superseded_by` may stay `null` or name that claim
    /// (issue 28: both readings pass).
    NullOr(usize),
}

impl SupersededBy {
    /// What `superseded_by` must equal given what the target answered (`None`: any value,
    /// not compared); `id` renders a claim index as the target's claim id.
    pub fn expected(
        self,
        observed: &serde_json::Value,
        id: impl Fn(usize) -> String,
    ) -> Option<serde_json::Value> {
        match self {
            Self::Either => None,
            Self::Nobody => Some(serde_json::Value::Null),
            Self::Claim(x) => Some(serde_json::Value::String(id(x))),
            Self::NullOr(_) if observed.is_null() => None,
            Self::NullOr(x) => Some(serde_json::Value::String(id(x))),
        }
    }
}

/// One claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// Thread index.
    pub thread: usize,
    /// Index of the assert message in its thread.
    pub message: usize,
    /// Author party.
    pub author: Party,
    /// Status.
    pub status: ClaimSt,
    /// Attestations counted (verify adds none, PV-RS-3).
    pub support: u32,
    /// Refutations recorded.
    pub refutations: u32,
    /// Claims this one supersedes.
    pub supersedes: Vec<usize>,
    /// Who superseded it.
    pub superseded_by: SupersededBy,
    /// Its `valid_until`.
    pub until: Until,
    /// The statuses reached since creation, in order (each change one event, PV-DI-7).
    pub changes: Vec<ClaimSt>,
}

/// What a claim act does to the claim's status: `Ok(new status)`, `Err(())` for
/// `invalid_transition`, or both readings where the notes are silent (`None`).
pub enum Step {
    /// Accepted, to this status.
    To(ClaimSt),
    /// Refused `invalid_transition`.
    Invalid,
    /// Accepted with this status, or refused `invalid_transition`.
    Either(ClaimSt),
}

/// What `act` does to a claim in status `from` (PV-DI-3…6).
pub fn claim_step(act: Act, from: ClaimSt) -> Step {
    use ClaimSt::*;
    match (act, from) {
        (Act::Attest | Act::Verify, Refuted | Superseded) => Step::Invalid,
        (Act::Attest, Unverified) => Step::To(Supported),
        // "further attests add support": a supported or verified claim keeps its status.
        (Act::Attest, s) => Step::To(s),
        (Act::Verify, Verified) => Step::Either(Verified),
        (Act::Verify, _) => Step::To(Verified),
        // "Nothing leaves refuted": a further refutation may be recorded (like further
        // attests) or refused; the notes say neither.
        (Act::Refute, Refuted) => Step::Either(Refuted),
        // PV-DI-5 names unverified, supported and verified; superseded is not named.
        (Act::Refute, Superseded) => Step::Either(Refuted),
        (Act::Refute, _) => Step::To(Refuted),
    }
}

/// Whether the notes fix the outcome of `act` on a claim in status `from`. Generated
/// sequences leave the open cases out (World::valid): what follows them would depend on the
/// target's reading, so neither the model nor a promoted vector could judge it.
pub fn settled(act: Act, from: ClaimSt) -> bool {
    !matches!(claim_step(act, from), Step::Either(_))
}
