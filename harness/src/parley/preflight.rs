//! Parley's pre-flight: fetch the manifest, build the two bindings from what it declares,
//! call `whoami` for every token and check each role holds the rights the vectors assume,
//! and (when MCP is selected) verify the MCP endpoint answers a tool call. A wrong token
//! yields one clear message before the run, not hundreds of false failures.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::json;

use super::manifest::{Identity, Manifest, default_routes};
use super::pacing::Pacer;
use super::role::Role;
use super::tokens::{Tokens, same_party, token_env, tokens};
use crate::engine::target::{ConnectOptions, Target, TargetError, truncate};
use crate::transport::http::HttpTransport;
use crate::transport::mcp::McpTransport;
use crate::transport::{Auth, Transport, TransportKind};

/// What the Parley checks need of a target: its manifest, identities and bindings.
pub struct ParleyTarget {
    /// The manifest.
    pub manifest: Manifest,
    /// `whoami` per role.
    pub identities: BTreeMap<Role, Identity>,
    /// Bearer tokens per role (the profile's `[tokens]`; the first is the primary one).
    pub tokens: Tokens,
    /// HTTP binding.
    pub http: Arc<dyn Transport>,
    /// MCP binding.
    pub mcp: Arc<dyn Transport>,
    /// The run's time scale (the models' and histories' waiting bounds are multiplied by it).
    pub time_scale: crate::transport::budget::TimeScale,
}

impl std::fmt::Debug for ParleyTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParleyTarget")
            .field("identities", &self.identities)
            .finish_non_exhaustive()
    }
}

impl ParleyTarget {
    /// Auth for a role (`anonymous` = none), or `None` when the profile lacks the role.
    pub fn auth(&self, role: Role) -> Option<Auth> {
        if role == Role::Anonymous {
            return Some(Auth::None);
        }
        self.tokens
            .get(&role)
            .and_then(|l| l.first())
            .map(|t| Auth::Bearer {
                token: t.clone(),
                env: Some(role.token_env()),
            })
    }

    /// The binding of a kind.
    pub fn transport(&self, kind: TransportKind) -> &Arc<dyn Transport> {
        match kind {
            TransportKind::Http => &self.http,
            TransportKind::Mcp => &self.mcp,
        }
    }

    /// Whether the manifest enables a profile/feature (`dialectic`).
    pub fn has_feature(&self, f: &str) -> bool {
        self.manifest.profiles.iter().any(|p| p == f)
    }
}

/// Runs the whole Parley pre-flight and stores a [`ParleyTarget`] in `target`.
pub async fn preflight(target: &mut Target, opts: &ConnectOptions) -> Result<(), TargetError> {
    let tokens = tokens(&target.profile).map_err(|m| target.preflight_error(vec![m]))?;
    let manifest = fetch_manifest(target).await?;
    let base = target.info.base_url.clone();
    let endpoint = (target.profile.mcp_endpoint.clone())
        .or(manifest.mcp_endpoint.clone())
        .unwrap_or_else(|| "/mcp".into());
    let mcp_url = if endpoint.starts_with("http://") || endpoint.starts_with("https://") {
        endpoint
    } else {
        format!("{base}{endpoint}")
    };
    let http: Arc<dyn Transport> = Arc::new(HttpTransport::new(
        target.client.clone(),
        &base,
        manifest.routes.clone(),
    ));
    let init_auth = Role::ALL
        .into_iter()
        .find_map(|r| tokens.get(&r).and_then(|l| l.first()).map(|t| (r, t)))
        .map(|(r, t)| Auth::Bearer {
            token: t.clone(),
            env: Some(r.token_env()),
        })
        .unwrap_or(Auth::None);
    let mcp: Arc<dyn Transport> = Arc::new(McpTransport::new(
        target.client.clone(),
        &mcp_url,
        target.info.mcp_revision,
        manifest.tools.clone(),
        init_auth,
    ));
    let (whoamis, mut problems) = whoami_all(http.as_ref(), &tokens).await;
    let identities = whoamis
        .iter()
        .filter_map(|(r, l)| l.first().map(|i| (*r, i.clone())))
        .collect();
    problems.extend(check_roles(&identities));
    if !problems.is_empty() {
        return Err(target.preflight_error(problems));
    }
    target.info.mcp_url = mcp_url;
    target.info.server_version = manifest.version.clone();
    target.info.fingerprint.insert(
        "parley/manifest".into(),
        crate::engine::report::evidence::json_sha256(&manifest.raw),
    );
    target.info.profiles = manifest.profiles.clone();
    let part = ParleyTarget {
        manifest,
        identities,
        tokens,
        http,
        mcp,
        time_scale: target.time_scale(),
    };
    let mcp_selected = opts.selects(crate::capability::transports::MCP);
    if mcp_selected && part.manifest.offers(TransportKind::Mcp) {
        preflight_mcp(&part, target).await?;
    }
    // Writes are paced under each token's quota (PV-TR-5): no check meets a 429 it did
    // not provoke.
    target.insert_part(pacer(&part, &whoamis));
    target.insert_part(part);
    Ok(())
}

