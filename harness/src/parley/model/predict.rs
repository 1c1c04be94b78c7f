//! The rule book: the decision a conforming server may give each operation and the model
//! afterwards (threads, posts, marks and reopens here; claim acts in [`super::claims`]),
//! written from `parley-v1.md` and the seed (never from a server's code).

use super::claims;
use super::party::{Actor, Party};
use super::state::*;

/// A state change on `t` by `actor` towards `to` (PV-ST-1/2/5): `Ok(Some(event))` when
/// the state or its confirmation changes, `Ok(None)` when nothing changes, `Err` for
/// `invalid_transition`.
fn transition(t: &Thread, a: &Actor, to: St) -> Result<Option<Event>, ()> {
    let same = |t: &Thread| {
        if a.confirms() && !t.confirmed {
            Some(Event {
                from: Some(t.state),
                to: t.state,
                confirmed: true,
            })
        } else {
            None
        }
    };
    if t.state.is_lateral() || to == St::Open {
        return if to == t.state { Ok(same(t)) } else { Err(()) };
    }
    let change = Event {
        from: Some(t.state),
        to,
        confirmed: a.confirms(),
    };
    match (t.state.rank(), to.rank()) {
        (_, None) => Ok(Some(change)),
        (Some(from), Some(r)) if r > from => Ok(Some(change)),
        (Some(from), Some(r)) if r == from => Ok(same(t)),
        _ => Err(()),
    }
}

fn apply_event(t: &mut Thread, a: &Actor, e: Event) {
    t.state = e.to;
    t.confirmed = e.confirmed;
    t.origin_user = a.human;
    t.events.push(e);
}

/// The decision on `op` and the model afterwards (the rule book; see the module docs).
pub fn predict(world: &World, op: &Op) -> Prediction {
    let a = world.actor(op.actor());
    match op {
        Op::Open { by, body } => predict_open(world, *by, *body),
        Op::Post {
            by,
            thread,
            parent,
            kind,
            body,
        } => predict_post(world, *by, *thread, *parent, *kind, *body),
        Op::Orphan { .. } if !a.write => {
            refuse(world, (403, "token_right_missing"), vec!["PV-AU-1"])
        }
        Op::Orphan { .. } => refuse(world, (400, "thread_required"), vec!["PV-EN-6"]),
        Op::UnknownThread { .. } if !a.write => {
            refuse(world, (403, "token_right_missing"), vec!["PV-AU-1"])
        }
        Op::UnknownThread { .. } => refuse(world, (404, "thread_not_found"), vec!["PV-EN-5"]),
        Op::ForeignParent { .. } if !a.write => {
            refuse(world, (403, "token_right_missing"), vec!["PV-AU-1"])
        }
        Op::ForeignParent { .. } => refuse(world, (400, "invalid_body"), vec!["PV-EN-5"]),
        Op::Mark { by, thread, state } => predict_mark(world, *by, *thread, *state),
        Op::Reopen { by, thread } => predict_reopen(world, *by, *thread),
        Op::Assert {
            by,
            thread,
            supersedes,
            until,
            evidence,
        } => claims::predict_assert(world, *by, *thread, *supersedes, *until, *evidence),
        Op::ClaimAct {
            by,
            claim,
            act,
            evidence,
        } => claims::predict_claim_act(world, *by, *claim, *act, *evidence),
        Op::ReadClaim { by, .. } => claims::predict_read_claim(world, *by),
        Op::Whoami { .. } => Prediction {
            allowed: vec![Outcome::Accepted { event: false }],
            rules: vec!["PV-TR-5", "PV-ID-1", "PV-AU-5"],
            next: world.clone(),
            accepted_next: None,
        },
        Op::Anonymous { .. } => refuse(world, (401, "token_missing"), vec!["PV-TR-4", "PV-AU-6"]),
        Op::ReadThread { .. } | Op::ListEvents { .. } | Op::Inbox { .. } => {
            if a.read || a.human {
                Prediction {
                    allowed: vec![Outcome::Accepted { event: false }],
                    rules: vec![],
                    next: world.clone(),
                    accepted_next: None,
                }
            } else {
                refuse(world, (403, "token_right_missing"), vec!["PV-AU-1"])
            }
        }
    }
}

