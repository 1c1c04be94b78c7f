//! The custom HMAC scheme's replay protection (issue 13 §8): with `X-Signature-Timestamp`
//! and `X-Signature-Nonce` the signature covers timestamp, nonce, method, path and body; a
//! replayed nonce or a timestamp outside ±300 s is refused (401 `AUTH_REQUIRED`), and a poll
//! signature is bound to its execution id. The seed's plain scheme keeps working unchanged.

#![expect(clippy::unwrap_used)] // tests: a panic is the failure report

mod support;

use reference_impl::ssp::auth::{REPLAY_WINDOW_SECS, Signed, sign_replay_protected};
use serde_json::{Value, json};
use support::ssp::{Client, HMAC_SECRET, Resp, request, settle, signature};

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

/// Headers of the replay-protected form for `method path body` at `ts` with `nonce`.
fn protected(method: &str, path: &str, body: &[u8], ts: i64, nonce: &str) -> Vec<(String, String)> {
    let ts = ts.to_string();
    let sig = sign_replay_protected(HMAC_SECRET, &ts, nonce, &Signed { method, path, body });
    vec![
        ("x-signature".into(), sig),
        ("x-signature-timestamp".into(), ts),
        ("x-signature-nonce".into(), nonce.into()),
    ]
}

async fn send(
    c: &Client,
    method: &str,
    path: &str,
    h: &[(String, String)],
    body: Option<Vec<u8>>,
) -> Resp {
    let mut headers: Vec<(&str, &str)> = h.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    if body.is_some() {
        headers.push(("content-type", "application/json"));
    }
    c.send(method, path, &headers, body).await
}

fn lookup(id: &str) -> Vec<u8> {
    request("conform/spec-lookup", json!({ "id": id }))
        .to_string()
        .into_bytes()
}

const INVOKE: &str = "/ssp/invoke/spec-lookup";

/// Invokes spec-lookup with the replay-protected form; the execution id.
async fn invoke(c: &Client, nonce: &str) -> String {
    let body = lookup("SSP-INV-3");
    let h = protected("POST", INVOKE, &body, now(), nonce);
    let r = send(c, "POST", INVOKE, &h, Some(body)).await;
    assert_eq!(r.status, 202, "{}", r.body);
    r.body["execution_id"].as_str().unwrap().to_string()
}

fn assert_auth_required(r: &Resp) {
    assert_eq!(r.status, 401, "{}", r.body);
    assert_eq!(r.body["error"]["code"], "AUTH_REQUIRED");
    assert!(r.headers.get("www-authenticate").is_some());
}

#[tokio::test]
async fn a_replayed_invocation_is_refused() {
    let c = Client::demo();
    let body = lookup("SSP-INV-3");
    let h = protected("POST", INVOKE, &body, now(), "nonce-0000000000001");
    let first = send(&c, "POST", INVOKE, &h, Some(body.clone())).await;
    assert_eq!(first.status, 202, "{}", first.body);
    // The very same request again: the nonce was seen.
    assert_auth_required(&send(&c, "POST", INVOKE, &h, Some(body.clone())).await);
    // The same signature with another nonce does not verify.
    let mut other = h.clone();
    other[2].1 = "nonce-0000000000002".into();
    assert_auth_required(&send(&c, "POST", INVOKE, &other, Some(body.clone())).await);
    // A fresh nonce, properly signed, passes.
    let h = protected("POST", INVOKE, &body, now(), "nonce-0000000000003");
    assert_eq!(send(&c, "POST", INVOKE, &h, Some(body)).await.status, 202);
}

