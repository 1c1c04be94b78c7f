//! Structure-aware mutations of valid Parley requests: each [`Case`] is one hostile request,
//! on HTTP, on MCP, or the same logical request on both (then the outcomes must agree).
//!
//! Everything is drawn from one seeded [`fastrand::Rng`]: a campaign with the same seed
//! against the same target sends the same requests.

use std::collections::BTreeMap;

use base64::Engine as _;
use serde_json::{Map, Value, json};

use crate::transport::http::encode_segment;
use crate::transport::pre_routing::Condition;
use crate::transport::raw::{RawHttp, RawMcp};

/// One hostile request.
#[derive(Debug, Clone)]
pub struct Case {
    /// Operation it targets (`post`, `read_thread`, `inbox`, `mark`, `jsonrpc`, and the
    /// requests refused before routing: `headers`, `uri`).
    pub op: &'static str,
    /// What was mutated (one line, for the report).
    pub mutation: String,
    /// The HTTP request, when the case has one.
    pub http: Option<RawHttp>,
    /// The MCP request, when the case has one.
    pub mcp: Option<RawMcp>,
    /// The post's arguments as a JSON object (tool call on MCP, body on HTTP): the two
    /// outcomes must agree (PV-TR-1). `None` when the bindings carry different requests.
    pub logical: Option<Value>,
}

/// What the generator knows of the target (read from its manifest and earlier answers).
#[derive(Debug, Clone, Default)]
pub struct Knowledge {
    /// `limits.body_max_chars`.
    pub body_max: usize,
    /// Kinds the manifest lists.
    pub kinds: Vec<String>,
    /// States the manifest lists (forward and lateral).
    pub states: Vec<String>,
    /// Thread ids of accepted posts.
    pub threads: Vec<String>,
    /// Route templates per operation (`POST /v1/messages`).
    pub routes: BTreeMap<String, (String, String)>,
    /// Tool name per operation.
    pub tools: BTreeMap<String, String>,
}

impl Knowledge {
    fn route(&self, op: &str) -> (String, String) {
        self.routes
            .get(op)
            .cloned()
            .unwrap_or_else(|| ("POST".into(), "/v1/messages".into()))
    }

    fn thread(&self, rng: &mut fastrand::Rng) -> String {
        if self.threads.is_empty() || rng.u8(..8) == 0 {
            return pick(
                rng,
                &[
                    "th_0",
                    "0",
                    "-1",
                    "th_999999999",
                    "%00",
                    "..%2F..",
                    "th_1%3Fx",
                ],
            )
            .to_string();
        }
        self.threads[rng.usize(..self.threads.len())].clone()
    }
}

/// Strings that break naive handling of text.
const UNICODE_EDGES: &[&str] = &[
    "\u{0}",
    "\u{feff}bom",
    "e\u{301}\u{301}\u{301}",
    "\u{202e}rtl",
    "👩‍👩‍👧‍👦",
    "\u{10ffff}",
    "\u{fffd}",
    "a\u{0}b",
    "\r\n\t",
    "",
    " ",
    "\u{2028}",
];

/// JSON values of every type, some at the edges of number parsing.
const ODD_VALUES: &[&str] = &[
    "null",
    "true",
    "0",
    "-1",
    "1.5",
    "1e400",
    "18446744073709551616",
    "-9223372036854775809",
    "\"\"",
    "[]",
    "{}",
    "[null]",
    "{\"a\":{}}",
];

fn pick<'a>(rng: &mut fastrand::Rng, items: &[&'a str]) -> &'a str {
    items[rng.usize(..items.len())]
}

fn odd_value(rng: &mut fastrand::Rng) -> Value {
    serde_json::from_str(pick(rng, ODD_VALUES)).unwrap_or(Value::Null)
}