/// `GET` the manifest on the default route (the manifest may then override routes).
pub(crate) async fn fetch_manifest(target: &Target) -> Result<Manifest, TargetError> {
    let base = &target.info.base_url;
    let default_http = HttpTransport::new(target.client.clone(), base, default_routes());
    let reply = default_http
        .call("get_manifest", &json!({}), &Auth::None)
        .await
        .map_err(|e| {
            target.preflight_error(vec![format!(
                "target unreachable: GET {base}/v1/manifest: {e}"
            )])
        })?;
    match (reply.http_status, reply.json) {
        (200, Some(v)) if v.is_object() => Ok(Manifest::from_value(v)),
        (s, _) => Err(target.preflight_error(vec![format!(
            "GET {base}/v1/manifest answered HTTP {s} without a JSON object manifest: {}",
            truncate(&reply.text, 200)
        )])),
    }
}

/// `whoami` for one token: the identity, or why there is none.
pub(crate) async fn whoami(
    http: &dyn Transport,
    auth: &Auth,
    label: &str,
) -> Result<Identity, String> {
    match http.call("whoami", &json!({}), auth).await {
        Ok(r) if r.http_status == 200 => match r.json.map(serde_json::from_value::<Identity>) {
            Some(Ok(id)) => Ok(id),
            _ => Err(format!(
                "{label}: whoami returned no identity: {}",
                truncate(&r.text, 200)
            )),
        },
        Ok(r) => Err(format!(
            "{label}: token rejected by whoami (HTTP {}): {}",
            r.http_status,
            truncate(&r.text, 200)
        )),
        Err(e) => Err(format!("{label}: whoami failed: {e}")),
    }
}

/// `whoami` for every token: each role's identities in token order, and a problem per
/// token that did not answer or stands for another party than its role's first token.
async fn whoami_all(
    http: &dyn Transport,
    tokens: &Tokens,
) -> (BTreeMap<Role, Vec<Identity>>, Vec<String>) {
    let mut problems = Vec::new();
    let mut out: BTreeMap<Role, Vec<Identity>> = BTreeMap::new();
    for (role, list) in tokens {
        for (i, token) in list.iter().enumerate() {
            let auth = Auth::Bearer {
                token: token.clone(),
                env: Some(token_env(*role, i)),
            };
            let label = match i {
                0 => format!("role {role}"),
                _ => format!("role {role} (token {})", i + 1),
            };
            match whoami(http, &auth, &label).await {
                Ok(id) => out.entry(*role).or_default().push(id),
                Err(p) => problems.push(p),
            }
        }
        if let Some(p) = out.get(role).and_then(|w| same_party(*role, w)) {
            problems.push(p);
        }
    }
    (out, problems)
}

/// Verifies the MCP endpoint answers a tool call (pre-flight for MCP runs).
pub async fn preflight_mcp(part: &ParleyTarget, target: &Target) -> Result<(), TargetError> {
    let role = Role::ALL
        .into_iter()
        .find(|r| *r != Role::Anonymous && part.auth(*r).is_some());
    let auth = role.and_then(|r| part.auth(r)).unwrap_or(Auth::None);
    let fail = |m: String| TargetError::Preflight {
        base_url: target.info.mcp_url.clone(),
        problems: vec![m],
    };
    let reply = part
        .mcp
        .call("whoami", &json!({}), &auth)
        .await
        .map_err(|e| fail(format!("MCP whoami: {e}")))?;
    let result = reply.json.as_ref().and_then(|m| m.get("result"));
    // A tool result: `isError: false`, or no `isError` at all (it defaults to false).
    let ok = result.is_some_and(|r| match r.get("isError") {
        None => true,
        Some(e) => e.as_bool() == Some(false),
    });
    if ok {
        Ok(())
    } else {
        Err(fail(format!(
            "MCP {} whoami did not return a tool result (HTTP {}): {}",
            target.info.mcp_revision,
            reply.http_status,
            truncate(&reply.text, 300)
        )))
    }
}

/// What a command re-targeting this server adds on `kind` to reach it the same way (a run's
/// reproduction, a model's replay): the MCP revision spoken, on MCP.
pub fn revision_flag(target: &Target, kind: TransportKind) -> String {
    match kind {
        TransportKind::Mcp => format!(" --mcp-revision {}", target.info.mcp_revision),
        TransportKind::Http => String::new(),
    }
}

