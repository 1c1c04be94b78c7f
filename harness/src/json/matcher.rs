//! Partial JSON matching (the MATCHER of `vectors/README.md`).
//!
//! A matcher states only what the rule demands; everything else in a response is free
//! (PV-RS-2: "extra members are allowed").

// `Mismatch` is only built on the (cold) failure path and carries the expected/observed JSON the
// report needs; boxing it would add noise to every matcher arm for no measurable gain.
#![expect(clippy::result_large_err)]

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use regex::Regex;
use serde_json::{Value, json};

use super::{as_operator, pointer_token, type_name};

/// Where and how an observed value differs from a matcher.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// JSON pointer to the offending member.
    pub pointer: String,
    /// The matcher at that place.
    pub expected: Value,
    /// The observed value (`null` when the member is absent).
    pub observed: Value,
    /// One sentence.
    pub message: String,
}

impl Mismatch {
    fn new(
        pointer: &str,
        expected: &Value,
        observed: Option<&Value>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            pointer: pointer.to_string(),
            expected: expected.clone(),
            observed: observed.cloned().unwrap_or(Value::Null),
            message: message.into(),
        }
    }
}

static REGEX_CACHE: LazyLock<Mutex<HashMap<String, Arc<Regex>>>> = LazyLock::new(Default::default);

fn regex(pattern: &str) -> Result<Arc<Regex>, String> {
    let mut cache = REGEX_CACHE
        .lock()
        .map_err(|_| "regex cache poisoned".to_string())?;
    if let Some(r) = cache.get(pattern) {
        return Ok(r.clone());
    }
    let r = Arc::new(Regex::new(pattern).map_err(|e| format!("invalid $regex {pattern:?}: {e}"))?);
    cache.insert(pattern.to_string(), r.clone());
    Ok(r)
}

fn numbers_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if let (Some(x), Some(y)) = (x.as_i64(), y.as_i64()) {
                x == y
            } else if let (Some(x), Some(y)) = (x.as_u64(), y.as_u64()) {
                x == y
            } else {
                x.as_f64() == y.as_f64()
            }
        }
        _ => false,
    }
}

/// Matches `observed` (None = absent member) against `matcher`; `pointer` is where we are.
pub fn match_value(
    matcher: &Value,
    observed: Option<&Value>,
    pointer: &str,
) -> Result<(), Mismatch> {
    if let Some((op, arg)) = as_operator(matcher) {
        return match_operator(matcher, op, arg, observed, pointer);
    }
    let Some(obs) = observed else {
        return Err(Mismatch::new(pointer, matcher, None, "member is missing"));
    };
    match matcher {
        Value::Object(m) => {
            let Some(o) = obs.as_object() else {
                return Err(Mismatch::new(
                    pointer,
                    matcher,
                    Some(obs),
                    format!("expected an object, got {}", type_name(obs)),
                ));
            };
            for (k, sub) in m {
                let p = format!("{pointer}/{}", pointer_token(k));
                match_value(sub, o.get(k), &p)?;
            }
            Ok(())
        }
        Value::Array(m) => {
            let Some(o) = obs.as_array() else {
                return Err(Mismatch::new(
                    pointer,
                    matcher,
                    Some(obs),
                    format!("expected an array, got {}", type_name(obs)),
                ));
            };
            if m.len() != o.len() {
                return Err(Mismatch::new(
                    pointer,
                    matcher,
                    Some(obs),
                    format!("expected an array of {} elements, got {}", m.len(), o.len()),
                ));
            }
            for (i, (sub, el)) in m.iter().zip(o).enumerate() {
                match_value(sub, Some(el), &format!("{pointer}/{i}"))?;
            }
            Ok(())
        }
        Value::Number(_) => {
            if numbers_equal(matcher, obs) {
                Ok(())
            } else {
                Err(Mismatch::new(pointer, matcher, Some(obs), "value differs"))
            }
        }
        _ => {
            if matcher == obs {
                Ok(())
            } else {
                Err(Mismatch::new(pointer, matcher, Some(obs), "value differs"))
            }
        }
    }
}

