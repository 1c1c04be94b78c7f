//! Auth matrix (issue 3): every demo skill × {no credential, wrong credential, credential
//! in the wrong header, limited credential, right credential} → expected status and code
//! (SSP-AUTH-1..4). 401s carry `details` describing the method, `retry {0, 1}` and a
//! `WWW-Authenticate` challenge; 403s carry `required_scopes` / `granted_scopes`.

#![expect(clippy::unwrap_used)] // tests: a panic is the failure report

mod support;

use serde_json::{Value, json};
use support::ssp::{Client, request, signature};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Cell {
    None,
    Wrong,
    WrongHeader,
    Limited,
    Right,
}

const CELLS: [Cell; 5] = [
    Cell::None,
    Cell::Wrong,
    Cell::WrongHeader,
    Cell::Limited,
    Cell::Right,
];

struct Row {
    slug: &'static str,
    inputs: Value,
    auth: &'static str,
}

fn rows() -> Vec<Row> {
    vec![
        Row {
            slug: "echo",
            inputs: json!({"message": "m"}),
            auth: "none",
        },
        Row {
            slug: "text-stats",
            inputs: json!({"text": "a b"}),
            auth: "none",
        },
        Row {
            slug: "slow-task",
            inputs: json!({"delay_ms": 0}),
            auth: "api_key",
        },
        Row {
            slug: "always-fails",
            inputs: json!({}),
            auth: "none",
        },
        Row {
            slug: "overrun",
            inputs: json!({}),
            auth: "none",
        },
        Row {
            slug: "spec-lookup",
            inputs: json!({"id": "SSP-AUTH-2"}),
            auth: "custom",
        },
        Row {
            slug: "forum-digest",
            inputs: json!({"thread": "th_1"}),
            auth: "oauth2",
        },
    ]
}

/// The headers of a cell for a skill with `auth`, over the raw `body`.
fn headers(auth: &str, cell: Cell, body: &[u8]) -> Vec<(String, String)> {
    let h = |k: &str, v: &str| vec![(k.to_string(), v.to_string())];
    match (auth, cell) {
        (_, Cell::None) => vec![],
        // For `none` skills, any credential is ignored (SSP-AUTH-1): send real and bogus ones.
        ("none", Cell::Wrong) => h("x-api-key", "nope"),
        ("none", Cell::WrongHeader) => h("authorization", "Bearer demo-ssp-key"),
        ("none", Cell::Limited) => h("x-api-key", "demo-ssp-key-limited"),
        ("none", Cell::Right) => h("authorization", "Bearer demo-oauth-full"),
        ("api_key", Cell::Wrong) => h("x-api-key", "not-a-key"),
        // SSP-AUTH-4: the right key in another header.
        ("api_key", Cell::WrongHeader) => h("authorization", "Bearer demo-ssp-key"),
        ("api_key", Cell::Limited) => h("x-api-key", "demo-ssp-key-limited"),
        ("api_key", Cell::Right) => h("x-api-key", "demo-ssp-key"),
        ("oauth2", Cell::Wrong) => h("authorization", "Bearer not-a-token"),
        ("oauth2", Cell::WrongHeader) => h("x-api-key", "demo-oauth-full"),
        ("oauth2", Cell::Limited) => h("authorization", "Bearer demo-oauth-read"),
        ("oauth2", Cell::Right) => h("authorization", "Bearer demo-oauth-full"),
        ("custom", Cell::Wrong) => h(
            "x-signature",
            &reference_impl::ssp::auth::sign(b"wrong-secret", body),
        ),
        ("custom", Cell::WrongHeader) => h("authorization", &signature(body)),
        // The HMAC scheme has a single secret, hence no "limited" signature: a valid credential
        // of another method (a full oauth token) stands in and must still be refused with 401.
        ("custom", Cell::Limited) => h("authorization", "Bearer demo-oauth-full"),
        ("custom", Cell::Right) => h("x-signature", &signature(body)),
        (a, c) => panic!("no cell {a} {c:?}"),
    }
}

fn expected(auth: &str, cell: Cell) -> (u16, Option<&'static str>) {
    match (auth, cell) {
        ("none", _) | (_, Cell::Right) => (202, None),
        ("api_key" | "oauth2", Cell::Limited) => (403, Some("PERMISSION_DENIED")),
        _ => (401, Some("AUTH_REQUIRED")),
    }
}

