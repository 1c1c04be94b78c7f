//! Parley's part of `conform init`: the `[tokens]` section, each token's role decided by
//! the rights `whoami` reports (the pre-flight's own rules, [`check_roles`]), the roles still
//! missing, and the vectors a run would report `unsupported` — asked of the runner's own
//! [`unsupported_reason`], not a second list.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use super::manifest::{Identity, Manifest};
use super::preflight::{
    LIMITED_QUOTA_BELOW, ParleyTarget, RIGHTS_FORBIDDEN, RIGHTS_NEEDED, check_roles,
    fetch_manifest, whoami,
};
use super::role::Role;
use super::vectors::loader::load_dir;
use super::vectors::runner::{VectorCheck, unsupported_reason};
use crate::capability::init::{GivenToken, InitPart, Initialisable, Speaks, toml_str};
use crate::engine::check::{Bindings, Check as _};
use crate::engine::requirements::Catalogue;
use crate::engine::target::{Target, TargetError};
use crate::parley::protocol::Parley;
use crate::transport::http::HttpTransport;
use crate::transport::mcp::McpTransport;
use crate::transport::{Auth, Transport, TransportKind};

/// Role names `--token ROLE=…` may give Parley.
pub fn roles() -> Vec<&'static str> {
    Role::ALL
        .into_iter()
        .filter(|r| *r != Role::Anonymous)
        .map(Role::as_str)
        .collect()
}

/// A token with the identity `whoami` gave it.
struct Known {
    index: usize,
    token: String,
    identity: Identity,
}

/// The roles the tokens play and what could not be placed.
#[derive(Default)]
struct Assignment {
    roles: BTreeMap<Role, Known>,
    /// Comment lines: tokens refused, rights that fit no role, shared identities.
    notes: Vec<String>,
    used: Vec<usize>,
}

/// Parley's sections of the profile for `target`.
pub async fn init(target: &Target, given: &[GivenToken], vectors_dir: &Path) -> InitPart {
    let mut o = String::from("# ---- Parley v1 ----\n");
    let manifest = match fetch_manifest(target).await {
        Ok(m) => m,
        Err(e) => {
            // The pre-flight's own problems, without its "pre-flight failed against" frame.
            let why = match &e {
                TargetError::Preflight { problems, .. } => one_line(&problems.join("; ")),
                other => one_line(&other.to_string()),
            };
            let _ = writeln!(
                o,
                "# No Parley manifest: {why}\n# The [tokens] section is omitted; run only the SSP suite \
                 (`conform run --suite ssp`)."
            );
            return InitPart {
                text: o,
                used: Vec::new(),
                speaks: Speaks::No(format!("no manifest: {why}")),
            };
        }
    };
    describe_manifest(&mut o, &manifest);
    let http = HttpTransport::new(target.client.clone(), &target.info.base_url, {
        manifest.routes.clone()
    });
    let a = assign(&http, given).await;
    write_tokens(&mut o, &a);
    let part = parley_target(target, manifest, &a);
    write_unsupported(&mut o, &part, vectors_dir);
    InitPart {
        text: o,
        used: a.used,
        speaks: Speaks::Yes,
    }
}

/// Version, profiles and bindings the manifest declares.
fn describe_manifest(o: &mut String, m: &Manifest) {
    let bindings: Vec<&str> = [TransportKind::Http, TransportKind::Mcp]
        .into_iter()
        .filter(|k| m.offers(*k))
        .map(TransportKind::as_str)
        .collect();
    let _ = writeln!(
        o,
        "# manifest: server version {}, profiles [{}], bindings {}",
        m.version.as_deref().unwrap_or("?"),
        m.profiles.join(", "),
        bindings.join(" + ")
    );
}

