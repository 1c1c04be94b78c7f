//! SQLite storage behind one small interface: an embedded file by default, `:memory:` for
//! tests, WAL journal, one transaction per write, migrations applied at startup, WAL
//! checkpoints on a thread of their own ([`checkpoint`]).
//!
//! Parley tables live in [`parley`], SSP execution tables in [`ssp`]; each module exports
//! its ordered `MIGRATIONS`. A migration is applied once and recorded by name, so ids
//! (`AUTOINCREMENT` rowids) are never reused, also across restarts.

mod checkpoint;
pub mod parley;
pub mod ssp;

use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use checkpoint::Checkpoints;

use rusqlite::{Connection, Transaction};

/// Storage failure. Never shown to clients beyond a generic 500 message.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite reported an error.
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// Stored data could not be decoded (corrupt row or JSON column).
    #[error("corrupt stored data: {0}")]
    Corrupt(String),
    /// Another handle — another server process, usually — holds the database.
    #[error(
        "{path} is in use by another process (it holds {lock}); stop that \
         reference-server or pass another --db: two servers on one database would split its state"
    )]
    InUse {
        /// The database file.
        path: std::path::PathBuf,
        /// Its lock file (named after the database's canonical path).
        lock: std::path::PathBuf,
    },
    /// The WAL checkpoint thread could not be started.
    #[error("could not start the WAL checkpoint thread: {0}")]
    Checkpointer(std::io::Error),
    /// The database file (created when missing) or its lock file could not be opened or
    /// locked.
    #[error("{}: {source}", path.display())]
    Lock {
        /// The file that failed: the database, or its `.lock` file.
        path: std::path::PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
}

/// A named schema change; applied in order, once.
pub type Migration = (&'static str, &'static str);

/// The database handle shared by the Parley service and the SSP provider.
///
/// One connection behind a mutex serves every request: SQLite serialises writers anyway,
/// and a single connection keeps every write one transaction without busy-retry loops.
/// A file database also has a checkpoint thread on a second connection, and holds
/// `<db>.lock` for as long as any clone of the handle lives.
#[derive(Clone)]
pub struct Db {
    conn: Arc<Mutex<Connection>>,
    /// Dropped before `_lock` (fields drop in order): the last handle joins the checkpoint
    /// thread, which holds both connections, before the lock is let go.
    checkpoints: Option<Arc<Checkpoints>>,
    /// Held, never read: its OS lock keeps a second server off this database.
    _lock: Option<Arc<File>>,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db").finish_non_exhaustive()
    }
}

/// The request connection, locked. A poisoned lock only means another request panicked
/// mid-call; SQLite rolled its transaction back, so the connection is still consistent and
/// usable.
pub(super) fn lock_connection(m: &Mutex<Connection>) -> MutexGuard<'_, Connection> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Takes the OS lock of `<path>.lock` now and keeps it with the returned file: the lock dies
/// with the process (a `kill -9` leaves nothing stale behind). No wait: a held lock is
/// reported at once. (SQLite's own exclusive locking mode did this before, but it also
/// shuts out the checkpoint thread's connection.) The lock file is named after the
/// database's canonical path, so a symbolic link to the same database finds the same lock
/// (a hard link does not: that one is not covered). The database file is created first when
/// missing (SQLite takes an empty file for an empty database); it is closed again before
/// SQLite opens it, so no POSIX lock of SQLite's is released by that close.
fn lock_exclusively(path: &Path) -> Result<File, StoreError> {
    let failed = |source| StoreError::Lock {
        path: path.to_owned(),
        source,
    };
    drop(
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(failed)?,
    );
    let mut name = std::fs::canonicalize(path)
        .map_err(failed)?
        .into_os_string();
    name.push(".lock");
    let name = std::path::PathBuf::from(name);
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&name)
        .map_err(|source| StoreError::Lock {
            path: name.clone(),
            source,
        })?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(TryLockError::WouldBlock) => Err(StoreError::InUse {
            path: path.to_owned(),
            lock: name,
        }),
        Err(TryLockError::Error(e)) => Err(failed(e)),
    }
}

