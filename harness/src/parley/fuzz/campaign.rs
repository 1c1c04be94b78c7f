//! One black-box campaign: draw cases until the deadline, send them on the selected
//! bindings, judge every answer with the oracles, then check the target still answers and
//! reads back what it accepted. Findings are deduplicated by (operation, oracle, key) and
//! minimized (members of a post dropped while the same breach recurs).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use serde_json::{Value, json};

use super::cases::{self, Case, Knowledge};
use super::oracles::{self, Oracle, Outcome};
use crate::capability::fuzz::Found;
use crate::capability::fuzz::worth_retrying;
use crate::capability::transports;
use crate::engine::finding::{Finding, Source};
use crate::engine::target::Target;
use crate::parley::preflight::ParleyTarget;
use crate::parley::role::Role;
use crate::transport::{Auth, Exchange, McpRevision, Reply, TransportError, TransportKind};

pub use crate::capability::fuzz::Settings;

/// What a Parley campaign did and found (each finding with its hostile request).
pub type Outcomes = crate::capability::fuzz::Outcomes<Found<Case>>;

/// parley-v1.md PV-MF-2 / PV-EN-2: the body limit every server enforces (seed § enveloppe).
const BODY_MAX_CHARS: usize = 500;

/// What the generator may use, read from the manifest.
pub fn knowledge(part: &ParleyTarget) -> (Knowledge, BTreeSet<String>) {
    let raw = &part.manifest.raw;
    // PV-MF-2: the one limit that is not the server's to choose; the seed fixes 500 whatever
    // the manifest declares (a declared other value fails PV-MF-2 elsewhere).
    let body_max = BODY_MAX_CHARS;
    // PV-EN-3: the core kinds and every enabled profile's (`profiles[].kinds`).
    let mut kinds = crate::parley::manifest::listed(raw.get("kinds"), "name");
    for p in raw
        .get("profiles")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        kinds.extend(crate::parley::manifest::listed(p.get("kinds"), "name"));
    }
    let routes = (part.manifest.routes.0.iter())
        .filter_map(|(op, r)| {
            r.as_ref()
                .map(|r| (op.clone(), (r.method.clone(), r.path.clone())))
        })
        .collect();
    let tools = (part.manifest.tools.iter())
        .filter_map(|(op, t)| t.as_ref().map(|t| (op.clone(), t.clone())))
        .collect();
    let k = Knowledge {
        body_max,
        kinds,
        states: crate::parley::manifest::listed(raw.get("states"), "name"),
        threads: Vec::new(),
        routes,
        tools,
    };
    let declared = part.manifest.reasons();
    (k, declared)
}

/// Whether a request that got no answer is sent once more ([`worth_retrying`]); never an
/// oversized head (a server may drop it).
fn retryable(case: &Case, r: &Result<Reply, TransportError>) -> bool {
    let Err(e) = r else {
        return false;
    };
    let last = e.exchanges().last();
    let error = last
        .and_then(|x| x.error.clone())
        .unwrap_or_else(|| e.to_string());
    cases::pre_routing(case).is_none() && worth_retrying(last.and_then(|x| x.status), Some(&error))
}

struct Run<'a> {
    part: &'a ParleyTarget,
    auth: Auth,
    declared: BTreeSet<String>,
    revision: McpRevision,
    found: BTreeMap<(String, (Source, String)), Found<Case>>,
    accepted: Vec<(String, String)>,
    requests: u64,
}

type Sent = (
    Option<(Outcome, Vec<Finding>, Vec<Exchange>)>,
    Option<(Outcome, Vec<Finding>, Vec<Exchange>)>,
);

