//! Hooks of `post`, in the order of its steps: validate the envelope (400), resolve
//! (404), decide (403, 409), persist (awaiting, claim events), respond (201).

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::threads::proposed_closed_locks;
use crate::domain::parley::awaiting::{Awaiting, derive};
use crate::domain::parley::dialectic::ClaimEffect;
use crate::domain::parley::envelope::TOP_LEVEL;
use crate::domain::parley::limits::extension_ok;
use crate::domain::parley::{
    Actor, ClaimStatus, Envelope, Kind, Limits, MarkOutcome, Party, Reason, Refusal, StateView,
    ThreadState,
};
use crate::faults::{Fault, Faults};

// ---- validate -------------------------------------------------------------------------

/// Faults that rewrite the envelope before validation (and restore it after).
const REWRITING: &[Fault] = &[
    Fault::ValidUntilPastAccepted,
    Fault::UnknownFieldAccepted,
    Fault::EmptyBodyAccepted,
    Fault::ExtensionPatternNotEnforced,
    Fault::EvidenceUrlUnchecked,
];

/// What the rewriting faults hid from validation, put back into the parsed envelope.
#[derive(Default)]
struct Hidden {
    empty_body: Option<String>,
    bad_extension: Option<String>,
    bad_urls: Vec<(usize, String)>,
    past_valid_until: Option<DateTime<Utc>>,
}

/// [`crate::domain::parley::envelope::parse_envelope`] as the server applies it
/// (PV-EN-1..7, PV-DI-1). Off by one at the limits (`body-refuses-exact-limit`,
/// `body-accepts-one-over`, `evidence-max-off-by-one`), checks skipped by hiding the bad
/// member from validation (see `REWRITING`), or the wrong refusal (`parse_or_fault`).
pub(crate) fn parse_envelope(
    faults: Faults,
    args: &Value,
    limits: &Limits,
    dialectic: bool,
    now: DateTime<Utc>,
) -> Result<Envelope, Refusal> {
    let mut limits = *limits;
    if faults.is_on(Fault::BodyRefusesExactLimit) {
        limits.body_max_chars -= 1;
    }
    if faults.is_on(Fault::BodyAcceptsOneOver) {
        limits.body_max_chars += 1;
    }
    if faults.is_on(Fault::EvidenceMaxOffByOne) {
        limits.evidence_max += 1;
    }
    if !REWRITING.iter().any(|f| faults.is_on(*f)) {
        return parse_or_fault(faults, args, &limits, dialectic, now);
    }
    let mut args = args.clone();
    let hidden = match &mut args {
        Value::Object(map) => hide(faults, map, now),
        _ => Hidden::default(),
    };
    let mut env = parse_or_fault(faults, &args, &limits, dialectic, now)?;
    if let Some(b) = hidden.empty_body {
        env.body = b;
    }
    if hidden.past_valid_until.is_some() {
        env.valid_until = hidden.past_valid_until;
    }
    if hidden.bad_extension.is_some() {
        env.extension = hidden.bad_extension;
    }
    for (i, r) in hidden.bad_urls {
        if let Some(e) = env.evidence.get_mut(i) {
            e.reference = r;
        }
    }
    Ok(env)
}

/// Replaces what a rewriting fault lets through by a valid stand-in, remembering it.
fn hide(faults: Faults, map: &mut serde_json::Map<String, Value>, now: DateTime<Utc>) -> Hidden {
    let mut hidden = Hidden::default();
    if faults.is_on(Fault::ValidUntilPastAccepted)
        && let Some(Value::String(t)) = map.get_mut("valid_until")
        && let Ok(parsed) = chrono::DateTime::parse_from_rfc3339(t)
        && parsed.with_timezone(&Utc) <= now
    {
        hidden.past_valid_until = Some(parsed.with_timezone(&Utc));
        *t = "9999-12-31T23:59:59Z".into();
    }
    if faults.is_on(Fault::UnknownFieldAccepted) {
        map.retain(|k, _| TOP_LEVEL.contains(&k.as_str()));
    }
    if faults.is_on(Fault::EmptyBodyAccepted)
        && let Some(Value::String(b)) = map.get_mut("body")
        && b.is_empty()
    {
        hidden.empty_body = Some(std::mem::replace(b, ".".into()));
    }
    if faults.is_on(Fault::ExtensionPatternNotEnforced)
        && let Some(Value::Object(from)) = map.get_mut("from")
        && let Some(Value::String(ext)) = from.get("extension")
        && !extension_ok(ext)
    {
        hidden.bad_extension = Some(ext.clone());
        from.remove("extension");
    }
    if faults.is_on(Fault::EvidenceUrlUnchecked)
        && let Some(Value::Array(items)) = map.get_mut("evidence")
    {
        for (i, item) in items.iter_mut().enumerate() {
            if item.get("kind").and_then(Value::as_str) == Some("url")
                && let Some(Value::String(r)) = item.get_mut("ref")
                && !r.trim().is_empty()
            {
                hidden
                    .bad_urls
                    .push((i, std::mem::replace(r, "http://example.org/".into())));
            }
        }
    }
    hidden
}

