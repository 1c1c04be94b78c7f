//! The pure JSON rewrites of the wire variants: each takes the correct body the server
//! produced and returns the same content in the variant's legal layout. No IO, so each is
//! unit-tested on its own.

use serde_json::{Map, Value, json};

use super::catalogue::{Variant, Variants};

/// The extra member of `extra-response-members`.
const PARLEY_EXTRA: &str = "x_server";
/// The extra member of `ssp-extra-members`.
const SSP_EXTRA: &str = "x_provider";

/// Members holding RFC 3339 timestamps, in both protocols' bodies.
const TIMESTAMP_MEMBERS: &[&str] = &[
    "created_at",
    "updated_at",
    "completed_at",
    "at",
    "confirmed_at",
    "state_confirmed_at",
    "last_activity_at",
    "valid_until",
];

/// Rewrites a Parley body (an HTTP body or an MCP `structuredContent`).
pub(super) fn parley(v: Variants, body: &mut Value) {
    if is_manifest(body) {
        manifest(v, body);
    }
    if v.is_on(Variant::BlankBodyAccepted) {
        each_string(body, &mut restore_blank);
    }
    if v.is_on(Variant::ExtraResponseMembers) {
        each_object(body, &mut |o| {
            o.insert(PARLEY_EXTRA.into(), json!("informational"));
        });
    }
    if v.is_on(Variant::RefusalMessagesFrench)
        && let Some(m) = body.pointer_mut("/error/message")
    {
        *m = json!("requête refusée (voir reason)");
    }
    common(v, body);
}

/// Rewrites an SSP body (index, descriptor, invocation response or error).
pub(super) fn ssp(v: Variants, body: &mut Value) {
    if v.is_on(Variant::SspExtraMembers) {
        add_member(body, SSP_EXTRA);
        for p in ["/error", "/provider"] {
            if let Some(o) = body.pointer_mut(p) {
                add_member(o, SSP_EXTRA);
            }
        }
        if let Some(Value::Array(entries)) = body.get_mut("skills") {
            entries.iter_mut().for_each(|e| add_member(e, SSP_EXTRA));
        }
    }
    if v.is_on(Variant::SspBareErrors)
        && let Some(Value::Object(e)) = body.get_mut("error")
    {
        e.remove("details");
        e.remove("retry");
    }
    if v.is_on(Variant::SspValidationDetailsUpstream)
        && body.pointer("/error/code") == Some(&json!("VALIDATION_ERROR"))
        && let Some(Value::Array(items)) = body.pointer_mut("/error/details")
    {
        for item in items.iter_mut().filter_map(Value::as_object_mut) {
            if let Some(path) = item.remove("path") {
                item.insert("field".into(), path);
            }
        }
    }
    if v.is_on(Variant::SspAuthRetryOther)
        && body.pointer("/error/code") == Some(&json!("AUTH_REQUIRED"))
        && let Some(retry) = body.pointer_mut("/error/retry")
    {
        *retry = json!({"suggested_delay_ms": 1000, "max_attempts": 3});
    }
    if v.is_on(Variant::SspTemplatesWithoutId) {
        for p in ["/endpoint/status_url", "/endpoint/result_url"] {
            if let Some(Value::String(t)) = body.pointer_mut(p)
                && let Some(bare) = t.strip_suffix("/{execution_id}")
            {
                *t = bare.to_owned();
            }
        }
    }
    if v.is_on(Variant::SspExecutionTimeoutAlias)
        && let Some(code) = body.pointer_mut("/error/code")
        && code == "INVOCATION_TIMEOUT"
    {
        *code = json!("EXECUTION_TIMEOUT");
    }
    if v.is_on(Variant::RefusalMessagesFrench)
        && let Some(m) = body.pointer_mut("/error/message")
    {
        *m = json!("erreur du fournisseur de compétences");
    }
    if v.is_on(Variant::SspPathsMoved) {
        each_string(body, &mut |s| {
            if s.starts_with("http") && s.contains(super::catalogue::SSP_PREFIX) {
                *s = s.replacen(super::catalogue::SSP_PREFIX, super::catalogue::SSP_MOVED, 1);
            }
        });
    }
    common(v, body);
}