impl Db {
    /// Opens (or creates) the database at `path` (`:memory:` for a private in-memory one)
    /// and applies every pending migration.
    ///
    /// A file database is held exclusively for the life of the handle: a second process (or
    /// a second `open` of the same file) gets [`StoreError::InUse`] at once, never a silent
    /// split where both mark each other's executions failed and quotas double.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let memory = path.as_os_str() == ":memory:";
        let (conn, lock) = if memory {
            (Connection::open_in_memory()?, None)
        } else {
            let lock = lock_exclusively(path)?;
            (Connection::open(path)?, Some(Arc::new(lock)))
        };
        // WAL + synchronous=NORMAL: a committed transaction survives a process kill
        // (kill -9); only an OS crash may lose the last commits.
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        if !memory {
            // Checkpoints run on their own thread (`checkpoint`), never in a request's commit.
            conn.pragma_update(None, "wal_autocheckpoint", 0)?;
            // A WAL file grown by a burst is cut back when it starts over.
            conn.pragma_update(None, "journal_size_limit", 64 << 20)?;
        }
        let mut db = Self {
            conn: Arc::new(Mutex::new(conn)),
            checkpoints: None,
            _lock: lock,
        };
        db.migrate()?;
        if !memory {
            db.checkpoints = Some(Arc::new(Checkpoints::start(path, Arc::clone(&db.conn))?));
        }
        Ok(db)
    }

    fn migrate(&self) -> Result<(), StoreError> {
        self.write(|tx| {
            tx.execute_batch(
                "CREATE TABLE IF NOT EXISTS schema_migrations (
                    name TEXT PRIMARY KEY, applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)",
            )?;
            let mut applied = false;
            for (name, sql) in parley::MIGRATIONS.iter().chain(ssp::MIGRATIONS) {
                let done: bool = tx.query_row(
                    "SELECT EXISTS(SELECT 1 FROM schema_migrations WHERE name = ?1)",
                    [name],
                    |r| r.get(0),
                )?;
                if !done {
                    tx.execute_batch(sql)?;
                    tx.execute("INSERT INTO schema_migrations(name) VALUES (?1)", [name])?;
                    applied = true;
                }
            }
            if applied {
                // A migration that edits `sqlite_schema` itself (`writable_schema`, e.g.
                // `parley_0003`) must also bump the schema version, so that every other
                // connection reloads the schema (SQLite's documented procedure); DDL bumps
                // it anyway, and one more bump is harmless.
                let version: i64 = tx.query_row("PRAGMA schema_version", [], |r| r.get(0))?;
                tx.pragma_update(None, "schema_version", version + 1)?;
            }
            Ok(())
        })
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        lock_connection(&self.conn)
    }

    /// Runs `f` in one IMMEDIATE transaction, committed iff `f` returns `Ok`.
    pub fn write<T, E>(&self, f: impl FnOnce(&Transaction<'_>) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        let mut conn = self.lock();
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(StoreError::from)?;
        let out = f(&tx)?;
        tx.commit().map_err(StoreError::from)?;
        drop(conn);
        if let Some(c) = &self.checkpoints {
            c.committed();
        }
        Ok(out)
    }

    /// Runs `f` against the connection for reads (one consistent snapshot per call).
    pub fn read<T, E>(&self, f: impl FnOnce(&Connection) -> Result<T, E>) -> Result<T, E> {
        let conn = self.lock();
        f(&conn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_database_is_held_exclusively() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let path = dir.path().join("one.db");
        let first = Db::open(&path).unwrap_or_else(|e| panic!("first open: {e}"));
        match Db::open(&path) {
            Err(StoreError::InUse { path: p, lock }) => {
                assert_eq!(p, path);
                assert!(lock.ends_with("one.db.lock"), "{lock:?}");
            }
            other => panic!("second open must be refused, got {other:?}"),
        }
        drop(first);
        // Released with the handle (and with the process: an OS file lock).
        Db::open(&path).unwrap_or_else(|e| panic!("reopen after close: {e}"));
    }

    /// Requests never checkpoint; the checkpoint thread does, after `checkpoint::EVERY`
    /// commits, and what it copies reaches the database file.
    #[test]
    fn checkpoints_run_on_their_own_thread() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let path = dir.path().join("cp.db");
        let db = Db::open(&path).unwrap_or_else(|e| panic!("open: {e}"));
        let auto: i64 = db
            .read(|c| c.query_row("PRAGMA wal_autocheckpoint", [], |r| r.get(0)))
            .unwrap_or_else(|e: rusqlite::Error| panic!("pragma: {e}"));
        assert_eq!(auto, 0, "the request connection must never checkpoint");
        let file_len = || std::fs::metadata(&path).map_or(0, |m| m.len());
        let before = file_len();
        let Some(cp) = db.checkpoints.clone() else {
            panic!("a file database has a checkpoint thread")
        };
        let insert = |i: u64| {
            db.write(|tx| {
                tx.execute("CREATE TABLE IF NOT EXISTS t (x)", [])?;
                tx.execute("INSERT INTO t VALUES (?1)", [i as i64])
                    .map_err(StoreError::from)
            })
            .unwrap_or_else(|e| panic!("write: {e}"));
        };
        for i in 1..checkpoint::EVERY {
            insert(i);
        }
        assert!(
            !cp.wait_done(1, std::time::Duration::ZERO),
            "no checkpoint before the {}th commit",
            checkpoint::EVERY
        );
        insert(checkpoint::EVERY);
        assert!(
            cp.wait_done(1, std::time::Duration::from_secs(30)),
            "the checkpoint thread did not run within 30 s"
        );
        assert!(
            file_len() > before,
            "the checkpoint copied nothing into {path:?}"
        );
    }

    /// `parley_0003` and `ssp_0003`: the constant-list CHECKs became comparisons that allow
    /// the same values (an IN list is rebuilt per row written), on a file database migrated
    /// from the first schemas; the schema stays sound and a value outside a list is refused.
    #[test]
    fn constant_list_checks_are_comparisons() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let db = Db::open(&dir.path().join("checks.db")).unwrap_or_else(|e| panic!("open: {e}"));
        let schema: Vec<String> = db
            .read(|c| {
                let mut stmt = c.prepare("SELECT sql FROM sqlite_schema WHERE type = 'table'")?;
                let rows = stmt.query_map([], |r| r.get(0))?;
                rows.collect::<Result<Vec<_>, rusqlite::Error>>()
            })
            .unwrap_or_else(|e| panic!("schema: {e}"));
        let checks: Vec<&str> = schema
            .iter()
            .flat_map(|sql| sql.lines().filter(|l| l.contains("CHECK")))
            .map(str::trim)
            .collect();
        assert_eq!(checks.len(), 4, "{checks:?}");
        assert!(checks.iter().all(|c| !c.contains(" IN (")), "{checks:?}");
        let ok: String = db
            .read(|c| c.query_row("PRAGMA integrity_check", [], |r| r.get(0)))
            .unwrap_or_else(|e: rusqlite::Error| panic!("integrity_check: {e}"));
        assert_eq!(ok, "ok");
        let thread = |mode: &str| {
            format!(
                "INSERT INTO parley_threads(state, state_origin, state_label, creator_identity, \
                 awaiting_mode, created_at, last_activity_at, activity_seq) \
                 VALUES ('open', 'x', 'x', 'x', '{mode}', 'x', 'x', 0)"
            )
        };
        let event = |subject: &str| {
            format!(
                "INSERT INTO parley_events(subject, thread_id, to_state, origin, label, \
                 actor_identity, at) VALUES ('{subject}', 1, 'x', 'x', 'x', 'x', 'x')"
            )
        };
        let execution = |id: &str, status: &str| {
            format!(
                "INSERT INTO ssp_executions(id, skill_id, status, inputs, created_at, updated_at) \
                 VALUES ('{id}', 's', '{status}', '{{}}', 'x', 'x')"
            )
        };
        for (sql, refused) in [
            (thread("bogus"), true),
            (thread("party"), false),
            (event("bogus"), true),
            (event("claim"), false),
            (execution("e1", "bogus"), true),
            (execution("e2", "timeout"), false),
        ] {
            let got = db.write(|tx| tx.execute(&sql, []).map_err(StoreError::from));
            assert_eq!(got.is_err(), refused, "{sql}: {got:?}");
        }
    }

    #[test]
    fn memory_databases_are_independent() {
        let a = Db::open(Path::new(":memory:"));
        let b = Db::open(Path::new(":memory:"));
        assert!(a.is_ok() && b.is_ok());
    }
}
