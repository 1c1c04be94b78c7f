//! `conform fuzz`: a black-box, structure-aware fuzzer of any Parley server.
//!
//! - [`cases`]: mutations of valid requests (dropped, retyped, duplicated members, boundary
//!   lengths, Unicode edges, huge numbers, deep nesting, invalid UTF-8, truncated bodies,
//!   content types, query/path conflicts, odd JSON-RPC, oversized heads);
//! - [`oracles`]: what every answer must satisfy (no 5xx, an answer, the refusal shape with a
//!   declared reason, the same outcome on both bindings, no leaked internals);
//! - [`campaign`]: the loop, deduplication, minimization and the final state check.
//!
//! Each oracle is an ordinary [`Check`] (`fuzz/<oracle>`, citing its requirement IDs), so a
//! campaign's findings land in the usual reports and exit codes. The checks share one
//! campaign, run once by whichever check starts first.

pub mod campaign;
pub mod cases;
pub mod cli;
pub mod oracles;
pub mod promote;

use std::sync::Arc;

use futures::FutureExt as _;
use futures::future::BoxFuture;
use serde_json::json;
use tokio::sync::OnceCell;

use crate::engine::check::{Bindings, Check, CheckCtx, CheckOutcome};
use crate::engine::verdict::{Verdict, Violation};
use campaign::{Outcomes, Settings};
use oracles::Oracle;

/// One campaign shared by the oracle checks.
#[derive(Debug)]
pub struct Campaign {
    settings: Settings,
    outcomes: OnceCell<Result<Outcomes, String>>,
}

impl Campaign {
    /// A campaign that runs on first use.
    pub fn new(settings: Settings) -> Arc<Self> {
        Arc::new(Self {
            settings,
            outcomes: OnceCell::new(),
        })
    }

    /// Runs the campaign against `ctx`'s target (once) and returns what it found.
    pub async fn outcomes(&self, ctx: &CheckCtx) -> &Result<Outcomes, String> {
        self.outcomes
            .get_or_init(|| campaign::execute(&ctx.target, &self.settings))
            .await
    }

    /// The outcomes, once run.
    pub fn finished(&self) -> Option<&Result<Outcomes, String>> {
        self.outcomes.get()
    }
}

/// The check of one oracle over the shared campaign.
pub struct OracleCheck {
    oracle: Oracle,
    id: String,
    requirements: Vec<String>,
    campaign: Arc<Campaign>,
}

impl OracleCheck {
    /// One check per oracle over `campaign`.
    pub fn all(campaign: &Arc<Campaign>) -> Vec<Arc<dyn Check>> {
        Oracle::ALL
            .iter()
            .map(|&oracle| {
                Arc::new(OracleCheck {
                    oracle,
                    id: format!("fuzz/{}", oracle.name()),
                    requirements: oracle
                        .requirements()
                        .iter()
                        .map(|r| (*r).to_string())
                        .collect(),
                    campaign: campaign.clone(),
                }) as Arc<dyn Check>
            })
            .collect()
    }
}

impl Check for OracleCheck {
    fn id(&self) -> &str {
        &self.id
    }

    fn title(&self) -> &str {
        self.oracle.title()
    }

    fn requirements(&self) -> &[String] {
        &self.requirements
    }

    fn area(&self) -> &str {
        "fuzz"
    }

    fn bindings(&self) -> Bindings {
        Bindings::Once
    }

    fn run<'a>(&'a self, ctx: &'a CheckCtx) -> BoxFuture<'a, CheckOutcome> {
        async move {
            let outcomes = match self.campaign.outcomes(ctx).await {
                Ok(o) => o,
                Err(e) => {
                    return CheckOutcome::verdict(Verdict::HarnessError { message: e.clone() });
                }
            };
            let mine: Vec<_> = (outcomes.findings.iter())
                .filter(|f| f.breach.oracle == self.oracle)
                .collect();
            let Some(first) = mine.first() else {
                return CheckOutcome::verdict(Verdict::Pass);
            };
            let observed: Vec<String> = mine
                .iter()
                .map(|f| {
                    let on = f.transport.map_or("both", |t| t.as_str());
                    format!("{} [{on}] {}: {}", f.op, f.mutation, f.breach.message)
                })
                .collect();
            let exchanges: Vec<_> = mine.iter().flat_map(|f| f.exchanges.clone()).collect();
            let violation = Violation {
                check: self.id.clone(),
                requirements: self.requirements.clone(),
                step: None,
                pointer: String::new(),
                expected: json!(self.oracle.title()),
                observed: json!(observed),
                message: format!(
                    "{} distinct finding(s) (seed {}); first: {} {}: {}",
                    mine.len(),
                    outcomes.seed,
                    first.op,
                    first.mutation,
                    first.breach.message
                ),
                transcript: first.exchanges.clone(),
            };
            CheckOutcome {
                verdict: Verdict::Fail(violation),
                exchanges,
                steps: Vec::new(),
            }
        }
        .boxed()
    }
}