impl Run<'_> {
    async fn send(&mut self, case: &Case, transports: &[TransportKind]) -> Sent {
        let mut out: Sent = (None, None);
        if let (Some(req), true) = (&case.http, transports.contains(&TransportKind::Http)) {
            let mut r = self.part.http.raw_http(req, &self.auth).await;
            if retryable(case, &r) {
                self.requests += 1;
                r = self.part.http.raw_http(req, &self.auth).await;
            }
            out.0 = Some(self.judged(TransportKind::Http, case, r));
        }
        if let (Some(req), true) = (&case.mcp, transports.contains(&TransportKind::Mcp)) {
            let mut r = self.part.mcp.raw_mcp(req, &self.auth).await;
            if retryable(case, &r) {
                self.requests += 1;
                r = self.part.mcp.raw_mcp(req, &self.auth).await;
            }
            out.1 = Some(self.judged(TransportKind::Mcp, case, r));
        }
        out
    }

    fn judged(
        &mut self,
        kind: TransportKind,
        case: &Case,
        r: Result<Reply, TransportError>,
    ) -> (Outcome, Vec<Finding>, Vec<Exchange>) {
        let (outcome, breaches) =
            oracles::judge(kind, &r, &self.declared, cases::pre_routing(case));
        let exchanges = match &r {
            Ok(reply) => reply.exchanges.clone(),
            Err(e) => e.exchanges().to_vec(),
        };
        self.requests += exchanges.len() as u64;
        if let (Ok(reply), TransportKind::Http, "post") = (&r, kind, case.op)
            && (200..300).contains(&reply.http_status)
            && let Some(j) = &reply.json
            && let (Some(t), Some(m)) = (
                j.pointer("/thread/id").and_then(Value::as_str),
                j.pointer("/message/id").and_then(Value::as_str),
            )
        {
            self.accepted.push((t.to_string(), m.to_string()));
        }
        (outcome, breaches, exchanges)
    }

    fn comparable(&self, case: &Case) -> bool {
        // A duplicate member name: RFC 8259 §4 leaves its reading to each parser (the last
        // value, an error, a failure to parse), the notes fix none, and each binding's
        // parser may read it its own way; each answer is still judged on its own binding.
        let duplicate = (case.logical.as_ref()).is_some_and(|l| l.get("duplicate").is_some());
        case.logical.is_some()
            && !duplicate
            && case
                .mcp
                .as_ref()
                .is_some_and(|m| m.body_json.is_some() || self.revision == McpRevision::V2025_11_25)
    }

    fn record(
        &mut self,
        case: &Case,
        transport: Option<TransportKind>,
        breach: Finding,
        exchanges: Vec<Exchange>,
    ) {
        let key = (case.op.to_string(), breach.key());
        self.found.entry(key).or_insert_with(|| Found {
            finding: breach,
            op: case.op.to_string(),
            transport: transport.map(Into::into),
            mutation: case.mutation.clone(),
            exchanges,
            case: case.clone(),
        });
    }

    /// Every breach of one case (comparison included).
    async fn breaches(
        &mut self,
        case: &Case,
        k: &Knowledge,
        transports: &[TransportKind],
    ) -> Vec<(Option<TransportKind>, Finding, Vec<Exchange>)> {
        let (http, mcp) = self.send(case, transports).await;
        let mut all = Vec::new();
        // A post carried as JSON on MCP is the logical post itself (not a raw-text marker).
        let invalid = case.op == "post"
            && case.mcp.as_ref().is_some_and(|m| m.body_json.is_some())
            && case
                .logical
                .as_ref()
                .is_some_and(|a| cases::certainly_invalid(a, k));
        for (kind, sent) in [(TransportKind::Http, &http), (TransportKind::Mcp, &mcp)] {
            if let Some((Outcome::Success, _, ex)) = sent
                && invalid
            {
                let b = Oracle::InvalidRefused.breach(
                    format!("{kind} accepted"),
                    format!("{kind}: a post the envelope rules refuse was accepted"),
                );
                all.push((Some(kind), b, ex.clone()));
            }
        }
        if let (Some(h), Some(m)) = (&http, &mcp)
            && self.comparable(case)
            && let Some(b) = oracles::compare(&h.0, &m.0)
        {
            let ex = h.2.iter().chain(&m.2).cloned().collect();
            all.push((None, b, ex));
        }
        for (kind, sent) in [(TransportKind::Http, http), (TransportKind::Mcp, mcp)] {
            if let Some((_, bs, ex)) = sent {
                all.extend(bs.into_iter().map(|b| (Some(kind), b, ex.clone())));
            }
        }
        all
    }

    /// Drops the post's members one at a time while `target` still recurs.
    async fn minimize(
        &mut self,
        case: Case,
        k: &Knowledge,
        target: &Finding,
        transports: &[TransportKind],
    ) -> Case {
        let Some(Value::Object(args)) = case.logical.clone() else {
            return case;
        };
        if case.http.as_ref().is_none_or(|h| h.body_base64.is_none())
            || case.mcp.as_ref().is_none_or(|m| m.body_json.is_none())
        {
            return case;
        }
        let mut best = (case, args);
        for key in best.1.keys().cloned().collect::<Vec<_>>() {
            let mut smaller = best.1.clone();
            smaller.remove(&key);
            let candidate = cases::post_from_args(
                k,
                Value::Object(smaller.clone()),
                format!("{} (without `{key}`)", best.0.mutation),
            );
            let again = self.breaches(&candidate, k, transports).await;
            // The same breach: its oracle and what was observed (`Finding::key` without
            // rendering `observed` for every candidate).
            let same = |b: &Finding| b.source == target.source && b.observed == target.observed;
            if again.iter().any(|(_, b, _)| same(b)) {
                best = (candidate, smaller);
            }
        }
        best.0
    }
}

