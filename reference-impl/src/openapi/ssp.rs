//! The SSP half of `/openapi.json`: one operation per row of [`crate::ssp::api::ROUTES`],
//! bodies from the protocol schema's `$defs` (the single source the provider validates
//! with, SSP-SCH-1), copied into `components` as `ssp.<Name>`.

use serde_json::{Map, Value, json};

use super::parley::{COMPONENTS, json_response};
use crate::ssp::MAX_INVOCATION_BODY;
use crate::ssp::api::{ROUTES, SspRoute};
use crate::ssp::schema::SCHEMA_JSON;

/// The prefix of SSP component names (keeps them apart from the Parley ones).
pub(super) const PREFIX: &str = "ssp.";

/// Security schemes of the SSP skills (ssp.md §1, §5): an API key in `X-API-Key`, an OAuth2
/// access token as a bearer, and the custom HMAC signature in `X-Signature`.
pub(super) fn security_schemes() -> Map<String, Value> {
    let schemes = json!({
        "sspApiKey": {"type": "apiKey", "in": "header", "name": crate::ssp::skills::API_KEY_HEADER},
        "sspBearer": {"type": "http", "scheme": "bearer", "description": "OAuth2 access token (oauth2 skills)"},
        "sspSignature": {"type": "apiKey", "in": "header", "name": crate::ssp::skills::SIGNATURE_HEADER,
                         "description": "hex HMAC-SHA256 of the body (custom skills, ssp.md §7)"},
    });
    match schemes {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// The schema's `$defs` as components `ssp.<Name>`, references rewritten to match.
/// An unparsable embedded schema gives none (the provider refuses to start on it anyway).
pub(super) fn component_schemas() -> Map<String, Value> {
    let Ok(Value::Object(mut root)) = serde_json::from_str::<Value>(SCHEMA_JSON) else {
        return Map::new();
    };
    let Some(Value::Object(defs)) = root.remove("$defs") else {
        return Map::new();
    };
    defs.into_iter()
        .map(|(name, mut schema)| {
            rewrite_refs(&mut schema);
            (format!("{PREFIX}{name}"), schema)
        })
        .collect()
}

/// `#/$defs/X` → `#/components/schemas/ssp.X`, everywhere in `v`.
fn rewrite_refs(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                match value {
                    Value::String(s) if key == "$ref" => {
                        if let Some(name) = s.strip_prefix("#/$defs/") {
                            *s = format!("{COMPONENTS}{PREFIX}{name}");
                        }
                    }
                    _ => rewrite_refs(value),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(rewrite_refs),
        _ => {}
    }
}

/// The success schema and the parameters of `route`.
fn shape(route: SspRoute) -> (&'static str, Vec<Value>) {
    let path = |name: &str, description: &str| json!({"name": name, "in": "path", "required": true, "schema": {"type": "string"}, "description": description});
    let filter = |name: &str| {
        json!({"name": name, "in": "query", "required": false,
               "schema": {"$ref": format!("{COMPONENTS}{PREFIX}CapabilityType")}})
    };
    match route {
        SspRoute::Index => (
            "SkillIndex",
            vec![filter("capability_type"), filter("type")],
        ),
        SspRoute::Descriptor => (
            "SkillDescriptor",
            vec![path("file", "`<slug>.json` of an index entry")],
        ),
        SspRoute::Invoke => ("InvocationResponse", vec![path("slug", "the skill's slug")]),
        SspRoute::Status | SspRoute::Result => {
            ("InvocationResponse", vec![path("id", "an execution id")])
        }
        SspRoute::Schema => ("", Vec::new()),
    }
}

/// The responses of `route`: successes with its schema, errors with `ErrorResponse`.
fn responses(route: SspRoute, success: &str) -> Value {
    let mut out = Map::new();
    for status in route.statuses() {
        let resp = match (*status, success) {
            (s, "") if s < 300 => {
                json!({"description": "the protocol schema (JSON Schema 2020-12)",
                                         "content": {"application/json": {"schema": {"type": "object"}}}})
            }
            (s, _) if s < 300 => json_response("success", &format!("{PREFIX}{success}")),
            (429, _) => {
                let mut r = json_response("error (seed §8.2)", &format!("{PREFIX}ErrorResponse"));
                r["headers"] = json!({"Retry-After": {"schema": {"type": "integer"}}});
                r
            }
            _ => json_response("error (seed §8.2)", &format!("{PREFIX}ErrorResponse")),
        };
        out.insert(status.to_string(), resp);
    }
    Value::Object(out)
}

/// `paths` entries for every row of the SSP route table: `(path, method, operation)`.
pub(super) fn operations() -> Vec<(String, String, Value)> {
    ROUTES
        .iter()
        .map(|(method, pattern, route)| {
            let (success, parameters) = shape(*route);
            // Public skills need nothing; protected ones one of the schemes (SSP-AUTH-1..4).
            let security = if *route == SspRoute::Schema {
                json!([])
            } else {
                json!([{}, {"sspApiKey": []}, {"sspBearer": []}, {"sspSignature": []}])
            };
            let mut operation = json!({
                "operationId": format!("ssp_{route:?}").to_ascii_lowercase(),
                "tags": ["ssp"],
                "summary": format!("SSP {route:?} (ssp.md)"),
                "security": security,
                "parameters": parameters,
                "responses": responses(*route, success),
            });
            if *route == SspRoute::Invoke {
                operation["requestBody"] = json!({
                    "required": true,
                    "description": format!("at most {MAX_INVOCATION_BODY} bytes"),
                    "content": {"application/json": {"schema": {"$ref": format!("{COMPONENTS}{PREFIX}InvocationRequest")}}},
                });
            }
            (
                (*pattern).to_owned(),
                method.as_str().to_ascii_lowercase(),
                operation,
            )
        })
        .collect()
}