/// Validates the profile's `[tokens]` section.
pub fn check_profile_tokens(profile: &crate::engine::target::Profile) -> Result<(), String> {
    let tokens = tokens(profile)?;
    if tokens.contains_key(&Role::Anonymous) {
        return Err("role anonymous has no token by definition".into());
    }
    Ok(())
}

/// The rights a role must hold for the vectors' expectations to make sense.
pub const RIGHTS_NEEDED: [(Role, &[&str]); 6] = [
    (Role::AgentA, &["read", "write"]),
    (Role::AgentB, &["read", "write"]),
    (Role::Moderator, &["read", "write", "lock"]),
    (Role::Verifier, &["read", "write", "verify"]),
    (Role::Reader, &["read"]),
    (Role::Limited, &["read", "write"]),
];

/// The rights a role must not hold: the vectors expect them refused.
pub const RIGHTS_FORBIDDEN: [(Role, &[&str]); 5] = [
    (Role::AgentA, &["lock", "verify"]),
    (Role::AgentB, &["lock", "verify"]),
    (Role::Verifier, &["lock"]),
    (Role::Reader, &["write", "lock", "verify"]),
    (Role::Limited, &["lock", "verify"]),
];

/// The quota the `limited` role must stay under (writes per minute), so a 50-attempt step
/// can exceed it.
pub const LIMITED_QUOTA_BELOW: u64 = 50;

/// The rights each role must (or must not) hold for the vectors' expectations to make sense.
pub fn check_roles(ids: &BTreeMap<Role, Identity>) -> Vec<String> {
    let mut problems = Vec::new();
    let has = |r: Role, right: &str| {
        ids.get(&r)
            .is_some_and(|i| i.rights.iter().any(|x| x == right))
    };
    let human = |r: Role| {
        ids.get(&r).is_some_and(|i| {
            i.author_kind.as_deref() == Some("human") || i.identity.starts_with("human:")
        })
    };
    for &(role, need) in &RIGHTS_NEEDED {
        if !ids.contains_key(&role) {
            continue;
        }
        for right in need {
            if !has(role, right) {
                problems.push(format!(
                    "role {role} must hold the `{right}` right (whoami lists {:?})",
                    ids[&role].rights
                ));
            }
        }
    }
    for &(role, forbidden) in &RIGHTS_FORBIDDEN {
        for right in forbidden {
            if ids.contains_key(&role) && has(role, right) {
                problems.push(format!(
                    "role {role} must not hold the `{right}` right: the vectors expect it to be refused"
                ));
            }
        }
    }
    if ids.contains_key(&Role::Human) && !human(Role::Human) {
        problems.push("role human must be a `human:` identity".into());
    }
    for r in [
        Role::AgentA,
        Role::AgentB,
        Role::Moderator,
        Role::Verifier,
        Role::Reader,
        Role::Limited,
    ] {
        if ids.contains_key(&r) && human(r) {
            problems.push(format!("role {r} must not be a human identity"));
        }
    }
    if let Some(l) = ids.get(&Role::Limited) {
        match l.quota_per_minute {
            Some(q) if q < LIMITED_QUOTA_BELOW => {}
            other => problems.push(format!(
                "role limited needs a quota below 50 writes/minute so a 50-attempt step can exceed it (whoami says {other:?})"
            )),
        }
    }
    let mut seen: BTreeMap<&str, Role> = BTreeMap::new();
    for (r, i) in ids {
        if let Some(prev) = seen.insert(&i.identity, *r) {
            problems.push(format!(
                "roles {prev} and {r} share the identity {}: the vectors need distinct parties",
                i.identity
            ));
        }
    }
    problems
}

/// The write budgets of `part`'s tokens (PV-TR-5): each token's `whoami` quota, else the
/// manifest's `limits.writes_per_minute`; a role's tokens form one pool the pacer spreads
/// its writes over. The quota role (`limited`) is never paced.
fn pacer(part: &ParleyTarget, whoamis: &BTreeMap<Role, Vec<Identity>>) -> Pacer {
    let default = part
        .manifest
        .raw
        .pointer("/limits/writes_per_minute")
        .and_then(serde_json::Value::as_u64);
    let pools = part
        .tokens
        .iter()
        .filter(|(role, _)| **role != Role::Limited)
        .map(|(role, list)| {
            let quotas = whoamis.get(role).map(Vec::as_slice).unwrap_or_default();
            list.iter()
                .zip(quotas)
                .filter_map(|(token, w)| {
                    let quota = w.quota_per_minute.or(default).filter(|q| *q > 0)?;
                    Some((token.clone(), quota))
                })
                .collect::<Vec<_>>()
        })
        .filter(|pool| !pool.is_empty())
        .collect();
    Pacer::new(pools)
}
