//! The harness's own parsers: a hostile vector file, profile or baseline is a clear error,
//! never a panic.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use conform::engine::baseline::Baseline;
use conform::engine::protocol::{Protocol, parse_profile};
use conform::parley::vectors::loader::parse_file;

fn protocols() -> &'static [Arc<dyn Protocol>] {
    static PROTOCOLS: OnceLock<Vec<Arc<dyn Protocol>>> = OnceLock::new();
    PROTOCOLS.get_or_init(conform::registry::protocols)
}

/// The text as a vector file, a target profile and a baseline.
pub fn parsers(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut problems = Vec::new();
    let _ = parse_file(Path::new("fuzz.json"), text, None, None, &mut problems);
    let _ = parse_profile(text, protocols());
    let _ = Baseline::parse(text, "fuzz.toml");
}
