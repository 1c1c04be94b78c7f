//! PV-TR-1a: a Parley v1 server offers every operation on both bindings; one that declares a
//! binding `null` in its manifest's `operations` fails this one check, never the whole run.

use futures::FutureExt as _;
use futures::future::BoxFuture;
use serde_json::json;

use super::preflight::ParleyTarget;
use crate::engine::check::{Bindings, Check, CheckCtx, CheckOutcome};
use crate::engine::finding::{self, Finding};
use crate::engine::verdict::Verdict;

/// PV-TR-1a: a Parley v1 server offers every operation on both bindings (manifest `operations`).
pub struct BindingsOffered {
    /// The cited IDs (`PV-TR-1a`).
    pub requirements: Vec<String>,
}

impl Check for BindingsOffered {
    fn id(&self) -> &str {
        "PV-TR-1a/bindings"
    }
    fn title(&self) -> &str {
        "every operation is offered on both HTTP and MCP"
    }
    fn requirements(&self) -> &[String] {
        &self.requirements
    }
    fn area(&self) -> &str {
        "transport"
    }
    fn bindings(&self) -> Bindings {
        Bindings::Once
    }
    fn run<'a>(&'a self, ctx: &'a CheckCtx) -> BoxFuture<'a, CheckOutcome> {
        async move {
            let Some(parley) = ctx.target.part::<ParleyTarget>() else {
                return CheckOutcome::verdict(Verdict::HarnessError {
                    message: "the Parley pre-flight did not run".into(),
                });
            };
            let missing = &parley.manifest.missing_bindings;
            let verdict = if missing.is_empty() {
                Verdict::Pass
            } else {
                let f = Finding::fail(
                    "/operations",
                    json!("every operation with a non-null http and mcp binding"),
                    json!(missing),
                    format!(
                        "the manifest declares bindings as null: {}",
                        missing.join(", ")
                    ),
                );
                finding::found(self.id(), &self.requirements, true, f, &[])
            };
            CheckOutcome::verdict(verdict)
        }
        .boxed()
    }
}
