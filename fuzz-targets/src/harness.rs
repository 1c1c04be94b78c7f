//! The harness's own parsers: a hostile vector file, profile or baseline is a clear error,
//! never a panic.

use std::path::Path;

use conform::engine::baseline::Baseline;
use conform::engine::protocol::parse_profile_sections;
use conform::parley::vectors::loader::parse_file;

/// Which parser an input goes to: its first byte modulo 3 (the seeds start with `0`, `1`
/// or `2`, see [`seed`]). One parser per execution: each of the three used to read every
/// input, so two of them spent most executions failing on the others' formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parser {
    /// A golden-vector file (JSON).
    Vectors,
    /// A target profile (TOML).
    Profile,
    /// A baseline (TOML).
    Baseline,
}

impl Parser {
    fn of(selector: u8) -> Self {
        match selector % 3 {
            0 => Self::Vectors,
            1 => Self::Profile,
            _ => Self::Baseline,
        }
    }

    /// The first byte of this parser's seeds.
    pub fn selector(self) -> u8 {
        match self {
            Self::Vectors => b'0',
            Self::Profile => b'1',
            Self::Baseline => b'2',
        }
    }
}

/// A `harness_parsers` seed: `text` for `parser`.
pub fn seed(parser: Parser, text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + 1);
    out.push(parser.selector());
    out.extend_from_slice(text);
    out
}

/// The rest of `data` as what its first byte selects.
pub fn parsers(data: &[u8]) {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    match Parser::of(selector) {
        Parser::Vectors => {
            let mut problems = Vec::new();
            let _ = parse_file(Path::new("fuzz.json"), text, None, None, &mut problems);
        }
        // What each protocol reads of a profile, not the protocols themselves: their
        // whole machinery linked in made this target's coverage map 6 times larger.
        Parser::Profile => {
            let _ = parse_profile_sections(text, &conform::registry::profile_sections());
        }
        Parser::Baseline => {
            let _ = Baseline::parse(text, "fuzz.toml");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_seed_reaches_the_parser_it_was_made_for() {
        for p in [Parser::Vectors, Parser::Profile, Parser::Baseline] {
            assert_eq!(Parser::of(seed(p, b"x")[0]), p);
        }
    }
}
