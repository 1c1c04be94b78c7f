//! Promotion (`conform fuzz --suite ssp --promote DIR`): each finding becomes a request
//! vector (`ssp::requests`), so the hostile request that broke an oracle runs in every later
//! `conform run` against any provider, judged by the same oracles. What is the provider's
//! own — the discovery URL, a fixture's endpoint, its valid request, its working
//! credential — is written by fixture role, so another provider resolves its own and no
//! secret reaches the file; a finding whose request cannot be written so is left out (the
//! campaign's report keeps its reproduction).

use super::cases::{Case, Invocable, Knowledge};
use super::{Kept, KeptFound};
use crate::ssp::provider::env::Cred;
use crate::ssp::requests::format::{
    Body, CredSpec, Expect, Request, RequestFile, RequestVector, Url,
};

/// The vector file of a finished campaign's findings; `None` when no finding has a request
/// that can be written as a vector.
pub fn vector_file(kept: &Kept) -> Option<RequestFile> {
    let vectors: Vec<RequestVector> = (kept.findings.iter().enumerate())
        .filter_map(|(i, f)| vector(f, kept, i + 1))
        .collect();
    (!vectors.is_empty()).then(|| RequestFile {
        format_version: 1,
        suite: "ssp-requests".into(),
        description: Some(format!(
            "promoted by conform fuzz --suite ssp --seed {} against {}",
            kept.seed, kept.base
        )),
        vectors,
    })
}

fn vector(f: &KeptFound, kept: &Kept, n: usize) -> Option<RequestVector> {
    let c = f.case.as_ref()?;
    let k = &kept.knowledge;
    let request = Request {
        op: c.op.to_string(),
        method: c.method.clone(),
        to: url(c, k, &kept.base)?,
        headers: c.headers.clone(),
        body: c.body.as_deref().map(|b| body(b, &k.skills)),
        cred: cred(&c.cred, &k.skills)?,
    };
    Some(RequestVector {
        id: format!("fuzz-seed-{}-{}-{}-{n}", kept.seed, f.op, f.oracle()),
        requirements: rules(f, &request),
        title: format!(
            "promoted ssp-fuzz finding (seed {}): {} — {}",
            kept.seed, f.mutation, f.finding.message
        ),
        request,
        expect: Expect {
            well_formed: true,
            refused: c.invalid,
            ssp_route: c.ssp_route,
            hostile_uri: c.hostile_uri,
            may_drop: c.may_drop,
        },
    })
}

/// The rules the vector cites: its oracle's, and for a request that had to be refused only
/// the one its kind breaks (`invalid-refused` covers three).
fn rules(f: &KeptFound, r: &Request) -> Vec<String> {
    if f.oracle() != super::oracles::REFUSED.name {
        return f.finding.rules.clone();
    }
    let rule = match (r.op.as_str(), &r.cred) {
        // The skill's own API key in another header (SSP-AUTH-4).
        (
            "auth",
            CredSpec::Of {
                header: Some(_), ..
            },
        ) => "SSP-AUTH-4",
        ("auth", _) => "SSP-AUTH-2",
        _ => "SSP-INV-2",
    };
    vec![rule.to_string()]
}

/// The case's URL by what it is on the target: the discovery URL and a suffix, a fixture's
/// endpoint, or a path on the origin.
fn url(c: &Case, k: &Knowledge, base: &str) -> Option<Url> {
    if let Some(rest) = c.url.strip_prefix(&k.well_known)
        && (rest.is_empty() || rest.starts_with('?'))
    {
        return Some(Url::WellKnown(rest.to_string()));
    }
    if let Some(s) = k.skills.iter().find(|s| s.url == c.url) {
        return Some(Url::Endpoint(s.role));
    }
    let path = c.url.strip_prefix(base.trim_end_matches('/'))?;
    path.starts_with('/').then(|| Url::Path(path.to_string()))
}

fn body(b: &[u8], skills: &[Invocable]) -> Body {
    if let Some(s) = skills
        .iter()
        .find(|s| s.request.to_string().as_bytes() == b)
    {
        return Body::ValidRequestOf(s.role);
    }
    match std::str::from_utf8(b) {
        Ok(t) => Body::Text(t.to_string()),
        Err(_) => Body::Hex(hex::encode(b)),
    }
}

/// The credential by role when it is a fixture's (or its API key moved to another header);
/// `None` for another credential of the profile, which only a secret could write.
fn cred(c: &Cred, skills: &[Invocable]) -> Option<CredSpec> {
    match c {
        Cred::None => Some(CredSpec::None),
        Cred::Header(n, v) => Some(CredSpec::Header(n.clone(), v.clone())),
        _ => {
            if let Some(s) = skills.iter().find(|s| s.cred == *c) {
                return Some(CredSpec::Of {
                    role: s.role,
                    header: None,
                });
            }
            let Cred::ApiKey { header, key } = c else {
                return None;
            };
            let s = skills
                .iter()
                .find(|s| matches!(&s.cred, Cred::ApiKey { key: k, .. } if k == key))?;
            Some(CredSpec::Of {
                role: s.role,
                header: Some(header.clone()),
            })
        }
    }
}
