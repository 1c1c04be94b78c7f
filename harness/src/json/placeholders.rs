//! Captures, built-ins and generators (`$name`, `${name}`, `{"$repeat": …}`, …).
//!
//! Vectors stay small and readable while still sending 500 emoji or reusing the thread a
//! previous step created; resolution happens right before a step is sent or matched.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Value};

use super::as_operator;

/// Generator operators (replaced by a value before sending/matching).
pub const GENERATORS: &[&str] = &[
    "$repeat",
    "$concat",
    "$number_of",
    "$string_number_of",
    "$time_from_now",
    "$sum",
    "$fill",
    "$take",
];

static WHOLE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^\$([A-Za-z_][A-Za-z0-9_.\-]*)$").ok());
static INNER: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"\$\{([A-Za-z_][A-Za-z0-9_.\-]*)\}").ok());

/// Variables visible to a vector: captures and built-ins.
#[derive(Debug, Clone, Default)]
pub struct Env {
    vars: BTreeMap<String, Value>,
}

impl Env {
    /// An empty environment.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `name` (without `$`).
    pub fn set(&mut self, name: impl Into<String>, value: Value) {
        self.vars.insert(name.into(), value);
    }

    /// Looks `name` up.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.vars.get(name)
    }

    /// Resolves every placeholder and generator inside `v`.
    pub fn resolve(&self, v: &Value) -> Result<Value, String> {
        match v {
            Value::String(s) => self.resolve_str(s),
            Value::Array(a) => a
                .iter()
                .map(|x| self.resolve(x))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array),
            Value::Object(o) => {
                if let Some((op, arg)) = as_operator(v)
                    && GENERATORS.contains(&op)
                {
                    return self.generate(op, arg);
                }
                let mut out = Map::with_capacity(o.len());
                for (k, x) in o {
                    out.insert(k.clone(), self.resolve(x)?);
                }
                Ok(Value::Object(out))
            }
            other => Ok(other.clone()),
        }
    }

    /// Resolves a string (`$name` whole, or `${name}` inside).
    pub fn resolve_str(&self, s: &str) -> Result<Value, String> {
        if !s.contains('$') {
            return Ok(Value::String(s.to_string()));
        }
        if let Some(re) = WHOLE.as_ref()
            && let Some(c) = re.captures(s)
        {
            let name = &c[1];
            return self
                .get(name)
                .cloned()
                .ok_or_else(|| format!("unknown placeholder ${name}"));
        }
        let Some(re) = INNER.as_ref() else {
            return Ok(Value::String(s.to_string()));
        };
        let mut err = None;
        let out = re.replace_all(s, |c: &regex::Captures<'_>| match self.get(&c[1]) {
            Some(Value::String(x)) => x.clone(),
            Some(other) => other.to_string(),
            None => {
                err = Some(format!("unknown placeholder ${{{}}}", &c[1]));
                String::new()
            }
        });
        match err {
            Some(e) => Err(e),
            None => Ok(Value::String(out.into_owned())),
        }
    }

    fn generate(&self, op: &str, arg: &Value) -> Result<Value, String> {
        let arg = self.resolve(arg)?;
        match op {
            "$repeat" => {
                let s = arg
                    .get("s")
                    .and_then(Value::as_str)
                    .ok_or("$repeat needs a string s")?;
                let n = arg
                    .get("n")
                    .and_then(Value::as_u64)
                    .ok_or("$repeat needs an integer n")?;
                if n > 10_000_000 {
                    return Err("$repeat n too large".into());
                }
                Ok(Value::String(s.repeat(n as usize)))
            }
            "$concat" => {
                let parts = arg.as_array().ok_or("$concat needs an array")?;
                let mut out = String::new();
                for p in parts {
                    match p {
                        Value::String(s) => out.push_str(s),
                        other => out.push_str(&other.to_string()),
                    }
                }
                Ok(Value::String(out))
            }
            "$number_of" | "$string_number_of" => {
                let key = match &arg {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    other => return Err(format!("{op} needs an opaque key, got {other}")),
                };
                let digits: String = key.rsplit('_').next().unwrap_or_default().to_string();
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(format!("{op}: {key:?} has no trailing number"));
                }
                if op == "$string_number_of" {
                    return Ok(Value::String(digits));
                }
                let n: u64 = digits.parse().map_err(|e| format!("{op}: {e}"))?;
                Ok(Value::from(n))
            }
            "$time_from_now" => {
                let secs = arg.as_i64().ok_or("$time_from_now needs an integer")?;
                let t = chrono::Utc::now() + chrono::Duration::seconds(secs);
                Ok(Value::String(
                    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                ))
            }
            "$fill" => {
                // Exactly `chars` code points: whole copies of `s`, then "a" to make up the
                // rest — a boundary body for whatever limit the target declares (PV-MF-2).
                let s = arg
                    .get("s")
                    .and_then(Value::as_str)
                    .ok_or("$fill needs a string s")?;
                let chars = arg
                    .get("chars")
                    .and_then(Value::as_u64)
                    .ok_or("$fill needs an integer chars")?;
                let unit = s.chars().count() as u64;
                if unit == 0 || chars > 10_000_000 {
                    return Err("$fill needs a non-empty s and chars ≤ 10,000,000".into());
                }
                let mut out = s.repeat((chars / unit) as usize);
                out.push_str(&"a".repeat((chars % unit) as usize));
                Ok(Value::String(out))
            }
            "$take" => {
                // `n` items cycling through `items`: a list as long as a declared limit.
                let items = arg
                    .get("items")
                    .and_then(Value::as_array)
                    .filter(|a| !a.is_empty())
                    .ok_or("$take needs a non-empty array items")?;
                let n = arg
                    .get("n")
                    .and_then(Value::as_u64)
                    .filter(|n| *n <= 100_000)
                    .ok_or("$take needs an integer n ≤ 100,000")?;
                Ok(Value::Array(
                    items.iter().cycle().take(n as usize).cloned().collect(),
                ))
            }
            "$sum" => {
                // Integer arithmetic on declared limits (`{"$sum": ["$limits.body_max_chars", 1]}`).
                let terms = arg.as_array().ok_or("$sum needs an array of integers")?;
                let mut sum: i64 = 0;
                for t in terms {
                    let n = t
                        .as_i64()
                        .ok_or_else(|| format!("$sum needs integers, got {t}"))?;
                    sum = sum.checked_add(n).ok_or("$sum overflows")?;
                }
                Ok(Value::from(sum))
            }
            other => Err(format!("unknown generator {other}")),
        }
    }
}

