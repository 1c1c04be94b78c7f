//! The operations of an SSP model sequence and how they resolve against the live model:
//! indices drawn from any `usize` become live skills, units, callers and executions, so a
//! shrunk sequence stays legal; [`World::next`] is the model after an operation that
//! certainly took effect, [`World::describe`] its line in a transcript.

use super::state::{Filter, Invalid, Invoke, Timeout, World, create, invalid_applies, invoke};

/// One operation of a sequence. Indices are picked from any `usize` and resolved against
/// the model ([`World::resolve`]); `by: None` is the credential that succeeds (a unit's
/// owner, an execution's creator).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Op {
    /// GET the well-known index (SSP-DISC-2/3).
    Discover {
        /// Caller.
        by: usize,
        /// Query.
        filter: Filter,
    },
    /// GET a skill's descriptor (SSP-DISC-4).
    Descriptor {
        /// Caller.
        by: usize,
        /// Skill.
        skill: usize,
    },
    /// GET a descriptor path no skill has (SSP-DISC-4).
    UnknownDescriptor {
        /// Caller.
        by: usize,
    },
    /// POST an invocation (SSP-INV-1/5, SSP-AUTH-1..4).
    Invoke {
        /// Caller (`None`: the unit's owner).
        by: Option<usize>,
        /// Unit.
        unit: usize,
        /// `context.timeout_ms`.
        timeout: Timeout,
    },
    /// POST an invalid invocation with the unit's own credential (SSP-INV-2).
    Invalid {
        /// Unit.
        unit: usize,
        /// What is wrong.
        what: Invalid,
    },
    /// GET `status_url` (SSP-INV-3/6).
    Status {
        /// Caller (`None`: the creator).
        by: Option<usize>,
        /// Execution.
        exec: usize,
    },
    /// GET `result_url` (SSP-INV-4/6).
    Result {
        /// Caller (`None`: the creator).
        by: Option<usize>,
        /// Execution.
        exec: usize,
    },
    /// Poll `status_url` as the creator until a terminal state, bounded by the effective
    /// timeout plus a grace period (SSP-INV-3/5).
    Await {
        /// Execution.
        exec: usize,
    },
    /// GET `status_url`/`result_url` of an id no invocation returned (SSP-INV-4).
    UnknownExecution {
        /// Caller (`None`: the unit's owner).
        by: Option<usize>,
        /// Unit whose templates are used.
        unit: usize,
        /// `result_url` instead of `status_url`.
        result: bool,
    },
}

fn pick(i: usize, n: usize) -> Option<usize> {
    (n > 0).then(|| i % n)
}

impl Op {
    /// This resolved operation with `by: None` wherever `generated` (what it was resolved
    /// from) had it: "the owner" stays the owner on another cast.
    pub fn owner_kept(&self, generated: &Self) -> Self {
        let mut out = self.clone();
        let owner = matches!(
            generated,
            Self::Invoke { by: None, .. }
                | Self::Status { by: None, .. }
                | Self::Result { by: None, .. }
                | Self::UnknownExecution { by: None, .. }
        );
        if owner {
            match &mut out {
                Self::Invoke { by, .. }
                | Self::Status { by, .. }
                | Self::Result { by, .. }
                | Self::UnknownExecution { by, .. } => *by = None,
                _ => {}
            }
        }
        out
    }
}

