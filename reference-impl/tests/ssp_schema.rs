//! The SSP protocol schema (`vectors/schemas/ssp/1.0.0/schema.json`): valid against the
//! Draft 2020-12 meta-schema, accepts every example document of the seed at the right
//! `$defs` type, rejects the seed's §8.3.1 faults at the right JSON pointers, and enforces
//! the binding's strict rules (SSP-SCH-1..4).

#![expect(clippy::unwrap_used)] // tests: a panic is the failure report

use reference_impl::ssp::schema::{SCHEMA_JSON, Schemas};
use serde_json::{Value, json};

fn schemas() -> Schemas {
    Schemas::load().unwrap()
}

fn seed_descriptor() -> Value {
    // Seed §3.6, verbatim.
    json!({
      "protocol": { "version": "1.0.0", "changelog_url": "https://example.com/changelog" },
      "id": "example-provider/weather-forecast",
      "name": "Weather Forecast",
      "version": "2.1.0",
      "capability_type": "api",
      "description": "Provides weather forecast data for a given location and date range.",
      "provider": { "name": "Example Weather Co.", "url": "https://weather.example.com", "contact": "api-support@example.com" },
      "endpoint": {
        "url": "https://api.weather.example.com/v2/forecast",
        "method": "POST",
        "content_type": "application/json",
        "status_url": "https://api.weather.example.com/v2/status/{execution_id}",
        "result_url": "https://api.weather.example.com/v2/result/{execution_id}",
        "timeout_ms": 30000,
        "retry": { "max_attempts": 3, "backoff_ms": 1000 }
      },
      "inputs": [
        { "name": "location", "type": "string", "description": "City name or coordinates (lat,lon).", "required": true },
        { "name": "days", "type": "number", "description": "Number of forecast days (1-14).", "required": false, "default": 7 }
      ],
      "output": {
        "content_type": "application/json",
        "description": "JSON object containing forecast data.",
        "schema": {
          "type": "object",
          "properties": {
            "location": { "type": "string" },
            "forecasts": { "type": "array", "items": { "type": "object", "properties": {
              "date": { "type": "string" }, "high": { "type": "number" }, "low": { "type": "number" }, "condition": { "type": "string" } } } }
          }
        }
      },
      "auth": { "type": "api_key", "description": "Provide your API key in the X-API-Key header.", "header": "X-API-Key" },
      "access": "public",
      "tags": ["weather", "forecast", "meteorology"],
      "documentation_url": "https://weather.example.com/docs/api",
      "created_at": "2025-01-15T08:00:00Z",
      "updated_at": "2025-06-20T14:30:00Z"
    })
}

