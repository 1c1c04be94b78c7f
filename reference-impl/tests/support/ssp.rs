//! The SSP provider in process: a client over the provider's router that validates
//! **every** document the server emits against the protocol schema (issue #3 "Tests"), and
//! lifecycle assertions (SSP-INV-3).

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Request};
use reference_impl::config::{Config, SspLimits};
use reference_impl::ssp::{SspState, ThreadReader};
use reference_impl::store::Db;
use serde_json::{Value, json};

/// The demo HMAC secret (`Config::demo`).
pub(crate) const HMAC_SECRET: &[u8] = b"demo-hmac-secret";

/// A response: status, headers, parsed JSON body.
#[derive(Debug)]
pub(crate) struct Resp {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Value,
}

/// In-process client over `api::ssp::routes`.
#[derive(Clone)]
pub(crate) struct Client {
    pub router: Router,
    pub state: SspState,
}

/// A thread reader over a real Parley service on the same database.
pub(crate) fn parley(db: &Db) -> reference_impl::parley::service::ParleyService {
    reference_impl::parley::service::ParleyService::new(db.clone(), Config::demo_in_memory().tokens)
}

impl Client {
    /// Demo config over an in-memory database, base URL `http://127.0.0.1:9` (fixed so
    /// documents are comparable).
    pub(crate) fn demo() -> Self {
        let db = Db::open(std::path::Path::new(":memory:")).unwrap();
        Self::over(db, Some("http://127.0.0.1:9".into()))
    }

    /// Demo config over `db`.
    pub(crate) fn over(db: Db, base_url: Option<String>) -> Self {
        Self::with_limits(db, base_url, Config::demo_in_memory().ssp_limits)
    }

    /// Demo config with `limits`, over an in-memory database, base URL `http://127.0.0.1:9`.
    pub(crate) fn demo_with(limits: SspLimits) -> Self {
        let db = Db::open(std::path::Path::new(":memory:")).unwrap();
        Self::with_limits(db, Some("http://127.0.0.1:9".into()), limits)
    }

    /// Demo config over `db` with `limits`.
    pub(crate) fn with_limits(db: Db, base_url: Option<String>, limits: SspLimits) -> Self {
        let mut config = Config::demo_in_memory();
        config.base_url = base_url;
        config.ssp_limits = limits;
        let threads: Arc<dyn ThreadReader> = Arc::new(parley(&db));
        let state = SspState::new(db, &config, threads).unwrap();
        Self {
            router: reference_impl::ssp::api::routes(state.clone()),
            state,
        }
    }

    /// Sends a request; validates the body against the schema type the route emits.
    pub(crate) async fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<Vec<u8>>,
    ) -> Resp {
        self.send_from(None, method, path, headers, body).await
    }

    /// [`Client::send`] as if from `peer` (the server tags each connection's requests with
    /// it; the rate limit keys anonymous clients by it).
    pub(crate) async fn send_from(
        &self,
        peer: Option<SocketAddr>,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<Vec<u8>>,
    ) -> Resp {
        let mut b = Request::builder().method(method).uri(path);
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        if let Some(p) = peer {
            b = b.extension(axum::extract::ConnectInfo(p));
        }
        let req = b
            .body(body.map(Body::from).unwrap_or_else(Body::empty))
            .unwrap();
        let (status, headers, bytes) = super::oneshot(&self.router, req).await;
        let body: Value = if method == "HEAD" {
            Value::Null
        } else {
            serde_json::from_slice(&bytes)
                .unwrap_or_else(|e| panic!("{method} {path}: non-JSON body ({e}): {bytes:?}"))
        };
        if method != "HEAD" {
            assert_eq!(
                headers.get("content-type").and_then(|v| v.to_str().ok()),
                Some("application/json"),
                "{method} {path}"
            );
            self.check_emitted(method, path, status, &body);
        }
        Resp {
            status,
            headers,
            body,
        }
    }

    /// Every emitted document is valid against the schema (SSP-ERR-1, SSP-DISC-1, SSP-INV-1/3).
    pub(crate) fn check_emitted(&self, method: &str, path: &str, status: u16, body: &Value) {
        let p = path.split('?').next().unwrap_or(path);
        let ty = if status >= 400 {
            "ErrorResponse"
        } else if p == "/.well-known/skill-sharing" {
            "SkillIndex"
        } else if p.starts_with("/ssp/skills/") {
            "SkillDescriptor"
        } else if p.starts_with("/ssp/invoke/")
            || p.starts_with("/ssp/status/")
            || p.starts_with("/ssp/result/")
        {
            "InvocationResponse"
        } else if p == "/ssp/schema.json" {
            return;
        } else {
            panic!("{method} {path}: unexpected success {status}");
        };
        if ty == "ErrorResponse" {
            // Seed §8.2: an error response's code is one of the seven protocol codes.
            const SEVEN: [&str; 7] = [
                "VALIDATION_ERROR",
                "AUTH_REQUIRED",
                "PERMISSION_DENIED",
                "SKILL_NOT_FOUND",
                "INVOCATION_TIMEOUT",
                "ENDPOINT_UNREACHABLE",
                "VERSION_INCOMPATIBLE",
            ];
            let code = body["error"]["code"].as_str().unwrap_or_default();
            // SSP-ERR-3: every SSP error code is one of the seven, 429 included.
            assert!(
                SEVEN.contains(&code),
                "{method} {path} → {status}: code {code}"
            );
        }
        let v = self.state.schemas().validate(ty, body);
        assert!(
            v.is_empty(),
            "{method} {path} → {status}: not a valid {ty}: {v:?}\n{body:#}"
        );
        if ty == "SkillIndex" {
            let ids: Vec<_> = body["skills"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["id"].clone())
                .collect();
            let mut dedup = ids.clone();
            dedup.dedup();
            assert_eq!(ids.len(), dedup.len(), "SSP-DISC-1: unique ids");
        }
    }

    pub(crate) async fn get(&self, path: &str, headers: &[(&str, &str)]) -> Resp {
        self.send("GET", path, headers, None).await
    }

    /// POSTs an InvocationRequest JSON to `/ssp/invoke/<slug>`.
    pub(crate) async fn invoke(
        &self,
        slug: &str,
        request: &Value,
        headers: &[(&str, &str)],
    ) -> Resp {
        let mut h = vec![("content-type", "application/json")];
        h.extend_from_slice(headers);
        self.send(
            "POST",
            &format!("/ssp/invoke/{slug}"),
            &h,
            Some(request.to_string().into_bytes()),
        )
        .await
    }

    /// [`Client::invoke`] as if from `peer`.
    pub(crate) async fn invoke_from(
        &self,
        peer: SocketAddr,
        slug: &str,
        request: &Value,
        headers: &[(&str, &str)],
    ) -> Resp {
        let mut h = vec![("content-type", "application/json")];
        h.extend_from_slice(headers);
        self.send_from(
            Some(peer),
            "POST",
            &format!("/ssp/invoke/{slug}"),
            &h,
            Some(request.to_string().into_bytes()),
        )
        .await
    }

    /// Status poll with optional credential headers.
    pub(crate) async fn status(&self, id: &str, headers: &[(&str, &str)]) -> Resp {
        self.get(&format!("/ssp/status/{id}"), headers).await
    }

    /// Result poll.
    pub(crate) async fn result(&self, id: &str, headers: &[(&str, &str)]) -> Resp {
        self.get(&format!("/ssp/result/{id}"), headers).await
    }
}

