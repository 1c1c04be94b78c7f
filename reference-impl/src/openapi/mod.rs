//! `GET /openapi.json`: an OpenAPI 3.1 document of the Parley HTTP binding and the SSP
//! provider routes, generated from the route tables ([`crate::parley::api::http::ROUTES`],
//! [`crate::ssp::api::ROUTES`]), the service's check order and limits, the Rust wire types
//! (schemars, JSON Schema 2020-12) and the SSP protocol schema — never written by hand, so a
//! new route or member shows up in it (and `tests/openapi.rs` fails on one it misses).

mod parley;
mod ssp;
pub mod wire;

use axum::Router;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use serde_json::{Map, Value, json};

use crate::domain::parley::Limits;
use crate::parley::service::ParleyService;

/// The path the document is served at.
pub const PATH: &str = "/openapi.json";

/// The whole document for a server declaring `limits` (with or without the dialectic
/// profile).
pub fn document(limits: &Limits, dialectic: bool) -> Value {
    let mut schemas = parley::component_schemas(limits, dialectic);
    schemas.extend(ssp::component_schemas());
    let mut security = ssp::security_schemes();
    security.insert(
        parley::BEARER.to_owned(),
        json!({"type": "http", "scheme": "bearer", "description": "a token of the token table (PV-TR-4)"}),
    );
    let mut paths = Map::new();
    for (path, method, operation) in parley::operations(limits)
        .into_iter()
        .chain(ssp::operations())
    {
        let item = paths.entry(path).or_insert_with(|| json!({}));
        item[method] = operation;
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Parley v1 HTTP binding and SSP 1.0 provider (conform reference server)",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Generated from the reference server's route tables and wire types. \
                Refusals carry {\"error\": {\"reason\", \"status\", \"message\"}} (Parley, PV-TR-3) \
                or the unified SSP error (seed §8.2).",
        },
        "paths": paths,
        "components": {"schemas": schemas, "securitySchemes": security},
    })
}

/// The `/openapi.json` route for `service`'s limits (rendered once).
pub fn routes(service: &ParleyService) -> Router {
    let text = document(&service.limits(), service.dialectic()).to_string();
    Router::new().route(
        PATH,
        get(move || {
            let text = text.clone();
            async move {
                let mut r = (StatusCode::OK, text).into_response();
                r.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
                r
            }
        }),
    )
}