fn body_refusal(world: &World, body: Body) -> Option<Prediction> {
    match body {
        Body::Empty => Some(refuse(world, (400, "invalid_body"), vec!["PV-EN-1"])),
        Body::OverLimit => Some(refuse(world, (400, "body_too_long"), vec!["PV-EN-2"])),
        Body::Short | Body::AtLimit => None,
    }
}

fn predict_open(world: &World, by: Party, body: Body) -> Prediction {
    let a = world.actor(by.actor);
    if !(a.write || a.human) {
        return refuse(world, (403, "token_right_missing"), vec!["PV-AU-1"]);
    }
    if let Some(p) = body_refusal(world, body) {
        return p;
    }
    let mut next = world.clone();
    next.threads.push(Thread {
        creator: by,
        state: St::Open,
        confirmed: a.confirms(),
        origin_user: a.human,
        messages: vec![Msg {
            parent: None,
            author: by,
            kind: Kind::Ask,
        }],
        events: vec![Event {
            from: None,
            to: St::Open,
            confirmed: a.confirms(),
        }],
        awaiting: Awaiting::AnyExcept(by),
    });
    Prediction {
        allowed: vec![Outcome::Accepted { event: false }],
        rules: vec!["PV-EN-6", "PV-ST-5", "PV-KD-2"],
        next,
        accepted_next: None,
    }
}

fn predict_post(
    world: &World,
    by: Party,
    thread: usize,
    parent: Option<usize>,
    kind: Kind,
    body: Body,
) -> Prediction {
    let a = world.actor(by.actor);
    if !(a.write || a.human) {
        return refuse(world, (403, "token_right_missing"), vec!["PV-AU-1"]);
    }
    if let Some(p) = body_refusal(world, body) {
        return p;
    }
    let t = &world.threads[thread];
    if kind.needs_authority() && !world.has_authority(by.actor, t) {
        return refuse(
            world,
            (403, "thread_authority_missing"),
            vec!["PV-AU-2", "PV-AU-6"],
        );
    }
    if t.locked() {
        return refuse(world, (409, "thread_locked"), vec!["PV-ST-4"]);
    }
    let parent_ix = parent.unwrap_or(0);
    let self_reply = !matches!(kind, Kind::Decide | Kind::Close)
        && world.same_party(t.messages[parent_ix].author, by);
    let change = match kind.marks() {
        Some(to) if t.state.is_lateral() => Err(to),
        Some(to) => transition(t, a, to).map_err(|()| to),
        None => Ok(None),
    };
    match (&change, self_reply) {
        (Err(_), true) => {
            return refuse_any(
                world,
                vec![(409, "invalid_transition"), (409, "self_reply")],
                vec!["PV-ST-1", "PV-ST-3", "PV-ID-2"],
            );
        }
        (Err(_), false) => {
            return refuse(
                world,
                (409, "invalid_transition"),
                vec!["PV-ST-1", "PV-ST-3"],
            );
        }
        (Ok(_), true) => return refuse(world, (409, "self_reply"), vec!["PV-ID-2"]),
        (Ok(_), false) => {}
    }
    let mut next = world.clone();
    let nt = &mut next.threads[thread];
    if let Ok(Some(e)) = change {
        apply_event(nt, a, e);
    }
    nt.messages.push(Msg {
        parent: Some(parent_ix),
        author: by,
        kind,
    });
    nt.awaiting = if kind.awaiting() {
        Awaiting::Party(nt.messages[parent_ix].author)
    } else {
        Awaiting::Nobody
    };
    Prediction {
        allowed: vec![Outcome::Accepted { event: false }],
        rules: vec!["PV-ST-1", "PV-ST-5", "PV-KD-2", "PV-ID-2"],
        next,
        accepted_next: None,
    }
}

