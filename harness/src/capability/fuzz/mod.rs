//! The protocol-free half of `conform fuzz`: a protocol brings a [`Campaign`] (its hostile
//! cases and oracles, `parley/fuzz/`, `ssp/fuzz/`) through [`Fuzzable`]; here each
//! oracle becomes an
//! ordinary [`Check`] over the campaign, which runs once, on the first check that asks, so
//! its findings land in the usual reports, matrix and exit codes. [`cli`] is the command.

pub mod cli;

use std::path::Path;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use futures::FutureExt as _;
use futures::future::BoxFuture;
use regex::Regex;
use serde_json::json;
use tokio::sync::OnceCell;

use crate::engine::binding::Binding;
use crate::engine::check::{Bindings, Check, CheckCtx, CheckOutcome};
use crate::engine::finding::{self as engine_finding, Finding, Source};
use crate::engine::protocol::Protocol;
use crate::engine::target::Target;
use crate::engine::verdict::Verdict;
use crate::transport::Exchange;

/// How long and with what seed.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Wall time of the sending phase.
    pub duration: Duration,
    /// RNG seed (printed; the same seed replays the same cases).
    pub seed: u64,
    /// Bindings to fuzz (empty: every one; a protocol with one binding ignores it).
    pub transports: Vec<Binding>,
}

/// One oracle: a property every answer to a hostile request must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Oracle {
    /// Check id suffix.
    pub name: &'static str,
    /// One line for the report.
    pub title: &'static str,
    /// Requirement IDs cited (first = primary).
    pub requirements: &'static [&'static str],
    /// Its rule is a SHOULD: a finding is a warning, not a failure (e.g. PV-TR-6's shape of
    /// a refusal raised before routing).
    pub warns: bool,
}

impl Oracle {
    /// A breach of this oracle on one answer: a [`Finding`] of the oracle on its rules, what
    /// was observed being `key`, what tells it apart (status, reason, code…): a campaign
    /// keeps one per (operation, [`Finding::key`]).
    pub fn breach(self, key: impl Into<String>, message: impl Into<String>) -> Finding {
        let (expected, observed) = (json!(self.title), json!(key.into()));
        let source = Source::Fuzz(self.name);
        *Finding::broke(source, self.requirements, message, expected, observed)
    }
}

/// One distinct finding of a campaign and the case that showed it: the oracle's
/// [`Finding`] (its source names the oracle; its rules, message, and the key observed), and
/// where it was seen. `C` is the hostile request itself, for a protocol that keeps it
/// (Parley, for `--promote`); the report's checks need none.
#[derive(Debug, Clone)]
pub struct Found<C = ()> {
    /// What the oracle found.
    pub finding: Finding,
    /// Operation of the case.
    pub op: String,
    /// Binding it was seen on (`None`: a comparison, or the check after the campaign).
    pub transport: Option<Binding>,
    /// The (minimized) mutation.
    pub mutation: String,
    /// The exchanges that show it.
    pub exchanges: Vec<Exchange>,
    /// The hostile request.
    pub case: C,
}

impl<C> Found<C> {
    /// The name of the oracle it broke.
    pub fn oracle(&self) -> &'static str {
        self.finding.source.oracle().unwrap_or_default()
    }

    /// The same finding without its hostile request.
    pub fn without_case(&self) -> Found {
        Found {
            finding: self.finding.clone(),
            op: self.op.clone(),
            transport: self.transport,
            mutation: self.mutation.clone(),
            exchanges: self.exchanges.clone(),
            case: (),
        }
    }
}

/// What a campaign did and found (`F`: its findings; a protocol may keep its hostile
/// requests with them, e.g. for `--promote`).
#[derive(Debug, Clone)]
pub struct Outcomes<F = Found> {
    /// Distinct findings, in discovery order.
    pub findings: Vec<F>,
    /// Cases drawn.
    pub cases: u64,
    /// HTTP requests sent.
    pub requests: u64,
    /// Wall time of the sending phase.
    pub elapsed: Duration,
    /// The seed.
    pub seed: u64,
    /// Oracles the campaign could not judge on this target, and why (their checks are
    /// `unsupported`, never a pass).
    pub unsupported: Vec<(&'static str, String)>,
}

impl<F> Outcomes<F> {
    /// Requests per second of the sending phase.
    pub fn rate(&self) -> f64 {
        self.requests as f64 / self.elapsed.as_secs_f64().max(1e-3)
    }

    /// The same outcomes with each finding mapped by `f`.
    pub fn map<G>(&self, f: impl FnMut(&F) -> G) -> Outcomes<G> {
        Outcomes {
            findings: self.findings.iter().map(f).collect(),
            cases: self.cases,
            requests: self.requests,
            elapsed: self.elapsed,
            seed: self.seed,
            unsupported: self.unsupported.clone(),
        }
    }
}

/// Internals that must not reach a client: stack traces, panics, SQL, file paths.
static LEAK: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(panicked at|stack backtrace|traceback \(most recent|exception in thread|\bat [a-z_]+(::[a-z_]+){2,}|\.rs:\d+:\d+|sqlite_[a-z]+|\bselect\s+\S+\s+from\s|\binsert\s+into\s|/home/[a-z]|/root/|/usr/src/|\.cargo/registry)",
    )
    .ok()
});

/// The first internal detail `text` shows (the no-leak oracle of every protocol).
pub fn leaked(text: &str) -> Option<&str> {
    LEAK.as_ref()?.find(text).map(|m| m.as_str())
}

