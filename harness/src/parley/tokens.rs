//! The profile's `[tokens]` table: one bearer token per role, or several.
//!
//! PV-TR-5 counts the quota per token, so several tokens standing for one identity spread a
//! role's writes under a low quota (`agent_a = ["tok-1", "tok-2"]`). Every token of a role
//! must stand for the same identity with the same rights (checked in the pre-flight): the
//! vectors assert on authorship and authority, so which token carries a step must not
//! change what the server sees. The quota role (`limited`) takes exactly one token: its
//! checks exist to exhaust that token's quota.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::manifest::Identity;
use super::role::Role;
use crate::engine::target::Profile;

/// Bearer tokens per role, in profile order (the first is the role's primary token).
pub type Tokens = BTreeMap<Role, Vec<String>>;

#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

/// The profile's `[tokens]` table, typed and checked (no empty list, no token twice).
pub fn tokens(profile: &Profile) -> Result<Tokens, String> {
    let Some(v) = profile.section("tokens") else {
        return Ok(Tokens::new());
    };
    let raw: BTreeMap<Role, OneOrMany> =
        v.clone().try_into().map_err(|e| format!("[tokens]: {e}"))?;
    let mut out = Tokens::new();
    for (role, t) in raw {
        let list = match t {
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(l) => l,
        };
        if list.is_empty() {
            return Err(format!("[tokens]: role {role} lists no token"));
        }
        if role == Role::Limited && list.len() > 1 {
            return Err(
                "[tokens]: role limited takes one token (its checks exhaust that token's quota)"
                    .into(),
            );
        }
        out.insert(role, list);
    }
    let mut seen: BTreeMap<&str, Role> = BTreeMap::new();
    for (role, list) in &out {
        for t in list {
            if let Some(prev) = seen.insert(t, *role) {
                return Err(format!(
                    "[tokens]: one token is listed twice (roles {prev} and {role})"
                ));
            }
        }
    }
    Ok(out)
}

/// The environment variable a reproduction names for token `index` of `role`
/// (`CONFORM_TOKEN_AGENT_A`, then `CONFORM_TOKEN_AGENT_A_2`, …).
pub fn token_env(role: Role, index: usize) -> String {
    match index {
        0 => role.token_env(),
        i => format!("{}_{}", role.token_env(), i + 1),
    }
}

/// A problem when a role's extra tokens stand for another identity or other rights than
/// its primary token (`whoamis` in token order).
pub fn same_party(role: Role, whoamis: &[Identity]) -> Option<String> {
    let first = whoamis.first()?;
    whoamis.iter().enumerate().skip(1).find_map(|(i, w)| {
        let mut a = first.rights.clone();
        let mut b = w.rights.clone();
        a.sort();
        b.sort();
        (w.identity != first.identity || a != b).then(|| {
            format!(
                "role {role}: token {} stands for {} {:?}, the first for {} {:?}; a role's tokens must share one identity and its rights",
                i + 1,
                w.identity,
                w.rights,
                first.identity,
                first.rights
            )
        })
    })
}

#[cfg(test)]
#[expect(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;

    fn profile(table: &str) -> Result<Tokens, String> {
        let p = crate::engine::protocol::parse_profile(
            &format!("format_version = 1\nbase_url = \"http://x\"\n[tokens]\n{table}"),
            &crate::registry::protocols(),
        )?;
        tokens(&p)
    }

    #[test]
    fn one_token_or_a_list() {
        let t = profile("agent_a = \"a\"\nagent_b = [\"b1\", \"b2\"]\n").unwrap();
        assert_eq!(t[&Role::AgentA], ["a"]);
        assert_eq!(t[&Role::AgentB], ["b1", "b2"]);
        assert_eq!(token_env(Role::AgentB, 1), "CONFORM_TOKEN_AGENT_B_2");
    }

    #[test]
    fn bad_lists_are_refused() {
        assert!(profile("agent_a = []\n").unwrap_err().contains("no token"));
        assert!(
            profile("limited = [\"l1\", \"l2\"]\n")
                .unwrap_err()
                .contains("one token")
        );
        assert!(
            profile("agent_a = \"x\"\nagent_b = [\"y\", \"x\"]\n")
                .unwrap_err()
                .contains("twice")
        );
    }

    #[test]
    fn a_role_keeps_one_identity() {
        let id = |identity: &str, rights: &[&str]| Identity {
            identity: identity.into(),
            author_kind: None,
            rights: rights.iter().map(|r| r.to_string()).collect(),
            lock_label: None,
            quota_per_minute: Some(60),
        };
        let same = [id("a:x", &["read", "write"]), id("a:x", &["write", "read"])];
        assert_eq!(same_party(Role::AgentA, &same), None);
        let other = [id("a:x", &["read", "write"]), id("a:y", &["read", "write"])];
        assert!(
            same_party(Role::AgentA, &other)
                .unwrap()
                .contains("token 2")
        );
        let rights = [id("a:x", &["read", "write"]), id("a:x", &["read"])];
        assert!(same_party(Role::AgentA, &rights).is_some());
    }
}
