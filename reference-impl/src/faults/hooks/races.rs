//! Hooks of the races only concurrency reveals (issue 10, concurrent histories): an
//! operation that decides on what it read, then writes in a later transaction, so that
//! another request can slip in between. The window is widened by a short wait while the
//! fault is on (the service runs on blocking threads, so the wait holds no runtime worker
//! and no database lock), which makes the race bite whenever two requests are sent at once;
//! a client sending one request at a time never sees a difference.

use std::time::Duration;

use crate::faults::{Fault, Faults};

/// How long a racy operation waits between its decision and its write.
const WINDOW: Duration = Duration::from_millis(25);

/// `mark-decides-on-stale-state`: `mark` reads and decides in one transaction and writes
/// the decided change in another (check, then act).
pub(crate) fn mark_split(faults: Faults) -> bool {
    faults.is_on(Fault::MarkDecidesOnStaleState)
}

/// `post-decides-on-stale-thread`: `post` resolves its thread (state, lock, parent) from a
/// snapshot read before the write transaction.
pub(crate) fn post_on_snapshot(faults: Faults) -> bool {
    faults.is_on(Fault::PostDecidesOnStaleThread)
}

/// The widened window between a racy operation's read and its write.
pub(crate) fn window() {
    std::thread::sleep(WINDOW);
}
