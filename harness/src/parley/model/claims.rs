//! The dialectic profile in the model (PV-DI), written from `parley-v1.md` §9 and the seed's
//! dialectic section (never from a server's code): claims and their status
//! (`unverified → supported → verified`, any of those `→ refuted`, `→ superseded` when a
//! newer claim lists it), who may attest, verify, refute and supersede, the refusal order
//! of PV-AU-6 for claim acts, supersede chains and `valid_until`.
//!
//! Where the notes leave a case open the prediction allows every reading: a `verify` of an
//! already verified claim may be accepted (nothing changes) or refused `invalid_transition`;
//! a `refute` of a superseded claim may move it to `refuted` or be refused. Such a case
//! carries the model after an acceptance in [`Prediction::accepted_next`].

use super::dialectic::{Act, Claim, ClaimSt, Evidence, Step, SupersededBy, Until, claim_step};
use super::party::Party;
use super::state::{
    Awaiting, Event, Kind, Msg, Outcome, Prediction, Refusal, St, Thread, World, refuse, refuse_any,
};

fn writer(world: &World, by: usize) -> bool {
    let a = &world.actors[by];
    a.write || a.human
}

/// The 400 refusals of a dialectic post's payload (PV-DI-1, PV-DI-2): several may apply
/// at once, and the notes fix no order among 400 reasons, so any of them is accepted.
fn payload_refusals(evidence: Evidence, until: Until) -> Vec<Refusal> {
    let mut out = Vec::new();
    match evidence {
        Evidence::Missing => out.push((400, "evidence_required")),
        Evidence::Invalid => out.push((400, "evidence_invalid")),
        Evidence::Valid => {}
    }
    if until == Until::Past {
        out.push((400, "invalid_body"));
    }
    out
}

/// `assert` (PV-DI-2, PV-DI-6): opens a thread when `thread` is `None`, otherwise replies
/// to the thread's root; may supersede one claim.
pub fn predict_assert(
    world: &World,
    by: Party,
    thread: Option<usize>,
    supersedes: Option<usize>,
    until: Until,
    evidence: Evidence,
) -> Prediction {
    let a = &world.actors[by.actor];
    if !writer(world, by.actor) {
        return refuse(world, (403, "token_right_missing"), vec!["PV-AU-1"]);
    }
    let bad = payload_refusals(evidence, until);
    if !bad.is_empty() {
        return refuse_any(world, bad, vec!["PV-DI-1", "PV-DI-2"]);
    }
    if let Some(c) = supersedes {
        let owner = &world.actors[world.claims[c].author.actor].identity;
        if owner != &a.identity && !a.confirms() {
            return refuse(world, (403, "thread_authority_missing"), vec!["PV-DI-6"]);
        }
    }
    if let Some(t) = thread {
        let th = &world.threads[t];
        if th.locked() {
            return refuse(world, (409, "thread_locked"), vec!["PV-ST-4"]);
        }
        if world.same_party(th.messages[0].author, by) {
            return refuse(world, (409, "self_reply"), vec!["PV-ID-2"]);
        }
    }
    let mut next = world.clone();
    let (t, m) = match thread {
        None => {
            next.threads.push(opened(a.confirms(), a.human, by));
            (next.threads.len() - 1, 0)
        }
        Some(t) => {
            let th = &mut next.threads[t];
            th.messages.push(Msg {
                parent: Some(0),
                author: by,
                kind: Kind::Assert,
            });
            th.awaiting = Awaiting::Party(th.messages[0].author);
            (t, th.messages.len() - 1)
        }
    };
    let new = next.claims.len();
    if let Some(c) = supersedes {
        supersede(&mut next.claims[c], new);
    }
    next.claims.push(Claim {
        thread: t,
        message: m,
        author: by,
        status: ClaimSt::Unverified,
        support: 0,
        refutations: 0,
        supersedes: supersedes.into_iter().collect(),
        superseded_by: SupersededBy::Nobody,
        until,
        changes: Vec::new(),
    });
    Prediction {
        allowed: vec![Outcome::Accepted { event: false }],
        rules: vec!["PV-DI-2", "PV-DI-6", "PV-EN-6", "PV-KD-2", "PV-ID-2"],
        next,
        accepted_next: None,
    }
}

