//! Runs one golden vector on one transport and judges every step.
//!
//! The first violated step fails the vector (the rest are skipped); the violation carries the
//! pointer, expected and observed values and the full transcript. Each step also leaves an
//! outcome signature so the engine can compare the two bindings (PV-TR-1).

mod expect;
mod observation;
mod step;

pub use expect::normalise;
use expect::{EvalError, evaluate};
use observation::Observation;
use step::{RunState, StepError, base_env, is_write, observe};

use std::collections::{BTreeMap, BTreeSet, HashMap};

use futures::FutureExt as _;
use futures::future::BoxFuture;

use serde_json::{Value, json};

use super::loader::LoadedVector;
use super::model::{Need, Role, Step, StepAction, Vector, identity_roles};
use crate::engine::check::{Bindings, Check, CheckCtx, CheckOutcome, StepSignature};
use crate::engine::requirements::Catalogue;
use crate::engine::verdict::{Cause, Verdict};
use crate::json::matcher::Mismatch;
use crate::json::placeholders::Env;
use crate::parley::compare::PV_TR_1;
use crate::parley::pacing::Pacer;
use crate::parley::preflight::ParleyTarget;
use crate::transport::{Auth, TransportKind};

/// A golden vector as a [`Check`].
pub struct VectorCheck {
    lv: LoadedVector,
    required: bool,
    bindings: Vec<TransportKind>,
    /// `["PV-TR-1"]` when the vector runs on both bindings (its outcomes are compared).
    derived: Vec<String>,
}

impl VectorCheck {
    /// Wraps a loaded vector; `catalogue` decides fail (MUST cited) vs warn.
    pub fn new(lv: LoadedVector, catalogue: &Catalogue) -> Self {
        // An advisory vector checks what the notes do not fix: never a failure (issue 14).
        let required =
            lv.vector.advisory.is_none() && catalogue.any_required(&lv.vector.requirements);
        let (mut http, mut mcp) = (true, true);
        for s in &lv.vector.steps {
            match s.action() {
                Some(StepAction::Http(_)) => mcp = false,
                Some(StepAction::Mcp(_)) => http = false,
                _ => {}
            }
        }
        let bindings: Vec<TransportKind> = [(http, TransportKind::Http), (mcp, TransportKind::Mcp)]
            .into_iter()
            .filter_map(|(on, k)| on.then_some(k))
            .collect();
        let derived = if bindings.len() == 2 {
            vec![PV_TR_1.to_string()]
        } else {
            Vec::new()
        };
        Self {
            lv,
            required,
            bindings,
            derived,
        }
    }

    /// The vector.
    pub fn loaded(&self) -> &LoadedVector {
        &self.lv
    }
}

impl Check for VectorCheck {
    fn id(&self) -> &str {
        &self.lv.vector.id
    }
    fn title(&self) -> &str {
        &self.lv.vector.title
    }
    fn requirements(&self) -> &[String] {
        &self.lv.vector.requirements
    }
    fn area(&self) -> &str {
        &self.lv.area
    }
    fn exclusive(&self) -> bool {
        self.lv.vector.exclusive
    }
    fn advisory(&self) -> Option<&str> {
        self.lv.vector.advisory.as_deref()
    }
    fn bindings(&self) -> Bindings {
        Bindings::Each(self.bindings.iter().map(|k| (*k).into()).collect())
    }
    fn compare_transports(&self) -> bool {
        self.bindings.len() == 2
    }
    fn derived_requirements(&self) -> &[String] {
        &self.derived
    }
    fn describe(&self) -> Option<String> {
        let v = &self.lv.vector;
        let roles: Vec<&str> = v.roles.iter().map(|r| r.as_str()).collect();
        Some(format!(
            "vector {} ({}, area {})\n  {}\n  steps: {}, roles: {}",
            v.id,
            self.lv.file.display(),
            self.lv.area,
            v.title,
            v.steps.len(),
            if roles.is_empty() {
                "none".to_string()
            } else {
                roles.join(", ")
            }
        ))
    }
    fn budget_use(&self) -> Vec<(String, u64)> {
        // The writes the pacer paces (PV-TR-5): by role tokens, the quota role aside.
        let mut per_role: BTreeMap<Role, u64> = BTreeMap::new();
        for step in &self.lv.vector.steps {
            if is_write(step)
                && step.token.is_none()
                && !matches!(step.role, Role::Limited | Role::Anonymous)
            {
                *per_role.entry(step.role).or_default() += u64::from(step.repeat.unwrap_or(1));
            }
        }
        per_role
            .into_iter()
            .map(|(r, n)| (r.as_str().to_string(), n))
            .collect()
    }
    fn run<'a>(&'a self, ctx: &'a CheckCtx) -> BoxFuture<'a, CheckOutcome> {
        async move {
            let Some(kind) = ctx.transport.and_then(crate::capability::transports::kind) else {
                return CheckOutcome::verdict(Verdict::HarnessError {
                    message: "vector run without a transport".into(),
                });
            };
            run_vector(&self.lv, self.required, ctx, kind).await
        }
        .boxed()
    }
}

