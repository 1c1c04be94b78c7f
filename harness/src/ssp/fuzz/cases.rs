//! Hostile SSP requests, drawn from valid ones: discovery queries, descriptor paths,
//! invocation bodies (dropped, retyped, duplicated and unknown members, odd timeouts, deep
//! nesting, huge strings, Unicode edges, invalid UTF-8, truncation, content types),
//! execution ids, credentials and methods. Each case says which oracles apply to it.

use serde_json::{Map, Value, json};

use crate::ssp::provider::env::Cred;

/// Every operation a case can have (a promoted vector names one).
pub const OPS: [&str; 7] = [
    "discover",
    "descriptor",
    "invoke",
    "status",
    "auth",
    "method",
    "headers",
];

/// The operation named `name` (a request vector's).
pub fn op_named(name: &str) -> Option<&'static str> {
    OPS.iter().find(|o| **o == name).copied()
}

/// Which URL template of a descriptor's `endpoint`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Template {
    /// `endpoint.status_url`.
    StatusUrl,
    /// `endpoint.result_url`.
    ResultUrl,
}

/// An invocable skill of the target (a fixture role of the profile).
#[derive(Debug, Clone)]
pub struct Invocable {
    /// The fixture role it plays.
    pub role: crate::ssp::provider::profile::FixtureRole,
    /// `endpoint.url`.
    pub url: String,
    /// `endpoint.method`.
    pub method: String,
    /// Skill id.
    pub skill_id: String,
    /// A valid request body.
    pub request: Value,
    /// The credential that works.
    pub cred: Cred,
    /// `endpoint.status_url` / `result_url` templates, each with its member's name.
    pub templates: Vec<(Template, String)>,
    /// Whether it needs a credential (`auth.type` other than `none`).
    pub protected: bool,
}

/// What the generator may use.
#[derive(Debug, Clone, Default)]
pub struct Knowledge {
    /// Absolute URL of the well-known index.
    pub well_known: String,
    /// Descriptor URLs of the anonymous index.
    pub descriptors: Vec<String>,
    /// Skills to invoke (the `instant` fixture first, a protected one when mapped).
    pub skills: Vec<Invocable>,
    /// Execution ids the target accepted during the campaign (at most 32).
    pub executions: Vec<String>,
}

/// One hostile request.
#[derive(Debug, Clone)]
pub struct Case {
    /// `discover`, `descriptor`, `invoke`, `status`, `auth`, `method`, `headers`.
    pub op: &'static str,
    /// What was done to the valid request.
    pub mutation: String,
    /// HTTP method.
    pub method: String,
    /// Absolute URL.
    pub url: String,
    /// Extra headers (content type included).
    pub headers: Vec<(String, String)>,
    /// Body bytes.
    pub body: Option<Vec<u8>>,
    /// Credential.
    pub cred: Cred,
    /// The URL stays on an SSP route: an error answer must have the unified shape.
    pub ssp_route: bool,
    /// The request is certainly invalid (not an object, a required member missing or of the
    /// wrong type, another skill's id, credentials that are not the skill's, a method the
    /// endpoint does not declare): it must be refused.
    pub invalid: bool,
    /// Hostile bytes in the URI: the HTTP layer may refuse it (400) before any SSP route.
    pub hostile_uri: bool,
    /// A server may drop it without an answer (an oversized head).
    pub may_drop: bool,
}

/// Bodies above this many bytes may be over a provider's size limit.
const BIG_BODY: usize = 60 * 1024;

const UNICODE: [&str; 8] = [
    "\u{0}",
    "\u{feff}bom",
    "\u{202e}rtl",
    "e\u{301}\u{301}\u{301}",
    "😀🏳️‍🌈",
    "\u{fffd}",
    "%00",
    "../../etc/passwd",
];

const ODD_NUMBERS: [&str; 9] = [
    "-1",
    "0",
    "1.5",
    "1e308",
    "-1e308",
    "9007199254740993",
    "18446744073709551616",
    "1e999999",
    "\"100\"",
];

fn pick<'a, T>(rng: &mut fastrand::Rng, items: &'a [T]) -> &'a T {
    &items[rng.usize(..items.len())]
}

/// The next case.
pub fn next(rng: &mut fastrand::Rng, k: &Knowledge) -> Case {
    let has_skill = !k.skills.is_empty();
    match rng.u8(..20) {
        0..=2 => discover(rng, k),
        3 => descriptor(rng, k),
        4..=11 if has_skill => invoke(rng, k),
        12..=13 if has_skill => status(rng, k),
        14..=15 if has_skill => auth(rng, k),
        16 if has_skill => method(rng, k),
        17 => headers(rng, k),
        _ => discover(rng, k),
    }
}

