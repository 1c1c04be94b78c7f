//! SSP storage: the executions (SSP-INV-3, SSP-INV-6, SSP-INV-7), in SQLite and in a
//! byte-bounded in-memory cache of the live ones ([`Executions`]), and their retention.
//!
//! One row per execution, written when it is accepted and on every status change, so an
//! execution stays readable after a restart. The status update is guarded in SQL too
//! (`WHERE status IN ('accepted','running')`): even a buggy caller cannot move a terminal
//! execution (SSP-INV-3 enforced twice, in the domain and here).
//!
//! Memory (issue 13 §2): SQLite is the truth, the cache only spares status polls of live
//! executions a database read. It holds live executions only (a terminal one leaves it at
//! once) and at most [`Executions::max_bytes`] of them by their footprint; one that does not
//! fit is simply not cached. Retention (issue 13 §3): [`Executions::sweep`] deletes terminal
//! executions older than the maximum age and the oldest beyond the maximum count; it runs at
//! startup and on insert when due ([`Executions::sweep_if_due`]), never on a timer.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use rusqlite::{OptionalExtension, params};

use super::{Db, StoreError};
use crate::domain::ssp::{ErrorObject, Execution, ExecutionStatus, JsonText};

/// Ordered schema migrations for the SSP provider.
pub const MIGRATIONS: &[super::Migration] = &[
    (
        "ssp_0001_executions",
        "CREATE TABLE ssp_executions (
        id           TEXT PRIMARY KEY,
        skill_id     TEXT NOT NULL,
        credential   TEXT,
        status       TEXT NOT NULL
                     CHECK (status IN ('accepted','running','completed','failed','timeout')),
        inputs       TEXT NOT NULL,
        output       TEXT,
        error        TEXT,
        created_at   TEXT NOT NULL,
        updated_at   TEXT NOT NULL,
        completed_at TEXT
    );
    CREATE INDEX ssp_executions_open ON ssp_executions(status)
        WHERE status IN ('accepted','running');",
    ),
    // Retention deletes terminal executions oldest first (issue 13 §3).
    (
        "ssp_0002_retention",
        "CREATE INDEX ssp_executions_done ON ssp_executions(completed_at)
            WHERE completed_at IS NOT NULL;",
    ),
    // The status CHECK as comparisons, allowing the same values: SQLite rebuilds a constant
    // IN list's ephemeral table for every row written (`parley_0003` says how and why).
    (
        "ssp_0003_checks_as_comparisons",
        "PRAGMA writable_schema = ON;
        UPDATE sqlite_schema SET sql = replace(sql,
            'CHECK (status IN (''accepted'',''running'',''completed'',''failed'',''timeout''))',
            'CHECK (status = ''accepted'' OR status = ''running'' OR status = ''completed'' OR status = ''failed'' OR status = ''timeout'')')
            WHERE type = 'table' AND name = 'ssp_executions';
        PRAGMA writable_schema = RESET;",
    ),
];

fn time_str(t: chrono::DateTime<chrono::Utc>) -> String {
    // Nanosecond precision: the row round-trips exactly.
    t.to_rfc3339_opts(chrono::SecondsFormat::Nanos, true)
}

fn parse_time(s: &str) -> Result<chrono::DateTime<chrono::Utc>, StoreError> {
    chrono::DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&chrono::Utc))
        .map_err(|e| StoreError::Corrupt(format!("timestamp {s:?}: {e}")))
}

/// Inserts a freshly accepted execution. Returns `false` if the id already exists (the
/// caller draws another id: SSP-INV-7 uniqueness is also guaranteed by the primary key).
pub fn insert_execution(db: &Db, e: &Execution) -> Result<bool, StoreError> {
    db.write(|tx| {
        let n = tx.execute(
            "INSERT OR IGNORE INTO ssp_executions
               (id, skill_id, credential, status, inputs, output, error, created_at, updated_at, completed_at)
             VALUES (?1, ?2, ?3, ?4, ?5, NULL, NULL, ?6, ?7, NULL)",
            params![
                e.id,
                e.skill_id,
                e.credential,
                e.status.as_str(),
                e.inputs.get(),
                time_str(e.created_at),
                time_str(e.updated_at),
            ],
        )?;
        Ok::<_, StoreError>(n == 1)
    })
}

