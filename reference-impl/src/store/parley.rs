//! Parley tables: threads, messages, events, claims, claim acts, and the activity counter.
//!
//! Ids come from `AUTOINCREMENT` rowids, so `th_N`, `msg_N`, `cl_N`, `ev_N` are never reused,
//! also across restarts and after deletions. The inbox's activity sequence is a persisted
//! counter, so cursors stay valid across restarts too. Every function takes a
//! [`Connection`]; writers pass the transaction of `Db::write` (one transaction per write).

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::StoreError;
use crate::domain::parley::dialectic::Evidence;
use crate::domain::parley::{Awaiting, ClaimStatus, Origin, Party, Provenance, ThreadState};

/// Ordered schema migrations for Parley.
pub const MIGRATIONS: &[super::Migration] = &[
    (
        "parley_0001_init",
    "CREATE TABLE parley_threads (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        state TEXT NOT NULL,
        state_origin TEXT NOT NULL,
        state_confirmed_at TEXT,
        state_label TEXT NOT NULL,
        creator_identity TEXT NOT NULL,
        creator_extension TEXT,
        root_message INTEGER,
        last_message INTEGER,
        awaiting_mode TEXT NOT NULL DEFAULT 'none' CHECK (awaiting_mode IN ('none', 'any', 'party')),
        awaiting_identity TEXT,
        awaiting_extension TEXT,
        created_at TEXT NOT NULL,
        last_activity_at TEXT NOT NULL,
        activity_seq INTEGER NOT NULL
    );
    CREATE INDEX parley_threads_activity ON parley_threads(activity_seq);
    CREATE TABLE parley_messages (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        thread_id INTEGER NOT NULL REFERENCES parley_threads(id),
        parent_id INTEGER REFERENCES parley_messages(id),
        kind TEXT NOT NULL,
        identity TEXT NOT NULL,
        extension TEXT,
        author_kind TEXT NOT NULL,
        body TEXT NOT NULL,
        provenance TEXT,
        evidence TEXT,
        claim_id INTEGER,
        created_at TEXT NOT NULL,
        depth INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX parley_messages_thread ON parley_messages(thread_id, id);
    CREATE TABLE parley_events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        subject TEXT NOT NULL CHECK (subject IN ('thread', 'claim')),
        thread_id INTEGER NOT NULL REFERENCES parley_threads(id),
        claim_id INTEGER,
        from_state TEXT,
        to_state TEXT NOT NULL,
        origin TEXT NOT NULL,
        label TEXT NOT NULL,
        actor_identity TEXT NOT NULL,
        actor_extension TEXT,
        at TEXT NOT NULL,
        confirmed_at TEXT
    );
    CREATE INDEX parley_events_thread ON parley_events(thread_id, id);
    CREATE TABLE parley_claims (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        thread_id INTEGER NOT NULL REFERENCES parley_threads(id),
        message_id INTEGER NOT NULL REFERENCES parley_messages(id),
        author_identity TEXT NOT NULL,
        author_extension TEXT,
        status TEXT NOT NULL,
        evidence TEXT NOT NULL,
        supersedes TEXT NOT NULL,
        superseded_by INTEGER,
        valid_until TEXT,
        created_at TEXT NOT NULL
    );
    CREATE TABLE parley_claim_acts (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        claim_id INTEGER NOT NULL REFERENCES parley_claims(id),
        message_id INTEGER NOT NULL REFERENCES parley_messages(id),
        act TEXT NOT NULL CHECK (act IN ('attest', 'verify', 'refute')),
        identity TEXT NOT NULL,
        extension TEXT,
        evidence TEXT NOT NULL,
        at TEXT NOT NULL
    );
    CREATE INDEX parley_claim_acts_claim ON parley_claim_acts(claim_id, id);
    CREATE TABLE parley_counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
    INSERT INTO parley_counters(name, value) VALUES ('activity', 0);",
    ),
    // The inbox reads threads that await someone, in activity order (issue 29: the latency
    // drift). Most threads await nobody (every `inform` ends a turn), and with only the
    // activity index an inbox call stepped over all of them: its cost, under the database
    // lock, grew with every thread the server ever held (3 ms per call at 4,300 threads).
    (
        "parley_0002_inbox",
        "CREATE INDEX parley_threads_inbox ON parley_threads(activity_seq)
            WHERE awaiting_mode <> 'none';",
    ),
    // The three `CHECK (col IN (...))` constraints as chains of comparisons, which allow
    // exactly the same values (issue 29, post latency). SQLite codes a constant IN list in a
    // CHECK as an ephemeral table built again for every row written: a third of a post's
    // thread insert and of its thread update, and of its event insert (measured: an UPDATE
    // of one such column took 6.1 µs with the IN list, 2.8 µs with the comparisons).
    // Rewriting a CHECK changes no stored row, so SQLite's own procedure for it applies
    // (sqlite.org/lang_altertable.html, "Making Other Kinds Of Table Schema Changes"): the
    // table's text in `sqlite_schema` is edited in this migration's transaction, RESET
    // reloads the schema on this connection, and `Db::migrate` bumps the schema version
    // for any other. A stored text other than the first migration's is left as it is (its
    // CHECK still holds); the store test `constant_list_checks_are_comparisons` shows the
    // first migration's text is rewritten.
    (
        "parley_0003_checks_as_comparisons",
        "PRAGMA writable_schema = ON;
        UPDATE sqlite_schema SET sql = replace(sql,
            'CHECK (awaiting_mode IN (''none'', ''any'', ''party''))',
            'CHECK (awaiting_mode = ''none'' OR awaiting_mode = ''any'' OR awaiting_mode = ''party'')')
            WHERE type = 'table' AND name = 'parley_threads';
        UPDATE sqlite_schema SET sql = replace(sql,
            'CHECK (subject IN (''thread'', ''claim''))',
            'CHECK (subject = ''thread'' OR subject = ''claim'')')
            WHERE type = 'table' AND name = 'parley_events';
        UPDATE sqlite_schema SET sql = replace(sql,
            'CHECK (act IN (''attest'', ''verify'', ''refute''))',
            'CHECK (act = ''attest'' OR act = ''verify'' OR act = ''refute'')')
            WHERE type = 'table' AND name = 'parley_claim_acts';
        PRAGMA writable_schema = RESET;",
    ),
];