/// Why `v` cannot run on `kind` against `target` (a need the manifest does not meet, a role
/// without a token or identity, an operation the target declares `null`), with whose side
/// the gap is on, or `None` when it can. The run and `conform init` (which lists the checks
/// a profile leaves `unsupported`) both ask this. `Err` = the vector itself is malformed.
pub fn unsupported_reason(
    v: &Vector,
    target: &ParleyTarget,
    kind: TransportKind,
) -> Result<Option<(Cause, String)>, String> {
    for need in &v.needs {
        if let Some(reason) = unmet_need(need, target)? {
            return Ok(Some((Cause::Target, reason)));
        }
    }
    for role in &v.roles {
        if *role != Role::Anonymous && target.auth(*role).is_none() {
            return Ok(Some((
                Cause::Profile,
                format!("the target profile has no token for role {role}"),
            )));
        }
    }
    // A role whose identity a step names (`$identity.agent_b`) without acting as it: the
    // placeholder cannot resolve without that role's token and whoami (issue 26: a profile
    // gap, never a harness error).
    for name in identity_roles(v)? {
        if !target.identities.keys().any(|r| r.as_str() == name) {
            return Ok(Some((
                Cause::Profile,
                format!(
                    "the target profile gives no identity for role {name} (its token and whoami)"
                ),
            )));
        }
    }
    // An operation the target declares `null` on this binding (PV-TR-1a, reported by its own
    // check) makes the vector inapplicable here, not failed.
    for step in &v.steps {
        if let Some(StepAction::Op(op)) = step.action() {
            let missing = match kind {
                TransportKind::Http => matches!(target.manifest.routes.0.get(op), Some(None)),
                TransportKind::Mcp => matches!(target.manifest.tools.get(op), Some(None)),
            };
            if missing {
                return Ok(Some((
                    Cause::Target,
                    format!("the target declares no {kind} binding for {op} (PV-TR-1a)"),
                )));
            }
        }
    }
    Ok(None)
}

/// The reason a `needs` entry is not met by the target's manifest, if it is not.
fn unmet_need(need: &str, target: &ParleyTarget) -> Result<Option<String>, String> {
    Ok(match Need::parse(need)? {
        Need::Feature(f) => (!target.has_feature(&f))
            .then(|| format!("the target's manifest does not enable `{f}`")),
        // `!dialectic`: the vector checks the profile's absence (PV-DI-8).
        Need::NoFeature(f) => target
            .has_feature(&f)
            .then(|| format!("the target's manifest enables `{f}`")),
        // A vector written for one declared value (the reference instance's): the manifest is
        // authoritative (PV-MF-2), so another declared value makes the vector inapplicable,
        // not failed; other vectors check the declared value itself.
        Need::Declared { pointer, value } => {
            let declared = target.manifest.raw.pointer(&pointer);
            (declared != Some(&value)).then(|| {
                format!(
                    "the vector is written for a manifest declaring {pointer} = {value}; the target declares {}",
                    declared.map_or_else(|| "nothing there".to_string(), Value::to_string)
                )
            })
        }
    })
}