/// The rewrites every body gets, last (after the protocol's own).
pub(super) fn common(v: Variants, body: &mut Value) {
    if v.is_on(Variant::TimestampsWithOffset) {
        each_object(body, &mut |o| {
            for name in TIMESTAMP_MEMBERS {
                if let Some(Value::String(s)) = o.get_mut(*name) {
                    *s = with_offset(s);
                }
            }
        });
    }
    if v.is_on(Variant::MembersReversed) {
        reverse_members(body);
    }
}

/// The body as bytes: pretty-printed under `pretty-json`, compact otherwise.
pub(super) fn render(v: Variants, body: &Value) -> Vec<u8> {
    let out = if v.is_on(Variant::PrettyJson) {
        serde_json::to_vec_pretty(body)
    } else {
        serde_json::to_vec(body)
    };
    // Serialising a `Value` cannot fail (its keys are strings).
    out.unwrap_or_default()
}

fn is_manifest(body: &Value) -> bool {
    body.get("parley").is_some() && body.get("operations").is_some()
}

/// The manifest variants (PV-MF-1's open layout, PV-ID-1's realm, moved routes).
fn manifest(v: Variants, m: &mut Value) {
    if v.is_on(Variant::ProfileKindsAsObjects) {
        profile_kinds_as_objects(m);
    }
    if let Some(Value::Array(ops)) = m.get_mut("operations") {
        for op in ops {
            if v.is_on(Variant::OperationBindingsAsStrings)
                && let Some(tool) = op.pointer("/mcp/tool").cloned()
            {
                op["mcp"] = tool;
            }
            if v.is_on(Variant::OperationRoutesMoved)
                && let Some(Value::String(path)) = op.pointer_mut("/http/path")
                && let Some(moved) = super::catalogue::moved_parley_path(path)
            {
                *path = moved;
            }
            if v.is_on(Variant::ManifestInformationalMembers) {
                add_member(op, "description");
            }
        }
    }
    if v.is_on(Variant::ManifestInformationalMembers) {
        add_member(m, "contact");
        m["server"] = json!({"name": "variant server", "vendor": "conform"});
        if let Some(limits) = m.get_mut("limits") {
            limits["retention_days"] = json!(30);
        }
        if let Some(Value::Array(kinds)) = m.get_mut("kinds") {
            kinds.iter_mut().for_each(|k| add_member(k, "description"));
        }
    }
    if v.is_on(Variant::ServerVersionPrerelease) {
        m["version"] = json!("1.0.0-rc.2+build.7");
    }
    if v.is_on(Variant::IdentityRealmForum) {
        m["identity"] = json!({"realm": super::catalogue::VARIANT_REALM});
    }
}

/// `profiles[].kinds` as kind objects: each name replaced by the top-level kind object of
/// that name (or `{"name": …}` when the top level does not list it).
fn profile_kinds_as_objects(m: &mut Value) {
    let top: Vec<Value> = m
        .get("kinds")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let object_of = |name: &str| {
        top.iter()
            .find(|k| k.get("name").and_then(Value::as_str) == Some(name))
            .cloned()
            .unwrap_or_else(|| json!({"name": name}))
    };
    if let Some(Value::Array(profiles)) = m.get_mut("profiles") {
        for p in profiles {
            if let Some(Value::Array(kinds)) = p.get_mut("kinds") {
                for k in kinds.iter_mut() {
                    if let Some(name) = k.as_str().map(str::to_owned) {
                        *k = object_of(&name);
                    }
                }
            }
        }
    }
}

fn add_member(v: &mut Value, name: &str) {
    if let Value::Object(o) = v {
        o.insert(name.into(), json!("informational"));
    }
}

/// `2026-12-01T17:00:00.123Z` → `2026-12-01T17:00:00.123000+00:00`; anything that is not
/// an RFC 3339 UTC timestamp is returned unchanged.
fn with_offset(s: &str) -> String {
    match chrono::DateTime::parse_from_rfc3339(s) {
        Ok(t) if s.ends_with('Z') => t.format("%Y-%m-%dT%H:%M:%S%.6f+00:00").to_string(),
        _ => s.to_owned(),
    }
}

fn reverse_members(v: &mut Value) {
    match v {
        Value::Object(o) => {
            let taken = std::mem::take(o);
            let mut reversed: Map<String, Value> = taken.into_iter().rev().collect();
            reversed.values_mut().for_each(reverse_members);
            *o = reversed;
        }
        Value::Array(a) => a.iter_mut().for_each(reverse_members),
        _ => {}
    }
}

