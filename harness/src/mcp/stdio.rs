//! The stdio transport: the server as a child process reading newline-delimited JSON-RPC on
//! stdin and writing only JSON-RPC messages on stdout (MCP 2025-11-25 basic/transports
//! §stdio). Every line sent and every line read is recorded as a `STDIO` exchange whose
//! reproduction pipes the line into the command.
//!
//! Every read is bounded by the run's timeout, and the child is killed when the check ends.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::profile::McpProfile;
use crate::engine::finding::{Finding, Step};
use crate::engine::repro::{STDIO_METHOD, shell_quote};
use crate::transport::{Exchange, TransportKind};

/// Bytes of one stdout line kept at most (a server writing an endless line is cut there).
const LINE_CAP: usize = 1 << 20;

/// A running stdio server.
pub struct StdioServer {
    _child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
    command: String,
    timeout: Duration,
    /// Lines read that were not JSON-RPC messages (MCP-ST-1).
    pub noise: Vec<String>,
}

impl StdioServer {
    /// Starts `[mcp] stdio_command`; `n/a` when the profile names none.
    pub fn spawn(profile: &McpProfile, timeout: Duration) -> Step<Self> {
        let Some(argv) = profile.stdio_command.as_ref().filter(|a| !a.is_empty()) else {
            return Err(Finding::unsupported(
                "n/a: the profile names no [mcp] stdio_command: the server offers no stdio \
                 transport (an MCP server may offer Streamable HTTP only)",
            ));
        };
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .envs(&profile.stdio_env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        let command = argv
            .iter()
            .map(|a| shell_quote(a))
            .collect::<Vec<_>>()
            .join(" ");
        let mut child = cmd.spawn().map_err(|e| {
            Finding::harness(format!("starting [mcp] stdio_command {command}: {e}"))
        })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(Finding::harness(
                "the stdio command's pipes were not opened",
            ));
        };
        Ok(Self {
            _child: child,
            stdin,
            stdout: BufReader::new(stdout).lines(),
            command,
            timeout,
            noise: Vec::new(),
        })
    }

    fn exchange(
        &self,
        sent: &str,
        read: &[String],
        error: Option<String>,
        started: Instant,
    ) -> Exchange {
        Exchange {
            transport: TransportKind::Mcp,
            method: STDIO_METHOD.into(),
            url: self.command.clone(),
            request_headers: Vec::new(),
            request_body: Some(sent.to_string()),
            status: None,
            response_headers: Vec::new(),
            response_body: Some(read.join("\n")),
            error,
            elapsed_us: u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
            resent_after: None,
        }
    }

    /// Writes `line`, then, when `id` is given, reads lines until the response with that id
    /// (non-JSON-RPC lines go to [`StdioServer::noise`]). Records one exchange in `log`.
    pub async fn send(
        &mut self,
        line: &str,
        id: Option<u64>,
        log: &mut Vec<Exchange>,
    ) -> Step<Option<Value>> {
        let started = Instant::now();
        let mut read = Vec::new();
        let outcome = self.exchange_lines(line, id, &mut read).await;
        let error = outcome.as_ref().err().map(|f| f.message.clone());
        log.push(self.exchange(line, &read, error, started));
        outcome
    }

    async fn exchange_lines(
        &mut self,
        line: &str,
        id: Option<u64>,
        read: &mut Vec<String>,
    ) -> Step<Option<Value>> {
        let write = async {
            self.stdin.write_all(line.as_bytes()).await?;
            self.stdin.write_all(b"\n").await?;
            self.stdin.flush().await
        };
        write.await.map_err(|e| {
            Finding::fail(
                "",
                json!("the line is read"),
                json!(e.to_string()),
                format!("writing to the server's stdin: {e}"),
            )
        })?;
        let Some(id) = id else {
            return Ok(None);
        };
        let deadline = Instant::now() + self.timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let next = tokio::time::timeout(left, self.stdout.next_line()).await;
            let text = match next {
                Err(_) => {
                    return Err(Finding::fail(
                        "",
                        json!(format!("a response with id {id}")),
                        json!(read),
                        format!(
                            "no response with id {id} on stdout within {} ms (the run's per-request timeout, timeout_ms × --time-scale)",
                            self.timeout.as_millis()
                        ),
                    ));
                }
                Ok(Err(e)) => {
                    return Err(Finding::fail(
                        "",
                        json!("UTF-8 lines"),
                        json!(e.to_string()),
                        format!("reading the server's stdout: {e}"),
                    ));
                }
                Ok(Ok(None)) => {
                    return Err(Finding::fail(
                        "",
                        json!(format!("a response with id {id}")),
                        json!(read),
                        "the server closed stdout (exited)",
                    ));
                }
                Ok(Ok(Some(t))) => t.chars().take(LINE_CAP).collect::<String>(),
            };
            read.push(text.clone());
            let msg = serde_json::from_str::<Value>(&text)
                .ok()
                .filter(|v| v.get("jsonrpc") == Some(&json!("2.0")));
            match msg {
                None => self.noise.push(text),
                Some(m)
                    if m.get("id") == Some(&json!(id))
                        && (m.get("result").is_some() || m.get("error").is_some()) =>
                {
                    return Ok(Some(m));
                }
                Some(_) => {} // a notification or a request of the server's: allowed, read on.
            }
        }
    }
}
