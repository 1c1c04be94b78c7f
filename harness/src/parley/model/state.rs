//! The pure Parley model's state: threads, messages, events, the operations and the world they
//! act on, written from `parley-v1.md` and the seed (never from a server's code).
//!
//! Everything is addressed by index (actor, thread, message, event), so a generated
//! sequence is meaningful before any server assigned ids; the driver maps indices onto the
//! ids the target returns. [`super::predict::predict`] is the one rule book: it gives the outcomes a
//! conforming server may produce for an operation (more than one where the notes leave a
//! point open) and the model state afterwards.

use std::sync::Arc;

use super::dialectic::{Act, Claim, Evidence, Until};
use super::party::{Actor, Party};

/// Thread states (PV-ST): forward `open → answered → decided → closed`, lateral ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum St {
    /// Forward 0.
    Open,
    /// Forward 1.
    Answered,
    /// Forward 2.
    Decided,
    /// Forward 3.
    Closed,
    /// Lateral.
    Deferred,
    /// Lateral.
    Obsolete,
    /// Lateral.
    Rejected,
}

impl St {
    /// Every state, forward first.
    pub const ALL: [Self; 7] = [
        Self::Open,
        Self::Answered,
        Self::Decided,
        Self::Closed,
        Self::Deferred,
        Self::Obsolete,
        Self::Rejected,
    ];

    /// Wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Answered => "answered",
            Self::Decided => "decided",
            Self::Closed => "closed",
            Self::Deferred => "deferred",
            Self::Obsolete => "obsolete",
            Self::Rejected => "rejected",
        }
    }

    /// Rank on the forward line (`None` for lateral states).
    pub fn rank(self) -> Option<u8> {
        match self {
            Self::Open => Some(0),
            Self::Answered => Some(1),
            Self::Decided => Some(2),
            Self::Closed => Some(3),
            Self::Deferred | Self::Obsolete | Self::Rejected => None,
        }
    }

    /// Lateral end state (PV-ST-3).
    pub fn is_lateral(self) -> bool {
        self.rank().is_none()
    }
}

/// The nine core speech acts (PV-KD).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Question; opens a thread without `thread`.
    Ask,
    /// Marks `answered`.
    Answer,
    /// Awaiting.
    Clarify,
    /// Not awaiting.
    Inform,
    /// Awaiting.
    Propose,
    /// Not awaiting.
    Agree,
    /// Awaiting.
    Object,
    /// Marks `decided`, needs authority.
    Decide,
    /// Marks `closed`, needs authority.
    Close,
    /// Dialectic: a claim with evidence; opens a thread without `thread` (PV-DI-2).
    Assert,
    /// Dialectic: supports a claim (PV-DI-3).
    Attest,
    /// Dialectic: seals a claim (PV-DI-4).
    Verify,
    /// Dialectic: refutes a claim with proof (PV-DI-5).
    Refute,
}

impl Kind {
    /// Every core kind.
    pub const ALL: [Self; 9] = [
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

    /// Wire name.
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
            Self::Verify => "verify",
            Self::Refute => "refute",
        }
    }

    /// Expects a reply (PV-KD-2).
    pub fn awaiting(self) -> bool {
        matches!(
            self,
            Self::Ask | Self::Clarify | Self::Propose | Self::Object | Self::Assert | Self::Refute
        )
    }

    /// The state the act marks (PV-KD table).
    pub fn marks(self) -> Option<St> {
        match self {
            Self::Answer => Some(St::Answered),
            Self::Decide => Some(St::Decided),
            Self::Close => Some(St::Closed),
            _ => None,
        }
    }

    /// Needs thread authority (PV-AU-2).
    pub fn needs_authority(self) -> bool {
        matches!(self, Self::Decide | Self::Close)
    }
}

impl Act {
    /// The message kind of the act's post (here, beside [`Kind`]: the dialectic vocabulary
    /// sits below the thread model).
    pub fn kind(self) -> Kind {
        match self {
            Self::Attest => Kind::Attest,
            Self::Verify => Kind::Verify,
            Self::Refute => Kind::Refute,
        }
    }
}

/// Who a thread awaits (PV-KD-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Awaiting {
    /// Nobody.
    Nobody,
    /// Anyone except this party.
    AnyExcept(Party),
    /// This party.
    Party(Party),
}

/// One message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Msg {
    /// Parent message index (`None` for the root).
    pub parent: Option<usize>,
    /// Author.
    pub author: Party,
    /// Act.
    pub kind: Kind,
}

/// One state event (PV-ST-7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// `None` at creation.
    pub from: Option<St>,
    /// New state.
    pub to: St,
    /// Confirmed (`confirmed_at` set).
    pub confirmed: bool,
}

/// One thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Thread {
    /// Opener.
    pub creator: Party,
    /// State.
    pub state: St,
    /// `state_confirmed_at` is set.
    pub confirmed: bool,
    /// `state_origin` is `user`.
    pub origin_user: bool,
    /// Messages in creation order (index 0 = root).
    pub messages: Vec<Msg>,
    /// State events in order.
    pub events: Vec<Event>,
    /// Who must reply.
    pub awaiting: Awaiting,
}

