//! WAL checkpoints off the request path (issue 29, post latency).
//!
//! SQLite's automatic checkpoint runs inside the commit that crosses its threshold: that
//! request copies the WAL into the database file and waits for two fsyncs while holding
//! the one connection, so every request queued behind it waits too. Measured with 32
//! clients (server pinned to one core): post p99 11.2–11.5 ms with the automatic
//! checkpoint, 6.8–9.3 ms without any (both with the service gate).
//!
//! The request connection therefore never checkpoints (`wal_autocheckpoint = 0`). A thread
//! of its own, on a second connection, runs a PASSIVE checkpoint after every [`EVERY`]
//! commits, which copies frames while requests keep reading and committing. That alone
//! never lets the WAL start over under steady writes: SQLite rewinds it only when every
//! frame was copied, and commits land during each checkpoint (measured: 2.5 GB of WAL after
//! 64,000 posts). So once the WAL holds more than [`REWIND_FRAMES`], the thread copies the
//! few frames written meanwhile with requests held off (the request connection's lock),
//! and the next commit starts the WAL over. Durability is unchanged: a commit is durable
//! against a process kill once it is in the WAL, before and after this change.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Condvar, Mutex};

use rusqlite::Connection;

use super::StoreError;

/// Commits between two checkpoint requests: about 900 WAL pages of posts, near SQLite's
/// own automatic threshold (1,000 pages).
pub(super) const EVERY: u64 = 100;

/// WAL frames (pages) past which the thread makes the WAL start over: about 450 posts'
/// worth, 16 MiB of 4 KiB pages.
const REWIND_FRAMES: i64 = 4096;

/// Checkpoints completed, with a signal for each.
type Done = (Mutex<u64>, Condvar);

/// The request side: counts commits and wakes the checkpoint thread.
#[derive(Debug)]
pub(super) struct Checkpoints {
    commits: AtomicU64,
    /// `None` once dropped ([`Drop`]: the thread then ends).
    wake: Option<SyncSender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// Checkpoints completed (the tests wait on it).
    #[cfg_attr(not(test), expect(dead_code, reason = "only the tests wait on it"))]
    done: Arc<Done>,
}

impl Checkpoints {
    /// Starts the checkpoint thread on its own connection to `path`. The thread ends when
    /// the last [`Checkpoints`] (the last clone of the database handle) is dropped.
    pub(super) fn start(path: &Path, requests: Arc<Mutex<Connection>>) -> Result<Self, StoreError> {
        let conn = Connection::open(path)?;
        // The request connection may hold the write lock briefly; a checkpoint waits for it.
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        let (wake, asked) = sync_channel(1);
        let done = Arc::new((Mutex::new(0), Condvar::new()));
        let signal = Arc::clone(&done);
        let thread = std::thread::Builder::new()
            .name("wal-checkpoint".into())
            .spawn(move || run(&conn, &requests, &asked, &signal))
            .map_err(StoreError::Checkpointer)?;
        Ok(Self {
            commits: AtomicU64::new(0),
            wake: Some(wake),
            thread: Some(thread),
            done,
        })
    }

    /// Counts one commit; every [`EVERY`]th asks for a checkpoint (never waits: a request
    /// already pending covers this one too).
    pub(super) fn committed(&self) {
        if !(self.commits.fetch_add(1, Ordering::Relaxed) + 1).is_multiple_of(EVERY) {
            return;
        }
        let Some(wake) = &self.wake else {
            return;
        };
        match wake.try_send(()) {
            Ok(()) | Err(TrySendError::Full(())) => {}
            Err(TrySendError::Disconnected(())) => {
                tracing::warn!("the WAL checkpoint thread is gone; the WAL grows until restart");
            }
        }
    }

    /// Waits until `n` checkpoints have completed, at most `timeout`; whether they had.
    #[cfg(test)]
    pub(super) fn wait_done(&self, n: u64, timeout: std::time::Duration) -> bool {
        let (count, cv) = &*self.done;
        let Ok(guard) = count.lock() else {
            return false;
        };
        cv.wait_timeout_while(guard, timeout, |c| *c < n)
            .is_ok_and(|(c, _)| *c >= n)
    }
}

impl Drop for Checkpoints {
    /// Ends the thread and waits for it (at most one checkpoint that had been asked for),
    /// so that it holds no connection once the handle is gone.
    fn drop(&mut self) {
        drop(self.wake.take());
        if let Some(t) = self.thread.take()
            && t.join().is_err()
        {
            tracing::warn!("the WAL checkpoint thread panicked");
        }
    }
}

/// The checkpoint thread: one PASSIVE checkpoint per request, and the WAL's rewind when it
/// has grown past [`REWIND_FRAMES`], until the handle is dropped.
fn run(own: &Connection, requests: &Mutex<Connection>, asked: &Receiver<()>, done: &Done) {
    while asked.recv().is_ok() {
        if let Some(frames) = passive(own)
            && frames > REWIND_FRAMES
        {
            let held = super::lock_connection(requests);
            passive(&held);
        }
        if let Ok(mut n) = done.0.lock() {
            *n += 1;
            done.1.notify_all();
        }
    }
}

/// One PASSIVE checkpoint on `conn` (copies what it can without waiting for readers or the
/// writer): the frames the WAL holds, or `None` when it failed (logged; the next request
/// tries again).
fn passive(conn: &Connection) -> Option<i64> {
    let result = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| {
        Ok((r.get::<_, i64>(1)?, r.get::<_, i64>(2)?))
    });
    match result {
        Ok((frames, copied)) => {
            tracing::trace!(frames, copied, "WAL checkpoint");
            Some(frames)
        }
        Err(e) => {
            tracing::warn!(%e, "WAL checkpoint failed; tried again after the next commits");
            None
        }
    }
}
