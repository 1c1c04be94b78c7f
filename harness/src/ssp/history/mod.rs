//! SSP-INV-7 as a concurrent history (issue 10): N invocations of the instant fixture skill
//! sent at once, each with its own input variant where the skill has a free string input,
//! then each execution polled to its terminal status; the history is checked for
//! linearizability ([`crate::capability::history`]) against [`spec::SspSpec`]: every invocation
//! gets an id never handed out before, and every execution ends as the same inputs end when
//! invoked alone (status, and output when two lone runs agree) under its own id and skill —
//! N ids, N independent results.

pub mod spec;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use futures::FutureExt as _;
use futures::future::{BoxFuture, join_all};
use serde_json::{Map, Value, json};

use crate::capability::history::{Bound, Clock, History, Linearizability, check};
use crate::engine::check::{Bindings, Check, CheckCtx, CheckOutcome};
use crate::engine::finding::{Finding, Step as Stepped};
use crate::engine::requirements::Catalogue;
use crate::ssp::provider::check_env;
use crate::ssp::provider::env::{Env, Fixture};
use crate::ssp::provider::profile::FixtureRole;
use spec::{Observed, SspSpec, Step};

/// Check id in `conform run`.
pub const CHECK_ID: &str = "history/ssp-concurrency";

/// Invocations sent at once.
const N: usize = 4;

/// Input variants: one per invocation, distinct when the skill declares a plain string
/// input (no nested schema) the profile fills with a string; otherwise the profile's inputs.
fn variants(f: &Fixture) -> Vec<Map<String, Value>> {
    let free = f.descriptor.inputs.iter().find(|p| {
        p.kind == "string"
            && p.schema.is_none()
            && f.inputs.get(&p.name).is_some_and(Value::is_string)
    });
    (0..N)
        .map(|k| {
            let mut m = f.inputs.clone();
            if let Some(p) = free {
                let base = m[&p.name].as_str().unwrap_or_default().to_string();
                m.insert(p.name.clone(), json!(format!("{base} {}", k + 1)));
            }
            m
        })
        .collect()
}

/// Invokes `inputs` alone and polls it to its end: (status, output).
async fn alone(env: &mut Env, f: &Fixture, inputs: &Map<String, Value>) -> Stepped<(Value, Value)> {
    let cred = f.cred.clone();
    let r = env.invoke(f, Some(inputs), None, &cred).await?;
    let id = r.body()?["execution_id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if r.status != 202 || id.is_empty() {
        return Err(Finding::unsupported(format!(
            "the input variant {} was not accepted alone (HTTP {}): nothing to compare",
            Value::Object(inputs.clone()),
            r.status
        )));
    }
    let end = env.poll_terminal(f, &id, &cred).await?;
    let last = end.last().cloned().unwrap_or(Value::Null);
    Ok((last["status"].clone(), last["output"].clone()))
}

/// The specification: each variant's lone end, compared only where two lone runs agree.
async fn baseline(env: &mut Env, f: &Fixture, inputs: &[Map<String, Value>]) -> Stepped<SspSpec> {
    let probe = alone(env, f, &inputs[0]).await?;
    let mut runs = Vec::new();
    for i in inputs {
        runs.push(alone(env, f, i).await?);
    }
    let (same_status, same_output) = (probe.0 == runs[0].0, probe.1 == runs[0].1);
    Ok(SspSpec {
        skill: f.descriptor.id.clone(),
        alone: runs
            .into_iter()
            .map(|(s, o)| (same_status.then_some(s), same_output.then_some(o)))
            .collect(),
    })
}