/// Whether a hostile request is sent once more: only when no response came at all
/// (`status` `None`; an answer over the harness's limits did come) and not for a timeout
/// (that is the finding). HTTP lets a server close a kept-alive connection at any time (RFC
/// 9112 §9.3): a pooled connection closed under the request is a race, not a finding; the
/// failed connection has left the pool. Both campaigns judge with this one rule.
pub fn worth_retrying(status: Option<u16>, error: Option<&str>) -> bool {
    status.is_none() && !error.is_some_and(|e| e.contains("timeout") || e.contains("timed out"))
}

/// A protocol with a black-box fuzz campaign (`conform fuzz`); its oracles become checks of
/// the fuzz report.
pub trait Fuzzable: Protocol {
    /// The campaign with `settings`.
    fn campaign(&self, settings: &Settings) -> Arc<dyn Campaign>;
}

/// A protocol's black-box campaign against one target.
pub trait Campaign: Send + Sync {
    /// Prefix of its checks' ids (`fuzz` → `fuzz/no-5xx`).
    fn prefix(&self) -> &'static str;
    /// Its oracles, in report order.
    fn oracles(&self) -> &'static [Oracle];
    /// Sends the hostile cases until the deadline and judges every answer (called once).
    fn execute<'a>(&'a self, target: &'a Target) -> BoxFuture<'a, Result<Outcomes, String>>;
    /// `--promote DIR`: writes the findings as golden vectors; what it wrote, in words
    /// (`None`: this protocol has no vector format for them).
    fn promote(&self, _dir: &Path) -> Result<Option<String>, String> {
        Ok(None)
    }
}

/// A campaign and its outcomes, shared by its oracle checks.
pub struct Shared {
    campaign: Arc<dyn Campaign>,
    outcomes: OnceCell<Result<Outcomes, String>>,
}

impl Shared {
    /// `campaign`, not run yet.
    pub fn new(campaign: Arc<dyn Campaign>) -> Arc<Self> {
        Arc::new(Self {
            campaign,
            outcomes: OnceCell::new(),
        })
    }

    /// The campaign.
    pub fn campaign(&self) -> &Arc<dyn Campaign> {
        &self.campaign
    }

    /// Runs the campaign against `target` (once) and returns what it found.
    pub async fn outcomes(&self, target: &Target) -> &Result<Outcomes, String> {
        self.outcomes
            .get_or_init(|| self.campaign.execute(target))
            .await
    }

    /// The outcomes, once run.
    pub fn finished(&self) -> Option<&Result<Outcomes, String>> {
        self.outcomes.get()
    }

    /// One check per oracle of the campaign.
    pub fn checks(self: &Arc<Self>) -> Vec<Arc<dyn Check>> {
        let prefix = self.campaign.prefix();
        (self.campaign.oracles().iter())
            .map(|&oracle| {
                Arc::new(OracleCheck {
                    oracle,
                    id: format!("{prefix}/{}", oracle.name),
                    requirements: oracle.requirements.iter().map(|r| (*r).into()).collect(),
                    shared: self.clone(),
                }) as Arc<dyn Check>
            })
            .collect()
    }
}

/// The check of one oracle over a shared campaign: fails with every distinct finding of
/// that oracle.
struct OracleCheck {
    oracle: Oracle,
    id: String,
    requirements: Vec<String>,
    shared: Arc<Shared>,
}

impl Check for OracleCheck {
    fn id(&self) -> &str {
        &self.id
    }
    fn title(&self) -> &str {
        self.oracle.title
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
            let outcomes = match self.shared.outcomes(&ctx.target).await {
                Ok(o) => o,
                Err(e) => {
                    return CheckOutcome::verdict(Verdict::HarnessError { message: e.clone() });
                }
            };
            if let Some((_, reason)) =
                (outcomes.unsupported.iter()).find(|(o, _)| *o == self.oracle.name)
            {
                return CheckOutcome::verdict(Verdict::not_offered(reason.clone()));
            }
            let mine: Vec<&Found> = (outcomes.findings.iter())
                .filter(|f| f.oracle() == self.oracle.name)
                .collect();
            let Some(first) = mine.first() else {
                // Every request of the campaign was judged by this oracle: its evidence.
                let mut pass = CheckOutcome::verdict(Verdict::Pass);
                pass.unkept = outcomes.requests;
                return pass;
            };
            self.failure(&mine, first, outcomes.seed)
        }
        .boxed()
    }
}

impl OracleCheck {
    fn failure(&self, mine: &[&Found], first: &Found, seed: u64) -> CheckOutcome {
        let observed: Vec<String> = mine
            .iter()
            .map(|f| {
                let on = f.transport.map_or("both", |t| t.as_str());
                format!("{} [{on}] {}: {}", f.op, f.mutation, f.finding.message)
            })
            .collect();
        let message = format!(
            "{} distinct finding(s) (seed {seed}); first: {} {}: {}",
            mine.len(),
            first.op,
            first.mutation,
            first.finding.message
        );
        let (expected, observed) = (json!(self.oracle.title), json!(observed));
        // A SHOULD oracle (a refusal's shape before routing) warns.
        let f = if self.oracle.warns {
            Finding::warn("", expected, observed, message)
        } else {
            Finding::fail("", expected, observed, message)
        };
        let f = f.on(&self.requirements).by(Source::Fuzz(self.oracle.name));
        let reqs = &self.requirements;
        CheckOutcome {
            verdict: engine_finding::found(&self.id, reqs, true, f, &first.exchanges),
            exchanges: mine.iter().flat_map(|f| f.exchanges.clone()).collect(),
            steps: Vec::new(),
            unkept: 0,
        }
    }
}
