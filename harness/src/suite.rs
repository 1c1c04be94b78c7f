//! Suites and checks: the generic plan the engine runs.
//!
//! A suite is a requirement catalogue plus checks. A check has an id, cites requirement IDs
//! and runs asynchronously against a target, yielding a [`Verdict`]. Golden vectors are one
//! kind of check ([`crate::vectors::runner::VectorCheck`]); scripted checks (PV-TR-1a here,
//! the SSP suite later) implement the same trait and plug into the same plan, report and
//! baseline.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::FutureExt as _;
use futures::future::BoxFuture;
use serde_json::json;

use crate::requirements::{Catalogue, CatalogueError};
use crate::target::Target;
use crate::transport::{Exchange, TransportKind};
use crate::vectors::loader::{LoadError, LoadedVector, SchemaValidator, load_dir};
use crate::vectors::runner::{StepSignature, VectorCheck};
use crate::verdict::{Verdict, Violation};

/// Where a check runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bindings {
    /// Once per listed transport the target offers and the run selects.
    Each(Vec<TransportKind>),
    /// Once, independent of transports.
    Once,
}

/// Everything a check may use while running.
#[derive(Clone)]
pub struct CheckCtx {
    /// The target.
    pub target: Arc<Target>,
    /// The transport of this run of the check (`None` for `Bindings::Once`).
    pub transport: Option<TransportKind>,
    /// Unique nonce of this run (`$run`).
    pub run_nonce: String,
}

/// What running a check produced.
#[derive(Debug, Clone)]
pub struct CheckOutcome {
    /// The verdict.
    pub verdict: Verdict,
    /// Every exchange made.
    pub exchanges: Vec<Exchange>,
    /// Per-step outcome signatures (vectors; compared across transports for PV-TR-1).
    pub steps: Vec<StepSignature>,
}

impl CheckOutcome {
    /// An outcome with only a verdict.
    pub fn verdict(verdict: Verdict) -> Self {
        Self {
            verdict,
            exchanges: Vec::new(),
            steps: Vec::new(),
        }
    }
}

/// One check of a suite.
pub trait Check: Send + Sync {
    /// Stable id (vector id, `PV-TR-1a/bindings`, …): the `--filter` key and baseline key.
    fn id(&self) -> &str;
    /// One line.
    fn title(&self) -> &str;
    /// Cited requirement IDs (first = primary).
    fn requirements(&self) -> &[String];
    /// Area for grouping (file area for vectors).
    fn area(&self) -> &str {
        ""
    }
    /// Run alone (no concurrent checks).
    fn exclusive(&self) -> bool {
        false
    }
    /// Where it runs.
    fn bindings(&self) -> Bindings;
    /// Whether its outcomes on the two transports must agree (PV-TR-1).
    fn compare_transports(&self) -> bool {
        false
    }
    /// Runs the check. Must not panic; every wait is bounded by the transports' timeouts.
    fn run<'a>(&'a self, ctx: &'a CheckCtx) -> BoxFuture<'a, CheckOutcome>;
}

/// A suite: catalogue + checks (+ the vectors, for `explain`).
pub struct Suite {
    /// Name (`parley`, `ssp`).
    pub name: String,
    /// Requirement catalogue.
    pub catalogue: Catalogue,
    /// Checks.
    pub checks: Vec<Arc<dyn Check>>,
    /// The golden vectors (also present as checks).
    pub vectors: Vec<LoadedVector>,
}

/// Why a suite could not be loaded (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// Catalogue problem.
    #[error(transparent)]
    Catalogue(#[from] CatalogueError),
    /// Vector problem.
    #[error(transparent)]
    Vectors(#[from] LoadError),
    /// SSP suite checks could not be built.
    #[error("ssp suite: {0}")]
    Ssp(String),
    /// Unknown suite name.
    #[error("unknown suite {0:?} (known: parley, ssp)")]
    Unknown(String),
}

/// Known suite names.
pub const SUITES: &[&str] = &["parley", "ssp"];

/// Default `vectors/` directory: `./vectors` when present, else the source tree's.
pub fn default_vectors_dir() -> PathBuf {
    let local = PathBuf::from("vectors");
    if local.join("requirements").is_dir() {
        return local;
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("vectors")
}

/// Loads one suite from `vectors_dir`.
pub fn load_suite(name: &str, vectors_dir: &Path) -> Result<Suite, SuiteError> {
    if !SUITES.contains(&name) {
        return Err(SuiteError::Unknown(name.to_string()));
    }
    let cat_path = vectors_dir
        .join("requirements")
        .join(format!("{name}.toml"));
    let catalogue = Catalogue::load(&cat_path)?;
    let schema = SchemaValidator::load(&vectors_dir.join("schemas").join("vector.schema.json"))?;
    let vectors = match name {
        "parley" => load_dir(&vectors_dir.join(name), Some(&schema), Some(&catalogue))?,
        _ => Vec::new(),
    };
    let mut checks: Vec<Arc<dyn Check>> = vectors
        .iter()
        .map(|lv| Arc::new(VectorCheck::new(lv.clone(), &catalogue)) as Arc<dyn Check>)
        .collect();
    if name == "parley" && catalogue.get("PV-TR-1a").is_some() {
        checks.push(Arc::new(BindingsOffered {
            requirements: vec!["PV-TR-1a".into()],
        }));
    }
    if name == "ssp" {
        // Scripted SSP checks (provider, consumer, validator vectors) plug in as `Check`s.
        let ssp = crate::ssp::suite::checks(vectors_dir, &catalogue)
            .map_err(|e| SuiteError::Ssp(format!("{}: {}", e.file, e.message)))?;
        checks.extend(ssp);
    }
    Ok(Suite {
        name: name.to_string(),
        catalogue,
        checks,
        vectors,
    })
}

/// PV-TR-1a: a Parley v1 server offers every operation on both bindings (manifest `operations`).
pub struct BindingsOffered {
    requirements: Vec<String>,
}

impl Check for BindingsOffered {
    fn id(&self) -> &str {
        "PV-TR-1a/bindings"
    }
    fn title(&self) -> &str {
        "every operation is offered on both HTTP and MCP"
    }
    fn requirements(&self) -> &[String] {
        &self.requirements
    }
    fn area(&self) -> &str {
        "transport"
    }
    fn bindings(&self) -> Bindings {
        Bindings::Once
    }
    fn run<'a>(&'a self, ctx: &'a CheckCtx) -> BoxFuture<'a, CheckOutcome> {
        async move {
            let missing = &ctx.target.manifest.missing_bindings;
            let verdict = if missing.is_empty() {
                Verdict::Pass
            } else {
                Verdict::Fail(Violation {
                    check: self.id().into(),
                    requirements: self.requirements.clone(),
                    step: None,
                    pointer: "/operations".into(),
                    expected: json!("every operation with a non-null http and mcp binding"),
                    observed: json!(missing),
                    message: format!(
                        "the manifest declares bindings as null: {}",
                        missing.join(", ")
                    ),
                    transcript: Vec::new(),
                })
            };
            CheckOutcome::verdict(verdict)
        }
        .boxed()
    }
}
