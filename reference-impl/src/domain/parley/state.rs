//! Thread state machine (§5, PV-ST): forward states, lateral ends, proposal vs confirmation,
//! locking. Pure decisions: the service applies what these functions return.

use super::reasons::{Reason, Refusal, refuse};

/// A thread state (PV-ST).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ThreadState {
    /// Forward 1: the thread awaits answers.
    Open,
    /// Forward 2: an `answer` was given.
    Answered,
    /// Forward 3: a `decide` recorded the decision.
    Decided,
    /// Forward 4: ended; locks once confirmed (PV-ST-4).
    Closed,
    /// Lateral end: postponed.
    Deferred,
    /// Lateral end: no longer relevant.
    Obsolete,
    /// Lateral end: refused.
    Rejected,
}

impl ThreadState {
    /// Forward states in order (manifest `states.forward`).
    pub const FORWARD: [Self; 4] = [Self::Open, Self::Answered, Self::Decided, Self::Closed];
    /// Lateral states (manifest `states.lateral`).
    pub const LATERAL: [Self; 3] = [Self::Deferred, Self::Obsolete, Self::Rejected];
    /// Every state.
    pub const ALL: [Self; 7] = [
        Self::Open,
        Self::Answered,
        Self::Decided,
        Self::Closed,
        Self::Deferred,
        Self::Obsolete,
        Self::Rejected,
    ];

    /// Wire spelling.
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

    /// Parses the wire spelling (exact, lowercase).
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// Lateral states are ends (PV-ST-3).
    pub fn is_lateral(self) -> bool {
        Self::LATERAL.contains(&self)
    }

    /// Position on the forward line; `None` for lateral states.
    pub fn forward_rank(self) -> Option<usize> {
        Self::FORWARD.iter().position(|s| *s == self)
    }
}

/// Who set a state (`state_origin`, event `origin`): a human is `user`, anyone else `llm`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Origin {
    /// Set by a human (always confirmed, PV-ST-5).
    User,
    /// Set by a model (confirmed only for lock holders, PV-ST-5).
    Llm,
}

impl Origin {
    /// Wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Llm => "llm",
        }
    }

    /// Parses the wire spelling.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "user" => Some(Self::User),
            "llm" => Some(Self::Llm),
            _ => None,
        }
    }
}

/// A thread's current state and whether it is confirmed (`state_confirmed_at` non-null).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateView {
    /// Current state.
    pub state: ThreadState,
    /// `false` = a proposal (PV-ST-5).
    pub confirmed: bool,
}

impl StateView {
    /// PV-ST-4: only a **confirmed** `closed` locks the thread.
    pub fn is_locked(self) -> bool {
        self.state == ThreadState::Closed && self.confirmed
    }
}

/// What a mark (a `mark` call or a marking kind) does to the thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkOutcome {
    /// Nothing changes and no event is written (same state, PV-ST-1/PV-ST-2).
    Unchanged,
    /// The current proposed state becomes confirmed (PV-ST-5; an event, not a transition).
    Confirm,
    /// The thread moves to `to`; `confirmed` says whether the new state is confirmed.
    Change {
        /// Target state.
        to: ThreadState,
        /// Confirmed (human / lock holder) or a proposal.
        confirmed: bool,
    },
}

/// Decides a mark to `target` on a thread in `current`, by an actor who confirms states
/// (`human` or `lock` holder) or only proposes them.
///
/// Rules, in order: PV-ST-4 (a confirmed `closed` accepts no mark at all, same state
/// included, from anyone) → same state: unchanged or a confirmation (PV-ST-1, PV-ST-2,
/// PV-ST-5) → lateral current: end (PV-ST-3) → `open` only via reopen (PV-ST-2) → backward
/// forward moves refused (PV-ST-1) → otherwise the move, skipping steps allowed.
pub fn decide_mark(
    current: StateView,
    target: ThreadState,
    actor_confirms: bool,
) -> Result<MarkOutcome, Refusal> {
    if current.is_locked() {
        return refuse(
            Reason::ThreadLocked,
            "thread is closed and confirmed; reopen it first",
        );
    }
    if target == current.state {
        return Ok(if current.confirmed || !actor_confirms {
            MarkOutcome::Unchanged
        } else {
            MarkOutcome::Confirm
        });
    }
    if current.state.is_lateral() {
        return refuse(
            Reason::InvalidTransition,
            format!(
                "{} is a lateral end state; only reopen leaves it",
                current.state.as_str()
            ),
        );
    }
    if target == ThreadState::Open {
        return refuse(
            Reason::InvalidTransition,
            "open is only reached by reopen, never by a mark",
        );
    }
    if let (Some(from), Some(to)) = (current.state.forward_rank(), target.forward_rank())
        && to < from
    {
        return refuse(
            Reason::InvalidTransition,
            format!(
                "forward only: {} cannot go back to {}",
                current.state.as_str(),
                target.as_str()
            ),
        );
    }
    Ok(MarkOutcome::Change {
        to: target,
        confirmed: actor_confirms,
    })
}

