//! Limits of §2 (PV-MF-2): the values the manifest declares are exactly the values enforced,
//! so both the manifest builder and every check read them from here.

use serde::Serialize;

/// The numeric limits a Parley server declares in its manifest and enforces (PV-MF-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Limits {
    /// Maximum body length in Unicode scalar values (PV-EN-2).
    pub body_max_chars: usize,
    /// `from.extension` pattern, declared as a regex (PV-EN-7); enforced by [`extension_ok`].
    pub extension_pattern: &'static str,
    /// Maximum request size in bytes (PV-TR-5).
    pub request_max_bytes: usize,
    /// `inbox` page size when `limit` is absent (PV-RD-3).
    pub inbox_limit_default: u32,
    /// Cap applied to `inbox` `limit` (PV-RD-3).
    pub inbox_limit_max: u32,
    /// Maximum number of evidence items on a dialectic act (PV-DI-1).
    pub evidence_max: usize,
    /// Maximum length of an evidence `ref` in Unicode scalar values (PV-DI-1).
    pub evidence_ref_max_chars: usize,
    /// Maximum length of `provenance.model` / `provenance.client` (PV-EN-1).
    pub provenance_max_chars: usize,
    /// Default per-token write quota per minute (PV-TR-5).
    pub writes_per_minute: u32,
    /// Deepest reply allowed (the root is depth 0). Not in parley-v1.md: an addition of the
    /// reference (declared here, so enforced exactly, PV-MF-2) that keeps every `read_thread`
    /// body within the 128-level nesting default JSON parsers accept (each reply level adds
    /// two levels: object + `replies`) and bounds the recursion of serialisers, so a hostile
    /// reply chain cannot overflow a server or client stack.
    pub reply_depth_max: usize,
}

/// The reference instance's limits (parley-v1.md §2).
pub const REFERENCE: Limits = Limits {
    body_max_chars: 500,
    extension_pattern: "^[a-z0-9][a-z0-9_-]{0,31}$",
    request_max_bytes: 65536,
    inbox_limit_default: 50,
    inbox_limit_max: 200,
    evidence_max: 8,
    evidence_ref_max_chars: 1024,
    provenance_max_chars: 200,
    writes_per_minute: 6000,
    reply_depth_max: 50,
};

/// PV-EN-7: `^[a-z0-9][a-z0-9_-]{0,31}$`, hand-coded so that the declared pattern and the
/// enforced one cannot drift through a regex dialect difference (the test below pins both).
pub fn extension_ok(ext: &str) -> bool {
    let bytes = ext.as_bytes();
    let Some((first, rest)) = bytes.split_first() else {
        return false;
    };
    let lower_digit = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    lower_digit(*first)
        && rest.len() <= 31
        && rest
            .iter()
            .all(|&b| lower_digit(b) || b == b'_' || b == b'-')
}

/// Number of Unicode scalar values (what PV-EN-2 counts), not bytes or UTF-16 units.
pub fn char_len(s: &str) -> usize {
    s.chars().count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extension_pattern_table() {
        // PV-EN-7
        let table: &[(&str, bool)] = &[
            ("a", true),
            ("0", true),
            ("worker-2", true),
            ("w_1-x", true),
            (&"a".repeat(32), true),
            (&"a".repeat(33), false),
            ("", false),
            ("-a", false),
            ("_a", false),
            ("A", false),
            ("a.b", false),
            ("a b", false),
            ("é", false),
        ];
        for (ext, ok) in table {
            assert_eq!(extension_ok(ext), *ok, "{ext:?}");
        }
    }

    #[test]
    fn char_len_counts_scalar_values() {
        // PV-EN-2: "é" is 2 bytes, 1 scalar; "😀" is 4 bytes, 2 UTF-16 units, 1 scalar.
        assert_eq!(char_len("é😀a"), 3);
    }
}