impl Thread {
    /// A confirmed `closed` thread accepts nothing (PV-ST-4).
    pub fn locked(&self) -> bool {
        self.state == St::Closed && self.confirmed
    }
}

/// A body the model sends (PV-EN-1, PV-EN-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Body {
    /// A short ordinary body.
    Short,
    /// Exactly `body_max_chars` multi-byte characters.
    AtLimit,
    /// One character over the limit.
    OverLimit,
    /// The empty string (PV-EN-1: MUST be refused 400 invalid_body). A whitespace-only
    /// body is only a SHOULD (either answer conforms), so the model never sends one.
    Empty,
}

/// One operation of a sequence.
///
/// As generated, its thread, message and event fields are *picks*: 32-bit fractions of the
/// live collection ([`pick`]), so a shrunk sequence that lost an earlier `Open` still
/// points at the corresponding later thread. [`World::resolve`] turns a generated operation
/// into a concrete one (plain indices), which [`predict`] and the driver take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// `post` an `ask` without thread: opens a thread.
    Open {
        /// Author.
        by: Party,
        /// Body.
        body: Body,
    },
    /// `post` a core act into a thread (parent `None` = the root, implicitly).
    Post {
        /// Author.
        by: Party,
        /// Thread index.
        thread: usize,
        /// Explicit parent message index.
        parent: Option<usize>,
        /// Act.
        kind: Kind,
        /// Body.
        body: Body,
    },
    /// `post` a non-opening act with neither thread nor parent (PV-EN-6).
    Orphan {
        /// Author.
        by: Party,
        /// Act.
        kind: Kind,
    },
    /// `post` into a thread id nobody created (PV-EN-5).
    UnknownThread {
        /// Author.
        by: Party,
        /// Act.
        kind: Kind,
    },
    /// `post` into `thread` with a parent of another thread (PV-EN-5).
    ForeignParent {
        /// Author.
        by: Party,
        /// Thread index.
        thread: usize,
        /// The other thread.
        other: usize,
        /// Message index in `other`.
        parent: usize,
    },
    /// `mark {thread, state}`.
    Mark {
        /// Actor index.
        by: usize,
        /// Thread index.
        thread: usize,
        /// Target state.
        state: St,
    },
    /// `reopen {thread}`.
    Reopen {
        /// Actor index.
        by: usize,
        /// Thread index.
        thread: usize,
    },
    /// `read_thread`.
    ReadThread {
        /// Actor index.
        by: usize,
        /// Thread index.
        thread: usize,
    },
    /// `list_events`, optionally `since` an event index.
    ListEvents {
        /// Actor index.
        by: usize,
        /// Thread index.
        thread: usize,
        /// Event index.
        since: Option<usize>,
    },
    /// `inbox`, paged to the end, optionally with `extension`.
    Inbox {
        /// Caller.
        by: Party,
    },
    /// Dialectic `assert` (PV-DI-2, PV-DI-6): opens a thread when `thread` is `None`.
    Assert {
        /// Author.
        by: Party,
        /// Thread index (its root is the parent).
        thread: Option<usize>,
        /// The claim it supersedes.
        supersedes: Option<usize>,
        /// Its `valid_until`.
        until: Until,
        /// Its evidence.
        evidence: Evidence,
    },
    /// Dialectic `attest` / `verify` / `refute` of a claim, replying to the claim's message.
    ClaimAct {
        /// Author.
        by: Party,
        /// Claim index.
        claim: usize,
        /// The act.
        act: Act,
        /// Its evidence.
        evidence: Evidence,
    },
    /// `whoami` (PV-TR-5, PV-ID-1): the caller's identity, author kind and rights.
    Whoami {
        /// Actor index.
        by: usize,
    },
    /// A read (`inbox`) or a write (`post`) without a token: 401 `token_missing` before
    /// anything else, and no write attempt counted (PV-TR-4, PV-AU-6).
    Anonymous {
        /// A write.
        write: bool,
    },
    /// `read_claim` (PV-DI-7).
    ReadClaim {
        /// Actor index.
        by: usize,
        /// Claim index.
        claim: usize,
        /// Read once the claim's `valid_until` has passed (the driver waits for it).
        after_expiry: bool,
    },
}

impl Op {
    /// The actor sending the operation.
    pub fn actor(&self) -> usize {
        match self {
            Self::Open { by, .. }
            | Self::Post { by, .. }
            | Self::Orphan { by, .. }
            | Self::UnknownThread { by, .. }
            | Self::ForeignParent { by, .. }
            | Self::Inbox { by }
            | Self::Assert { by, .. }
            | Self::ClaimAct { by, .. } => by.actor,
            Self::Mark { by, .. }
            | Self::Reopen { by, .. }
            | Self::ReadThread { by, .. }
            | Self::ListEvents { by, .. }
            | Self::ReadClaim { by, .. }
            | Self::Whoami { by } => *by,
            Self::Anonymous { .. } => ANONYMOUS,
        }
    }