/// A thread opened by an assert (PV-EN-6, PV-ST-5, PV-KD-2).
fn opened(confirms: bool, human: bool, by: Party) -> Thread {
    Thread {
        creator: by,
        state: St::Open,
        confirmed: confirms,
        origin_user: human,
        messages: vec![Msg {
            parent: None,
            author: by,
            kind: Kind::Assert,
        }],
        events: vec![Event {
            from: None,
            to: St::Open,
            confirmed: confirms,
        }],
        awaiting: Awaiting::AnyExcept(by),
    }
}

/// PV-DI-6: the listed claim becomes superseded; a refuted claim stays refuted.
fn supersede(c: &mut Claim, by: usize) {
    match c.status {
        ClaimSt::Refuted => {
            c.superseded_by = match c.superseded_by {
                SupersededBy::Nobody => SupersededBy::NullOr(by),
                _ => SupersededBy::Either,
            };
        }
        ClaimSt::Superseded => c.superseded_by = SupersededBy::Either,
        _ => {
            c.status = ClaimSt::Superseded;
            c.superseded_by = SupersededBy::Claim(by);
            c.changes.push(ClaimSt::Superseded);
        }
    }
}

/// `attest` / `verify` / `refute` of claim `c`, posted as a reply to the claim's message,
/// in the refusal order of PV-AU-6.
pub fn predict_claim_act(
    world: &World,
    by: Party,
    c: usize,
    act: Act,
    evidence: Evidence,
) -> Prediction {
    let a = &world.actors[by.actor];
    let claim = &world.claims[c];
    if !writer(world, by.actor) || (act == Act::Verify && !(a.verify || a.human)) {
        return refuse(
            world,
            (403, "token_right_missing"),
            vec!["PV-AU-1", "PV-DI-4"],
        );
    }
    let bad = payload_refusals(evidence, Until::Never);
    if !bad.is_empty() {
        return refuse_any(world, bad, vec!["PV-DI-1"]);
    }
    let author = &world.actors[claim.author.actor].identity;
    if act != Act::Refute && author == &a.identity {
        return refuse(world, (403, "self_attest"), vec!["PV-DI-3", "PV-DI-4"]);
    }
    let th = &world.threads[claim.thread];
    if th.locked() {
        return refuse(world, (409, "thread_locked"), vec!["PV-ST-4"]);
    }
    let self_reply = world.same_party(th.messages[claim.message].author, by);
    let step = claim_step(act, claim.status);
    let mut rules = vec!["PV-DI-3", "PV-DI-4", "PV-DI-5", "PV-ID-2"];
    if matches!(step, Step::Either(_)) {
        rules.push("PV-DI-9");
    }
    let mut refusals = Vec::new();
    if !matches!(step, Step::To(_)) {
        refusals.push((409, "invalid_transition"));
    }
    if self_reply {
        refusals.push((409, "self_reply"));
    }
    let to = match step {
        Step::Invalid => return refuse_any(world, refusals, rules),
        _ if self_reply => return refuse_any(world, refusals, rules),
        Step::To(s) | Step::Either(s) => s,
    };
    let accepted = accept_act(world, by, c, act, to);
    match step {
        Step::Either(_) => {
            let mut p = refuse_any(world, refusals, rules);
            p.allowed.push(Outcome::Accepted { event: false });
            p.accepted_next = Some(accepted);
            p
        }
        _ => Prediction {
            allowed: vec![Outcome::Accepted { event: false }],
            rules,
            next: accepted,
            accepted_next: None,
        },
    }
}

/// The model after an accepted claim act: the reply, who it awaits (PV-RS-3: a refutation
/// awaits the claim's author, attest and verify await nobody) and the claim's new status.
fn accept_act(world: &World, by: Party, c: usize, act: Act, to: ClaimSt) -> World {
    let mut next = world.clone();
    let claim = &mut next.claims[c];
    if claim.status != to {
        claim.changes.push(to);
    }
    claim.status = to;
    match act {
        Act::Attest => claim.support += 1,
        Act::Verify => {}
        Act::Refute => claim.refutations += 1,
    }
    let (t, m, author) = (claim.thread, claim.message, claim.author);
    let th = &mut next.threads[t];
    th.messages.push(Msg {
        parent: Some(m),
        author: by,
        kind: act.kind(),
    });
    th.awaiting = match act {
        Act::Refute => Awaiting::Party(author),
        Act::Attest | Act::Verify => Awaiting::Nobody,
    };
    next
}

