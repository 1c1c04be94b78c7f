//! `post` (§3–§7, §9): validate the envelope (400), resolve thread/parent/claims (404),
//! authority and self-attest (403), lock/transition/self-reply (409), then persist the
//! message, its state change and claim effects in one transaction.

use rusqlite::Connection;
use serde_json::Value;

use super::context::{Fail, Inner, Now, refused};
use super::render;
use crate::domain::parley::dialectic::{ClaimEffect, claim_act, supersede};
use crate::domain::parley::operation::Body;
use crate::domain::parley::state::decide_mark;
use crate::domain::parley::{
    Actor, ClaimStatus, Envelope, Kind, MarkOutcome, Party, Reason, StateView, ThreadState,
};
use crate::faults::Faults;
use crate::faults::hooks::{self, threads::confirms_states, threads::state_label};
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

/// A looked-up row, or the 404 `reason` with `message`.
fn found<T>(row: Option<T>, reason: Reason, message: impl FnOnce() -> String) -> Result<T, Fail> {
    match row {
        Some(row) => Ok(row),
        None => refused(reason, message()),
    }
}

/// PV-EN-5, PV-EN-6: the thread and parent the post lands in; a `thread` alone replies to
/// its root, a `parent` alone implies its thread.
fn thread_and_parent(
    conn: &Connection,
    env: &Envelope,
    faults: Faults,
) -> Result<(Option<ThreadRow>, Option<MessageRow>), Fail> {
    let thread = match env.thread {
        Some(id) => Some(found(
            store::get_thread(conn, id)?,
            Reason::ThreadNotFound,
            || format!("thread th_{id} does not exist"),
        )?),
        None => None,
    };
    let explicit_parent = match env.parent {
        Some(id) => Some(found(
            store::get_message(conn, id)?,
            Reason::MessageNotFound,
            || format!("message msg_{id} does not exist"),
        )?),
        None => None,
    };
    Ok(match (thread, explicit_parent) {
        (Some(t), Some(p)) => {
            if p.thread_id != t.id && !hooks::post::accepts_parent_outside_thread(faults) {
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
    })
}

/// PV-EN-5, PV-EN-6: find thread and parent (404s; `parent` outside `thread` is a 400).
fn resolve(
    conn: &Connection,
    env: &Envelope,
    max_depth: i64,
    faults: Faults,
) -> Result<Resolved, Fail> {
    let (thread, parent) = thread_and_parent(conn, env, faults)?;
    let claim_404 = |id: i64| move || format!("claim cl_{id} does not exist");
    let claim = match env.claim {
        Some(id) => Some(found(
            store::get_claim(conn, id)?,
            Reason::ClaimNotFound,
            claim_404(id),
        )?),
        None => None,
    };
    let superseded = env
        .supersedes
        .iter()
        .map(|id| {
            found(
                store::get_claim(conn, *id)?,
                Reason::ClaimNotFound,
                claim_404(*id),
            )
        })
        .collect::<Result<Vec<_>, Fail>>()?;
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

/// The 403 step: thread authority (PV-AU-2), supersede authority (PV-DI-6), self-attest
/// (PV-DI-3, PV-DI-4).
fn authorize(
    actor: &Actor,
    author: &Party,
    env: &Envelope,
    r: &Resolved,
    faults: Faults,
) -> Result<(), Fail> {
    // 403 thread_authority_missing (decide/close, PV-AU-2).
    if env.kind.needs_authority()
        && let Some(t) = &r.thread
        && !actor.has_thread_authority(&t.creator.identity)
        && !hooks::post::authority_granted(faults, env)
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
        !actor.may_supersede(&c.author.identity) && !hooks::post::supersede_granted(faults)
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
        && !hooks::post::self_attest_allowed(faults, env.kind, &c.author, author)
    {
        return refused(Reason::SelfAttest, format!("cl_{} is your own claim", c.id));
    }
    Ok(())
}

/// The 403 then 409 steps (PV-ST-4, PV-ST-1..3, PV-DI-3..5, PV-ID-2). Returns the state
/// outcome and the claim effect to apply.
fn decide(
    actor: &Actor,
    author: &Party,
    env: &Envelope,
    r: &Resolved,
    faults: Faults,
) -> Result<(MarkOutcome, Option<ClaimEffect>), Fail> {
    authorize(actor, author, env, r, faults)?;
    // 409 thread_locked (PV-ST-4), then transitions.
    let mut outcome = MarkOutcome::Unchanged;
    if let Some(t) = &r.thread {
        let view = StateView {
            state: t.state,
            confirmed: t.state_confirmed_at.is_some(),
        };
        if hooks::post::locked(faults, actor, t.state, view.is_locked()) {
            return refused(
                Reason::ThreadLocked,
                "thread is closed and confirmed; reopen it first",
            );
        }
        let confirms = confirms_states(faults, actor, Some(t));
        if let Some(target) = env.kind.marks() {
            outcome = hooks::post::mark_outcome(faults, view, env.kind, confirms, || {
                decide_mark(view, target, confirms)
            })?;
        }
    }
    let effect = match &r.claim {
        Some(c) => Some(hooks::post::claim_effect(
            faults,
            c.status,
            env.kind,
            claim_act(c.status, env.kind),
        )?),
        None => None,
    };
    // 409 self_reply (PV-ID-2): decide/close exempt.
    if let Some(p) = &r.parent
        && hooks::post::is_self_reply(faults, env, &p.author, author)
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
    let label = state_label(faults, actor);
    store::set_thread_state(
        conn,
        thread.id,
        to,
        actor.origin(),
        confirmed_at,
        &label,
        &now.text,
    )?;
    if !hooks::threads::records_event(faults, outcome) {
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

/// The post's writes, inside its transaction: who writes, as whom, when.
struct Writer<'a> {
    tx: &'a Connection,
    actor: &'a Actor,
    author: &'a Party,
    now: &'a Now,
    faults: Faults,
}

impl Writer<'_> {
    /// Opens the thread of an opening post (PV-EN-6) as a proposed or confirmed `open`
    /// (PV-ST-5), with its creation event (PV-ST-7).
    fn open_thread(&self) -> Result<i64, Fail> {
        let (actor, now) = (self.actor, self.now);
        let confirmed_at = confirms_states(self.faults, actor, None).then_some(now.text.as_str());
        let label = state_label(self.faults, actor);
        let id = store::insert_thread(
            self.tx,
            &NewThread {
                state: ThreadState::Open,
                origin: actor.origin(),
                confirmed_at,
                label: &label,
                creator: self.author,
                at: &now.text,
            },
        )?;
        store::insert_event(
            self.tx,
            &NewEvent {
                subject: "thread",
                thread_id: id,
                claim_id: None,
                from_state: None,
                to_state: ThreadState::Open.as_str(),
                origin: actor.origin(),
                label: &label,
                actor: self.author,
                at: &now.text,
                confirmed_at,
            },
        )?;
        Ok(id)
    }

    /// Stores the message in `thread_id`, under its (explicit or implicit) parent.
    fn insert_message(&self, env: &Envelope, r: &Resolved, thread_id: i64) -> Result<i64, Fail> {
        Ok(store::insert_message(
            self.tx,
            &NewMessage {
                thread_id,
                parent_id: r.parent.as_ref().map(|p| p.id),
                kind: env.kind.as_str(),
                author: self.author,
                author_kind: self.actor.author_kind(),
                body: &env.body,
                provenance: env.provenance.as_ref(),
                evidence: env.kind.is_dialectic().then_some(env.evidence.as_slice()),
                claim_id: env.claim,
                at: &self.now.text,
                depth: r.parent.as_ref().map_or(0, |p| p.depth + 1),
            },
        )?)
    }

    /// An `assert` creates a claim (PV-DI-2) and supersedes the listed ones (PV-DI-6).
    fn assert_claim(
        &self,
        env: &Envelope,
        superseded: &[ClaimRow],
        thread_id: i64,
        message_id: i64,
    ) -> Result<i64, Fail> {
        let valid_until = env
            .valid_until
            .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true));
        let id = store::insert_claim(
            self.tx,
            &NewClaim {
                thread_id,
                message_id,
                author: self.author,
                evidence: &env.evidence,
                supersedes: &env.supersedes,
                valid_until: valid_until.as_deref(),
                at: &self.now.text,
            },
        )?;
        store::set_message_claim(self.tx, message_id, id)?;
        let created = store::get_claim(self.tx, id)?
            .ok_or_else(|| crate::store::StoreError::Corrupt("claim vanished".into()))?;
        self.claim_event(&created, None, ClaimStatus::Unverified)?;
        for old in superseded {
            if hooks::sequences::supersede_chain_stops(self.faults, old) {
                continue;
            }
            if let Some(to) = supersede(old.status) {
                store::set_claim_status(self.tx, old.id, to, Some(id))?;
                self.claim_event(old, Some(old.status), to)?;
            }
        }
        Ok(id)
    }

    /// An attest/refute/verify is recorded on its claim and may move it (PV-DI-3..5).
    fn act_on_claim(
        &self,
        claim: &ClaimRow,
        env: &Envelope,
        effect: ClaimEffect,
        message_id: i64,
    ) -> Result<(), Fail> {
        store::insert_claim_act(
            self.tx,
            claim.id,
            message_id,
            env.kind.as_str(),
            self.author,
            &env.evidence,
            &self.now.text,
        )?;
        if let ClaimEffect::Moves(to) = effect {
            store::set_claim_status(self.tx, claim.id, to, None)?;
            self.claim_event(claim, Some(claim.status), to)?;
        }
        Ok(())
    }

    /// A claim status change is an event too (PV-DI-7), with subject `claim`.
    fn claim_event(
        &self,
        claim: &ClaimRow,
        from: Option<ClaimStatus>,
        to: ClaimStatus,
    ) -> Result<(), Fail> {
        if !hooks::post::records_claim_event(self.faults, from) {
            return Ok(());
        }
        store::insert_event(
            self.tx,
            &NewEvent {
                subject: "claim",
                thread_id: claim.thread_id,
                claim_id: Some(claim.id),
                from_state: from.map(ClaimStatus::as_str),
                to_state: to.as_str(),
                origin: self.actor.origin(),
                label: &state_label(self.faults, self.actor),
                actor: self.author,
                at: &self.now.text,
                // Claim changes are facts, not proposals.
                confirmed_at: Some(&self.now.text),
            },
        )?;
        Ok(())
    }

    /// What the 201 body shows, read back as stored inside the transaction.
    fn stored(
        &self,
        message_id: i64,
        thread_id: i64,
        claim_id: Option<i64>,
    ) -> Result<Stored, Fail> {
        let corrupt = |what: &str| crate::store::StoreError::Corrupt(format!("{what} vanished"));
        let message = store::get_message(self.tx, message_id)?.ok_or_else(|| corrupt("message"))?;
        let thread = store::get_thread(self.tx, thread_id)?.ok_or_else(|| corrupt("thread"))?;
        let claim = match claim_id {
            Some(id) => {
                let claim = store::get_claim(self.tx, id)?.ok_or_else(|| corrupt("claim"))?;
                Some((claim, store::claim_acts(self.tx, id)?))
            }
            None => None,
        };
        Ok(Stored {
            message,
            thread,
            claim,
        })
    }
}

/// The rows a post's 201 body shows, read inside its transaction and rendered after the
/// commit: the database lock is not held while JSON is built (issue 29: the render was a
/// fifth of a post's time under the lock). The answer still leaves only after the commit.
struct Stored {
    message: store::MessageRow,
    thread: store::ThreadRow,
    claim: Option<(store::ClaimRow, Vec<store::ClaimActRow>)>,
}

impl Stored {
    /// The 201 body: `{message, thread}` (+ `claim` for dialectic acts), as stored.
    fn respond(&self, now: &Now, faults: Faults) -> Body {
        let edited = hooks::reads::created_message(faults, &self.message, render::message);
        if self.claim.is_none() && edited.is_none() {
            return render::post_created(&self.message, &self.thread);
        }
        let mut body = serde_json::Map::new();
        let message = edited.unwrap_or_else(|| render::message(&self.message));
        body.insert("message".into(), message);
        body.insert("thread".into(), render::thread(&self.thread));
        if let Some((claim, acts)) = &self.claim {
            body.insert("claim".into(), render_claim(claim, acts, now, faults));
        }
        Value::Object(body).into()
    }
}

/// The `post` operation: validate (400), resolve (404), decide (403, 409), persist the
/// message with its thread, awaiting, state and claim effects in one transaction, and
/// answer 201 `{message, thread}` (+ `claim` for dialectic acts).
pub(crate) fn post(inner: &Inner, actor: &Actor, args: &Value, now: &Now) -> Result<Body, Fail> {
    let faults = inner.faults;
    let env = hooks::post::parse_envelope(faults, args, &inner.limits, inner.dialectic, now.time)?;
    let mut author = Party::new(actor.identity.clone(), env.extension.clone());
    hooks::post::author(faults, args, &mut author);
    let depth = inner.limits.reply_depth_max as i64;
    // Seeded fault only: the thread is resolved from a snapshot taken before the write.
    let mut snapshot = None;
    if hooks::races::post_on_snapshot(faults) {
        snapshot = Some(inner.db.read(|conn| resolve(conn, &env, depth, faults))?);
        hooks::races::window();
    }
    let stored = inner.db.write(|tx| {
        let mut resolved = match snapshot.take() {
            Some(r) => r,
            None => resolve(tx, &env, depth, faults)?,
        };
        if let Some(t) = resolved.thread.as_mut() {
            hooks::sequences::lock_view(faults, tx, t)?;
        }
        let (outcome, effect) = decide(actor, &author, &env, &resolved, faults)?;
        let outcome = match &resolved.thread {
            Some(t) => hooks::sequences::post_mark_outcome(
                faults,
                tx,
                t,
                confirms_states(faults, actor, Some(t)),
                env.kind.marks(),
                outcome,
            )?,
            None => outcome,
        };
        let w = Writer {
            tx,
            actor,
            author: &author,
            now,
            faults,
        };
        let thread_id = match &resolved.thread {
            Some(t) => t.id,
            None => w.open_thread()?,
        };
        let message_id = w.insert_message(&env, &resolved, thread_id)?;
        // PV-KD-2: awaiting from this (now last) message.
        let awaiting = hooks::post::awaiting(
            faults,
            env.kind,
            &author,
            resolved.parent.as_ref().map(|p| &p.author),
            resolved.claim.as_ref().map(|c| &c.author),
        );
        let awaiting = hooks::sequences::awaiting(
            faults,
            resolved.thread.as_ref(),
            resolved.parent.as_ref(),
            awaiting,
        );
        store::record_post(tx, thread_id, message_id, &awaiting, &now.text)?;
        if let Some(t) = &resolved.thread {
            apply_outcome(tx, t, outcome, actor, &author, now, faults)?;
        }
        // Dialectic effects (PV-DI-2..6).
        let mut claim_id = None;
        if env.kind == Kind::Assert {
            claim_id = Some(w.assert_claim(&env, &resolved.superseded, thread_id, message_id)?);
        }
        if let (Some(c), Some(effect)) = (&resolved.claim, effect) {
            w.act_on_claim(c, &env, effect, message_id)?;
            claim_id = Some(c.id);
        }
        w.stored(message_id, thread_id, claim_id)
    })?;
    Ok(stored.respond(now, faults))
}

/// The Claim body (PV-DI-7).
pub(crate) fn render_claim(
    claim: &ClaimRow,
    acts: &[store::ClaimActRow],
    now: &Now,
    faults: Faults,
) -> Value {
    let mut v = render::claim(claim, acts, now.time);
    hooks::reads::claim(faults, &mut v, acts);
    v
}