impl World {
    /// `op` with its indices resolved against this model, or `None` when it cannot be
    /// sent here (its precondition).
    pub fn resolve(&self, op: &Op) -> Option<Op> {
        let callers = self.callers.len();
        let by_or = |by: Option<usize>, owner: Option<usize>| match by {
            Some(b) => pick(b, callers),
            None => owner,
        };
        Some(match op {
            Op::Discover { by, filter } => Op::Discover {
                by: pick(*by, callers)?,
                filter: *filter,
            },
            Op::Descriptor { by, skill } => Op::Descriptor {
                by: pick(*by, callers)?,
                skill: pick(*skill, self.skills.len())?,
            },
            Op::UnknownDescriptor { by } => Op::UnknownDescriptor {
                by: pick(*by, callers)?,
            },
            Op::Invoke { by, unit, timeout } => {
                let unit = pick(*unit, self.units.len())?;
                Op::Invoke {
                    by: Some(by_or(*by, self.owner_of(unit))?),
                    unit,
                    timeout: *timeout,
                }
            }
            Op::Invalid { unit, what } => {
                let unit = pick(*unit, self.units.len())?;
                let what = match what {
                    Invalid::OtherSkill(o) => Invalid::OtherSkill(pick(*o, self.skills.len())?),
                    w => *w,
                };
                self.owner_of(unit)?;
                invalid_applies(self, unit, what).then_some(Op::Invalid { unit, what })?
            }
            Op::Status { by, exec } | Op::Result { by, exec } => {
                let exec = pick(*exec, self.execs.len())?;
                let e = &self.execs[exec];
                let s = &self.skills[self.units[e.unit].skill];
                let by = Some(by_or(*by, Some(e.owner))?);
                match op {
                    Op::Status { .. } => {
                        s.status_url.as_ref()?;
                        Op::Status { by, exec }
                    }
                    _ => {
                        s.result_url.as_ref()?;
                        Op::Result { by, exec }
                    }
                }
            }
            Op::Await { exec } => {
                let exec = pick(*exec, self.execs.len())?;
                self.skills[self.units[self.execs[exec].unit].skill]
                    .status_url
                    .as_ref()?;
                Op::Await { exec }
            }
            Op::UnknownExecution { by, unit, result } => {
                let unit = pick(*unit, self.units.len())?;
                let s = &self.skills[self.units[unit].skill];
                if *result {
                    s.result_url.as_ref()?;
                } else {
                    s.status_url.as_ref()?;
                }
                Op::UnknownExecution {
                    by: Some(by_or(*by, self.owner_of(unit))?),
                    unit,
                    result: *result,
                }
            }
        })
    }

    /// The model after a resolved `op` whose answer agreed with the prediction: an
    /// invocation the model predicts to be accepted creates an execution.
    pub fn next(&self, op: &Op) -> Self {
        let mut w = self.clone();
        if let Op::Invoke {
            by: Some(by),
            unit,
            timeout,
        } = op
            && invoke(self, *by, *unit, *timeout) == Invoke::Accept
        {
            create(&mut w, *unit, *by, *timeout);
        }
        w
    }

    /// The operation in words (the transcript).
    pub fn describe(&self, op: &Op) -> String {
        let who = |b: &Option<usize>| {
            b.and_then(|b| self.callers.get(b))
                .map_or("owner", |c| c.name())
        };
        let unit = |u: usize| {
            self.units.get(u).map_or("?".to_string(), |u| {
                format!("{} ({})", self.skills[u.skill].id, u.role)
            })
        };
        match op {
            Op::Discover { by, filter } => {
                format!("{} discovers with filter {filter:?}", who(&Some(*by)))
            }
            Op::Descriptor { by, skill } => format!(
                "{} reads the descriptor of {}",
                who(&Some(*by)),
                self.skills.get(*skill).map_or("?", |s| s.id.as_str())
            ),
            Op::UnknownDescriptor { by } => {
                format!("{} reads an unknown descriptor path", who(&Some(*by)))
            }
            Op::Invoke {
                by,
                unit: u,
                timeout,
            } => format!(
                "{} invokes {} with context.timeout_ms {timeout:?}",
                who(by),
                unit(*u)
            ),
            Op::Invalid { unit: u, what } => format!(
                "owner posts an invalid invocation of {} ({what:?})",
                unit(*u)
            ),
            Op::Status { by, exec } => format!("{} reads the status of execution #{exec}", who(by)),
            Op::Result { by, exec } => format!("{} reads the result of execution #{exec}", who(by)),
            Op::Await { exec } => format!("owner polls execution #{exec} until it is terminal"),
            Op::UnknownExecution {
                by,
                unit: u,
                result,
            } => format!(
                "{} reads the {} of an unknown execution id ({})",
                who(by),
                if *result { "result" } else { "status" },
                unit(*u)
            ),
        }
    }
}