/// `read_claim` (PV-DI-7): needs `read`.
pub fn predict_read_claim(world: &World, by: usize) -> Prediction {
    let a = &world.actors[by];
    if a.read || a.human {
        Prediction {
            allowed: vec![Outcome::Accepted { event: false }],
            rules: vec!["PV-DI-7"],
            next: world.clone(),
            accepted_next: None,
        }
    } else {
        refuse(world, (403, "token_right_missing"), vec!["PV-AU-1"])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parley::model::party::Actor;
    use crate::parley::model::predict::predict;
    use crate::parley::model::state::Op;

    const A: usize = 0;
    const B: usize = 1;
    const MOD: usize = 2;
    const VERIFIER: usize = 3;
    const HUMAN: usize = 4;

    fn world() -> World {
        let actor = |role: &str, identity: &str, human, lock, verify| Actor {
            role: role.into(),
            identity: identity.into(),
            human,
            write: true,
            read: true,
            lock,
            verify,
        };
        World::new(
            vec![
                actor("agent_a", "ainotes:a", false, false, false),
                actor("agent_b", "ainotes:b", false, false, false),
                actor("moderator", "ainotes:mod", false, true, false),
                actor("verifier", "ainotes:v", false, false, true),
                actor("human", "human:alice", true, false, true),
            ],
            Some(500),
        )
        .with_dialectic(true)
    }

    fn p(actor: usize) -> Party {
        Party { actor, ext: None }
    }

    fn assert_op(by: usize, thread: Option<usize>, supersedes: Option<usize>) -> Op {
        Op::Assert {
            by: p(by),
            thread,
            supersedes,
            until: Until::Never,
            evidence: Evidence::Valid,
        }
    }

    fn act(by: usize, claim: usize, act: Act) -> Op {
        Op::ClaimAct {
            by: p(by),
            claim,
            act,
            evidence: Evidence::Valid,
        }
    }

    /// Applies `ops`, each of which must be valid and accepted; the model afterwards.
    fn accepted(ops: &[Op]) -> World {
        let mut w = world();
        for op in ops {
            assert!(w.valid(op), "{op:?} is not valid");
            let pr = predict(&w, op);
            assert!(
                pr.allowed
                    .iter()
                    .all(|o| matches!(o, Outcome::Accepted { .. })),
                "{op:?}: {:?}",
                pr.allowed
            );
            w = pr.next;
        }
        w
    }

    fn refusals(w: &World, op: &Op) -> Vec<Refusal> {
        predict(w, op)
            .allowed
            .iter()
            .filter_map(|o| match o {
                Outcome::Refused(r) => Some(*r),
                Outcome::Accepted { .. } => None,
            })
            .collect()
    }

    #[test]
    fn assert_opens_a_thread_with_an_unverified_claim_awaiting_anyone_else() {
        let w = accepted(&[assert_op(A, None, None)]);
        assert_eq!(w.claims[0].status, ClaimSt::Unverified);
        assert_eq!(w.threads[0].awaiting, Awaiting::AnyExcept(p(A)));
        assert_eq!(w.threads[0].messages[0].kind, Kind::Assert);
    }

    #[test]
    fn attests_add_support_verify_seals_without_support_refute_wins() {
        let w = accepted(&[
            assert_op(A, None, None),
            act(B, 0, Act::Attest),
            act(MOD, 0, Act::Attest),
            act(HUMAN, 0, Act::Attest),
            act(VERIFIER, 0, Act::Verify),
            act(B, 0, Act::Attest),
        ]);
        let c = &w.claims[0];
        assert_eq!(
            (c.status, c.support, c.changes.as_slice()),
            (
                ClaimSt::Verified,
                4,
                [ClaimSt::Supported, ClaimSt::Verified].as_slice()
            )
        );
        // PV-DI-5: a verified claim can still fall; a refutation awaits the claim's author.
        let w = accepted(&[
            assert_op(A, None, None),
            act(VERIFIER, 0, Act::Verify),
            act(B, 0, Act::Refute),
        ]);
        assert_eq!(w.claims[0].status, ClaimSt::Refuted);
        assert_eq!(w.threads[0].awaiting, Awaiting::Party(p(A)));
        assert_eq!(
            refusals(&w, &act(MOD, 0, Act::Attest)),
            vec![(409, "invalid_transition")]
        );
    }

    #[test]
    fn refusal_order_of_claim_acts() {
        let w = accepted(&[assert_op(A, None, None)]);
        // PV-DI-4: verify needs the verify right, before anything else.
        assert_eq!(
            refusals(&w, &act(B, 0, Act::Verify)),
            vec![(403, "token_right_missing")]
        );
        // 400 evidence before 403 self_attest (PV-AU-6).
        let missing = Op::ClaimAct {
            by: Party {
                actor: A,
                ext: Some(1),
            },
            claim: 0,
            act: Act::Attest,
            evidence: Evidence::Missing,
        };
        assert_eq!(refusals(&w, &missing), vec![(400, "evidence_required")]);
        // self_attest is per identity, whatever the extension (PV-DI-3).
        let other_ext = Op::ClaimAct {
            by: Party {
                actor: A,
                ext: Some(1),
            },
            claim: 0,
            act: Act::Attest,
            evidence: Evidence::Valid,
        };
        assert_eq!(refusals(&w, &other_ext), vec![(403, "self_attest")]);
        // A refute by the author's own party is a self-reply (PV-ID-2); from another
        // extension it is accepted.
        assert_eq!(
            refusals(&w, &act(A, 0, Act::Refute)),
            vec![(409, "self_reply")]
        );
    }

    #[test]
    fn supersede_needs_the_author_or_confirming_authority_and_spares_refuted_claims() {
        let w = accepted(&[assert_op(A, None, None)]);
        assert_eq!(
            refusals(&w, &assert_op(B, None, Some(0))),
            vec![(403, "thread_authority_missing")]
        );
        let w = accepted(&[
            assert_op(A, None, None),
            assert_op(A, None, Some(0)),
            assert_op(MOD, None, Some(1)),
        ]);
        assert_eq!(w.claims[0].superseded_by, SupersededBy::Claim(1));
        assert_eq!(w.claims[1].status, ClaimSt::Superseded);
        assert_eq!(w.claims[1].superseded_by, SupersededBy::Claim(2));
        assert_eq!(w.claims[2].supersedes, vec![1]);
        let w = accepted(&[
            assert_op(A, None, None),
            act(B, 0, Act::Refute),
            assert_op(A, None, Some(0)),
        ]);
        assert_eq!(w.claims[0].status, ClaimSt::Refuted);
        // Issue 28: what `superseded_by` then holds is open — null or the superseding claim.
        let by = w.claims[0].superseded_by;
        assert_eq!(by, SupersededBy::NullOr(1));
        let id = |i: usize| format!("cl_{i}");
        assert_eq!(
            by.expected(&serde_json::Value::Null, id),
            None,
            "null passes"
        );
        let named = serde_json::json!("cl_1");
        assert_eq!(
            by.expected(&named, id),
            Some(named.clone()),
            "the superseder passes"
        );
        assert_ne!(
            by.expected(&serde_json::json!("cl_7"), id),
            Some(serde_json::json!("cl_7")),
            "another claim fails"
        );
    }

    #[test]
    fn points_the_notes_leave_open_allow_both_readings_and_are_not_generated() {
        let w = accepted(&[assert_op(A, None, None), act(VERIFIER, 0, Act::Verify)]);
        let op = act(HUMAN, 0, Act::Verify);
        let pr = predict(&w, &op);
        assert!(pr.allowed.contains(&Outcome::Accepted { event: false }));
        assert!(
            pr.allowed
                .contains(&Outcome::Refused((409, "invalid_transition")))
        );
        assert!(pr.accepted_next.is_some());
        assert!(!w.valid(&op), "generated sequences leave open points out");
    }

    #[test]
    fn a_past_valid_until_and_bad_evidence_are_400_and_a_locked_thread_409() {
        let w = accepted(&[assert_op(A, None, None)]);
        let past = Op::Assert {
            by: p(B),
            thread: Some(0),
            supersedes: None,
            until: Until::Past,
            evidence: Evidence::Invalid,
        };
        let mut r = refusals(&w, &past);
        r.sort_unstable();
        assert_eq!(r, vec![(400, "evidence_invalid"), (400, "invalid_body")]);
        let w = accepted(&[
            assert_op(A, None, None),
            Op::Mark {
                by: MOD,
                thread: 0,
                state: St::Closed,
            },
        ]);
        assert_eq!(
            refusals(&w, &act(B, 0, Act::Attest)),
            vec![(409, "thread_locked")]
        );
        assert!(
            !w.valid(&assert_op(A, None, Some(0))),
            "supersede into a locked thread is open"
        );
    }
}
