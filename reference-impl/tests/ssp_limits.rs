//! The SSP provider's limits (issue 13 §2–§3): memory per execution bounded (terminal
//! executions leave the memory cache, the cache is bounded in bytes), retention of
//! executions, and the per-client invocation rate limit (429 `ENDPOINT_UNREACHABLE` in the unified
//! shape, with `Retry-After`). In process; time-dependent parts run under paused tokio time.

#![expect(clippy::unwrap_used)] // tests: a panic is the failure report

mod support;

use std::net::SocketAddr;
use std::time::Duration;

use reference_impl::config::SspLimits;
use serde_json::{Value, json};
use support::ssp::{Client, request, settle};

const KEY: (&str, &str) = ("x-api-key", "demo-ssp-key");

fn unlimited() -> SspLimits {
    SspLimits {
        invocations_per_minute: None,
        ..SspLimits::default()
    }
}

fn id_of(body: &Value) -> String {
    body["execution_id"].as_str().unwrap().to_string()
}

/// The 64 KiB echo of issue 13 §2: an array of 32,000 zeros.
fn big_echo() -> Value {
    request(
        "conform/echo",
        json!({"message": "m", "metadata": {"zeros": vec![0; 32_000]}}),
    )
}

#[tokio::test(start_paused = true)]
async fn many_large_invocations_keep_the_cache_within_its_byte_bound() {
    let max = 512 * 1024;
    let c = Client::demo_with(SspLimits {
        cache_max_bytes: max,
        ..unlimited()
    });
    let req = big_echo();
    assert!(req.to_string().len() > 64_000 && req.to_string().len() <= 64 * 1024);
    let mut ids = Vec::new();
    for _ in 0..60 {
        let r = c.invoke("echo", &req, &[]).await;
        assert_eq!(r.status, 202, "{}", r.body);
        ids.push(id_of(&r.body));
        let u = c.state.execution_cache();
        assert!(u.bytes <= max, "{u:?}");
        assert_eq!(u.bytes, u.recomputed_bytes, "{u:?}");
    }
    settle().await;
    // Every echo is done: terminal executions are not kept in memory at all.
    let u = c.state.execution_cache();
    assert_eq!((u.entries, u.bytes, u.recomputed_bytes), (0, 0, 0), "{u:?}");
    // …and are still served, from SQLite, output intact.
    for id in [&ids[0], &ids[59]] {
        let r = c.status(id, &[]).await;
        assert_eq!(r.body["status"], "completed");
        assert_eq!(r.body["output"], req["inputs"]);
    }
}

#[tokio::test(start_paused = true)]
async fn live_executions_beyond_the_cache_bound_run_and_are_served_from_sqlite() {
    // Room for about two live executions: the others are not cached at all.
    let c = Client::demo_with(SspLimits {
        cache_max_bytes: 1200,
        ..unlimited()
    });
    let req = request("conform/slow-task", json!({"delay_ms": 1000}));
    let mut ids = Vec::new();
    for _ in 0..10 {
        let r = c.invoke("slow-task", &req, &[KEY]).await;
        assert_eq!(r.status, 202, "{}", r.body);
        ids.push(id_of(&r.body));
    }
    settle().await;
    let u = c.state.execution_cache();
    assert!(u.bytes <= 1200 && u.entries < 10, "{u:?}");
    for id in &ids {
        assert_eq!(c.status(id, &[KEY]).await.body["status"], "running");
    }
    tokio::time::advance(Duration::from_millis(1001)).await;
    settle().await;
    for id in &ids {
        assert_eq!(c.status(id, &[KEY]).await.body["status"], "completed");
    }
    assert_eq!(c.state.execution_cache().entries, 0);
}

#[tokio::test(start_paused = true)]
async fn retention_deletes_the_oldest_and_the_expired_executions() {
    let c = Client::demo_with(SspLimits {
        retention_max_count: Some(2),
        retention_max_age: Some(Duration::from_secs(3600)),
        ..unlimited()
    });
    let mut ids = Vec::new();
    for n in 0..4 {
        let r = c
            .invoke(
                "echo",
                &request("conform/echo", json!({"message": n.to_string()})),
                &[],
            )
            .await;
        ids.push(id_of(&r.body));
        settle().await; // completed: a distinct completed_at each
    }
    let now = chrono::Utc::now();
    assert_eq!(c.state.sweep_executions(now).unwrap(), 2);
    let statuses = |ids: Vec<String>| {
        let c = c.clone();
        async move {
            let mut out = Vec::new();
            for id in ids {
                out.push(c.status(&id, &[]).await.status);
            }
            out
        }
    };
    // A deleted execution is unknown: the same 404 as any unknown id.
    assert_eq!(statuses(ids.clone()).await, [404, 404, 200, 200]);
    // By age: an hour later, nothing is kept.
    let later = now + chrono::Duration::seconds(3601);
    assert_eq!(c.state.sweep_executions(later).unwrap(), 2);
    assert_eq!(statuses(ids).await, [404, 404, 404, 404]);
}

