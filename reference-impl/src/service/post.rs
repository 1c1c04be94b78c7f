//! `post` (§3–§7, §9): validate the envelope (400), resolve thread/parent/claims (404),
//! authority and self-attest (403), lock/transition/self-reply (409), then persist the
//! message, its state change and claim effects in one transaction.

use rusqlite::Connection;
use serde_json::Value;

use super::{Fail, Inner, Now, refused, render};
use crate::domain::parley::awaiting::{Awaiting, derive};
use crate::domain::parley::dialectic::{ClaimEffect, claim_act, supersede};
use crate::domain::parley::envelope::parse_envelope;
use crate::domain::parley::limits::extension_ok;
use crate::domain::parley::state::decide_mark;
use crate::domain::parley::{
    Actor, ClaimStatus, Envelope, Kind, Limits, MarkOutcome, Party, Reason, Refusal, StateView,
    ThreadState,
};
use crate::faults::{Fault, Faults};
use crate::store::parley::{
    self as store, ClaimRow, MessageRow, NewClaim, NewEvent, NewMessage, NewThread, ThreadRow,
};

/// Everything the post's checks looked up, before anything is written.
struct Resolved {
    /// Existing thread (None: this post opens one).
    thread: Option<ThreadRow>,
    /// Explicit or implicit (root) parent.
    parent: Option<MessageRow>,
    /// Claim acted on (attest/refute/verify).
    claim: Option<ClaimRow>,
    /// Claims listed in `supersedes`.
    superseded: Vec<ClaimRow>,
}

/// PV-EN-5, PV-EN-6: find thread and parent (404s; `parent` outside `thread` is a 400).
fn resolve(
    conn: &Connection,
    env: &Envelope,
    max_depth: i64,
    faults: Faults,
) -> Result<Resolved, Fail> {
    let thread = match env.thread {
        Some(id) => match store::get_thread(conn, id)? {
            Some(t) => Some(t),
            None => {
                return refused(
                    Reason::ThreadNotFound,
                    format!("thread th_{id} does not exist"),
                );
            }
        },
        None => None,
    };
    let explicit_parent = match env.parent {
        Some(id) => match store::get_message(conn, id)? {
            Some(m) => Some(m),
            None => {
                return refused(
                    Reason::MessageNotFound,
                    format!("message msg_{id} does not exist"),
                );
            }
        },
        None => None,
    };
    let (thread, parent) = match (thread, explicit_parent) {
        (Some(t), Some(p)) => {
            if p.thread_id != t.id && !faults.is_on(Fault::ParentOutsideThreadAccepted) {
                return refused(
                    Reason::InvalidBody,
                    format!("parent msg_{} is not in thread th_{}", p.id, t.id),
                );
            }
            (Some(t), Some(p))
        }
        (None, Some(p)) => match store::get_thread(conn, p.thread_id)? {
            Some(t) => (Some(t), Some(p)),
            None => {
                return Err(Fail::Store(crate::store::StoreError::Corrupt(
                    "message without thread".into(),
                )));
            }
        },
        (Some(t), None) => {
            // `thread` without `parent`: the parent is the root message.
            let root = store::get_message(conn, t.root_message)?
                .ok_or_else(|| crate::store::StoreError::Corrupt("thread without root".into()))?;
            (Some(t), Some(root))
        }
        (None, None) => (None, None),
    };
    let claim = match env.claim {
        Some(id) => match store::get_claim(conn, id)? {
            Some(c) => Some(c),
            None => {
                return refused(
                    Reason::ClaimNotFound,
                    format!("claim cl_{id} does not exist"),
                );
            }
        },
        None => None,
    };
    let mut superseded = Vec::with_capacity(env.supersedes.len());
    for id in &env.supersedes {
        match store::get_claim(conn, *id)? {
            Some(c) => superseded.push(c),
            None => {
                return refused(
                    Reason::ClaimNotFound,
                    format!("claim cl_{id} does not exist"),
                );
            }
        }
    }
    // Reference limit `reply_depth_max` (declared in the manifest; see `Limits`).
    if let Some(p) = &parent
        && p.depth >= max_depth
    {
        return refused(
            Reason::InvalidBody,
            format!("replies may nest at most {max_depth} levels (limits.reply_depth_max)"),
        );
    }
    Ok(Resolved {
        thread,
        parent,
        claim,
        superseded,
    })
}