fn corrupt(what: &str, value: &str) -> StoreError {
    StoreError::Corrupt(format!("{what}: {value:?}"))
}

fn json_col<T: serde::de::DeserializeOwned>(
    what: &str,
    s: Option<String>,
) -> Result<Option<T>, StoreError> {
    s.map(|s| serde_json::from_str(&s).map_err(|e| StoreError::Corrupt(format!("{what}: {e}"))))
        .transpose()
}

fn to_json<T: serde::Serialize + ?Sized>(v: &T) -> Result<String, StoreError> {
    serde_json::to_string(v).map_err(|e| StoreError::Corrupt(format!("encode: {e}")))
}

// ---------------------------------------------------------------------------------------
// Threads

/// A stored thread.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadRow {
    /// Row id (`th_N`).
    pub id: i64,
    /// Current state.
    pub state: ThreadState,
    /// `state_origin`.
    pub state_origin: Origin,
    /// `state_confirmed_at` (None = proposal).
    pub state_confirmed_at: Option<String>,
    /// `state_label`.
    pub state_label: String,
    /// Creator party.
    pub creator: Party,
    /// Root message id.
    pub root_message: i64,
    /// Last message id.
    pub last_message: i64,
    /// Derived from the last message (PV-KD-2), stored on each post.
    pub awaiting: Awaiting,
    /// Creation time.
    pub created_at: String,
    /// Time of the last post or state change.
    pub last_activity_at: String,
    /// Position in the global activity sequence (inbox cursor, PV-RD-3).
    pub activity_seq: i64,
}

const THREAD_COLS: &str = "id, state, state_origin, state_confirmed_at, state_label, creator_identity, \
    creator_extension, root_message, last_message, awaiting_mode, awaiting_identity, awaiting_extension, \
    created_at, last_activity_at, activity_seq";

