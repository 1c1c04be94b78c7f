//! SQLite storage behind one small interface: an embedded file by default, `:memory:` for
//! tests, WAL journal, one transaction per write, migrations applied at startup.
//!
//! Parley tables live in [`parley`], SSP execution tables in [`ssp`]; each module exports
//! its ordered `MIGRATIONS`. A migration is applied once and recorded by name, so ids
//! (`AUTOINCREMENT` rowids) are never reused, also across restarts.

pub mod parley;
pub mod ssp;

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

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
    /// Another connection — another server process, usually — holds the database.
    #[error(
        "{path} is in use by another process (it holds SQLite's exclusive lock); stop that \
         reference-server or pass another --db: two servers on one database would split its state"
    )]
    InUse {
        /// The database file.
        path: std::path::PathBuf,
    },
}

/// A named schema change; applied in order, once.
pub type Migration = (&'static str, &'static str);

/// The database handle shared by the Parley service and the SSP provider.
///
/// One connection behind a mutex: SQLite serialises writers anyway, and a single
/// connection keeps every write one transaction without busy-retry loops.
#[derive(Clone)]
pub struct Db {
    conn: Arc<Mutex<Connection>>,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db").finish_non_exhaustive()
    }
}

/// Takes SQLite's exclusive lock now and keeps it (`locking_mode=EXCLUSIVE`): the lock is
/// the operating system's file lock, so it dies with the process (a `kill -9` leaves nothing
/// stale behind). No busy wait: a held lock is reported at once.
fn lock_exclusively(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    conn.busy_timeout(std::time::Duration::ZERO)?;
    let taken = conn
        .pragma_update(None, "locking_mode", "EXCLUSIVE")
        .and_then(|()| conn.execute_batch("BEGIN EXCLUSIVE; COMMIT;"));
    match taken {
        Ok(()) => Ok(()),
        Err(rusqlite::Error::SqliteFailure(e, _))
            if matches!(
                e.code,
                rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
            ) =>
        {
            Err(StoreError::InUse {
                path: path.to_owned(),
            })
        }
        Err(e) => Err(e.into()),
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
        let conn = if path.as_os_str() == ":memory:" {
            Connection::open_in_memory()?
        } else {
            let conn = Connection::open(path)?;
            lock_exclusively(&conn, path)?;
            conn
        };
        // WAL + synchronous=NORMAL: a committed transaction survives a process kill
        // (kill -9); only an OS crash may lose the last commits.
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        let db = Self {
            conn: Arc::new(Mutex::new(conn)),
        };
        db.migrate()?;
        Ok(db)
    }

    fn migrate(&self) -> Result<(), StoreError> {
        self.write(|tx| {
            tx.execute_batch(
                "CREATE TABLE IF NOT EXISTS schema_migrations (
                    name TEXT PRIMARY KEY, applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)",
            )?;
            for (name, sql) in parley::MIGRATIONS.iter().chain(ssp::MIGRATIONS) {
                let done: bool = tx.query_row(
                    "SELECT EXISTS(SELECT 1 FROM schema_migrations WHERE name = ?1)",
                    [name],
                    |r| r.get(0),
                )?;
                if !done {
                    tx.execute_batch(sql)?;
                    tx.execute("INSERT INTO schema_migrations(name) VALUES (?1)", [name])?;
                }
            }
            Ok(())
        })
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        // A poisoned lock only means another request panicked mid-call; SQLite rolled its
        // transaction back, so the connection is still consistent and usable.
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
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
            Err(StoreError::InUse { path: p }) => assert_eq!(p, path),
            other => panic!("second open must be refused, got {other:?}"),
        }
        drop(first);
        // Released with the handle (and with the process: an OS file lock).
        Db::open(&path).unwrap_or_else(|e| panic!("reopen after close: {e}"));
    }

    #[test]
    fn memory_databases_are_independent() {
        let a = Db::open(Path::new(":memory:"));
        let b = Db::open(Path::new(":memory:"));
        assert!(a.is_ok() && b.is_ok());
    }
}
