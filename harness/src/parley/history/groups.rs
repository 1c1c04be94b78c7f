//! The groups a history check runs: a short sequential set-up on a fresh thread, then 2–4
//! operations sent at once by different clients, each a role of the target profile.
//!
//! Groups are drawn from a seed (the same seed gives the same groups) among templates, each
//! racing one rule: rival marks (PV-ST-1/3), marks against a reopen of a locked thread
//! (PV-ST-4/6, PV-AU-3), replies to one message (PV-KD-2, PV-ID-2), a lock holder's
//! confirmation against the creator's next proposal (PV-ST-5), twin answers (PV-ST-1,
//! PV-ST-7), claim acts racing on one claim — attest, verify and refute (PV-DI-3/4/5), two
//! verifies or two refutes (PV-DI-9), on a target whose manifest lists `dialectic`. A template needs some parties (the creator,
//! another writer, a lock holder, a human, a verifier); a profile lacking one drops the
//! templates that need it.

use super::spec::{Observed, Step};
use crate::capability::history::{Bound, History};
use crate::parley::model::dialectic::{Act, Evidence, Until};
use crate::parley::model::party::{Actor, Party};
use crate::parley::model::state::{Body, Kind, Op, St};
use crate::parley::role::Role;
use crate::transport::Exchange;

/// The parties a group speaks with, as actor indices of the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Cast {
    /// A model writer without lock: opens the thread (its creator).
    pub creator: Option<usize>,
    /// Another model writer without lock, of another identity.
    pub other: Option<usize>,
    /// A lock holder (not human).
    pub lock: Option<usize>,
    /// A `human:` identity.
    pub human: Option<usize>,
    /// A writer who may verify claims (the `verify` right or a human), not the creator.
    pub verifier: Option<usize>,
    /// The target enables the dialectic profile (claim templates apply).
    pub dialectic: bool,
}

impl Cast {
    /// The parties among `actors`.
    pub fn of(actors: &[Actor]) -> Self {
        let plain = |a: &Actor| a.write && a.read && !a.human && !a.lock;
        let creator = actors.iter().position(plain);
        let other = creator.and_then(|c| {
            actors
                .iter()
                .position(|a| plain(a) && a.identity != actors[c].identity)
        });
        let verifier = creator.and_then(|c| {
            actors
                .iter()
                .position(|a| (a.verify || a.human) && a.write && a.identity != actors[c].identity)
        });
        Self {
            creator,
            other,
            lock: actors.iter().position(|a| a.lock && a.write && !a.human),
            human: actors.iter().position(|a| a.human),
            verifier,
            dialectic: false,
        }
    }

    /// The same parties on a target whose manifest does (or does not) list `dialectic`.
    pub fn with_dialectic(self, dialectic: bool) -> Self {
        Self { dialectic, ..self }
    }
}

/// One group: set-up on a fresh thread (index 0), then the concurrent operations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// Template name.
    pub name: &'static str,
    /// Sequential operations (the first opens the thread).
    pub setup: Vec<Op>,
    /// Operations sent at once, one per client.
    pub concurrent: Vec<Op>,
    /// The actor reading the thread back afterwards.
    pub reader: usize,
}

/// Every template name, in draw order.
pub const TEMPLATES: [&str; 9] = [
    "rival-marks",
    "marks-race-reopen",
    "replies-to-one-message",
    "confirmation-races-proposal",
    "twin-answers",
    "rival-reopens",
    "claim-acts-race",
    "verify-twice",
    "refute-twice",
];

fn p(actor: usize) -> Party {
    Party { actor, ext: None }
}

fn open(by: usize) -> Op {
    Op::Open {
        by: p(by),
        body: Body::Short,
    }
}

fn mark(by: usize, state: St) -> Op {
    Op::Mark {
        by,
        thread: 0,
        state,
    }
}

fn reply(by: usize, parent: usize, kind: Kind) -> Op {
    Op::Post {
        by: p(by),
        thread: 0,
        parent: Some(parent),
        kind,
        body: Body::Short,
    }
}

