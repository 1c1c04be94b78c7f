//! SSP echo benchmark (issue 3): `conform/echo` invocations — POST + one status poll — by
//! 32 concurrent clients over loopback against the provider routes on a real socket.
//! Prints invocations/s, how many polls already saw `completed`, and p50/p99 latency.
//!
//! `cargo bench -p reference-impl --bench ssp_echo [-- SECONDS [CLIENTS]]`

#![expect(clippy::unwrap_used)] // benchmark binary: a panic is the report

#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use reference_impl::config::Config;
use reference_impl::ssp::SspState;
use reference_impl::store::Db;
use support::http::percentile;

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let secs: u64 = args.first().and_then(|s| s.parse().ok()).unwrap_or(5);
    let clients: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(32);

    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(&dir.path().join("bench.sqlite")).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let mut config = Config::demo(dir.path().join("bench.sqlite"));
    config.base_url = Some(format!("http://{addr}"));
    // A load generator is one client: the per-client rate limit would measure itself.
    config.ssp_limits.invocations_per_minute = None;

    // Server on its own runtime (one worker per core, like `reference-server serve`).
    let server_rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let parley =
        reference_impl::parley::service::ParleyService::new(db.clone(), config.tokens.clone());
    let state = SspState::new(db, &config, std::sync::Arc::new(parley)).unwrap();
    server_rt.spawn(async move {
        listener.set_nonblocking(true).unwrap();
        let l = tokio::net::TcpListener::from_std(listener).unwrap();
        axum::serve(l, reference_impl::ssp::api::routes(state))
            .await
            .unwrap();
    });

    let client_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let (count, completed, mut lat) = client_rt.block_on(async move {
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(clients)
            .build()
            .unwrap();
        let base = format!("http://{addr}");
        let body = serde_json::json!({
            "caller": {"id": "bench", "type": "service"},
            "skill_id": "conform/echo",
            "inputs": {"message": "hello"}
        })
        .to_string();
        let stop = Arc::new(AtomicBool::new(false));
        let warmup = Duration::from_millis(500);
        let mut tasks = Vec::new();
        for _ in 0..clients {
            let (http, base, body, stop) = (http.clone(), base.clone(), body.clone(), stop.clone());
            tasks.push(tokio::spawn(async move {
                let mut lat = Vec::new();
                let mut completed = 0u64;
                let started = Instant::now();
                while !stop.load(Ordering::Relaxed) {
                    let t0 = Instant::now();
                    let r = http
                        .post(format!("{base}/ssp/invoke/echo"))
                        .header("content-type", "application/json")
                        .body(body.clone())
                        .send()
                        .await
                        .unwrap();
                    assert_eq!(r.status().as_u16(), 202);
                    let v: serde_json::Value = r.json().await.unwrap();
                    let id = v["execution_id"].as_str().unwrap().to_string();
                    let s = http
                        .get(format!("{base}/ssp/status/{id}"))
                        .send()
                        .await
                        .unwrap();
                    assert_eq!(s.status().as_u16(), 200);
                    let s: serde_json::Value = s.json().await.unwrap();
                    if started.elapsed() > warmup {
                        lat.push(t0.elapsed());
                        if s["status"] == "completed" {
                            completed += 1;
                        }
                    }
                }
                (lat, completed)
            }));
        }
        tokio::time::sleep(warmup + Duration::from_secs(secs)).await;
        stop.store(true, Ordering::Relaxed);
        let mut all = Vec::new();
        let mut completed = 0;
        for t in tasks {
            let (l, c) = t.await.unwrap();
            all.extend(l);
            completed += c;
        }
        (all.len(), completed, all)
    });
    lat.sort();
    let pct = |p: f64| percentile(&lat, p);
    println!(
        "ssp_echo: {clients} clients, {secs}s: {count} invocations (POST + status poll), {:.0} invocations/s; \
         poll saw completed: {completed} ({:.1}%); latency p50 {:?} p99 {:?} max {:?}",
        count as f64 / secs as f64,
        100.0 * completed as f64 / count.max(1) as f64,
        pct(0.50),
        pct(0.99),
        lat.last().copied().unwrap_or_default()
    );
}
