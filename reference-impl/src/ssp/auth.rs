//! Credential checking for the SSP provider (seed §7, SSP-AUTH-1..4, ssp.md §7).
//!
//! Establishes what a request presents for one auth method ([`Presented`]); the decision
//! itself is the pure [`crate::domain::ssp::decide_auth`]. Credentials are identified by a
//! fingerprint (SHA-256 of method + secret), never stored in clear, so executions can be
//! bound to the credential that created them (SSP-INV-6).

use std::collections::{BTreeSet, HashMap, HashSet};

use axum::http::HeaderMap;
use hmac::{KeyInit, Mac};
use sha2::{Digest, Sha256};

use crate::config::SspCredentials;
use crate::domain::ssp::{AuthRequirement, Presented};

/// The permission every protected demo skill requires to invoke (`skill:invoke`).
pub const INVOKE_SCOPE: &str = "skill:invoke";

/// The credentials the provider accepts, indexed for lookup.
#[derive(Clone, Default)]
pub struct CredentialSet {
    api_allowed: HashSet<String>,
    api_limited: HashSet<String>,
    bearer: HashMap<String, Vec<String>>,
    hmac_secret: Option<Vec<u8>>,
}

impl std::fmt::Debug for CredentialSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print secrets.
        f.debug_struct("CredentialSet")
            .field(
                "api_keys",
                &(self.api_allowed.len() + self.api_limited.len()),
            )
            .field("bearer_tokens", &self.bearer.len())
            .field("hmac", &self.hmac_secret.is_some())
            .finish()
    }
}

fn fingerprint(method: &str, secret: &[u8]) -> String {
    let mut h = Sha256::new();
    h.update(method.as_bytes());
    h.update([0u8]);
    h.update(secret);
    let digest = h.finalize();
    format!("{method}:{}", &hex::encode(digest)[..32])
}

/// One header value as text, or `None` when absent. Several values or non-text bytes are
/// kept as an invalid marker (the empty string never matches a credential).
fn single_header(headers: &HeaderMap, name: &str) -> Option<String> {
    let mut it = headers.get_all(name).iter();
    let first = it.next()?;
    if it.next().is_some() {
        return Some(String::new());
    }
    Some(
        first
            .to_str()
            .map(|s| s.trim().to_string())
            .unwrap_or_default(),
    )
}

impl CredentialSet {
    /// Indexes the configured credentials.
    pub fn new(c: &SspCredentials) -> Self {
        Self {
            api_allowed: c.api_keys_allowed.iter().cloned().collect(),
            api_limited: c.api_keys_limited.iter().cloned().collect(),
            bearer: c.bearer_tokens.iter().cloned().collect(),
            hmac_secret: c.hmac_secret.as_ref().map(|s| s.as_bytes().to_vec()),
        }
    }

    /// What `headers` (+ the raw `body`, for the HMAC scheme) present for `req`.
    /// SSP-AUTH-4: only the declared place counts — the right key in another header is
    /// `Missing` here, hence 401.
    pub fn presented(&self, req: &AuthRequirement, headers: &HeaderMap, body: &[u8]) -> Presented {
        match req {
            AuthRequirement::None => Presented::Missing,
            AuthRequirement::ApiKey { header } => match single_header(headers, header) {
                None => Presented::Missing,
                Some(k) if self.api_allowed.contains(&k) => Presented::Valid {
                    fingerprint: fingerprint("api_key", k.as_bytes()),
                    granted: vec![INVOKE_SCOPE.to_string()],
                },
                Some(k) if self.api_limited.contains(&k) => Presented::Valid {
                    fingerprint: fingerprint("api_key", k.as_bytes()),
                    granted: vec![],
                },
                Some(_) => Presented::Invalid,
            },
            AuthRequirement::OAuth2 { .. } => {
                let Some(v) = single_header(headers, "authorization") else {
                    return Presented::Missing;
                };
                let token = v
                    .split_once(' ')
                    .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
                    .map(|(_, t)| t.trim());
                match token.and_then(|t| self.bearer.get_key_value(t)) {
                    Some((t, scopes)) => Presented::Valid {
                        fingerprint: fingerprint("oauth2", t.as_bytes()),
                        granted: scopes.clone(),
                    },
                    None => Presented::Invalid,
                }
            }
            AuthRequirement::Custom { header } => {
                let Some(sig) = single_header(headers, header) else {
                    return Presented::Missing;
                };
                let Some(secret) = &self.hmac_secret else {
                    return Presented::Invalid;
                };
                let Ok(sig) = hex::decode(sig.as_bytes()) else {
                    return Presented::Invalid;
                };
                let Ok(mut mac) = hmac::Hmac::<Sha256>::new_from_slice(secret) else {
                    return Presented::Invalid;
                };
                mac.update(body);
                // Constant-time comparison.
                if mac.verify_slice(&sig).is_ok() {
                    Presented::Valid {
                        fingerprint: fingerprint("hmac", secret),
                        granted: vec![INVOKE_SCOPE.to_string()],
                    }
                } else {
                    Presented::Invalid
                }
            }
        }
    }

    /// Fingerprints of every valid credential in the request, over the auth methods
    /// `methods` (the skills' requirements). Used for authenticated discovery (SSP-DISC-2:
    /// any credential the provider accepts, limited ones included) and for reading
    /// executions (SSP-INV-6).
    pub fn valid_fingerprints<'a>(
        &self,
        methods: impl IntoIterator<Item = &'a AuthRequirement>,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Vec<String> {
        let mut out = BTreeSet::new();
        for m in methods {
            if let Presented::Valid { fingerprint, .. } = self.presented(m, headers, body) {
                out.insert(fingerprint);
            }
        }
        out.into_iter().collect()
    }
}

/// Hex HMAC-SHA256 of `body` under `secret`: the `X-Signature` value of the custom scheme
/// (clients, tests and the README use it).
pub fn sign(secret: &[u8], body: &[u8]) -> String {
    match hmac::Hmac::<Sha256>::new_from_slice(secret) {
        Ok(mut mac) => {
            mac.update(body);
            hex::encode(mac.finalize().into_bytes())
        }
        // HMAC accepts keys of any length; this branch cannot be taken.
        Err(_) => String::new(),
    }
}

/// The `WWW-Authenticate` challenge for a 401 (SSP-AUTH-2).
pub fn www_authenticate(req: &AuthRequirement) -> String {
    match req {
        AuthRequirement::None => String::new(),
        AuthRequirement::ApiKey { header } => format!("ApiKey realm=\"ssp\", header=\"{header}\""),
        AuthRequirement::OAuth2 {
            required_scopes, ..
        } => {
            format!(
                "Bearer realm=\"ssp\", scope=\"{}\"",
                required_scopes.join(" ")
            )
        }
        AuthRequirement::Custom { header } => {
            format!("HMAC-SHA256 realm=\"ssp\", header=\"{header}\"")
        }
    }
}