fn case(op: &'static str, mutation: String, method: &str, url: String) -> Case {
    Case {
        op,
        mutation,
        method: method.into(),
        url,
        headers: Vec::new(),
        body: None,
        cred: Cred::None,
        ssp_route: true,
        invalid: false,
        hostile_uri: false,
        may_drop: false,
    }
}

fn hostile_text(rng: &mut fastrand::Rng) -> String {
    match rng.u8(..4) {
        0 => pick(rng, &UNICODE).to_string(),
        // Heads stay under 4 KiB: common servers answer longer lines themselves (gunicorn
        // 4094 bytes), before any SSP route.
        1 => "x".repeat(rng.usize(1..700)),
        2 => "%zz%".into(),
        _ => "é".repeat(rng.usize(1..100)),
    }
}

fn discover(rng: &mut fastrand::Rng, k: &Knowledge) -> Case {
    let keys = [
        "tag",
        "tags",
        "category",
        "capability",
        "q",
        "filter",
        "limit",
    ];
    let key = if rng.bool() {
        pick(rng, &keys).to_string()
    } else {
        hostile_text(rng)
    };
    let value = hostile_text(rng);
    let query = match rng.u8(..3) {
        0 => format!("{}={}", enc(&key), enc(&value)),
        1 => format!("{}={}&{}={}", enc(&key), enc(&value), enc(&key), enc(&key)),
        _ => format!("{}=%ff%fe&{}", enc(&key), "&".repeat(rng.usize(1..50))),
    };
    let mut c = case(
        "discover",
        format!("query {}", clip(&query)),
        "GET",
        format!("{}?{query}", k.well_known),
    );
    c.hostile_uri = true;
    c
}

fn descriptor(rng: &mut fastrand::Rng, k: &Knowledge) -> Case {
    let Some(base) = (!k.descriptors.is_empty()).then(|| pick(rng, &k.descriptors).clone()) else {
        return discover(rng, k);
    };
    let tail = hostile_text(rng);
    let mut c = case(
        "descriptor",
        format!("descriptor path + {}", clip(&tail)),
        "GET",
        format!("{base}{}", enc(&tail)),
    );
    // `..` may leave the SSP routes: the shape of a 404 there is not SSP's to judge.
    c.ssp_route = !tail.contains("..");
    c.hostile_uri = true;
    c
}

/// Percent-encodes everything but unreserved characters (RFC 3986 §2.3).
fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn clip(s: &str) -> String {
    let mut out: String = s.chars().take(60).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

fn skill<'a>(rng: &mut fastrand::Rng, k: &'a Knowledge) -> &'a Invocable {
    pick(rng, &k.skills)
}

fn invoke(rng: &mut fastrand::Rng, k: &Knowledge) -> Case {
    let s = skill(rng, k);
    let (mutation, body, invalid) = body_mutation(rng, &s.request);
    let mut c = case("invoke", mutation, &s.method, s.url.clone());
    c.headers = vec![("content-type".into(), "application/json".into())];
    // A body that may exceed the provider's limit may be refused before it is read, and
    // the connection closed under it (RFC 9110 §15.5.14).
    c.may_drop = body.len() > BIG_BODY;
    c.body = Some(body);
    c.cred = s.cred.clone();
    c.invalid = invalid;
    c
}

