//! The operations other than `post`: whoami, read_thread, list_events, inbox, mark, reopen,
//! read_claim.

use serde_json::{Value, json};

use super::args::{self, format_cursor};
use super::context::{Caller, Fail, Inner, Now, refused};
use super::post::{apply_outcome, render_claim};
use super::render;
use crate::domain::parley::awaiting::inbox_visible;
use crate::domain::parley::ids::IdKind;
use crate::domain::parley::operation::Body;
use crate::domain::parley::state::{decide_mark, decide_reopen};
use crate::domain::parley::{Actor, MarkOutcome, Party, Reason, Right, StateView};
use crate::faults::hooks::{self, threads::confirms_states};
use crate::store::parley::{self as store, ThreadRow};

/// `whoami` → `{identity, author_kind, rights, lock_label, quota_per_minute}` (PV-TR-5).
pub(crate) fn whoami(_inner: &Inner, caller: &Caller, args: &Value) -> Result<Value, Fail> {
    args::object(args, &[])?;
    let a = &caller.actor;
    let rights: Vec<&str> = [
        (Right::Read, "read"),
        (Right::Write, "write"),
        (Right::Lock, "lock"),
        (Right::Verify, "verify"),
    ]
    .into_iter()
    .filter(|(r, _)| a.has_right(*r))
    .map(|(_, name)| name)
    .collect();
    Ok(json!({
        "identity": a.identity,
        "author_kind": a.author_kind(),
        "rights": rights,
        "lock_label": a.lock_label,
        "quota_per_minute": caller.quota_per_minute,
    }))
}

fn load_thread(conn: &rusqlite::Connection, id: i64) -> Result<ThreadRow, Fail> {
    match store::get_thread(conn, id)? {
        Some(t) => Ok(t),
        None => refused(
            Reason::ThreadNotFound,
            format!("thread th_{id} does not exist"),
        ),
    }
}

/// `read_thread {thread}` → `{thread, messages: [Message + replies]}` (PV-RD-1).
pub(crate) fn read_thread(inner: &Inner, args: &Value) -> Result<Body, Fail> {
    let map = args::object(args, &["thread"])?;
    let id = args::required_id(map, "thread", IdKind::Thread)?;
    // Only the two queries hold the connection; rendering a large tree happens after the
    // lock is released, so big reads do not stall concurrent writers.
    let (t, messages) = inner.db.read(|conn| {
        let mut t = load_thread(conn, id)?;
        hooks::sequences::read_thread_state(inner.faults, conn, &mut t)?;
        let messages = store::thread_messages(conn, id)?;
        Ok::<_, Fail>((t, messages))
    })?;
    match hooks::reads::thread_tree(
        inner.faults,
        &messages,
        render::message,
        render::message_tree,
    ) {
        None => Ok(render::thread_read(&t, &messages)),
        // Not `json!`: it passes each value through `serde_json::to_value`, which would
        // deep-copy the whole rendered tree once more.
        Some(tree) => Ok(render::object([
            ("thread", render::thread(&t)),
            ("messages", Value::Array(tree)),
        ])
        .into()),
    }
}

/// `list_events {thread, since?}` → `{events}` in order, only after `since` (PV-RD-2).
pub(crate) fn list_events(inner: &Inner, args: &Value) -> Result<Value, Fail> {
    let map = args::object(args, &["thread", "since"])?;
    let id = args::required_id(map, "thread", IdKind::Thread)?;
    let since = hooks::reads::events_since(inner.faults, args::event_since(map)?);
    inner.db.read(|conn| {
        load_thread(conn, id)?;
        let events = store::thread_events(conn, id, since)?;
        let events = events.iter().map(render::event).collect();
        Ok(render::object([("events", Value::Array(events))]))
    })
}

/// `inbox {since?, extension?, limit?}` → `{items, cursor}` (PV-RD-3): threads awaiting the
/// caller, oldest activity first; the cursor is a position in the activity sequence.
pub(crate) fn inbox(inner: &Inner, actor: &Actor, args: &Value) -> Result<Value, Fail> {
    let a = args::inbox(args, &inner.limits)?;
    let caller = Party::new(actor.identity.clone(), a.extension.clone());
    let passed_extension = a.extension.is_some();
    let faults = inner.faults;
    // Seeded fault `inbox-shows-own-extension`: nobody's last message counts as the caller's.
    let nobody = Party::new(String::new(), None);
    inner.db.read(|conn| {
        let mut items = Vec::new();
        let mut cursor = a.since;
        let mut last_item_seq = None;
        let include_lateral = hooks::reads::inbox_shows_lateral(faults);
        store::inbox_candidates(conn, &caller, a.since, include_lateral, |t| {
            let locked = StateView {
                state: t.state,
                confirmed: t.state_confirmed_at.is_some(),
            }
            .is_locked();
            if hooks::sequences::inbox_hides(faults, conn, &t)? {
                return Ok(true);
            }
            let lateral = t.state.is_lateral() && !include_lateral;
            if locked || lateral || !t.awaiting.awaits(&caller, passed_extension) {
                // Hidden whoever wrote the last message: skip reading it back (one query per
                // candidate was most of an inbox call's cost, issue 25).
                return Ok(true);
            }
            let last = store::get_message(conn, t.last_message)?
                .ok_or_else(|| crate::store::StoreError::Corrupt("last message missing".into()))?;
            let last_author = hooks::reads::inbox_last_author(faults, &last.author, &nobody);
            if inbox_visible(
                locked,
                lateral,
                &t.awaiting,
                last_author,
                &caller,
                passed_extension,
            ) {
                cursor = t.activity_seq;
                if items.len() >= a.limit {
                    // Seeded fault `inbox-cursor-skips` only: the page is full, yet the
                    // cursor moves past this item, which is never returned.
                    return Ok(false);
                }
                last_item_seq = Some(t.activity_seq);
                items.push(json!({
                    "thread": crate::domain::parley::ids::format_id(IdKind::Thread, t.id),
                    "state": t.state.as_str(),
                    "awaiting": t.awaiting.to_json(),
                    "last_message": render::message(&last),
                    "last_activity_at": t.last_activity_at,
                }));
            }
            Ok(hooks::reads::inbox_goes_on(faults, items.len() >= a.limit))
        })?;
        let cursor = hooks::reads::inbox_cursor(faults, cursor, last_item_seq);
        Ok(json!({"items": items, "cursor": format_cursor(cursor)}))
    })
}

