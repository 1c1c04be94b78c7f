//! The requirement catalogue behind `conform/spec-lookup`.
//!
//! Embedded from `vectors/requirements/{ssp,parley}.toml` (the project's catalogue, the same rows the
//! harness cites), so the skill answers with the exact rule text the suite checks.

use std::collections::BTreeMap;

use serde::Deserialize;

/// The SSP catalogue file, embedded at build time.
const SSP_TOML: &str = include_str!("../../../vectors/requirements/ssp.toml");
/// The Parley catalogue file, embedded at build time.
const PARLEY_TOML: &str = include_str!("../../../vectors/requirements/parley.toml");

/// One requirement row (only the members the skill serves; others are ignored).
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Requirement {
    /// Stable ID (`SSP-INV-3`).
    pub id: String,
    /// MUST | SHOULD | MAY | REC.
    pub level: String,
    /// The rule, one English sentence.
    pub rule: String,
    /// Seed / design sections.
    #[serde(default)]
    pub source: String,
    /// Verbatim seed sentence, when there is one.
    #[serde(default)]
    pub seed_text: Option<String>,
}

#[derive(Deserialize)]
struct File {
    #[serde(default)]
    requirement: Vec<Requirement>,
}

/// Requirement rows by ID.
#[derive(Debug, Clone, Default)]
pub struct Catalogue {
    rows: BTreeMap<String, Requirement>,
}

impl Catalogue {
    /// Parses the embedded catalogue files.
    pub fn load() -> Result<Self, String> {
        let mut rows = BTreeMap::new();
        for (name, text) in [("ssp.toml", SSP_TOML), ("parley.toml", PARLEY_TOML)] {
            let f: File = toml::from_str(text).map_err(|e| format!("{name}: {e}"))?;
            for r in f.requirement {
                rows.insert(r.id.clone(), r);
            }
        }
        if rows.is_empty() {
            return Err("requirement catalogue is empty".into());
        }
        Ok(Self { rows })
    }

    /// The row for `id`, if any.
    pub fn get(&self, id: &str) -> Option<&Requirement> {
        self.rows.get(id)
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

#[cfg(test)]
#[expect(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;

    #[test]
    fn both_catalogues_load() {
        let c = Catalogue::load().unwrap();
        assert_eq!(c.get("SSP-INV-3").unwrap().level, "MUST");
        assert!(c.get("PV-TR-1a").is_some());
        assert!(c.get("SSP-NOPE-1").is_none());
        assert!(c.len() > 50);
    }
}
