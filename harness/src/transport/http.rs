//! HTTP: an operation-based API mapped onto routes (the protocol supplies the route table),
//! plus raw requests for malformed input.

use std::collections::BTreeMap;

use futures::FutureExt as _;
use futures::future::BoxFuture;
use serde_json::Value;

use super::raw::{RawHttp, RawMcp};
use super::{Auth, Prepared, Reply, Transport, TransportError, TransportKind, send_recorded};

/// One HTTP route: method and path template (`/v1/threads/{thread}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// HTTP method.
    pub method: String,
    /// Path template with `{name}` placeholders filled from the arguments.
    pub path: String,
}

/// Operation name → route; `None` = the target does not offer the operation over HTTP.
/// The protocol fills it (its default binding, then what the target declares).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Routes(pub BTreeMap<String, Option<Route>>);

/// Percent-encodes a path segment (RFC 3986 unreserved characters stay).
pub fn encode_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The request an operation becomes on HTTP: path params from the template, the rest as
/// query (GET) or JSON body (other methods; none when nothing is left, e.g. `reopen`).
pub fn build_request(
    route: &Route,
    args: &Value,
) -> Result<(String, String, Option<String>), TransportError> {
    let mut rest = match args {
        Value::Object(o) => o.clone(),
        Value::Null => serde_json::Map::new(),
        other => {
            // Not an object: only a body can carry it (post with a non-object envelope).
            return Ok((
                route.method.clone(),
                route.path.clone(),
                Some(other.to_string()),
            ));
        }
    };
    let mut path = String::new();
    let mut tpl = route.path.as_str();
    while let Some(start) = tpl.find('{') {
        let Some(len) = tpl[start..].find('}') else {
            break;
        };
        let name = &tpl[start + 1..start + len];
        path.push_str(&tpl[..start]);
        let v = rest.remove(name).ok_or_else(|| {
            TransportError::Unusable(format!("route {} needs argument {name:?}", route.path))
        })?;
        path.push_str(&encode_segment(&value_text(&v)));
        tpl = &tpl[start + len + 1..];
    }
    path.push_str(tpl);
    if route.method.eq_ignore_ascii_case("GET") || route.method.eq_ignore_ascii_case("HEAD") {
        let pairs: Vec<String> = rest
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| format!("{}={}", encode_segment(k), encode_segment(&value_text(v))))
            .collect();
        if !pairs.is_empty() {
            path.push(if path.contains('?') { '&' } else { '?' });
            path.push_str(&pairs.join("&"));
        }
        Ok((route.method.clone(), path, None))
    } else if rest.is_empty() && route.path.contains('{') {
        Ok((route.method.clone(), path, None))
    } else {
        Ok((
            route.method.clone(),
            path,
            Some(Value::Object(rest).to_string()),
        ))
    }
}

/// HTTP transport over one keep-alive client.
#[derive(Debug, Clone)]
pub struct HttpTransport {
    client: crate::transport::Client,
    base: String,
    routes: Routes,
}

impl HttpTransport {
    /// `base` is the origin the routes' paths are relative to (`http://127.0.0.1:8080`).
    pub fn new(client: crate::transport::Client, base: &str, routes: Routes) -> Self {
        Self {
            client,
            base: base.trim_end_matches('/').to_string(),
            routes,
        }
    }

    async fn send(
        &self,
        method: &str,
        path: &str,
        extra: &BTreeMap<String, String>,
        (body, shown, json_body): (Option<Vec<u8>>, Option<String>, bool),
        auth: &Auth,
    ) -> Result<Reply, TransportError> {
        let url = format!("{}{}", self.base, path);
        let mut headers: Vec<(String, String)> = Vec::new();
        let mut recorded: Vec<(String, String)> = Vec::new();
        let has = |n: &str| extra.keys().any(|k| k.eq_ignore_ascii_case(n));
        if !has("authorization")
            && let (Some(v), Some(r)) = (auth.header_value(), auth.recorded_value())
        {
            headers.push(("authorization".into(), v));
            recorded.push(("authorization".into(), r));
        }
        if json_body && body.is_some() && !has("content-type") {
            headers.push(("content-type".into(), "application/json".into()));
            recorded.push(("content-type".into(), "application/json".into()));
        }
        for (k, v) in extra {
            headers.push((k.to_ascii_lowercase(), v.clone()));
            recorded.push((k.to_ascii_lowercase(), v.clone()));
        }
        let p = Prepared {
            method: method.to_string(),
            url,
            headers,
            recorded_headers: recorded,
            body,
            shown_body: shown,
        };
        let (ex, resp) = send_recorded(&self.client, TransportKind::Http, p).await;
        match resp {
            Some((status, hs, text)) => {
                let json = serde_json::from_str::<Value>(&text).ok();
                Ok(Reply {
                    http_status: status,
                    headers: hs,
                    json,
                    text,
                    exchanges: vec![ex],
                })
            }
            None => Err(TransportError::Io {
                message: ex.error.clone().unwrap_or_default(),
                exchanges: vec![ex],
            }),
        }
    }
}

