//! Credential checking for the SSP provider (seed §7, SSP-AUTH-1..4, ssp.md §7).
//!
//! Establishes what a request presents for one auth method ([`Presented`]); the decision
//! itself is the pure [`crate::domain::ssp::decide_auth`]. Credentials are identified by a
//! fingerprint (SHA-256 of method + secret), never stored in clear, so executions can be
//! bound to the credential that created them (SSP-INV-6).
//!
//! The custom HMAC scheme (ssp.md §7, issue 13 §8) has two forms. The seed's, the default:
//! `X-Signature` = hex HMAC-SHA256 of the raw body (polls sign the empty string). And the
//! replay-protected one, used when the request carries [`TIMESTAMP_HEADER`] and
//! [`NONCE_HEADER`]: the signature covers `timestamp \n nonce \n METHOD \n path \n body`
//! ([`signing_input`]), so a poll signature is bound to its execution id; a timestamp more
//! than [`REPLAY_WINDOW_SECS`] away from the provider's clock, or a nonce seen within the
//! window, is refused. Executions created with the second form are readable only with it
//! (their credential fingerprint differs), so the constant signature of the empty string
//! does not read them.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex};

use axum::http::HeaderMap;
use hmac::{KeyInit, Mac};
use sha2::{Digest, Sha256};

use crate::config::SspCredentials;
use crate::domain::ssp::{AuthRequirement, Presented};

/// The permission every protected demo skill requires to invoke (`skill:invoke`).
pub const INVOKE_SCOPE: &str = "skill:invoke";

/// Header of the replay-protected HMAC form: Unix time in seconds.
pub const TIMESTAMP_HEADER: &str = "X-Signature-Timestamp";
/// Header of the replay-protected HMAC form: a value never sent twice (16–128 characters
/// of `A–Z a–z 0–9 - _ . ~`).
pub const NONCE_HEADER: &str = "X-Signature-Nonce";
/// Largest accepted distance between a timestamp and the provider's clock (±5 minutes).
pub const REPLAY_WINDOW_SECS: i64 = 300;
/// Most nonces remembered at once (each for the window); beyond, timestamped requests are
/// refused until some expire (a legitimate signer at the default invocation rate stays far
/// below it).
pub const MAX_NONCES: usize = 250_000;

/// What a request's signature covers: its method, path (without query) and raw body.
#[derive(Debug, Clone, Copy)]
pub struct Signed<'a> {
    /// HTTP method (`GET`, `POST`, …).
    pub method: &'a str,
    /// Request path, as sent (`/ssp/status/exec-…`).
    pub path: &'a str,
    /// Raw body (empty for reads).
    pub body: &'a [u8],
}

/// The nonces seen within the replay window, by a 128-bit digest (the nonce itself is not
/// kept), each with the Unix time after which its timestamp is refused anyway.
#[derive(Debug, Default)]
struct Nonces {
    seen: HashMap<[u8; 16], i64>,
}

impl Nonces {
    /// Records `nonce` (timestamp `ts`) at `now`; `false` if it was seen (a replay) or the
    /// table is full.
    fn record(&mut self, nonce: &str, ts: i64, now: i64) -> bool {
        let digest = Sha256::digest(nonce.as_bytes());
        let mut key = [0u8; 16];
        key.copy_from_slice(&digest[..16]);
        if self.seen.get(&key).is_some_and(|exp| *exp >= now) {
            return false;
        }
        if self.seen.len() >= MAX_NONCES {
            self.seen.retain(|_, exp| *exp >= now);
            if self.seen.len() >= MAX_NONCES {
                tracing::warn!("ssp hmac nonce table full: timestamped request refused");
                return false;
            }
        }
        self.seen.insert(key, ts + REPLAY_WINDOW_SECS);
        true
    }
}

/// The bytes the replay-protected form signs: `timestamp \n nonce \n METHOD \n path \n`
/// followed by the raw body.
pub fn signing_input(timestamp: &str, nonce: &str, req: &Signed<'_>) -> Vec<u8> {
    let mut v = format!("{timestamp}\n{nonce}\n{}\n{}\n", req.method, req.path).into_bytes();
    v.extend_from_slice(req.body);
    v
}

