//! Hooks of the faults only a *sequence* reveals (issue 10): each bends a rule once a
//! thread has a history — a reopen, many events, a deep or wide tree, a confirmed state a
//! later post touches, a decided thread someone asks again — so a short vector never meets
//! it and the state-machine model of the harness does. Queries of the thread's history run
//! only while the fault is on.

use serde_json::Value;

use crate::domain::parley::{Actor, Awaiting, MarkOutcome, ThreadState};
use crate::faults::{Fault, Faults};
use crate::store::StoreError;
use crate::store::parley::{self as store, ClaimRow, EventRow, MessageRow, ThreadRow};

/// Whether the thread was reopened before (an event back to `open` from another state).
fn reopen_events(conn: &rusqlite::Connection, thread: i64) -> Result<Vec<EventRow>, StoreError> {
    Ok(store::thread_events(conn, thread, 0)?
        .into_iter()
        .filter(|e| {
            e.subject == "thread"
                && e.to_state == "open"
                && e.from_state.as_deref().is_some_and(|f| f != "open")
        })
        .collect())
}

/// `second-reopen-refused` (PV-ST-6): a thread reopened once refuses every later reopen.
pub(crate) fn second_reopen_refused(
    faults: Faults,
    conn: &rusqlite::Connection,
    thread: i64,
) -> Result<bool, StoreError> {
    if !faults.is_on(Fault::SecondReopenRefused) {
        return Ok(false);
    }
    Ok(!reopen_events(conn, thread)?.is_empty())
}

/// `reopen-transfers-authority` (PV-AU-2): once someone else reopened the thread, its
/// creator (without lock, not human) has lost the authority to mark it.
pub(crate) fn creator_authority_lost(
    faults: Faults,
    conn: &rusqlite::Connection,
    thread: &ThreadRow,
    actor: &Actor,
) -> Result<bool, StoreError> {
    if !faults.is_on(Fault::ReopenTransfersAuthority)
        || actor.confirms_states()
        || actor.identity != thread.creator.identity
    {
        return Ok(false);
    }
    Ok(reopen_events(conn, thread.id)?
        .iter()
        .any(|e| e.actor.identity != thread.creator.identity))
}

/// `forward-mark-after-reopen-refused` (PV-ST-1): after a reopen, `mark` to `answered` or
/// `decided` is refused as if the thread still stood at its old state.
pub(crate) fn forward_mark_refused(
    faults: Faults,
    conn: &rusqlite::Connection,
    thread: i64,
    target: ThreadState,
) -> Result<bool, StoreError> {
    if !faults.is_on(Fault::ForwardMarkAfterReopenRefused)
        || !matches!(target, ThreadState::Answered | ThreadState::Decided)
    {
        return Ok(false);
    }
    Ok(!reopen_events(conn, thread)?.is_empty())
}

/// Whether `fault` is on and the thread was reopened before.
fn reopened_with(
    faults: Faults,
    fault: Fault,
    conn: &rusqlite::Connection,
    thread: i64,
) -> Result<bool, StoreError> {
    Ok(faults.is_on(fault) && !reopen_events(conn, thread)?.is_empty())
}

/// The outcome of `mark` (PV-ST-5). `confirm-after-reopen-ignored` drops a confirmation
/// on a thread that was reopened before.
pub(crate) fn mark_outcome(
    faults: Faults,
    conn: &rusqlite::Connection,
    thread: i64,
    outcome: MarkOutcome,
) -> Result<MarkOutcome, StoreError> {
    if outcome == MarkOutcome::Confirm
        && reopened_with(faults, Fault::ConfirmAfterReopenIgnored, conn, thread)?
    {
        return Ok(MarkOutcome::Unchanged);
    }
    Ok(outcome)
}

/// The outcome of `reopen` (PV-ST-5). `second-reopen-keeps-confirmation`: a model reopening
/// a confirmed state of a thread reopened before leaves `open` confirmed.
pub(crate) fn reopen_outcome(
    faults: Faults,
    conn: &rusqlite::Connection,
    thread: i64,
    was_confirmed: bool,
    outcome: MarkOutcome,
) -> Result<MarkOutcome, StoreError> {
    match outcome {
        MarkOutcome::Change {
            to,
            confirmed: false,
        } if was_confirmed
            && reopened_with(faults, Fault::SecondReopenKeepsConfirmation, conn, thread)? =>
        {
            Ok(MarkOutcome::Change {
                to,
                confirmed: true,
            })
        }
        other => Ok(other),
    }
}