/// Stores the new state of a non-terminal execution. Returns `false` when the stored row is
/// already terminal (nothing written).
pub fn update_execution(db: &Db, e: &Execution) -> Result<bool, StoreError> {
    let error = e.error.as_ref().map(serde_json::to_string).transpose();
    let error = error.map_err(|x| StoreError::Corrupt(x.to_string()))?;
    db.write(|tx| {
        let n = tx.execute(
            "UPDATE ssp_executions
                SET status = ?2, output = ?3, error = ?4, updated_at = ?5, completed_at = ?6
              WHERE id = ?1 AND status IN ('accepted','running')",
            params![
                e.id,
                e.status.as_str(),
                e.output.as_ref().map(JsonText::get),
                error,
                time_str(e.updated_at),
                e.completed_at.map(time_str),
            ],
        )?;
        Ok::<_, StoreError>(n == 1)
    })
}

type RawRow = (
    String,
    String,
    Option<String>,
    String,
    String,
    Option<String>,
    Option<String>,
    String,
    String,
    Option<String>,
);

fn decode(r: RawRow) -> Result<Execution, StoreError> {
    let (id, skill_id, credential, status, inputs, output, error, created, updated, completed) = r;
    let corrupt =
        |what: &str, e: &dyn std::fmt::Display| StoreError::Corrupt(format!("{what}: {e}"));
    Ok(Execution {
        status: ExecutionStatus::parse(&status)
            .ok_or_else(|| StoreError::Corrupt(format!("status {status:?}")))?,
        inputs: JsonText::parse(inputs).map_err(|e| corrupt("inputs", &e))?,
        output: output
            .map(JsonText::parse)
            .transpose()
            .map_err(|e| corrupt("output", &e))?,
        error: error
            .map(|o| serde_json::from_str::<ErrorObject>(&o))
            .transpose()
            .map_err(|e| corrupt("error", &e))?,
        created_at: parse_time(&created)?,
        updated_at: parse_time(&updated)?,
        completed_at: completed.as_deref().map(parse_time).transpose()?,
        id,
        skill_id,
        credential,
    })
}

/// Reads one execution.
pub fn get_execution(db: &Db, id: &str) -> Result<Option<Execution>, StoreError> {
    let raw: Option<RawRow> = db.read(|c| {
        c.query_row(
            "SELECT id, skill_id, credential, status, inputs, output, error,
                    created_at, updated_at, completed_at
               FROM ssp_executions WHERE id = ?1",
            [id],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                    r.get(7)?,
                    r.get(8)?,
                    r.get(9)?,
                ))
            },
        )
        .optional()
        .map_err(StoreError::from)
    })?;
    raw.map(decode).transpose()
}

/// At startup: every execution left `accepted`/`running` by a previous process can no
/// longer finish; it ends `failed` with `error` (issue #3 §4) at `now`. Returns how many.
pub fn fail_interrupted(
    db: &Db,
    error: &ErrorObject,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<usize, StoreError> {
    let error = serde_json::to_string(error).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let now = time_str(now);
    db.write(|tx| {
        // max(): updated_at never goes before a previous update, even with a clock skew.
        let n = tx.execute(
            "UPDATE ssp_executions
                SET status = 'failed', error = ?1, output = NULL,
                    updated_at = max(updated_at, ?2), completed_at = max(updated_at, ?2)
              WHERE status IN ('accepted','running')",
            params![error, now],
        )?;
        Ok::<_, StoreError>(n)
    })
}

/// How long terminal executions are kept, and how many (issue 13 §3). `None`: no bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Terminal executions completed longer ago than this are deleted.
    pub max_age: Option<chrono::Duration>,
    /// At most this many terminal executions are kept (the oldest go first).
    pub max_count: Option<u64>,
}