/// The domain's parse, with the refusals the faults get wrong: `kind-unknown-as-invalid-body`,
/// `thread-required-not-enforced`, `body-counts-bytes`.
fn parse_or_fault(
    faults: Faults,
    args: &Value,
    limits: &Limits,
    dialectic: bool,
    now: DateTime<Utc>,
) -> Result<Envelope, Refusal> {
    use crate::domain::parley::envelope::parse_envelope;
    let env = match parse_envelope(args, limits, dialectic, now) {
        Ok(env) => env,
        Err(r)
            if r.reason == Reason::KindUnknown && faults.is_on(Fault::KindUnknownAsInvalidBody) =>
        {
            return Err(Refusal::new(Reason::InvalidBody, r.message));
        }
        Err(r)
            if r.reason == Reason::ThreadRequired
                && faults.is_on(Fault::ThreadRequiredNotEnforced) =>
        {
            // Validate as an opening ask, then keep the real kind: it opens a thread.
            let kind = args
                .get("kind")
                .and_then(Value::as_str)
                .and_then(|k| Kind::parse(k, dialectic));
            let mut as_ask = args.clone();
            as_ask["kind"] = Value::from("ask");
            return match (kind, parse_envelope(&as_ask, limits, dialectic, now)) {
                (Some(kind), Ok(mut env)) => {
                    env.kind = kind;
                    Ok(env)
                }
                _ => Err(r),
            };
        }
        Err(r) => return Err(r),
    };
    if faults.is_on(Fault::BodyCountsBytes) && env.body.len() > limits.body_max_chars {
        return Err(Refusal::new(
            Reason::BodyTooLong,
            format!(
                "body has {} bytes, the limit is {}",
                env.body.len(),
                limits.body_max_chars
            ),
        ));
    }
    Ok(env)
}

/// The author of the post: the token row's identity (PV-EN-4, PV-ID-1).
/// `client-identity-honoured` takes a client-sent `from.identity` instead.
pub(crate) fn author(faults: Faults, args: &Value, author: &mut Party) {
    if faults.is_on(Fault::ClientIdentityHonoured)
        && let Some(identity) = args.pointer("/from/identity").and_then(Value::as_str)
    {
        author.identity = identity.to_string();
    }
}

// ---- resolve --------------------------------------------------------------------------

/// Whether a parent outside `thread` is accepted (never, PV-EN-5):
/// `parent-outside-thread-accepted`.
pub(crate) fn accepts_parent_outside_thread(faults: Faults) -> bool {
    faults.is_on(Fault::ParentOutsideThreadAccepted)
}

// ---- decide ---------------------------------------------------------------------------

/// Thread authority PV-AU-2 / PV-AU-5 deny but a fault grants: `any-writer-decides`, or
/// `extension-grants-authority` for extension `moderator`.
pub(crate) fn authority_granted(faults: Faults, env: &Envelope) -> bool {
    faults.is_on(Fault::AnyWriterDecides)
        || (faults.is_on(Fault::ExtensionGrantsAuthority)
            && env.extension.as_deref() == Some("moderator"))
}

/// Superseding another identity's claim without lock or human (PV-DI-6):
/// `supersede-any-claim`.
pub(crate) fn supersede_granted(faults: Faults) -> bool {
    faults.is_on(Fault::SupersedeAnyClaim)
}

/// An attest/verify of one's own claim that a fault lets through (PV-DI-3):
/// `author-attests-own-claim`, `self-attest-by-extension`.
pub(crate) fn self_attest_allowed(
    faults: Faults,
    kind: Kind,
    claim_author: &Party,
    author: &Party,
) -> bool {
    (faults.is_on(Fault::AuthorAttestsOwnClaim) && kind == Kind::Attest)
        || (faults.is_on(Fault::SelfAttestByExtension) && claim_author != author)
}

/// Whether the thread refuses the post with 409 `thread_locked`, from the domain's
/// `locked` (PV-ST-4). `confirmed-closed-open-to-humans` exempts humans;
/// `proposed-closed-locks` (see `threads`) locks a proposed close too.
pub(crate) fn locked(faults: Faults, actor: &Actor, state: ThreadState, locked: bool) -> bool {
    (locked && !(faults.is_on(Fault::ConfirmedClosedOpenToHumans) && actor.is_human()))
        || proposed_closed_locks(faults, state)
}

