//! Sequence vectors (`vectors/ssp/sequences/*.json`, `vectors/README.md` "SSP sequence
//! vectors"): a counterexample of the SSP model kept as its operations, written by
//! `conform model --suite ssp --promote DIR` and replayed by `conform run` as the check
//! `model/ssp-sequence/<id>` — the model judges every step again, against any provider.
//!
//! The operations hold indices into the model's cast (skills, units, callers, executions),
//! resolved against the target's own cast the way a generated sequence is (`ops`), so a
//! sequence found on one provider plays on another.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::ops::Op;
use super::runner::Counterexample;
use super::state::Timeout;
use crate::engine::requirements::Catalogue;
use crate::ssp::vector_files;
use crate::ssp::vectors::VectorError;

/// One file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SequenceFile {
    /// Must be 1.
    pub format_version: u32,
    /// Must be `ssp-sequences`.
    pub suite: String,
    /// Free text: where the sequences come from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The sequences.
    pub sequences: Vec<Sequence>,
}

/// One sequence of the model's operations.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sequence {
    /// Unique id (the check is `model/ssp-sequence/<id>`).
    pub id: String,
    /// The rules its counterexample broke (first = primary).
    pub requirements: Vec<String>,
    /// One line.
    pub title: String,
    /// The operations, in order.
    pub ops: Vec<Op>,
}

/// The file of one counterexample found with `seed` (`None` when its mismatch names no
/// rule: an error of the run, not a finding).
pub fn vector_file(cx: &Counterexample, seed: u64) -> Option<SequenceFile> {
    let first = cx.mismatch.rules.first()?;
    let id = format!("model-seed-{seed}-{}", first.to_ascii_lowercase());
    Some(SequenceFile {
        format_version: 1,
        suite: "ssp-sequences".into(),
        description: Some(format!(
            "promoted by conform model --suite ssp --seed {seed}: {} operation(s)",
            cx.ops.len()
        )),
        sequences: vec![Sequence {
            id,
            requirements: cx.mismatch.rules.clone(),
            title: format!(
                "promoted SSP model counterexample (seed {seed}): {}",
                cx.mismatch.message
            ),
            ops: cx.ops.clone(),
        }],
    })
}

/// Replays of a counterexample before it is promoted: it may hang on timing (a result read
/// that met `completed`), so one failure of a few tries on the same rules is enough.
pub const PROMOTION_TRIES: usize = 5;

/// The file of `cx` when its sequence, replayed alone on `target`, breaks the same rules
/// again within [`PROMOTION_TRIES`]; else why it cannot be a vector. A counterexample can
/// depend on what other sequences of the search left on the provider (an id handed out
/// before): such a sequence passes alone, and a vector of it could never fail (blocking;
/// see `runner`).
pub fn promotable(
    handle: &tokio::runtime::Handle,
    target: &crate::engine::target::Target,
    cx: &Counterexample,
    seed: u64,
) -> Result<SequenceFile, String> {
    let file = vector_file(cx, seed).ok_or("the mismatch names no rule")?;
    let mut seen = Vec::new();
    for attempt in 0..PROMOTION_TRIES {
        let nonce = format!("promote-{seed}-{attempt}");
        match super::runner::replay(handle, target, &cx.ops, &nonce, None).result {
            super::runner::ModelResult::Failed(again)
                if again.mismatch.rules == cx.mismatch.rules =>
            {
                return Ok(file);
            }
            super::runner::ModelResult::Failed(again) => {
                seen.push(format!("broke {} instead", again.mismatch.rules.join(", ")));
            }
            other => seen.push(format!("{other:?}")),
        }
    }
    Err(format!(
        "replayed alone {PROMOTION_TRIES} times, the sequence never broke {} again ({}): it depends on what other sequences left on the provider, or on timing",
        cx.mismatch.rules.join(", "),
        seen.join("; ")
    ))
}

/// A loaded sequence and its file.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The file.
    pub file: PathBuf,
    /// The sequence.
    pub sequence: Sequence,
}

impl vector_files::VectorFile for SequenceFile {
    type Item = Sequence;
    fn header_problem(&self) -> Option<String> {
        (self.format_version != 1 || self.suite != "ssp-sequences")
            .then(|| "needs \"format_version\": 1 and \"suite\": \"ssp-sequences\"".into())
    }
    fn items(self) -> Vec<Sequence> {
        self.sequences
    }
    fn id(s: &Sequence) -> &str {
        &s.id
    }
    fn requirements(s: &Sequence) -> &[String] {
        &s.requirements
    }
    fn problem(s: &Sequence) -> Option<String> {
        if s.ops.is_empty() {
            return Some("has no operation".into());
        }
        if s.requirements.is_empty() {
            return Some("cites no requirement".into());
        }
        // The model reads `ms` as a valid timeout and `odd` as one the notes leave open: a
        // timeout in the wrong one would make it expect the wrong answer.
        s.ops.iter().find_map(|op| match op {
            Op::Invoke {
                timeout: Timeout::Ms(ms),
                ..
            } if !(ms.is_finite() && *ms > 0.0) => Some(format!("timeout ms {ms} is not positive")),
            Op::Invoke {
                timeout: Timeout::Odd(v),
                ..
            } if !(v.is_finite() && *v <= 0.0) => {
                Some(format!("timeout odd {v} is not 0 or negative"))
            }
            _ => None,
        })
    }
}

/// Every sequence of the `*.json` files of `dir` (sorted; none when `dir` does not exist),
/// each citing only IDs of `catalogue`.
pub fn load_dir(dir: &Path, catalogue: &Catalogue) -> Result<Vec<Loaded>, VectorError> {
    let loaded = vector_files::load::<SequenceFile>(dir, catalogue)?;
    Ok((loaded.into_iter())
        .map(|(file, sequence)| Loaded { file, sequence })
        .collect())
}
