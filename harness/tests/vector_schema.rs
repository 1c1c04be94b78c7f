//! Every vector file validated against `vectors/schemas/vector.schema.json` and the typed
//! model (one test per file), plus fixtures that must be rejected.

mod support;

use std::path::{Path, PathBuf};

use conform::parley::vectors::loader::{SchemaValidator, parse_file};
use libtest_mimic::{Arguments, Failed, Trial};

fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn check(path: &Path, want_valid: bool) -> Result<(), Failed> {
    let schema = SchemaValidator::load(&support::vectors::dir().join("schemas/vector.schema.json"))
        .map_err(|e| e.to_string())?;
    let catalogue = support::vectors::catalogue("parley")?;
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let mut problems = Vec::new();
    let parsed = parse_file(path, &text, Some(&schema), Some(&catalogue), &mut problems);
    match (want_valid, parsed.is_some() && problems.is_empty()) {
        (true, true) | (false, false) => Ok(()),
        (true, false) => Err(problems.join("\n").into()),
        (false, true) => Err("an invalid fixture was accepted".into()),
    }
}

fn main() {
    let args = Arguments::from_args();
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut trials = Vec::new();
    for (label, dir, valid) in [
        (
            "vectors/parley",
            support::vectors::dir().join("parley"),
            true,
        ),
        ("fixtures/parley", here.join("tests/fixtures/parley"), true),
        (
            "fixtures/invalid",
            here.join("tests/fixtures/invalid"),
            false,
        ),
    ] {
        for p in json_files(&dir) {
            let file = p
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            let name = format!(
                "{}/{label}/{file}",
                if valid { "valid" } else { "rejected" }
            );
            trials.push(Trial::test(name, move || check(&p, valid)));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