impl Transport for HttpTransport {
    fn kind(&self) -> TransportKind {
        TransportKind::Http
    }

    fn call<'a>(
        &'a self,
        op: &'a str,
        args: &'a Value,
        auth: &'a Auth,
    ) -> BoxFuture<'a, Result<Reply, TransportError>> {
        async move {
            let route = match self.routes.0.get(op) {
                Some(Some(r)) => r,
                Some(None) => {
                    return Err(TransportError::Unusable(format!(
                        "the target offers no HTTP route for {op}"
                    )));
                }
                None => return Err(TransportError::Unusable(format!("unknown operation {op}"))),
            };
            let (method, path, body) = build_request(route, args)?;
            let bytes = body.as_ref().map(|b| b.clone().into_bytes());
            self.send(&method, &path, &BTreeMap::new(), (bytes, body, true), auth)
                .await
        }
        .boxed()
    }

    fn raw_http<'a>(
        &'a self,
        req: &'a RawHttp,
        auth: &'a Auth,
    ) -> BoxFuture<'a, Result<Reply, TransportError>> {
        async move {
            let (body, shown) =
                super::raw_body(&req.body, &req.body_json, req.body_base64.as_ref())?;
            // A raw request sends exactly the headers it lists (plus auth): no implicit content type.
            self.send(
                &req.method,
                &req.path,
                &req.headers,
                (body, shown, req.body_json.is_some()),
                auth,
            )
            .await
        }
        .boxed()
    }

    fn raw_mcp<'a>(
        &'a self,
        _req: &'a RawMcp,
        _auth: &'a Auth,
    ) -> BoxFuture<'a, Result<Reply, TransportError>> {
        async move {
            Err(TransportError::Unusable(
                "raw MCP step on the HTTP transport".into(),
            ))
        }
        .boxed()
    }
}

#[cfg(test)]
#[expect(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn maps_arguments() {
        let get = |op: &str| {
            let (method, path) = match op {
                "read_thread" => ("GET", "/v1/threads/{thread}"),
                "inbox" => ("GET", "/v1/inbox"),
                "reopen" => ("POST", "/v1/threads/{thread}/reopen"),
                "mark" => ("POST", "/v1/threads/{thread}/state"),
                _ => ("POST", "/v1/messages"),
            };
            Route {
                method: method.into(),
                path: path.into(),
            }
        };
        let (m, p, b) = build_request(&get("read_thread"), &json!({"thread": "th_1"})).unwrap();
        assert_eq!(
            (m.as_str(), p.as_str(), b),
            ("GET", "/v1/threads/th_1", None)
        );
        let (_, p, _) = build_request(&get("inbox"), &json!({"since": "c 1", "limit": 5})).unwrap();
        assert_eq!(p, "/v1/inbox?since=c%201&limit=5");
        let (_, p, b) = build_request(&get("reopen"), &json!({"thread": 12})).unwrap();
        assert_eq!((p.as_str(), b), ("/v1/threads/12/reopen", None));
        let (_, p, b) =
            build_request(&get("mark"), &json!({"thread": "th_1", "state": "closed"})).unwrap();
        assert_eq!(
            (p.as_str(), b.as_deref()),
            ("/v1/threads/th_1/state", Some(r#"{"state":"closed"}"#))
        );
        let (_, p, b) = build_request(&get("post"), &json!({"kind": "ask", "body": "x"})).unwrap();
        assert_eq!(
            (p.as_str(), b.as_deref()),
            ("/v1/messages", Some(r#"{"kind":"ask","body":"x"}"#))
        );
    }
}