/// The 403 and 409 steps (PV-AU-2, PV-DI-3/4/6; PV-ST-4, PV-ST-1..3, PV-DI-3..5, PV-ID-2).
/// Returns the state outcome and the claim effect to apply.
fn decide(
    actor: &Actor,
    author: &Party,
    env: &Envelope,
    r: &Resolved,
    faults: Faults,
) -> Result<(MarkOutcome, Option<ClaimEffect>), Fail> {
    // Seeded faults (issue 6) only: authority granted where PV-AU-2 / PV-AU-5 deny it.
    let granted_by_fault = faults.is_on(Fault::AnyWriterDecides)
        || (faults.is_on(Fault::ExtensionGrantsAuthority)
            && env.extension.as_deref() == Some("moderator"));
    // 403 thread_authority_missing (decide/close, PV-AU-2).
    if env.kind.needs_authority()
        && let Some(t) = &r.thread
        && !actor.has_thread_authority(&t.creator.identity)
        && !granted_by_fault
    {
        return refused(
            Reason::ThreadAuthorityMissing,
            format!(
                "{} needs the thread's creator, a lock holder or a human",
                env.kind.as_str()
            ),
        );
    }
    // 403 thread_authority_missing for supersedes (PV-DI-6).
    if let Some(c) = r.superseded.iter().find(|c| {
        !actor.may_supersede(&c.author.identity) && !faults.is_on(Fault::SupersedeAnyClaim)
    }) {
        return refused(
            Reason::ThreadAuthorityMissing,
            format!(
                "cl_{} belongs to another identity; only lock holders or humans supersede it",
                c.id
            ),
        );
    }
    // 403 self_attest (PV-DI-3, PV-DI-4).
    if matches!(env.kind, Kind::Attest | Kind::Verify)
        && let Some(c) = &r.claim
        && c.author.identity == actor.identity
        && !(faults.is_on(Fault::AuthorAttestsOwnClaim) && env.kind == Kind::Attest)
        && !(faults.is_on(Fault::SelfAttestByExtension) && &c.author != author)
    {
        return refused(Reason::SelfAttest, format!("cl_{} is your own claim", c.id));
    }
    // 409 thread_locked (PV-ST-4), then transitions.
    let mut outcome = MarkOutcome::Unchanged;
    if let Some(t) = &r.thread {
        let view = StateView {
            state: t.state,
            confirmed: t.state_confirmed_at.is_some(),
        };
        let locked = (view.is_locked()
            && !(faults.is_on(Fault::ConfirmedClosedOpenToHumans) && actor.is_human()))
            || (faults.is_on(Fault::ProposedClosedLocks) && t.state == ThreadState::Closed);
        if locked {
            return refused(
                Reason::ThreadLocked,
                "thread is closed and confirmed; reopen it first",
            );
        }
        let confirms = confirms_states(actor, Some(t), faults);
        if let Some(target) = env.kind.marks() {
            outcome = if faults.is_on(Fault::LateralAcceptsAnswer)
                && t.state.is_lateral()
                && env.kind == Kind::Answer
            {
                MarkOutcome::Change {
                    to: ThreadState::Answered,
                    confirmed: confirms,
                }
            } else if faults.is_on(Fault::ConfirmedClosedOpenToHumans) && view.is_locked() {
                // The faulty lock let a human through: its non-marking posts pass, a mark
                // on the closed thread changes nothing.
                MarkOutcome::Unchanged
            } else {
                decide_mark(view, target, confirms)?
            };
        }
    }
    let effect = match &r.claim {
        Some(c) => Some(claim_effect(c.status, env.kind, faults)?),
        None => None,
    };
    // 409 self_reply (PV-ID-2): decide/close exempt.
    let same_author = |p: &Party| {
        if faults.is_on(Fault::SelfReplyByIdentity) {
            p.identity == author.identity
        } else {
            p == author
        }
    };
    if (!env.kind.self_reply_exempt() || faults.is_on(Fault::SelfReplyBlocksDecide))
        && let Some(p) = &r.parent
        && same_author(&p.author)
        && !(faults.is_on(Fault::SelfReplyIgnoresImplicitParent) && env.parent.is_none())
    {
        return refused(
            Reason::SelfReply,
            format!("msg_{} was written by the same (identity, extension)", p.id),
        );
    }
    Ok((outcome, effect))
}

