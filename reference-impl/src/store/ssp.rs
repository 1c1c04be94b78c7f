//! SSP storage: the executions (SSP-INV-3, SSP-INV-6, SSP-INV-7), in SQLite and in an
//! in-memory cache of the live ones ([`Executions`]).
//!
//! One row per execution, written when it is accepted and on every status change, so an
//! execution stays readable after a restart. The status update is guarded in SQL too
//! (`WHERE status IN ('accepted','running')`): even a buggy caller cannot move a terminal
//! execution (SSP-INV-3 enforced twice, in the domain and here).

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use rusqlite::{OptionalExtension, params};

use super::{Db, StoreError};
use crate::domain::ssp::{ErrorObject, Execution, ExecutionStatus};

/// Ordered schema migrations for the SSP provider.
pub const MIGRATIONS: &[super::Migration] = &[(
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
)];

fn time_str(t: chrono::DateTime<chrono::Utc>) -> String {
    // Nanosecond precision: the row round-trips exactly.
    t.to_rfc3339_opts(chrono::SecondsFormat::Nanos, true)
}

fn parse_time(s: &str) -> Result<chrono::DateTime<chrono::Utc>, StoreError> {
    chrono::DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&chrono::Utc))
        .map_err(|e| StoreError::Corrupt(format!("timestamp {s:?}: {e}")))
}

fn json_str(v: &serde_json::Value) -> String {
    v.to_string()
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
                json_str(&e.inputs),
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
                e.output.as_ref().map(json_str),
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
        inputs: serde_json::from_str(&inputs).map_err(|e| corrupt("inputs", &e))?,
        output: output
            .map(|o| serde_json::from_str(&o))
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

/// Terminal executions beyond this many are dropped from the memory cache (they stay in
/// SQLite and are read from there).
const CACHE_MAX: usize = 20_000;

/// The executions of one provider: SQLite rows, written through, behind a memory cache
/// that holds every execution accepted by this process (status polls of live executions
/// never touch the database).
#[derive(Debug)]
pub struct Executions {
    db: Db,
    cache: Mutex<HashMap<String, Execution>>,
}

impl Executions {
    /// The executions stored in `db`.
    pub fn new(db: Db) -> Self {
        Self {
            db,
            cache: Mutex::new(HashMap::new()),
        }
    }

    fn lock_cache(&self) -> MutexGuard<'_, HashMap<String, Execution>> {
        // A poisoned lock means a panic elsewhere mid-update; the map itself is still valid.
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// [`fail_interrupted`] on this store.
    pub fn fail_interrupted(
        &self,
        error: &ErrorObject,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<usize, StoreError> {
        fail_interrupted(&self.db, error, now)
    }

    /// Stores a freshly accepted execution; `false` if its id is taken (nothing stored).
    pub fn insert(&self, e: &Execution) -> Result<bool, StoreError> {
        let fresh = insert_execution(&self.db, e)?;
        if fresh {
            self.lock_cache().insert(e.id.clone(), e.clone());
        }
        Ok(fresh)
    }

    /// One execution: from memory when live here, else from SQLite.
    pub fn get(&self, id: &str) -> Result<Option<Execution>, StoreError> {
        if let Some(e) = self.lock_cache().get(id) {
            return Ok(Some(e.clone()));
        }
        get_execution(&self.db, id)
    }

    /// Applies `change` to a live execution in memory, then writes it through.
    /// `Ok(None)`: no live execution `id` here; `Ok(Some(false))`: the stored row was
    /// already terminal (nothing written). A refused `change` leaves everything as it was.
    pub fn update<E>(
        &self,
        id: &str,
        change: impl FnOnce(&mut Execution) -> Result<(), E>,
    ) -> Result<Option<Result<bool, StoreError>>, E> {
        let updated = {
            let mut cache = self.lock_cache();
            let Some(e) = cache.get_mut(id) else {
                return Ok(None);
            };
            change(e)?;
            e.clone()
        };
        let written = update_execution(&self.db, &updated);
        if updated.status.is_terminal() {
            let mut cache = self.lock_cache();
            if cache.len() > CACHE_MAX {
                cache.remove(id);
            }
        }
        Ok(Some(written))
    }
}
