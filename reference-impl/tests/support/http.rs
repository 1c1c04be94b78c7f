//! Real-socket HTTP helpers for the tests and benches that talk to a listening server.

use std::time::Duration;

use serde_json::Value;

/// Sends `req` and parses the answer as JSON (any status).
pub(crate) async fn json(req: reqwest::RequestBuilder) -> Value {
    req.send()
        .await
        .expect("request sent")
        .json()
        .await
        .expect("JSON body")
}

/// The `p` quantile (0..=1) of `sorted` latencies, nearest rank; zero when empty.
pub(crate) fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}