/// `mark {thread, state}` → `{thread, event}` (PV-ST-1..5, PV-AU-2, PV-AU-4); `event` is
/// null when nothing changed.
pub(crate) fn mark(
    inner: &Inner,
    actor: &Actor,
    args: &Value,
    now: &Now,
    skip_authority: bool,
) -> Result<Value, Fail> {
    let faults = inner.faults;
    let map = args::object(args, &["thread", "state"])?;
    let id = args::required_id(map, "thread", IdKind::Thread)?;
    let target = args::state(map)?;
    let party = Party::new(actor.identity.clone(), None);
    let decide = |tx: &rusqlite::Connection| -> Result<(ThreadRow, MarkOutcome), Fail> {
        let t = load_thread(tx, id)?;
        if (!actor.has_thread_authority(&t.creator.identity) && !skip_authority)
            || hooks::sequences::creator_authority_lost(faults, tx, &t, actor)?
        {
            return refused(
                Reason::ThreadAuthorityMissing,
                "mark needs the thread's creator, a lock holder or a human",
            );
        }
        let view = StateView {
            state: t.state,
            confirmed: t.state_confirmed_at.is_some(),
        };
        if hooks::threads::proposed_closed_locks(faults, t.state) {
            return refused(Reason::ThreadLocked, "thread is closed; reopen it first");
        }
        if hooks::sequences::forward_mark_refused(faults, tx, t.id, target)? {
            return refused(
                Reason::InvalidTransition,
                "the thread already went past this state",
            );
        }
        let confirms = confirms_states(faults, actor, Some(&t));
        let outcome = hooks::threads::mark_outcome(
            faults,
            view,
            target,
            confirms,
            decide_mark(view, target, confirms),
        )?;
        let outcome = hooks::sequences::mark_outcome(faults, tx, t.id, outcome)?;
        Ok((t, outcome))
    };
    let write = |tx: &rusqlite::Connection, t: &ThreadRow, outcome| -> Result<Value, Fail> {
        let event = apply_outcome(tx, t, outcome, actor, &party, now, faults)?;
        let t = load_thread(tx, id)?;
        Ok(json!({"thread": render::thread(&t), "event": event.as_ref().map(render::event)}))
    };
    if hooks::races::mark_split(faults) {
        // Seeded fault only: check, release the database, wait, then act on what was read.
        let (t, outcome) = inner.db.read(decide)?;
        hooks::races::window();
        return inner.db.write(|tx| write(tx, &t, outcome));
    }
    inner.db.write(|tx| {
        let (t, outcome) = decide(tx)?;
        write(tx, &t, outcome)
    })
}

/// `reopen {thread}` → `{thread, event}` (PV-ST-6, PV-AU-3).
pub(crate) fn reopen(inner: &Inner, actor: &Actor, args: &Value, now: &Now) -> Result<Value, Fail> {
    let map = args::object(args, &["thread"])?;
    let id = args::required_id(map, "thread", IdKind::Thread)?;
    let party = Party::new(actor.identity.clone(), None);
    let faults = inner.faults;
    inner.db.write(|tx| {
        let t = load_thread(tx, id)?;
        if !actor.may_reopen(&t.creator.identity, t.state)
            && !hooks::threads::reopen_granted(faults, actor, &t)
        {
            return refused(
                Reason::ThreadAuthorityMissing,
                if t.state.is_lateral() {
                    "reopening a lateral state needs a lock holder or a human"
                } else {
                    "reopen needs the thread's creator, a lock holder or a human"
                },
            );
        }
        if hooks::sequences::second_reopen_refused(faults, tx, t.id)? {
            return refused(Reason::InvalidTransition, "the thread was reopened already");
        }
        let view = StateView {
            state: t.state,
            confirmed: t.state_confirmed_at.is_some(),
        };
        let confirms = confirms_states(faults, actor, Some(&t));
        let outcome = hooks::threads::reopen_outcome(
            faults,
            t.state,
            confirms,
            decide_reopen(view, confirms),
        )?;
        let outcome = hooks::sequences::reopen_outcome(faults, tx, t.id, view.confirmed, outcome)?;
        let event = apply_outcome(tx, &t, outcome, actor, &party, now, faults)?;
        let t = load_thread(tx, id)?;
        Ok(json!({"thread": render::thread(&t), "event": event.as_ref().map(render::event)}))
    })
}

/// `read_claim {claim}` → Claim (PV-DI-7).
pub(crate) fn read_claim(inner: &Inner, args: &Value, now: &Now) -> Result<Value, Fail> {
    let map = args::object(args, &["claim"])?;
    let id = args::required_id(map, "claim", IdKind::Claim)?;
    inner.db.read(|conn| {
        let Some(c) = store::get_claim(conn, id)? else {
            return refused(
                Reason::ClaimNotFound,
                format!("claim cl_{id} does not exist"),
            );
        };
        let acts = store::claim_acts(conn, id)?;
        Ok(render_claim(&c, &acts, now, inner.faults))
    })
}
