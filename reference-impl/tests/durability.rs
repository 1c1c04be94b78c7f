//! Restart durability (issue 2 §6): writes acknowledged by the binary survive `kill -9`,
//! and ids are never reused after a restart on the same file.

#![expect(clippy::unwrap_used)] // tests: a panic is the failure report

mod support;

use support::binary;

use std::collections::BTreeSet;

use serde_json::{Value, json};

async fn post(http: &reqwest::Client, base: &str, token: &str, body: Value) -> Value {
    let resp = http
        .post(format!("{base}/v1/messages"))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    resp.json().await.unwrap()
}

async fn get(http: &reqwest::Client, base: &str, path: &str) -> Value {
    let resp = http
        .get(format!("{base}{path}"))
        .bearer_auth("demo-reader")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200, "{path}");
    resp.json().await.unwrap()
}

fn collect_ids(messages: &Value, out: &mut BTreeSet<String>) {
    for m in messages.as_array().unwrap() {
        out.insert(m["id"].as_str().unwrap().to_owned());
        collect_ids(&m["replies"], out);
    }
}

#[tokio::test]
async fn acknowledged_writes_survive_sigkill_and_ids_are_not_reused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("durable.db");
    let http = reqwest::Client::new();

    let server = binary::Server::start(&db);
    let mut threads = Vec::new();
    let mut acked = BTreeSet::new();
    for i in 0..5 {
        let opened = post(
            &http,
            &server.base,
            "demo-agent-a",
            json!({"kind": "ask", "body": format!("q{i}")}),
        )
        .await;
        let thread = opened["thread"]["id"].as_str().unwrap().to_owned();
        acked.insert(opened["message"]["id"].as_str().unwrap().to_owned());
        let answered = post(
            &http,
            &server.base,
            "demo-agent-b",
            json!({"kind": "answer", "thread": thread, "body": format!("a{i}")}),
        )
        .await;
        acked.insert(answered["message"]["id"].as_str().unwrap().to_owned());
        threads.push(thread);
    }
    let mut events_before = BTreeSet::new();
    for t in &threads {
        for e in get(&http, &server.base, &format!("/v1/threads/{t}/events")).await["events"]
            .as_array()
            .unwrap()
        {
            events_before.insert(e["id"].as_str().unwrap().to_owned());
        }
    }
    assert!(events_before.len() >= threads.len());
    server.kill9();

    let server = binary::Server::start(&db);
    let mut seen = BTreeSet::new();
    let mut events_after = BTreeSet::new();
    for t in &threads {
        let tree = get(&http, &server.base, &format!("/v1/threads/{t}")).await;
        collect_ids(&tree["messages"], &mut seen);
        for e in get(&http, &server.base, &format!("/v1/threads/{t}/events")).await["events"]
            .as_array()
            .unwrap()
        {
            events_after.insert(e["id"].as_str().unwrap().to_owned());
        }
    }
    assert_eq!(seen, acked, "every acknowledged message is back");
    assert!(
        events_before.is_subset(&events_after),
        "every event is back"
    );

    // New ids never reuse old ones (AUTOINCREMENT across restarts).
    let fresh = post(
        &http,
        &server.base,
        "demo-agent-a",
        json!({"kind": "ask", "body": "after restart"}),
    )
    .await;
    let msg = fresh["message"]["id"].as_str().unwrap();
    let th = fresh["thread"]["id"].as_str().unwrap();
    assert!(!acked.contains(msg), "{msg} reused");
    assert!(!threads.iter().any(|t| t == th), "{th} reused");
    let num = |id: &str| id.rsplit('_').next().unwrap().parse::<u64>().unwrap();
    assert!(
        acked.iter().all(|old| num(old) < num(msg)),
        "ids keep increasing"
    );
    server.terminate();
}
