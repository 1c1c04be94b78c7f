//! Issue 15 item 0, PV-TR-5: certifying a server whose quota is low, run after run.
//!
//! One reference process whose token file gives every agent 120 writes a minute (real
//! deployments declare far less than the reference's 6,000). The envelope vectors make 214
//! writes as `agent_a` over both bindings, so:
//! - run 1, one token per role: the estimate printed before the run says at least a minute,
//!   the run passes, and takes at least that long (the pacer held writes back, no check met
//!   a 429 it did not provoke);
//! - run 2, a new process's view (fresh pre-flight) of the same server, whose quota window
//!   still holds run 1's writes, with `agent_a` given a second token of the same identity:
//!   the estimate drops to nothing, writes go out with both tokens, the leftover 429s are
//!   waited out, and the verdicts equal run 1's — consecutive runs give identical verdicts.

#![expect(clippy::expect_used)] // tests: a panic is the failure report

mod support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use conform::capability::estimate::estimate;
use conform::engine::report::Report;
use conform::engine::run::{RunOptions, run};
use conform::engine::target::{ConnectOptions, Target};
use conform::parley::pacing::Pacer;
use reference_impl::Config;
use reference_impl::config::{Right, TokenRow};

const QUOTA: u32 = 120;
const FILTER: &str = "envelope/*";

fn config() -> Config {
    let mut c = Config::demo_in_memory();
    for row in &mut c.tokens {
        if row.token != "demo-limited" {
            row.quota_per_minute = Some(QUOTA);
        }
    }
    c.tokens.push(TokenRow {
        token: "demo-agent-a-2".into(),
        identity: "ainotes:agent-a".into(),
        rights: vec![Right::Read, Right::Write],
        lock_label: None,
        quota_per_minute: Some(QUOTA),
    });
    c
}

/// A fresh target (pre-flight, pacer) on the running server, `agent_a` with `tokens`.
async fn target(base_url: &str, agent_a: &[&str]) -> Target {
    let mut profile = conform::reference::demo_profile(base_url);
    let tokens = profile
        .sections
        .get_mut("tokens")
        .and_then(toml::Value::as_table_mut)
        .expect("demo tokens");
    let list = agent_a.iter().map(|t| toml::Value::from(*t)).collect();
    tokens.insert("agent_a".into(), toml::Value::Array(list));
    let opts = ConnectOptions::default();
    let mut target = Target::new(profile, &opts).expect("target");
    for p in conform::registry::select(&["parley".into()]).expect("parley") {
        p.preflight(&mut target, &opts).await.expect("pre-flight");
    }
    target
}

/// The estimate, then the run: (estimate, report, wall time).
async fn certify(target: Arc<Target>) -> (Duration, Report, Duration) {
    let suite = support::vectors::suite("parley").expect("parley suite");
    let suites = [suite];
    let both = conform::capability::transports::BOTH;
    let paced = conform::registry::capabilities().estimate;
    let est = estimate(&target, &suites, Some(FILTER), &both, None, &paced);
    let at_least = est
        .iter()
        .map(|(_, e)| e.at_least)
        .max()
        .unwrap_or_default();
    for (_, e) in &est {
        eprintln!("estimate: {:?} {:#?}", e.at_least, e.detail);
    }
    let opts = RunOptions {
        filter: Some(FILTER.into()),
        jobs: 8,
        ..RunOptions::default()
    };
    let started = Instant::now();
    let report = run(target, &suites, &opts).await.expect("run");
    (at_least, report, started.elapsed())
}

fn verdicts(r: &Report) -> Vec<(String, String)> {
    r.checks
        .iter()
        .map(|c| (c.id.clone(), format!("{:?}", c.verdict)))
        .collect()
}

fn failures(r: &Report) -> Vec<String> {
    r.checks
        .iter()
        .filter(|c| c.fails_run())
        .map(|c| format!("{}: {}", c.id, support::verdicts::describe(&c.verdict)))
        .collect()
}

#[test]
fn low_quota_runs_pass_take_the_estimate_and_repeat() {
    let rt = support::runtime(4).expect("runtime");
    rt.block_on(async {
        let listen = SocketAddr::from(([127, 0, 0, 1], 0));
        let server = reference_impl::spawn(config(), listen)
            .await
            .expect("spawn");
        let base = server.base_url();

        let first_target = Arc::new(target(&base, &["demo-agent-a"]).await);
        let (at_least, first, wall) = certify(first_target).await;
        assert_eq!(
            failures(&first),
            Vec::<String>::new(),
            "run 1 failed checks"
        );
        assert!(
            at_least >= Duration::from_secs(60),
            "214 writes at 120/min must be estimated at a minute or more, got {at_least:?}"
        );
        // The pacer is what makes the run this slow: writes beyond the minute's quota wait.
        assert!(
            wall >= at_least,
            "run 1 took {wall:?}, less than the quota allows ({at_least:?})"
        );
        eprintln!(
            "run 1: {wall:?} for an estimate of {at_least:?} (ratio {:.2})",
            wall.as_secs_f64() / at_least.as_secs_f64()
        );

        let pool = ["demo-agent-a", "demo-agent-a-2"];
        let second_target = Arc::new(target(&base, &pool).await);
        let (at_least2, second, wall2) = certify(second_target.clone()).await;
        eprintln!("run 2: {wall2:?} for an estimate of {at_least2:?}");
        assert_eq!(
            at_least2,
            Duration::ZERO,
            "two tokens at 120/min carry 214 writes within the minute"
        );
        assert_eq!(
            failures(&second),
            Vec::<String>::new(),
            "run 2 failed checks"
        );
        assert_eq!(
            verdicts(&first),
            verdicts(&second),
            "verdicts changed between runs"
        );
        let pacer = second_target.part::<Pacer>().expect("pacer");
        let (one, two) = (pacer.admitted(pool[0]), pacer.admitted(pool[1]));
        eprintln!("run 2 writes per agent_a token: {one} + {two}");
        assert!(
            one + two >= 200 && two > 0,
            "agent_a's second token carried no write"
        );
        drop(server);
    });
}