/// The state outcome of a marking kind, from the domain's `correct` one (PV-ST-1..3).
/// `lateral-accepts-answer` moves a lateral thread to answered; under
/// `confirmed-closed-open-to-humans` a human's mark on the locked thread changes nothing.
pub(crate) fn mark_outcome(
    faults: Faults,
    view: StateView,
    kind: Kind,
    confirms: bool,
    correct: impl FnOnce() -> Result<MarkOutcome, Refusal>,
) -> Result<MarkOutcome, Refusal> {
    if faults.is_on(Fault::LateralAcceptsAnswer) && view.state.is_lateral() && kind == Kind::Answer
    {
        Ok(MarkOutcome::Change {
            to: ThreadState::Answered,
            confirmed: confirms,
        })
    } else if faults.is_on(Fault::ConfirmedClosedOpenToHumans) && view.is_locked() {
        // The faulty lock let a human through: its non-marking posts pass, a mark on the
        // closed thread changes nothing.
        Ok(MarkOutcome::Unchanged)
    } else {
        correct()
    }
}

/// The effect of a claim act, from the domain's `correct` one (PV-DI-3..5).
/// `refuted-claim-verifiable` verifies a refuted claim; `repeat-verify-writes-event` moves
/// a verified claim to verified again (a second status event), `repeat-refute-writes-event`
/// a refuted one to refuted again; `refute-of-verified-refused`
/// refuses to refute a verified one.
pub(crate) fn claim_effect(
    faults: Faults,
    status: ClaimStatus,
    kind: Kind,
    correct: Result<ClaimEffect, Refusal>,
) -> Result<ClaimEffect, Refusal> {
    if faults.is_on(Fault::RefutedClaimVerifiable)
        && kind == Kind::Verify
        && status == ClaimStatus::Refuted
    {
        return Ok(ClaimEffect::Moves(ClaimStatus::Verified));
    }
    if faults.is_on(Fault::RepeatVerifyWritesEvent)
        && kind == Kind::Verify
        && status == ClaimStatus::Verified
    {
        return Ok(ClaimEffect::Moves(ClaimStatus::Verified));
    }
    if faults.is_on(Fault::RepeatRefuteWritesEvent)
        && kind == Kind::Refute
        && status == ClaimStatus::Refuted
    {
        return Ok(ClaimEffect::Moves(ClaimStatus::Refuted));
    }
    if faults.is_on(Fault::RefuteOfVerifiedRefused)
        && kind == Kind::Refute
        && status == ClaimStatus::Verified
    {
        return Err(Refusal::new(
            Reason::InvalidTransition,
            "claim is verified; refute does not apply",
        ));
    }
    correct
}

/// The self-reply rule (PV-ID-2): a reply to one's own (identity, extension), decide and
/// close exempt. `self-reply-by-identity` compares identities only,
/// `self-reply-blocks-decide` drops the exemption, `self-reply-ignores-implicit-parent`
/// checks an explicit parent only.
pub(crate) fn is_self_reply(
    faults: Faults,
    env: &Envelope,
    parent_author: &Party,
    author: &Party,
) -> bool {
    let same_author = if faults.is_on(Fault::SelfReplyByIdentity) {
        parent_author.identity == author.identity
    } else {
        parent_author == author
    };
    (!env.kind.self_reply_exempt() || faults.is_on(Fault::SelfReplyBlocksDecide))
        && same_author
        && !(faults.is_on(Fault::SelfReplyIgnoresImplicitParent) && env.parent.is_none())
}

// ---- persist --------------------------------------------------------------------------

/// Whom the thread awaits after this post (PV-KD-2). `refute-awaits-parent` ignores the
/// refuted claim's author; `object-not-awaiting` makes an object await nobody.
pub(crate) fn awaiting(
    faults: Faults,
    kind: Kind,
    author: &Party,
    parent_author: Option<&Party>,
    claim_author: Option<&Party>,
) -> Awaiting {
    let claim_author = claim_author.filter(|_| !faults.is_on(Fault::RefuteAwaitsParent));
    if faults.is_on(Fault::ObjectNotAwaiting) && kind == Kind::Object {
        return Awaiting::Nobody;
    }
    derive(kind, author, parent_author, claim_author)
}

/// Whether a claim status change is recorded as an event (PV-DI-7: always; `from: None` is
/// the creation). `claim-change-without-event` records only creations.
pub(crate) fn records_claim_event(faults: Faults, from: Option<ClaimStatus>) -> bool {
    !(from.is_some() && faults.is_on(Fault::ClaimChangeWithoutEvent))
}

// ---- respond --------------------------------------------------------------------------

/// The status of a successful post: 201 (PV-RS-1). `post-returns-200` answers 200.
pub(crate) fn created_status(faults: Faults) -> u16 {
    if faults.is_on(Fault::PostReturns200) {
        200
    } else {
        201
    }
}
