//! Fuzz target `parley_model` (differential): the body is
//! `conform_fuzz_targets::differential::model` — the reference and the harness's Parley model
//! must agree on every operation sequence (replayed on stable by `fuzz-targets/tests/replay.rs`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| conform_fuzz_targets::differential::model(data));
