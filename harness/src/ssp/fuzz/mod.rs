//! SSP's campaign of `conform fuzz` (issue 11 item 2): a black-box, structure-aware fuzzer
//! of any SSP provider, reached through the fixture roles and credentials of the profile's
//! `[ssp]` table (the reference's demo profile when spawned).
//!
//! - [`cases`]: hostile requests drawn from valid ones (discovery, descriptors, invocation
//!   bodies, execution ids, credentials, methods, heads);
//! - [`oracles`]: what every answer must satisfy.
//!
//! The loop, the deduplication by (operation, oracle, key) and the check after the campaign
//! are here; each oracle is an ordinary check `ssp-fuzz/<oracle>` (`capability::fuzz`).

pub mod cases;
pub mod oracles;
pub mod promote;
pub mod send;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Instant;

use futures::FutureExt as _;
use futures::future::BoxFuture;
use serde_json::Value;

use crate::capability::fuzz::{self, Campaign, Found, Fuzzable, Outcomes, Settings};
use crate::engine::finding::{Finding, Source};
use crate::engine::target::Target;
use crate::ssp::protocol::Ssp;
use crate::ssp::provider::env::{Env, Fixture};
use crate::ssp::provider::profile::FixtureRole;
use crate::ssp::types::AuthType;
use crate::transport::Exchange;
use cases::{Case, Invocable, Knowledge};
pub use send::send_case;

/// Fixture roles whose skills the campaign invokes (the first that resolves is required;
/// the protected ones feed the credential cases).
const ROLES: [FixtureRole; 3] = [
    FixtureRole::Instant,
    FixtureRole::AuthApiKey,
    FixtureRole::AuthOauth2,
];

/// One SSP campaign; keeps its findings with their hostile requests, and what the
/// generator knew of the target, for `--promote`.
#[derive(Debug)]
pub struct SspCampaign {
    settings: Settings,
    kept: OnceLock<Kept>,
}

/// A finished campaign's findings with their cases (`None`: the check after the campaign).
pub type KeptFound = Found<Option<Case>>;

/// What `--promote` needs of a finished campaign.
#[derive(Debug, Clone)]
pub struct Kept {
    /// The findings, with their cases.
    pub findings: Vec<KeptFound>,
    /// What the generator knew (to name URLs, bodies and credentials by fixture role).
    pub knowledge: Knowledge,
    /// The target's origin.
    pub base: String,
    /// The seed.
    pub seed: u64,
    /// The profile's secrets, never written into a promoted file.
    pub secrets: Vec<String>,
}

impl SspCampaign {
    /// A campaign with `settings`.
    pub fn new(settings: Settings) -> Self {
        Self {
            settings,
            kept: OnceLock::new(),
        }
    }
}

impl Campaign for SspCampaign {
    fn prefix(&self) -> &'static str {
        "ssp-fuzz"
    }

    fn oracles(&self) -> &'static [fuzz::Oracle] {
        &oracles::ALL
    }

    fn execute<'a>(&'a self, target: &'a Target) -> BoxFuture<'a, Result<Outcomes, String>> {
        async move {
            let (o, kept) = execute(target, &self.settings).await?;
            // Set once: the engine runs a campaign once.
            let _ = self.kept.set(kept);
            Ok(o)
        }
        .boxed()
    }

    fn promote(&self, dir: &Path) -> Result<Option<String>, String> {
        let Some(kept) = self.kept.get() else {
            return Ok(None);
        };
        let Some(file) = promote::vector_file(kept) else {
            return Ok(Some(
                "ssp-fuzz: nothing to promote: no finding with a request of its own".into(),
            ));
        };
        let name = format!("ssp-fuzz-seed-{}.json", kept.seed);
        let path = crate::capability::command::write_json(dir, &name, &file)?;
        Ok(Some(format!(
            "ssp-fuzz: promoted {} finding(s) to {} (copy it into vectors/ssp/requests/)",
            file.vectors.len(),
            path.display()
        )))
    }
}