/// A mutated request body: (what was done, bytes, certainly invalid).
fn body_mutation(rng: &mut fastrand::Rng, valid: &Value) -> (String, Vec<u8>, bool) {
    let Value::Object(members) = valid else {
        return ("no body".into(), Vec::new(), true);
    };
    let required = ["caller", "skill_id", "inputs"];
    let text = valid.to_string();
    match rng.u8(..13) {
        12 => {
            // Not this endpoint's skill: 404, and the endpoint's own skill never runs
            // (SSP-INV-2).
            let mut o = members.clone();
            o.insert("skill_id".into(), json!("conform-fuzz/not-this-skill"));
            (
                "another skill's id".into(),
                Value::Object(o).to_string().into_bytes(),
                true,
            )
        }
        0 => {
            let m = *pick(rng, &required);
            let mut o = members.clone();
            o.remove(m);
            (
                format!("without `{m}`"),
                Value::Object(o).to_string().into_bytes(),
                true,
            )
        }
        1 => {
            let (m, v) = pick(
                rng,
                &[
                    ("skill_id", json!(7)),
                    ("skill_id", json!("")),
                    ("inputs", json!("text")),
                    ("inputs", json!([1, 2])),
                    ("inputs", Value::Null),
                    ("caller", json!("me")),
                ],
            )
            .clone();
            let mut o = members.clone();
            o.insert(m.into(), v.clone());
            (
                format!("`{m}` = {v}"),
                Value::Object(o).to_string().into_bytes(),
                true,
            )
        }
        2 => {
            let n = *pick(rng, &ODD_NUMBERS);
            let t = text.replacen('{', &format!("{{\"context\":{{\"timeout_ms\":{n}}},"), 1);
            // `context` replaced; only when that fails, spliced in front (a duplicate).
            (
                format!("context.timeout_ms {n}"),
                odd_context(members, n).unwrap_or(t).into_bytes(),
                false,
            )
        }
        3 => {
            let dup = text.replacen('{', "{\"skill_id\":\"conform-other-skill\",", 1);
            (
                "duplicate `skill_id` member".into(),
                dup.into_bytes(),
                false,
            )
        }
        4 => {
            // 100 deep stays under the harness's reading depth (128) if echoed in `details`;
            // 100,000 deep is a body over 60 KiB, which may be dropped.
            let depth = *pick(rng, &[64usize, 100, 100_000]);
            let deep = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
            let t = with_input(members, &format!("\"deep\":{deep}"));
            (format!("input nested {depth} deep"), t.into_bytes(), false)
        }
        5 => {
            let n = *pick(rng, &[70_000usize, 300_000]);
            let t = with_input(members, &format!("\"big\":\"{}\"", "x".repeat(n)));
            (format!("input string of {n} bytes"), t.into_bytes(), false)
        }
        6 => {
            let u = pick(rng, &UNICODE);
            let t = with_input(members, &format!("\"u\":{}", json!(u)));
            (format!("input {u:?}"), t.into_bytes(), false)
        }
        7 => {
            let mut b = text.into_bytes();
            let at = b.len() / 2;
            b.splice(at..at, [0xff, 0xfe, 0xc0]);
            // Inside a string a parser may substitute U+FFFD and go on (RFC 8259 §9): not
            // certainly invalid.
            ("invalid UTF-8 inside the body".into(), b, false)
        }
        8 => {
            let cut = rng.usize(0..text.len().max(1));
            (
                format!("truncated at byte {cut}"),
                text.as_bytes()[..cut].to_vec(),
                true,
            )
        }
        9 => {
            let b = *pick(rng, &["", " ", "null", "[]", "\"text\"", "42", "{}"]);
            (format!("body {b:?}"), b.as_bytes().to_vec(), true)
        }
        10 => {
            let lone = text.replacen('{', "{\"lone\":\"\\ud800\",", 1);
            ("lone surrogate escape".into(), lone.into_bytes(), false)
        }
        _ => {
            let n = *pick(rng, &ODD_NUMBERS);
            let t = with_input(members, &format!("\"n\":{n}"));
            (format!("input number {n}"), t.into_bytes(), false)
        }
    }
}

/// The request with `context.timeout_ms` set to the literal `n`.
fn odd_context(members: &Map<String, Value>, n: &str) -> Option<String> {
    let mut o = members.clone();
    let mut ctx = o.remove("context").unwrap_or_else(|| json!({}));
    ctx.as_object_mut()?
        .insert("timeout_ms".into(), json!("__N__"));
    o.insert("context".into(), ctx);
    Some(Value::Object(o).to_string().replace("\"__N__\"", n))
}

/// The request with `member` (literal JSON text) added to `inputs`.
fn with_input(members: &Map<String, Value>, member: &str) -> String {
    let mut o = members.clone();
    o.insert("inputs".into(), json!("__INPUTS__"));
    let inputs = members
        .get("inputs")
        .map(Value::to_string)
        .unwrap_or_else(|| "{}".into());
    let spliced = match inputs.strip_prefix('{') {
        Some("}") => format!("{{{member}}}"),
        Some(rest) => format!("{{{member},{rest}"),
        None => format!("{{{member}}}"),
    };
    Value::Object(o)
        .to_string()
        .replace("\"__INPUTS__\"", &spliced)
}

fn status(rng: &mut fastrand::Rng, k: &Knowledge) -> Case {
    let s = skill(rng, k);
    let Some(template) = (!s.templates.is_empty()).then(|| pick(rng, &s.templates).1.clone())
    else {
        return invoke(rng, k);
    };
    let (id, what) = if !k.executions.is_empty() && rng.bool() {
        let known = pick(rng, &k.executions).clone();
        (
            format!("{known}{}", enc(&hostile_text(rng))),
            "a known id + junk",
        )
    } else {
        (enc(&hostile_text(rng)), "a hostile id")
    };
    let url = crate::ssp::consumer::expand_raw(&template, &id).url;
    let mut c = case("status", format!("{what}: {}", clip(&id)), "GET", url);
    c.cred = s.cred.clone();
    c.ssp_route = !id.contains("..");
    c.hostile_uri = true;
    c
}