fn predict_mark(world: &World, by: usize, thread: usize, to: St) -> Prediction {
    let a = world.actor(by);
    if !(a.write || a.human) {
        return refuse(world, (403, "token_right_missing"), vec!["PV-AU-1"]);
    }
    let t = &world.threads[thread];
    if !world.has_authority(by, t) {
        return refuse(world, (403, "thread_authority_missing"), vec!["PV-AU-2"]);
    }
    if t.locked() {
        let mut p = refuse(world, (409, "thread_locked"), vec!["PV-ST-4", "PV-ST-2"]);
        if to == St::Closed {
            // PV-ST-2 (a mark to the current confirmed state changes nothing) and PV-ST-4
            // (a locked thread accepts no mark) both read on this case: accept either.
            p.allowed.push(Outcome::Accepted { event: false });
        }
        return p;
    }
    match transition(t, a, to) {
        Err(()) => refuse(
            world,
            (409, "invalid_transition"),
            vec!["PV-ST-1", "PV-ST-2", "PV-ST-3"],
        ),
        Ok(change) => {
            let mut next = world.clone();
            let event = change.is_some();
            if let Some(e) = change {
                apply_event(&mut next.threads[thread], a, e);
            }
            Prediction {
                allowed: vec![Outcome::Accepted { event }],
                rules: vec!["PV-ST-1", "PV-ST-2", "PV-ST-5", "PV-ST-7"],
                next,
                accepted_next: None,
            }
        }
    }
}

fn predict_reopen(world: &World, by: usize, thread: usize) -> Prediction {
    let a = world.actor(by);
    if !(a.write || a.human) {
        return refuse(world, (403, "token_right_missing"), vec!["PV-AU-1"]);
    }
    let t = &world.threads[thread];
    let creator = world.actor(t.creator.actor).identity == a.identity;
    let may = match t.state {
        St::Closed => a.confirms() || creator,
        s if s.is_lateral() => a.confirms(),
        _ => {
            // PV-ST-6 refuses the state; PV-AU-3 names no authority for it: a server may
            // answer either refusal to a party without authority (PV-AU-6 order).
            let mut rs = vec![(409, "invalid_transition")];
            if !(a.confirms() || creator) {
                rs.push((403, "thread_authority_missing"));
            }
            return refuse_any(world, rs, vec!["PV-ST-6", "PV-AU-3"]);
        }
    };
    if !may {
        return refuse(world, (403, "thread_authority_missing"), vec!["PV-AU-3"]);
    }
    let mut next = world.clone();
    apply_event(
        &mut next.threads[thread],
        a,
        Event {
            from: Some(t.state),
            to: St::Open,
            confirmed: a.confirms(),
        },
    );
    Prediction {
        allowed: vec![Outcome::Accepted { event: true }],
        rules: vec!["PV-ST-6", "PV-AU-3", "PV-ST-5", "PV-ST-7"],
        next,
        accepted_next: None,
    }
}

#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "tests: a panic is the failure report")]
mod tests {
    use super::*;

    const A: usize = 0;
    const B: usize = 1;
    const MOD: usize = 2;
    const HUMAN: usize = 3;
    const READER: usize = 4;

    fn world() -> World {
        let actor = |role: &str, identity: &str, human, write, lock| Actor {
            role: role.into(),
            identity: identity.into(),
            human,
            write,
            read: true,
            lock,
            verify: human,
        };
        World::new(
            vec![
                actor("agent_a", "ainotes:a", false, true, false),
                actor("agent_b", "ainotes:b", false, true, false),
                actor("moderator", "ainotes:mod", false, true, true),
                actor("human", "human:alice", true, true, false),
                actor("reader", "ainotes:reader", false, false, false),
            ],
            Some(500),
        )
    }

    fn p(actor: usize) -> Party {
        Party { actor, ext: None }
    }

    /// Applies `ops` (concrete), returning the last prediction.
    fn run(ops: &[Op]) -> (World, Prediction) {
        let mut w = world();
        let mut last = None;
        for op in ops {
            assert!(w.valid(op), "{op:?} is not valid in {w:?}");
            let pr = predict(&w, op);
            w = pr.next.clone();
            last = Some(pr);
        }
        (w, last.unwrap())
    }

    fn open(by: usize) -> Op {
        Op::Open {
            by: p(by),
            body: Body::Short,
        }
    }

