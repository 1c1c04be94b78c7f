//! Time grows with work, not waits (issue 25 item 2): the whole suite against the reference
//! directly, then through a loopback proxy that holds every request `DELAY_MS` before
//! forwarding it — a server whose each answer is many times slower. Prints, for both runs,
//! the wall time, the exchanges, the bound latency alone imposes on the scripted checks (the
//! run's exchanges ÷ concurrency × latency, all checks in flight at once) and the five
//! longest checks: the models' steps are sequential by nature (2,000 per model and binding,
//! one request or more each), so their floor is their steps × latency.
//!
//! `cargo bench -p conform --bench latency` (`CONFORM_BENCH_DELAY_MS`, default 10) — numbers,
//! not pass/fail. The proxy answers malformed HTTP itself, so the transport checks that send
//! broken bytes judge the proxy there, not the reference: the verdict counts are printed,
//! the timing is the point.

// Bench code: a failed set-up is a failed bench, so panicking helpers are the point.
#![expect(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use conform::engine::report::Report;
use conform::engine::run::{RunOptions, run};
use conform::engine::target::{ConnectOptions, Target};
use conform::transport::TransportKind;

/// Headers that belong to one connection, not to the request (RFC 9110 §7.6.1), and the
/// ones the proxy's client sets itself.
const HOP: [&str; 5] = [
    "connection",
    "keep-alive",
    "transfer-encoding",
    "host",
    "content-length",
];

#[derive(Clone)]
struct Upstream {
    base: String,
    client: reqwest::Client,
    delay: Duration,
}

/// Holds the request `delay`, then forwards it and streams the answer back.
async fn forward(State(up): State<Upstream>, req: Request) -> Response {
    tokio::time::sleep(up.delay).await;
    let (parts, body) = req.into_parts();
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let body = axum::body::to_bytes(body, 16 << 20)
        .await
        .unwrap_or_default();
    let mut out = up
        .client
        .request(parts.method, format!("{}{path}", up.base))
        .body(body);
    for (k, v) in &parts.headers {
        if !HOP.contains(&k.as_str()) {
            out = out.header(k, v);
        }
    }
    match out.send().await {
        Ok(r) => {
            let mut resp = Response::builder().status(r.status());
            for (k, v) in r.headers() {
                if !HOP.contains(&k.as_str()) {
                    resp = resp.header(k, v);
                }
            }
            // Chunk by chunk: an MCP answer may be an event stream.
            let stream = futures::stream::unfold(Some(r), |r| async move {
                let mut r = r?;
                match r.chunk().await {
                    Ok(Some(c)) => Some((Ok(c), Some(r))),
                    Ok(None) => None,
                    Err(e) => Some((Err(std::io::Error::other(e)), None)),
                }
            });
            resp.body(Body::from_stream(stream)).unwrap()
        }
        Err(e) => Response::builder()
            .status(502)
            .body(Body::from(e.to_string()))
            .unwrap(),
    }
}

/// A proxy in front of `base` on an ephemeral loopback port; its base URL.
async fn proxy(base: &str, delay: Duration) -> String {
    let up = Upstream {
        base: base.trim_end_matches('/').to_string(),
        client: reqwest::Client::builder()
            .pool_max_idle_per_host(64)
            .build()
            .unwrap(),
        delay,
    };
    let app = axum::Router::new().fallback(forward).with_state(up);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

/// The whole suite against the reference, through a proxy of `delay` when given.
async fn suite_run(delay: Option<Duration>) -> (Report, Duration) {
    let suites = conform::registry::load(
        &conform::registry::protocols(),
        &conform::engine::protocol::default_vectors_dir(),
    )
    .unwrap();
    let protocols: Vec<_> = suites.iter().map(|s| s.protocol.clone()).collect();
    let opts = ConnectOptions::default();
    let server = reference_impl::spawn(
        reference_impl::Config::demo_in_memory(),
        ([127, 0, 0, 1], 0).into(),
    )
    .await
    .unwrap();
    let base = match delay {
        Some(d) => proxy(&server.base_url(), d).await,
        None => server.base_url(),
    };
    let mut target = Target::new(conform::reference::demo_profile(&base), &opts).unwrap();
    // The demo server behind the proxy: its SSP fixtures are the demo's.
    target.info.spawned_reference = true;
    target.keep_alive(Box::new(server));
    for p in &protocols {
        p.preflight(&mut target, &opts).await.unwrap();
    }
    let run_opts = RunOptions {
        filter: None,
        transports: vec![TransportKind::Http.into(), TransportKind::Mcp.into()],
        jobs: 8,
        baseline: None,
        command: "bench".into(),
        progress: None,
        shard: None,
        ..RunOptions::default()
    };
    let started = Instant::now();
    let report = run(Arc::new(target), &suites, &run_opts).await.unwrap();
    (report, started.elapsed())
}

fn show(name: &str, report: &Report, wall: Duration, latency: Duration) {
    let s = &report.summary;
    let jobs = report.jobs.max(1) as f64;
    let spread = report.exchanges as f64 / jobs * latency.as_secs_f64();
    println!(
        "{name:<22} wall {:>6.2} s  {:>5} exchanges  pass {} fail {} warn {} n/a {} error {}",
        wall.as_secs_f64(),
        report.exchanges,
        s.pass,
        s.fail,
        s.warn,
        s.unsupported,
        s.harness_error
    );
    println!(
        "{:<22} exchanges ÷ {jobs} jobs × {:.1} ms = {spread:.2} s (wall ÷ that = {:.2})",
        "",
        latency.as_secs_f64() * 1000.0,
        wall.as_secs_f64() / spread.max(1e-9)
    );
    // The models count their steps, not exchanges, in the report: their floor is their
    // sequential steps × latency, which their own durations show.
    println!(
        "{:<22} longest: {}",
        "",
        report.longest_checks(5).unwrap_or_default()
    );
}

fn main() {
    let delay_ms: u64 = std::env::var("CONFORM_BENCH_DELAY_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let (direct, direct_wall) = rt.block_on(suite_run(None));
    // The direct run's mean latency per exchange, concurrency included.
    let direct_latency =
        direct_wall.mul_f64(direct.jobs.max(1) as f64 / direct.exchanges.max(1) as f64);
    show("direct", &direct, direct_wall, direct_latency);
    let delay = Duration::from_millis(delay_ms);
    let (slow, slow_wall) = rt.block_on(suite_run(Some(delay)));
    show(
        &format!("proxy +{delay_ms} ms/request"),
        &slow,
        slow_wall,
        delay + direct_latency,
    );
}
