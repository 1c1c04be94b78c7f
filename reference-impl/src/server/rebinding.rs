//! DNS-rebinding protection on every route: the `Host` and `Origin` checks.
//!
//! The MCP Streamable HTTP transport (2025-03-26 onward, "Security Warning") says servers
//! MUST validate the `Origin` header and SHOULD only answer the hosts they serve: a web page
//! that rebinds its own name to 127.0.0.1 otherwise reaches a local server with the victim's
//! browser. The same page could reach the Parley HTTP binding, the SSP provider, the
//! well-known index and `/openapi.json` just as well, so one layer ([`guard`]) checks every
//! request before routing:
//!
//! - `Host`: when the server is bound to loopback (or an allow-list was given), only the
//!   loopback names (`localhost`, `127.0.0.0/8`, `::1`), the host of the public base URL and
//!   the `--allowed-host` entries; otherwise any. An absent `Host` passes (browsers always
//!   send one; the attack needs it).
//! - `Origin`: absent passes (non-browser clients); present, it must be a loopback origin
//!   (any scheme and port, only when bound to loopback), the base URL's origin, or an
//!   `--allowed-origin` entry (`scheme://host[:port]`, `:*` for any port, `null`, or `*`
//!   for any origin).
//!
//! A refused request gets 403 in the shape of the route family it was aimed at: a
//! JSON-RPC error on `/mcp`, the SSP unified error under `/ssp` and `/.well-known`, the
//! Parley refusal shape (`forbidden_host` / `forbidden_origin`) everywhere else.

use std::net::IpAddr;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use serde_json::Value;

use super::refusal::TransportRefusal;
use crate::config::Config;

/// Why an allow-list entry could not be used (the server refuses to start).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RebindingError {
    /// An `--allowed-host` entry that is not `host` or `host:port`.
    #[error("invalid --allowed-host `{0}`: expected HOST or HOST:PORT (or `*`)")]
    Host(String),
    /// An `--allowed-origin` entry that is not `scheme://host[:port|:*]`, `null` or `*`.
    #[error("invalid --allowed-origin `{0}`: expected SCHEME://HOST[:PORT|:*], `null` or `*`")]
    Origin(String),
}

/// An allowed `Host`: a name (lowercase, no brackets) and, optionally, one port.
#[derive(Debug, Clone, PartialEq, Eq)]
struct HostEntry {
    name: String,
    port: Option<u16>,
}

/// An allowed `Origin`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum OriginEntry {
    /// `Origin: null` (sandboxed frames, `file:` pages): only when listed.
    Null,
    /// Scheme and host must match; the port must match unless `None` (`:*`).
    Tuple {
        scheme: String,
        host: String,
        port: Option<u16>,
    },
}

/// The allow-lists the [`guard`] applies, decided once at start.
#[derive(Debug, Clone)]
pub struct Rebinding {
    /// `None`: any `Host`.
    hosts: Option<Vec<HostEntry>>,
    /// Loopback origins allowed (the server is bound to loopback).
    loopback_origins: bool,
    /// Any origin allowed (`--allowed-origin '*'`).
    any_origin: bool,
    origins: Vec<OriginEntry>,
}