fn peer(n: u8) -> SocketAddr {
    SocketAddr::from(([192, 0, 2, n], 40_000))
}

#[tokio::test(start_paused = true)]
async fn invocations_beyond_a_clients_rate_get_429_rate_limited() {
    let c = Client::demo_with(SspLimits {
        invocations_per_minute: Some(60),
        invocation_burst: 3,
        ..SspLimits::default()
    });
    let echo = request("conform/echo", json!({"message": "hi"}));
    for _ in 0..3 {
        assert_eq!(c.invoke_from(peer(1), "echo", &echo, &[]).await.status, 202);
    }
    let r = c.invoke_from(peer(1), "echo", &echo, &[]).await;
    // The unified shape (checked against the schema by the client) with a code of its own.
    assert_eq!(r.status, 429, "{}", r.body);
    // SSP-ERR-3's table: a rate limit is ENDPOINT_UNREACHABLE (the seven have no other).
    assert_eq!(r.body["error"]["code"], "ENDPOINT_UNREACHABLE");
    assert_eq!(r.headers.get("retry-after").unwrap(), "1");
    let delay = r.body["error"]["retry"]["suggested_delay_ms"]
        .as_u64()
        .unwrap();
    assert!((1..=1000).contains(&delay), "{delay}");
    assert_eq!(r.body["error"]["details"]["invocations_per_minute"], 60);
    // Other clients are not affected: another address, and a credential (its own bucket,
    // even from the same address).
    assert_eq!(c.invoke_from(peer(2), "echo", &echo, &[]).await.status, 202);
    let slow = request("conform/slow-task", json!({"delay_ms": 1}));
    assert_eq!(
        c.invoke_from(peer(1), "slow-task", &slow, &[KEY])
            .await
            .status,
        202
    );
    // One more per second.
    tokio::time::advance(Duration::from_millis(1000)).await;
    assert_eq!(c.invoke_from(peer(1), "echo", &echo, &[]).await.status, 202);
    assert_eq!(c.invoke_from(peer(1), "echo", &echo, &[]).await.status, 429);
}

#[tokio::test(start_paused = true)]
async fn keyed_clients_are_limited_too_and_polls_are_not() {
    let c = Client::demo_with(SspLimits {
        invocations_per_minute: Some(1),
        invocation_burst: 1,
        ..SspLimits::default()
    });
    let slow = request("conform/slow-task", json!({"delay_ms": 1}));
    let r = c.invoke_from(peer(1), "slow-task", &slow, &[KEY]).await;
    assert_eq!(r.status, 202);
    let id = id_of(&r.body);
    // Same key from another address: the same client.
    let again = c.invoke_from(peer(2), "slow-task", &slow, &[KEY]).await;
    assert_eq!(again.status, 429);
    assert_eq!(again.headers.get("retry-after").unwrap(), "60");
    for _ in 0..5 {
        assert_eq!(c.status(&id, &[KEY]).await.status, 200);
    }
}

#[tokio::test(start_paused = true)]
async fn the_default_limits_let_a_conformance_run_through() {
    // A conformance run invokes a few hundred times from one address, at once.
    let c = Client::demo_with(SspLimits::default());
    let echo = request("conform/echo", json!({"message": "hi"}));
    for _ in 0..SspLimits::INVOCATION_BURST {
        assert_eq!(c.invoke_from(peer(1), "echo", &echo, &[]).await.status, 202);
    }
    assert_eq!(c.invoke_from(peer(1), "echo", &echo, &[]).await.status, 429);
}

