//! Parley's campaign of `conform fuzz`: a black-box, structure-aware fuzzer of any Parley
//! server (the command, the checks and the reports are `capability::fuzz`'s).
//!
//! - [`cases`]: mutations of valid requests (dropped, retyped, duplicated members, boundary
//!   lengths, Unicode edges, huge numbers, deep nesting, invalid UTF-8, truncated bodies,
//!   content types, query/path conflicts, odd JSON-RPC, oversized heads);
//! - [`oracles`]: what every answer must satisfy (no 5xx, an answer, the refusal shape with a
//!   declared reason, the same outcome on both bindings, no leaked internals);
//! - [`campaign`]: the loop, deduplication, minimization and the final state check;
//! - [`promote`]: findings as golden vectors (`--promote`).
//!
//! Each oracle is an ordinary check `fuzz/<oracle>` citing its requirement IDs.

pub mod campaign;
pub mod cases;
pub mod oracles;
pub mod promote;

use std::path::Path;
use std::sync::OnceLock;

use futures::FutureExt as _;
use futures::future::BoxFuture;

use crate::capability::fuzz::{self, Campaign, Fuzzable, Settings};
use crate::engine::target::Target;
use crate::parley::protocol::Parley;
use campaign::Outcomes;
use oracles::Oracle;

/// The oracles as the engine reports them (`fuzz/<name>`).
static ORACLES: [fuzz::Oracle; 8] = [
    Oracle::NoServerError.spec(),
    Oracle::Answers.spec(),
    Oracle::RefusalShape.spec(),
    Oracle::BindingsAgree.spec(),
    Oracle::StateIntact.spec(),
    Oracle::NoLeak.spec(),
    Oracle::InvalidRefused.spec(),
    Oracle::TransportRefusal.spec(),
];

/// One Parley campaign; keeps its own outcomes (hostile requests included) for `--promote`.
#[derive(Debug)]
pub struct ParleyCampaign {
    settings: Settings,
    outcomes: OnceLock<Outcomes>,
}

impl ParleyCampaign {
    /// A campaign with `settings`, not run yet.
    pub fn new(settings: Settings) -> Self {
        Self {
            settings,
            outcomes: OnceLock::new(),
        }
    }

    /// Parley's own outcomes, once run (each finding with its hostile request).
    pub fn outcomes(&self) -> Option<&Outcomes> {
        self.outcomes.get()
    }
}

impl fuzz::Campaign for ParleyCampaign {
    fn prefix(&self) -> &'static str {
        "fuzz"
    }

    fn oracles(&self) -> &'static [fuzz::Oracle] {
        &ORACLES
    }

    fn execute<'a>(&'a self, target: &'a Target) -> BoxFuture<'a, Result<fuzz::Outcomes, String>> {
        async move {
            let o = campaign::execute(target, &self.settings).await?;
            let general = o.map(fuzz::Found::without_case);
            // Set once: the engine runs a campaign once.
            let _ = self.outcomes.set(o);
            Ok(general)
        }
        .boxed()
    }

    fn promote(&self, dir: &Path) -> Result<Option<String>, String> {
        let Some(o) = self.outcomes.get() else {
            return Ok(None);
        };
        let Some(file) = promote::vector_file(&o.findings, o.seed) else {
            return Ok(Some(
                "nothing to promote: no finding with a request of its own".into(),
            ));
        };
        let name = format!("fuzz-seed-{}.json", o.seed);
        let path = crate::capability::command::write_json(dir, &name, &file)?;
        let n = file["vectors"].as_array().map_or(0, Vec::len);
        Ok(Some(format!(
            "promoted {n} finding(s) to {}",
            path.display()
        )))
    }
}

impl Fuzzable for Parley {
    fn campaign(&self, settings: &Settings) -> std::sync::Arc<dyn Campaign> {
        std::sync::Arc::new(ParleyCampaign::new(settings.clone()))
    }
}