/// Placeholder names a value uses (`$x`, `${x}`), to check captures are defined before use.
pub fn referenced_names(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) if s.contains('$') => {
            if let Some(re) = WHOLE.as_ref()
                && let Some(c) = re.captures(s)
            {
                out.push(c[1].to_string());
                return;
            }
            if let Some(re) = INNER.as_ref() {
                out.extend(re.captures_iter(s).map(|c| c[1].to_string()));
            }
        }
        Value::Array(a) => a.iter().for_each(|x| referenced_names(x, out)),
        Value::Object(o) => o.values().for_each(|x| referenced_names(x, out)),
        _ => {}
    }
}

#[cfg(test)]
#[expect(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn resolves() {
        let mut env = Env::new();
        env.set("thread", json!("th_12"));
        env.set("run", json!("r1"));
        assert_eq!(env.resolve(&json!("$thread")).unwrap(), json!("th_12"));
        assert_eq!(env.resolve(&json!("hi ${run}!")).unwrap(), json!("hi r1!"));
        assert_eq!(
            env.resolve(&json!({"$number_of": "$thread"})).unwrap(),
            json!(12)
        );
        assert_eq!(
            env.resolve(&json!({"$string_number_of": "$thread"}))
                .unwrap(),
            json!("12")
        );
        let s = env
            .resolve(&json!({"$repeat": {"s": "😀", "n": 500}}))
            .unwrap();
        assert_eq!(s.as_str().unwrap().chars().count(), 500);
        assert_eq!(
            env.resolve(&json!({"$concat": ["a", {"$repeat": {"s": "b", "n": 2}}]}))
                .unwrap(),
            json!("abb")
        );
        assert!(env.resolve(&json!("$nope")).is_err());
        let mut limits = Env::new();
        limits.set("limits.body_max_chars", json!(280));
        assert_eq!(
            limits
                .resolve(
                    &json!({"$repeat": {"s": "a", "n": {"$sum": ["$limits.body_max_chars", 1]}}})
                )
                .unwrap(),
            json!("a".repeat(281))
        );
        assert!(limits.resolve(&json!({"$sum": ["x", 1]})).is_err());
        let filled = limits
            .resolve(&json!({"$fill": {"s": "e\u{301}", "chars": {"$sum": ["$limits.body_max_chars", 1]}}}))
            .unwrap();
        let filled = filled.as_str().unwrap();
        assert_eq!(filled.chars().count(), 281);
        assert!(filled.ends_with('a') && filled.starts_with("e\u{301}"));
        assert_eq!(
            limits
                .resolve(&json!({"$take": {"items": [1, 2], "n": 5}}))
                .unwrap(),
            json!([1, 2, 1, 2, 1])
        );
        assert_eq!(
            env.resolve(&json!({"$contains": ["$thread"]})).unwrap(),
            json!({"$contains": ["th_12"]})
        );
        assert_eq!(env.resolve(&json!("$")).unwrap(), json!("$"));
    }
}