/// An InvocationRequest for `skill_id` with `inputs`.
pub(crate) fn request(skill_id: &str, inputs: Value) -> Value {
    json!({ "caller": { "id": "conform-test", "type": "service" }, "skill_id": skill_id, "inputs": inputs })
}

/// The `X-Signature` of a body under the demo secret.
pub(crate) fn signature(body: &[u8]) -> String {
    reference_impl::ssp::auth::sign(HMAC_SECRET, body)
}

const ORDER: [&str; 5] = ["accepted", "running", "completed", "failed", "timeout"];

fn rank(s: &str) -> usize {
    match s {
        "accepted" => 0,
        "running" => 1,
        "completed" | "failed" | "timeout" => 2,
        other => panic!("unknown status {other}"),
    }
}

/// Records the observed InvocationResponses of one execution and checks SSP-INV-3 on each
/// new observation: forward-only, terminal stable, created_at constant,
/// created_at ≤ updated_at, completed_at iff terminal, output/error by status.
#[derive(Default, Debug)]
pub(crate) struct Lifecycle {
    pub seen: Vec<Value>,
}

impl Lifecycle {
    pub(crate) fn observe(&mut self, r: &Value) {
        let st = r["status"].as_str().unwrap();
        assert!(ORDER.contains(&st));
        let ts = &r["timestamps"];
        let created = ts["created_at"].as_str().unwrap();
        let updated = ts["updated_at"].as_str().unwrap();
        assert!(created <= updated, "created_at ≤ updated_at: {r}");
        let terminal = rank(st) == 2;
        assert_eq!(
            ts.get("completed_at").is_some(),
            terminal,
            "completed_at iff terminal: {r}"
        );
        assert_eq!(
            r.get("output").is_some(),
            st == "completed",
            "output iff completed: {r}"
        );
        assert_eq!(
            r.get("error").is_some(),
            st == "failed" || st == "timeout",
            "error iff failed/timeout: {r}"
        );
        if let Some(prev) = self.seen.last() {
            let pst = prev["status"].as_str().unwrap();
            assert_eq!(prev["execution_id"], r["execution_id"]);
            assert_eq!(
                prev["timestamps"]["created_at"], ts["created_at"],
                "created_at constant"
            );
            assert!(
                prev["timestamps"]["updated_at"].as_str().unwrap() <= updated,
                "updated_at monotonic"
            );
            if rank(pst) == 2 {
                assert_eq!(prev, r, "terminal states never change");
            } else {
                assert!(rank(st) >= rank(pst), "forward only: {pst} → {st}");
            }
        }
        self.seen.push(r.clone());
    }

    pub(crate) fn statuses(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .seen
            .iter()
            .map(|r| r["status"].as_str().unwrap().to_string())
            .collect();
        v.dedup();
        v
    }
}

/// Lets spawned tasks run (current-thread runtime) without advancing time.
pub(crate) async fn settle() {
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
}
