//! Seed corpora from the golden vectors: post arguments and raw bodies for the Parley
//! targets, JSON-RPC bodies for MCP, the validator vectors' documents for SSP, and the
//! vector files, profiles and a baseline themselves for the harness's parsers; fixed
//! pseudo-random operation sequences for the differential target.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::harness::{self, Parser};

/// Seeds per target name (deduplicated, in a stable order).
pub type Corpora = BTreeMap<&'static str, Vec<Vec<u8>>>;

fn walk_steps(v: &Value, out: &mut Corpora) {
    let steps = v
        .get("vectors")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    for step in steps.flat_map(|v| {
        v.get("steps")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
    }) {
        if step.get("op").and_then(Value::as_str) == Some("post")
            && let Some(args) = step.get("args")
        {
            push(out, "parley_envelope", args.to_string().into_bytes());
            push(out, "parley_http", args.to_string().into_bytes());
        }
        if let Some(http) = step.get("http") {
            for body in [
                http.get("body").and_then(Value::as_str).map(str::to_string),
                http.get("body_json").map(Value::to_string),
            ]
            .into_iter()
            .flatten()
            {
                push(out, "parley_envelope", body.clone().into_bytes());
                push(out, "parley_http", body.into_bytes());
            }
        }
        if let Some(mcp) = step.get("mcp") {
            for body in [
                mcp.get("body").and_then(Value::as_str).map(str::to_string),
                mcp.get("body_json").map(Value::to_string),
            ]
            .into_iter()
            .flatten()
            {
                for era in [0u8, 1] {
                    let mut seed = vec![era];
                    seed.extend_from_slice(body.as_bytes());
                    push(out, "parley_mcp", seed);
                }
            }
        }
    }
}

fn push(out: &mut Corpora, target: &'static str, seed: Vec<u8>) {
    let seeds = out.entry(target).or_default();
    if !seeds.contains(&seed) {
        seeds.push(seed);
    }
}

fn files(dir: &Path, ext: &str) -> Vec<(String, String)> {
    let mut found: Vec<_> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .filter_map(|p| Some((p.display().to_string(), std::fs::read_to_string(&p).ok()?)))
        .collect();
    found.sort();
    found
}

/// The seed corpora of every target from the vectors directory.
pub fn from_vectors(vectors: &Path) -> Corpora {
    let mut out = Corpora::new();
    for (_, text) in files(&vectors.join("parley"), "json") {
        if let Ok(v) = serde_json::from_str::<Value>(&text) {
            push_vector_files(&v, &mut out);
            walk_steps(&v, &mut out);
        }
    }
    for (_, text) in files(&vectors.join("ssp/validator"), "json") {
        let Ok(v) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        for doc in v
            .get("bases")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|b| b.values())
        {
            push(&mut out, "ssp_documents", doc.to_string().into_bytes());
            push(&mut out, "ssp_invocation", doc.to_string().into_bytes());
        }
    }
    // Profiles and baselines are both TOML: each seed goes to both parsers.
    let baseline =
        b"format_version = 1\n[[expected_failure]]\ncheck = \"envelope/*\"\nreason = \"known\"\n";
    let profiles = files(&vectors.join("ssp/provider"), "toml");
    let tomls = profiles
        .iter()
        .map(|(_, t)| t.as_bytes())
        .chain([&baseline[..]]);
    for text in tomls {
        for p in [Parser::Profile, Parser::Baseline] {
            push(&mut out, "harness_parsers", harness::seed(p, text));
        }
    }
    push(
        &mut out,
        "ssp_invocation",
        br#"{"inputs":{"text":"hi"}}"#.to_vec(),
    );
    // The differential target reads operations, not documents: fixed pseudo-random
    // sequences, the same on every machine.
    for i in 0..MODEL_SEEDS {
        push(&mut out, "parley_model", noise(i, 160));
    }
    out
}

/// The vector-file seeds of `harness_parsers`: one small file per vector (the file's own
/// header, one vector), not the whole area file. An area file is up to 600 KB, and a target
/// seeded with it parses that much per execution (a few hundred executions per second);
/// the loader's paths are the same for one vector as for a thousand.
fn push_vector_files(file: &Value, out: &mut Corpora) {
    let Some(obj) = file.as_object() else {
        return;
    };
    let vectors = obj.get("vectors").and_then(Value::as_array);
    for v in vectors.into_iter().flatten() {
        let mut one = obj.clone();
        one.insert("vectors".into(), Value::Array(vec![v.clone()]));
        let bytes = Value::Object(one).to_string().into_bytes();
        if bytes.len() < HARNESS_PARSERS_MAX_LEN {
            push(
                out,
                "harness_parsers",
                harness::seed(Parser::Vectors, &bytes),
            );
        }
    }
}

/// The longest `harness_parsers` input the smoke run lets libFuzzer build (`-max_len` in
/// `fuzz/smoke.sh`; every single-vector file fits).
pub const HARNESS_PARSERS_MAX_LEN: usize = 16 * 1024;

/// Seeds of the differential target `parley_model`.
pub const MODEL_SEEDS: u64 = 48;

/// `len` pseudo-random bytes from stream `seed` (splitmix64: deterministic, no dependency).
pub fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        out.extend_from_slice(&(z ^ (z >> 31)).to_le_bytes());
    }
    out.truncate(len);
    out
}

/// Writes the corpora as `DIR/<target>/seed-<n>` (cargo fuzz's corpus layout).
pub fn write(corpora: &Corpora, dir: &Path) -> std::io::Result<usize> {
    let mut n = 0;
    for (target, seeds) in corpora {
        let d = dir.join(target);
        std::fs::create_dir_all(&d)?;
        for (i, seed) in seeds.iter().enumerate() {
            std::fs::write(d.join(format!("seed-{i:04}")), seed)?;
            n += 1;
        }
    }
    Ok(n)
}