/// Runs a campaign against a pre-flighted Parley target.
pub async fn execute(target: &Target, settings: &Settings) -> Result<Outcomes, String> {
    let part = target
        .part::<ParleyTarget>()
        .ok_or("the Parley pre-flight did not run")?;
    let (mut k, declared) = knowledge(part);
    let auth = part.auth(Role::AgentA).unwrap_or(Auth::None);
    let mut run = Run {
        part,
        auth,
        declared,
        revision: target.info.mcp_revision,
        found: BTreeMap::new(),
        accepted: Vec::new(),
        requests: 0,
    };
    let transports: Vec<TransportKind> = transports::kinds(&settings.transports)
        .into_iter()
        .filter(|t| part.manifest.offers(*t))
        .collect();
    let mut rng = fastrand::Rng::with_seed(settings.seed);
    let started = Instant::now();
    let mut cases = 0u64;
    while started.elapsed() < settings.duration {
        let case = cases::next(&mut rng, &k);
        cases += 1;
        for (transport, breach, exchanges) in run.breaches(&case, &k, &transports).await {
            let key = (case.op.to_string(), breach.key());
            if run.found.contains_key(&key) {
                continue;
            }
            let small = run.minimize(case.clone(), &k, &breach, &transports).await;
            run.record(&small, transport, breach, exchanges);
        }
        for (t, _) in run.accepted.iter().rev().take(1) {
            if k.threads.len() < 64 && !k.threads.contains(t) {
                k.threads.push(t.clone());
            }
        }
    }
    let elapsed = started.elapsed();
    state_intact(&mut run).await;
    Ok(Outcomes {
        findings: run.found.into_values().collect(),
        cases,
        requests: run.requests,
        elapsed,
        seed: settings.seed,
        unsupported: Vec::new(),
    })
}

/// After the campaign: the manifest and `whoami` still answer, and every accepted post
/// (the last 20) reads back in its thread.
async fn state_intact(run: &mut Run<'_>) {
    let case = Case {
        op: "after",
        mutation: "read back after the campaign".into(),
        http: None,
        mcp: None,
        logical: None,
    };
    let http = run.part.http.clone();
    let mut checks: Vec<(String, Value)> = vec![
        ("get_manifest".into(), json!({})),
        ("whoami".into(), json!({})),
    ];
    let accepted: Vec<(String, String)> = run.accepted.iter().rev().take(20).cloned().collect();
    checks.extend(
        accepted
            .iter()
            .map(|(t, _)| ("read_thread".to_string(), json!({"thread": t}))),
    );
    for (i, (op, args)) in checks.iter().enumerate() {
        let r = http.call(op, args, &run.auth).await;
        run.requests += 1;
        let problem = match &r {
            Err(e) => Some(format!("{op} no longer answers: {e}")),
            Ok(reply) if reply.http_status != 200 => {
                Some(format!("{op} answered HTTP {}", reply.http_status))
            }
            Ok(reply) => {
                let wanted = i
                    .checked_sub(2)
                    .and_then(|j| accepted.get(j))
                    .map(|(_, m)| m);
                wanted
                    .filter(|m| !reply.text.contains(m.as_str()))
                    .map(|m| format!("accepted message {m} is missing from its thread"))
            }
        };
        if let Some(message) = problem {
            let exchanges = match &r {
                Ok(reply) => reply.exchanges.clone(),
                Err(e) => e.exchanges().to_vec(),
            };
            let key = if op == "read_thread" {
                "lost message".to_string()
            } else {
                op.clone()
            };
            let b = Oracle::StateIntact.breach(key, message);
            run.record(&case, Some(TransportKind::Http), b, exchanges);
        }
    }
}
