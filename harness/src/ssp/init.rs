//! SSP's part of `conform init`: the `[ssp]` table. The credentials given (`--token
//! api_key=…`) unlock the indexes; every descriptor found says its access policy and auth
//! type, which map the fixture roles `restricted`, `private`, `auth_*`; a role is written
//! only with inputs its descriptor makes certain (defaults, examples, enums, a free string),
//! so a generated profile never causes a failure. Roles a descriptor cannot reveal
//! (`instant`, `slow`, `failing`, `overrun`) are listed with candidates, and the checks left
//! `unsupported` come from each check's own role needs ([`Decl::roles`](super::provider::checks::Decl::roles)).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::provider::checks::catalogue;
use super::provider::env::{Cred, Env};
use super::provider::profile::{FixtureRole, SspCredentials, SspProfile};
use super::types::{AccessPolicy, AuthType, ParameterDefinition, SkillDescriptor};
use crate::capability::init::{GivenToken, InitPart, Initialisable, Speaks, toml_str};
use crate::engine::target::Target;
use crate::ssp::protocol::Ssp;
use crate::ssp::validator::DocType;

/// Credential names `--token NAME=…` may give SSP (`[ssp.credentials]` keys).
pub const CREDENTIALS: [&str; 5] = [
    "api_key",
    "api_key_limited",
    "oauth2_token",
    "oauth2_token_limited",
    "hmac_secret",
];

/// The `[ssp]` table for `target`.
pub async fn init(target: &Target, given: &[GivenToken]) -> InitPart {
    let mut o = String::from("# ---- SSP 1.0 ----\n");
    let (credentials, used) = credentials(given);
    let profile = SspProfile {
        credentials,
        ..SspProfile::default()
    };
    let mut env = Env::new(
        target.client.clone(),
        &target.info.base_url,
        profile,
        "init",
    );
    let url = env.url(env.profile.well_known_path());
    if let Err(f) = env.index("", &Cred::None).await {
        let why = one_line(&f.message);
        let _ = writeln!(
            o,
            "# No SSP Skill Index at {url}: {why}\n# The [ssp] section is omitted; run only the Parley \
             suite (`conform run --suite parley`)."
        );
        // A JSON answer other than 404 is a provider with a broken index (the run's pre-flight
        // lets its checks judge it); anything else is no provider.
        let last = env.exchanges.last();
        let status = last.and_then(|ex| ex.status);
        let json = (last.and_then(|ex| ex.response_body.as_deref()))
            .is_some_and(|b| serde_json::from_str::<Value>(b).is_ok());
        let error = last.and_then(|ex| ex.error.as_deref());
        let speaks = match (status, error) {
            (Some(s), _) if s != 404 && json => Speaks::Yes,
            (Some(s), _) if s != 200 => {
                Speaks::No(format!("no Skill Index: GET {url} answered HTTP {s}"))
            }
            (None, Some(e)) => Speaks::No(format!("no Skill Index: GET {url}: {e}")),
            _ => Speaks::No(format!("no Skill Index: {why}")),
        };
        return InitPart {
            text: o,
            used,
            speaks,
        };
    }
    let descriptors = descriptors(&mut env, &mut o).await;
    let mut p = env.profile.clone();
    let mut notes = Vec::new();
    map_roles(&descriptors, &mut p, &mut notes);
    write_section(&mut o, &p, &descriptors, &notes);
    write_unsupported(&mut o, &p);
    InitPart {
        text: o,
        used,
        speaks: Speaks::Yes,
    }
}

/// The SSP credentials among the given tokens, and their indices.
fn credentials(given: &[GivenToken]) -> (SspCredentials, Vec<usize>) {
    let mut c = SspCredentials::default();
    let mut used = Vec::new();
    for (i, g) in given.iter().enumerate() {
        let slot = match g.role.as_deref() {
            Some("api_key") => &mut c.api_key,
            Some("api_key_limited") => &mut c.api_key_limited,
            Some("oauth2_token") => &mut c.oauth2_token,
            Some("oauth2_token_limited") => &mut c.oauth2_token_limited,
            Some("hmac_secret") => &mut c.hmac_secret,
            _ => continue,
        };
        *slot = Some(g.token.clone());
        used.push(i);
    }
    (c, used)
}