/// Every example document of the seed, with the `$defs` type it is an instance of.
fn seed_examples() -> Vec<(&'static str, &'static str, Value)> {
    vec![
        ("§3.6 descriptor", "SkillDescriptor", seed_descriptor()),
        (
            "§4.6 index",
            "SkillIndex",
            json!({
              "protocol": { "version": "1.0.0" },
              "provider": { "name": "Example Corp", "url": "https://example.com" },
              "skills": [
                { "id": "example-corp/weather-forecast", "name": "Weather Forecast", "capability_type": "api",
                  "description": "Provides weather forecast data.", "descriptor_url": "https://example.com/skills/weather-forecast.json",
                  "access": "public", "version": "2.1.0" },
                { "id": "example-corp/document-translator", "name": "Document Translator", "capability_type": "task",
                  "description": "Translates documents between languages.", "descriptor_url": "https://example.com/skills/document-translator.json",
                  "access": "restricted", "version": "1.3.0" },
                { "id": "example-corp/internal-analytics", "name": "Internal Analytics", "capability_type": "plugin",
                  "description": "Internal analytics dashboard plugin.", "descriptor_url": "https://example.com/skills/internal-analytics.json",
                  "access": "private", "version": "0.9.0" }
              ]
            }),
        ),
        (
            "§5.3 request",
            "InvocationRequest",
            json!({
              "caller": { "id": "ifay-instance-001", "type": "ifay", "credentials": { "api_key": "sk-abc123..." } },
              "skill_id": "example-corp/weather-forecast",
              "inputs": { "location": "Tokyo", "days": 5 },
              "context": { "trace_id": "trace-7f3a9b2c", "priority": "normal", "timeout_ms": 30000 }
            }),
        ),
        (
            "§5.4 completed response",
            "InvocationResponse",
            json!({
              "execution_id": "exec-a1b2c3d4", "status": "completed", "skill_id": "example-corp/weather-forecast",
              "output": { "location": "Tokyo", "forecasts": [
                { "date": "2025-07-01", "high": 31, "low": 24, "condition": "Partly Cloudy" },
                { "date": "2025-07-02", "high": 29, "low": 22, "condition": "Rain" } ] },
              "timestamps": { "created_at": "2025-07-01T10:00:00Z", "updated_at": "2025-07-01T10:00:05Z", "completed_at": "2025-07-01T10:00:05Z" }
            }),
        ),
        (
            "§6.2 protocol",
            "ProtocolVersion",
            json!({ "version": "1.0.0", "changelog_url": "https://example.com/protocol/changelog" }),
        ),
        (
            "§7.2.1 api_key",
            "AuthConfig",
            json!({ "type": "api_key", "description": "Include your API key in the X-API-Key header.", "header": "X-API-Key" }),
        ),
        (
            "§7.2.2 oauth2",
            "AuthConfig",
            json!({
              "type": "oauth2", "description": "OAuth 2.0 authentication required.",
              "oauth2": { "authorization_url": "https://auth.example.com/authorize", "token_url": "https://auth.example.com/token",
                          "scopes": { "read:forecast": "Read forecast data", "write:preferences": "Update user preferences" } }
            }),
        ),
        (
            "§7.2.3 custom",
            "AuthConfig",
            json!({
              "type": "custom", "description": "HMAC-SHA256 signed requests.",
              "custom": { "instructions": "Sign the request body with your secret key using HMAC-SHA256 and include the signature in the X-Signature header.",
                          "parameters": [ { "name": "secret_key", "type": "string", "description": "Your HMAC secret key.", "required": true } ] }
            }),
        ),
        ("§7.2.4 none", "AuthConfig", json!({ "type": "none" })),
        (
            "§8.2 unified error",
            "ErrorResponse",
            json!({ "error": { "code": "<ErrorCode>", "message": "<message lisible par l'humain>", "details": {}, "retry": { "suggested_delay_ms": 0, "max_attempts": 0 } } }),
        ),
        (
            "§8.3.1 validation error",
            "ErrorResponse",
            json!({ "error": { "code": "VALIDATION_ERROR", "message": "Invalid SkillDescriptor document", "details": [
          { "path": "/capability_type", "message": "must be equal to one of the allowed values", "expected": ["plugin", "api", "knowledge", "task"], "actual": "invalid_type" },
          { "path": "/endpoint/method", "message": "must be equal to one of the allowed values", "expected": ["GET", "POST", "PUT", "DELETE"], "actual": "PATCH" } ] } }),
        ),
        (
            "§8.3.2 auth required",
            "ErrorResponse",
            json!({ "error": { "code": "AUTH_REQUIRED", "message": "Authentication is required to invoke this skill",
          "details": { "required_auth_type": "oauth2", "authorization_url": "https://auth.example.com/authorize" }, "retry": { "suggested_delay_ms": 0, "max_attempts": 1 } } }),
        ),
        (
            "§8.3.3 permission denied",
            "ErrorResponse",
            json!({ "error": { "code": "PERMISSION_DENIED", "message": "Insufficient permissions to invoke this skill",
          "details": { "required_scopes": ["read:forecast"], "granted_scopes": [] } } }),
        ),
        (
            "§8.3.4 not found",
            "ErrorResponse",
            json!({ "error": { "code": "SKILL_NOT_FOUND", "message": "Skill 'example-corp/nonexistent' was not found",
          "details": { "skill_id": "example-corp/nonexistent" } } }),
        ),
        (
            "§8.3.5 timeout",
            "ErrorResponse",
            json!({ "error": { "code": "INVOCATION_TIMEOUT", "message": "Skill execution timed out after 30000ms",
          "details": { "timeout_ms": 30000, "execution_id": "exec-a1b2c3d4" }, "retry": { "suggested_delay_ms": 1000, "max_attempts": 3 } } }),
        ),
        (
            "§8.3.6 unreachable",
            "ErrorResponse",
            json!({ "error": { "code": "ENDPOINT_UNREACHABLE", "message": "Failed to connect to invocation endpoint",
          "details": { "url": "https://api.weather.example.com/v2/forecast", "reason": "Connection refused" }, "retry": { "suggested_delay_ms": 2000, "max_attempts": 3 } } }),
        ),
        (
            "§8.3.7 version",
            "ErrorResponse",
            json!({ "error": { "code": "VERSION_INCOMPATIBLE", "message": "Protocol version 2.0.0 is not compatible with consumer version 1.5.0",
          "details": { "descriptor_version": "2.0.0", "consumer_version": "1.5.0", "supported_major": 1 } } }),
        ),
        (
            "§10.1 step 1 index",
            "SkillIndex",
            json!({
              "protocol": { "version": "1.0.0" },
              "provider": { "name": "Example Skills Provider", "url": "https://skills.example.com" },
              "skills": [ { "id": "example/text-summarizer", "name": "Text Summarizer", "capability_type": "api",
                "description": "Summarizes long text into concise paragraphs.", "descriptor_url": "https://skills.example.com/skills/text-summarizer.json",
                "access": "public", "version": "1.2.0" } ]
            }),
        ),
        (
            "§10.1 step 4 request",
            "InvocationRequest",
            json!({
              "caller": { "id": "ifay-instance-042", "type": "ifay" },
              "skill_id": "example/text-summarizer",
              "inputs": { "text": "The Skill Sharing Protocol defines a decentralized mechanism...", "max_length": 100 },
              "context": { "trace_id": "trace-9e8d7c6b", "priority": "normal" }
            }),
        ),
        (
            "§10.1 accepted",
            "InvocationResponse",
            json!({
              "execution_id": "exec-f5e4d3c2", "status": "accepted", "skill_id": "example/text-summarizer",
              "timestamps": { "created_at": "2025-07-01T12:00:00Z", "updated_at": "2025-07-01T12:00:00Z" }
            }),
        ),
        (
            "§10.1 completed",
            "InvocationResponse",
            json!({
              "execution_id": "exec-f5e4d3c2", "status": "completed", "skill_id": "example/text-summarizer",
              "output": { "summary": "The Skill Sharing Protocol enables decentralized skill discovery and invocation across the internet." },
              "timestamps": { "created_at": "2025-07-01T12:00:00Z", "updated_at": "2025-07-01T12:00:02Z", "completed_at": "2025-07-01T12:00:02Z" }
            }),
        ),
        (
            "§10.2 request",
            "InvocationRequest",
            json!({
              "caller": { "id": "ifay-001", "type": "ifay" }, "skill_id": "example-corp/weather-forecast", "inputs": { "location": "Berlin" }
            }),
        ),
        (
            "§10.2 401",
            "ErrorResponse",
            json!({ "error": { "code": "AUTH_REQUIRED", "message": "Authentication is required to invoke this skill",
          "details": { "required_auth_type": "api_key", "header": "X-API-Key" }, "retry": { "suggested_delay_ms": 0, "max_attempts": 1 } } }),
        ),
    ]
}

