//! The README recipe proven (issue 27 item 3): a protocol the engine has never heard of, with
//! two bindings of its own (`alpha`, `beta`), plugs in by implementing `Protocol` and `Check`
//! alone, and runs plan → execute → judge → report against a toy server — no engine edit.
//!
//! The toy server answers `GET /<binding>/echo` and `GET /teapot`; on `beta` its echo is
//! broken (500). The test asserts what the engine did with the toy's own ids: one job per
//! declared and offered binding, `<check>@<binding>` results, the reproduction's
//! `--transport <binding>` and the protocol's own flags, the derived cross-binding check, the
//! setup exchanges counted, a `--transport` selection, a baseline naming an unknown binding
//! refused, and every report format rendered.
#![expect(clippy::expect_used)] // tests: a panic is the failure report

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::http::StatusCode;
use axum::routing::get;
use conform::engine::baseline::{Baseline, BaselineError, Entry};
use conform::engine::binding::Binding;
use conform::engine::check::{Bindings, Check, CheckCtx, CheckOutcome};
use conform::engine::protocol::{CheckRun, ProfileSection, Protocol, Suite, SuiteError};
use conform::engine::report::write::{Format, write_all};
use conform::engine::report::{CheckResult, MatrixStatus, Report};
use conform::engine::requirements::{Catalogue, CatalogueFile};
use conform::engine::run::{RunError, RunOptions, run};
use conform::engine::target::{ConnectOptions, Profile, Target, TargetError};
use conform::engine::verdict::{Verdict, Violation};
use conform::transport::{Exchange, TransportKind};
use futures::FutureExt as _;
use futures::future::BoxFuture;
use serde_json::json;

const ALPHA: Binding = Binding::new("alpha");
const BETA: Binding = Binding::new("beta");

const CATALOGUE: &str = r#"
format_version = 1
suite = "toy"

[[requirement]]
id = "TOY-1"
level = "MUST"
area = "ECHO"
rule = "GET /<binding>/echo answers 200."
source = "this test"

[[requirement]]
id = "TOY-2"
level = "MUST"
area = "TEA"
rule = "GET /teapot answers 418."
source = "this test"

[[requirement]]
id = "TOY-3"
level = "MUST"
area = "ECHO"
rule = "Both bindings answer the echo alike."
source = "this test"
"#;

/// The toy protocol: what it learnt in pre-flight is the list of bindings the server offers.
#[derive(Debug, Default)]
struct Toy;

/// The toy's part of the target: the bindings its server said it offers.
struct Offered(Vec<Binding>);

impl ProfileSection for Toy {}

impl Protocol for Toy {
    fn name(&self) -> &'static str {
        "toy"
    }

    fn catalogue(&self, _dir: &Path) -> Result<Catalogue, SuiteError> {
        let file: CatalogueFile = toml::from_str(CATALOGUE).map_err(|e| checks(e.to_string()))?;
        Catalogue::new("toy", file.requirements).map_err(checks)
    }

    fn load(self: Arc<Self>, dir: &Path) -> Result<Suite, SuiteError> {
        let catalogue = self.catalogue(dir)?;
        let checks: Vec<Arc<dyn Check>> = vec![
            Arc::new(Get {
                id: "echo",
                path: "echo",
                status: 200,
                req: vec!["TOY-1".into()],
                on: Bindings::Each(vec![ALPHA, BETA]),
            }),
            Arc::new(Get {
                id: "teapot",
                path: "/teapot",
                status: 418,
                req: vec!["TOY-2".into()],
                on: Bindings::Once,
            }),
        ];
        Ok(Suite::new(self, catalogue, checks))
    }

    fn preflight<'a>(
        &'a self,
        target: &'a mut Target,
        _opts: &'a ConnectOptions,
    ) -> BoxFuture<'a, Result<(), TargetError>> {
        async move {
            let url = format!("{}/bindings", target.info.base_url);
            let offered: Vec<String> =
                async { target.client.http().get(&url).send().await?.json().await }
                    .await
                    .map_err(|e| TargetError::Transport(e.to_string()))?;
            let offered = offered.iter().map(|b| Binding::named(b)).collect();
            target.insert_part(Offered(offered));
            Ok(())
        }
        .boxed()
    }

    fn bindings(&self) -> &'static [Binding] {
        &[ALPHA, BETA]
    }

    fn offers(&self, target: &Target, binding: Binding) -> bool {
        target
            .part::<Offered>()
            .is_some_and(|o| o.0.contains(&binding))
    }

    /// The `/bindings` request of the pre-flight.
    fn setup_exchanges(&self, _target: &Target, _offered: &[Binding]) -> u64 {
        1
    }

    fn reproduce_on(&self, _target: &Target, binding: Binding) -> String {
        format!(" --toy-dialect {binding}")
    }

    fn derived_ids(&self, _suite: &Suite) -> Vec<String> {
        vec!["TOY-3/echo".into()]
    }

    /// TOY-3: the echo passes on every binding it ran on, or the bindings disagree.
    fn judge_across(&self, suite: &Suite, runs: &[CheckRun<'_>]) -> Vec<CheckResult> {
        let echoes: Vec<&CheckRun<'_>> = runs.iter().filter(|r| r.check.id() == "echo").collect();
        if echoes.len() < 2 {
            return Vec::new();
        }
        let passes: Vec<bool> = echoes.iter().map(|r| r.outcome.verdict.is_pass()).collect();
        let verdict = if passes.iter().all(|p| *p == passes[0]) {
            Verdict::Pass
        } else {
            Verdict::Fail(violation(
                "TOY-3/echo",
                "TOY-3",
                "the bindings disagree",
                Vec::new(),
            ))
        };
        vec![CheckResult {
            id: "TOY-3/echo".into(),
            check: "TOY-3/echo".into(),
            suite: suite.name.clone(),
            area: "ECHO".into(),
            title: "both bindings agree on the echo".into(),
            transport: None,
            requirements: vec!["TOY-3".into()],
            required: true,
            verdict,
            baseline: None,
            duration_ms: 0,
            exchanges: echoes.iter().map(|r| r.outcome.exchange_count()).sum(),
            self_test: false,
            reproduction: None,
        }]
    }
}

