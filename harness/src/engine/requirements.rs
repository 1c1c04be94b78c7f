//! The requirement catalogues (`vectors/requirements/*.toml`).
//!
//! Every check cites IDs from here; coverage is *derived* from the checks that cite an ID,
//! never declared, so the matrix cannot claim coverage that does not exist.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Requirement level (RFC 2119 words; `REC` = recommendation of the design notes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Level {
    /// Absolute requirement: a violation fails the run.
    #[serde(rename = "MUST")]
    Must,
    /// Recommended: a violation is a warning.
    #[serde(rename = "SHOULD")]
    Should,
    /// Optional behaviour: a violation is a warning.
    #[serde(rename = "MAY")]
    May,
    /// The design notes' strict reading of a rule the seed leaves open (`ssp.md`: "REC = our
    /// strict reading"). The harness's default profile is the strict one, so a violation
    /// fails the run like a MUST.
    #[serde(rename = "REC")]
    Rec,
}

impl Level {
    /// Whether a violation of a rule at this level fails the run.
    pub fn is_required(self) -> bool {
        matches!(self, Self::Must | Self::Rec)
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Must => "MUST",
            Self::Should => "SHOULD",
            Self::May => "MAY",
            Self::Rec => "REC",
        })
    }
}

/// How a requirement is checked (informative; shown by `conform explain`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Method {
    /// Over HTTP exchanges.
    #[serde(rename = "HTTP")]
    Http,
    /// By validating documents.
    #[serde(rename = "VAL")]
    Val,
    /// By consistency between answers.
    #[serde(rename = "CONS")]
    Cons,
    /// Over MCP exchanges.
    #[serde(rename = "MCP")]
    Mcp,
}

impl fmt::Display for Method {
    /// The catalogue's own spelling (`HTTP`, `VAL`, `CONS`, `MCP`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Http => "HTTP",
            Self::Val => "VAL",
            Self::Cons => "CONS",
            Self::Mcp => "MCP",
        })
    }
}

/// One row of a catalogue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    /// Stable ID (`PV-ST-4`, `SSP-INV-3`).
    pub id: String,
    /// Level.
    pub level: Level,
    /// Area of the design note (`envelope`, `state`, …).
    pub area: String,
    /// The rule in one sentence.
    pub rule: String,
    /// Where it comes from (design/seed section).
    pub source: String,
    /// Quote of the seed, when it has one.
    #[serde(default)]
    pub seed_text: Option<String>,
    /// How it is checked.
    #[serde(default)]
    pub method: Option<Method>,
    /// Names of non-vector checks that also cover it (e.g. `PV-TR-1/*`).
    #[serde(default)]
    pub checks: Vec<String>,
}

/// A catalogue file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogueFile {
    /// Must be 1.
    pub format_version: u32,
    /// Suite name (`parley`, `ssp`).
    pub suite: String,
    /// The rows.
    #[serde(default, rename = "requirement")]
    pub requirements: Vec<Requirement>,
}

/// Why a catalogue could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum CatalogueError {
    /// File unreadable.
    #[error("{path}: {source}")]
    Io {
        /// File.
        path: PathBuf,
        /// OS error.
        source: std::io::Error,
    },
    /// TOML invalid or unknown fields.
    #[error("{path}: {source}")]
    Parse {
        /// File.
        path: PathBuf,
        /// Parser error.
        source: Box<toml::de::Error>,
    },
    /// Semantic problem (version, duplicate ID).
    #[error("{path}: {message}")]
    Invalid {
        /// File.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// The requirements of one suite, by ID.
#[derive(Debug, Clone, Default)]
pub struct Catalogue {
    /// Suite name.
    pub suite: String,
    /// Rows in file order.
    pub requirements: Vec<Requirement>,
    index: BTreeMap<String, usize>,
}

impl Catalogue {
    /// Builds a catalogue from rows (rejects duplicates).
    pub fn new(suite: impl Into<String>, requirements: Vec<Requirement>) -> Result<Self, String> {
        let mut index = BTreeMap::new();
        for (i, r) in requirements.iter().enumerate() {
            if index.insert(r.id.clone(), i).is_some() {
                return Err(format!("duplicate requirement id {}", r.id));
            }
        }
        Ok(Self {
            suite: suite.into(),
            requirements,
            index,
        })
    }

    /// Loads `<dir>/<suite>.toml`.
    pub fn load(path: &Path) -> Result<Self, CatalogueError> {
        let text = std::fs::read_to_string(path).map_err(|source| CatalogueError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let file: CatalogueFile =
            toml::from_str(&text).map_err(|source| CatalogueError::Parse {
                path: path.to_path_buf(),
                source: Box::new(source),
            })?;
        if file.format_version != 1 {
            return Err(CatalogueError::Invalid {
                path: path.to_path_buf(),
                message: format!(
                    "format_version {} is not supported (expected 1)",
                    file.format_version
                ),
            });
        }
        Self::new(file.suite, file.requirements).map_err(|message| CatalogueError::Invalid {
            path: path.to_path_buf(),
            message,
        })
    }

    /// Looks an ID up.
    pub fn get(&self, id: &str) -> Option<&Requirement> {
        self.index.get(id).map(|&i| &self.requirements[i])
    }

    /// True when any of `ids` is a MUST: a violation of the check then fails the run.
    pub fn any_required<S: AsRef<str>>(&self, ids: &[S]) -> bool {
        ids.iter()
            .any(|id| self.get(id.as_ref()).is_some_and(|r| r.level.is_required()))
    }
}