fn thread_from_row(r: &Row<'_>) -> rusqlite::Result<Result<ThreadRow, StoreError>> {
    let state: String = r.get(1)?;
    let origin: String = r.get(2)?;
    let mode: String = r.get(9)?;
    let aw_identity: Option<String> = r.get(10)?;
    let aw_extension: Option<String> = r.get(11)?;
    let creator = Party::new(r.get::<_, String>(5)?, r.get(6)?);
    let root: Option<i64> = r.get(7)?;
    let last: Option<i64> = r.get(8)?;
    let build = move || -> Result<ThreadRow, StoreError> {
        let awaiting = match (mode.as_str(), aw_identity) {
            ("none", _) => Awaiting::Nobody,
            ("any", Some(id)) => Awaiting::Any {
                except: Party::new(id, aw_extension),
            },
            ("party", Some(id)) => Awaiting::Party(Party::new(id, aw_extension)),
            _ => return Err(corrupt("awaiting", &mode)),
        };
        Ok(ThreadRow {
            id: 0,
            state: ThreadState::parse(&state).ok_or_else(|| corrupt("thread state", &state))?,
            state_origin: Origin::parse(&origin).ok_or_else(|| corrupt("origin", &origin))?,
            state_confirmed_at: None,
            state_label: String::new(),
            creator,
            root_message: root.ok_or_else(|| corrupt("root_message", "NULL"))?,
            last_message: last.ok_or_else(|| corrupt("last_message", "NULL"))?,
            awaiting,
            created_at: String::new(),
            last_activity_at: String::new(),
            activity_seq: 0,
        })
    };
    let id: i64 = r.get(0)?;
    let confirmed: Option<String> = r.get(3)?;
    let label: String = r.get(4)?;
    let created_at: String = r.get(12)?;
    let last_activity_at: String = r.get(13)?;
    let seq: i64 = r.get(14)?;
    Ok(build().map(|t| ThreadRow {
        id,
        state_confirmed_at: confirmed,
        state_label: label,
        created_at,
        last_activity_at,
        activity_seq: seq,
        ..t
    }))
}

/// Loads a thread.
pub fn get_thread(conn: &Connection, id: i64) -> Result<Option<ThreadRow>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {THREAD_COLS} FROM parley_threads WHERE id = ?1"
    ))?;
    stmt.query_row([id], thread_from_row)
        .optional()?
        .transpose()
}

/// The state a new thread starts in (PV-ST-5, PV-ST-7).
#[derive(Debug, Clone)]
pub struct NewThread<'a> {
    /// `open`.
    pub state: ThreadState,
    /// Origin of the creation.
    pub origin: Origin,
    /// Confirmed at (humans, lock holders) or None (proposal).
    pub confirmed_at: Option<&'a str>,
    /// Label.
    pub label: &'a str,
    /// Creator.
    pub creator: &'a Party,
    /// Creation time.
    pub at: &'a str,
}

/// Advances the persisted activity counter and returns the new value (PV-RD-3 cursors).
/// Callers are inside the write transaction, so nothing runs between the two statements.
pub fn next_activity_seq(conn: &Connection) -> Result<i64, StoreError> {
    // Two statements rather than `UPDATE … RETURNING`: SQLite buffers RETURNING rows in an
    // ephemeral table, created and dropped on every post (see `benches/README.md`).
    conn.prepare_cached("UPDATE parley_counters SET value = value + 1 WHERE name = 'activity'")?
        .execute([])?;
    let mut stmt =
        conn.prepare_cached("SELECT value FROM parley_counters WHERE name = 'activity'")?;
    Ok(stmt.query_row([], |r| r.get(0))?)
}

/// Inserts a thread (root/last message set by [`record_post`]) and returns its id.
pub fn insert_thread(conn: &Connection, t: &NewThread<'_>) -> Result<i64, StoreError> {
    let mut stmt = conn.prepare_cached(
        "INSERT INTO parley_threads(state, state_origin, state_confirmed_at, state_label, creator_identity,
            creator_extension, created_at, last_activity_at, activity_seq)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, 0)",
    )?;
    stmt.execute(params![
        t.state.as_str(),
        t.origin.as_str(),
        t.confirmed_at,
        t.label,
        t.creator.identity,
        t.creator.extension,
        t.at
    ])?;
    Ok(conn.last_insert_rowid())
}