#[tokio::test]
async fn a_timestamp_outside_the_window_is_refused() {
    let c = Client::demo();
    let body = lookup("SSP-INV-3");
    for (n, ts) in [
        now() - REPLAY_WINDOW_SECS - 60,
        now() + REPLAY_WINDOW_SECS + 60,
    ]
    .into_iter()
    .enumerate()
    {
        let h = protected("POST", INVOKE, &body, ts, &format!("stale-nonce-00000{n}"));
        assert_auth_required(&send(&c, "POST", INVOKE, &h, Some(body.clone())).await);
    }
    // Not a number, or one header of the pair alone: refused too.
    let mut h = protected("POST", INVOKE, &body, now(), "nonce-not-a-number");
    h[1].1 = "soon".into();
    assert_auth_required(&send(&c, "POST", INVOKE, &h, Some(body.clone())).await);
    let h = protected("POST", INVOKE, &body, now(), "nonce-alone-000001");
    assert_auth_required(&send(&c, "POST", INVOKE, &h[..2], Some(body.clone())).await);
    // A nonce too short to be unique.
    let h = protected("POST", INVOKE, &body, now(), "short");
    assert_auth_required(&send(&c, "POST", INVOKE, &h, Some(body)).await);
}

#[tokio::test]
async fn a_poll_signature_for_one_execution_does_not_read_another() {
    let c = Client::demo();
    let a = invoke(&c, "invoke-a-000000000001").await;
    let b = invoke(&c, "invoke-b-000000000001").await;
    settle().await;
    let path_a = format!("/ssp/status/{a}");
    let path_b = format!("/ssp/status/{b}");
    let for_a = protected("GET", &path_a, b"", now(), "poll-a-0000000000001");
    // A's poll signature on B's path: not a valid credential there → B is unknown (SSP-INV-6).
    assert_eq!(send(&c, "GET", &path_b, &for_a, None).await.status, 404);
    // It does read A (so the refusal above is the binding, not a bad signature)…
    let r = send(&c, "GET", &path_a, &for_a, None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["execution_id"], a.as_str());
    // …once: the same poll again is a replay.
    assert_eq!(send(&c, "GET", &path_a, &for_a, None).await.status, 404);
    // The result route signs its own path.
    let result_b = format!("/ssp/result/{b}");
    let h = protected("GET", &result_b, b"", now(), "poll-b-0000000000001");
    let r = send(&c, "GET", &result_b, &h, None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["output"]["id"], "SSP-INV-3");
}

#[tokio::test]
async fn the_constant_plain_poll_signature_does_not_read_protected_executions() {
    let c = Client::demo();
    let plain = signature(b"");
    let h = [("x-signature", plain.as_str())];
    let protected_id = invoke(&c, "invoke-p-000000000001").await;
    settle().await;
    assert_eq!(c.status(&protected_id, &h).await.status, 404);
    // The seed's scheme keeps working for executions it created (existing clients).
    let body = lookup("SSP-INV-3");
    let sig = signature(&body);
    let r = c
        .send(
            "POST",
            INVOKE,
            &[("content-type", "application/json"), ("x-signature", &sig)],
            Some(body),
        )
        .await;
    assert_eq!(r.status, 202);
    settle().await;
    let id = r.body["execution_id"].as_str().unwrap();
    assert_eq!(c.status(id, &h).await.status, 200);
    assert_eq!(
        c.status(id, &h).await.status,
        200,
        "no replay check without the pair"
    );
}

#[tokio::test]
async fn discovery_accepts_the_protected_form_and_the_descriptor_documents_it() {
    let c = Client::demo();
    let path = "/.well-known/skill-sharing";
    let h = protected("GET", path, b"", now(), "discover-00000000001");
    let r = send(&c, "GET", path, &h, None).await;
    let ids: Vec<&str> = r.body["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert!(
        ids.contains(&"conform/forum-digest"),
        "private skill visible: {ids:?}"
    );
    let d = c.get("/ssp/skills/spec-lookup.json", &[]).await.body;
    let custom = &d["auth"]["custom"];
    let text = custom["instructions"].as_str().unwrap();
    assert!(text.contains("X-Signature-Timestamp") && text.contains("X-Signature-Nonce"));
    let params: Vec<(&str, bool)> = custom["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p: &Value| {
            (
                p["name"].as_str().unwrap(),
                p["required"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        params,
        [("secret_key", true), ("timestamp", false), ("nonce", false)]
    );
}
