//! The SSP part of a target profile: which provider skill plays which fixture role, and
//! the credentials the checks may use (ssp.md §7).
//!
//! ```toml
//! [ssp]
//! well_known = "/.well-known/skill-sharing"   # optional
//! [ssp.credentials]
//! api_key = "…"                 # valid key with permission (api_key skills)
//! api_key_limited = "…"         # valid key WITHOUT permission (SSP-AUTH-3)
//! oauth2_token = "…"            # bearer token with every scope
//! oauth2_token_limited = "…"    # valid bearer token missing the invoke scope (SSP-AUTH-3)
//! hmac_secret = "…"             # custom scheme: HMAC-SHA256 of the body, hex, in hmac_header
//! hmac_header = "X-Signature"   # optional
//! [ssp.roles]                   # role → skill id; a role left out makes its checks Unsupported
//! instant = "conform/echo"
//! …
//! [ssp.inputs]                  # role → inputs object used to invoke that role's skill
//! instant = { message = "hello" }
//! [ssp.model_inputs]            # optional: role → inputs the model uses instead
//! slow = { delay_ms = 60 }
//! ```
//!
//! `[ssp.model_inputs]` exists because the two readers of a role want different durations
//! (issue 25): a scripted check reads a `slow` execution once and needs it still running
//! then, while the model follows every execution it starts to its end and waits for each.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;

/// A fixture role (ssp.md §7). A check needing a role the profile does not map is
/// `Unsupported`, never a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FixtureRole {
    /// Finishes at once.
    Instant,
    /// Runs for a while (observable non-terminal states).
    Slow,
    /// Always ends `failed`.
    Failing,
    /// Overruns its `timeout_ms`: ends `timeout`.
    Overrun,
    /// `access: restricted`.
    Restricted,
    /// `access: private`.
    Private,
    /// `auth.type none` (and public).
    AuthNone,
    /// `auth.type api_key`.
    AuthApiKey,
    /// `auth.type oauth2` (with scopes).
    AuthOauth2,
    /// `auth.type custom` (HMAC).
    AuthCustom,
}

impl FixtureRole {
    /// Every role.
    pub const ALL: [Self; 10] = [
        Self::Instant,
        Self::Slow,
        Self::Failing,
        Self::Overrun,
        Self::Restricted,
        Self::Private,
        Self::AuthNone,
        Self::AuthApiKey,
        Self::AuthOauth2,
        Self::AuthCustom,
    ];

    /// Profile spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Instant => "instant",
            Self::Slow => "slow",
            Self::Failing => "failing",
            Self::Overrun => "overrun",
            Self::Restricted => "restricted",
            Self::Private => "private",
            Self::AuthNone => "auth_none",
            Self::AuthApiKey => "auth_api_key",
            Self::AuthOauth2 => "auth_oauth2",
            Self::AuthCustom => "auth_custom",
        }
    }
}

impl fmt::Display for FixtureRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Credentials the checks may present.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SspCredentials {
    /// API key with permission.
    #[serde(default)]
    pub api_key: Option<String>,
    /// Valid API key without permission (→ 403).
    #[serde(default)]
    pub api_key_limited: Option<String>,
    /// OAuth 2.0 bearer token with every scope.
    #[serde(default)]
    pub oauth2_token: Option<String>,
    /// Valid bearer token lacking the invoke scope (→ 403).
    #[serde(default)]
    pub oauth2_token_limited: Option<String>,
    /// Shared secret of the custom HMAC scheme.
    #[serde(default)]
    pub hmac_secret: Option<String>,
    /// Header of the HMAC signature (default `X-Signature`).
    #[serde(default)]
    pub hmac_header: Option<String>,
}

impl SspCredentials {
    /// Every secret it holds (the HMAC header's name is none).
    pub fn secrets(&self) -> Vec<String> {
        [
            &self.api_key,
            &self.api_key_limited,
            &self.oauth2_token,
            &self.oauth2_token_limited,
            &self.hmac_secret,
        ]
        .into_iter()
        .flatten()
        .filter(|s| !s.is_empty())
        .cloned()
        .collect()
    }
}