/// Issue 13 §2 measured in resident memory: 400 invocations of the 64 KiB echo took the
/// server to 1.85 GiB. RSS depends on the allocator, hence ignored by default:
/// `cargo test -p reference-impl --test ssp_limits -- --ignored --nocapture`.
#[tokio::test]
#[ignore = "measures RSS (allocator-dependent); run by hand"]
async fn rss_after_400_large_echo_invocations() {
    fn rss_kib() -> u64 {
        let s = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = s.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }
    // On a file: an in-memory database would hold the 400 × 128 KiB rows in RAM.
    let dir = tempfile::tempdir().unwrap();
    let db = reference_impl::store::Db::open(&dir.path().join("rss.sqlite")).unwrap();
    let c = Client::with_limits(db, Some("http://127.0.0.1:9".into()), unlimited());
    let req = big_echo();
    let before = rss_kib();
    for _ in 0..400 {
        let r = c.invoke("echo", &req, &[]).await;
        assert_eq!(r.status, 202);
        let id = id_of(&r.body);
        for _ in 0..1000 {
            if c.status(&id, &[]).await.body["status"] == "completed" {
                break;
            }
            tokio::task::yield_now().await;
        }
    }
    let grown = rss_kib().saturating_sub(before);
    println!("RSS grew by {} MiB over 400 invocations", grown / 1024);
    // The SQLite page cache and the allocator's free lists stay; 400 × 4.5 MiB does not.
    assert!(grown < 100 * 1024, "{grown} KiB");
}

/// Over a real socket: the accept loop tags each connection's requests with its peer
/// address, so two loopback addresses are two clients (Linux routes all of 127/8 locally).
#[tokio::test]
async fn the_served_provider_limits_each_peer_address_separately() {
    let mut config = reference_impl::Config::demo_in_memory();
    config.ssp_limits.invocations_per_minute = Some(1);
    config.ssp_limits.invocation_burst = 1;
    let server = reference_impl::spawn(config, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let url = format!("{}/ssp/invoke/echo", server.base_url());
    let body = request("conform/echo", json!({"message": "hi"})).to_string();
    let from = |ip: [u8; 4]| {
        reqwest::Client::builder()
            .local_address(std::net::IpAddr::from(ip))
            .build()
            .unwrap()
    };
    let invoke = |client: reqwest::Client| {
        let (url, body) = (url.clone(), body.clone());
        async move {
            let r = client
                .post(url)
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .unwrap();
            let retry_after = r.headers().get("retry-after").cloned();
            (r.status().as_u16(), retry_after)
        }
    };
    let a = from([127, 0, 0, 1]);
    assert_eq!(invoke(a.clone()).await.0, 202);
    let (status, retry_after) = invoke(a).await;
    assert_eq!(status, 429);
    assert_eq!(retry_after.unwrap(), "60");
    assert_eq!(invoke(from([127, 0, 0, 2])).await.0, 202);
    server.shutdown().await;
}

/// Issue 29 item 3: the limit is keyed by credential first — one abusive API key is limited
/// while another key calling from the same address (and the same connection pool) is not.
#[tokio::test]
async fn one_abusive_credential_is_limited_and_another_on_the_same_address_is_not() {
    let mut config = reference_impl::Config::demo_in_memory();
    config.ssp_limits.invocations_per_minute = Some(1);
    config.ssp_limits.invocation_burst = 2;
    config.ssp.api_keys_allowed.push("second-ssp-key".into());
    let server = reference_impl::spawn(config, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let url = format!("{}/ssp/invoke/slow-task", server.base_url());
    let body = request("conform/slow-task", json!({"delay_ms": 1})).to_string();
    let client = reqwest::Client::new();
    let invoke = |key: &'static str| {
        let (client, url, body) = (client.clone(), url.clone(), body.clone());
        async move {
            let r = client
                .post(url)
                .header("content-type", "application/json")
                .header("x-api-key", key)
                .body(body)
                .send()
                .await
                .unwrap();
            r.status().as_u16()
        }
    };
    // The abusive key spends its burst, then is refused.
    assert_eq!(invoke("demo-ssp-key").await, 202);
    assert_eq!(invoke("demo-ssp-key").await, 202);
    assert_eq!(invoke("demo-ssp-key").await, 429);
    assert_eq!(invoke("demo-ssp-key").await, 429);
    // The other key, same address, same client: its own bucket, untouched.
    assert_eq!(invoke("second-ssp-key").await, 202);
    assert_eq!(invoke("second-ssp-key").await, 202);
    assert_eq!(invoke("demo-ssp-key").await, 429);
    server.shutdown().await;
}