/// Deletes the terminal executions `retention` no longer keeps at `now`. Live executions
/// are never deleted. Returns how many rows went.
pub fn delete_expired(
    db: &Db,
    retention: &Retention,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<usize, StoreError> {
    db.write(|tx| {
        let mut gone = 0;
        if let Some(age) = retention.max_age {
            // RFC 3339 with a fixed width (nanoseconds, `Z`) sorts as text in time order.
            let cutoff = time_str(now - age);
            gone += tx.execute(
                "DELETE FROM ssp_executions
                  WHERE completed_at IS NOT NULL AND completed_at < ?1",
                [cutoff],
            )?;
        }
        if let Some(max) = retention.max_count {
            let done: i64 = tx.query_row(
                "SELECT COUNT(*) FROM ssp_executions WHERE completed_at IS NOT NULL",
                [],
                |r| r.get(0),
            )?;
            let excess = done.saturating_sub(i64::try_from(max).unwrap_or(i64::MAX));
            if excess > 0 {
                gone += tx.execute(
                    "DELETE FROM ssp_executions WHERE id IN (
                       SELECT id FROM ssp_executions WHERE completed_at IS NOT NULL
                        ORDER BY completed_at, id LIMIT ?1)",
                    [excess],
                )?;
            }
        }
        Ok::<_, StoreError>(gone)
    })
}

/// A sweep runs at the first insert after this many inserts since the last one…
const SWEEP_EVERY_INSERTS: u64 = 256;
/// …or after this long since the last one, whichever comes first.
const SWEEP_EVERY: chrono::TimeDelta = chrono::TimeDelta::seconds(60);
/// What one cached entry costs beyond its strings: the `Execution` struct, the map slot
/// and the key's header, rounded up (an estimate on the safe side).
const ENTRY_OVERHEAD: usize = 320;

/// The bytes an execution holds in the cache (its strings + [`ENTRY_OVERHEAD`]); the key
/// repeats the id.
pub fn footprint(e: &Execution) -> usize {
    let error = e.error.as_ref().map_or(0, |err| {
        err.code.len()
            + err.message.len()
            + err.details.as_ref().map_or(0, |d| d.to_string().len() * 4)
    });
    ENTRY_OVERHEAD
        + 2 * e.id.len()
        + e.skill_id.len()
        + e.credential.as_ref().map_or(0, String::len)
        + e.inputs.len()
        + e.output.as_ref().map_or(0, JsonText::len)
        + error
}

/// How full the cache is (tests and logs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheUsage {
    /// Cached executions.
    pub entries: usize,
    /// Their accounted bytes.
    pub bytes: usize,
    /// The same, recomputed from the entries now (equals `bytes` unless the accounting
    /// is wrong).
    pub recomputed_bytes: usize,
    /// The bound.
    pub max_bytes: usize,
}

#[derive(Debug, Default)]
struct Cache {
    map: HashMap<String, (Execution, usize)>,
    bytes: usize,
}

impl Cache {
    fn remove(&mut self, id: &str) {
        if let Some((_, cost)) = self.map.remove(id) {
            self.bytes -= cost;
        }
    }

    /// Caches `e` (replacing any entry) if it is live and fits in `max_bytes`.
    fn put(&mut self, e: Execution, max_bytes: usize) {
        self.remove(&e.id);
        let cost = footprint(&e);
        if !e.status.is_terminal() && self.bytes + cost <= max_bytes {
            self.bytes += cost;
            self.map.insert(e.id.clone(), (e, cost));
        }
    }
}

#[derive(Debug)]
struct SweepState {
    last: Option<chrono::DateTime<chrono::Utc>>,
    inserts: u64,
}

