//! `/openapi.json` (issue 15 item 8): the document the reference serves is valid OpenAPI 3.1
//! (against the official schema, vendored), covers every route of both route tables, and
//! describes what the server really answers — real bodies are validated against the
//! documented response schemas, and wrong bodies are shown to be rejected by them.

#![expect(clippy::unwrap_used)] // tests: a panic is the failure report

use std::collections::BTreeSet;

use reference_impl::config::Config;
use reference_impl::openapi;
use reference_impl::parley::api::http;
use reference_impl::parley::service::refusal_statuses;
use reference_impl::ssp::api as ssp;
use serde_json::{Value, json};

const OPENAPI_SCHEMA: &str = include_str!("../../vectors/schemas/openapi-3.1.schema.json");

/// A validator for `schema`, resolving `#/components/...` inside `doc`.
fn validator(doc: &Value, schema: &Value) -> jsonschema::Validator {
    let mut root = schema.clone();
    if let Value::Object(map) = &mut root {
        map.insert("components".into(), doc["components"].clone());
    } else {
        panic!("schema is not an object: {schema}");
    }
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(&root)
        .unwrap_or_else(|e| panic!("schema does not compile: {e}"))
}

/// The documented response schema of `method path` for `status` (panics when undocumented).
fn response_schema<'a>(doc: &'a Value, method: &str, path: &str, status: u16) -> &'a Value {
    let op = &doc["paths"][path][method];
    assert!(op.is_object(), "{method} {path} is not documented");
    let resp = &op["responses"][status.to_string()];
    assert!(
        resp.is_object(),
        "{method} {path}: status {status} is not documented"
    );
    &resp["content"]["application/json"]["schema"]
}

/// The documented request body schema of `method path`.
fn request_schema<'a>(doc: &'a Value, method: &str, path: &str) -> &'a Value {
    &doc["paths"][path][method]["requestBody"]["content"]["application/json"]["schema"]
}

/// Validation errors of `body` against the documented response.
fn errors(doc: &Value, method: &str, path: &str, status: u16, body: &Value) -> Vec<String> {
    let v = validator(doc, response_schema(doc, method, path, status));
    v.iter_errors(body)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

fn assert_documented(doc: &Value, method: &str, path: &str, status: u16, body: &Value) {
    let e = errors(doc, method, path, status, body);
    assert!(
        e.is_empty(),
        "{method} {path} {status} does not match its documented schema: {e:#?}\n{body:#}"
    );
}

/// The local document (same function the route serves).
fn local_doc() -> Value {
    openapi::document(&reference_impl::domain::parley::REFERENCE, true)
}

#[test]
fn the_document_is_valid_openapi_3_1() {
    let meta: Value = serde_json::from_str(OPENAPI_SCHEMA).unwrap();
    assert_eq!(
        meta["$id"], "https://spec.openapis.org/oas/3.1/schema/2022-10-07",
        "the vendored schema is the published 2022-10-07 one"
    );
    let v = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(&meta)
        .unwrap();
    let doc = local_doc();
    let errs: Vec<String> = v.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errs.is_empty(), "{errs:#?}");
    // The check can fail: a document without `info`, or with a path item of the wrong type.
    // The OpenAPI schema does not look inside Schema Objects: each one must be valid JSON
    // Schema 2020-12 (the dialect OpenAPI 3.1 uses) on its own.
    for (name, schema) in doc["components"]["schemas"].as_object().unwrap() {
        let mut schema = schema.clone();
        if let Value::Object(m) = &mut schema {
            m.insert(
                "$schema".into(),
                json!("https://json-schema.org/draft/2020-12/schema"),
            );
        }
        assert!(jsonschema::meta::is_valid(&schema), "{name}: {schema}");
    }
    assert!(!jsonschema::meta::is_valid(
        &json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "properties": {"x": null}})
    ));
    let mut broken = doc.clone();
    broken.as_object_mut().unwrap().remove("info");
    assert!(!v.is_valid(&broken));
    let mut broken = doc;
    broken["paths"]["/v1/whoami"]["get"]["responses"] = json!("none");
    assert!(!v.is_valid(&broken));
}

