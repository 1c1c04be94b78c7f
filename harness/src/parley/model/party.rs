//! Who acts in the model: the actors the target profile offers (as `whoami` described them)
//! and the parties they speak as (an actor and, optionally, one of the extensions).

/// A participant the target profile offers, as `whoami` described it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    /// Profile role name (`agent_a`).
    pub role: String,
    /// Server-set identity.
    pub identity: String,
    /// `human:` identity (every right, confirmed states).
    pub human: bool,
    /// Holds `write`.
    pub write: bool,
    /// Holds `read`.
    pub read: bool,
    /// Holds `lock`.
    pub lock: bool,
    /// Holds the dialectic `verify` right (PV-DI-4).
    pub verify: bool,
}

impl Actor {
    /// Whether its state changes are confirmed (PV-ST-5).
    pub fn confirms(&self) -> bool {
        self.human || self.lock
    }
}

/// The extensions the model speaks from (`None` = no extension).
pub const EXTENSIONS: [&str; 2] = ["a", "b"];

/// A party: actor index and extension index into [`EXTENSIONS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Party {
    /// Actor index.
    pub actor: usize,
    /// Extension index.
    pub ext: Option<usize>,
}
