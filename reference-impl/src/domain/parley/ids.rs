//! Opaque ids (`th_N`, `msg_N`, `cl_N`, `ev_N`) and their plain-number forms (PV-EN-5).

use serde_json::Value;

/// Which id family a value belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdKind {
    /// `th_N`
    Thread,
    /// `msg_N`
    Message,
    /// `cl_N`
    Claim,
    /// `ev_N`
    Event,
}

impl IdKind {
    /// The opaque key's prefix (with the underscore).
    pub fn prefix(self) -> &'static str {
        match self {
            Self::Thread => "th_",
            Self::Message => "msg_",
            Self::Claim => "cl_",
            Self::Event => "ev_",
        }
    }
}

/// A row id as its opaque key (`msg_12`): written by `Display`, and serialised as that
/// string without an intermediate `String`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Id(pub IdKind, pub i64);

impl std::fmt::Display for Id {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.0.prefix(), self.1)
    }
}

impl serde::Serialize for Id {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Formats a row id as its opaque key.
pub fn format_id(kind: IdKind, n: i64) -> String {
    Id(kind, n).to_string()
}

/// The digits of an id or cursor (1–18 ASCII digits), as a number.
pub(crate) fn parse_digits(s: &str) -> Option<i64> {
    if s.is_empty() || s.len() > 18 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// PV-EN-5: accepts `"th_12"`, `12` (JSON integer) or `"12"`. `None` = syntactically not an
/// id of this family (a 400 for the caller); an id that parses but does not exist is a 404.
pub fn parse_id(kind: IdKind, v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64().filter(|n| *n >= 0),
        Value::String(s) => parse_digits(s.strip_prefix(kind.prefix()).unwrap_or(s)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn forms() {
        // PV-EN-5
        let table = [
            (json!("th_12"), Some(12)),
            (json!(12), Some(12)),
            (json!("12"), Some(12)),
            (json!("msg_12"), None),
            (json!("th_"), None),
            (json!("th_-1"), None),
            (json!(-1), None),
            (json!(1.5), None),
            (json!(true), None),
            (json!(""), None),
            (json!(" 12"), None),
        ];
        for (v, want) in table {
            assert_eq!(parse_id(IdKind::Thread, &v), want, "{v}");
        }
        assert_eq!(parse_id(IdKind::Message, &json!("msg_40")), Some(40));
        assert_eq!(format_id(IdKind::Claim, 3), "cl_3");
    }
}
