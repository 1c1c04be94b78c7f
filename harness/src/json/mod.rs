//! Protocol-neutral JSON helpers shared by every wing: RFC 6901 pointer escaping, JSON
//! Schema type names, the partial matcher of golden vectors ([`matcher`]) and its
//! placeholders ([`placeholders`]).
//!
//! This module imports nothing else of the crate, so any layer may use it without a cycle.

pub mod matcher;
pub mod placeholders;

use serde_json::Value;

/// If `v` is an operator object, its name and argument.
pub fn as_operator(v: &Value) -> Option<(&str, &Value)> {
    let obj = v.as_object()?;
    if obj.len() != 1 {
        return None;
    }
    let (k, a) = obj.iter().next()?;
    k.starts_with('$').then_some((k.as_str(), a))
}

/// Escapes one JSON pointer token (RFC 6901).
pub fn pointer_token(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

/// JSON type name of a value, as JSON Schema spells it (`integer` for whole numbers).
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}