/// `whoami` for every Parley token; explicit roles first (a bare token must not take the
/// role another token was named for), then bare tokens to the first free role they fit.
async fn assign(http: &dyn Transport, given: &[GivenToken]) -> Assignment {
    let mut a = Assignment::default();
    let mut bare = Vec::new();
    for (index, g) in given.iter().enumerate() {
        let role = match g.role.as_deref() {
            None => None,
            Some(name) => match Role::parse(name) {
                Some(r) if r != Role::Anonymous => Some(r),
                // Another protocol's credential.
                _ => continue,
            },
        };
        a.used.push(index);
        let label = role.map_or(format!("token #{}", index + 1), |r| format!("role {r}"));
        let auth = Auth::Bearer {
            token: g.token.clone(),
            env: None,
        };
        let identity = match whoami(http, &auth, &label).await {
            Ok(id) => id,
            Err(e) => {
                a.notes.push(format!("{e} — not written"));
                continue;
            }
        };
        let known = Known {
            index,
            token: g.token.clone(),
            identity,
        };
        match role {
            Some(r) => place_named(&mut a, r, known),
            None => bare.push(known),
        }
    }
    for known in bare {
        // A token under the quota the `limited` role needs is offered that role first: as an
        // agent it would slow every writing check down to its quota.
        let low_quota = (known.identity.quota_per_minute).is_some_and(|q| q < LIMITED_QUOTA_BELOW);
        let order = low_quota
            .then_some(Role::Limited)
            .into_iter()
            .chain(Role::ALL);
        let free = order
            .filter(|r| *r != Role::Anonymous && !a.roles.contains_key(r))
            .find(|r| fits(*r, &known.identity));
        match free {
            Some(r) => {
                a.roles.insert(r, known);
            }
            None => a.notes.push(format!(
                "token #{} ({}) fits no free role — not written",
                known.index + 1,
                describe_identity(&known.identity)
            )),
        }
    }
    let ids: BTreeMap<Role, Identity> = (a.roles.iter())
        .map(|(r, k)| (*r, k.identity.clone()))
        .collect();
    a.notes.extend(check_roles(&ids));
    a
}

/// A token named for `role`: kept when its rights fit, else reported.
fn place_named(a: &mut Assignment, role: Role, known: Known) {
    let alone = BTreeMap::from([(role, known.identity.clone())]);
    let problems = check_roles(&alone);
    match a.roles.entry(role) {
        std::collections::btree_map::Entry::Occupied(_) => a.notes.push(format!(
            "role {role} was given twice: the first token is kept"
        )),
        std::collections::btree_map::Entry::Vacant(slot) if problems.is_empty() => {
            slot.insert(known);
        }
        std::collections::btree_map::Entry::Vacant(_) => a.notes.push(format!(
            "the token given for {role} does not fit it — not written: {}",
            problems.join("; ")
        )),
    }
}

/// Whether an identity meets the pre-flight's rules for `role` (the same rules, asked).
fn fits(role: Role, id: &Identity) -> bool {
    check_roles(&BTreeMap::from([(role, id.clone())])).is_empty()
}

/// `agent:a, rights read+write, 6000 writes/min`.
fn describe_identity(id: &Identity) -> String {
    let quota = id
        .quota_per_minute
        .map_or(String::new(), |q| format!(", {q} writes/min"));
    format!("{}, rights {}{quota}", id.identity, id.rights.join("+"))
}

/// What a role needs, from the pre-flight's tables.
fn role_needs(role: Role) -> String {
    let mut parts = Vec::new();
    if let Some((_, need)) = RIGHTS_NEEDED.iter().find(|(r, _)| *r == role) {
        parts.push(format!("rights {}", need.join("+")));
    }
    if let Some((_, no)) = RIGHTS_FORBIDDEN.iter().find(|(r, _)| *r == role) {
        parts.push(format!("without {}", no.join("/")));
    }
    match role {
        Role::Human => parts.push("a `human:` identity".into()),
        Role::Limited => parts.push(format!("a quota below {LIMITED_QUOTA_BELOW} writes/min")),
        Role::AgentB => parts.push("another identity than agent_a".into()),
        _ => {}
    }
    parts.join(", ")
}

