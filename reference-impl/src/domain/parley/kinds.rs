//! The speech acts (§4, PV-KD; dialectic additions §9/PV-RS-3): the table every other module
//! reads, so the manifest and the enforcement cannot disagree.

use super::state::ThreadState;

/// A speech act: the nine core kinds (PV-KD-1) and the four dialectic ones (PV-DI).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A question; opens a thread without `thread`.
    Ask,
    /// Answers its parent; marks `answered`.
    Answer,
    /// Asks the parent's author to clarify.
    Clarify,
    /// Adds information.
    Inform,
    /// Proposes a resolution.
    Propose,
    /// Endorses the parent.
    Agree,
    /// Disputes the parent.
    Object,
    /// Records the decision; marks `decided`; needs authority.
    Decide,
    /// Ends the thread; marks `closed`; needs authority.
    Close,
    /// Dialectic: creates a claim; may open a thread.
    Assert,
    /// Dialectic: supports a claim.
    Attest,
    /// Dialectic: refutes a claim with proof.
    Refute,
    /// Dialectic: the verifier's seal.
    Verify,
}

impl Kind {
    /// The nine core kinds, in the order of §4.
    pub const CORE: [Self; 9] = [
        Self::Ask,
        Self::Answer,
        Self::Clarify,
        Self::Inform,
        Self::Propose,
        Self::Agree,
        Self::Object,
        Self::Decide,
        Self::Close,
    ];
    /// The dialectic profile's kinds.
    pub const DIALECTIC: [Self; 4] = [Self::Assert, Self::Attest, Self::Refute, Self::Verify];

    /// Wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ask => "ask",
            Self::Answer => "answer",
            Self::Clarify => "clarify",
            Self::Inform => "inform",
            Self::Propose => "propose",
            Self::Agree => "agree",
            Self::Object => "object",
            Self::Decide => "decide",
            Self::Close => "close",
            Self::Assert => "assert",
            Self::Attest => "attest",
            Self::Refute => "refute",
            Self::Verify => "verify",
        }
    }

    /// Parses a kind among the enabled ones (PV-EN-3, PV-DI-8: dialectic kinds only when the
    /// profile is enabled). Exact, case-sensitive.
    pub fn parse(s: &str, dialectic: bool) -> Option<Self> {
        Self::CORE
            .into_iter()
            .chain(Self::DIALECTIC.into_iter().filter(|_| dialectic))
            .find(|k| k.as_str() == s)
    }

    /// Part of the dialectic profile.
    pub fn is_dialectic(self) -> bool {
        Self::DIALECTIC.contains(&self)
    }

    /// PV-KD-2 / PV-RS-3: the kind expects a reply.
    pub fn awaiting(self) -> bool {
        matches!(
            self,
            Self::Ask | Self::Clarify | Self::Propose | Self::Object | Self::Assert | Self::Refute
        )
    }

    /// PV-EN-6: may be sent without `thread`/`parent` to open a thread.
    pub fn opens_thread(self) -> bool {
        matches!(self, Self::Ask | Self::Assert)
    }

    /// The state the kind marks, if any (§4; the seed: "answer et decide sont aussi des marques").
    pub fn marks(self) -> Option<ThreadState> {
        match self {
            Self::Answer => Some(ThreadState::Answered),
            Self::Decide => Some(ThreadState::Decided),
            Self::Close => Some(ThreadState::Closed),
            _ => None,
        }
    }

    /// PV-AU-2: the kind needs thread authority.
    pub fn needs_authority(self) -> bool {
        matches!(self, Self::Decide | Self::Close)
    }

    /// PV-ID-2: `decide` and `close` are exempt from the self-reply rule.
    pub fn self_reply_exempt(self) -> bool {
        matches!(self, Self::Decide | Self::Close)
    }

    /// Acts on an existing claim (`claim` field required, PV-DI-3..5).
    pub fn targets_claim(self) -> bool {
        matches!(self, Self::Attest | Self::Refute | Self::Verify)
    }

    /// Needs 1..evidence_max evidence items (PV-DI-1).
    pub fn needs_evidence(self) -> bool {
        self.is_dialectic()
    }

    /// May carry `supersedes` / `valid_until` (PV-DI-2, PV-DI-6).
    pub fn creates_claim(self) -> bool {
        self == Self::Assert
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn section_4_table() {
        // (kind, awaiting, marks, needs authority) — PV-KD-1, PV-KD-2, PV-AU-2
        let table: [(&str, bool, Option<&str>, bool); 9] = [
            ("ask", true, None, false),
            ("answer", false, Some("answered"), false),
            ("clarify", true, None, false),
            ("inform", false, None, false),
            ("propose", true, None, false),
            ("agree", false, None, false),
            ("object", true, None, false),
            ("decide", false, Some("decided"), true),
            ("close", false, Some("closed"), true),
        ];
        for (i, (name, awaiting, marks, auth)) in table.iter().enumerate() {
            let k = Kind::parse(name, false).unwrap_or_else(|| panic!("{name}"));
            assert_eq!(Kind::CORE[i], k);
            assert_eq!(k.awaiting(), *awaiting, "{name}");
            assert_eq!(k.marks().map(|s| s.as_str()), *marks, "{name}");
            assert_eq!(k.needs_authority(), *auth, "{name}");
            assert_eq!(k.opens_thread(), *name == "ask");
        }
    }

    #[test]
    fn dialectic_kinds_only_when_enabled() {
        // PV-DI-8, PV-RS-3
        for (name, awaiting) in [
            ("assert", true),
            ("attest", false),
            ("refute", true),
            ("verify", false),
        ] {
            assert_eq!(Kind::parse(name, false), None);
            let k = Kind::parse(name, true).unwrap_or_else(|| panic!("{name}"));
            assert_eq!(k.awaiting(), awaiting);
            assert!(k.marks().is_none() && !k.needs_authority() && k.needs_evidence());
        }
        assert!(Kind::Assert.opens_thread());
        assert_eq!(Kind::parse("Ask", true), None);
    }
}