/// Records a post on its thread: root (first post), last message, awaiting, activity.
pub fn record_post(
    conn: &Connection,
    thread: i64,
    message: i64,
    awaiting: &Awaiting,
    at: &str,
) -> Result<(), StoreError> {
    let seq = next_activity_seq(conn)?;
    let (mode, party) = match awaiting {
        Awaiting::Nobody => ("none", None),
        Awaiting::Any { except } => ("any", Some(except)),
        Awaiting::Party(p) => ("party", Some(p)),
    };
    let mut stmt = conn.prepare_cached(
        "UPDATE parley_threads SET root_message = COALESCE(root_message, ?2), last_message = ?2,
            awaiting_mode = ?3, awaiting_identity = ?4, awaiting_extension = ?5,
            last_activity_at = ?6, activity_seq = ?7
         WHERE id = ?1",
    )?;
    stmt.execute(params![
        thread,
        message,
        mode,
        party.map(|p| &p.identity),
        party.and_then(|p| p.extension.as_ref()),
        at,
        seq
    ])?;
    Ok(())
}

/// Sets a thread's state fields (a state change or a confirmation) and counts it as activity.
pub fn set_thread_state(
    conn: &Connection,
    thread: i64,
    state: ThreadState,
    origin: Origin,
    confirmed_at: Option<&str>,
    label: &str,
    at: &str,
) -> Result<(), StoreError> {
    let seq = next_activity_seq(conn)?;
    let mut stmt = conn.prepare_cached(
        "UPDATE parley_threads SET state = ?2, state_origin = ?3, state_confirmed_at = ?4, state_label = ?5,
            last_activity_at = ?6, activity_seq = ?7
         WHERE id = ?1",
    )?;
    stmt.execute(params![
        thread,
        state.as_str(),
        origin.as_str(),
        confirmed_at,
        label,
        at,
        seq
    ])?;
    Ok(())
}

/// The inbox's candidate threads, in activity order (see [`inbox_candidates`]).
fn inbox_sql() -> String {
    // `IS` compares NULL with NULL as equal: the parties `(id, null)` match exactly
    // (`Awaiting::awaits`: `any` awaits everyone but the `except` party itself).
    // `awaiting_mode <> 'none'` repeats what the last condition implies: SQLite takes the
    // partial index `parley_threads_inbox` only when the query states its condition, and
    // without it the scan stepped over every thread awaiting nobody (issue 29).
    format!(
        "SELECT {THREAD_COLS} FROM parley_threads
         WHERE activity_seq > ?1
           AND awaiting_mode <> 'none'
           AND (?3 OR state IN ('open', 'answered', 'decided', 'closed'))
           AND NOT (state = 'closed' AND state_confirmed_at IS NOT NULL)
           AND ((awaiting_mode = 'any'
                 AND NOT (awaiting_identity = ?2 AND awaiting_extension IS ?4))
                OR (awaiting_mode = 'party' AND awaiting_identity = ?2))
         ORDER BY activity_seq"
    )
}