fn matches(matcher: &Value, observed: Option<&Value>, pointer: &str) -> bool {
    match_value(matcher, observed, pointer).is_ok()
}

fn match_operator(
    whole: &Value,
    op: &str,
    arg: &Value,
    observed: Option<&Value>,
    pointer: &str,
) -> Result<(), Mismatch> {
    let fail = |msg: String| Err(Mismatch::new(pointer, whole, observed, msg));
    if op == "$absent" {
        return match observed {
            None => Ok(()),
            Some(_) => fail("member must be absent".into()),
        };
    }
    if op == "$not" {
        return if matches(arg, observed, pointer) {
            fail("value matches the negated matcher".into())
        } else {
            Ok(())
        };
    }
    if op == "$one_of" {
        let alts = arg.as_array().map(Vec::as_slice).unwrap_or_default();
        return if alts.iter().any(|a| matches(a, observed, pointer)) {
            Ok(())
        } else {
            fail("value matches none of the alternatives".into())
        };
    }
    let Some(obs) = observed else {
        return fail("member is missing".into());
    };
    match op {
        "$any" => Ok(()),
        "$type" => {
            let want = arg.as_str().unwrap_or_default();
            let got = type_name(obs);
            let ok = got == want || (want == "number" && got == "integer");
            if ok {
                Ok(())
            } else {
                fail(format!("expected type {want}, got {got}"))
            }
        }
        "$len" => {
            let n = arg.as_u64().unwrap_or(u64::MAX);
            let len = match obs {
                Value::String(s) => s.chars().count() as u64,
                Value::Array(a) => a.len() as u64,
                _ => {
                    return fail(format!(
                        "$len applies to strings and arrays, got {}",
                        type_name(obs)
                    ));
                }
            };
            if len == n {
                Ok(())
            } else {
                fail(format!("expected length {n}, got {len}"))
            }
        }
        "$contains" | "$not_contains" | "$ordered" => {
            let Some(items) = obs.as_array() else {
                return fail(format!("expected an array, got {}", type_name(obs)));
            };
            let wanted = arg.as_array().map(Vec::as_slice).unwrap_or_default();
            match op {
                "$contains" => {
                    for (i, w) in wanted.iter().enumerate() {
                        if !items
                            .iter()
                            .enumerate()
                            .any(|(j, el)| matches(w, Some(el), &format!("{pointer}/{j}")))
                        {
                            return fail(format!("no element matches $contains[{i}]"));
                        }
                    }
                    Ok(())
                }
                "$not_contains" => {
                    for (j, el) in items.iter().enumerate() {
                        if wanted
                            .iter()
                            .any(|w| matches(w, Some(el), &format!("{pointer}/{j}")))
                        {
                            return Err(Mismatch::new(
                                &format!("{pointer}/{j}"),
                                whole,
                                Some(el),
                                "element matches a $not_contains matcher",
                            ));
                        }
                    }
                    Ok(())
                }
                _ => {
                    let mut next = 0usize;
                    for (i, w) in wanted.iter().enumerate() {
                        let found = (next..items.len())
                            .find(|&j| matches(w, Some(&items[j]), &format!("{pointer}/{j}")));
                        match found {
                            Some(j) => next = j + 1,
                            None => {
                                return fail(format!(
                                    "$ordered[{i}] not found after the previous match"
                                ));
                            }
                        }
                    }
                    Ok(())
                }
            }
        }
        "$prefix" => {
            let p = arg.as_str().unwrap_or_default();
            match obs.as_str() {
                Some(s) if s.starts_with(p) => Ok(()),
                Some(_) => fail(format!("expected a string starting with {p:?}")),
                None => fail(format!("expected a string, got {}", type_name(obs))),
            }
        }
        "$regex" => {
            let pattern = arg.as_str().unwrap_or_default();
            let re = match regex(pattern) {
                Ok(r) => r,
                Err(e) => return fail(e),
            };
            match obs.as_str() {
                Some(s) if re.is_match(s) => Ok(()),
                Some(_) => fail(format!("string does not match {pattern:?}")),
                None => fail(format!("expected a string, got {}", type_name(obs))),
            }
        }
        other => fail(format!("unknown matcher operator {other}")),
    }
}

