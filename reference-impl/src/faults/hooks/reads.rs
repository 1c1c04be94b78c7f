//! Hooks of the reading operations and of the documents they render: `read_thread`,
//! `list_events`, `inbox` (PV-RD-1..3), Message and Claim bodies (PV-RS-2, PV-RS-3).

use serde_json::{Value, json};

use crate::domain::parley::Party;
use crate::faults::{Fault, Faults};
use crate::store::parley::{ClaimActRow, MessageRow};

/// `read_thread`'s message tree as the seeded faults edit it, or `None` when none of them
/// is on (the service then writes the tree straight from the rows): `read-thread-flat`
/// ([`flat_thread`]), `message-parent-omitted-at-root` ([`message`]) and
/// `read-thread-drops-deep-replies` (`sequences::tree`). `render` and `tree` are the
/// service's renderings of one message and of the whole tree (the hooks sit below it).
pub(crate) fn thread_tree(
    faults: Faults,
    messages: &[MessageRow],
    render: impl Fn(&MessageRow) -> Value,
    tree: impl FnOnce(&[MessageRow]) -> Vec<Value>,
) -> Option<Vec<Value>> {
    let edited = [
        Fault::ReadThreadFlat,
        Fault::MessageParentOmittedAtRoot,
        Fault::ReadThreadDropsDeepReplies,
    ];
    if !edited.into_iter().any(|f| faults.is_on(f)) {
        return None;
    }
    let mut roots = flat_thread(faults, messages, render).unwrap_or_else(|| tree(messages));
    for m in &mut roots {
        message(faults, m);
    }
    super::sequences::tree(faults, &mut roots);
    Some(roots)
}

/// A post's rendered message as the seeded fault `message-parent-omitted-at-root` edits it
/// ([`message`]), or `None` when it is off (the service then writes it from its row).
pub(crate) fn created_message(
    faults: Faults,
    m: &MessageRow,
    render: impl Fn(&MessageRow) -> Value,
) -> Option<Value> {
    faults.is_on(Fault::MessageParentOmittedAtRoot).then(|| {
        let mut v = render(m);
        message(faults, &mut v);
        v
    })
}

/// A rendered Message (PV-RS-2: a root carries `parent: null`).
/// `message-parent-omitted-at-root` drops the member.
fn message(faults: Faults, message: &mut Value) {
    if faults.is_on(Fault::MessageParentOmittedAtRoot)
        && let Value::Object(m) = message
        && m.get("parent") == Some(&Value::Null)
    {
        m.remove("parent");
    }
}

/// The message tree of `read_thread` in place of the correct one (PV-RD-1), if a fault
/// replaces it: `read-thread-flat` returns every message at the top level, replies empty.
/// `render` is the service's rendering of one message (the hooks sit below the service).
fn flat_thread(
    faults: Faults,
    messages: &[MessageRow],
    render: impl Fn(&MessageRow) -> Value,
) -> Option<Vec<Value>> {
    faults.is_on(Fault::ReadThreadFlat).then(|| {
        messages
            .iter()
            .map(|m| {
                let mut v = render(m);
                v["replies"] = json!([]);
                v
            })
            .collect()
    })
}

/// The `since` of `list_events` (PV-RD-2). `list-events-ignores-since` reads from 0.
pub(crate) fn events_since(faults: Faults, since: i64) -> i64 {
    if faults.is_on(Fault::ListEventsIgnoresSince) {
        0
    } else {
        since
    }
}

/// Whether the inbox lists lateral threads (never, PV-RD-3): `inbox-shows-lateral`.
pub(crate) fn inbox_shows_lateral(faults: Faults) -> bool {
    faults.is_on(Fault::InboxShowsLateral)
}

/// The author of a thread's last message as the inbox compares it with the caller
/// (PV-RD-3). `inbox-shows-own-extension` compares `nobody` instead.
pub(crate) fn inbox_last_author<'a>(
    faults: Faults,
    last_author: &'a Party,
    nobody: &'a Party,
) -> &'a Party {
    if faults.is_on(Fault::InboxShowsOwnExtension) {
        nobody
    } else {
        last_author
    }
}

/// Whether the inbox scan goes on after a visible thread: while the page is not `full`.
/// `inbox-cursor-skips` goes on, so the cursor passes the next visible thread.
pub(crate) fn inbox_goes_on(faults: Faults, full: bool) -> bool {
    !full || faults.is_on(Fault::InboxCursorSkips)
}

/// The inbox cursor after a page (PV-RD-3: the last position scanned).
/// `inbox-cursor-repeats` points before the last returned item.
pub(crate) fn inbox_cursor(faults: Faults, cursor: i64, last_item_seq: Option<i64>) -> i64 {
    match last_item_seq {
        Some(seq) if faults.is_on(Fault::InboxCursorRepeats) => seq - 1,
        _ => cursor,
    }
}

/// A rendered Claim (PV-RS-3: `support` counts attestations).
/// `verify-adds-support` counts verifications too.
/// `support-capped-at-two` stops counting after two attestations; `expiry-never-reported`
/// reads every claim as unexpired (both only a sequence or the passing of time reveals).
pub(crate) fn claim(faults: Faults, claim: &mut Value, acts: &[ClaimActRow]) {
    if faults.is_on(Fault::SupportCappedAtTwo)
        && let Some(n) = claim["support"].as_u64()
    {
        claim["support"] = Value::from(n.min(2));
    }
    if faults.is_on(Fault::ExpiryNeverReported) {
        claim["expired"] = Value::Bool(false);
    }
    if faults.is_on(Fault::VerifyAddsSupport) {
        let support = acts
            .iter()
            .filter(|a| a.act == "attest" || a.act == "verify")
            .count();
        claim["support"] = Value::from(support);
    }
}
