//! Fuzz target `parley_mcp`: the body is `conform_fuzz_targets::parley::mcp` (replayed on stable by
//! `fuzz-targets/tests/replay.rs`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| conform_fuzz_targets::parley::mcp(data));