fn each_object(v: &mut Value, f: &mut impl FnMut(&mut Map<String, Value>)) {
    match v {
        Value::Object(o) => {
            f(o);
            o.values_mut().for_each(|c| each_object(c, f));
        }
        Value::Array(a) => a.iter_mut().for_each(|c| each_object(c, f)),
        _ => {}
    }
}

/// `blank-body-accepted`: each ASCII whitespace character stands in as the private-use
/// character U+E000 + its code, one for one, so that a whitespace-only body passes the
/// reference's blank check with its length intact and reads back exactly as sent.
const STAND_IN: u32 = 0xE000;

/// The stand-in text of a non-empty, ASCII-whitespace-only `s` (`None` for any other).
pub(super) fn hide_blank(s: &str) -> Option<String> {
    (!s.is_empty() && s.chars().all(|c| c.is_ascii_whitespace())).then(|| {
        s.chars()
            .map(|c| char::from_u32(STAND_IN + u32::from(c)).unwrap_or(c))
            .collect()
    })
}

/// The whitespace a string made only of stand-ins stood for; other strings stay as they are.
fn restore_blank(s: &mut String) {
    let back: Option<String> = s
        .chars()
        .map(|c| {
            let n = u32::from(c).checked_sub(STAND_IN)?;
            char::from_u32(n).filter(char::is_ascii_whitespace)
        })
        .collect();
    if let Some(b) = back.filter(|b| !b.is_empty()) {
        *s = b;
    }
}

fn each_string(v: &mut Value, f: &mut impl FnMut(&mut String)) {
    match v {
        Value::String(s) => f(s),
        Value::Object(o) => o.values_mut().for_each(|c| each_string(c, f)),
        Value::Array(a) => a.iter_mut().for_each(|c| each_string(c, f)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used)] // tests: a panic is the failure report
    use super::*;

    fn on(names: &[&str]) -> Variants {
        Variants::from_names(names).unwrap()
    }

    #[test]
    fn timestamps_keep_their_instant() {
        let out = with_offset("2026-12-01T17:00:00.123Z");
        assert_eq!(out, "2026-12-01T17:00:00.123000+00:00");
        assert_eq!(
            chrono::DateTime::parse_from_rfc3339(&out).unwrap(),
            chrono::DateTime::parse_from_rfc3339("2026-12-01T17:00:00.123Z").unwrap()
        );
        assert_eq!(with_offset("not a time"), "not a time");
        // A body that looks like a time is not a timestamp member: left alone.
        let mut m = json!({"body": "2026-12-01T17:00:00Z", "created_at": "2026-12-01T17:00:00Z"});
        common(on(&["timestamps-with-offset"]), &mut m);
        assert_eq!(m["body"], "2026-12-01T17:00:00Z");
        assert_eq!(m["created_at"], "2026-12-01T17:00:00.000000+00:00");
    }

    #[test]
    fn reversal_keeps_content() {
        let mut v = json!({"a": 1, "b": {"c": 2, "d": [ {"e": 3, "f": 4} ]}});
        let before = v.clone();
        common(on(&["members-reversed"]), &mut v);
        assert_eq!(v, before, "same members and values");
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["b", "a"]);
    }

    #[test]
    fn profile_kinds_become_the_top_level_objects() {
        let mut m = json!({"parley": "1", "operations": [],
            "kinds": [{"name": "assert", "awaiting": true}],
            "profiles": [{"name": "dialectic", "kinds": ["assert", "attest"]}]});
        parley(on(&["profile-kinds-as-objects"]), &mut m);
        assert_eq!(
            m["profiles"][0]["kinds"],
            json!([{"name": "assert", "awaiting": true}, {"name": "attest"}])
        );
    }

    #[test]
    fn mcp_binding_becomes_the_tool_name() {
        let mut m =
            json!({"parley": "1", "operations": [{"name": "post", "mcp": {"tool": "post"}}]});
        parley(on(&["operation-bindings-as-strings"]), &mut m);
        assert_eq!(m["operations"][0]["mcp"], "post");
    }

    #[test]
    fn ssp_paths_move_in_urls_only() {
        let mut d = json!({"endpoint": {"url": "http://h/ssp/invoke/echo"}, "note": "/ssp/x"});
        ssp(on(&["ssp-paths-moved"]), &mut d);
        assert_eq!(d["endpoint"]["url"], "http://h/skills-api/invoke/echo");
        assert_eq!(d["note"], "/ssp/x");
    }
}