/// An assert opening the group's thread with claim 0 (valid evidence, no `valid_until`).
fn assert_claim(by: usize) -> Op {
    Op::Assert {
        by: p(by),
        thread: None,
        supersedes: None,
        until: Until::Never,
        evidence: Evidence::Valid,
    }
}

fn act(by: usize, act: Act) -> Op {
    Op::ClaimAct {
        by: p(by),
        claim: 0,
        act,
        evidence: Evidence::Valid,
    }
}

/// PV-DI-3/4/5: one attest, one verify and one refute of a fresh claim at once. Every order
/// is one the notes settle (a refute after a verify moves it to refuted; an attest or a
/// verify after a refute is refused), so the read-back's status, support and refutations
/// must be one order's. Two verifies or two refutes: `repeat_race`.
fn claim_acts(cast: Cast) -> Option<(Vec<Op>, Vec<Op>)> {
    let c = cast.creator?;
    if !cast.dialectic {
        return None;
    }
    let v = cast.verifier?;
    let o = cast.other.filter(|o| *o != v)?;
    // Not the creator: a claim act replies to the claim's message, and a reply to one's own
    // message is refused (PV-ID-2) whatever the order.
    let r = [cast.lock, cast.human]
        .into_iter()
        .flatten()
        .find(|r| *r != v && *r != o)?;
    let concurrent = vec![
        act(o, Act::Attest),
        act(v, Act::Verify),
        act(r, Act::Refute),
    ];
    Some((vec![assert_claim(c)], concurrent))
}

/// PV-DI-9: two verifies (`act` Verify) or two refutes of one claim at once, from
/// `unverified` or (after an attest) `supported`. The notes settle the race: at least one
/// succeeds, the claim ends verified (refuted) with exactly one status event to it, support
/// unchanged by the repeat, `refutations[]` holding exactly the accepted refutes; the other
/// is accepted without a change or refused `invalid_transition` (the model allows both).
/// Two parties when the profile has them, else one party from two clients.
fn repeat_race(cast: Cast, act_kind: Act, supported: bool) -> Option<(Vec<Op>, Vec<Op>)> {
    let c = cast.creator?;
    if !cast.dialectic {
        return None;
    }
    let candidates: Vec<usize> = match act_kind {
        Act::Verify => [cast.verifier, cast.human].into_iter().flatten().collect(),
        // Not the creator: a refute replies to the claim's message (PV-ID-2).
        _ => [cast.other, cast.lock, cast.human, cast.verifier]
            .into_iter()
            .flatten()
            .collect(),
    };
    let first = *candidates.first()?;
    let second = candidates
        .iter()
        .copied()
        .find(|a| *a != first)
        .unwrap_or(first);
    let mut setup = vec![assert_claim(c)];
    if supported && let Some(o) = cast.other {
        setup.push(act(o, Act::Attest));
    }
    Some((setup, vec![act(first, act_kind), act(second, act_kind)]))
}