/// Writes a thread state change or confirmation and its event (PV-ST-5, PV-ST-7).
pub(crate) fn apply_outcome(
    conn: &Connection,
    thread: &ThreadRow,
    outcome: MarkOutcome,
    actor: &Actor,
    party: &Party,
    now: &Now,
    faults: Faults,
) -> Result<Option<store::EventRow>, Fail> {
    let (to, confirmed) = match outcome {
        MarkOutcome::Unchanged => return Ok(None),
        MarkOutcome::Confirm => (thread.state, true),
        MarkOutcome::Change { to, confirmed } => (to, confirmed),
    };
    let confirmed_at = confirmed.then_some(now.text.as_str());
    let label = state_label(actor, faults);
    store::set_thread_state(
        conn,
        thread.id,
        to,
        actor.origin(),
        confirmed_at,
        &label,
        &now.text,
    )?;
    if faults.is_on(Fault::ConfirmationWithoutEvent) && outcome == MarkOutcome::Confirm {
        return Ok(None);
    }
    let event = store::insert_event(
        conn,
        &NewEvent {
            subject: "thread",
            thread_id: thread.id,
            claim_id: None,
            from_state: Some(thread.state.as_str()),
            to_state: to.as_str(),
            origin: actor.origin(),
            label: &label,
            actor: party,
            at: &now.text,
            confirmed_at,
        },
    )?;
    Ok(Some(event))
}

/// A claim status change is an event too (PV-DI-7), with subject `claim`.
#[allow(clippy::too_many_arguments)] // one event's worth of facts, plus the seeded faults
fn claim_event(
    conn: &Connection,
    claim: &ClaimRow,
    from: Option<ClaimStatus>,
    to: ClaimStatus,
    actor: &Actor,
    party: &Party,
    now: &Now,
    faults: Faults,
) -> Result<(), Fail> {
    if from.is_some() && faults.is_on(Fault::ClaimChangeWithoutEvent) {
        return Ok(());
    }
    store::insert_event(
        conn,
        &NewEvent {
            subject: "claim",
            thread_id: claim.thread_id,
            claim_id: Some(claim.id),
            from_state: from.map(ClaimStatus::as_str),
            to_state: to.as_str(),
            origin: actor.origin(),
            label: &state_label(actor, faults),
            actor: party,
            at: &now.text,
            // Claim changes are facts, not proposals.
            confirmed_at: Some(&now.text),
        },
    )?;
    Ok(())
}

