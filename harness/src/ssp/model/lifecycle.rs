//! The lifecycle tracker of the SSP model: what one InvocationResponse may show given the
//! answers seen before it — the forward-only states, `created_at` constant, `updated_at`
//! monotone, `completed_at` exactly on terminal states (SSP-INV-3/4), the final state the
//! unit's role predicts and the timeout error with the effective timeout (SSP-INV-5). Pure:
//! it reads the target's own timestamps, never a clock.

use serde_json::{Value, json};

use super::state::{Exec, Finding, ORDER, States, breach};
use crate::ssp::codes::{self, Condition};
use crate::ssp::types::ExecutionStatus;

/// Tolerated readings, each with the rule it concerns.
pub type Warnings = Vec<(&'static str, String)>;

use crate::ssp::types::instant_ms as instant;

/// What the model has seen of one execution: the states still allowed and the facts that
/// never change (SSP-INV-3).
#[derive(Debug, Clone, PartialEq)]
pub struct Track {
    /// The execution id the target gave.
    pub id: String,
    /// The skill it runs.
    pub skill_id: String,
    /// States a later answer may still show.
    pub allowed: States,
    /// The last status seen.
    pub last: Option<ExecutionStatus>,
    /// `timestamps.created_at` as first seen.
    pub created_at: Option<String>,
    /// The latest `timestamps.updated_at` (ms since the epoch).
    pub updated_at: Option<f64>,
    /// The `updated_at` of the first `running` answer seen (ms): no earlier than the start
    /// of the run, so a duration measured from it never exceeds the real one.
    pub running_at: Option<f64>,
    /// The terminal answer's `status`, `output`, `error.code` and `completed_at`.
    pub terminal: Option<Value>,
}

/// The facts of a terminal answer that never change. `completed_at` is compared as an
/// instant (`…00Z` and `…00.000Z` are the same time, as for `created_at`).
fn terminal_snapshot(body: &Value) -> Value {
    let completed = body.pointer("/timestamps/completed_at");
    let completed = match completed.and_then(Value::as_str).and_then(instant) {
        Some(ms) => json!(ms),
        None => json!(completed),
    };
    json!({
        "status": body.get("status"),
        "output": body.get("output"),
        "error_code": body.pointer("/error/code"),
        "completed_at": completed,
    })
}

/// What observing one answer taught: the track after it and any warnings.
#[derive(Debug, Clone, PartialEq)]
pub struct Observed {
    /// The track after the answer.
    pub track: Track,
    /// Accepted readings worth reporting, each with the rule it concerns (the
    /// `EXECUTION_TIMEOUT` alias, a missing optional member, another of the seven codes).
    pub warnings: Warnings,
}

const INV3: &[&str] = &["SSP-INV-3"];
const INV5: &[&str] = &["SSP-INV-5"];

impl Track {
    /// Nothing seen yet of execution `id` of `skill_id`, which may end in `exec.finals`.
    pub fn new(id: &str, skill_id: &str, exec: &Exec) -> Self {
        use ExecutionStatus::{Accepted, Running};
        Self {
            id: id.to_string(),
            skill_id: skill_id.to_string(),
            allowed: States::of(&[Accepted, Running]).with(exec.finals),
            last: None,
            created_at: None,
            updated_at: None,
            running_at: None,
            terminal: None,
        }
    }

    /// SSP-INV-3/4/5: one InvocationResponse `body` (schema-valid) of this execution.
    pub fn observe(&self, exec: &Exec, body: &Value) -> Result<Observed, Box<Finding>> {
        let status: ExecutionStatus =
            serde_json::from_value(body["status"].clone()).map_err(|_| {
                breach(
                    INV3,
                    "no execution status",
                    json!("an ExecutionStatus"),
                    body.clone(),
                )
            })?;
        self.identity(body)?;
        self.forward(exec, status, body)?;
        let updated_at = self.timestamps(status, body)?;
        let warnings = self.outcome(exec, status, body)?;
        let mut track = self.clone();
        track.last = Some(status);
        track.updated_at = updated_at.or(self.updated_at);
        if status == ExecutionStatus::Running && track.running_at.is_none() {
            track.running_at = updated_at;
        }
        if track.created_at.is_none() {
            track.created_at = body
                .pointer("/timestamps/created_at")
                .and_then(Value::as_str)
                .map(str::to_string);
        }
        if status.is_terminal() {
            track.allowed = States::of(&[status]);
            track.terminal = Some(terminal_snapshot(body));
        } else {
            let keep: Vec<ExecutionStatus> = (ORDER.iter().copied())
                .filter(|s| self.allowed.has(*s) && s.rank() >= status.rank())
                .collect();
            track.allowed = States::of(&keep);
        }
        Ok(Observed { track, warnings })
    }

    fn identity(&self, body: &Value) -> Result<(), Box<Finding>> {
        if body["execution_id"] != json!(self.id) {
            return Err(breach(
                &["SSP-INV-3", "SSP-INV-7"],
                "the answer describes another execution",
                json!(self.id),
                body["execution_id"].clone(),
            ));
        }
        if body["skill_id"] != json!(self.skill_id) {
            return Err(breach(
                &["SSP-INV-3", "SSP-INV-2"],
                "the execution runs another skill",
                json!(self.skill_id),
                body["skill_id"].clone(),
            ));
        }
        Ok(())
    }

    /// The status is one the role allows and never moves backwards.
    fn forward(
        &self,
        exec: &Exec,
        status: ExecutionStatus,
        body: &Value,
    ) -> Result<(), Box<Finding>> {
        if self.allowed.has(status) || self.timed_out_in_time(exec, status, body) {
            return Ok(());
        }
        let expected = json!({"allowed": self.allowed.names(), "last_seen": self.last.map(ExecutionStatus::as_str)});
        if let Some(last) = self.last
            && (last.is_terminal() || status.rank() < last.rank())
        {
            let what = if last.is_terminal() {
                "a terminal state never changes"
            } else {
                "status only moves forward"
            };
            return Err(breach(
                INV3,
                format!("{what}: {} then {}", last.as_str(), status.as_str()),
                expected,
                body.clone(),
            ));
        }
        let rules =
            if exec.finals.has(ExecutionStatus::Timeout) || status == ExecutionStatus::Timeout {
                INV5
            } else {
                INV3
            };
        Err(breach(
            rules,
            format!(
                "the execution ended {} where its role allows {:?}",
                status.as_str(),
                exec.finals.names()
            ),
            expected,
            body.clone(),
        ))
    }

    /// A `timeout` of a not yet terminal execution once its effective timeout has passed
    /// since `created_at` (within [`Track::not_early`]'s slack): whatever its role, SSP-INV-5
    /// lets the server start the clock at acceptance, so an execution that waited in a
    /// queue (a busy provider, many sequences at once) may time out before it ever ran.
    fn timed_out_in_time(&self, exec: &Exec, status: ExecutionStatus, body: &Value) -> bool {
        status == ExecutionStatus::Timeout
            && !self.last.is_some_and(ExecutionStatus::is_terminal)
            && matches!(
                (exec.effective_ms, self.run_time(body)),
                (Some(eff), Some(ran)) if ran >= eff - EARLY_SLACK_MS
            )
    }

    /// `completed_at` − `created_at` of a terminal answer, in ms (the `created_at` first
    /// seen, else the answer's).
    fn run_time(&self, body: &Value) -> Option<f64> {
        let at = |p| body.pointer(p).and_then(Value::as_str).and_then(instant);
        let created = (self.created_at.as_deref().and_then(instant))
            .or_else(|| at("/timestamps/created_at"))?;
        Some(at("/timestamps/completed_at")? - created)
    }

    /// `created_at` constant, `created_at ≤ updated_at`, `updated_at` never earlier,
    /// `completed_at` iff terminal. Returns `updated_at` (ms).
    fn timestamps(
        &self,
        status: ExecutionStatus,
        body: &Value,
    ) -> Result<Option<f64>, Box<Finding>> {
        let ts = &body["timestamps"];
        let created = ts["created_at"].as_str().unwrap_or_default();
        if let Some(first) = &self.created_at
            && !crate::ssp::types::same_instant(first, created)
        {
            return Err(breach(
                INV3,
                "created_at is constant",
                json!(first),
                json!(created),
            ));
        }
        let (c, u) = (
            instant(created),
            ts["updated_at"].as_str().and_then(instant),
        );
        if let (Some(c), Some(u)) = (c, u)
            && u < c
        {
            return Err(breach(
                INV3,
                "created_at ≤ updated_at",
                ts["created_at"].clone(),
                ts["updated_at"].clone(),
            ));
        }
        if let (Some(prev), Some(u)) = (self.updated_at, u)
            && u < prev
        {
            return Err(breach(
                INV3,
                "updated_at moved backwards",
                json!(prev),
                ts["updated_at"].clone(),
            ));
        }
        let done = ts.get("completed_at").is_some_and(|v| !v.is_null());
        if done != status.is_terminal() {
            return Err(breach(
                INV3,
                format!(
                    "completed_at is present iff the status is terminal ({})",
                    status.as_str()
                ),
                json!({"completed_at_present": status.is_terminal()}),
                ts.clone(),
            ));
        }
        Ok(u)
    }

    /// Terminal answers: stable, `output` when completed, the unified `error` otherwise,
    /// `INVOCATION_TIMEOUT` on a timeout, a completion within the effective timeout.
    fn outcome(
        &self,
        exec: &Exec,
        status: ExecutionStatus,
        body: &Value,
    ) -> Result<Warnings, Box<Finding>> {
        let mut warnings = Vec::new();
        if !status.is_terminal() {
            return Ok(warnings);
        }
        if let Some(t) = &self.terminal
            && *t != terminal_snapshot(body)
        {
            return Err(breach(
                INV3,
                "a terminal execution never changes",
                t.clone(),
                terminal_snapshot(body),
            ));
        }
        // The run's length, from the first `running` answer seen: the effective timeout
        // bounds the execution, and an execution may wait in `accepted` (a queue) before it
        // runs. Without a `running` answer its start is unknown and the bound is not judged.
        let elapsed = match (
            self.running_at,
            body.pointer("/timestamps/completed_at")
                .and_then(Value::as_str)
                .and_then(instant),
        ) {
            (Some(c), Some(d)) => Some(d - c),
            _ => None,
        };
        match status {
            ExecutionStatus::Completed => completed(exec, elapsed, body)?,
            _ => self.ended_in_error(exec, status, body, &mut warnings)?,
        }
        Ok(warnings)
    }
}

/// A completed execution: it carries output (SSP-INV-3), and it did not run past its
/// effective timeout (SSP-INV-5; `elapsed` from the first `running` answer seen).
fn completed(exec: &Exec, elapsed: Option<f64>, body: &Value) -> Result<(), Box<Finding>> {
    if body.get("output").is_none() {
        return Err(breach(
            INV3,
            "a completed execution carries output",
            json!({"output": "present"}),
            body.clone(),
        ));
    }
    // Timestamps may have second precision: a generous slack.
    if let (Some(eff), Some(el)) = (exec.effective_ms, elapsed)
        && el > eff * 1.5 + 1000.0
    {
        return Err(breach(
            INV5,
            format!(
                "completed {el} ms after it was seen running, past its effective timeout of {eff} ms (it must end as timeout)"
            ),
            json!({"status": "timeout"}),
            body.clone(),
        ));
    }
    Ok(())
}

impl Track {
    /// A failed or timed-out execution: the unified error (SSP-INV-3, SSP-ERR-1), a timeout
    /// not early and its error judged (SSP-INV-5), a failure's code one of the seven
    /// (SSP-ERR-3); tolerated readings go to `warnings`.
    fn ended_in_error(
        &self,
        exec: &Exec,
        status: ExecutionStatus,
        body: &Value,
        warnings: &mut Warnings,
    ) -> Result<(), Box<Finding>> {
        let code = body.pointer("/error/code").and_then(Value::as_str);
        let message = body.pointer("/error/message").and_then(Value::as_str);
        if code.is_none() || message.is_none() {
            return Err(breach(
                &["SSP-INV-3", "SSP-ERR-1"],
                format!("a {} execution carries the unified error", status.as_str()),
                json!({"error": {"code": "string", "message": "string"}}),
                body.clone(),
            ));
        }
        if status == ExecutionStatus::Timeout {
            self.not_early(exec, body)?;
            warnings.extend(timeout_error(exec, &self.id, body)?);
        } else if let Some(code) = code {
            // SSP-ERR-3: a skill's own failure uses one of the seven.
            match codes::judge(Condition::SkillFailed, None, code) {
                codes::Verdict::Pass => {}
                codes::Verdict::Warn(m) => warnings.push(("SSP-ERR-3", m)),
                codes::Verdict::Fail { rule, message } => {
                    return Err(breach(
                        &[rule],
                        format!("a failed execution's error: {message}"),
                        json!(codes::expected(Condition::SkillFailed, None)),
                        json!(code),
                    ));
                }
            }
        }
        Ok(())
    }

    /// SSP-INV-5's lower bound, judged from `created_at` (true whether the server starts
    /// the clock at acceptance or at the start of running): a `timeout` that completed
    /// before its effective timeout had passed since creation is early. Timestamps may have
    /// second precision: one second of slack.
    fn not_early(&self, exec: &Exec, body: &Value) -> Result<(), Box<Finding>> {
        if let (Some(eff), Some(ran)) = (exec.effective_ms, self.run_time(body))
            && ran < eff - EARLY_SLACK_MS
        {
            return Err(breach(
                INV5,
                format!(
                    "timed out {ran} ms after created_at, before its effective timeout of {eff} ms"
                ),
                json!({"completed_at - created_at": format!(">= {eff} ms")}),
                body.clone(),
            ));
        }
        Ok(())
    }
}

/// Slack of SSP-INV-5's lower bound from `created_at`: timestamps may have second precision.
const EARLY_SLACK_MS: f64 = 1000.0;

/// SSP-INV-5: the timed-out execution's error, judged by the one judge the scripted
/// checks use (`ssp/timeout_error.rs`).
fn timeout_error(exec: &Exec, id: &str, body: &Value) -> Result<Warnings, Box<Finding>> {
    match crate::ssp::timeout_error::judge(body, id, exec.effective_ms) {
        Ok(notes) => Ok(notes
            .into_iter()
            .map(|n| (n.rules.first().copied().unwrap_or("SSP-INV-5"), n.message))
            .collect()),
        Err(n) => Err(breach(&n.rules, n.message, n.expected, n.observed)),
    }
}
