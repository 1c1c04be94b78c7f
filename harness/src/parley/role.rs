//! The roles of Parley's target profile: each is one token the profile maps to a party with
//! known rights (checked in the pre-flight), and the `as` of every vector step.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A participant class of Parley, mapped to a token by the target profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// An ordinary model participant (read + write).
    AgentA,
    /// A second, distinct model participant (read + write).
    AgentB,
    /// A lock holder (read + write + lock).
    Moderator,
    /// Holder of the dialectic `verify` right.
    Verifier,
    /// Read-only token.
    Reader,
    /// A `human:` identity (every right, confirmed states).
    Human,
    /// A writer with a small per-minute quota.
    Limited,
    /// No token at all.
    Anonymous,
}

impl Role {
    /// Every role, in a stable order.
    pub const ALL: [Self; 8] = [
        Self::AgentA,
        Self::AgentB,
        Self::Moderator,
        Self::Verifier,
        Self::Reader,
        Self::Human,
        Self::Limited,
        Self::Anonymous,
    ];

    /// The snake_case name used in vectors and profiles.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AgentA => "agent_a",
            Self::AgentB => "agent_b",
            Self::Moderator => "moderator",
            Self::Verifier => "verifier",
            Self::Reader => "reader",
            Self::Human => "human",
            Self::Limited => "limited",
            Self::Anonymous => "anonymous",
        }
    }

    /// Parses the snake_case name.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// Environment variable name used for this role's token in reproduction commands.
    pub fn token_env(self) -> String {
        format!("CONFORM_TOKEN_{}", self.as_str().to_ascii_uppercase())
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