/// The group of template `name` for `cast`, its free choices drawn from `rng`; `None` when
/// the profile lacks a party it needs.
pub fn build(name: &str, cast: Cast, rng: &mut fastrand::Rng) -> Option<Group> {
    let c = cast.creator?;
    let lateral = [St::Deferred, St::Obsolete, St::Rejected];
    let mut pick = |xs: &[St]| xs[rng.usize(..xs.len())];
    let (setup, concurrent) = match name {
        // PV-ST-1/3: at most one lateral end wins; forward marks race it.
        "rival-marks" => {
            let l = cast.lock?;
            let mut ops = vec![mark(c, pick(&lateral)), mark(l, pick(&lateral))];
            if let Some(h) = cast.human {
                ops.push(mark(h, pick(&[St::Answered, St::Decided, St::Deferred])));
            }
            (vec![open(c)], ops)
        }
        // PV-ST-4/6, PV-AU-3: a confirmed closed thread, reopened while others mark or post.
        "marks-race-reopen" => {
            let l = cast.lock?;
            let mut ops = vec![Op::Reopen { by: c, thread: 0 }, mark(l, St::Closed)];
            if let Some(h) = cast.human {
                ops.push(Op::Reopen { by: h, thread: 0 });
            }
            if let Some(o) = cast.other {
                ops.push(reply(o, 0, Kind::Inform));
            }
            (vec![open(c), mark(l, St::Closed)], ops)
        }
        // PV-KD-2, PV-ID-2, PV-ST-5: replies to the root; awaiting follows the last one.
        "replies-to-one-message" => {
            let o = cast.other?;
            let kinds = [Kind::Answer, Kind::Clarify, Kind::Inform, Kind::Object];
            let mut k = || kinds[rng.usize(..kinds.len())];
            let mut ops = vec![reply(o, 0, k())];
            ops.extend(cast.lock.map(|l| reply(l, 0, k())));
            ops.extend(cast.human.map(|h| reply(h, 0, k())));
            (vec![open(c)], ops)
        }
        // PV-ST-5: a lock holder confirms the proposal while the creator proposes the next.
        "confirmation-races-proposal" => {
            let l = cast.lock?;
            let mut ops = vec![
                mark(l, St::Decided),
                mark(c, pick(&[St::Closed, St::Deferred])),
            ];
            ops.extend(cast.other.map(|o| reply(o, 0, Kind::Inform)));
            (vec![open(c), mark(c, St::Decided)], ops)
        }
        // PV-ST-1/7: two answers on an open thread make one state change, not two.
        "twin-answers" => {
            let o = cast.other?;
            let mut ops = vec![reply(c, 1, Kind::Answer), reply(o, 0, Kind::Answer)];
            ops.extend(cast.human.map(|h| reply(h, 1, Kind::Agree)));
            (vec![open(c), reply(o, 0, Kind::Inform)], ops)
        }
        // PV-ST-6, PV-AU-3: one reopen of a lateral end wins, the others find it open.
        "rival-reopens" => {
            let l = cast.lock?;
            let h = cast.human?;
            let mut ops = vec![
                Op::Reopen { by: l, thread: 0 },
                Op::Reopen { by: h, thread: 0 },
            ];
            ops.push(mark(c, St::Answered));
            (vec![open(c), mark(l, pick(&lateral))], ops)
        }
        "claim-acts-race" => claim_acts(cast)?,
        "verify-twice" => repeat_race(cast, Act::Verify, rng.bool())?,
        "refute-twice" => repeat_race(cast, Act::Refute, rng.bool())?,
        _ => return None,
    };
    Some(Group {
        name: TEMPLATES.iter().find(|t| **t == name).copied()?,
        setup,
        concurrent,
        reader: c,
    })
}

/// `count` groups drawn from `seed` among the templates `cast` supports (round robin over
/// the templates, free choices from the seed), or none when it supports none.
pub fn draw(seed: u64, count: usize, cast: Cast) -> Vec<Group> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let usable: Vec<&str> = TEMPLATES
        .iter()
        .copied()
        .filter(|t| build(t, cast, &mut fastrand::Rng::with_seed(0)).is_some())
        .collect();
    if usable.is_empty() {
        return Vec::new();
    }
    let start = rng.usize(..usable.len());
    (0..count)
        .filter_map(|i| build(usable[(start + i) % usable.len()], cast, &mut rng))
        .collect()
}

/// How many groups, from which seed, within which search bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// Seed of the draw (printed; the same seed gives the same groups).
    pub seed: u64,
    /// Groups per binding.
    pub groups: usize,
    /// The checker's bound per history.
    pub bound: Bound,
}

impl Settings {
    /// Inside `conform run`: a few seconds per binding.
    pub const DEFAULT: Self = Self {
        seed: 10,
        groups: 12,
        bound: Bound {
            ops: 64,
            nodes: 100_000,
        },
    };
}

/// One group as it ran.
pub struct GroupRun {
    /// The group.
    pub group: Group,
    /// Its history (set-up, concurrent steps, read-back).
    pub history: History<Step, Observed>,
    /// The role of each step's client.
    pub roles: Vec<Role>,
    /// Every exchange.
    pub exchanges: Vec<Exchange>,
    /// Why the history cannot be judged (a `429` the run did not provoke).
    pub inconclusive: Option<String>,
}