/// The `[tokens]` table: assigned roles, then the missing ones commented out.
fn write_tokens(o: &mut String, a: &Assignment) {
    let _ = writeln!(o, "[tokens]");
    for (role, k) in &a.roles {
        let _ = writeln!(
            o,
            "{role} = {}   # whoami: {}",
            toml_str(&k.token),
            describe_identity(&k.identity)
        );
    }
    for role in Role::ALL {
        if role != Role::Anonymous && !a.roles.contains_key(&role) {
            let _ = writeln!(o, "# {role} = \"…\"   # MISSING: {}", role_needs(role));
        }
    }
    for n in &a.notes {
        let _ = writeln!(o, "# NOTE: {}", one_line(n));
    }
}

/// The assigned tokens as the runner sees a pre-flighted target.
fn parley_target(target: &Target, manifest: Manifest, a: &Assignment) -> ParleyTarget {
    let http: Arc<dyn Transport> = Arc::new(HttpTransport::new(
        target.client.clone(),
        &target.info.base_url,
        manifest.routes.clone(),
    ));
    let mcp: Arc<dyn Transport> = Arc::new(McpTransport::new(
        target.client.clone(),
        &target.info.mcp_url,
        target.info.mcp_revision,
        manifest.tools.clone(),
        Auth::None,
    ));
    ParleyTarget {
        manifest,
        identities: (a.roles.iter())
            .map(|(r, k)| (*r, k.identity.clone()))
            .collect(),
        tokens: (a.roles.iter())
            .map(|(r, k)| (*r, vec![k.token.clone()]))
            .collect(),
        http,
        mcp,
        time_scale: target.time_scale(),
    }
}

/// The vectors a run with these tokens would report `unsupported`, grouped by reason.
fn write_unsupported(o: &mut String, part: &ParleyTarget, vectors_dir: &Path) {
    let catalogue = match Catalogue::load(&vectors_dir.join("requirements/parley.toml")) {
        Ok(c) => c,
        Err(e) => {
            let _ = writeln!(o, "# (unsupported checks not computed: {e})");
            return;
        }
    };
    let vectors = match load_dir(&vectors_dir.join("parley"), None, Some(&catalogue)) {
        Ok(v) => v,
        Err(e) => {
            let _ = writeln!(o, "# (unsupported checks not computed: {e})");
            return;
        }
    };
    let (mut total, mut by_reason) = (0usize, BTreeMap::<String, Vec<String>>::new());
    for lv in vectors {
        let check = VectorCheck::new(lv, &catalogue);
        let Bindings::Each(kinds) = check.bindings() else {
            continue;
        };
        let kinds = kinds
            .into_iter()
            .filter_map(crate::capability::transports::kind);
        for kind in kinds.filter(|k| part.manifest.offers(*k)) {
            total += 1;
            if let Ok(Some((_, reason))) = unsupported_reason(&check.loaded().vector, part, kind) {
                by_reason
                    .entry(reason)
                    .or_default()
                    .push(format!("{}@{kind}", check.id()));
            }
        }
    }
    let n: usize = by_reason.values().map(Vec::len).sum();
    let _ = writeln!(
        o,
        "# With these tokens {n} of {total} Parley vector runs will be `unsupported`{}",
        if n == 0 { "." } else { ":" }
    );
    for (reason, ids) in &by_reason {
        let shown: Vec<&str> = ids.iter().take(4).map(String::as_str).collect();
        let more = ids.len().saturating_sub(shown.len());
        let _ = writeln!(
            o,
            "#   {} — {reason}: {}{}",
            ids.len(),
            shown.join(", "),
            if more > 0 {
                format!(", … ({more} more)")
            } else {
                String::new()
            }
        );
    }
}

/// `s` on one comment line.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl Initialisable for Parley {
    fn init_roles(&self) -> Vec<&'static str> {
        roles()
    }

    fn init<'a>(
        &'a self,
        target: &'a Target,
        tokens: &'a [GivenToken],
        vectors_dir: &'a Path,
    ) -> futures::future::BoxFuture<'a, InitPart> {
        use futures::FutureExt as _;
        init(target, tokens, vectors_dir).boxed()
    }
}
