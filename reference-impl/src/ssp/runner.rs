//! Runs an accepted execution to its end on a tokio task: the skill's work under the
//! effective timeout (SSP-INV-5), the output checked against `output.schema` (SSP-INV-3),
//! and every status change applied by the domain and written through the store.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::skills::{self, SkillKind};
use super::{Skill, SspState, schema};
use crate::domain::ssp::{ErrorObject, JsonText, Outcome, codes};

impl SspState {
    /// Applies an outcome to a running execution: the domain decides (SSP-INV-3), the store
    /// keeps it in memory and writes it through (its guarded UPDATE enforces it again).
    fn transition(&self, id: &str, outcome: Outcome) {
        let now = chrono::Utc::now();
        match self.inner.executions.update(id, |e| e.apply(outcome, now)) {
            Ok(None | Some(Ok(true))) => {}
            Ok(Some(Ok(false))) => {
                tracing::error!(execution = id, "stored execution already terminal");
            }
            Ok(Some(Err(e))) => {
                tracing::error!(error = %e, execution = id, "could not persist execution");
            }
            Err(err) => tracing::error!(%err, execution = id, "refused status change"),
        }
    }

    pub(super) async fn run(
        self,
        skill: Arc<Skill>,
        id: String,
        inputs: Value,
        timeout: Option<u64>,
    ) {
        let empty = Map::new();
        let inputs = inputs.as_object().unwrap_or(&empty);
        if skill.kind.reports_running() {
            self.transition(&id, Outcome::Running);
        }
        let work = self.execute(&skill, inputs);
        let result = match timeout {
            Some(ms) => {
                let deadline = tokio::time::Instant::now() + Duration::from_millis(ms);
                match tokio::time::timeout_at(deadline, work).await {
                    // `timeout_at` polls the work before its timer: after a stall of the
                    // runtime both are due, and work that ended past its deadline still
                    // overran it.
                    Ok(r) if tokio::time::Instant::now() < deadline => r,
                    _ => {
                        // SSP-INV-5: overrun → timeout with INVOCATION_TIMEOUT.
                        let error = crate::domain::ssp::timeout_error(ms, &id);
                        self.transition(&id, Outcome::Timeout(error));
                        return;
                    }
                }
            }
            None => work.await,
        };
        let outcome = match result {
            Ok(output) => match &skill.output_schema {
                // SSP-INV-3: a completed output is valid against output.schema.
                Some(v) if !v.is_valid(&output) => Outcome::Failed(
                    ErrorObject::new(
                        codes::ENDPOINT_UNREACHABLE,
                        "the skill produced an output that breaks its output.schema",
                    )
                    .with_details(json!(
                        v.iter_errors(&output)
                            .map(|e| schema::detail_of(&e))
                            .collect::<Vec<_>>()
                    )),
                ),
                // Stored as text (issue 13 §2); the tree is dropped here.
                _ => match JsonText::from_value(&output) {
                    Ok(text) => Outcome::Completed(text),
                    Err(e) => Outcome::Failed(ErrorObject::new(
                        codes::ENDPOINT_UNREACHABLE,
                        format!("the skill's output could not be stored: {e}"),
                    )),
                },
            },
            Err(e) => Outcome::Failed(e),
        };
        self.transition(&id, outcome);
    }

    async fn execute(
        &self,
        skill: &Skill,
        inputs: &Map<String, Value>,
    ) -> Result<Value, ErrorObject> {
        let s = |k: &str| {
            inputs
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        match skill.kind {
            SkillKind::Echo => Ok(skills::echo(inputs)),
            SkillKind::TextStats => Ok(skills::text_stats(&s("text"))),
            SkillKind::SlowTask => {
                let ms = inputs
                    .get("delay_ms")
                    .and_then(Value::as_f64)
                    .unwrap_or(0.0);
                Ok(
                    skills::slow_task(ms.clamp(0.0, skills::SLOW_TASK_MAX_DELAY_MS as f64) as u64)
                        .await,
                )
            }
            SkillKind::AlwaysFails => Err(skills::always_fails(&s("reason"))),
            SkillKind::Overrun => Ok(skills::overrun().await),
            SkillKind::SpecLookup => {
                let id = s("id");
                match self.inner.catalogue.get(&id) {
                    Some(r) => {
                        let mut out = json!({ "id": r.id, "level": r.level, "rule": r.rule, "source": r.source });
                        if let (Some(o), Some(t)) = (out.as_object_mut(), &r.seed_text) {
                            o.insert("seed_text".into(), json!(t));
                        }
                        Ok(out)
                    }
                    // A failure its inputs caused: VALIDATION_ERROR (SSP-ERR-3's table).
                    None => Err(ErrorObject::new(
                        codes::VALIDATION_ERROR,
                        format!("no requirement {id} in the catalogue"),
                    )
                    .with_details(json!({ "id": id }))),
                }
            }
            SkillKind::ForumDigest => {
                let thread = s("thread");
                let reader = Arc::clone(&self.inner.threads);
                let t = thread.clone();
                // The Parley service is synchronous (SQLite): off the async workers.
                let (status, body) = tokio::task::spawn_blocking(move || reader.read_thread(&t))
                    .await
                    .map_err(|e| {
                        ErrorObject::new(
                            codes::ENDPOINT_UNREACHABLE,
                            format!("thread read aborted: {e}"),
                        )
                    })?;
                match status {
                    200 => skills::digest(&body),
                    404 => Err(ErrorObject::new(codes::VALIDATION_ERROR, format!("Parley thread '{thread}' was not found"))
                        .with_details(json!({ "thread": thread }))),
                    _ => Err(ErrorObject::new(codes::ENDPOINT_UNREACHABLE, format!("Parley read_thread refused ({status})"))
                        .with_details(json!({ "thread": thread, "status": status, "parley_error": body.get("error") }))),
                }
            }
        }
    }
}
