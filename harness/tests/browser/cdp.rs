//! A headless Chromium driven over the DevTools protocol, with the few lines of WebSocket
//! (RFC 6455 client frames) the protocol needs: no browser-automation crate to build.
//!
//! Every wait is bounded: the browser's "DevTools listening" line is awaited with a timeout,
//! socket reads time out, and the process is killed when the [`Browser`] is dropped.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long any one wait may take.
const TIMEOUT: Duration = Duration::from_secs(40);

/// A running headless Chromium and a DevTools session on one page.
pub(crate) struct Browser {
    child: Child,
    ws: Ws,
    next_id: u64,
    /// Events received while waiting for command replies.
    pub events: Vec<Value>,
    session: String,
    _profile: tempfile::TempDir,
}

impl Drop for Browser {
    fn drop(&mut self) {
        // Kill by the handle we spawned; a browser already gone is fine.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Browser {
    /// Starts `chromium` headless with a fresh profile and opens one page of
    /// `width`×`height` CSS pixels with the runtime, log and page domains enabled.
    pub(crate) fn launch(chromium: &Path, width: u32, height: u32) -> Result<Self, String> {
        let profile = tempfile::tempdir().map_err(|e| format!("profile dir: {e}"))?;
        let mut child = Command::new(chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--disable-quic",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--hide-scrollbars",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                &format!("--window-size={width},{height}"),
                &format!("--user-data-dir={}", profile.path().display()),
                "about:blank",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("spawn {}: {e}", chromium.display()))?;
        let url = match devtools_url(&mut child) {
            Ok(u) => u,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(e);
            }
        };
        let ws = Ws::connect(&url)?;
        let mut b = Self {
            child,
            ws,
            next_id: 0,
            events: Vec::new(),
            session: String::new(),
            _profile: profile,
        };
        b.open_page(width, height)?;
        Ok(b)
    }

    fn open_page(&mut self, width: u32, height: u32) -> Result<(), String> {
        let target = self.call_on(None, "Target.createTarget", json!({"url": "about:blank"}))?;
        let target_id = target["targetId"].clone();
        let attached = self.call_on(
            None,
            "Target.attachToTarget",
            json!({"targetId": target_id, "flatten": true}),
        )?;
        self.session = attached["sessionId"]
            .as_str()
            .ok_or("attachToTarget: no sessionId")?
            .to_string();
        for domain in ["Runtime.enable", "Log.enable", "Page.enable"] {
            self.call(domain, json!({}))?;
        }
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}),
        )?;
        Ok(())
    }

    /// Navigates the page and waits for its `load` event.
    pub(crate) fn navigate(&mut self, url: &str) -> Result<(), String> {
        self.events.clear();
        let r = self.call("Page.navigate", json!({"url": url}))?;
        if let Some(e) = r.get("errorText") {
            return Err(format!("navigate {url}: {e}"));
        }
        self.wait_event("Page.loadEventFired")
    }

    /// Evaluates a JavaScript expression in the page and returns its value (JSON).
    pub(crate) fn eval(&mut self, expr: &str) -> Result<Value, String> {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
        )?;
        if let Some(e) = r.get("exceptionDetails") {
            return Err(format!("evaluate {expr}: {e}"));
        }
        Ok(r["result"]["value"].clone())
    }

    /// A PNG of the viewport.
    pub(crate) fn screenshot(&mut self) -> Result<Vec<u8>, String> {
        use base64::Engine as _;
        let r = self.call("Page.captureScreenshot", json!({"format": "png"}))?;
        let data = r["data"].as_str().ok_or("captureScreenshot: no data")?;
        base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|e| format!("screenshot base64: {e}"))
    }

    /// Console errors, uncaught exceptions and error log entries seen since the last
    /// navigation, one line each.
    pub(crate) fn errors(&self) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|e| {
                let p = &e["params"];
                match e["method"].as_str()? {
                    "Runtime.exceptionThrown" => {
                        let d = &p["exceptionDetails"];
                        let what = d["exception"]["description"].as_str().unwrap_or_default();
                        Some(format!(
                            "exception: {} {what} (line {})",
                            d["text"], d["lineNumber"]
                        ))
                    }
                    "Runtime.consoleAPICalled"
                        if matches!(p["type"].as_str(), Some("error" | "assert")) =>
                    {
                        Some(format!("console.{}: {}", p["type"], p["args"]))
                    }
                    "Log.entryAdded" if p["entry"]["level"] == "error" => {
                        Some(format!("log: {}", p["entry"]))
                    }
                    _ => None,
                }
            })
            .collect()
    }

    /// A command on the page session.
    pub(crate) fn call(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let session = self.session.clone();
        self.call_on(Some(&session), method, params)
    }

    fn call_on(
        &mut self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, String> {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session.filter(|s| !s.is_empty()) {
            msg["sessionId"] = json!(s);
        }
        self.ws.send(&msg.to_string())?;
        let deadline = Instant::now() + TIMEOUT;
        while Instant::now() < deadline {
            let m = self.recv()?;
            if m["id"] == json!(id) {
                if let Some(e) = m.get("error") {
                    return Err(format!("{method}: {e}"));
                }
                return Ok(m["result"].clone());
            }
            self.events.push(m);
        }
        Err(format!("{method}: no reply within {TIMEOUT:?}"))
    }

    fn wait_event(&mut self, method: &str) -> Result<(), String> {
        let deadline = Instant::now() + TIMEOUT;
        while !self.events.iter().any(|e| e["method"] == method) {
            if Instant::now() >= deadline {
                return Err(format!("no {method} within {TIMEOUT:?}"));
            }
            let m = self.recv()?;
            self.events.push(m);
        }
        Ok(())
    }

    fn recv(&mut self) -> Result<Value, String> {
        let text = self.ws.recv()?;
        serde_json::from_str(&text).map_err(|e| format!("DevTools message: {e}: {text}"))
    }
}