/// The `[ssp]` table of a target profile.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SspProfile {
    /// Discovery path (default `/.well-known/skill-sharing`).
    #[serde(default)]
    pub well_known: Option<String>,
    /// Credentials.
    #[serde(default)]
    pub credentials: SspCredentials,
    /// Role → skill id.
    #[serde(default)]
    pub roles: BTreeMap<FixtureRole, String>,
    /// Role → inputs object.
    #[serde(default)]
    pub inputs: BTreeMap<FixtureRole, Map<String, Value>>,
    /// Role → inputs object the state-machine model invokes with instead of `inputs`.
    #[serde(default)]
    pub model_inputs: BTreeMap<FixtureRole, Map<String, Value>>,
}

/// Why the `[ssp]` table cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("invalid [ssp] profile table: {0}")]
pub struct ProfileError(pub String);

impl SspProfile {
    /// Reads the `[ssp]` table of a target profile.
    pub fn from_table(t: &toml::Table) -> Result<Self, ProfileError> {
        Self::deserialize(toml::Value::Table(t.clone())).map_err(|e| ProfileError(e.to_string()))
    }

    /// The profile of the reference server's demo configuration (`--spawn-reference`):
    /// its seven demo skills and demo credentials.
    pub fn reference_demo() -> Self {
        use FixtureRole::*;
        let roles = [
            (Instant, "conform/echo"),
            (Slow, "conform/slow-task"),
            (Failing, "conform/always-fails"),
            (Overrun, "conform/overrun"),
            (Restricted, "conform/slow-task"),
            (Private, "conform/forum-digest"),
            (AuthNone, "conform/echo"),
            (AuthApiKey, "conform/slow-task"),
            (AuthOauth2, "conform/forum-digest"),
            (AuthCustom, "conform/spec-lookup"),
        ]
        .into_iter()
        .map(|(r, s)| (r, s.to_owned()))
        .collect();
        let obj = |v: Value| v.as_object().cloned().unwrap_or_default();
        let inputs = [
            (Instant, obj(serde_json::json!({"message": "conform"}))),
            // Long enough that the first result read still finds it running (SSP-INV-4)
            // and a 20 ms context timeout cuts it (SSP-INV-5); short enough not to hold
            // the run: the checks that wait for it take its length each (issue 25).
            (Slow, obj(serde_json::json!({"delay_ms": 300}))),
            (Failing, obj(serde_json::json!({"reason": "conform check"}))),
            (Restricted, obj(serde_json::json!({"delay_ms": 0}))),
            (Private, obj(serde_json::json!({"thread": "th_1"}))),
            (AuthNone, obj(serde_json::json!({"message": "conform"}))),
            (AuthApiKey, obj(serde_json::json!({"delay_ms": 0}))),
            (AuthOauth2, obj(serde_json::json!({"thread": "th_1"}))),
            (AuthCustom, obj(serde_json::json!({"id": "SSP-INV-3"}))),
        ]
        .into_iter()
        .collect();
        // The model follows each slow execution to its end, so each costs its length. The
        // model holds a slow fixture to outlive a context timeout of 20 ms (it must end
        // `timeout`): 60 ms leaves 40 ms for a busy provider to fire that timeout first
        // (the reference also ends work finished past its deadline as `timeout`).
        let model_inputs = [(Slow, obj(serde_json::json!({"delay_ms": 60})))]
            .into_iter()
            .collect();
        Self {
            well_known: None,
            credentials: SspCredentials {
                api_key: Some("demo-ssp-key".into()),
                api_key_limited: Some("demo-ssp-key-limited".into()),
                oauth2_token: Some("demo-oauth-full".into()),
                oauth2_token_limited: Some("demo-oauth-read".into()),
                hmac_secret: Some("demo-hmac-secret".into()),
                hmac_header: None,
            },
            roles,
            inputs,
            model_inputs,
        }
    }

    /// Discovery path.
    pub fn well_known_path(&self) -> &str {
        self.well_known
            .as_deref()
            .unwrap_or(crate::ssp::consumer::WELL_KNOWN_PATH)
    }

    /// Inputs for a role (empty object when unset).
    pub fn inputs_for(&self, role: FixtureRole) -> Map<String, Value> {
        self.inputs.get(&role).cloned().unwrap_or_default()
    }

    /// Inputs the model invokes a role with: `[ssp.model_inputs]`, else `[ssp.inputs]`.
    pub fn model_inputs_for(&self, role: FixtureRole) -> Map<String, Value> {
        match self.model_inputs.get(&role) {
            Some(i) => i.clone(),
            None => self.inputs_for(role),
        }
    }
}