/// Inbox candidates (PV-RD-3) with activity after `since_seq`, oldest activity first: not
/// lateral, not confirmed-closed, awaiting `any` except a party other than `caller`, or
/// naming `caller`'s identity. The precise rule is applied by the caller with
/// `awaiting::inbox_visible`; `visit` returns `false` to stop. `include_lateral` is only ever
/// true for the seeded fault `inbox-shows-lateral` (issue 6).
///
/// The `any` rows whose `except` party is the caller's `(identity, extension)` are left out
/// here rather than by the caller (they await everyone else): a long-lived server
/// accumulates them (every `ask` a client opens), and reading each one back to drop it made
/// an inbox call cost the caller's whole history (issue 25's profile).
pub fn inbox_candidates(
    conn: &Connection,
    caller: &Party,
    since_seq: i64,
    include_lateral: bool,
    mut visit: impl FnMut(ThreadRow) -> Result<bool, StoreError>,
) -> Result<(), StoreError> {
    let mut stmt = conn.prepare_cached(&inbox_sql())?;
    let mut rows = stmt.query(params![
        since_seq,
        caller.identity,
        include_lateral,
        caller.extension
    ])?;
    while let Some(r) = rows.next()? {
        if !visit(thread_from_row(r)??)? {
            break;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Messages

/// A stored message.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageRow {
    /// Row id (`msg_N`).
    pub id: i64,
    /// Thread id.
    pub thread_id: i64,
    /// Parent id (None for the root).
    pub parent_id: Option<i64>,
    /// Kind (wire spelling).
    pub kind: String,
    /// Author party.
    pub author: Party,
    /// `llm` | `human`.
    pub author_kind: String,
    /// Body.
    pub body: String,
    /// Provenance.
    pub provenance: Option<Provenance>,
    /// Evidence (dialectic acts).
    pub evidence: Option<Vec<Evidence>>,
    /// Claim created (assert) or acted on (attest/refute/verify).
    pub claim_id: Option<i64>,
    /// Creation time.
    pub created_at: String,
    /// Reply depth (root = 0).
    pub depth: i64,
}

const MESSAGE_COLS: &str = "id, thread_id, parent_id, kind, identity, extension, author_kind, body, provenance, evidence, claim_id, created_at, depth";

fn message_from_row(r: &Row<'_>) -> rusqlite::Result<Result<MessageRow, StoreError>> {
    let provenance: Option<String> = r.get(8)?;
    let evidence: Option<String> = r.get(9)?;
    let partial = MessageRow {
        id: r.get(0)?,
        thread_id: r.get(1)?,
        parent_id: r.get(2)?,
        kind: r.get(3)?,
        author: Party::new(r.get::<_, String>(4)?, r.get(5)?),
        author_kind: r.get(6)?,
        body: r.get(7)?,
        provenance: None,
        evidence: None,
        claim_id: r.get(10)?,
        created_at: r.get(11)?,
        depth: r.get(12)?,
    };
    Ok((|| {
        Ok(MessageRow {
            provenance: json_col("provenance", provenance)?,
            evidence: json_col("evidence", evidence)?,
            ..partial
        })
    })())
}

/// A message to insert.
#[derive(Debug, Clone)]
pub struct NewMessage<'a> {
    /// Thread.
    pub thread_id: i64,
    /// Parent (None for a root).
    pub parent_id: Option<i64>,
    /// Kind.
    pub kind: &'a str,
    /// Author.
    pub author: &'a Party,
    /// `llm` | `human`.
    pub author_kind: &'a str,
    /// Body.
    pub body: &'a str,
    /// Provenance.
    pub provenance: Option<&'a Provenance>,
    /// Evidence (dialectic acts only).
    pub evidence: Option<&'a [Evidence]>,
    /// Claim acted on (attest/refute/verify); for `assert` set later by [`set_message_claim`].
    pub claim_id: Option<i64>,
    /// Creation time.
    pub at: &'a str,
    /// Reply depth (root = 0).
    pub depth: i64,
}

/// Inserts a message and returns its id.
pub fn insert_message(conn: &Connection, m: &NewMessage<'_>) -> Result<i64, StoreError> {
    let provenance = m.provenance.map(to_json).transpose()?;
    let evidence = m.evidence.map(to_json).transpose()?;
    let mut stmt = conn.prepare_cached(
        "INSERT INTO parley_messages(thread_id, parent_id, kind, identity, extension, author_kind, body,
            provenance, evidence, claim_id, created_at, depth)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    )?;
    stmt.execute(params![
        m.thread_id,
        m.parent_id,
        m.kind,
        m.author.identity,
        m.author.extension,
        m.author_kind,
        m.body,
        provenance,
        evidence,
        m.claim_id,
        m.at,
        m.depth
    ])?;
    Ok(conn.last_insert_rowid())
}

/// Attaches the claim an `assert` created to its message.
pub fn set_message_claim(conn: &Connection, message: i64, claim: i64) -> Result<(), StoreError> {
    conn.prepare_cached("UPDATE parley_messages SET claim_id = ?2 WHERE id = ?1")?
        .execute([message, claim])?;
    Ok(())
}

/// Loads a message.
pub fn get_message(conn: &Connection, id: i64) -> Result<Option<MessageRow>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {MESSAGE_COLS} FROM parley_messages WHERE id = ?1"
    ))?;
    stmt.query_row([id], message_from_row)
        .optional()?
        .transpose()
}

/// A thread's messages in creation order.
pub fn thread_messages(conn: &Connection, thread: i64) -> Result<Vec<MessageRow>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {MESSAGE_COLS} FROM parley_messages WHERE thread_id = ?1 ORDER BY id"
    ))?;
    let rows = stmt.query_map([thread], message_from_row)?;
    rows.map(|r| r?).collect()
}

// ---------------------------------------------------------------------------------------
// Events