fn invocable(env: &Env, f: &Fixture) -> Invocable {
    let e = &f.descriptor.endpoint;
    Invocable {
        role: f.role,
        url: e.url.clone(),
        method: e.method.as_str().to_string(),
        skill_id: f.descriptor.id.clone(),
        request: env.request(&f.descriptor.id, &f.inputs, None),
        cred: f.cred.clone(),
        templates: [
            (cases::Template::StatusUrl, &e.status_url),
            (cases::Template::ResultUrl, &e.result_url),
        ]
        .into_iter()
        .filter_map(|(which, t)| Some((which, t.clone()?)))
        .collect(),
        protected: f.descriptor.auth.kind != AuthType::None,
    }
}

/// What the generator may use: the index's descriptors and the profile's fixtures.
async fn knowledge(env: &mut Env) -> Knowledge {
    let well_known = env.url(env.profile.well_known_path());
    // Only descriptors the target serves itself: hostile requests go nowhere else.
    let descriptors = match env.index("", &crate::ssp::provider::env::Cred::None).await {
        Ok(i) => (i.skills.iter())
            .map(|s| s.descriptor_url.clone())
            .filter(|u| env.on_target(u) || !u.contains("://"))
            .map(|u| env.url(&u))
            .collect(),
        Err(_) => Vec::new(),
    };
    let mut skills = Vec::new();
    for role in ROLES {
        if let Ok(f) = env.fixture(role).await
            && env.on_target(&f.descriptor.endpoint.url)
        {
            skills.push(invocable(env, &f));
        }
    }
    Knowledge {
        well_known,
        descriptors,
        skills,
        executions: Vec::new(),
    }
}

struct Run {
    found: BTreeMap<(String, (Source, String)), KeptFound>,
    requests: u64,
}

impl Run {
    fn record(
        &mut self,
        op: &str,
        mutation: &str,
        b: Finding,
        exchanges: Vec<Exchange>,
        case: Option<&Case>,
    ) {
        let key = (op.to_string(), b.key());
        self.found.entry(key).or_insert_with(|| Found {
            finding: b,
            op: op.to_string(),
            transport: Some(crate::capability::transports::HTTP),
            mutation: mutation.to_string(),
            exchanges,
            case: case.cloned(),
        });
    }

    /// Sends one case, judges it, and returns the execution id it started (if any).
    async fn send(&mut self, env: &Env, case: &Case) -> Option<String> {
        let (ex, resp, sent) = send_case(&env.client_handle(), case).await;
        self.requests += sent;
        for b in oracles::judge(case, resp.as_ref(), &ex) {
            self.record(case.op, &case.mutation, b, vec![ex.clone()], Some(case));
        }
        let r = resp?;
        (r.status == 202)
            .then(|| r.json?.get("execution_id")?.as_str().map(str::to_string))
            .flatten()
    }
}