fn checks(message: String) -> SuiteError {
    SuiteError::Checks {
        suite: "toy".into(),
        message,
    }
}

fn violation(check: &str, rule: &str, message: &str, transcript: Vec<Exchange>) -> Violation {
    Violation {
        check: check.into(),
        requirements: vec![rule.into()],
        step: None,
        pointer: String::new(),
        expected: json!(null),
        observed: json!(null),
        message: message.into(),
        transcript,
        completed: false,
    }
}

/// A toy check: one GET, judged on its status. A relative `path` is under the binding's
/// prefix (`/<binding>/<path>`).
struct Get {
    id: &'static str,
    path: &'static str,
    status: u16,
    req: Vec<String>,
    on: Bindings,
}

impl Check for Get {
    fn id(&self) -> &str {
        self.id
    }
    fn title(&self) -> &str {
        self.id
    }
    fn requirements(&self) -> &[String] {
        &self.req
    }
    fn bindings(&self) -> Bindings {
        self.on.clone()
    }
    fn run<'a>(&'a self, ctx: &'a CheckCtx) -> BoxFuture<'a, CheckOutcome> {
        async move {
            let base = &ctx.target.info.base_url;
            let url = match ctx.transport {
                Some(b) => format!("{base}/{b}/{}", self.path),
                None => format!("{base}{}", self.path),
            };
            let started = Instant::now();
            let status = match ctx.target.client.http().get(&url).send().await {
                Ok(r) => r.status().as_u16(),
                Err(e) => {
                    return CheckOutcome::verdict(Verdict::HarnessError {
                        message: e.to_string(),
                    });
                }
            };
            let ex = Exchange {
                transport: TransportKind::Http,
                method: "GET".into(),
                url,
                request_headers: Vec::new(),
                request_body: None,
                status: Some(status),
                response_headers: Vec::new(),
                response_body: None,
                error: None,
                elapsed_us: started.elapsed().as_micros() as u64,
                resent_after: None,
            };
            let verdict = if status == self.status {
                Verdict::Pass
            } else {
                let message = format!("expected {}, got {status}", self.status);
                Verdict::Fail(violation(self.id, &self.req[0], &message, vec![ex.clone()]))
            };
            CheckOutcome {
                verdict,
                exchanges: vec![ex],
                steps: Vec::new(),
                unkept: 0,
            }
        }
        .boxed()
    }
}