/// A stored event (PV-ST-7, PV-DI-7).
#[derive(Debug, Clone, PartialEq)]
pub struct EventRow {
    /// Row id (`ev_N`).
    pub id: i64,
    /// `thread` | `claim`.
    pub subject: String,
    /// Thread.
    pub thread_id: i64,
    /// Claim (claim events).
    pub claim_id: Option<i64>,
    /// Previous state (None at creation).
    pub from_state: Option<String>,
    /// New state.
    pub to_state: String,
    /// `user` | `llm`.
    pub origin: String,
    /// Label of the actor.
    pub label: String,
    /// Actor party.
    pub actor: Party,
    /// Time.
    pub at: String,
    /// Confirmation time (None = proposal).
    pub confirmed_at: Option<String>,
}

/// An event to insert.
#[derive(Debug, Clone)]
pub struct NewEvent<'a> {
    /// `thread` | `claim`.
    pub subject: &'a str,
    /// Thread.
    pub thread_id: i64,
    /// Claim (claim events).
    pub claim_id: Option<i64>,
    /// Previous state.
    pub from_state: Option<&'a str>,
    /// New state.
    pub to_state: &'a str,
    /// Origin.
    pub origin: Origin,
    /// Label.
    pub label: &'a str,
    /// Actor.
    pub actor: &'a Party,
    /// Time.
    pub at: &'a str,
    /// Confirmation time.
    pub confirmed_at: Option<&'a str>,
}

const EVENT_COLS: &str = "id, subject, thread_id, claim_id, from_state, to_state, origin, label, actor_identity, actor_extension, at, confirmed_at";

fn event_from_row(r: &Row<'_>) -> rusqlite::Result<EventRow> {
    Ok(EventRow {
        id: r.get(0)?,
        subject: r.get(1)?,
        thread_id: r.get(2)?,
        claim_id: r.get(3)?,
        from_state: r.get(4)?,
        to_state: r.get(5)?,
        origin: r.get(6)?,
        label: r.get(7)?,
        actor: Party::new(r.get::<_, String>(8)?, r.get(9)?),
        at: r.get(10)?,
        confirmed_at: r.get(11)?,
    })
}

/// Inserts an event and returns the stored row.
pub fn insert_event(conn: &Connection, e: &NewEvent<'_>) -> Result<EventRow, StoreError> {
    let mut stmt = conn.prepare_cached(
        "INSERT INTO parley_events(subject, thread_id, claim_id, from_state, to_state, origin, label,
            actor_identity, actor_extension, at, confirmed_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )?;
    stmt.execute(params![
        e.subject,
        e.thread_id,
        e.claim_id,
        e.from_state,
        e.to_state,
        e.origin.as_str(),
        e.label,
        e.actor.identity,
        e.actor.extension,
        e.at,
        e.confirmed_at
    ])?;
    Ok(EventRow {
        id: conn.last_insert_rowid(),
        subject: e.subject.to_string(),
        thread_id: e.thread_id,
        claim_id: e.claim_id,
        from_state: e.from_state.map(str::to_string),
        to_state: e.to_state.to_string(),
        origin: e.origin.as_str().to_string(),
        label: e.label.to_string(),
        actor: e.actor.clone(),
        at: e.at.to_string(),
        confirmed_at: e.confirmed_at.map(str::to_string),
    })
}

/// A thread's events (thread and claim subjects) after event id `since`, in order.
pub fn thread_events(
    conn: &Connection,
    thread: i64,
    since: i64,
) -> Result<Vec<EventRow>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {EVENT_COLS} FROM parley_events WHERE thread_id = ?1 AND id > ?2 ORDER BY id"
    ))?;
    let rows = stmt.query_map([thread, since], event_from_row)?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

// ---------------------------------------------------------------------------------------
// Claims

/// A stored claim (PV-DI-7).
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimRow {
    /// Row id (`cl_N`).
    pub id: i64,
    /// Thread of the asserting message.
    pub thread_id: i64,
    /// The asserting message.
    pub message_id: i64,
    /// Author party.
    pub author: Party,
    /// Status.
    pub status: ClaimStatus,
    /// Evidence of the assert.
    pub evidence: Vec<Evidence>,
    /// Claims this one supersedes.
    pub supersedes: Vec<i64>,
    /// Newer claim superseding this one.
    pub superseded_by: Option<i64>,
    /// RFC 3339 expiry.
    pub valid_until: Option<String>,
    /// Creation time.
    pub created_at: String,
}

