//! SSP documents the in-test fake providers answer with.

use serde_json::{Value, json};

/// An `ExecutionResponse` of `skill` in `status`; a `completed` one carries `output`
/// (default `{}`) and its completion time.
pub(crate) fn execution(id: &str, skill: &str, status: &str, output: Option<Value>) -> Value {
    let mut r = json!({
        "execution_id": id,
        "status": status,
        "skill_id": skill,
        "timestamps": {"created_at": "2025-07-01T12:00:00Z", "updated_at": "2025-07-01T12:00:01Z"}
    });
    if status == "completed" {
        r["output"] = output.unwrap_or(json!({}));
        r["timestamps"]["completed_at"] = json!("2025-07-01T12:00:01Z");
    }
    r
}
