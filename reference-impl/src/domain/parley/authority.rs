//! Who may do what (§6, PV-AU; §7 PV-ID): the rights, thread authority, the human
//! override, proposal vs confirmation, labels.
//!
//! The domain owns [`Right`]; the token file format (`crate::config::TokenRow`) is the
//! configuration's and turns itself into an [`Actor`], so nothing here reads configuration.

use serde::{Deserialize, Serialize};

use super::state::{Origin, ThreadState};

/// A Parley right held by a token row (PV-AU-1..5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Right {
    /// Read threads, events, inbox, claims.
    Read,
    /// Post messages, mark, reopen.
    Write,
    /// Moderation: authority over every thread, confirmed states.
    Lock,
    /// Dialectic `verify`.
    Verify,
}

/// `(identity, extension)`: the unit of authorship, loop protection and awaiting
/// (PV-ID-2, PV-KD-2). `extension: None` is "the empty extension".
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Party {
    /// `<realm>:<handle>` or `human:<name>`, set by the server (PV-ID-1).
    pub identity: String,
    /// `from.extension`, `null` when absent.
    pub extension: Option<String>,
}

impl Party {
    /// Builds a party.
    pub fn new(identity: impl Into<String>, extension: Option<String>) -> Self {
        Self {
            identity: identity.into(),
            extension,
        }
    }
}

/// The caller, as resolved from its token row (PV-AU-5: rights belong to the row).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    /// Identity of the row.
    pub identity: String,
    /// Rights of the row (a human holds all of them implicitly).
    pub rights: Vec<Right>,
    /// Lock label, shown as `KI · <label>`.
    pub lock_label: Option<String>,
}

impl Actor {
    /// `human:<name>` identities (PV-AU-4).
    pub fn is_human(&self) -> bool {
        self.identity.starts_with("human:")
    }

    /// PV-AU-1, PV-AU-4: a human implicitly holds every right.
    pub fn has_right(&self, right: Right) -> bool {
        self.is_human() || self.rights.contains(&right)
    }

    /// Holds `lock` (moderation; a human counts, PV-AU-4).
    pub fn is_lock_holder(&self) -> bool {
        self.has_right(Right::Lock)
    }

    /// PV-ST-5: states set by a human or a lock holder are confirmed; others are proposals.
    pub fn confirms_states(&self) -> bool {
        self.is_human() || self.rights.contains(&Right::Lock)
    }

    /// `state_origin` / event `origin`: `user` for a human, `llm` otherwise (PV-ST-5).
    pub fn origin(&self) -> Origin {
        if self.is_human() {
            Origin::User
        } else {
            Origin::Llm
        }
    }

    /// `author_kind` of messages (PV-EN-4).
    pub fn author_kind(&self) -> &'static str {
        if self.is_human() { "human" } else { "llm" }
    }

    /// PV-ST-7 label: the human's name for a human, `KI · <lock label>` for a lock holder
    /// (the identity stands in for a missing label), the identity otherwise.
    pub fn label(&self) -> String {
        if let Some(name) = self.identity.strip_prefix("human:") {
            name.to_string()
        } else if self.rights.contains(&Right::Lock) {
            format!(
                "KI · {}",
                self.lock_label.as_deref().unwrap_or(&self.identity)
            )
        } else {
            self.identity.clone()
        }
    }

    /// PV-AU-2: thread authority = the creator (same identity, any extension), a lock
    /// holder (any thread) or a human.
    pub fn has_thread_authority(&self, creator_identity: &str) -> bool {
        self.is_lock_holder() || self.identity == creator_identity
    }

    /// PV-AU-3: reopening `closed` needs the creator, a lock holder or a human; reopening a
    /// lateral state needs a lock holder or a human. Any other state gets the ordinary
    /// thread authority here, so the PV-ST-6 refusal (409) is reached by those who could
    /// otherwise reopen and a stranger still gets 403 first (PV-AU-6 order).
    pub fn may_reopen(&self, creator_identity: &str, state: ThreadState) -> bool {
        if state.is_lateral() {
            self.is_lock_holder()
        } else {
            self.has_thread_authority(creator_identity)
        }
    }

    /// PV-DI-6: superseding needs the claim's own identity, or lock / human.
    pub fn may_supersede(&self, claim_author_identity: &str) -> bool {
        self.is_lock_holder() || self.identity == claim_author_identity
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn actor(identity: &str, rights: &[Right], label: Option<&str>) -> Actor {
        Actor {
            identity: identity.into(),
            rights: rights.to_vec(),
            lock_label: label.map(str::to_string),
        }
    }

    #[test]
    fn classes() {
        use Right::*;
        let creator = actor("ainotes:a", &[Read, Write], None);
        let other = actor("ainotes:b", &[Read, Write], None);
        let moderator = actor("ainotes:m", &[Read, Write, Lock], Some("mod"));
        let human = actor("human:alice", &[], None);
        let reader = actor("ainotes:r", &[Read], None);
        // PV-AU-2
        assert!(creator.has_thread_authority("ainotes:a"));
        assert!(!other.has_thread_authority("ainotes:a"));
        assert!(moderator.has_thread_authority("ainotes:a"));
        assert!(human.has_thread_authority("ainotes:a"));
        // PV-AU-1 / PV-AU-4
        assert!(!reader.has_right(Write) && reader.has_right(Read));
        assert!(human.has_right(Verify) && human.has_right(Lock));
        // PV-ST-5
        assert!(
            !creator.confirms_states() && moderator.confirms_states() && human.confirms_states()
        );
        assert_eq!(human.origin(), Origin::User);
        assert_eq!(moderator.origin(), Origin::Llm);
        // PV-ST-7
        assert_eq!(moderator.label(), "KI · mod");
        assert_eq!(human.label(), "alice");
        assert_eq!(creator.label(), "ainotes:a");
        // PV-AU-3
        for st in [
            ThreadState::Deferred,
            ThreadState::Obsolete,
            ThreadState::Rejected,
        ] {
            assert!(!creator.may_reopen("ainotes:a", st));
            assert!(moderator.may_reopen("ainotes:a", st) && human.may_reopen("ainotes:a", st));
        }
        assert!(creator.may_reopen("ainotes:a", ThreadState::Closed));
        assert!(!other.may_reopen("ainotes:a", ThreadState::Closed));
        assert_eq!(human.author_kind(), "human");
        assert_eq!(other.author_kind(), "llm");
    }
}