/// Reads the browser's stderr until it prints its DevTools WebSocket URL.
fn devtools_url(child: &mut Child) -> Result<String, String> {
    let stderr = child.stderr.take().ok_or("no stderr")?;
    let (tx, rx) = mpsc::channel();
    // The reader thread keeps draining stderr after the URL so the browser never blocks on
    // a full pipe; it ends when the browser exits.
    std::thread::spawn(move || {
        let mut sent = false;
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if let (false, Some(at)) = (sent, line.find("ws://")) {
                sent = tx.send(line[at..].trim().to_string()).is_ok();
            }
        }
    });
    rx.recv_timeout(TIMEOUT)
        .map_err(|e| format!("chromium printed no DevTools URL within {TIMEOUT:?}: {e}"))
}

/// A WebSocket client connection (text frames only; what DevTools speaks).
struct Ws {
    stream: TcpStream,
}

impl Ws {
    fn connect(url: &str) -> Result<Self, String> {
        let rest = url.strip_prefix("ws://").ok_or("not a ws:// URL")?;
        let (host, path) = rest.split_at(rest.find('/').ok_or("no path in the ws URL")?);
        let mut stream = TcpStream::connect(host).map_err(|e| format!("connect {host}: {e}"))?;
        stream
            .set_read_timeout(Some(TIMEOUT))
            .map_err(|e| e.to_string())?;
        let req = format!(
            "GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        );
        stream
            .write_all(req.as_bytes())
            .map_err(|e| e.to_string())?;
        // Read the handshake reply byte by byte so no frame byte is consumed with it.
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            stream.read_exact(&mut byte).map_err(|e| e.to_string())?;
            head.push(byte[0]);
            if head.len() > 16 * 1024 {
                return Err("handshake reply too long".into());
            }
        }
        let head = String::from_utf8_lossy(&head);
        if !head.starts_with("HTTP/1.1 101") {
            return Err(format!("WebSocket handshake refused: {head}"));
        }
        Ok(Self { stream })
    }

    fn send(&mut self, text: &str) -> Result<(), String> {
        self.frame(0x1, text.as_bytes())
    }

    /// One client frame: FIN set, masked (clients must mask; the key need not be secret here).
    fn frame(&mut self, opcode: u8, payload: &[u8]) -> Result<(), String> {
        let mask = [0x5a, 0x13, 0xc7, 0x2e];
        let mut f = vec![0x80 | opcode];
        match payload.len() {
            n if n < 126 => f.push(0x80 | n as u8),
            n if n <= 0xffff => {
                f.push(0x80 | 126);
                f.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                f.push(0x80 | 127);
                f.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        f.extend_from_slice(&mask);
        f.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        self.stream
            .write_all(&f)
            .map_err(|e| format!("ws write: {e}"))
    }

    /// The next whole text message (fragments joined; pings answered).
    fn recv(&mut self) -> Result<String, String> {
        let mut message = Vec::new();
        loop {
            let mut h = [0u8; 2];
            self.read(&mut h)?;
            let (fin, opcode) = (h[0] & 0x80 != 0, h[0] & 0x0f);
            let len = match h[1] & 0x7f {
                126 => {
                    let mut b = [0u8; 2];
                    self.read(&mut b)?;
                    u64::from(u16::from_be_bytes(b))
                }
                127 => {
                    let mut b = [0u8; 8];
                    self.read(&mut b)?;
                    u64::from_be_bytes(b)
                }
                n => u64::from(n),
            };
            let mut mask = None;
            if h[1] & 0x80 != 0 {
                let mut m = [0u8; 4];
                self.read(&mut m)?;
                mask = Some(m);
            }
            let len = usize::try_from(len).map_err(|e| e.to_string())?;
            let mut payload = vec![0u8; len];
            self.read(&mut payload)?;
            if let Some(m) = mask {
                payload
                    .iter_mut()
                    .enumerate()
                    .for_each(|(i, b)| *b ^= m[i % 4]);
            }
            match opcode {
                0x8 => return Err("the browser closed the DevTools connection".into()),
                0x9 => self.frame(0xa, &payload)?,
                0xa => {}
                _ => {
                    message.extend_from_slice(&payload);
                    if fin {
                        return String::from_utf8(message).map_err(|e| e.to_string());
                    }
                }
            }
        }
    }

    fn read(&mut self, buf: &mut [u8]) -> Result<(), String> {
        self.stream
            .read_exact(buf)
            .map_err(|e| format!("ws read: {e}"))
    }
}
