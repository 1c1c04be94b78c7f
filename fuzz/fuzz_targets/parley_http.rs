//! Fuzz target `parley_http`: the body is `conform_fuzz_targets::parley::http` (replayed on stable by
//! `fuzz-targets/tests/replay.rs`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| conform_fuzz_targets::parley::http(data));