fn auth(rng: &mut fastrand::Rng, k: &Knowledge) -> Case {
    let protected: Vec<&Invocable> = k.skills.iter().filter(|s| s.protected).collect();
    let Some(s) = (!protected.is_empty()).then(|| *pick(rng, &protected)) else {
        return invoke(rng, k);
    };
    let (cred, what) = match (&s.cred, rng.u8(..6)) {
        // The skill's own API key in a header the descriptor does not name (SSP-AUTH-4).
        (Cred::ApiKey { key, header }, 5) => {
            let other = if header.eq_ignore_ascii_case("x-api-token") {
                "x-api-key-other"
            } else {
                "x-api-token"
            };
            let moved = Cred::ApiKey {
                header: other.into(),
                key: key.clone(),
            };
            (moved, format!("the valid API key in `{other}`"))
        }
        (_, roll) => foreign_cred(rng, roll),
    };
    let mut c = case("auth", what, &s.method, s.url.clone());
    c.headers = vec![("content-type".into(), "application/json".into())];
    c.body = Some(s.request.to_string().into_bytes());
    c.cred = cred;
    // None of these is the skill's credential: a protected skill refuses them (SSP-AUTH-2).
    c.invalid = true;
    c
}

/// A credential no skill accepts.
fn foreign_cred(rng: &mut fastrand::Rng, roll: u8) -> (Cred, String) {
    let garbage = hostile_text(rng).replace(['\r', '\n', '\0'], "");
    match roll {
        0 => (Cred::None, "no credential".to_string()),
        1 => (
            Cred::Header("authorization".into(), format!("Bearer {}", enc(&garbage))),
            "a garbage bearer token".into(),
        ),
        2 => (
            Cred::Header("authorization".into(), "Basic Og==".into()),
            "Basic with empty user".into(),
        ),
        3 => (
            Cred::Header("x-api-key".into(), enc(&garbage)),
            "a garbage API key".into(),
        ),
        _ => (
            Cred::Header("x-signature".into(), "0".repeat(64)),
            "a zero HMAC signature".into(),
        ),
    }
}

fn method(rng: &mut fastrand::Rng, k: &Knowledge) -> Case {
    let s = skill(rng, k);
    let m = *pick(rng, &["PUT", "DELETE", "PATCH"]);
    let url = if rng.bool() {
        s.url.clone()
    } else {
        k.well_known.clone()
    };
    let on_endpoint = url == s.url;
    let mut c = case("method", format!("{m} {url}"), m, url);
    c.cred = s.cred.clone();
    // Only the endpoint declares its method; nothing forbids other methods elsewhere.
    c.invalid = on_endpoint && !m.eq_ignore_ascii_case(&s.method);
    c
}

fn headers(rng: &mut fastrand::Rng, k: &Knowledge) -> Case {
    let Some(s) = (!k.skills.is_empty()).then(|| skill(rng, k)) else {
        return discover(rng, k);
    };
    let mut c = case("headers", String::new(), &s.method, s.url.clone());
    c.body = Some(s.request.to_string().into_bytes());
    c.cred = s.cred.clone();
    match rng.u8(..4) {
        0 => {
            let ct = *pick(
                rng,
                &[
                    "text/plain",
                    "application/x-www-form-urlencoded",
                    "application/json; charset=latin1",
                    "multipart/form-data; boundary=x",
                ],
            );
            c.headers = vec![("content-type".into(), ct.into())];
            c.mutation = format!("content type {ct}");
        }
        1 => {
            c.mutation = "no content type".into();
        }
        2 => {
            let n = *pick(rng, &[9_000usize, 70_000]);
            c.headers = vec![
                ("content-type".into(), "application/json".into()),
                ("x-conform-fill".into(), "a".repeat(n)),
            ];
            c.mutation = format!("a {n}-byte header");
            c.may_drop = true;
            // Refused before routing, if at all: the transport's answer, not SSP's.
            c.ssp_route = false;
        }
        _ => {
            c.headers = vec![
                ("content-type".into(), "application/json".into()),
                ("accept".into(), "text/html".into()),
            ];
            c.mutation = "Accept: text/html".into();
            // A server honouring Accept may answer 406 in another format than JSON.
            c.ssp_route = false;
        }
    }
    c
}
