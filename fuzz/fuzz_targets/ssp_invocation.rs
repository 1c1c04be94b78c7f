//! Fuzz target `ssp_invocation`: the body is `conform_fuzz_targets::ssp::invocation` (replayed on stable by
//! `fuzz-targets/tests/replay.rs`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| conform_fuzz_targets::ssp::invocation(data));