#[test]
fn every_route_of_both_tables_is_documented_and_nothing_else() {
    let doc = local_doc();
    let mut tabled = BTreeSet::new();
    for (method, path, op) in http::ROUTES {
        let m = method.as_str().to_ascii_lowercase();
        let entry = &doc["paths"][path][&m];
        assert_eq!(entry["operationId"], op.tool_name(), "{m} {path}");
        for status in refusal_statuses(op) {
            let schema = response_schema(&doc, &m, path, status);
            assert!(schema.is_object(), "{m} {path} {status}");
        }
        if op.needs_token() {
            assert_eq!(entry["security"], json!([{"parleyBearer": []}]), "{path}");
        }
        tabled.insert((path.to_owned(), m));
    }
    for (method, path, route) in ssp::ROUTES {
        let m = method.as_str().to_ascii_lowercase();
        for status in route.statuses() {
            response_schema(&doc, &m, path, *status);
        }
        tabled.insert((path.to_owned(), m));
    }
    let documented: BTreeSet<(String, String)> = doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(p, item)| {
            item.as_object()
                .unwrap()
                .keys()
                .map(|m| (p.clone(), m.clone()))
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(documented, tabled, "documented routes = the route tables");
    // Every `$ref` points at an existing component (SSP `$defs` included).
    let text = doc.to_string();
    for part in text.split("\"$ref\":\"").skip(1) {
        let target = part.split('"').next().unwrap();
        let name = target.strip_prefix("#/components/schemas/").unwrap();
        assert!(
            doc["components"]["schemas"][name].is_object(),
            "dangling {target}"
        );
    }
}

#[test]
fn declared_limits_are_the_enforced_ones() {
    let doc = local_doc();
    let limits = reference_impl::domain::parley::REFERENCE;
    let post = &doc["components"]["schemas"]["PostRequest"]["properties"];
    assert_eq!(post["body"]["maxLength"], limits.body_max_chars);
    assert_eq!(post["evidence"]["maxItems"], limits.evidence_max);
    let variant = reference_impl::domain::parley::Limits {
        body_max_chars: 140,
        ..limits
    };
    let doc = openapi::document(&variant, false);
    let post = &doc["components"]["schemas"]["PostRequest"]["properties"];
    assert_eq!(post["body"]["maxLength"], 140);
    let kinds = post["kind"]["enum"].as_array().unwrap();
    assert!(!kinds.contains(&json!("assert")), "no dialectic kinds");
}

struct Client {
    http: reqwest::Client,
    base: String,
}

impl Client {
    async fn call(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> (u16, Value) {
        let url = format!("{}{path}", self.base);
        let mut req = if method == "post" {
            self.http.post(url)
        } else {
            self.http.get(url)
        };
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        let r = req.send().await.unwrap();
        let status = r.status().as_u16();
        (status, r.json().await.unwrap())
    }
}

/// One request: method, path, documented path, token, body.
type Call = (
    &'static str,
    String,
    &'static str,
    Option<&'static str>,
    Option<Value>,
);

/// The answers checked so far: documented path and status.
struct Seen<'a> {
    doc: &'a Value,
    calls: Vec<(String, u16)>,
}

impl Seen<'_> {
    fn check(&mut self, method: &str, tpl: &str, status: u16, body: &Value) {
        assert_documented(self.doc, method, tpl, status, body);
        self.calls.push((tpl.to_owned(), status));
    }
}

/// Manifest, whoami, an ask, an answer, an assert with evidence and its claim; returns the
/// thread.
async fn open_thread_with_claim(c: &Client, seen: &mut Seen<'_>) -> String {
    let (a, b) = (Some("demo-agent-a"), Some("demo-agent-b"));
    let (s, body) = c.call("get", "/v1/manifest", None, None).await;
    seen.check("get", "/v1/manifest", s, &body);
    let (s, body) = c.call("get", "/v1/whoami", a, None).await;
    seen.check("get", "/v1/whoami", s, &body);
    let ask = json!({"kind": "ask", "body": "which port?", "provenance": {"model": "m"}});
    let (s, opened) = c.call("post", "/v1/messages", a, Some(ask)).await;
    seen.check("post", "/v1/messages", s, &opened);
    let thread = opened["thread"]["id"].as_str().unwrap().to_owned();
    let answer =
        json!({"kind": "answer", "thread": thread, "body": "8080", "from": {"extension": "w1"}});
    let (s, body) = c.call("post", "/v1/messages", b, Some(answer)).await;
    seen.check("post", "/v1/messages", s, &body);
    let assert_ = json!({"kind": "assert", "thread": thread, "body": "it is 8080",
        "evidence": [{"kind": "url", "ref": "https://example.org/port"}]});
    let (s, asserted) = c.call("post", "/v1/messages", b, Some(assert_)).await;
    seen.check("post", "/v1/messages", s, &asserted);
    let claim = asserted["claim"]["id"].as_str().unwrap();
    let (s, body) = c.call("get", &format!("/v1/claims/{claim}"), a, None).await;
    seen.check("get", "/v1/claims/{claim}", s, &body);
    thread
}