const CLAIM_COLS: &str = "id, thread_id, message_id, author_identity, author_extension, status, evidence, \
    supersedes, superseded_by, valid_until, created_at";

fn claim_from_row(r: &Row<'_>) -> rusqlite::Result<Result<ClaimRow, StoreError>> {
    let status: String = r.get(5)?;
    let evidence: String = r.get(6)?;
    let supersedes: String = r.get(7)?;
    let id: i64 = r.get(0)?;
    let thread_id: i64 = r.get(1)?;
    let message_id: i64 = r.get(2)?;
    let author = Party::new(r.get::<_, String>(3)?, r.get(4)?);
    let superseded_by: Option<i64> = r.get(8)?;
    let valid_until: Option<String> = r.get(9)?;
    let created_at: String = r.get(10)?;
    Ok((|| {
        Ok(ClaimRow {
            id,
            thread_id,
            message_id,
            author,
            status: ClaimStatus::parse(&status).ok_or_else(|| corrupt("claim status", &status))?,
            evidence: json_col("claim evidence", Some(evidence))?.unwrap_or_default(),
            supersedes: json_col("supersedes", Some(supersedes))?.unwrap_or_default(),
            superseded_by,
            valid_until,
            created_at,
        })
    })())
}

/// A claim to insert.
#[derive(Debug, Clone)]
pub struct NewClaim<'a> {
    /// Thread.
    pub thread_id: i64,
    /// Asserting message.
    pub message_id: i64,
    /// Author.
    pub author: &'a Party,
    /// Evidence.
    pub evidence: &'a [Evidence],
    /// Superseded claims.
    pub supersedes: &'a [i64],
    /// Expiry.
    pub valid_until: Option<&'a str>,
    /// Time.
    pub at: &'a str,
}

/// Inserts an `unverified` claim and returns its id.
pub fn insert_claim(conn: &Connection, c: &NewClaim<'_>) -> Result<i64, StoreError> {
    let mut stmt = conn.prepare_cached(
        "INSERT INTO parley_claims(thread_id, message_id, author_identity, author_extension, status, evidence,
            supersedes, valid_until, created_at)
         VALUES (?1, ?2, ?3, ?4, 'unverified', ?5, ?6, ?7, ?8)",
    )?;
    stmt.execute(params![
        c.thread_id,
        c.message_id,
        c.author.identity,
        c.author.extension,
        to_json(&c.evidence)?,
        to_json(&c.supersedes)?,
        c.valid_until,
        c.at
    ])?;
    Ok(conn.last_insert_rowid())
}

/// Loads a claim.
pub fn get_claim(conn: &Connection, id: i64) -> Result<Option<ClaimRow>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {CLAIM_COLS} FROM parley_claims WHERE id = ?1"
    ))?;
    stmt.query_row([id], claim_from_row).optional()?.transpose()
}

/// Sets a claim's status (and `superseded_by` when given).
pub fn set_claim_status(
    conn: &Connection,
    id: i64,
    status: ClaimStatus,
    superseded_by: Option<i64>,
) -> Result<(), StoreError> {
    conn.prepare_cached(
        "UPDATE parley_claims SET status = ?2, superseded_by = COALESCE(?3, superseded_by) WHERE id = ?1",
    )?
    .execute(params![id, status.as_str(), superseded_by])?;
    Ok(())
}

/// One attestation, verification or refutation.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimActRow {
    /// Row id.
    pub id: i64,
    /// Claim.
    pub claim_id: i64,
    /// The acting message.
    pub message_id: i64,
    /// `attest` | `verify` | `refute`.
    pub act: String,
    /// Who.
    pub by: Party,
    /// Evidence given with the act.
    pub evidence: Vec<Evidence>,
    /// When.
    pub at: String,
}

