//! SSP targets: document validation and invocation requests.

use axum::body::Body;
use axum::http::Request;
use conform::ssp::validator::{DocType, Mode, validate};
use serde_json::Value;

use crate::app::send;

/// Any JSON validated as every SSP document type, strict and lenient: a report, never a
/// panic (a schema error would mean the embedded schema is broken).
pub fn documents(data: &[u8]) {
    let Ok(doc) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    for doc_type in DocType::ALL {
        for mode in [Mode::Strict, Mode::Lenient] {
            if let Err(e) = validate(&doc, doc_type, mode) {
                panic!("the embedded SSP schema is broken: {e:?}");
            }
        }
    }
}

/// Any bytes as the body of an invocation of the reference's `echo` skill: never a 5xx,
/// and every answer is JSON.
pub fn invocation(data: &[u8]) {
    let req = Request::builder()
        .method("POST")
        .uri("/ssp/invoke/echo")
        .header("content-type", "application/json")
        .body(Body::from(data.to_vec()));
    let Ok(req) = req else {
        return;
    };
    let r = send(req);
    assert!(r.status < 500, "SSP invoke: HTTP {}", r.status);
    if let Err(e) = serde_json::from_slice::<Value>(&r.body) {
        panic!(
            "SSP invoke answer is not JSON ({e}): {}",
            String::from_utf8_lossy(&r.body)
        );
    }
}
