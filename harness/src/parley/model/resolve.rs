//! Resolving a generated operation against the model: its picks (indices drawn from any
//! `usize`) become the threads, messages and claims that exist, and [`World::valid`] is the
//! precondition that keeps shrunk sequences legal and out of the points the notes leave to
//! the target.

use super::dialectic::{self, Evidence, Until};
use super::party::Party;
use super::state::{Body, Kind, Op, World, pick};

impl World {
    /// Whether `op` refers only to what exists (the precondition keeping shrunk sequences
    /// legal) and stays out of the points the notes leave to the target (a repeat claim act,
    /// superseding a claim of a locked thread): what follows those would depend on the
    /// target's reading, so neither a generated sequence nor a promoted vector could judge it.
    pub fn valid(&self, op: &Op) -> bool {
        self.refers(op, true)
    }

    /// Whether `op` refers only to what exists: the precondition of the concurrent
    /// histories, whose groups race into the open points on purpose (PV-DI-9) and accept
    /// every reading the model allows.
    pub fn exists(&self, op: &Op) -> bool {
        self.refers(op, false)
    }

    fn refers(&self, op: &Op, generated: bool) -> bool {
        let actor_ok = op.actor() < self.actors.len() || matches!(op, Op::Anonymous { .. });
        let thread_ok = |t: usize| t < self.threads.len();
        let msg_ok = |t: usize, m: usize| thread_ok(t) && m < self.threads[t].messages.len();
        actor_ok
            && match op {
                Op::Open { .. }
                | Op::Orphan { .. }
                | Op::UnknownThread { .. }
                | Op::Inbox { .. }
                | Op::Whoami { .. }
                | Op::Anonymous { .. } => true,
                Op::Post { thread, parent, .. } => match parent {
                    Some(p) => msg_ok(*thread, *p),
                    None => thread_ok(*thread),
                },
                Op::ForeignParent {
                    thread,
                    other,
                    parent,
                    ..
                } => thread != other && thread_ok(*thread) && msg_ok(*other, *parent),
                Op::Mark { thread, .. }
                | Op::Reopen { thread, .. }
                | Op::ReadThread { thread, .. } => thread_ok(*thread),
                Op::ListEvents { thread, since, .. } => {
                    thread_ok(*thread)
                        && since.is_none_or(|s| s < self.threads[*thread].events.len())
                }
                Op::Assert {
                    thread,
                    supersedes,
                    until,
                    ..
                } => {
                    // A `valid_until` soon needs the target's clock, read off an earlier
                    // message of the sequence (claim_steps::Clock).
                    self.dialectic
                        && (*until != Until::Soon || !self.threads.is_empty())
                        && thread.is_none_or(thread_ok)
                        // Superseding a claim of a locked thread is open in the notes and
                        // the model predicts one reading: kept out of histories as well.
                        && supersedes.is_none_or(|c| self.supersedable(c))
                }
                Op::ClaimAct { claim, act, .. } => self.claims.get(*claim).is_some_and(|c| {
                    self.dialectic && (!generated || dialectic::settled(*act, c.status))
                }),
                Op::ReadClaim { claim, .. } => self.dialectic && *claim < self.claims.len(),
            }
    }

    /// Whether an assert may list claim `c` in `supersedes` in a generated sequence: a claim
    /// in a locked thread is left out, because the notes do not say whether superseding it
    /// is a change to that thread (PV-ST-4) or not.
    fn supersedable(&self, c: usize) -> bool {
        self.claims
            .get(c)
            .is_some_and(|cl| !self.threads[cl.thread].locked())
    }

    /// The concrete operation a generated one (with picks) names in this model, or `None`
    /// when it names nothing (no thread yet, two picks naming the same thread).
    pub fn resolve(&self, op: &Op) -> Option<Op> {
        let op = match op.clone() {
            op @ (Op::Assert { .. } | Op::ClaimAct { .. } | Op::ReadClaim { .. }) => {
                self.resolve_claim_op(op)?
            }
            op => self.resolve_thread_op(op)?,
        };
        self.valid(&op).then_some(op)
    }