/// Checks a matcher's operators at load time (unknown operator, bad argument type).
pub fn validate_matcher(m: &Value, at: &str) -> Result<(), String> {
    if let Some((op, arg)) = as_operator(m) {
        if super::placeholders::GENERATORS.contains(&op) {
            return Ok(());
        }
        let ok = match op {
            "$any" | "$absent" => arg == &json!(true),
            "$type" => matches!(
                arg.as_str(),
                Some("string" | "number" | "integer" | "boolean" | "null" | "object" | "array")
            ),
            // A count, or a placeholder / generator resolving to one before matching
            // (`"$limits.body_max_chars"`, `{"$sum": [...]}`).
            "$len" => {
                arg.is_u64()
                    || arg.as_str().is_some_and(|s| s.starts_with('$'))
                    || as_operator(arg)
                        .is_some_and(|(g, _)| super::placeholders::GENERATORS.contains(&g))
            }
            "$prefix" => arg.is_string(),
            "$regex" => arg.as_str().is_some_and(|p| regex(p).is_ok()),
            "$not" => return validate_matcher(arg, at),
            "$contains" | "$not_contains" | "$one_of" | "$ordered" => {
                let Some(items) = arg.as_array() else {
                    return Err(format!("{at}: {op} needs an array"));
                };
                for (i, it) in items.iter().enumerate() {
                    validate_matcher(it, &format!("{at}/{op}/{i}"))?;
                }
                true
            }
            _ => return Err(format!("{at}: unknown matcher operator {op}")),
        };
        return if ok {
            Ok(())
        } else {
            Err(format!("{at}: bad argument for {op}: {arg}"))
        };
    }
    match m {
        Value::Object(o) => {
            for (k, v) in o {
                validate_matcher(v, &format!("{at}/{}", pointer_token(k)))?;
            }
            Ok(())
        }
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                validate_matcher(v, &format!("{at}/{i}"))?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
#[expect(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;

    fn ok(m: Value, o: Value) -> bool {
        match_value(&m, Some(&o), "").is_ok()
    }

    #[test]
    fn literals_objects_arrays() {
        assert!(ok(json!({"a": 1}), json!({"a": 1.0, "b": 2})));
        assert!(!ok(json!({"a": 1}), json!({"a": 2})));
        assert!(!ok(json!([1, 2]), json!([1, 2, 3])));
        assert!(ok(json!([1, {"x": "y"}]), json!([1, {"x": "y", "z": 0}])));
        let e = match_value(
            &json!({"a": {"b": "c"}}),
            Some(&json!({"a": {"b": "d"}})),
            "",
        )
        .unwrap_err();
        assert_eq!(e.pointer, "/a/b");
    }

    #[test]
    fn operators() {
        assert!(ok(json!({"a": {"$any": true}}), json!({"a": null})));
        assert!(!ok(json!({"a": {"$any": true}}), json!({})));
        assert!(ok(json!({"a": {"$absent": true}}), json!({})));
        assert!(ok(json!({"$len": 2}), json!("😀é")));
        assert!(ok(json!({"$type": "integer"}), json!(3)));
        assert!(!ok(json!({"$type": "integer"}), json!(3.5)));
        assert!(ok(
            json!({"$contains": [{"k": 2}]}),
            json!([{"k": 1}, {"k": 2}])
        ));
        assert!(ok(json!({"$not_contains": [{"k": 3}]}), json!([{"k": 1}])));
        assert!(ok(json!({"$ordered": [1, 3]}), json!([1, 2, 3])));
        assert!(!ok(json!({"$ordered": [3, 1]}), json!([1, 2, 3])));
        assert!(ok(json!({"$regex": "^ev_[0-9]+$"}), json!("ev_12")));
        assert!(ok(json!({"$prefix": "th_"}), json!("th_1")));
        assert!(ok(json!({"$one_of": ["a", "b"]}), json!("b")));
        assert!(ok(json!({"$not": "a"}), json!("b")));
        assert!(validate_matcher(&json!({"x": {"$bogus": 1}}), "").is_err());
    }
}