/// PV-ST-6: reopen moves `closed` (proposed or confirmed) or a lateral state to `open`;
/// from any other state it is an invalid transition. (Authority is PV-AU-3, checked first.)
pub fn decide_reopen(current: StateView, actor_confirms: bool) -> Result<MarkOutcome, Refusal> {
    if current.state == ThreadState::Closed || current.state.is_lateral() {
        Ok(MarkOutcome::Change {
            to: ThreadState::Open,
            confirmed: actor_confirms,
        })
    } else {
        refuse(
            Reason::InvalidTransition,
            format!(
                "reopen applies to closed or lateral threads, not {}",
                current.state.as_str()
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::ThreadState::*;
    use super::*;

    fn view(state: ThreadState, confirmed: bool) -> StateView {
        StateView { state, confirmed }
    }

    #[test]
    fn forward_moves_and_skips() {
        // PV-ST-1
        for (i, from) in ThreadState::FORWARD.iter().enumerate() {
            for (j, to) in ThreadState::FORWARD.iter().enumerate() {
                for confirmed in [false, true] {
                    for actor_confirms in [false, true] {
                        let cur = view(*from, confirmed);
                        let got = decide_mark(cur, *to, actor_confirms);
                        let expected: Result<MarkOutcome, Reason> = if cur.is_locked() {
                            Err(Reason::ThreadLocked)
                        } else if i == j {
                            Ok(if confirmed || !actor_confirms {
                                MarkOutcome::Unchanged
                            } else {
                                MarkOutcome::Confirm
                            })
                        } else if *to == Open || j < i {
                            Err(Reason::InvalidTransition)
                        } else {
                            Ok(MarkOutcome::Change {
                                to: *to,
                                confirmed: actor_confirms,
                            })
                        };
                        assert_eq!(
                            got.map_err(|r| r.reason),
                            expected,
                            "{from:?}/{confirmed} -> {to:?} by confirmer={actor_confirms}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn lateral_ends_and_confirmation() {
        // PV-ST-3, PV-ST-5
        for lat in ThreadState::LATERAL {
            for to in ThreadState::ALL {
                for confirmed in [false, true] {
                    for actor_confirms in [false, true] {
                        let got = decide_mark(view(lat, confirmed), to, actor_confirms)
                            .map_err(|r| r.reason);
                        let expected = if to == lat {
                            Ok(if !confirmed && actor_confirms {
                                MarkOutcome::Confirm
                            } else {
                                MarkOutcome::Unchanged
                            })
                        } else {
                            Err(Reason::InvalidTransition)
                        };
                        assert_eq!(got, expected, "{lat:?}/{confirmed} -> {to:?}");
                    }
                }
            }
        }
        // From a forward (non-locked) state every lateral is reachable.
        for from in [Open, Answered, Decided] {
            for lat in ThreadState::LATERAL {
                assert!(matches!(
                    decide_mark(view(from, true), lat, false),
                    Ok(MarkOutcome::Change { .. })
                ));
            }
        }
        assert!(matches!(
            decide_mark(view(Closed, false), Deferred, true),
            Ok(MarkOutcome::Change {
                to: Deferred,
                confirmed: true
            })
        ));
    }

    #[test]
    fn confirmed_closed_locks_even_same_state() {
        // PV-ST-4 wins over PV-ST-2's "same confirmed state → event null".
        for to in ThreadState::ALL {
            assert_eq!(
                decide_mark(view(Closed, true), to, true).map_err(|r| r.reason),
                Err(Reason::ThreadLocked)
            );
        }
        assert!(!view(Closed, false).is_locked());
    }

    #[test]
    fn reopen_table() {
        // PV-ST-6
        for st in ThreadState::ALL {
            for confirmed in [false, true] {
                let got = decide_reopen(view(st, confirmed), true).map_err(|r| r.reason);
                if st == Closed || st.is_lateral() {
                    assert_eq!(
                        got,
                        Ok(MarkOutcome::Change {
                            to: Open,
                            confirmed: true
                        })
                    );
                } else {
                    assert_eq!(got, Err(Reason::InvalidTransition));
                }
            }
        }
    }

    #[test]
    fn parse_roundtrip() {
        for s in ThreadState::ALL {
            assert_eq!(ThreadState::parse(s.as_str()), Some(s));
        }
        assert_eq!(ThreadState::parse("Open"), None);
    }
}