    /// [`Self::resolve`] for the operations naming threads, messages and events (the others
    /// are returned as they are).
    fn resolve_thread_op(&self, op: Op) -> Option<Op> {
        Some(match op {
            Op::Post {
                by,
                thread,
                parent,
                kind,
                body,
            } => self.resolve_post(by, thread, parent, kind, body)?,
            Op::ForeignParent {
                by,
                thread: t,
                other,
                parent,
            } => {
                let (t, other) = (self.pick_thread(t)?, self.pick_thread(other)?);
                Op::ForeignParent {
                    by,
                    thread: t,
                    other,
                    parent: self.pick_message(other, parent)?,
                }
            }
            Op::Mark {
                by,
                thread: t,
                state,
            } => {
                let t = self.pick_thread(t)?;
                Op::Mark {
                    by: self.creator_or(t, by),
                    thread: t,
                    state,
                }
            }
            Op::Reopen { by, thread: t } => {
                let t = self.pick_thread(t)?;
                Op::Reopen {
                    by: self.creator_or(t, by),
                    thread: t,
                }
            }
            Op::ReadThread { by, thread: t } => Op::ReadThread {
                by,
                thread: self.pick_thread(t)?,
            },
            Op::ListEvents { by, thread, since } => self.resolve_list_events(by, thread, since)?,
            other => other,
        })
    }

    /// [`Self::resolve`] for the operations naming claims (the others are returned as they
    /// are).
    fn resolve_claim_op(&self, op: Op) -> Option<Op> {
        Some(match op {
            Op::Assert {
                by,
                thread,
                supersedes,
                until,
                evidence,
            } => self.resolve_assert(by, thread, supersedes, until, evidence)?,
            Op::ClaimAct {
                by,
                claim,
                act,
                evidence,
            } => Op::ClaimAct {
                by,
                claim: self.pick_claim(claim)?,
                act,
                evidence,
            },
            Op::ReadClaim {
                by,
                claim,
                after_expiry,
            } => Op::ReadClaim {
                by,
                claim: self.pick_claim(claim)?,
                after_expiry,
            },
            other => other,
        })
    }

    /// A generated `Post`: its thread, then its author and explicit parent in that thread.
    fn resolve_post(
        &self,
        mut by: Party,
        t: usize,
        parent: Option<usize>,
        kind: Kind,
        body: Body,
    ) -> Option<Op> {
        let t = self.pick_thread(t)?;
        by.actor = self.creator_or(t, by.actor);
        let parent = match parent {
            Some(p) => Some(self.pick_message(t, p)?),
            None => None,
        };
        Some(Op::Post {
            by,
            thread: t,
            parent,
            kind,
            body,
        })
    }

    /// A generated `ListEvents`: its thread, then its `since` among that thread's events.
    fn resolve_list_events(&self, by: usize, t: usize, since: Option<usize>) -> Option<Op> {
        let t = self.pick_thread(t)?;
        let since = match since {
            Some(p) => Some(pick(p, self.threads[t].events.len())?),
            None => None,
        };
        Some(Op::ListEvents {
            by,
            thread: t,
            since,
        })
    }

    /// A generated `Assert`: its thread and superseded claim, then its author.
    fn resolve_assert(
        &self,
        mut by: Party,
        t: Option<usize>,
        supersedes: Option<usize>,
        until: Until,
        evidence: Evidence,
    ) -> Option<Op> {
        let thread = match t {
            Some(p) => Some(self.pick_thread(p)?),
            None => None,
        };
        let supersedes = match supersedes {
            Some(p) => Some(self.pick_claim(p)?),
            None => None,
        };
        // One past the last actor names the superseded claim's author (who may
        // supersede it, PV-DI-6), else the thread's creator, else the first actor.
        if by.actor == self.actors.len() {
            by.actor = supersedes
                .map(|c| self.claims[c].author.actor)
                .or(thread.map(|t| self.threads[t].creator.actor))
                .unwrap_or(0);
        }
        Some(Op::Assert {
            by,
            thread,
            supersedes,
            until,
            evidence,
        })
    }

    /// The thread pick `p` selects.
    fn pick_thread(&self, p: usize) -> Option<usize> {
        pick(p, self.threads.len())
    }

    /// The message pick `p` selects in thread `t`.
    fn pick_message(&self, t: usize, p: usize) -> Option<usize> {
        pick(p, self.threads[t].messages.len())
    }

    /// The claim pick `p` selects.
    fn pick_claim(&self, p: usize) -> Option<usize> {
        pick(p, self.claims.len())
    }

    /// Actor index `a`, where one past the last names thread `t`'s creator (generation
    /// favours the creator, whose authority is the interesting case).
    fn creator_or(&self, t: usize, a: usize) -> usize {
        if a == self.actors.len() {
            self.threads[t].creator.actor
        } else {
            a
        }
    }
}
