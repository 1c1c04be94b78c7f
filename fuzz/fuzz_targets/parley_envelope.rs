//! Fuzz target `parley_envelope`: the body is `conform_fuzz_targets::parley::envelope` (replayed on stable by
//! `fuzz-targets/tests/replay.rs`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| conform_fuzz_targets::parley::envelope(data));