    fn post(by: usize, kind: Kind) -> Op {
        Op::Post {
            by: p(by),
            thread: 0,
            parent: None,
            kind,
            body: Body::Short,
        }
    }

    fn refused(pr: &Prediction) -> Vec<&'static str> {
        pr.allowed
            .iter()
            .filter_map(|o| match o {
                Outcome::Refused((_, r)) => Some(*r),
                Outcome::Accepted { .. } => None,
            })
            .collect()
    }

    #[test]
    fn model_thread_starts_as_proposed_open_awaiting_anyone_else() {
        let (w, pr) = run(&[open(A)]);
        assert_eq!(pr.allowed, vec![Outcome::Accepted { event: false }]);
        let t = &w.threads[0];
        assert_eq!(
            (t.state, t.confirmed, t.origin_user),
            (St::Open, false, false)
        );
        assert_eq!(t.awaiting, Awaiting::AnyExcept(p(A)));
        assert_eq!(t.events.len(), 1);
    }

    #[test]
    fn proposed_close_does_not_lock_confirmed_close_does() {
        let (w, pr) = run(&[open(A), post(A, Kind::Close), post(B, Kind::Inform)]);
        assert_eq!(pr.allowed, vec![Outcome::Accepted { event: false }]);
        assert!(!w.threads[0].locked());
        let (w, pr) = run(&[open(A), post(MOD, Kind::Close), post(HUMAN, Kind::Inform)]);
        assert!(w.threads[0].locked());
        assert_eq!(refused(&pr), vec!["thread_locked"]);
    }

    #[test]
    fn forward_only_and_lateral_ends() {
        let (_, pr) = run(&[open(A), post(A, Kind::Decide), post(B, Kind::Answer)]);
        assert_eq!(refused(&pr), vec!["invalid_transition"]);
        let mark = |by, state| Op::Mark {
            by,
            thread: 0,
            state,
        };
        let (_, pr) = run(&[open(A), mark(A, St::Deferred), mark(A, St::Decided)]);
        assert_eq!(refused(&pr), vec!["invalid_transition"]);
        let (_, pr) = run(&[open(A), mark(A, St::Answered), mark(A, St::Open)]);
        assert_eq!(refused(&pr), vec!["invalid_transition"]);
        // A moderator confirming a proposed lateral state is not a transition.
        let (w, pr) = run(&[open(A), mark(A, St::Rejected), mark(MOD, St::Rejected)]);
        assert_eq!(pr.allowed, vec![Outcome::Accepted { event: true }]);
        assert!(w.threads[0].confirmed);
        // The same confirmed state again changes nothing, whoever marks.
        let (w2, pr) = run(&[
            open(A),
            mark(A, St::Rejected),
            mark(MOD, St::Rejected),
            mark(HUMAN, St::Rejected),
        ]);
        assert_eq!(pr.allowed, vec![Outcome::Accepted { event: false }]);
        assert_eq!(w2.threads[0].events.len(), w.threads[0].events.len());
    }

    #[test]
    fn authority_and_refusal_order() {
        let (_, pr) = run(&[open(A), post(B, Kind::Decide)]);
        assert_eq!(refused(&pr), vec!["thread_authority_missing"]);
        let (_, pr) = run(&[open(A), post(READER, Kind::Answer)]);
        assert_eq!(refused(&pr), vec!["token_right_missing"]);
        // 403 authority comes before 409 locked.
        let (_, pr) = run(&[open(A), post(MOD, Kind::Close), post(B, Kind::Close)]);
        assert_eq!(refused(&pr), vec!["thread_authority_missing"]);
        // Body problems (400) come before the lock (409).
        let blank = Op::Post {
            by: p(B),
            thread: 0,
            parent: None,
            kind: Kind::Inform,
            body: Body::Empty,
        };
        let (_, pr) = run(&[open(A), post(MOD, Kind::Close), blank]);
        assert_eq!(refused(&pr), vec!["invalid_body"]);
    }

    #[test]
    fn reopen_rules() {
        let reopen = |by| Op::Reopen { by, thread: 0 };
        let mark = |by, state| Op::Mark {
            by,
            thread: 0,
            state,
        };
        let (w, pr) = run(&[open(A), post(MOD, Kind::Close), reopen(A)]);
        assert_eq!(pr.allowed, vec![Outcome::Accepted { event: true }]);
        assert_eq!(
            (w.threads[0].state, w.threads[0].confirmed),
            (St::Open, false)
        );
        let (_, pr) = run(&[open(A), mark(A, St::Obsolete), reopen(A)]);
        assert_eq!(refused(&pr), vec!["thread_authority_missing"]);
        let (_, pr) = run(&[open(A), post(A, Kind::Close), reopen(B)]);
        assert_eq!(refused(&pr), vec!["thread_authority_missing"]);
        let (_, pr) = run(&[open(A), reopen(A)]);
        assert_eq!(refused(&pr), vec!["invalid_transition"]);
        // Reopening a forward state: no rule names the authority; either refusal is allowed.
        let (_, pr) = run(&[open(A), reopen(B)]);
        assert_eq!(
            refused(&pr),
            vec!["invalid_transition", "thread_authority_missing"]
        );
    }

    #[test]
    fn self_reply_is_per_extension_and_decide_is_exempt() {
        let ext = |e| Party {
            actor: A,
            ext: Some(e),
        };
        let open_a = Op::Open {
            by: ext(0),
            body: Body::Short,
        };
        let reply = |by, kind| Op::Post {
            by,
            thread: 0,
            parent: None,
            kind,
            body: Body::Short,
        };
        let (_, pr) = run(&[open_a.clone(), reply(ext(0), Kind::Inform)]);
        assert_eq!(refused(&pr), vec!["self_reply"]);
        let (w, pr) = run(&[open_a.clone(), reply(ext(1), Kind::Clarify)]);
        assert_eq!(pr.allowed, vec![Outcome::Accepted { event: false }]);
        assert_eq!(w.threads[0].awaiting, Awaiting::Party(ext(0)));
        let (_, pr) = run(&[open_a, reply(ext(0), Kind::Decide)]);
        assert_eq!(pr.allowed, vec![Outcome::Accepted { event: false }]);
    }

    #[test]
    fn inbox_follows_awaiting_lock_lateral_and_own_extension() {
        let ext = |actor, e| Party {
            actor,
            ext: Some(e),
        };
        let (w, _) = run(&[Op::Open {
            by: ext(A, 0),
            body: Body::Short,
        }]);
        let t = &w.threads[0];
        assert!(w.in_inbox(p(B), t));
        assert!(
            w.in_inbox(p(A), t),
            "(A, no extension) is not the asking party (A, a)"
        );
        assert!(!w.in_inbox(ext(A, 0), t));
        assert!(w.in_inbox(ext(A, 1), t));
        let (w, _) = run(&[
            Op::Open {
                by: p(A),
                body: Body::Short,
            },
            Op::Post {
                by: ext(B, 0),
                thread: 0,
                parent: None,
                kind: Kind::Object,
                body: Body::Short,
            },
        ]);
        let t = &w.threads[0];
        assert!(w.in_inbox(p(A), t) && !w.in_inbox(p(B), t) && !w.in_inbox(p(MOD), t));
        let (w, _) = run(&[
            open(A),
            Op::Mark {
                by: A,
                thread: 0,
                state: St::Deferred,
            },
        ]);
        assert!(!w.in_inbox(p(B), &w.threads[0]));
    }

    #[test]
    fn picks_resolve_proportionally_and_name_the_creator() {
        assert_eq!(pick(0, 3), Some(0));
        assert_eq!(pick(u32::MAX as usize, 3), Some(2));
        assert_eq!(pick(7, 0), None);
        let (w, _) = run(&[open(B)]);
        let generated = Op::Mark {
            by: w.actors.len(),
            thread: 12345,
            state: St::Closed,
        };
        assert_eq!(
            w.resolve(&generated),
            Some(Op::Mark {
                by: B,
                thread: 0,
                state: St::Closed
            })
        );
        assert_eq!(world().resolve(&Op::Reopen { by: A, thread: 0 }), None);
    }
}