    /// Whether the operation is a `post` (of any kind): a write attempt under every reading
    /// of PV-TR-5 (the notes do not say whether marks and reopens count too).
    pub fn is_post(&self) -> bool {
        matches!(
            self,
            Self::Open { .. }
                | Self::Post { .. }
                | Self::Orphan { .. }
                | Self::UnknownThread { .. }
                | Self::ForeignParent { .. }
                | Self::Assert { .. }
                | Self::ClaimAct { .. }
        )
    }

    /// Whether the operation needs the `write` right (PV-AU-6: posts, marks, reopens).
    pub fn is_write(&self) -> bool {
        !matches!(
            self,
            Self::ReadThread { .. }
                | Self::ListEvents { .. }
                | Self::Inbox { .. }
                | Self::ReadClaim { .. }
                | Self::Whoami { .. }
                | Self::Anonymous { .. }
        )
    }
}

/// The actor index of a caller without a token (no actor of the model).
pub const ANONYMOUS: usize = usize::MAX;

/// The index a pick (a fraction in `0..2^32`) selects in a collection of `len` items.
pub fn pick(p: usize, len: usize) -> Option<usize> {
    let frac = (p as u64) & 0xFFFF_FFFF;
    (len > 0).then(|| ((len as u64 * frac) >> 32) as usize)
}

/// The model: the actors of the profile and the threads the sequence created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct World {
    /// Actors (index = [`Party::actor`]).
    pub actors: Arc<[Actor]>,
    /// The body limit in code points (500, fixed by the seed: PV-MF-2).
    pub body_max: Option<usize>,
    /// Threads in creation order.
    pub threads: Vec<Thread>,
    /// The manifest enables the `dialectic` profile.
    pub dialectic: bool,
    /// Claims in creation order (PV-DI).
    pub claims: Vec<Claim>,
}

/// A refusal: status and reason (`parley-v1.md` §10).
pub type Refusal = (u16, &'static str);

/// One outcome a conforming server may produce.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Accepted; for mark/reopen, whether an event is returned.
    Accepted {
        /// `event` non-null (mark, reopen).
        event: bool,
    },
    /// Refused.
    Refused(Refusal),
}

/// What [`predict`] says about one operation.
#[derive(Debug, Clone)]
pub struct Prediction {
    /// Every outcome the notes allow (at least one).
    pub allowed: Vec<Outcome>,
    /// The requirement IDs deciding the outcome.
    pub rules: Vec<&'static str>,
    /// The model after the operation (unchanged on refusal; every allowed outcome leaves
    /// the same model unless `accepted_next` is set).
    pub next: World,
    /// Where the notes allow both refusing and accepting (claims, PV-DI), the model after an
    /// acceptance; `next` is then the model after the refusal.
    pub accepted_next: Option<World>,
}

impl World {
    /// An empty model for these actors.
    pub fn new(actors: Vec<Actor>, body_max: Option<usize>) -> Self {
        Self {
            actors: actors.into(),
            body_max,
            threads: Vec::new(),
            dialectic: false,
            claims: Vec::new(),
        }
    }

    /// The model with the `dialectic` profile on or off (the manifest's `profiles`).
    pub fn with_dialectic(mut self, on: bool) -> Self {
        self.dialectic = on;
        self
    }

    pub(super) fn actor(&self, i: usize) -> &Actor {
        &self.actors[i.min(self.actors.len().saturating_sub(1))]
    }

    /// Whether the caller's inbox lists `thread` (PV-RD-3).
    pub fn in_inbox(&self, caller: Party, thread: &Thread) -> bool {
        if thread.locked() || thread.state.is_lateral() {
            return false;
        }
        let me = &self.actor(caller.actor).identity;
        let listed = match thread.awaiting {
            Awaiting::Nobody => false,
            Awaiting::AnyExcept(p) => !self.same_party(p, caller),
            Awaiting::Party(p) => {
                &self.actor(p.actor).identity == me
                    && (p.ext.is_none() || caller.ext.is_none() || p.ext == caller.ext)
            }
        };
        let hidden = caller.ext.is_some()
            && thread
                .messages
                .last()
                .is_some_and(|m| self.same_party(m.author, caller));
        listed && !hidden
    }

    /// Same identity and same extension.
    pub fn same_party(&self, a: Party, b: Party) -> bool {
        self.actor(a.actor).identity == self.actor(b.actor).identity && a.ext == b.ext
    }

    pub(super) fn has_authority(&self, actor: usize, thread: &Thread) -> bool {
        let a = self.actor(actor);
        a.human || a.lock || self.actor(thread.creator.actor).identity == a.identity
    }
}

pub(super) fn refuse(world: &World, r: Refusal, rules: Vec<&'static str>) -> Prediction {
    refuse_any(world, vec![r], rules)
}

pub(super) fn refuse_any(world: &World, rs: Vec<Refusal>, rules: Vec<&'static str>) -> Prediction {
    Prediction {
        allowed: rs.into_iter().map(Outcome::Refused).collect(),
        rules,
        next: world.clone(),
        accepted_next: None,
    }
}