fn valid_nonce(n: &str) -> bool {
    (16..=128).contains(&n.len())
        && n.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~'))
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// The credentials the provider accepts, indexed for lookup.
#[derive(Clone, Default)]
pub struct CredentialSet {
    api_allowed: HashSet<String>,
    api_limited: HashSet<String>,
    bearer: HashMap<String, Vec<String>>,
    hmac_secret: Option<Vec<u8>>,
    nonces: Arc<Mutex<Nonces>>,
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
            nonces: Arc::default(),
        }
    }

    /// What `headers` (+ the signed parts of the request, for the HMAC scheme) present for
    /// `req`. SSP-AUTH-4: only the declared place counts — the right key in another header
    /// is `Missing` here, hence 401.
    pub fn presented(
        &self,
        req: &AuthRequirement,
        headers: &HeaderMap,
        msg: &Signed<'_>,
    ) -> Presented {
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
            AuthRequirement::Custom { header } => self.hmac(header, headers, msg),
        }
    }

    /// The custom HMAC scheme, in its plain or replay-protected form (module docs).
    fn hmac(&self, header: &str, headers: &HeaderMap, msg: &Signed<'_>) -> Presented {
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
        let ts = single_header(headers, TIMESTAMP_HEADER);
        let nonce = single_header(headers, NONCE_HEADER);
        let method = match (&ts, &nonce) {
            (None, None) => {
                mac.update(msg.body);
                "hmac"
            }
            (Some(ts), Some(nonce)) => {
                mac.update(&signing_input(ts, nonce, msg));
                "hmac-replay-protected"
            }
            // One header of the pair without the other is a malformed credential.
            _ => return Presented::Invalid,
        };
        // Constant-time comparison; the signature is checked before anything is recorded.
        if mac.verify_slice(&sig).is_err() {
            return Presented::Invalid;
        }
        if let (Some(ts), Some(nonce)) = (ts, nonce) {
            let now = unix_now();
            let Ok(t) = ts.parse::<i64>() else {
                return Presented::Invalid;
            };
            let fresh = t.abs_diff(now) <= REPLAY_WINDOW_SECS.unsigned_abs();
            // A poisoned lock means a panic elsewhere mid-insert; the table is still valid.
            if !fresh
                || !valid_nonce(&nonce)
                || !self
                    .nonces
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .record(&nonce, t, now)
            {
                return Presented::Invalid;
            }
        }
        Presented::Valid {
            fingerprint: fingerprint(method, secret),
            granted: vec![INVOKE_SCOPE.to_string()],
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
        msg: &Signed<'_>,
    ) -> Vec<String> {
        let mut out = BTreeSet::new();
        let mut seen: Vec<&AuthRequirement> = Vec::new();
        for m in methods {
            // Each method once: a replay-protected HMAC request consumes its nonce.
            if seen.contains(&m) {
                continue;
            }
            seen.push(m);
            if let Presented::Valid { fingerprint, .. } = self.presented(m, headers, msg) {
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

/// The `X-Signature` of the replay-protected form: hex HMAC-SHA256 of [`signing_input`].
pub fn sign_replay_protected(
    secret: &[u8],
    timestamp: &str,
    nonce: &str,
    req: &Signed<'_>,
) -> String {
    sign(secret, &signing_input(timestamp, nonce, req))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nonce_is_accepted_once_within_its_window() {
        let mut n = Nonces::default();
        assert!(n.record("nonce-000000000001", 1000, 1000));
        assert!(!n.record("nonce-000000000001", 1000, 1100));
        assert!(n.record("nonce-000000000002", 1000, 1100));
        // Past its timestamp's window the entry is dead (the timestamp check refuses such a
        // request before the table is asked).
        assert!(n.record("nonce-000000000001", 2000, 1000 + REPLAY_WINDOW_SECS + 1));
    }

    #[test]
    fn the_nonce_table_is_bounded() {
        let mut n = Nonces::default();
        for i in 0..MAX_NONCES {
            assert!(n.record(&format!("nonce-{i:012}"), 0, 0));
        }
        assert!(!n.record("one-too-many-0001", 0, 0));
        // Once the window passed, the expired entries make room.
        assert!(n.record("one-too-many-0001", 400, REPLAY_WINDOW_SECS + 1));
        assert_eq!(n.seen.len(), 1);
    }

    #[test]
    fn the_signing_input_is_timestamp_nonce_method_path_body() {
        let req = Signed {
            method: "GET",
            path: "/ssp/status/exec-1",
            body: b"",
        };
        assert_eq!(
            signing_input("1700000000", "abc", &req),
            b"1700000000\nabc\nGET\n/ssp/status/exec-1\n"
        );
    }
}
