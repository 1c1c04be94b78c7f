//! Promotion (`conform fuzz --suite ssp --promote DIR`): each finding becomes a request
//! vector (`ssp::requests`), so the hostile request that broke an oracle runs in every later
//! `conform run` against any provider, judged by the same oracles. What is the provider's
//! own — the discovery URL, a fixture's endpoint and URL templates, its unmutated valid
//! request, its working credential — is written by fixture role, so another provider
//! resolves its own; a mutated body and a descriptor path stay as sent. No secret of the
//! profile reaches the file: a finding sent with a credential that is not a fixture's is left
//! out (the campaign's report keeps its reproduction), and quoted answers are redacted. An
//! `error-shape` finding on a path (a descriptor path with a hostile tail) is left out too:
//! its replay never judges the error shape there (on another provider the path may be no
//! SSP route), so that vector could never fail.

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
    let to = url(c, k, &kept.base)?;
    if matches!(to, Url::Path(_)) && f.oracle() == super::oracles::ERROR_SHAPE.name {
        return None;
    }
    let request = Request {
        op: c.op.to_string(),
        method: c.method.clone(),
        to,
        headers: (c.headers.iter())
            .map(|(n, v)| (n.clone(), redacted(v, &kept.secrets)))
            .collect(),
        body: c.body.as_deref().map(|b| match body(b, &k.skills) {
            Body::Text(t) => Body::Text(redacted(&t, &kept.secrets)),
            other => other,
        }),
        cred: match cred(&c.cred, &k.skills)? {
            CredSpec::Header(n, v) => CredSpec::Header(n, redacted(&v, &kept.secrets)),
            other => other,
        },
    };
    Some(RequestVector {
        id: format!("fuzz-seed-{}-{}-{}-{n}", kept.seed, f.op, f.oracle()),
        requirements: rules(f, &request),
        title: redacted(
            &format!(
                "promoted ssp-fuzz finding (seed {}): {} — {}",
                kept.seed, f.mutation, f.finding.message
            ),
            &kept.secrets,
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
    for s in &k.skills {
        for (which, t) in &s.templates {
            if let Some(id) = segment(t, &c.url) {
                return Some(Url::Execution {
                    role: s.role,
                    which: *which,
                    id,
                });
            }
        }
    }
    let path = c.url.strip_prefix(base.trim_end_matches('/'))?;
    path.starts_with('/').then(|| Url::Path(path.to_string()))
}

/// The segment `template` was expanded with to give `url` (`ssp::consumer::expand_raw`).
fn segment(template: &str, url: &str) -> Option<String> {
    let (before, after) = match template.split_once("{execution_id}") {
        Some(parts) => parts,
        None => (template.trim_end_matches('/'), ""),
    };
    let rest = url.strip_prefix(before)?;
    let rest = if template.contains("{execution_id}") {
        rest
    } else {
        rest.strip_prefix('/')?
    };
    let id = rest.strip_suffix(after)?;
    (!id.is_empty()).then(|| id.to_string())
}

/// `text` with every secret of the profile replaced (an answer quoted in a finding may
/// echo a credential).
fn redacted(text: &str, secrets: &[String]) -> String {
    (secrets.iter()).fold(text.to_string(), |t, s| t.replace(s.as_str(), "<redacted>"))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_expanded_template_gives_back_its_segment() {
        let t = "http://h/ssp/status/{execution_id}";
        assert_eq!(
            segment(t, "http://h/ssp/status/a%2Fb").as_deref(),
            Some("a%2Fb")
        );
        assert_eq!(
            segment("http://h/x/{execution_id}/out", "http://h/x/7/out").as_deref(),
            Some("7")
        );
        // A template without the variable: the segment was appended after a slash.
        assert_eq!(
            segment("http://h/status/", "http://h/status/9").as_deref(),
            Some("9")
        );
        assert_eq!(segment(t, "http://h/ssp/result/1"), None);
        assert_eq!(segment(t, "http://h/ssp/status/"), None);
    }

    #[test]
    fn secrets_are_redacted() {
        let s = vec!["k3y".to_string()];
        assert_eq!(redacted("bad key k3y!", &s), "bad key <redacted>!");
    }
}