/// The outcome of a marking post (PV-ST-5). `answer-reproposes-confirmed` turns a model's
/// same-state mark on a confirmed state back into a proposal; `post-after-reopen-confirmed`
/// confirms a model's state change on a thread reopened before.
pub(crate) fn post_mark_outcome(
    faults: Faults,
    conn: &rusqlite::Connection,
    thread: &ThreadRow,
    actor_confirms: bool,
    marks: Option<ThreadState>,
    outcome: MarkOutcome,
) -> Result<MarkOutcome, StoreError> {
    Ok(match outcome {
        MarkOutcome::Unchanged
            if faults.is_on(Fault::AnswerReproposesConfirmed)
                && marks == Some(thread.state)
                && thread.state_confirmed_at.is_some()
                && !actor_confirms =>
        {
            MarkOutcome::Change {
                to: thread.state,
                confirmed: false,
            }
        }
        MarkOutcome::Change {
            to,
            confirmed: false,
        } if reopened_with(faults, Fault::PostAfterReopenConfirmed, conn, thread.id)? => {
            MarkOutcome::Change {
                to,
                confirmed: true,
            }
        }
        other => other,
    })
}

/// `relock-after-reopen-missed` (PV-ST-4): the thread as the lock check of a post sees it —
/// a thread reopened before looks unconfirmed, so a second confirmed close does not lock.
pub(crate) fn lock_view(
    faults: Faults,
    conn: &rusqlite::Connection,
    thread: &mut ThreadRow,
) -> Result<(), StoreError> {
    if thread.state == ThreadState::Closed
        && reopened_with(faults, Fault::RelockAfterReopenMissed, conn, thread.id)?
    {
        thread.state_confirmed_at = None;
    }
    Ok(())
}

/// `read-thread-stale-after-reopen` (PV-ST-6): read_thread of a thread reopened more than
/// once, whose last state event is a reopen, reports the state before it.
pub(crate) fn read_thread_state(
    faults: Faults,
    conn: &rusqlite::Connection,
    thread: &mut ThreadRow,
) -> Result<(), StoreError> {
    if !faults.is_on(Fault::ReadThreadStaleAfterReopen) {
        return Ok(());
    }
    if reopen_events(conn, thread.id)?.len() < 2 {
        return Ok(());
    }
    let events = store::thread_events(conn, thread.id, 0)?;
    if let Some(last) = events.iter().rev().find(|e| e.subject == "thread")
        && last.to_state == "open"
        && let Some(from) = last.from_state.as_deref().and_then(ThreadState::parse)
        && from != ThreadState::Open
    {
        thread.state = from;
    }
    Ok(())
}

/// `inbox-hides-reopened-replies` (PV-RD-3): a reopened thread awaiting a named party is
/// hidden from the inbox.
pub(crate) fn inbox_hides(
    faults: Faults,
    conn: &rusqlite::Connection,
    thread: &ThreadRow,
) -> Result<bool, StoreError> {
    Ok(matches!(thread.awaiting, Awaiting::Party(_))
        && reopened_with(faults, Fault::InboxHidesReopenedReplies, conn, thread.id)?)
}

/// Whom the thread awaits after a post (PV-KD-2: its last message decides).
/// `reply-to-earlier-message-keeps-awaiting` keeps the old value when the post replies to
/// a message other than the thread's last one.
pub(crate) fn awaiting(
    faults: Faults,
    thread: Option<&ThreadRow>,
    parent: Option<&MessageRow>,
    correct: Awaiting,
) -> Awaiting {
    match (thread, parent) {
        (Some(t), Some(p))
            if faults.is_on(Fault::ReplyToEarlierMessageKeepsAwaiting)
                && p.id != t.last_message =>
        {
            t.awaiting.clone()
        }
        _ => correct,
    }
}

/// `supersede-chain-stops` (PV-DI-6): a claim that itself superseded another is never
/// superseded (a chain of three asserts reveals it).
pub(crate) fn supersede_chain_stops(faults: Faults, old: &ClaimRow) -> bool {
    faults.is_on(Fault::SupersedeChainStops) && !old.supersedes.is_empty()
}

/// The rendered tree of `read_thread` (PV-RD-1). `read-thread-drops-deep-replies` drops
/// replies below depth 3.
pub(crate) fn tree(faults: Faults, roots: &mut [Value]) {
    fn walk(v: &mut Value, depth: usize, faults: Faults) {
        let Some(Value::Array(replies)) = v.get_mut("replies") else {
            return;
        };
        if faults.is_on(Fault::ReadThreadDropsDeepReplies) && depth >= 3 {
            replies.clear();
        }
        for r in replies.iter_mut() {
            walk(r, depth + 1, faults);
        }
    }
    if faults.is_on(Fault::ReadThreadDropsDeepReplies) {
        for r in roots {
            walk(r, 0, faults);
        }
    }
}
