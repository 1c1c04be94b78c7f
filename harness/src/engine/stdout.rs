//! Standard output for every command: a reader that went away (`conform … | head -1`) ends
//! the output quietly instead of the panic `print!` gives (issue 26, exit 101 then): this
//! and every later write succeed writing nothing, so the command finishes its work (reports
//! are written before anything is printed) and exits with its own code. Other write errors
//! are returned to the command, which reports them.

use std::io::{self, Write as _};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once standard output's reader has gone away.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes `text` to standard output (see the module docs for a closed pipe).
pub fn out(text: &str) -> io::Result<()> {
    if CLOSED.load(Ordering::Relaxed) {
        return Ok(());
    }
    let mut stdout = io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
            CLOSED.store(true, Ordering::Relaxed);
            Ok(())
        }
        r => r,
    }
}