/// The executions of one provider: SQLite rows, written through, behind a byte-bounded
/// memory cache of live executions (status polls of those never touch the database).
#[derive(Debug)]
pub struct Executions {
    db: Db,
    cache: Mutex<Cache>,
    max_bytes: usize,
    retention: Retention,
    sweep: Mutex<SweepState>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A poisoned lock means a panic elsewhere mid-update; the data itself is still valid
    // (every update below is a single insert/remove with its byte count).
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Executions {
    /// The executions stored in `db`, at most `max_bytes` of them cached, kept as
    /// `retention` says.
    pub fn new(db: Db, max_bytes: usize, retention: Retention) -> Self {
        Self {
            db,
            cache: Mutex::new(Cache::default()),
            max_bytes,
            retention,
            sweep: Mutex::new(SweepState {
                last: None,
                inserts: 0,
            }),
        }
    }

    /// The cache's bound in bytes.
    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// How full the cache is.
    pub fn usage(&self) -> CacheUsage {
        let cache = lock(&self.cache);
        CacheUsage {
            entries: cache.map.len(),
            bytes: cache.bytes,
            recomputed_bytes: cache.map.values().map(|(e, _)| footprint(e)).sum(),
            max_bytes: self.max_bytes,
        }
    }

    /// [`fail_interrupted`] on this store.
    pub fn fail_interrupted(
        &self,
        error: &ErrorObject,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<usize, StoreError> {
        fail_interrupted(&self.db, error, now)
    }

    /// Applies the retention policy at `now` (deletes expired terminal executions).
    pub fn sweep(&self, now: chrono::DateTime<chrono::Utc>) -> Result<usize, StoreError> {
        let n = delete_expired(&self.db, &self.retention, now)?;
        let mut st = lock(&self.sweep);
        st.last = Some(now);
        st.inserts = 0;
        drop(st);
        if n > 0 {
            tracing::info!(deleted = n, "ssp retention: expired executions deleted");
        }
        Ok(n)
    }

    /// Counts one insert and sweeps when due (every [`SWEEP_EVERY_INSERTS`] inserts or
    /// [`SWEEP_EVERY`], whichever first): the table's overshoot beyond the maximum count
    /// stays below that many rows.
    pub fn sweep_if_due(&self, now: chrono::DateTime<chrono::Utc>) -> Result<usize, StoreError> {
        let due = {
            let mut st = lock(&self.sweep);
            st.inserts += 1;
            st.inserts >= SWEEP_EVERY_INSERTS || st.last.is_none_or(|l| now - l >= SWEEP_EVERY)
        };
        if due { self.sweep(now) } else { Ok(0) }
    }

    /// Stores a freshly accepted execution; `false` if its id is taken (nothing stored).
    pub fn insert(&self, e: &Execution) -> Result<bool, StoreError> {
        let fresh = insert_execution(&self.db, e)?;
        if fresh {
            lock(&self.cache).put(e.clone(), self.max_bytes);
        }
        Ok(fresh)
    }

    /// One execution: from memory when cached, else from SQLite.
    pub fn get(&self, id: &str) -> Result<Option<Execution>, StoreError> {
        if let Some((e, _)) = lock(&self.cache).map.get(id) {
            return Ok(Some(e.clone()));
        }
        get_execution(&self.db, id)
    }

    /// Applies `change` to execution `id` (the cached copy, else the stored row), then
    /// writes it through. Only its runner changes an execution, so reading the row outside
    /// the cache lock cannot lose an update. `Ok(None)`: no execution `id`;
    /// `Ok(Some(false))`: the stored row was already terminal (nothing written). A refused
    /// `change` leaves everything as it was.
    pub fn update<E>(
        &self,
        id: &str,
        change: impl FnOnce(&mut Execution) -> Result<(), E>,
    ) -> Result<Option<Result<bool, StoreError>>, E> {
        let cached = lock(&self.cache).map.get(id).map(|(e, _)| e.clone());
        let current = match cached {
            Some(e) => e,
            None => match get_execution(&self.db, id) {
                Ok(Some(e)) => e,
                Ok(None) => return Ok(None),
                Err(err) => return Ok(Some(Err(err))),
            },
        };
        let mut updated = current;
        change(&mut updated)?;
        let written = update_execution(&self.db, &updated);
        let mut cache = lock(&self.cache);
        if cache.map.contains_key(id) || !updated.status.is_terminal() {
            // Live: refresh (or cache, if it fits now); terminal: leave memory.
            cache.put(updated, self.max_bytes);
        }
        Ok(Some(written))
    }
}

#[cfg(test)]
#[expect(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;
    use crate::domain::ssp::Outcome;
    use serde_json::json;

    fn at(s: i64) -> chrono::DateTime<chrono::Utc> {
        chrono::DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap()
    }

    fn exec(n: usize, inputs: &serde_json::Value, t: i64) -> Execution {
        Execution::accepted(
            format!("exec-{n:04}"),
            "conform/echo".into(),
            None,
            JsonText::from_value(inputs).unwrap(),
            at(t),
        )
    }

    fn store(max_bytes: usize, retention: Retention) -> Executions {
        let db = Db::open(std::path::Path::new(":memory:")).unwrap();
        Executions::new(db, max_bytes, retention)
    }

    const KEEP: Retention = Retention {
        max_age: None,
        max_count: None,
    };

    #[test]
    fn many_large_live_executions_stay_within_the_byte_bound() {
        // 32,000 zeros: the 64 KiB echo of issue 13 §2.
        let big = json!({ "message": "x", "metadata": { "a": vec![0; 32_000] } });
        let max = 1024 * 1024;
        let s = store(max, KEEP);
        for n in 0..200 {
            assert!(s.insert(&exec(n, &big, 0)).unwrap());
            let u = s.usage();
            assert!(u.bytes <= max, "{u:?}");
            assert_eq!(u.bytes, u.recomputed_bytes, "{u:?}");
        }
        let u = s.usage();
        // ~64 KiB each: about 15 fit, the others are read from SQLite.
        assert!(u.entries >= 10 && u.entries < 20, "{u:?}");
        assert_eq!(
            s.get("exec-0199").unwrap().unwrap().inputs.len(),
            exec(0, &big, 0).inputs.len()
        );
        // Finishing them (cached or not) empties the cache: terminal executions leave memory.
        for n in 0..200 {
            let id = format!("exec-{n:04}");
            let out = JsonText::from_value(&big).unwrap();
            let r = s.update(&id, |e| e.apply(Outcome::Completed(out), at(1)));
            assert!(matches!(r, Ok(Some(Ok(true)))), "{id}: {r:?}");
        }
        let u = s.usage();
        assert_eq!((u.entries, u.bytes, u.recomputed_bytes), (0, 0, 0));
        let done = s.get("exec-0007").unwrap().unwrap();
        assert_eq!(done.status, ExecutionStatus::Completed);
        assert_eq!(done.output.unwrap().to_value().unwrap(), big);
    }

    fn finish(s: &Executions, n: usize, t: i64) {
        assert!(s.insert(&exec(n, &json!({}), t)).unwrap());
        let out = JsonText::from_value(&json!({})).unwrap();
        let r = s.update(&format!("exec-{n:04}"), |e| {
            e.apply(Outcome::Completed(out), at(t))
        });
        assert!(matches!(r, Ok(Some(Ok(true)))));
    }

    #[test]
    fn retention_deletes_by_age_and_by_count_never_live_ones() {
        let s = store(
            1 << 20,
            Retention {
                max_age: Some(chrono::Duration::seconds(100)),
                max_count: Some(3),
            },
        );
        for n in 0..5 {
            finish(&s, n, n as i64);
        }
        assert!(s.insert(&exec(9, &json!({}), 0)).unwrap()); // live, old
        // Count: 5 terminal, keep the newest 3.
        assert_eq!(s.sweep(at(10)).unwrap(), 2);
        let ids: Vec<bool> = (0..5)
            .map(|n| s.get(&format!("exec-{n:04}")).unwrap().is_some())
            .collect();
        assert_eq!(ids, [false, false, true, true, true]);
        // Age: completed at 2..4, max age 100 s.
        assert_eq!(s.sweep(at(103)).unwrap(), 1);
        assert!(s.get("exec-0002").unwrap().is_none());
        assert!(s.get("exec-0003").unwrap().is_some());
        assert_eq!(s.sweep(at(1000)).unwrap(), 2);
        // The live one stays, whatever its age.
        assert!(s.get("exec-0009").unwrap().is_some());
    }

    #[test]
    fn sweeps_run_on_insert_when_due() {
        let s = store(
            1 << 20,
            Retention {
                max_age: None,
                max_count: Some(1),
            },
        );
        // The first insert sweeps (never swept), then not before 60 s or 256 inserts.
        assert_eq!(s.sweep_if_due(at(0)).unwrap(), 0);
        for n in 0..3 {
            finish(&s, n, 1);
        }
        assert_eq!(s.sweep_if_due(at(30)).unwrap(), 0);
        assert_eq!(s.sweep_if_due(at(61)).unwrap(), 2);
        for n in 3..6 {
            finish(&s, n, 62);
        }
        for _ in 0..SWEEP_EVERY_INSERTS - 1 {
            assert_eq!(s.sweep_if_due(at(62)).unwrap(), 0);
        }
        assert_eq!(s.sweep_if_due(at(62)).unwrap(), 3);
    }
}