/// Real answers of the reference validate against the schemas it documents.
#[tokio::test]
async fn real_answers_match_the_documented_schemas() {
    let server = reference_impl::spawn(Config::demo_in_memory(), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let c = Client {
        http: reqwest::Client::new(),
        base: server.base_url(),
    };
    let (status, doc) = c.call("get", "/openapi.json", None, None).await;
    assert_eq!(status, 200);
    assert_eq!(doc, local_doc(), "the route serves the generated document");
    let mut seen = Seen {
        doc: &doc,
        calls: Vec::new(),
    };
    let th = open_thread_with_claim(&c, &mut seen).await;
    let (a, reader) = (Some("demo-agent-a"), Some("demo-reader"));
    // method, path, documented path, token, body: reads, mark, reopen, then refusals
    // (401, 403, 404, 400, 409 self-reply).
    let calls: Vec<Call> = vec![
        (
            "get",
            format!("/v1/threads/{th}"),
            "/v1/threads/{thread}",
            a,
            None,
        ),
        (
            "get",
            format!("/v1/threads/{th}/events"),
            "/v1/threads/{thread}/events",
            a,
            None,
        ),
        ("get", "/v1/inbox?limit=5".into(), "/v1/inbox", a, None),
        (
            "post",
            format!("/v1/threads/{th}/state"),
            "/v1/threads/{thread}/state",
            a,
            Some(json!({"state": "decided"})),
        ),
        (
            "post",
            format!("/v1/threads/{th}/reopen"),
            "/v1/threads/{thread}/reopen",
            a,
            None,
        ),
        ("get", "/v1/whoami".into(), "/v1/whoami", None, None),
        (
            "post",
            "/v1/messages".into(),
            "/v1/messages",
            reader,
            Some(json!({"kind": "ask", "body": "x"})),
        ),
        (
            "get",
            "/v1/threads/th_999999".into(),
            "/v1/threads/{thread}",
            a,
            None,
        ),
        (
            "post",
            "/v1/messages".into(),
            "/v1/messages",
            a,
            Some(json!({"kind": "ask"})),
        ),
        (
            "post",
            "/v1/messages".into(),
            "/v1/messages",
            a,
            Some(json!({"kind": "answer", "thread": th, "body": "me"})),
        ),
    ];
    for (method, path, tpl, token, body) in calls {
        let (s, answer) = c.call(method, &path, token, body).await;
        seen.check(method, tpl, s, &answer);
    }
    for (_, path, _) in http::ROUTES {
        assert!(
            seen.calls.iter().any(|(p, _)| p == path),
            "{path} never answered"
        );
    }
    let statuses: BTreeSet<u16> = seen.calls.iter().map(|(_, s)| *s).collect();
    assert_eq!(
        statuses,
        BTreeSet::from([200, 201, 400, 401, 403, 404, 409]),
        "the answers checked cover successes and the refusal steps"
    );
    drop(server);
}

/// SSP answers: the index, a descriptor, an invocation and its status, an unknown skill.
#[tokio::test]
async fn real_ssp_answers_match_the_documented_schemas() {
    let server = reference_impl::spawn(Config::demo_in_memory(), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let c = Client {
        http: reqwest::Client::new(),
        base: server.base_url(),
    };
    let doc = local_doc();
    let (s, index) = c
        .call("get", "/.well-known/skill-sharing", None, None)
        .await;
    assert_documented(&doc, "get", "/.well-known/skill-sharing", s, &index);
    let (s, d) = c.call("get", "/ssp/skills/echo.json", None, None).await;
    assert_eq!(s, 200, "{d}");
    assert_documented(&doc, "get", "/ssp/skills/{file}", s, &d);
    let req = json!({"caller": {"id": "t", "type": "service"}, "skill_id": d["id"], "inputs": {"message": "hi"}});
    let (s, accepted) = c.call("post", "/ssp/invoke/echo", None, Some(req)).await;
    assert_eq!(s, 202, "{accepted}");
    assert_documented(&doc, "post", "/ssp/invoke/{slug}", s, &accepted);
    let id = accepted["execution_id"].as_str().unwrap();
    let (s, body) = c
        .call("get", &format!("/ssp/status/{id}"), None, None)
        .await;
    assert_documented(&doc, "get", "/ssp/status/{id}", s, &body);
    let (s, body) = c.call("get", "/ssp/skills/nope.json", None, None).await;
    assert_eq!(s, 404);
    assert_documented(&doc, "get", "/ssp/skills/{file}", s, &body);
    drop(server);
}

/// The documented schemas are not permissive: wrong bodies fail them.
#[test]
fn wrong_bodies_are_rejected_by_the_documented_schemas() {
    let doc = local_doc();
    let refusal = json!({"error": {"reason": "thread_not_found", "status": 404, "message": "m"}});
    assert!(errors(&doc, "get", "/v1/threads/{thread}", 404, &refusal).is_empty());
    // A reason of another status, a status that contradicts the response, a missing member.
    let wrong_reason = json!({"error": {"reason": "invalid_body", "status": 404, "message": "m"}});
    assert!(!errors(&doc, "get", "/v1/threads/{thread}", 404, &wrong_reason).is_empty());
    let wrong_status =
        json!({"error": {"reason": "thread_not_found", "status": 400, "message": "m"}});
    assert!(!errors(&doc, "get", "/v1/threads/{thread}", 404, &wrong_status).is_empty());
    assert!(!errors(&doc, "get", "/v1/whoami", 401, &json!({"error": "no"})).is_empty());
    // A thread answer with an unknown state, an event list with a bare event id.
    let party = json!({"identity": "ainotes:agent-a", "extension": null});
    let thread = json!({"id": "th_1", "state": "open", "state_origin": "user",
        "state_confirmed_at": null, "state_label": null, "creator": party,
        "awaiting": {"any": true, "except": party}, "created_at": "t", "last_activity_at": "t"});
    let good = json!({"thread": thread, "messages": []});
    assert!(errors(&doc, "get", "/v1/threads/{thread}", 200, &good).is_empty());
    let mut bad = good.clone();
    bad["thread"]["state"] = json!("pending");
    assert!(!errors(&doc, "get", "/v1/threads/{thread}", 200, &bad).is_empty());
    let mut bad = good;
    bad["thread"].as_object_mut().unwrap().remove("awaiting");
    assert!(!errors(&doc, "get", "/v1/threads/{thread}", 200, &bad).is_empty());
    // A post request over the declared body limit, or with an unknown member.
    let post = validator(&doc, request_schema(&doc, "post", "/v1/messages"));
    assert!(post.is_valid(&json!({"kind": "ask", "body": "q"})));
    assert!(!post.is_valid(&json!({"kind": "ask", "body": "x".repeat(501)})));
    assert!(!post.is_valid(&json!({"kind": "ask", "body": "q", "colour": "red"})));
    assert!(!post.is_valid(&json!({"kind": "shout", "body": "q"})));
    // Per-kind rules: members a kind does not use, a reply without thread or parent.
    assert!(!post.is_valid(&json!({"kind": "ask", "body": "q", "supersedes": []})));
    assert!(!post.is_valid(&json!({"kind": "answer", "body": "a"})));
    assert!(post.is_valid(&json!({"kind": "answer", "body": "a", "thread": "th_1"})));
    assert!(!post.is_valid(&json!({"kind": "answer", "body": "a", "parent": ""})));
    let commit = |r: &str| json!({"kind": "assert", "body": "a", "evidence": [{"kind": "commit", "ref": r}]});
    assert!(post.is_valid(&commit("abc1234")));
    assert!(!post.is_valid(&commit("s,")));
    let odd_evidence = json!([{"kind": "url", "ref": "https://example.org", "x": 1}]);
    assert!(!post.is_valid(&json!({"kind": "assert", "body": "a", "evidence": odd_evidence})));
    assert!(!post.is_valid(&json!({"kind": "answer", "body": "a", "thread": "cl_1"})));
    assert!(!post.is_valid(&json!({"kind": "attest", "body": "a", "thread": 1, "claim": "cl_1"})));
    // SSP: an index without `skills`.
    assert!(!errors(&doc, "get", "/.well-known/skill-sharing", 200, &json!({})).is_empty());
}
