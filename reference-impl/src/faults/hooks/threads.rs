//! Hooks of the thread state machine (PV-ST, PV-AU-2/3): `mark`, `reopen`, and the rules
//! a post shares with them (who confirms, the label, the lock, the state event).

use crate::domain::parley::{Actor, MarkOutcome, Reason, Refusal, StateView, ThreadState};
use crate::faults::{Fault, Faults};
use crate::store::parley::ThreadRow;

/// Whether the actor's state changes on `thread` (`None`: the thread it opens) are
/// confirmed (PV-ST-5). `human-mark-is-proposal`, `creator-mark-confirmed` and
/// `model-thread-starts-confirmed` each bend one case.
pub(crate) fn confirms_states(faults: Faults, actor: &Actor, thread: Option<&ThreadRow>) -> bool {
    if faults.is_on(Fault::HumanMarkIsProposal) && actor.is_human() {
        return false;
    }
    match thread {
        Some(t) => {
            actor.confirms_states()
                || (faults.is_on(Fault::CreatorMarkConfirmed)
                    && t.creator.identity == actor.identity)
        }
        None => actor.confirms_states() || faults.is_on(Fault::ModelThreadStartsConfirmed),
    }
}

/// The state/event label (PV-ST-7). `lock-label-is-identity` labels a lock holder's states
/// with its identity.
pub(crate) fn state_label(faults: Faults, actor: &Actor) -> String {
    if faults.is_on(Fault::LockLabelIsIdentity) && !actor.is_human() {
        actor.identity.clone()
    } else {
        actor.label()
    }
}

/// Whether a state change is recorded as an event (PV-ST-7: always).
/// `confirmation-without-event` records none for a confirmation.
pub(crate) fn records_event(faults: Faults, outcome: MarkOutcome) -> bool {
    !(faults.is_on(Fault::ConfirmationWithoutEvent) && outcome == MarkOutcome::Confirm)
}

/// An extra lock the correct server does not have (PV-ST-4 locks only a *confirmed*
/// closed thread): `proposed-closed-locks` locks a proposed one too.
pub(crate) fn proposed_closed_locks(faults: Faults, state: ThreadState) -> bool {
    faults.is_on(Fault::ProposedClosedLocks) && state == ThreadState::Closed
}

/// Whether `mark` skips the thread authority check (never: PV-AU-2, PV-TR-1).
/// `mcp-mark-skips-authority` skips it over the MCP binding.
pub(crate) fn mark_skips_authority(faults: Faults, via_mcp: bool) -> bool {
    via_mcp && faults.is_on(Fault::McpMarkSkipsAuthority)
}

/// The outcome of `mark` from the domain's `correct` one (PV-ST-1, PV-ST-2).
/// `mark-backwards-accepted` and `mark-open-accepted` turn those refusals into changes.
pub(crate) fn mark_outcome(
    faults: Faults,
    view: StateView,
    target: ThreadState,
    confirms: bool,
    correct: Result<MarkOutcome, Refusal>,
) -> Result<MarkOutcome, Refusal> {
    match correct {
        Err(r) if r.reason == Reason::InvalidTransition && !view.state.is_lateral() => {
            let backwards = matches!(
                (view.state.forward_rank(), target.forward_rank()),
                (Some(from), Some(to)) if to < from && to > 0
            );
            if (backwards && faults.is_on(Fault::MarkBackwardsAccepted))
                || (target == ThreadState::Open && faults.is_on(Fault::MarkOpenAccepted))
            {
                Ok(MarkOutcome::Change {
                    to: target,
                    confirmed: confirms,
                })
            } else {
                Err(r)
            }
        }
        other => other,
    }
}

/// Whether `reopen` is allowed to an actor PV-AU-3 refuses. `creator-reopens-lateral` lets
/// the creator reopen a lateral state; `reopen-by-any-writer` lets anyone reopen the rest.
pub(crate) fn reopen_granted(faults: Faults, actor: &Actor, thread: &ThreadRow) -> bool {
    if thread.state.is_lateral() {
        faults.is_on(Fault::CreatorReopensLateral) && thread.creator.identity == actor.identity
    } else {
        faults.is_on(Fault::ReopenByAnyWriter)
    }
}

/// The outcome of `reopen` from the domain's `correct` one (PV-ST-6).
/// `reopen-from-any-state` reopens whatever the state.
pub(crate) fn reopen_outcome(
    faults: Faults,
    state: ThreadState,
    confirms: bool,
    correct: Result<MarkOutcome, Refusal>,
) -> Result<MarkOutcome, Refusal> {
    match correct {
        Err(_) if faults.is_on(Fault::ReopenFromAnyState) && state != ThreadState::Open => {
            Ok(MarkOutcome::Change {
                to: ThreadState::Open,
                confirmed: confirms,
            })
        }
        other => other,
    }
}