/// Runs a campaign against a pre-flighted target with an SSP profile: its outcomes, and
/// its findings with their cases for `--promote`.
pub async fn execute(target: &Target, settings: &Settings) -> Result<(Outcomes, Kept), String> {
    let Some(profile) = crate::ssp::provider::profile_of_target(target)? else {
        // A Parley-only target under `--suite all`: nothing to judge, never a pass.
        let reason = "the target profile has no [ssp] table (fixture roles and credentials)";
        let kept = Kept {
            findings: Vec::new(),
            knowledge: Knowledge::default(),
            base: target.info.base_url.clone(),
            seed: settings.seed,
            secrets: Vec::new(),
        };
        let none = Outcomes {
            findings: Vec::new(),
            cases: 0,
            requests: 0,
            elapsed: std::time::Duration::ZERO,
            seed: settings.seed,
            unsupported: (oracles::ALL.iter())
                .map(|o| (o.name, reason.to_string()))
                .collect(),
        };
        return Ok((none, kept));
    };
    let client = target.client.renewed().map_err(|e| e.to_string())?;
    let nonce = format!("fuzz-{}", settings.seed);
    let mut env = Env::new(client, &target.info.base_url, profile, &nonce);
    let mut k = knowledge(&mut env).await;
    let mut run = Run {
        found: BTreeMap::new(),
        requests: 0,
    };
    let mut rng = fastrand::Rng::with_seed(settings.seed);
    let started = Instant::now();
    let mut cases = 0u64;
    while started.elapsed() < settings.duration {
        let case = cases::next(&mut rng, &k);
        cases += 1;
        if let Some(id) = run.send(&env, &case).await
            && k.executions.len() < 32
        {
            k.executions.push(id);
        }
    }
    let elapsed = started.elapsed();
    // A fresh environment: the first one cached the index before the campaign.
    let client = target.client.renewed().map_err(|e| e.to_string())?;
    let mut after = Env::new(client, &target.info.base_url, env.profile.clone(), &nonce);
    intact(&mut after, &mut run).await;
    run.requests += (env.exchanges.len() + after.exchanges.len()) as u64;
    // Without a skill to invoke, no request was certainly invalid: nothing was judged.
    let unsupported = if k.skills.is_empty() {
        let why = "no fixture skill of the profile ([ssp.roles] instant, auth_api_key, auth_oauth2) resolved: no invocation was sent";
        vec![(oracles::REFUSED.name, why.to_string())]
    } else {
        Vec::new()
    };
    let kept = Kept {
        findings: run.found.into_values().collect(),
        knowledge: k,
        base: env.base.clone(),
        seed: settings.seed,
        secrets: env.profile.credentials.secrets(),
    };
    let outcomes = Outcomes {
        findings: kept.findings.iter().map(Found::without_case).collect(),
        cases,
        requests: run.requests,
        elapsed,
        seed: settings.seed,
        unsupported,
    };
    Ok((outcomes, kept))
}

/// After the campaign, on a fresh environment (nothing cached): the anonymous index still
/// answers, and the `instant` fixture (when the profile maps it) is accepted and reaches a
/// terminal state. A `429` first waits out its `Retry-After` once, and a poll refused with
/// 429 ends the check: the campaign may have spent the provider's rate budget.
async fn intact(env: &mut Env, run: &mut Run) {
    let first = env.exchanges.len();
    let problem = match env.index("", &crate::ssp::provider::env::Cred::None).await {
        Err(f) => Some(format!("the index: {}", f.message)),
        Ok(_) => match env.fixture(FixtureRole::Instant).await {
            Err(_) => None, // no instant fixture: nothing more to run
            Ok(f) => invoke_to_end(env, &f).await.err(),
        },
    };
    if let Some(message) = problem {
        let exchanges = env.exchanges[first..].to_vec();
        let b = oracles::STATE_INTACT.breach("after", message);
        run.record("after", "read back after the campaign", b, exchanges, None);
    }
}

async fn invoke_to_end(env: &mut Env, f: &Fixture) -> Result<(), String> {
    let cred = f.cred.clone();
    let mut r = env
        .invoke(f, None, None, &cred)
        .await
        .map_err(|e| e.message)?;
    if r.status == 429 {
        let wait = r
            .header("retry-after")
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(1)
            .min(65);
        tokio::time::sleep(std::time::Duration::from_secs(wait)).await;
        r = env
            .invoke(f, None, None, &cred)
            .await
            .map_err(|e| e.message)?;
    }
    if r.status != 202 {
        return Err(format!("a valid invocation answered HTTP {}", r.status));
    }
    let id = r
        .json
        .as_ref()
        .and_then(|j| j.get("execution_id"))
        .and_then(Value::as_str)
        .ok_or("a valid invocation's 202 has no execution_id")?
        .to_string();
    match env.poll_terminal(f, &id, &cred).await {
        Ok(_) => Ok(()),
        // A provider may rate-limit polls too after the campaign's burst: not a finding.
        Err(_) if env.exchanges.last().and_then(|x| x.status) == Some(429) => Ok(()),
        Err(e) => Err(e.message),
    }
}

impl Fuzzable for Ssp {
    fn campaign(&self, settings: &Settings) -> std::sync::Arc<dyn Campaign> {
        std::sync::Arc::new(SspCampaign::new(settings.clone()))
    }
}