/// Every descriptor the index lists (anonymously or with a credential), fetched with the
/// first credential that works; a skill that cannot be read is noted in `o`.
async fn descriptors(env: &mut Env, o: &mut String) -> Vec<SkillDescriptor> {
    let mut creds = vec![Cred::None];
    creds.extend(env.all_creds());
    let mut entries = BTreeMap::new();
    for c in &creds {
        if let Ok(idx) = env.index("", c).await {
            for e in idx.skills {
                entries.entry(e.id.clone()).or_insert(e.descriptor_url);
            }
        }
    }
    let mut out = Vec::new();
    for (id, url) in entries {
        let url = env.url(&url);
        let mut found = None;
        for c in &creds {
            let Ok(r) = env.get(&url, c).await else {
                continue;
            };
            if r.status != 200 {
                continue;
            }
            let Ok(body) = r.body() else { continue };
            let body = body.clone();
            if let Ok(d) = env.typed::<SkillDescriptor>(&body, DocType::Descriptor, &id) {
                found = Some(d);
                break;
            }
        }
        match found {
            Some(d) => out.push(d),
            None => {
                let _ = writeln!(
                    o,
                    "# NOTE: the descriptor of {id} ({url}) could not be read"
                );
            }
        }
    }
    out
}

/// Whether a descriptor reveals who plays `role` (behaviour roles it cannot).
fn revealed(role: FixtureRole) -> bool {
    use FixtureRole::*;
    !matches!(role, Instant | Slow | Failing | Overrun)
}

/// Whether `d` plays `role` by what it declares (every skill may play an unrevealed role).
fn declares(role: FixtureRole, d: &SkillDescriptor) -> bool {
    use FixtureRole::*;
    match role {
        Restricted => d.access == AccessPolicy::Restricted,
        Private => d.access == AccessPolicy::Private,
        AuthNone => d.access == AccessPolicy::Public && d.auth.kind == AuthType::None,
        AuthApiKey => d.auth.kind == AuthType::ApiKey,
        AuthOauth2 => d.auth.kind == AuthType::Oauth2,
        AuthCustom => d.auth.kind == AuthType::Custom,
        Instant | Slow | Failing | Overrun => true,
    }
}

/// The credential name a skill's auth type needs, if the profile lacks it.
fn missing_credential(d: &SkillDescriptor, c: &SspCredentials) -> Option<&'static str> {
    match d.auth.kind {
        AuthType::None => None,
        AuthType::ApiKey => c.api_key.is_none().then_some("api_key"),
        AuthType::Oauth2 => c.oauth2_token.is_none().then_some("oauth2_token"),
        AuthType::Custom => c.hmac_secret.is_none().then_some("hmac_secret"),
    }
}

/// Maps every role a descriptor reveals onto the first skill that plays it with a usable
/// credential and certain inputs; the rest become notes.
fn map_roles(ds: &[SkillDescriptor], p: &mut SspProfile, notes: &mut Vec<String>) {
    for role in FixtureRole::ALL {
        let candidates: Vec<&SkillDescriptor> = ds.iter().filter(|d| declares(role, d)).collect();
        if !revealed(role) {
            let ids: Vec<&str> = candidates.iter().map(|d| d.id.as_str()).collect();
            notes.push(format!(
                "{role} = \"…\"   # MISSING: {} — a descriptor cannot tell; skills: {}",
                role_meaning(role),
                ids.join(", ")
            ));
            continue;
        }
        let mut why = Vec::new();
        let chosen = candidates.iter().find_map(|d| {
            if let Some(c) = missing_credential(d, &p.credentials) {
                why.push(format!("{} needs --token {c}=…", d.id));
                return None;
            }
            match inputs_for(d) {
                Ok(inputs) => Some((d.id.clone(), inputs)),
                Err(missing) => {
                    why.push(format!(
                        "{} needs [ssp.inputs] {role} = {{ {missing} }}",
                        d.id
                    ));
                    None
                }
            }
        });
        match chosen {
            Some((id, inputs)) => {
                p.roles.insert(role, id);
                if !inputs.is_empty() {
                    p.inputs.insert(role, inputs);
                }
            }
            None if candidates.is_empty() => notes.push(format!(
                "{role} = \"…\"   # MISSING: no skill is {}",
                role_meaning(role)
            )),
            None => notes.push(format!("{role} = \"…\"   # MISSING: {}", why.join("; "))),
        }
    }
}

/// What a fixture role is (ssp.md §7).
fn role_meaning(role: FixtureRole) -> &'static str {
    use FixtureRole::*;
    match role {
        Instant => "a skill that finishes at once",
        Slow => "a skill that runs for a while (non-terminal states observable)",
        Failing => "a skill that always ends `failed`",
        Overrun => "a skill that overruns its endpoint.timeout_ms",
        Restricted => "`access: restricted`",
        Private => "`access: private`",
        AuthNone => "public with `auth.type: none`",
        AuthApiKey => "`auth.type: api_key`",
        AuthOauth2 => "`auth.type: oauth2`",
        AuthCustom => "`auth.type: custom`",
    }
}