/// The toy server on an ephemeral port: its base URL.
async fn toy_server() -> String {
    let app = Router::new()
        .route(
            "/bindings",
            get(|| async { axum::Json(json!(["alpha", "beta"])) }),
        )
        .route("/alpha/echo", get(|| async { StatusCode::OK }))
        .route(
            "/beta/echo",
            get(|| async { StatusCode::INTERNAL_SERVER_ERROR }),
        )
        .route("/teapot", get(|| async { StatusCode::IM_A_TEAPOT }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

async fn toy_run(base: &str, opts: &RunOptions) -> Result<Report, RunError> {
    let toy: Arc<dyn Protocol> = Arc::new(Toy);
    let suite = toy.clone().load(Path::new(".")).expect("toy suite");
    let connect = ConnectOptions {
        transports: opts.transports.clone(),
        ..ConnectOptions::default()
    };
    let target = conform::engine::protocol::connect(Profile::new(base), &connect, &[toy])
        .await
        .expect("toy pre-flight");
    run(Arc::new(target), &[suite], opts).await
}

fn result<'a>(report: &'a Report, id: &str) -> &'a CheckResult {
    (report.checks.iter().find(|c| c.id == id)).unwrap_or_else(|| panic!("no result {id}"))
}

#[tokio::test]
async fn a_toy_protocol_with_two_bindings_runs_through_the_engine() {
    let base = toy_server().await;
    let report = toy_run(&base, &RunOptions::default()).await.expect("run");

    // Planned over the toy's own bindings, in its order; the check run once stays one job.
    let ids: Vec<&str> = report.checks.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["echo@alpha", "echo@beta", "teapot", "TOY-3/echo"]);
    assert_eq!(report.transports, [ALPHA, BETA]);
    assert!(result(&report, "echo@alpha").verdict.is_pass());
    assert!(result(&report, "teapot").verdict.is_pass());
    assert_eq!(result(&report, "echo@beta").transport, Some(BETA));
    assert!(matches!(
        result(&report, "echo@beta").verdict,
        Verdict::Fail(_)
    ));
    // The derived check judged by the toy across its bindings.
    assert!(matches!(
        result(&report, "TOY-3/echo").verdict,
        Verdict::Fail(_)
    ));
    // The reproduction names the binding and the toy's own flags.
    let repro = (result(&report, "echo@beta").reproduction.as_ref()).expect("reproduction");
    assert!(
        repro
            .command
            .ends_with("--filter 'echo' --transport beta --toy-dialect beta"),
        "{}",
        repro.command
    );
    // 3 check exchanges + the toy's setup exchange.
    assert_eq!(report.exchanges, 4);
    let row = |id: &str| {
        report
            .requirements
            .iter()
            .find(|r| r.id == id)
            .expect("row")
    };
    assert_eq!(row("TOY-1").status, MatrixStatus::Fail);
    assert_eq!(row("TOY-2").status, MatrixStatus::Pass);
    assert_eq!(report.exit_code(), 1);

    // Every registered format renders the toy's report.
    let out = tempfile::tempdir().expect("tempdir");
    let written = write_all(&report, out.path(), Format::ALL, None).expect("reports");
    assert_eq!(written.len(), Format::ALL.len());
    let json = std::fs::read_to_string(out.path().join("report.json")).expect("report.json");
    assert!(
        json.contains("\"echo@beta\""),
        "report.json lacks the toy's result"
    );
}

#[tokio::test]
async fn a_selected_binding_runs_alone_and_a_baseline_binding_must_be_declared() {
    let base = toy_server().await;
    let only_alpha = RunOptions {
        transports: vec![ALPHA],
        ..RunOptions::default()
    };
    let report = toy_run(&base, &only_alpha).await.expect("run");
    let ids: Vec<&str> = report.checks.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["echo@alpha", "teapot"]);
    assert_eq!(report.completeness.partial, ["--transport alpha"]);
    assert_eq!(report.exit_code(), 0);

    // A baseline entry on a binding the toy does not declare is refused, not ignored.
    let entry = |b: &str| Entry {
        check: "echo".into(),
        transport: Some(Binding::named(b)),
        reason: "known".into(),
    };
    let typo = Baseline::from_entries(vec![entry("bta")], "b.toml".into()).expect("baseline");
    let opts = RunOptions {
        baseline: Some(typo),
        ..RunOptions::default()
    };
    let err = toy_run(&base, &opts).await.expect_err("an unknown binding");
    assert!(
        matches!(&err, RunError::Baseline(BaselineError::UnknownBinding { entries, .. }) if entries == &["echo on bta"]),
        "{err}"
    );
    // The same entry on `beta` excuses the failure there.
    let known = Baseline::from_entries(vec![entry("beta")], "b.toml".into()).expect("baseline");
    let opts = RunOptions {
        baseline: Some(known),
        filter: Some("echo".into()),
        ..RunOptions::default()
    };
    let report = toy_run(&base, &opts).await.expect("run");
    assert!(result(&report, "echo@beta").baseline.is_some());
    assert!(result(&report, "echo@alpha").baseline.is_none());
}