/// Runs one vector on one transport.
pub async fn run_vector(
    lv: &LoadedVector,
    required: bool,
    ctx: &CheckCtx,
    kind: TransportKind,
) -> CheckOutcome {
    let Some(target) = ctx.target.part::<ParleyTarget>() else {
        return CheckOutcome::verdict(Verdict::HarnessError {
            message: "the Parley pre-flight did not run".into(),
        });
    };
    let reasons = target.manifest.reasons();
    let v = &lv.vector;
    match unsupported_reason(v, target, kind) {
        Ok(None) => {}
        Ok(Some((cause, reason))) => {
            return CheckOutcome::verdict(Verdict::Unsupported { reason, cause });
        }
        Err(message) => return CheckOutcome::verdict(Verdict::HarnessError { message }),
    }
    let step_ctx = StepCtx {
        target,
        pacer: ctx.target.part::<Pacer>(),
        reasons: &reasons,
    };
    let mut env = base_env(target, &ctx.run_nonce);
    let mut drifted = false;
    let mut st = RunState {
        lv,
        required,
        kind,
        exchanges: Vec::new(),
        steps: Vec::new(),
        ids: HashMap::new(),
    };
    for (i, step) in v.steps.iter().enumerate() {
        let n = i + 1;
        if let Err(verdict) = run_step(&step_ctx, &mut st, &mut env, &mut drifted, n, step).await {
            return st.done(verdict);
        }
    }
    st.done(Verdict::Pass)
}

/// What every step of a vector's run reads.
struct StepCtx<'a> {
    target: &'a ParleyTarget,
    pacer: Option<&'a Pacer>,
    reasons: &'a BTreeSet<String>,
}

/// Step `n`: its attempts, its signature for the PV-TR-1 comparison, its captures. `Err` is
/// the verdict that ends the vector.
async fn run_step(
    sc: &StepCtx<'_>,
    st: &mut RunState<'_>,
    env: &mut Env,
    drifted: &mut bool,
    n: usize,
    step: &Step,
) -> Result<(), Verdict> {
    let obs = attempts(sc, st, env, n, step).await?;
    // The shared inbox depends on concurrent activity, and a repeated step on the quota
    // window it happens to fall in (the two bindings' runs are seconds apart): a repeated
    // step is not compared across bindings, and after one the threads it wrote to may
    // legitimately differ, so later bodies are not compared either (classes still are).
    let mut sig = if step.repeat.is_some() {
        *drifted = true;
        StepSignature {
            step: n,
            class: "repeat".into(),
            status: None,
            reason: None,
            body: None,
        }
    } else {
        obs.signature(n, !*drifted && step.op.as_deref() != Some("inbox"))
    };
    if let Some(b) = sig.body.take() {
        sig.body = Some(normalise(&b, &mut st.ids));
    }
    st.steps.push(sig);
    for (name, ptr) in &step.capture {
        match obs.body().and_then(|b| b.pointer(ptr)) {
            Some(val) => env.set(name.clone(), val.clone()),
            None => {
                let m = Mismatch {
                    pointer: ptr.clone(),
                    expected: json!({"$any": true}),
                    observed: Value::Null,
                    message: format!("cannot capture ${name}: the response has nothing at {ptr:?}"),
                };
                return Err(st.violation(n, m));
            }
        }
    }
    Ok(())
}

