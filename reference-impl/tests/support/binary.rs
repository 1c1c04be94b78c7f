//! Running the real `reference-server` binary on 127.0.0.1:0 (readiness = its printed line).

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

pub(crate) struct Server {
    pub child: Child,
    pub base: String,
}

impl Server {
    /// Starts `reference-server serve --listen 127.0.0.1:0 --demo --db DB` and waits (10 s at
    /// most) for the one `listening on http://ADDR` line.
    pub(crate) fn start(db: &Path) -> Self {
        Self::serve(&[OsStr::new("--demo"), OsStr::new("--db"), db.as_os_str()])
    }

    /// Starts `reference-server serve --listen 127.0.0.1:0 ARGS…` and waits (10 s at most)
    /// for the one `listening on http://ADDR` line.
    pub(crate) fn serve(args: &[&OsStr]) -> Self {
        Self::serve_under(&[], args, Duration::from_secs(10))
    }

    /// Like [`Server::serve`], run under a command `prefix` (benches: `taskset -c 0` to pin
    /// the server to a core, `valgrind --tool=callgrind …` to profile it) that execs the
    /// server in the same process, so the pid and SIGTERM still reach the server. `ready`
    /// bounds the wait for the listening line (valgrind starts slowly).
    pub(crate) fn serve_under(prefix: &[String], args: &[&OsStr], ready: Duration) -> Self {
        let server = env!("CARGO_BIN_EXE_reference-server");
        let mut command = match prefix.split_first() {
            Some((program, rest)) => {
                let mut c = Command::new(program);
                c.args(rest).arg(server);
                c
            }
            None => Command::new(server),
        };
        let mut child = command
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(args)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn reference-server");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            if let Some(Ok(line)) = lines.next() {
                let _ = tx.send(line);
            }
            // Anything more on stdout would break the "exactly one line" contract.
            for line in lines.map_while(Result::ok) {
                eprintln!("unexpected stdout line: {line}");
            }
        });
        let line = rx
            .recv_timeout(ready)
            .unwrap_or_else(|_| panic!("listening line within {ready:?}"));
        let base = line
            .strip_prefix("listening on ")
            .expect("line format")
            .to_owned();
        assert!(
            base.starts_with("http://127.0.0.1:") && !base.ends_with(":0"),
            "{line}"
        );
        Self { child, base }
    }

    /// SIGTERM and wait (10 s at most); panics unless the server exited successfully,
    /// naming how it ended (an exit code, or the signal that killed it).
    pub(crate) fn terminate(self) {
        self.terminate_within(Duration::from_secs(10));
    }

    /// SIGTERM and wait (`within` at most: a server under valgrind still has to write its
    /// profile); panics unless the server exited successfully, naming how it ended.
    pub(crate) fn terminate_within(mut self, within: Duration) {
        let pid = self.child.id().to_string();
        let status = Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("kill");
        assert!(status.success());
        let deadline = std::time::Instant::now() + within;
        while std::time::Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                assert!(status.success(), "no clean exit on SIGTERM: {status}");
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        panic!("server did not stop within {within:?} of SIGTERM");
    }

    /// SIGKILL (no chance to flush anything) and reap.
    pub(crate) fn kill9(mut self) {
        self.child.kill().expect("SIGKILL");
        self.child.wait().expect("reap");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
