//! One real-socket smoke test of the SSP provider inside the whole reference server
//! (`reference_impl::spawn` on 127.0.0.1:0): discovery → descriptor → invoke → poll, the
//! way the README's curl walk-through does it, with URLs taken from the documents.

#![expect(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

mod support;

use std::time::Duration;

use reference_impl::config::Config;
use reference_impl::ssp::schema::Schemas;
use serde_json::{Value, json};
use support::http::json as get_json;

#[tokio::test]
async fn discovery_invoke_poll_over_a_real_socket() {
    let schemas = Schemas::load().unwrap();
    let valid = |ty: &str, v: &Value| {
        let e = schemas.validate(ty, v);
        assert!(e.is_empty(), "{ty}: {e:?}\n{v:#}");
    };
    let server = reference_impl::spawn(Config::demo_in_memory(), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let base = server.base_url();
    let http = reqwest::Client::new();

    let index = get_json(http.get(format!("{base}/.well-known/skill-sharing"))).await;
    valid("SkillIndex", &index);
    let echo = index["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "conform/echo")
        .unwrap();
    let descriptor_url = echo["descriptor_url"].as_str().unwrap();
    assert!(
        descriptor_url.starts_with(&base),
        "{descriptor_url} uses the bound address"
    );
    let d = get_json(http.get(descriptor_url)).await;
    valid("SkillDescriptor", &d);

    let r = http
        .post(d["endpoint"]["url"].as_str().unwrap())
        .json(&json!({"caller": {"id": "smoke", "type": "service"}, "skill_id": "conform/echo", "inputs": {"message": "hi"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 202);
    assert_eq!(r.headers()["content-type"], "application/json");
    let accepted: Value = r.json().await.unwrap();
    valid("InvocationResponse", &accepted);
    let id = accepted["execution_id"].as_str().unwrap();
    let status_url = d["endpoint"]["status_url"]
        .as_str()
        .unwrap()
        .replace("{execution_id}", id);
    let result_url = d["endpoint"]["result_url"]
        .as_str()
        .unwrap()
        .replace("{execution_id}", id);
    let done = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let s = get_json(http.get(&status_url)).await;
            valid("InvocationResponse", &s);
            if s["status"] == "completed" {
                break s;
            }
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("echo completes");
    assert_eq!(done["output"], json!({"message": "hi"}));
    let r = http.get(&result_url).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);

    // Unknown routes under /ssp keep the unified SSP error even inside the whole server.
    let r = http.get(format!("{base}/ssp/nope")).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 404);
    let e: Value = r.json().await.unwrap();
    valid("ErrorResponse", &e);
    let r = http
        .delete(format!("{base}/ssp/invoke/echo"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 405);
    valid("ErrorResponse", &r.json().await.unwrap());
    server.shutdown().await;
}
