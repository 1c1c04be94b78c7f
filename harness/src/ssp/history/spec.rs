//! SSP-INV-7 as a sequential specification: an invocation hands out an execution id never
//! handed out before, and an execution's terminal reading is its own — under its own id and
//! skill, with the status (and, for a deterministic skill, the output) that the same inputs
//! give when invoked alone.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::capability::history::Spec;

/// One operation of the history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// An invocation with input variant `input`, as answered with `id` (`None`: no id came
    /// back). The id is part of the step: the specification decides whether it may be
    /// handed out there.
    Invoke {
        /// Input variant.
        input: usize,
        /// The execution id the answer carried.
        id: Option<String>,
    },
    /// Polling execution `id` (of input variant `input`) to its terminal status.
    Final {
        /// Input variant.
        input: usize,
        /// Execution id.
        id: String,
    },
}

/// What the provider answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Observed {
    /// 202 with an InvocationResponse.
    Accepted,
    /// Anything else (the status, when one came).
    Refused(Option<u16>),
    /// The terminal InvocationResponse: `execution_id`, `skill_id`, `status`, `output`.
    Final(Box<[Value; 4]>),
}

/// What the specification expects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expected {
    /// 202 with a fresh id.
    Accepted,
    /// The execution's own terminal reading.
    Final {
        /// Its id.
        id: String,
        /// The terminal status of the same inputs invoked alone (when it proved stable).
        status: Option<Value>,
        /// Its output, when the skill proved deterministic.
        output: Option<Value>,
    },
}

/// The specification of one skill: its id and, per input variant, the terminal status and
/// (deterministic skills) output seen when it was invoked alone.
#[derive(Debug, Clone)]
pub struct SspSpec {
    /// The skill id every reading must carry.
    pub skill: String,
    /// Per input variant: (status, output), each when it proved stable alone.
    pub alone: Vec<(Option<Value>, Option<Value>)>,
}

impl Spec for SspSpec {
    /// The execution ids handed out so far.
    type State = BTreeSet<String>;
    type Input = Step;
    type Output = Observed;
    type Expected = Expected;

    fn step(&self, ids: &BTreeSet<String>, input: &Step) -> Vec<(BTreeSet<String>, Expected)> {
        match input {
            Step::Invoke { id: Some(id), .. } if ids.contains(id) => Vec::new(),
            Step::Invoke { id, .. } => {
                let mut next = ids.clone();
                next.extend(id.iter().cloned());
                vec![(next, Expected::Accepted)]
            }
            Step::Final { input, id } if ids.contains(id) => {
                let (status, output) = self.alone.get(*input).cloned().unwrap_or_default();
                vec![(
                    ids.clone(),
                    Expected::Final {
                        id: id.clone(),
                        status,
                        output,
                    },
                )]
            }
            Step::Final { .. } => Vec::new(),
        }
    }

    fn matches(&self, expected: &Expected, observed: &Observed) -> bool {
        match (expected, observed) {
            (Expected::Accepted, Observed::Accepted) => true,
            (Expected::Final { id, status, output }, Observed::Final(got)) => {
                let [i, s, st, o] = &**got;
                i.as_str() == Some(id.as_str())
                    && s.as_str() == Some(self.skill.as_str())
                    && status.as_ref().is_none_or(|s| s == st)
                    && output.as_ref().is_none_or(|out| out == o)
            }
            _ => false,
        }
    }
}