/// The `post` operation: 201 `{message, thread}` (+ `claim` for dialectic acts).
pub(crate) fn post(inner: &Inner, actor: &Actor, args: &Value, now: &Now) -> Result<Value, Fail> {
    let faults = inner.faults;
    let env = parse(args, &inner.limits, inner.dialectic, now, faults)?;
    let mut author = Party::new(actor.identity.clone(), env.extension.clone());
    if faults.is_on(Fault::ClientIdentityHonoured)
        && let Some(identity) = args.pointer("/from/identity").and_then(Value::as_str)
    {
        author.identity = identity.to_string();
    }
    inner.db.write(|tx| {
        let resolved = resolve(tx, &env, inner.limits.reply_depth_max as i64, faults)?;
        let (outcome, effect) = decide(actor, &author, &env, &resolved, faults)?;

        // The thread: existing, or opened by this post (PV-EN-6) as a proposed or
        // confirmed `open` (PV-ST-5) with its creation event (PV-ST-7).
        let thread_id = match &resolved.thread {
            Some(t) => t.id,
            None => {
                let confirmed_at =
                    confirms_states(actor, None, faults).then_some(now.text.as_str());
                let label = state_label(actor, faults);
                let id = store::insert_thread(
                    tx,
                    &NewThread {
                        state: ThreadState::Open,
                        origin: actor.origin(),
                        confirmed_at,
                        label: &label,
                        creator: &author,
                        at: &now.text,
                    },
                )?;
                store::insert_event(
                    tx,
                    &NewEvent {
                        subject: "thread",
                        thread_id: id,
                        claim_id: None,
                        from_state: None,
                        to_state: ThreadState::Open.as_str(),
                        origin: actor.origin(),
                        label: &label,
                        actor: &author,
                        at: &now.text,
                        confirmed_at,
                    },
                )?;
                id
            }
        };
        let message_id = store::insert_message(
            tx,
            &NewMessage {
                thread_id,
                parent_id: resolved.parent.as_ref().map(|p| p.id),
                kind: env.kind.as_str(),
                author: &author,
                author_kind: actor.author_kind(),
                body: &env.body,
                provenance: env.provenance.as_ref(),
                evidence: env.kind.is_dialectic().then_some(env.evidence.as_slice()),
                claim_id: env.claim,
                at: &now.text,
                depth: resolved.parent.as_ref().map_or(0, |p| p.depth + 1),
            },
        )?;
        // PV-KD-2: awaiting from this (now last) message.
        let refuted_author = resolved
            .claim
            .as_ref()
            .map(|c| &c.author)
            .filter(|_| !faults.is_on(Fault::RefuteAwaitsParent));
        let mut awaiting = derive(
            env.kind,
            &author,
            resolved.parent.as_ref().map(|p| &p.author),
            refuted_author,
        );
        if faults.is_on(Fault::ObjectNotAwaiting) && env.kind == Kind::Object {
            awaiting = Awaiting::Nobody;
        }
        store::record_post(tx, thread_id, message_id, &awaiting, &now.text)?;
        if let Some(t) = &resolved.thread {
            apply_outcome(tx, t, outcome, actor, &author, now, faults)?;
        }

        // Dialectic effects (PV-DI-2..6).
        let mut claim_id = None;
        if env.kind == Kind::Assert {
            let valid_until = env
                .valid_until
                .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true));
            let id = store::insert_claim(
                tx,
                &NewClaim {
                    thread_id,
                    message_id,
                    author: &author,
                    evidence: &env.evidence,
                    supersedes: &env.supersedes,
                    valid_until: valid_until.as_deref(),
                    at: &now.text,
                },
            )?;
            store::set_message_claim(tx, message_id, id)?;
            let created = store::get_claim(tx, id)?
                .ok_or_else(|| crate::store::StoreError::Corrupt("claim vanished".into()))?;
            claim_event(
                tx,
                &created,
                None,
                ClaimStatus::Unverified,
                actor,
                &author,
                now,
                faults,
            )?;
            for old in &resolved.superseded {
                if let Some(to) = supersede(old.status) {
                    store::set_claim_status(tx, old.id, to, Some(id))?;
                    claim_event(tx, old, Some(old.status), to, actor, &author, now, faults)?;
                }
            }
            claim_id = Some(id);
        }
        if let (Some(c), Some(effect)) = (&resolved.claim, effect) {
            store::insert_claim_act(
                tx,
                c.id,
                message_id,
                env.kind.as_str(),
                &author,
                &env.evidence,
                &now.text,
            )?;
            if let ClaimEffect::Moves(to) = effect {
                store::set_claim_status(tx, c.id, to, None)?;
                claim_event(tx, c, Some(c.status), to, actor, &author, now, faults)?;
            }
            claim_id = Some(c.id);
        }

        let message = store::get_message(tx, message_id)?
            .ok_or_else(|| crate::store::StoreError::Corrupt("message vanished".into()))?;
        let thread = store::get_thread(tx, thread_id)?
            .ok_or_else(|| crate::store::StoreError::Corrupt("thread vanished".into()))?;
        let mut body = serde_json::Map::new();
        let mut rendered = render::message(&message);
        if faults.is_on(Fault::MessageParentOmittedAtRoot)
            && let Value::Object(m) = &mut rendered
            && m.get("parent") == Some(&Value::Null)
        {
            m.remove("parent");
        }
        body.insert("message".into(), rendered);
        body.insert("thread".into(), render::thread(&thread));
        if let Some(id) = claim_id {
            let claim = store::get_claim(tx, id)?
                .ok_or_else(|| crate::store::StoreError::Corrupt("claim vanished".into()))?;
            let acts = store::claim_acts(tx, id)?;
            body.insert("claim".into(), render_claim(&claim, &acts, now, faults));
        }
        Ok(Value::Object(body))
    })
}

// ---------------------------------------------------------------------------------------
// Seeded faults (issue 6). With the cargo feature `faults` off every `is_on` below is a
// constant `false`, so these helpers reduce to the correct behaviour.

/// Faults that rewrite the envelope before validation (and restore it after).
const REWRITING: &[Fault] = &[
    Fault::ValidUntilPastAccepted,
    Fault::UnknownFieldAccepted,
    Fault::BlankBodyAccepted,
    Fault::ExtensionPatternNotEnforced,
    Fault::EvidenceUrlUnchecked,
];