#[test]
fn schema_is_valid_against_the_2020_12_meta_schema() {
    // SSP-SCH-1
    let doc: Value = serde_json::from_str(SCHEMA_JSON).unwrap();
    assert_eq!(
        doc["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    jsonschema::draft202012::meta::validate(&doc).unwrap();
    // Every seed §9.1 type plus ErrorResponse and InvocationRequest is a $def; root = SkillDescriptor.
    for t in [
        "SkillDescriptor",
        "SkillIndex",
        "SkillIndexEntry",
        "InvocationRequest",
        "InvocationResponse",
        "ProtocolVersion",
        "CapabilityType",
        "AccessPolicy",
        "AuthType",
        "ExecutionStatus",
        "ParameterDefinition",
        "AuthConfig",
        "InvocationEndpoint",
        "OutputDefinition",
        "ErrorResponse",
    ] {
        assert!(doc["$defs"].get(t).is_some(), "missing $defs/{t}");
    }
    assert_eq!(doc["$ref"], "#/$defs/SkillDescriptor");
    // The root validates a descriptor too.
    let root = reference_impl::ssp::schema::compile(&doc).unwrap();
    assert!(root.is_valid(&seed_descriptor()));
    assert!(!root.is_valid(&json!({"error": {"code": "X", "message": "m"}})));
}

#[test]
fn every_seed_example_is_valid() {
    let s = schemas();
    for (name, ty, doc) in seed_examples() {
        let v = s.validate(ty, &doc);
        assert!(v.is_empty(), "{name} as {ty}: {v:?}");
    }
}

#[test]
fn seed_8_3_1_faults_are_rejected_at_the_right_pointers() {
    let s = schemas();
    let mut d = seed_descriptor();
    d["capability_type"] = json!("invalid_type");
    d["endpoint"]["method"] = json!("PATCH");
    let v = s.validate("SkillDescriptor", &d);
    let mut paths: Vec<_> = v.iter().map(|x| x.path.as_str()).collect();
    paths.sort();
    assert_eq!(paths, ["/capability_type", "/endpoint/method"], "{v:?}");
    let cap = v.iter().find(|x| x.path == "/capability_type").unwrap();
    assert_eq!(cap.expected, json!(["plugin", "api", "knowledge", "task"]));
    assert_eq!(cap.actual, json!("invalid_type"));
    assert_eq!(cap.message, "must be equal to one of the allowed values");
    let m = v.iter().find(|x| x.path == "/endpoint/method").unwrap();
    assert_eq!(m.expected, json!(["GET", "POST", "PUT", "DELETE"]));
    assert_eq!(m.actual, json!("PATCH"));
}

fn rejected_at(ty: &str, doc: &Value, pointer: &str) {
    let v = schemas().validate(ty, doc);
    assert!(
        v.iter().any(|x| x.path == pointer),
        "expected a violation at {pointer}, got {v:?} for {doc}"
    );
}

fn with(mut d: Value, pointer: &str, value: Value) -> Value {
    *d.pointer_mut(pointer).unwrap() = value;
    d
}

fn without(mut d: Value, parent: &str, key: &str) -> Value {
    d.pointer_mut(parent)
        .unwrap()
        .as_object_mut()
        .unwrap()
        .remove(key);
    d
}

#[test]
fn versions_follow_sch_2() {
    let s = schemas();
    for ok in [
        "1.0.0",
        "0.1.0",
        "2.3.1",
        "1.0.0-alpha.1",
        "1.0.0+build.5",
        "1.0.0-rc.1+exp.sha.5114f85",
    ] {
        assert!(
            s.validate(
                "SkillDescriptor",
                &with(seed_descriptor(), "/version", json!(ok))
            )
            .is_empty(),
            "{ok}"
        );
    }
    for bad in [
        "v1.0.0", "01.0.0", "1.0", "1.0.0.0", "1.0.0-", "1.0.0-01", "١.0.0", "",
    ] {
        rejected_at(
            "SkillDescriptor",
            &with(seed_descriptor(), "/version", json!(bad)),
            "/version",
        );
    }
    for bad in ["1.0.0-beta", "1.0.0+b", "1.0", "01.0.0"] {
        rejected_at(
            "SkillDescriptor",
            &with(seed_descriptor(), "/protocol/version", json!(bad)),
            "/protocol/version",
        );
    }
}

#[test]
fn urls_and_templates_follow_sch_3() {
    let d = seed_descriptor();
    rejected_at(
        "SkillDescriptor",
        &with(d.clone(), "/endpoint/url", json!("/v2/forecast")),
        "/endpoint/url",
    );
    rejected_at(
        "SkillDescriptor",
        &with(d.clone(), "/documentation_url", json!("docs")),
        "/documentation_url",
    );
    for bad in [
        "https://x.example/status",
        "https://x.example/{execution_id}/{execution_id}",
        "https://x.example/{id}",
        "/status/{execution_id}",
    ] {
        rejected_at(
            "SkillDescriptor",
            &with(d.clone(), "/endpoint/status_url", json!(bad)),
            "/endpoint/status_url",
        );
        rejected_at(
            "SkillDescriptor",
            &with(d.clone(), "/endpoint/result_url", json!(bad)),
            "/endpoint/result_url",
        );
    }
}

#[test]
fn conditionals_and_closed_objects_follow_sch_4() {
    let d = seed_descriptor();
    rejected_at(
        "SkillDescriptor",
        &without(d.clone(), "/auth", "header"),
        "/auth/header",
    );
    rejected_at("AuthConfig", &json!({"type": "oauth2"}), "/oauth2");
    rejected_at("AuthConfig", &json!({"type": "custom"}), "/custom");
    rejected_at(
        "AuthConfig",
        &json!({"type": "custom", "custom": {"instructions": "x"}}),
        "/custom/parameters",
    );
    rejected_at(
        "SkillDescriptor",
        &with(
            with(d.clone(), "/access", json!("restricted")),
            "/auth",
            json!({"type": "none"}),
        ),
        "/auth/type",
    );
    // Closed objects: unknown members are violations (strict).
    rejected_at(
        "SkillDescriptor",
        &with(
            d.clone(),
            "/endpoint/retry",
            json!({"max_attempts": 3, "backoff_ms": 1, "jitter": true}),
        ),
        "/endpoint/retry",
    );
    let mut extra = d;
    extra["x-extra"] = json!(1);
    rejected_at("SkillDescriptor", &extra, "");
    // error.retry needs both members.
    rejected_at(
        "ErrorResponse",
        &json!({"error": {"code": "X", "message": "m", "retry": {"max_attempts": 1}}}),
        "/error/retry/suggested_delay_ms",
    );
    rejected_at(
        "ErrorResponse",
        &json!({"error": {"message": "m"}}),
        "/error/code",
    );
    // InvocationResponse: completed needs output and completed_at; accepted must not have them.
    let base = json!({"execution_id": "e", "status": "completed", "skill_id": "s",
                      "timestamps": {"created_at": "2025-07-01T12:00:00Z", "updated_at": "2025-07-01T12:00:00Z"}});
    rejected_at("InvocationResponse", &base, "/output");
    rejected_at(
        "InvocationResponse",
        &with(base.clone(), "/status", json!("failed")),
        "/error",
    );
    let accepted_with_output = {
        let mut x = with(base.clone(), "/status", json!("accepted"));
        x["output"] = json!(1);
        x
    };
    rejected_at("InvocationResponse", &accepted_with_output, "/output");
    rejected_at(
        "InvocationResponse",
        &with(base, "/timestamps/created_at", json!("yesterday")),
        "/timestamps/created_at",
    );
    // InvocationRequest context and caller are closed; priority is an enum.
    rejected_at(
        "InvocationRequest",
        &json!({"caller": {"id": "a", "type": "t"}, "skill_id": "s", "inputs": {}, "context": {"priority": "urgent"}}),
        "/context/priority",
    );
    rejected_at(
        "InvocationRequest",
        &json!({"caller": {"id": "a"}, "skill_id": "s", "inputs": {}}),
        "/caller/type",
    );
    rejected_at(
        "InvocationRequest",
        &json!({"caller": {"id": "a", "type": "t"}, "skill_id": "s", "inputs": []}),
        "/inputs",
    );
}

#[test]
fn all_violations_are_reported_at_once() {
    // SSP-SCH-5: every violation, each with path/message/expected/actual.
    let mut d = seed_descriptor();
    d["capability_type"] = json!("x");
    d["access"] = json!("y");
    d["version"] = json!("v1");
    d.as_object_mut().unwrap().remove("name");
    let v = schemas().validate("SkillDescriptor", &d);
    let paths: std::collections::BTreeSet<_> = v.iter().map(|x| x.path.as_str()).collect();
    for p in ["/capability_type", "/access", "/version", "/name"] {
        assert!(paths.contains(p), "{p} missing from {v:?}");
    }
}
