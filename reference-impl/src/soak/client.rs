//! A deliberately small HTTP/1.1 client for the soak: keep-alive, `Content-Length` and
//! chunked bodies, nothing else. Written against the raw socket so that the soak needs no
//! client library in the server binary and measures exactly one request per round trip.

use std::io;
use std::net::{IpAddr, SocketAddr};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpSocket, TcpStream};

/// Largest response body the soak accepts (read_thread of a long thread is the biggest).
const MAX_BODY: usize = 32 * 1024 * 1024;

/// One kept-alive connection.
pub(super) struct Conn {
    stream: BufReader<TcpStream>,
    /// False once the server said `Connection: close`.
    pub reusable: bool,
}

/// A response: status, `Retry-After` and body.
pub(super) struct Reply {
    pub status: u16,
    /// The `Retry-After` header, when present (the only header the soak judges).
    pub retry_after: Option<String>,
    pub body: Vec<u8>,
}

impl Reply {
    /// The body as JSON (`Null` when it is not JSON).
    pub(super) fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

/// Whether `source` can be a local end of a loopback connection here (any `127.0.0.0/8`
/// address can on Linux; elsewhere only the configured ones).
pub(super) fn bindable(source: IpAddr) -> bool {
    let socket = match source {
        IpAddr::V4(_) => TcpSocket::new_v4(),
        IpAddr::V6(_) => TcpSocket::new_v6(),
    };
    socket.is_ok_and(|s| s.bind(SocketAddr::new(source, 0)).is_ok())
}

impl Conn {
    /// Connects to `addr` (loopback only: the soak never leaves the machine).
    pub(super) async fn connect(addr: SocketAddr) -> io::Result<Self> {
        Self::connect_from(addr, None).await
    }

    /// Connects to `addr` from the local address `source` (a loopback address: the server
    /// then sees another client address), or from the default one when `None`.
    pub(super) async fn connect_from(addr: SocketAddr, source: Option<IpAddr>) -> io::Result<Self> {
        if !addr.ip().is_loopback() || source.is_some_and(|s| !s.is_loopback()) {
            return Err(io::Error::other("the soak only talks to loopback"));
        }
        let stream = match source {
            None => TcpStream::connect(addr).await?,
            Some(source) => {
                let socket = match source {
                    IpAddr::V4(_) => TcpSocket::new_v4()?,
                    IpAddr::V6(_) => TcpSocket::new_v6()?,
                };
                socket.bind(SocketAddr::new(source, 0))?;
                socket.connect(addr).await?
            }
        };
        stream.set_nodelay(true)?;
        Ok(Self {
            stream: BufReader::new(stream),
            reusable: true,
        })
    }

    /// Sends one request and reads its response. `headers` are full lines without CRLF.
    pub(super) async fn request(
        &mut self,
        method: &str,
        path: &str,
        headers: &[&str],
        body: Option<&[u8]>,
    ) -> io::Result<Reply> {
        let mut head = format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n");
        for h in headers {
            head.push_str(h);
            head.push_str("\r\n");
        }
        if let Some(body) = body {
            head.push_str(&format!(
                "Content-Type: application/json\r\nContent-Length: {}\r\n",
                body.len()
            ));
        }
        head.push_str("\r\n");
        let mut out = head.into_bytes();
        out.extend_from_slice(body.unwrap_or_default());
        self.stream.get_mut().write_all(&out).await?;
        self.read_reply().await
    }

    async fn read_reply(&mut self) -> io::Result<Reply> {
        let mut line = String::new();
        self.read_line(&mut line).await?;
        let status = line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse::<u16>().ok())
            .ok_or_else(|| io::Error::other(format!("bad status line {line:?}")))?;
        let (mut length, mut chunked, mut retry_after) = (None, false, None);
        loop {
            line.clear();
            self.read_line(&mut line).await?;
            let l = line.trim_end().to_ascii_lowercase();
            if l.is_empty() {
                break;
            }
            if let Some(v) = l.strip_prefix("content-length:") {
                length = v.trim().parse::<usize>().ok();
            } else if l.starts_with("transfer-encoding:") && l.contains("chunked") {
                chunked = true;
            } else if l.starts_with("connection:") && l.contains("close") {
                self.reusable = false;
            } else if let Some(v) = l.strip_prefix("retry-after:") {
                retry_after = Some(v.trim().to_owned());
            }
        }
        let body = if chunked {
            self.read_chunked().await?
        } else {
            let n = length.unwrap_or(0);
            if n > MAX_BODY {
                return Err(io::Error::other("response body too large"));
            }
            let mut body = vec![0; n];
            self.stream.read_exact(&mut body).await?;
            body
        };
        Ok(Reply {
            status,
            retry_after,
            body,
        })
    }

    async fn read_line(&mut self, line: &mut String) -> io::Result<()> {
        if self.stream.read_line(line).await? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        Ok(())
    }

    async fn read_chunked(&mut self) -> io::Result<Vec<u8>> {
        let mut body = Vec::new();
        let mut line = String::new();
        loop {
            line.clear();
            self.read_line(&mut line).await?;
            let size = usize::from_str_radix(line.trim().split(';').next().unwrap_or(""), 16)
                .map_err(|_| io::Error::other("bad chunk size"))?;
            if body.len() + size > MAX_BODY {
                return Err(io::Error::other("response body too large"));
            }
            let start = body.len();
            body.resize(start + size, 0);
            self.stream.read_exact(&mut body[start..]).await?;
            line.clear();
            self.read_line(&mut line).await?;
            if size == 0 {
                return Ok(body);
            }
        }
    }
}
