//! Expected-failure baselines: known failures of a target, each with a reason.
//!
//! A listed failure is reported as `expected_failure` (does not fail the run); a listed check
//! that passes is reported as `unexpected_pass`; an entry that matches no check at all is an
//! error, so the baseline cannot silently rot (rustls BoGo config).

use std::path::Path;

use globset::{Glob, GlobMatcher};
use serde::{Deserialize, Serialize};

use super::binding::Binding;

/// The baseline file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaselineFile {
    /// Must be 1.
    pub format_version: u32,
    /// Target the baseline was written for (informative).
    #[serde(default)]
    pub target: Option<String>,
    /// Entries.
    #[serde(default)]
    pub expected_failure: Vec<Entry>,
}

/// One known failure.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// Check id or glob (`envelope/body-501-*`, `PV-TR-1/…`).
    pub check: String,
    /// Restrict to one binding (`http`, `mcp`: one the suite's protocol declares).
    #[serde(default)]
    pub transport: Option<Binding>,
    /// Why it is expected to fail (required: a baseline without reasons is a blind spot).
    pub reason: String,
}

/// Why a baseline is unusable (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    /// File problem.
    #[error("baseline {path}: {message}")]
    Invalid {
        /// File.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// Entries that match no check of the selected suites.
    #[error("baseline entries match no check: {}", .0.join(", "))]
    Stale(Vec<String>),
    /// Entries restricted to a binding no selected protocol declares (a typo would otherwise
    /// never match, and its failure would go unexcused without a word).
    #[error("baseline entries name a binding no selected suite has: {} (known: {known})", .entries.join(", "))]
    UnknownBinding {
        /// `<check> on <binding>` per entry.
        entries: Vec<String>,
        /// The bindings the selected suites declare.
        known: String,
    },
}

/// A loaded baseline with compiled globs.
#[derive(Debug, Clone)]
pub struct Baseline {
    /// The file's entries.
    pub entries: Vec<Entry>,
    matchers: Vec<GlobMatcher>,
    /// Where it came from.
    pub path: String,
}

impl Baseline {
    /// Loads and validates a baseline file.
    pub fn load(path: &Path) -> Result<Self, BaselineError> {
        let shown = path.display().to_string();
        let err = |message: String| BaselineError::Invalid {
            path: shown.clone(),
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
        Self::parse(&text, &shown).map_err(err)
    }

    /// Parses and validates baseline text (`path` names it in messages).
    pub fn parse(text: &str, path: &str) -> Result<Self, String> {
        let file: BaselineFile = toml::from_str(text).map_err(|e| e.to_string())?;
        if file.format_version != 1 {
            return Err(format!(
                "format_version {} is not supported",
                file.format_version
            ));
        }
        Self::from_entries(file.expected_failure, path.to_string())
    }

    /// Builds a baseline from entries.
    pub fn from_entries(entries: Vec<Entry>, path: String) -> Result<Self, String> {
        let mut matchers = Vec::new();
        for e in &entries {
            if e.reason.trim().is_empty() {
                return Err(format!("entry {:?} has no reason", e.check));
            }
            matchers.push(
                Glob::new(&e.check)
                    .map_err(|x| format!("entry {:?}: {x}", e.check))?
                    .compile_matcher(),
            );
        }
        Ok(Self {
            entries,
            matchers,
            path,
        })
    }

    /// The entry covering a check on a transport, if any.
    pub fn lookup(&self, check: &str, transport: Option<Binding>) -> Option<&Entry> {
        self.entries
            .iter()
            .zip(&self.matchers)
            .find(|(e, m)| m.is_match(check) && (e.transport.is_none() || e.transport == transport))
            .map(|(e, _)| e)
    }

    /// Entries restricted to a binding not in `declared`, as `<check> on <binding>`.
    pub fn unknown_bindings(&self, declared: &[Binding]) -> Vec<String> {
        (self.entries.iter())
            .filter_map(|e| {
                e.transport
                    .filter(|b| !declared.contains(b))
                    .map(|b| (e, b))
            })
            .map(|(e, b)| format!("{} on {b}", e.check))
            .collect()
    }

    /// Entries that match none of `all_checks` (every check id of the selected suites, unfiltered).
    pub fn stale<'a>(&self, all_checks: impl Iterator<Item = &'a str> + Clone) -> Vec<String> {
        self.entries
            .iter()
            .zip(&self.matchers)
            .filter(|(_, m)| !all_checks.clone().any(|c| m.is_match(c)))
            .map(|(e, _)| e.check.clone())
            .collect()
    }
}