fn deep(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

/// A valid envelope: an opening `ask`, or a reply in a known thread.
fn envelope(rng: &mut fastrand::Rng, k: &Knowledge) -> Map<String, Value> {
    let mut m = Map::new();
    if k.threads.is_empty() || rng.bool() {
        m.insert("kind".into(), json!("ask"));
    } else {
        m.insert("kind".into(), json!("answer"));
        m.insert("thread".into(), json!(k.thread(rng)));
    }
    m.insert("body".into(), json!(format!("fuzz {}", rng.u32(..))));
    if rng.bool() {
        m.insert("parley".into(), json!("1"));
    }
    m
}

fn json_post(k: &Knowledge, body: Vec<u8>, ctype: Option<&str>) -> RawHttp {
    let (method, path) = k.route("post");
    let mut headers = BTreeMap::new();
    if let Some(ct) = ctype {
        headers.insert("content-type".to_string(), ct.to_string());
    }
    RawHttp {
        method,
        path,
        headers,
        body: None,
        body_json: None,
        body_base64: Some(base64::engine::general_purpose::STANDARD.encode(body)),
    }
}

fn tool_call(k: &Knowledge, op: &str, arguments: Value) -> RawMcp {
    let name = k.tools.get(op).cloned().unwrap_or_else(|| op.to_string());
    RawMcp {
        body: None,
        body_json: Some(json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        })),
        headers: BTreeMap::new(),
    }
}

/// A mutated post on both bindings (or on HTTP only when the mutation lives below JSON).
fn post_case(rng: &mut fastrand::Rng, k: &Knowledge) -> Case {
    let mut m = envelope(rng, k);
    let keys: Vec<String> = m.keys().cloned().collect();
    let key = keys[rng.usize(..keys.len())].clone();
    let which = rng.u8(..11);
    if which >= 7 {
        return raw_post_case(rng, k, m, &key, which);
    }
    let mutation = match which {
        0 => {
            m.remove(&key);
            format!("drop `{key}`")
        }
        1 => {
            let v = odd_value(rng);
            let shown = v.to_string();
            m.insert(key.clone(), v);
            format!("retype `{key}` to {shown}")
        }
        2 => {
            let n = (k.body_max + rng.usize(..3)).saturating_sub(1);
            let c = pick(rng, &["a", "é", "模", "😀"]);
            m.insert("body".into(), json!(c.repeat(n)));
            format!("body of {n} × {c:?} (limit {})", k.body_max)
        }
        3 => {
            let s = pick(rng, UNICODE_EDGES);
            m.insert(key.clone(), json!(s));
            format!("`{key}` = {s:?}")
        }
        4 => {
            let v = if k.kinds.is_empty() || rng.bool() {
                pick(rng, &["ASK", "ask ", "", "answer\u{0}", "decide"]).to_string()
            } else {
                k.kinds[rng.usize(..k.kinds.len())].clone()
            };
            m.insert("kind".into(), json!(v));
            format!("kind {v:?}")
        }
        5 => {
            let name = pick(rng, &["x", "__proto__", "constructor", "Kind", "kind\u{0}"]);
            m.insert(name.into(), json!(1));
            format!("unknown member {name:?}")
        }
        _ => {
            let depth = [16usize, 129, 5000][rng.usize(..3)];
            let v: Value = serde_json::from_str(&deep(depth.min(100))).unwrap_or(Value::Null);
            if depth > 100 {
                // Beyond what a Value holds: spliced into the text (HTTP only).
                let text = Value::Object(m).to_string();
                let body = format!("{},\"x\":{}}}", &text[..text.len() - 1], deep(depth));
                return http_only(k, "post", format!("member nested {depth} deep"), body);
            }
            m.insert(key.clone(), v);
            format!("`{key}` nested {depth} deep")
        }
    };
    post_from_args(k, Value::Object(m), mutation)
}