/// Inputs certain to satisfy `d`'s required parameters: a default, the schema's `const`,
/// first `enum` or `examples` value, or a word for a string with no constraint. `Err` names
/// the parameters that need a value from a person.
fn inputs_for(d: &SkillDescriptor) -> Result<Map<String, Value>, String> {
    let mut out = Map::new();
    let mut missing = Vec::new();
    for p in d.inputs.iter().filter(|p| p.required) {
        match certain_value(p) {
            Some(v) => {
                out.insert(p.name.clone(), v);
            }
            None => missing.push(format!("{} = …", p.name)),
        }
    }
    if missing.is_empty() {
        Ok(out)
    } else {
        Err(missing.join(", "))
    }
}

/// A value of `p` that cannot be invalid, if there is one.
fn certain_value(p: &ParameterDefinition) -> Option<Value> {
    if let Some(v) = &p.default {
        return Some(v.clone());
    }
    let schema = p.schema.as_ref();
    let first = |key: &str| {
        schema
            .and_then(|s| s.get(key))
            .and_then(Value::as_array)
            .and_then(|a| a.first().cloned())
    };
    if let Some(v) = schema.and_then(|s| s.get("const")) {
        return Some(v.clone());
    }
    if let Some(v) = first("enum").or_else(|| first("examples")) {
        return Some(v);
    }
    let unconstrained = schema.is_none_or(|s| s.keys().all(|k| k == "type" || k == "description"));
    (p.kind == "string" && unconstrained).then(|| Value::String("conform".into()))
}

/// The `[ssp]` table: credentials, roles, inputs; what is missing as comments.
fn write_section(o: &mut String, p: &SspProfile, ds: &[SkillDescriptor], notes: &[String]) {
    let ids: Vec<String> = ds
        .iter()
        .map(|d| {
            format!(
                "{} ({}, auth {})",
                d.id,
                d.access.as_str(),
                d.auth.kind.as_str()
            )
        })
        .collect();
    let _ = writeln!(o, "# skills: {}", ids.join("; "));
    let _ = writeln!(o, "[ssp.credentials]");
    let c = &p.credentials;
    for (name, value) in [
        ("api_key", &c.api_key),
        ("api_key_limited", &c.api_key_limited),
        ("oauth2_token", &c.oauth2_token),
        ("oauth2_token_limited", &c.oauth2_token_limited),
        ("hmac_secret", &c.hmac_secret),
    ] {
        match value {
            Some(v) => {
                let _ = writeln!(o, "{name} = {}", toml_str(v));
            }
            None => {
                let _ = writeln!(o, "# {name} = \"…\"   # not given (--token {name}=…)");
            }
        }
    }
    let _ = writeln!(o, "\n[ssp.roles]");
    for (role, id) in &p.roles {
        let _ = writeln!(o, "{role} = {}", toml_str(id));
    }
    for n in notes {
        let _ = writeln!(o, "# {n}");
    }
    if !p.inputs.is_empty() {
        let _ = writeln!(o, "\n[ssp.inputs]");
        for (role, inputs) in &p.inputs {
            match toml::Value::try_from(Value::Object(inputs.clone())) {
                Ok(v) => {
                    let _ = writeln!(o, "{role} = {v}");
                }
                Err(e) => {
                    let _ = writeln!(o, "# {role}: inputs not expressible in TOML ({e})");
                }
            }
        }
    }
}

/// The SSP checks a run with this table reports `unsupported`: each check's own role needs.
fn write_unsupported(o: &mut String, p: &SspProfile) {
    let missing: Vec<(String, Vec<FixtureRole>)> = catalogue()
        .into_iter()
        .filter_map(|decl| {
            let roles: Vec<FixtureRole> = (decl.roles.iter().copied())
                .filter(|r| !p.roles.contains_key(r))
                .collect();
            (!roles.is_empty()).then(|| (decl.id.to_string(), roles))
        })
        .collect();
    let _ = writeln!(
        o,
        "# With this table {} SSP provider checks will be `unsupported`{}",
        missing.len(),
        if missing.is_empty() { "." } else { ":" }
    );
    for (id, roles) in &missing {
        let names: Vec<&str> = roles.iter().map(|r| r.as_str()).collect();
        let _ = writeln!(o, "#   {id} — no skill for {}", names.join(", "));
    }
}

/// `s` on one comment line.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl Initialisable for Ssp {
    fn init_roles(&self) -> Vec<&'static str> {
        CREDENTIALS.to_vec()
    }

    fn init<'a>(
        &'a self,
        target: &'a Target,
        tokens: &'a [GivenToken],
        _vectors_dir: &'a std::path::Path,
    ) -> futures::future::BoxFuture<'a, InitPart> {
        use futures::FutureExt as _;
        init(target, tokens).boxed()
    }
}