/// Records an act on a claim.
pub fn insert_claim_act(
    conn: &Connection,
    claim: i64,
    message: i64,
    act: &str,
    by: &Party,
    evidence: &[Evidence],
    at: &str,
) -> Result<i64, StoreError> {
    conn.prepare_cached(
        "INSERT INTO parley_claim_acts(claim_id, message_id, act, identity, extension, evidence, at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![claim, message, act, by.identity, by.extension, to_json(&evidence)?, at])?;
    Ok(conn.last_insert_rowid())
}

/// A claim's acts in order.
pub fn claim_acts(conn: &Connection, claim: i64) -> Result<Vec<ClaimActRow>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, claim_id, message_id, act, identity, extension, evidence, at
         FROM parley_claim_acts WHERE claim_id = ?1 ORDER BY id",
    )?;
    let rows = stmt.query_map([claim], |r| {
        let evidence: String = r.get(6)?;
        Ok((
            ClaimActRow {
                id: r.get(0)?,
                claim_id: r.get(1)?,
                message_id: r.get(2)?,
                act: r.get(3)?,
                by: Party::new(r.get::<_, String>(4)?, r.get(5)?),
                evidence: Vec::new(),
                at: r.get(7)?,
            },
            evidence,
        ))
    })?;
    rows.map(|r| {
        let (row, evidence) = r?;
        Ok(ClaimActRow {
            evidence: json_col("act evidence", Some(evidence))?.unwrap_or_default(),
            ..row
        })
    })
    .collect()
}

#[cfg(test)]
#[expect(clippy::unwrap_used)] // in tests a panic is the failure report
mod tests {
    use super::*;
    use crate::store::Db;
    use std::path::Path;

    /// Issue 29: the inbox's scan must not step over the threads that await nobody (they
    /// grow with every `inform`): its plan reads the partial index of awaiting threads.
    #[test]
    fn the_inbox_reads_only_threads_that_await_someone() {
        let db = Db::open(Path::new(":memory:")).unwrap();
        let plan: Vec<String> = db
            .read(|c| {
                let mut stmt = c.prepare(&format!("EXPLAIN QUERY PLAN {}", inbox_sql()))?;
                let rows = stmt.query_map(params![0, "ainotes:a", false, None::<String>], |r| {
                    r.get::<_, String>(3)
                })?;
                Ok::<_, StoreError>(rows.collect::<Result<_, _>>()?)
            })
            .unwrap();
        assert!(
            plan.iter().any(|d| d.contains("parley_threads_inbox")),
            "{plan:?}"
        );
    }

    #[test]
    fn ids_never_reused_and_roundtrip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.db");
        let creator = Party::new("ainotes:a", Some("w1".into()));
        let first = {
            let db = Db::open(&path).unwrap();
            db.write(|tx| {
                let t = insert_thread(
                    tx,
                    &NewThread {
                        state: ThreadState::Open,
                        origin: Origin::Llm,
                        confirmed_at: None,
                        label: "ainotes:a",
                        creator: &creator,
                        at: "t0",
                    },
                )?;
                let m = insert_message(
                    tx,
                    &NewMessage {
                        thread_id: t,
                        parent_id: None,
                        kind: "ask",
                        author: &creator,
                        author_kind: "llm",
                        body: "q",
                        provenance: None,
                        evidence: None,
                        claim_id: None,
                        at: "t0",
                        depth: 0,
                    },
                )?;
                record_post(
                    tx,
                    t,
                    m,
                    &Awaiting::Any {
                        except: creator.clone(),
                    },
                    "t0",
                )?;
                tx.execute("DELETE FROM parley_messages WHERE id = ?1", [m])
                    .map_err(StoreError::from)?;
                Ok::<_, StoreError>((t, m))
            })
            .unwrap()
        };
        let db = Db::open(&path).unwrap();
        let t = db.read(|c| get_thread(c, first.0)).unwrap().unwrap();
        assert_eq!(
            t.awaiting,
            Awaiting::Any {
                except: creator.clone()
            }
        );
        assert_eq!(t.creator, creator);
        assert_eq!(t.activity_seq, 1);
        let m2 = db
            .write(|tx| {
                insert_message(
                    tx,
                    &NewMessage {
                        thread_id: first.0,
                        parent_id: None,
                        kind: "ask",
                        author: &creator,
                        author_kind: "llm",
                        body: "q",
                        provenance: None,
                        evidence: None,
                        claim_id: None,
                        at: "t1",
                        depth: 0,
                    },
                )
            })
            .unwrap();
        assert!(m2 > first.1, "AUTOINCREMENT never reuses a deleted id");
        assert_eq!(
            db.write(|tx| next_activity_seq(tx)).unwrap(),
            2,
            "activity counter persists"
        );
        let _ = Path::new(":memory:");
    }
}