#[tokio::test]
async fn every_skill_times_every_credential_cell() {
    let c = Client::demo();
    let mut checked = 0;
    for row in rows() {
        let body = request(&format!("conform/{}", row.slug), row.inputs.clone())
            .to_string()
            .into_bytes();
        for cell in CELLS {
            let hs = headers(row.auth, cell, &body);
            let mut h: Vec<(&str, &str)> = vec![("content-type", "application/json")];
            h.extend(hs.iter().map(|(k, v)| (k.as_str(), v.as_str())));
            let r = c
                .send(
                    "POST",
                    &format!("/ssp/invoke/{}", row.slug),
                    &h,
                    Some(body.clone()),
                )
                .await;
            let (status, code) = expected(row.auth, cell);
            assert_eq!(r.status, status, "{} × {cell:?}: {}", row.slug, r.body);
            assert_eq!(
                r.body["error"]["code"].as_str(),
                code,
                "{} × {cell:?}",
                row.slug
            );
            match status {
                202 => assert_eq!(r.body["status"], "accepted"),
                401 => {
                    // SSP-AUTH-2
                    let e = &r.body["error"];
                    assert_eq!(e["details"]["required_auth_type"], row.auth);
                    assert_eq!(
                        e["retry"],
                        json!({"suggested_delay_ms": 0, "max_attempts": 1})
                    );
                    match row.auth {
                        "api_key" => assert_eq!(e["details"]["header"], "X-API-Key"),
                        "custom" => assert_eq!(e["details"]["header"], "X-Signature"),
                        // The URL of the descriptor the caller sees (same base).
                        "oauth2" => assert_eq!(
                            e["details"]["authorization_url"],
                            "http://127.0.0.1:9/ssp/oauth/authorize"
                        ),
                        _ => unreachable!(),
                    }
                    let challenge = r.headers.get("www-authenticate").unwrap().to_str().unwrap();
                    assert!(!challenge.is_empty());
                }
                403 => {
                    // SSP-AUTH-3
                    let d = &r.body["error"]["details"];
                    assert_eq!(d["required_scopes"], json!(["skill:invoke"]));
                    let granted = if row.auth == "oauth2" {
                        json!(["skill:read"])
                    } else {
                        json!([])
                    };
                    assert_eq!(d["granted_scopes"], granted);
                }
                _ => unreachable!(),
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 35);
}

#[tokio::test]
async fn a_signature_over_another_body_is_refused() {
    // The HMAC covers the raw body: a signature of a different body is invalid.
    let c = Client::demo();
    let body = request("conform/spec-lookup", json!({"id": "SSP-AUTH-2"}))
        .to_string()
        .into_bytes();
    let other = request("conform/spec-lookup", json!({"id": "SSP-AUTH-3"}))
        .to_string()
        .into_bytes();
    let sig = signature(&other);
    let r = c
        .send(
            "POST",
            "/ssp/invoke/spec-lookup",
            &[("content-type", "application/json"), ("x-signature", &sig)],
            Some(body),
        )
        .await;
    assert_eq!(r.status, 401);
    // Uppercase hex of the right body is accepted (hex is case-insensitive).
    let body = request("conform/spec-lookup", json!({"id": "SSP-AUTH-2"}))
        .to_string()
        .into_bytes();
    let sig = signature(&body).to_uppercase();
    let r = c
        .send(
            "POST",
            "/ssp/invoke/spec-lookup",
            &[("content-type", "application/json"), ("x-signature", &sig)],
            Some(body),
        )
        .await;
    assert_eq!(r.status, 202);
}

#[tokio::test]
async fn auth_is_checked_before_the_body_is_interpreted() {
    // A protected skill does not reveal input validation to unauthenticated callers.
    let c = Client::demo();
    let r = c
        .send(
            "POST",
            "/ssp/invoke/slow-task",
            &[("content-type", "application/json")],
            Some(b"{oops".to_vec()),
        )
        .await;
    assert_eq!(r.status, 401);
    let r = c
        .invoke("forum-digest", &json!({"nonsense": true}), &[])
        .await;
    assert_eq!(r.status, 401);
}