/// Mutations below the JSON value: duplicate members, truncation, invalid UTF-8, content
/// types (`which` in 7..=10).
fn raw_post_case(
    rng: &mut fastrand::Rng,
    k: &Knowledge,
    m: Map<String, Value>,
    key: &str,
    which: u8,
) -> Case {
    match which {
        7 => {
            let text = Value::Object(m).to_string();
            let other = odd_value(rng);
            let body = format!("{},\"{key}\":{other}}}", &text[..text.len() - 1]);
            Case {
                op: "post",
                mutation: format!("duplicate member `{key}`"),
                http: Some(json_post(
                    k,
                    body.clone().into_bytes(),
                    Some("application/json"),
                )),
                mcp: Some(RawMcp {
                    body: Some(format!(
                        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{{\"name\":{},\"arguments\":{body}}}}}",
                        json!(k.tools.get("post").map_or("post", String::as_str))
                    )),
                    body_json: None,
                    headers: BTreeMap::new(),
                }),
                logical: Some(json!({"duplicate": key})),
            }
        }
        8 => {
            let text = Value::Object(m).to_string();
            let cut = rng.usize(1..text.len());
            http_only(
                k,
                "post",
                format!("body truncated at {cut}"),
                text[..cut].into(),
            )
        }
        9 => {
            let mut bytes = Value::Object(m).to_string().into_bytes();
            let at = rng.usize(1..bytes.len() - 1);
            let bad = [0xffu8, 0xc3, 0xed, 0x80][rng.usize(..4)];
            bytes.insert(at, bad);
            Case {
                op: "post",
                mutation: format!("invalid UTF-8 byte {bad:#x} at {at}"),
                http: Some(json_post(k, bytes, Some("application/json"))),
                mcp: None,
                logical: None,
            }
        }
        _ => {
            let ct = pick(
                rng,
                &["text/plain", "application/xml", "application/jsonx", ""],
            );
            let body = Value::Object(m).to_string().into_bytes();
            let ctype = (!ct.is_empty()).then_some(ct);
            Case {
                op: "post",
                mutation: format!("content type {ct:?}"),
                http: Some(json_post(k, body, ctype)),
                mcp: None,
                logical: None,
            }
        }
    }
}

/// Envelope members a post may carry (parley-v1.md §3: core, dialectic, and the server-set
/// ones that are ignored when sent, PV-EN-4).
const ENVELOPE: &[&str] = &[
    "parley",
    "kind",
    "thread",
    "parent",
    "from",
    "body",
    "provenance",
    "evidence",
    "claim",
    "supersedes",
    "valid_until",
    "id",
    "author_kind",
    "created_at",
];

/// The core kinds that cannot open a thread (PV-EN-6).
const REPLIES_ONLY: &[&str] = &[
    "answer", "clarify", "inform", "propose", "agree", "object", "decide", "close",
];

/// Whether every reading of the notes refuses a post with these arguments: an unknown
/// top-level member or `parley` other than `"1"` or null (PV-EN-1), `kind` missing, not a string or
/// not among the kinds the manifest lists (PV-EN-1/3), `body` missing, not a string or empty
/// (PV-EN-1: MUST) or over 500 code points (PV-EN-2), a reply kind with neither `thread` nor
/// `parent` (PV-EN-6). Anything less certain is left alone: a whitespace-only body SHOULD be
/// refused (PV-EN-1), so accepting one is no breach.
pub fn certainly_invalid(args: &Value, k: &Knowledge) -> bool {
    let Value::Object(m) = args else {
        return true;
    };
    if m.keys().any(|key| !ENVELOPE.contains(&key.as_str()))
        // `null` may read as "absent" for an optional member: left alone.
        || m.get("parley").is_some_and(|p| !p.is_null() && p != "1")
    {
        return true;
    }
    let kind = match m.get("kind") {
        Some(Value::String(s)) => s.as_str(),
        _ => return true,
    };
    if !k.kinds.is_empty() && !k.kinds.iter().any(|x| x == kind) {
        return true;
    }
    let body_bad = match m.get("body") {
        Some(Value::String(b)) => b.is_empty() || b.chars().count() > k.body_max,
        _ => true,
    };
    let orphan_reply =
        !m.contains_key("thread") && !m.contains_key("parent") && REPLIES_ONLY.contains(&kind);
    body_bad || orphan_reply
}

/// A post carrying `args` on both bindings (minimization rebuilds cases with this).
pub fn post_from_args(k: &Knowledge, args: Value, mutation: String) -> Case {
    Case {
        op: "post",
        mutation,
        http: Some(json_post(
            k,
            args.to_string().into_bytes(),
            Some("application/json"),
        )),
        mcp: Some(tool_call(k, "post", args.clone())),
        logical: Some(args),
    }
}

fn http_only(k: &Knowledge, op: &'static str, mutation: String, body: String) -> Case {
    Case {
        op,
        mutation,
        http: Some(json_post(k, body.into_bytes(), Some("application/json"))),
        mcp: None,
        logical: None,
    }
}

fn get(path: String) -> RawHttp {
    RawHttp {
        method: "GET".into(),
        path,
        headers: BTreeMap::new(),
        body: None,
        body_json: None,
        body_base64: None,
    }
}

/// Odd reads: path ids, query/path conflicts, odd cursors and limits.
fn read_case(rng: &mut fastrand::Rng, k: &Knowledge) -> Case {
    let thread = k.thread(rng);
    let (op, path) = match rng.u8(..4) {
        0 => {
            let other = k.thread(rng);
            let (_, p) = k.route("read_thread");
            let p = p.replace("{thread}", &encode_segment(&thread));
            (
                "read_thread",
                format!("{p}?thread={}", encode_segment(&other)),
            )
        }
        1 => {
            let (_, p) = k.route("list_events");
            let since = pick(rng, &["-1", "0", "ev_x", "99999999999999999999", "%FF"]);
            let p = p.replace("{thread}", &encode_segment(&thread));
            ("list_events", format!("{p}?since={since}"))
        }
        2 => {
            let (_, p) = k.route("inbox");
            let limit = pick(
                rng,
                &["-1", "0", "1e3", "18446744073709551616", "abc", "%00"],
            );
            (
                "inbox",
                format!("{p}?limit={limit}&since={}", pick(rng, &["x", "", "0"])),
            )
        }
        _ => {
            let (_, p) = k.route("read_thread");
            let id = pick(rng, &["%", "%%30", "a/b", "%2e%2e", "\u{1F600}"]);
            ("read_thread", p.replace("{thread}", &encode_segment(id)))
        }
    };
    Case {
        op,
        mutation: format!("GET {path}"),
        http: Some(get(path)),
        mcp: None,
        logical: None,
    }
}

/// Odd state changes: unknown states, retyped or duplicated members.
fn mark_case(rng: &mut fastrand::Rng, k: &Knowledge) -> Case {
    let (method, p) = k.route("mark");
    let path = p.replace("{thread}", &encode_segment(&k.thread(rng)));
    let state = if k.states.is_empty() || rng.bool() {
        pick(rng, &["CLOSED", "open ", "", "closed\u{0}", "reopened"]).to_string()
    } else {
        k.states[rng.usize(..k.states.len())].clone()
    };
    let body = match rng.u8(..3) {
        0 => json!({"state": state}).to_string(),
        1 => format!("{{\"state\":{},\"state\":\"closed\"}}", json!(state)),
        _ => format!("{{\"state\":{}}}", odd_value(rng)),
    };
    let mut req = json_post(k, body.clone().into_bytes(), Some("application/json"));
    req.method = method;
    req.path = path;
    Case {
        op: "mark",
        mutation: format!("mark {body}"),
        http: Some(req),
        mcp: None,
        logical: None,
    }
}

/// Odd JSON-RPC: ids, versions, methods, params.
fn jsonrpc_case(rng: &mut fastrand::Rng) -> Case {
    let id = pick(
        rng,
        &[
            "1",
            "null",
            "1.5",
            "-1",
            "9223372036854775808",
            "18446744073709551616",
            "\"\"",
            "{}",
            "[]",
            "true",
        ],
    );
    let version = pick(rng, &["\"2.0\"", "\"1.0\"", "2", "null", "\"2.0 \""]);
    let (method, params) = match rng.u8(..6) {
        0 => ("\"tools/list\"", "{}"),
        1 => (
            "\"initialize\"",
            pick(rng, &["{}", "[]", "null", "{\"protocolVersion\":7}"]),
        ),
        2 => (
            "\"tools/call\"",
            pick(
                rng,
                &[
                    "{}",
                    "{\"name\":7}",
                    "{\"name\":\"whoami\",\"arguments\":[]}",
                ],
            ),
        ),
        3 => (pick(rng, &["\"\"", "7", "null", "\"rpc.x\""]), "{}"),
        4 => ("\"ping\"", pick(rng, &["{}", "\"x\""])),
        _ => ("\"tools/list\"", "{\"cursor\":{}}"),
    };
    let body = match rng.u8(..8) {
        0 => format!("[{{\"jsonrpc\":{version},\"id\":{id},\"method\":{method}}}]"),
        1 => format!("{{\"jsonrpc\":{version},\"method\":{method},\"params\":{params}"),
        _ => {
            format!("{{\"jsonrpc\":{version},\"id\":{id},\"method\":{method},\"params\":{params}}}")
        }
    };
    Case {
        op: "jsonrpc",
        mutation: format!("JSON-RPC {body}"),
        http: None,
        mcp: Some(RawMcp {
            body: Some(body),
            body_json: None,
            headers: BTreeMap::new(),
        }),
        logical: None,
    }
}

/// The condition a case breaks before routing (PV-TR-6's transport table), if any: its
/// answer is judged on status, with the reason and shape as warnings.
pub fn pre_routing(case: &Case) -> Option<Condition> {
    match case.op {
        "headers" => Some(Condition::HeadTooLarge),
        "uri" => Some(Condition::UriTooLong),
        _ => None,
    }
}

/// Oversized or odd request heads (a refusal here may come before routing).
fn header_case(rng: &mut fastrand::Rng, k: &Knowledge) -> Case {
    let (_, path) = k.route("whoami");
    let mut req = get(path);
    let mut op = "headers";
    let mutation = match rng.u8(..3) {
        0 => {
            let n = [8 * 1024usize, 64 * 1024, 512 * 1024][rng.usize(..3)];
            req.headers.insert("x-fuzz".into(), "a".repeat(n));
            format!("one header of {n} bytes")
        }
        1 => {
            let n = [120usize, 1000][rng.usize(..2)];
            for i in 0..n {
                req.headers.insert(format!("x-f{i}"), "v".into());
            }
            format!("{n} headers")
        }
        _ => {
            // Under 64 KiB: the harness's HTTP stack cannot send a longer target.
            let n = [4 * 1024usize, 60 * 1024][rng.usize(..2)];
            req.path = format!("{}?pad={}", req.path, "a".repeat(n));
            op = "uri";
            format!("request target of {n} bytes")
        }
    };
    Case {
        op,
        mutation,
        http: Some(req),
        mcp: None,
        logical: None,
    }
}

/// The next case of a campaign.
pub fn next(rng: &mut fastrand::Rng, k: &Knowledge) -> Case {
    match rng.u8(..10) {
        0..=4 => post_case(rng, k),
        5 => read_case(rng, k),
        6 => mark_case(rng, k),
        7 | 8 => jsonrpc_case(rng),
        _ => header_case(rng, k),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_cases() {
        let k = Knowledge {
            body_max: 500,
            ..Knowledge::default()
        };
        let run = |seed| {
            let mut rng = fastrand::Rng::with_seed(seed);
            (0..200)
                .map(|_| next(&mut rng, &k).mutation)
                .collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
        let all = run(1);
        for prefix in [
            "drop",
            "duplicate",
            "JSON-RPC",
            "GET",
            "mark",
            "content type",
        ] {
            assert!(all.iter().any(|m| m.starts_with(prefix)), "{prefix} drawn");
        }
    }

    #[test]
    fn only_what_every_reading_refuses_is_certainly_invalid() {
        let k = Knowledge {
            body_max: 500,
            kinds: vec!["ask".into(), "assert".into()],
            ..Knowledge::default()
        };
        let post = |body: Value| certainly_invalid(&json!({"kind": "ask", "body": body}), &k);
        // PV-EN-1: an empty body MUST be refused; a whitespace-only one SHOULD (not certain).
        assert!(post(json!("")));
        assert!(!post(json!(" \t\n")));
        // PV-EN-2: over 500 code points, whatever the manifest declares (PV-MF-2).
        assert!(post(json!("a".repeat(501))));
        assert!(!post(json!("é".repeat(500))));
        // PV-EN-3: a profile's kind is a kind.
        assert!(!certainly_invalid(
            &json!({"kind": "assert", "body": "x"}),
            &k
        ));
        assert!(certainly_invalid(
            &json!({"kind": "shout", "body": "x"}),
            &k
        ));
    }
}