/// The attempts of step `n` (`repeat`), each judged against `expect`, and `expect_seen`
/// against one of them at least: the last observation, or the verdict that ends the vector.
async fn attempts(
    sc: &StepCtx<'_>,
    st: &mut RunState<'_>,
    env: &Env,
    n: usize,
    step: &Step,
) -> Result<Observation, Verdict> {
    let auth = match &step.token {
        Some(t) => Auth::Bearer {
            token: t.clone(),
            env: None,
        },
        None => sc.target.auth(step.role).unwrap_or(Auth::None),
    };
    let raw_mcp = matches!(step.action(), Some(StepAction::Mcp(_)));
    let attempts = step.repeat.unwrap_or(1).max(1);
    let mut seen = false;
    let mut last: Option<Observation> = None;
    for _ in 0..attempts {
        let obs = attempt(sc, st, env, n, step, &auth, raw_mcp).await?;
        if let Some(es) = &step.expect_seen
            && !seen
        {
            match evaluate(es, &obs, env, sc.reasons) {
                Ok(()) => seen = true,
                Err(EvalError::Harness(m)) => return Err(harness(n, m)),
                Err(EvalError::Mismatch(_)) => {}
            }
        }
        last = Some(obs);
    }
    let Some(obs) = last else {
        return Err(harness(n, "no attempt made".into()));
    };
    if let Some(es) = &step.expect_seen
        && !seen
    {
        let m = Mismatch {
            pointer: String::new(),
            expected: serde_json::to_value(es).unwrap_or(Value::Null),
            observed: obs.summary(),
            message: format!("none of the {attempts} attempts matched expect_seen"),
        };
        st.steps.push(obs.signature(n, false));
        return Err(st.violation(n, m));
    }
    Ok(obs)
}

/// One attempt of step `n`: sent, observed and judged against `expect`.
async fn attempt(
    sc: &StepCtx<'_>,
    st: &mut RunState<'_>,
    env: &Env,
    n: usize,
    step: &Step,
    auth: &Auth,
    raw_mcp: bool,
) -> Result<Observation, Verdict> {
    let sent = observe(
        sc.target,
        st.kind,
        step,
        env,
        auth,
        raw_mcp,
        &mut st.exchanges,
        sc.pacer,
    )
    .await;
    let obs = match sent {
        Ok(o) => o,
        Err(StepError::Harness(m)) => return Err(harness(n, m)),
        Err(StepError::NoResponse(e)) => {
            st.steps.push(StepSignature {
                step: n,
                class: crate::engine::check::NO_RESPONSE.into(),
                status: None,
                reason: None,
                body: None,
            });
            let m = Mismatch {
                pointer: String::new(),
                expected: json!("a response"),
                observed: json!(e),
                message: format!("no response: {e}"),
            };
            return Err(st.violation(n, m));
        }
    };
    match evaluate(&step.expect, &obs, env, sc.reasons) {
        Ok(()) => Ok(obs),
        Err(EvalError::Harness(m)) => Err(harness(n, m)),
        Err(EvalError::Mismatch(_))
            if raw_text(step)
                && st
                    .exchanges
                    .last()
                    .is_some_and(|e| obs.era_fault_of_raw_text(e)) =>
        {
            Err(Verdict::Unsupported {
                reason: format!(
                    "step {n}: the target refused the raw-text request for the MCP 2026-07-28 \
                     header or `_meta` it lacks (MCP26-1/MCP26-4; several faults, any applicable \
                     answer: MCP26-6), so the fault this vector sends was not judged"
                ),
                cause: Cause::Target,
            })
        }
        Err(EvalError::Mismatch(m)) => {
            st.steps.push(obs.signature(n, false));
            Err(st.violation(n, m))
        }
    }
}

/// A raw MCP step whose body is literal text (sent as written: the era's headers and
/// `_meta` cannot be added to it).
fn raw_text(step: &Step) -> bool {
    matches!(step.action(), Some(StepAction::Mcp(m)) if m.body.is_some())
}

/// The harness error of step `n`.
fn harness(n: usize, m: String) -> Verdict {
    Verdict::HarnessError {
        message: format!("step {n}: {m}"),
    }
}