/// Sends the N invocations at once and polls each: the history.
async fn race(
    env: &mut Env,
    f: &Fixture,
    inputs: &[Map<String, Value>],
) -> Stepped<History<Step, Observed>> {
    let clock = Clock::new();
    let (client, cred) = (env.client_handle(), f.cred.clone());
    let (url, method) = (
        f.descriptor.endpoint.url.clone(),
        f.descriptor.endpoint.method.as_str(),
    );
    let bodies: Vec<Value> = inputs
        .iter()
        .map(|i| env.request(&f.descriptor.id, i, None))
        .collect();
    let sends = bodies.iter().map(|b| async {
        let t0 = clock.now();
        let r = Env::send_detached(&client, method, &url, b, &cred).await;
        (t0, r, clock.now())
    });
    let mut h = History::new();
    let mut started = Vec::new();
    for (k, (t0, (ex, status, body), t1)) in join_all(sends).await.into_iter().enumerate() {
        env.exchanges.push(ex);
        let id = body
            .as_ref()
            .and_then(|b| b["execution_id"].as_str())
            .map(str::to_string);
        let out = match (status, &id) {
            (Some(202), Some(_)) => Observed::Accepted,
            _ => Observed::Refused(status),
        };
        h.done(
            k,
            Step::Invoke {
                input: k,
                id: id.clone(),
            },
            t0,
            t1,
            out,
        );
        started.extend(id.map(|i| (k, i)));
    }
    for (k, id) in started {
        let t0 = clock.now();
        let end = env.poll_terminal(f, &id, &cred).await?;
        let last = end.last().cloned().unwrap_or(Value::Null);
        let out = Observed::Final(Box::new([
            last["execution_id"].clone(),
            last["skill_id"].clone(),
            last["status"].clone(),
            last["output"].clone(),
        ]));
        h.done(k, Step::Final { input: k, id }, t0, clock.now(), out);
    }
    Ok(h)
}

async fn run(env: &mut Env) -> Stepped<()> {
    let f = env.fixture(FixtureRole::Instant).await?;
    let inputs = variants(&f);
    let spec = baseline(env, &f, &inputs).await?;
    let h = race(env, &f, &inputs).await?;
    match check(&spec, &Default::default(), &h, Bound::default()) {
        Linearizability::Linearizable { .. } => Ok(()),
        Linearizability::Unknown { reason, .. } => Err(Finding::unsupported(reason)),
        Linearizability::NotLinearizable(e) => {
            let stuck: Vec<String> = e
                .stuck
                .iter()
                .map(|s| format!("#{} {:?}: {}", s.op, h.ops[s.op].input, s.why))
                .collect();
            Err(Finding::fail(
                "",
                json!(format!(
                    "{N} distinct execution ids, each ending as its inputs end alone"
                )),
                json!(stuck),
                format!(
                    "{N} concurrent invocations of {} are not N independent executions: {}",
                    spec.skill,
                    stuck.join("; ")
                ),
            ))
        }
    }
}

/// The SSP concurrent-history check.
pub struct SspHistoryCheck {
    requirements: Vec<String>,
    must: bool,
}

impl Default for SspHistoryCheck {
    /// Citing SSP-INV-7 as a MUST (its level in `vectors/requirements/ssp.toml`).
    fn default() -> Self {
        Self {
            requirements: vec!["SSP-INV-7".into()],
            must: true,
        }
    }
}

impl Check for SspHistoryCheck {
    fn id(&self) -> &str {
        CHECK_ID
    }
    fn title(&self) -> &str {
        "concurrent invocations, checked for linearizability: N fresh execution ids and N results each equal to its inputs' result alone"
    }
    fn requirements(&self) -> &[String] {
        &self.requirements
    }
    fn area(&self) -> &str {
        "history"
    }
    fn long_running(&self) -> bool {
        true
    }
    fn bindings(&self) -> Bindings {
        Bindings::Once
    }
    fn run<'a>(&'a self, ctx: &'a CheckCtx) -> BoxFuture<'a, CheckOutcome> {
        async move {
            let mut env = match check_env(ctx) {
                Ok(env) => env,
                Err(verdict) => return CheckOutcome::verdict(*verdict),
            };
            let result = run(&mut env).await;
            crate::engine::check::CheckOutcome::scripted(
                CHECK_ID,
                &self.requirements,
                self.must,
                result,
                &env.warnings,
                env.exchanges,
            )
        }
        .boxed()
    }
}

/// The SSP history checks (none when the catalogue lacks SSP-INV-7).
pub fn checks(catalogue: &Catalogue) -> Vec<Arc<dyn Check>> {
    if catalogue.get("SSP-INV-7").is_none() {
        return Vec::new();
    }
    let requirements = vec!["SSP-INV-7".to_string()];
    let must = catalogue.any_required(&requirements);
    vec![Arc::new(SspHistoryCheck { requirements, must })]
}
