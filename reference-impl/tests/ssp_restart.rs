//! Executions persist in SQLite (issue 3 §4): readable after a restart, and one
//! interrupted by the restart ends `failed` with a clear message (SSP-INV-3 still holds).

#![expect(clippy::unwrap_used)] // tests: a panic is the failure report

mod support;

use serde_json::json;
use support::ssp::{Client, Lifecycle, request, settle};

#[test]
fn executions_survive_a_restart_and_interrupted_ones_fail() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ssp.sqlite");
    let key = [("x-api-key", "demo-ssp-key")];
    // First process: a finished echo and a slow task still running when it "dies".
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap();
    let (echo_id, slow_id, echo_done, slow_running) = rt.block_on(async {
        let db = reference_impl::store::Db::open(&path).unwrap();
        let c = Client::over(db, Some("http://127.0.0.1:9".into()));
        let e = c
            .invoke(
                "echo",
                &request("conform/echo", json!({"message": "persist me"})),
                &[],
            )
            .await;
        let s = c
            .invoke(
                "slow-task",
                &request("conform/slow-task", json!({"delay_ms": 10000})),
                &key,
            )
            .await;
        settle().await;
        let echo_id = e.body["execution_id"].as_str().unwrap().to_string();
        let slow_id = s.body["execution_id"].as_str().unwrap().to_string();
        let echo_done = c.status(&echo_id, &[]).await.body;
        let slow_running = c.status(&slow_id, &key).await.body;
        (echo_id, slow_id, echo_done, slow_running)
    });
    assert_eq!(echo_done["status"], "completed");
    assert_eq!(slow_running["status"], "running");
    // Dropping the runtime kills its tasks, like a killed process.
    drop(rt);

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let db = reference_impl::store::Db::open(&path).unwrap();
        let c = Client::over(db, Some("http://127.0.0.1:9".into()));
        let e = c.status(&echo_id, &[]).await;
        assert_eq!(e.status, 200);
        assert_eq!(
            e.body, echo_done,
            "a finished execution reads back identically"
        );
        let r = c.result(&echo_id, &[]).await;
        assert_eq!(r.status, 200);
        assert_eq!(r.body["output"], json!({"message": "persist me"}));

        let s = c.status(&slow_id, &key).await;
        assert_eq!(s.status, 200);
        assert_eq!(s.body["status"], "failed");
        assert_eq!(
            s.body["error"]["details"],
            json!({"reason": "provider_restart"})
        );
        assert!(
            s.body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("restarted")
        );
        let mut lc = Lifecycle::default();
        lc.observe(&slow_running);
        lc.observe(&s.body);
        // Still bound to its creator after the restart (SSP-INV-6).
        assert_eq!(c.status(&slow_id, &[]).await.status, 404);
        // New ids never collide with stored ones.
        let n = c
            .invoke(
                "echo",
                &request("conform/echo", json!({"message": "again"})),
                &[],
            )
            .await;
        assert_ne!(n.body["execution_id"].as_str().unwrap(), echo_id);
    });
}
