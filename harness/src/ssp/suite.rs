//! The SSP suite's checks for the engine: provider checks (HTTP), consumer checks (CONS),
//! the concurrent history (`history/ssp-concurrency`), the state-machine model
//! (`model/ssp-lifecycle`) and the validator vectors (VAL), so that `conform run --suite ssp`
//! covers every method of the catalogue.
//!
//! Wiring (for `suite::load_suite` when `name == "ssp"`):
//! `checks.extend(conform::ssp::suite::checks(vectors_dir, &catalogue)?)`.

use crate::engine::check::{Bindings, Check, CheckCtx, CheckOutcome};
use crate::engine::finding::{self, Finding};
use crate::engine::requirements::Catalogue;
use crate::engine::verdict::Verdict;
use crate::ssp::validator::SspValidator;
use crate::ssp::vectors::{LoadedVector, VectorError, check, load_dir};
use futures::FutureExt as _;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

/// Every check of the SSP suite.
pub fn checks(
    vectors_dir: &Path,
    catalogue: &Catalogue,
) -> Result<Vec<Arc<dyn Check>>, VectorError> {
    let mut out = crate::ssp::provider::checks(catalogue);
    out.extend(crate::ssp::history::checks(catalogue));
    out.extend(crate::ssp::model::checks(vectors_dir, catalogue)?);
    out.extend(crate::ssp::requests::checks(vectors_dir, catalogue)?);
    out.extend(validator_checks(vectors_dir, catalogue)?);
    Ok(out)
}

/// One check per requirement cited by the validator vectors: `<ID>/validator-vectors`
/// runs every vector citing it (VAL rules).
pub fn validator_checks(
    vectors_dir: &Path,
    catalogue: &Catalogue,
) -> Result<Vec<Arc<dyn Check>>, VectorError> {
    let schema_path = vectors_dir.join("schemas/ssp-validator-vector.schema.json");
    let schema: Value = std::fs::read_to_string(&schema_path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .ok_or_else(|| VectorError {
            file: schema_path.display().to_string(),
            message: "unreadable vector schema".into(),
        })?;
    let known: BTreeSet<String> = catalogue
        .requirements
        .iter()
        .map(|r| r.id.clone())
        .collect();
    let vectors = load_dir(
        &vectors_dir.join("ssp/validator"),
        Some(&schema),
        Some(&known),
    )?;
    let mut by_req: BTreeMap<String, Vec<LoadedVector>> = BTreeMap::new();
    for lv in vectors {
        for r in &lv.vector.requirements {
            by_req.entry(r.clone()).or_default().push(lv.clone());
        }
    }
    Ok(by_req
        .into_iter()
        .map(|(req, vectors)| {
            let must = catalogue.any_required(std::slice::from_ref(&req));
            Arc::new(ValidatorVectors {
                id: format!("{req}/validator-vectors"),
                title: format!("{} validator vectors citing {req}", vectors.len()),
                requirements: vec![req],
                vectors,
                must,
            }) as Arc<dyn Check>
        })
        .collect())
}

/// The validator vectors citing one requirement.
pub struct ValidatorVectors {
    id: String,
    title: String,
    requirements: Vec<String>,
    vectors: Vec<LoadedVector>,
    must: bool,
}

impl Check for ValidatorVectors {
    fn id(&self) -> &str {
        &self.id
    }
    fn title(&self) -> &str {
        &self.title
    }
    fn requirements(&self) -> &[String] {
        &self.requirements
    }
    fn area(&self) -> &str {
        "validator"
    }
    fn self_test(&self) -> bool {
        // Conform's own validator against fixed documents: nothing is sent to the target.
        true
    }
    fn bindings(&self) -> Bindings {
        Bindings::Once
    }
    fn run<'a>(&'a self, _ctx: &'a CheckCtx) -> BoxFuture<'a, CheckOutcome> {
        async move {
            let validator = match SspValidator::global() {
                Ok(v) => v,
                Err(e) => {
                    return CheckOutcome::verdict(Verdict::HarnessError {
                        message: e.to_string(),
                    });
                }
            };
            for lv in &self.vectors {
                if let Err(message) = check(validator, lv) {
                    let f = Finding::fail(
                        "",
                        json!({"vector": lv.vector.id, "expect_valid": lv.vector.expect.valid}),
                        Value::String(message.clone()),
                        format!(
                            "validator vector {}::{} failed: {message}",
                            lv.group, lv.vector.id
                        ),
                    );
                    let reqs = &self.requirements;
                    return CheckOutcome::verdict(finding::found(
                        &self.id,
                        reqs,
                        self.must,
                        f,
                        &[],
                    ));
                }
            }
            CheckOutcome::verdict(Verdict::Pass)
        }
        .boxed()
    }
}
