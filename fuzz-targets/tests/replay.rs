//! Corpus replay on stable (issue 11 item 5): every fuzz target runs over its seed corpus
//! (generated from the golden vectors), the committed regression inputs of
//! `fuzz/regressions/<target>/` and any local `fuzz/corpus/<target>/` a campaign left. A
//! target panics only on a violated oracle, so a passing replay means every input passes.
//! Prints each target's executions per second (debug build: a lower bound).

use std::path::{Path, PathBuf};
use std::time::Instant;

use conform_fuzz_targets::{TARGETS, seeds};

fn saved(dir: &Path) -> Vec<Vec<u8>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    paths.iter().filter_map(|p| std::fs::read(p).ok()).collect()
}

#[test]
fn every_target_passes_its_corpus() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let corpora = seeds::from_vectors(&conform::engine::protocol::default_vectors_dir());
    for (name, target) in TARGETS {
        let mut inputs = corpora.get(name).cloned().unwrap_or_default();
        assert!(
            !inputs.is_empty() || name == "parley_http",
            "{name}: no seeds"
        );
        inputs.extend(saved(&root.join("fuzz/regressions").join(name)));
        inputs.extend(saved(&root.join("fuzz/corpus").join(name)));
        // Arbitrary-driven targets also get plain byte patterns.
        inputs.extend((0u8..=255).map(|b| vec![b; usize::from(b) % 64 + 1]));
        let started = Instant::now();
        for input in &inputs {
            target(input);
        }
        let secs = started.elapsed().as_secs_f64().max(1e-6);
        println!(
            "{name}: {} inputs, {:.0} exec/s",
            inputs.len(),
            inputs.len() as f64 / secs
        );
    }
}
