//! Duplicate member names in a JSON text (`{"kind":"ask","kind":"decide"}`).
//!
//! RFC 8259 leaves their meaning open: `serde_json` keeps the last one, a typed deserializer
//! refuses the field, another library keeps the first. Two readers of the same bytes (the MCP
//! front and the MCP library, or two servers) may then act on different requests, so both
//! Parley bindings refuse such a body as malformed (→ `invalid_body`, or `-32600` when the
//! duplicate is in the JSON-RPC envelope itself) instead of choosing a reading.

use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// The path (member names and array indexes, outermost first) of the first member whose
/// name repeats one of its object; `None` when there is none or the text is not JSON that
/// `serde_json` reads (its own parse reports that).
pub fn first_duplicate(bytes: &[u8]) -> Option<Vec<String>> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let mut path = Walk.deserialize(&mut de).ok()??;
    path.reverse();
    Some(path)
}

/// Walks one JSON value; yields the path of a duplicate, innermost first.
struct Walk;

impl<'de> DeserializeSeed<'de> for Walk {
    type Value = Option<Vec<String>>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk {
    type Value = Option<Vec<String>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut found = None;
        let mut index = 0usize;
        while let Some(inner) = seq.next_element_seed(Self)? {
            if found.is_none()
                && let Some(mut path) = inner
            {
                path.push(index.to_string());
                found = Some(path);
            }
            index += 1;
        }
        Ok(found)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut seen = HashSet::new();
        let mut found = None;
        while let Some(key) = map.next_key::<String>()? {
            let inner = map.next_value_seed(Self)?;
            if found.is_some() {
                continue;
            }
            if let Some(mut path) = inner {
                path.push(key);
                found = Some(path);
            } else if !seen.insert(key.clone()) {
                found = Some(vec![key]);
            }
        }
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dup(text: &str) -> Option<Vec<String>> {
        first_duplicate(text.as_bytes())
    }

    #[test]
    fn finds_the_first_duplicate_with_its_path() {
        assert_eq!(dup(r#"{"a":1,"b":2}"#), None);
        assert_eq!(dup(r#"{"a":1,"a":2}"#), Some(vec!["a".to_owned()]));
        assert_eq!(dup(r#"{"a":1,"\u0061":2}"#), Some(vec!["a".to_owned()]));
        assert_eq!(
            dup(r#"{"p":{"args":[{"x":1},{"y":1,"y":2}]}}"#),
            Some(
                vec!["p", "args", "1", "y"]
                    .into_iter()
                    .map(String::from)
                    .collect()
            )
        );
        assert_eq!(dup(r#"[{"a":1},{"a":1}]"#), None);
        assert_eq!(dup("{not json"), None);
        assert_eq!(
            dup(&format!("{}{}", "[".repeat(500), "]".repeat(500))),
            None
        );
    }
}
