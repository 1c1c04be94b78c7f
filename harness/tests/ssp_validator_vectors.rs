//! SSP validator vectors (`vectors/ssp/validator/*.json`): every vector is its own named,
//! filterable test (libtest-mimic), `<group>::<id>`, kind = document type. Format:
//! `vectors/README.md`, "SSP validator vectors"; each file is first checked against
//! `vectors/schemas/ssp-validator-vector.schema.json`, every cited requirement must exist in
//! `vectors/requirements/ssp.toml`.
//!
//! Set `SSP_VECTORS_DIR` to run another directory of vectors, `SSP_VECTORS_SHOW=1` (with
//! `--nocapture`) to print every report.

// Test code: a failed expectation is a test failure, so panicking helpers are the point.
#![expect(clippy::expect_used)]

mod support;

use conform::ssp::validator::SspValidator;
use conform::ssp::vectors::{check, load_dir};
use libtest_mimic::{Arguments, Trial};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::PathBuf;

fn catalogue_ids() -> BTreeSet<String> {
    let cat = support::vectors::catalogue("ssp").expect("ssp.toml loads");
    cat.requirements.iter().map(|r| r.id.clone()).collect()
}

fn main() {
    let args = Arguments::from_args();
    let dir = std::env::var_os("SSP_VECTORS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| support::vectors::dir().join("ssp/validator"));
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(
            support::vectors::dir().join("schemas/ssp-validator-vector.schema.json"),
        )
        .expect("read vector schema"),
    )
    .expect("vector schema is JSON");
    let known = catalogue_ids();
    let vectors = load_dir(&dir, Some(&schema), Some(&known)).unwrap_or_else(|e| panic!("{e}"));
    let show = std::env::var_os("SSP_VECTORS_SHOW").is_some();
    let trials = vectors
        .into_iter()
        .map(|lv| {
            let name = format!("{}::{}", lv.group, lv.vector.id);
            let kind = lv.vector.doc_type.as_str();
            Trial::test(name, move || {
                let validator = SspValidator::global().map_err(|e| e.to_string())?;
                let report = check(validator, &lv)?;
                if show {
                    println!(
                        "{}: {}",
                        lv.vector.id,
                        serde_json::to_string(&report).unwrap_or_default()
                    );
                }
                Ok(())
            })
            .with_kind(kind)
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