/// [`parse_envelope`] as the (possibly faulty) server applies it (PV-EN-1..7, PV-DI-1).
fn parse(
    args: &Value,
    limits: &Limits,
    dialectic: bool,
    now: &Now,
    faults: Faults,
) -> Result<Envelope, Fail> {
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
        return parse_or_fault(args, &limits, dialectic, now, faults);
    }
    let mut args = args.clone();
    let mut blank_body = None;
    let mut bad_extension = None;
    let mut bad_urls = Vec::new();
    let mut past_valid_until = None;
    if let Value::Object(map) = &mut args {
        if faults.is_on(Fault::ValidUntilPastAccepted)
            && let Some(Value::String(t)) = map.get_mut("valid_until")
            && let Ok(parsed) = chrono::DateTime::parse_from_rfc3339(t)
            && parsed.with_timezone(&chrono::Utc) <= now.time
        {
            past_valid_until = Some(parsed.with_timezone(&chrono::Utc));
            *t = "9999-12-31T23:59:59Z".into();
        }
        if faults.is_on(Fault::UnknownFieldAccepted) {
            map.retain(|k, _| crate::domain::parley::envelope::TOP_LEVEL.contains(&k.as_str()));
        }
        if faults.is_on(Fault::BlankBodyAccepted)
            && let Some(Value::String(b)) = map.get_mut("body")
            && !b.is_empty()
            && b.trim().is_empty()
        {
            blank_body = Some(std::mem::replace(b, ".".into()));
        }
        if faults.is_on(Fault::ExtensionPatternNotEnforced)
            && let Some(Value::Object(from)) = map.get_mut("from")
            && let Some(Value::String(ext)) = from.get("extension")
            && !extension_ok(ext)
        {
            bad_extension = Some(ext.clone());
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
                    bad_urls.push((i, std::mem::replace(r, "http://example.org/".into())));
                }
            }
        }
    }
    let mut env = parse_or_fault(&args, &limits, dialectic, now, faults)?;
    if let Some(b) = blank_body {
        env.body = b;
    }
    if past_valid_until.is_some() {
        env.valid_until = past_valid_until;
    }
    if bad_extension.is_some() {
        env.extension = bad_extension;
    }
    for (i, r) in bad_urls {
        if let Some(e) = env.evidence.get_mut(i) {
            e.reference = r;
        }
    }
    Ok(env)
}

fn parse_or_fault(
    args: &Value,
    limits: &Limits,
    dialectic: bool,
    now: &Now,
    faults: Faults,
) -> Result<Envelope, Fail> {
    let env = match parse_envelope(args, limits, dialectic, now.time) {
        Ok(env) => env,
        Err(r)
            if r.reason == Reason::KindUnknown && faults.is_on(Fault::KindUnknownAsInvalidBody) =>
        {
            return Err(Refusal::new(Reason::InvalidBody, r.message).into());
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
            return match (kind, parse_envelope(&as_ask, limits, dialectic, now.time)) {
                (Some(kind), Ok(mut env)) => {
                    env.kind = kind;
                    Ok(env)
                }
                _ => Err(r.into()),
            };
        }
        Err(r) => return Err(r.into()),
    };
    if faults.is_on(Fault::BodyCountsBytes) && env.body.len() > limits.body_max_chars {
        return refused(
            Reason::BodyTooLong,
            format!(
                "body has {} bytes, the limit is {}",
                env.body.len(),
                limits.body_max_chars
            ),
        );
    }
    Ok(env)
}

/// Whether the actor's state changes are confirmed (PV-ST-5), as the faulty server sees it.
pub(crate) fn confirms_states(actor: &Actor, thread: Option<&ThreadRow>, faults: Faults) -> bool {
    if faults.is_on(Fault::HumanMarkIsProposal) && actor.is_human() {
        return false;
    }
    match thread {
        Some(t) => {
            actor.confirms_states()
                || (faults.is_on(Fault::CreatorMarkConfirmed)
                    && t.creator.identity == actor.identity)
        }
        None => actor.confirms_states() || faults.is_on(Fault::ModelThreadStartsConfirmed),
    }
}

/// The state/event label (PV-ST-7), as the faulty server writes it.
pub(crate) fn state_label(actor: &Actor, faults: Faults) -> String {
    if faults.is_on(Fault::LockLabelIsIdentity) && !actor.is_human() {
        actor.identity.clone()
    } else {
        actor.label()
    }
}

/// The effect of a claim act (PV-DI-3..5), as the faulty server decides it.
fn claim_effect(status: ClaimStatus, kind: Kind, faults: Faults) -> Result<ClaimEffect, Refusal> {
    if faults.is_on(Fault::RefutedClaimVerifiable)
        && kind == Kind::Verify
        && status == ClaimStatus::Refuted
    {
        return Ok(ClaimEffect::Moves(ClaimStatus::Verified));
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
    claim_act(status, kind)
}

/// The Claim body (PV-DI-7), as the faulty server renders it.
pub(crate) fn render_claim(
    claim: &ClaimRow,
    acts: &[store::ClaimActRow],
    now: &Now,
    faults: Faults,
) -> Value {
    let mut v = render::claim(claim, acts, now.time);
    if faults.is_on(Fault::VerifyAddsSupport) {
        let support = acts
            .iter()
            .filter(|a| a.act == "attest" || a.act == "verify")
            .count();
        v["support"] = Value::from(support);
    }
    v
}