/// `localhost`, `*.localhost`, or a loopback IP address (brackets already trimmed).
pub(crate) fn is_loopback_name(name: &str) -> bool {
    name == "localhost"
        || name.ends_with(".localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Lowercase, without IPv6 brackets or a trailing dot: how names are compared.
pub(crate) fn normalize(name: &str) -> String {
    name.trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
        .to_ascii_lowercase()
}

/// `host[:port]` of a `Host` header or an allow-list entry.
fn parse_authority(text: &str) -> Option<HostEntry> {
    let authority: axum::http::uri::Authority = text.trim().parse().ok()?;
    if authority.as_str().contains('@') {
        return None;
    }
    Some(HostEntry {
        name: normalize(authority.host()),
        port: authority.port_u16(),
    })
}

/// `(scheme, host, port)` of an origin; the port defaults by scheme (RFC 6454 §4).
fn parse_origin(text: &str) -> Option<(String, String, Option<u16>)> {
    let url = url::Url::parse(text.trim()).ok()?;
    let host = normalize(url.host_str()?);
    Some((url.scheme().to_owned(), host, url.port_or_known_default()))
}

fn parse_origin_entry(text: &str) -> Result<OriginEntry, RebindingError> {
    let bad = || RebindingError::Origin(text.to_owned());
    if text.trim().eq_ignore_ascii_case("null") {
        return Ok(OriginEntry::Null);
    }
    let (base, any_port) = match text.trim().strip_suffix(":*") {
        Some(base) => (base, true),
        None => (text.trim(), false),
    };
    let url = url::Url::parse(base).map_err(|_| bad())?;
    // An origin is scheme + authority: a path, query or credentials mean a typo.
    if url.path() != "/" || url.query().is_some() || !url.username().is_empty() {
        return Err(bad());
    }
    let host = normalize(url.host_str().ok_or_else(bad)?);
    if any_port && url.port().is_some() {
        return Err(bad());
    }
    Ok(OriginEntry::Tuple {
        scheme: url.scheme().to_owned(),
        host,
        port: if any_port {
            None
        } else {
            url.port_or_known_default()
        },
    })
}

impl Rebinding {
    /// The allow-lists for `config` on a server bound to loopback (`bound_loopback`) or not.
    pub fn new(config: &Config, bound_loopback: bool) -> Result<Self, RebindingError> {
        let base = config
            .base_url
            .as_deref()
            .and_then(|u| url::Url::parse(u).ok());
        let any_host = config.allowed_hosts.iter().any(|h| h.trim() == "*");
        let hosts = if any_host || (!bound_loopback && config.allowed_hosts.is_empty()) {
            None
        } else {
            let mut hosts = Vec::new();
            for entry in &config.allowed_hosts {
                hosts.push(
                    parse_authority(entry).ok_or_else(|| RebindingError::Host(entry.clone()))?,
                );
            }
            if let Some(name) = base.as_ref().and_then(|u| u.host_str()) {
                hosts.push(HostEntry {
                    name: normalize(name),
                    port: None,
                });
            }
            Some(hosts)
        };
        let any_origin = config.allowed_origins.iter().any(|o| o.trim() == "*");
        let mut origins = Vec::new();
        for entry in config.allowed_origins.iter().filter(|o| o.trim() != "*") {
            origins.push(parse_origin_entry(entry)?);
        }
        // A page the server's public URL serves is same-origin, not foreign.
        if let Some(u) = &base
            && let Some(host) = u.host_str()
        {
            origins.push(OriginEntry::Tuple {
                scheme: u.scheme().to_owned(),
                host: normalize(host),
                port: u.port_or_known_default(),
            });
        }
        Ok(Self {
            hosts,
            loopback_origins: bound_loopback,
            any_origin,
            origins,
        })
    }

    /// Whether a `Host` value may be answered (absent: yes).
    fn host_allowed(&self, host: Option<&str>) -> bool {
        let (Some(hosts), Some(host)) = (&self.hosts, host) else {
            return true;
        };
        let Some(host) = parse_authority(host) else {
            return false;
        };
        is_loopback_name(&host.name)
            || hosts
                .iter()
                .any(|h| h.name == host.name && h.port.is_none_or(|p| host.port == Some(p)))
    }

    /// Whether an `Origin` value may be answered (absent: yes).
    fn origin_allowed(&self, origin: Option<&str>) -> bool {
        let Some(origin) = origin else {
            return true;
        };
        if self.any_origin {
            return true;
        }
        if origin.trim().eq_ignore_ascii_case("null") {
            return self.origins.contains(&OriginEntry::Null);
        }
        let Some((scheme, host, port)) = parse_origin(origin) else {
            return false;
        };
        if self.loopback_origins && is_loopback_name(&host) {
            return true;
        }
        self.origins.iter().any(|entry| match entry {
            OriginEntry::Null => false,
            OriginEntry::Tuple {
                scheme: s,
                host: h,
                port: p,
            } => *s == scheme && *h == host && p.is_none_or(|p| port == Some(p)),
        })
    }

    /// The refusal `headers` earn, if any (`Host` first: a foreign host is the stronger sign).
    pub fn check(&self, headers: &HeaderMap) -> Option<TransportRefusal> {
        // A value that is not visible ASCII cannot name an allowed host or origin.
        let text = |name| headers.get(name).map(|v| v.to_str().unwrap_or("\u{0}"));
        if !self.host_allowed(text(header::HOST)) {
            return Some(TransportRefusal::ForbiddenHost);
        }
        if !self.origin_allowed(text(header::ORIGIN)) {
            return Some(TransportRefusal::ForbiddenOrigin);
        }
        None
    }
}

/// The layer: refuses a request whose `Host` or `Origin` is not allowed (see the module
/// docs), in the error shape of the route family the request was aimed at.
pub async fn guard(State(rules): State<Rebinding>, req: Request, next: Next) -> Response {
    let Some(refusal) = rules.check(req.headers()) else {
        return next.run(req).await;
    };
    let path = req.uri().path();
    tracing::warn!(
        path,
        host = ?req.headers().get(header::HOST),
        origin = ?req.headers().get(header::ORIGIN),
        reason = refusal.reason(),
        "refused: possible DNS rebinding"
    );
    let message = refusal.message();
    if path == "/mcp" {
        return crate::parley::api::mcp::jsonrpc_error(
            StatusCode::FORBIDDEN,
            Value::Null,
            crate::parley::api::mcp::JsonRpcCode::INVALID_REQUEST,
            &format!("Forbidden: {message}"),
        );
    }
    if crate::ssp::api::is_ssp_path(path) {
        return crate::ssp::api::forbidden(message);
    }
    refusal.response()
}

#[cfg(test)]
#[expect(clippy::expect_used)] // tests: a panic is the failure report
mod tests {
    use super::*;

    fn rules(bound_loopback: bool, hosts: &[&str], origins: &[&str]) -> Rebinding {
        let mut config = Config::demo_in_memory();
        config.base_url = Some("https://forum.example.com".into());
        config.allowed_hosts = hosts.iter().map(|s| (*s).to_owned()).collect();
        config.allowed_origins = origins.iter().map(|s| (*s).to_owned()).collect();
        Rebinding::new(&config, bound_loopback).expect("valid lists")
    }

    #[test]
    fn loopback_server_answers_loopback_and_base_url_hosts_only() {
        let r = rules(true, &["proxy.internal:8443"], &[]);
        for ok in [
            None,
            Some("127.0.0.1:8080"),
            Some("localhost"),
            Some("[::1]:9"),
            Some("FORUM.example.com"),
            Some("proxy.internal:8443"),
        ] {
            assert!(r.host_allowed(ok), "{ok:?}");
        }
        for bad in [
            Some("evil.example"),
            Some("proxy.internal:80"),
            Some("127.0.0.1.evil.example"),
            Some("not a host"),
            Some("user@127.0.0.1"),
        ] {
            assert!(!r.host_allowed(bad), "{bad:?}");
        }
        assert!(rules(false, &[], &[]).host_allowed(Some("evil.example")));
        assert!(rules(true, &["*"], &[]).host_allowed(Some("evil.example")));
    }

    #[test]
    fn origins_loopback_base_url_and_listed() {
        let r = rules(
            true,
            &[],
            &["https://app.example:*", "http://tool.example:8000", "null"],
        );
        for ok in [
            None,
            Some("http://localhost:5173"),
            Some("https://127.0.0.1"),
            Some("http://[::1]:3000"),
            Some("https://forum.example.com"),
            Some("https://forum.example.com:443"),
            Some("https://app.example:1234"),
            Some("http://tool.example:8000"),
            Some("null"),
        ] {
            assert!(r.origin_allowed(ok), "{ok:?}");
        }
        for bad in [
            Some("http://evil.example"),
            Some("http://forum.example.com"),
            Some("http://tool.example"),
            Some("http://app.example:1234"),
            Some("garbage"),
        ] {
            assert!(!r.origin_allowed(bad), "{bad:?}");
        }
        // Not bound to loopback: a loopback page is foreign too; `null` only when listed.
        let public = rules(false, &[], &[]);
        assert!(!public.origin_allowed(Some("http://localhost:5173")));
        assert!(!public.origin_allowed(Some("null")));
        assert!(rules(false, &[], &["*"]).origin_allowed(Some("http://evil.example")));
    }

    #[test]
    fn invalid_entries_refuse_to_start() {
        let mut config = Config::demo_in_memory();
        config.allowed_origins = vec!["app.example".into()];
        assert!(Rebinding::new(&config, true).is_err());
        config.allowed_origins = vec!["https://app.example/path".into()];
        assert!(Rebinding::new(&config, true).is_err());
        config.allowed_origins = vec!["https://app.example:1:*".into()];
        assert!(Rebinding::new(&config, true).is_err());
        config.allowed_origins = Vec::new();
        config.allowed_hosts = vec!["a b".into()];
        assert!(Rebinding::new(&config, true).is_err());
    }
}
