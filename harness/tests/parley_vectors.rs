//! Every Parley golden vector × transport as its own named, filterable test, against one
//! reference server spawned in process (`cargo test -p conform --test parley_vectors -- envelope/`).
//!
//! Test names: `<vector id>@http`, `<vector id>@mcp` (2025-11-25), `<vector id>@mcp-2026` (the
//! stateless era), `PV-TR-1/<vector id>` (both bindings agree, step by step), plus
//! `PV-TR-1a/bindings`. Exclusive vectors take a write lock so nothing
//! runs beside them (they assume no foreign activity, e.g. inbox cursors).

use std::path::Path;
use std::sync::{Arc, OnceLock, RwLock};

use conform::engine::check::{Bindings, Check, CheckCtx};
use conform::engine::report::curl_command;
use conform::engine::target::ConnectOptions;
use conform::engine::target::Target;
use conform::engine::verdict::Verdict;
use conform::registry::load_suite;
use conform::transport::{McpRevision, TransportKind};
use libtest_mimic::{Arguments, Failed, Trial};

struct Shared {
    rt: tokio::runtime::Runtime,
    legacy: Arc<Target>,
    stateless: Arc<Target>,
}

static SHARED: OnceLock<Result<Shared, String>> = OnceLock::new();
static EXCLUSIVE: RwLock<()> = RwLock::new(());

/// The reference in process, pre-flighted for every registered protocol.
async fn spawn(revision: McpRevision) -> Result<Target, conform::engine::target::TargetError> {
    let protocols = conform::registry::protocols();
    conform::reference::spawn(&ConnectOptions::revision(revision), &protocols).await
}

fn shared() -> Result<&'static Shared, Failed> {
    SHARED
        .get_or_init(|| {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(4)
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            let legacy = rt
                .block_on(spawn(McpRevision::V2025_11_25))
                .map_err(|e| e.to_string())?;
            let stateless = rt
                .block_on(spawn(McpRevision::V2026_07_28))
                .map_err(|e| e.to_string())?;
            Ok(Shared {
                rt,
                legacy: Arc::new(legacy),
                stateless: Arc::new(stateless),
            })
        })
        .as_ref()
        .map_err(|e| Failed::from(format!("reference server: {e}")))
}

fn run_check(
    check: &Arc<dyn Check>,
    transport: Option<TransportKind>,
    stateless: bool,
) -> Result<(), Failed> {
    let _guard = if check.exclusive() {
        (
            None,
            Some(EXCLUSIVE.write().unwrap_or_else(|e| e.into_inner())),
        )
    } else {
        (
            Some(EXCLUSIVE.read().unwrap_or_else(|e| e.into_inner())),
            None,
        )
    };
    let s = shared()?;
    let target = if stateless {
        s.stateless.clone()
    } else {
        s.legacy.clone()
    };
    let ctx = CheckCtx {
        target,
        transport,
        run_nonce: format!("t{}", std::process::id()),
    };
    let outcome = s.rt.block_on(check.run(&ctx));
    match outcome.verdict {
        Verdict::Pass => Ok(()),
        // The reference holds every role and the dialectic profile: a vector it cannot
        // run is a silent gap, not a pass (vectors for servers WITHOUT the profile are
        // marked ignored in `main` and run in tests/profile_absent.rs).
        Verdict::Unsupported { reason } | Verdict::Skipped { reason } => {
            Err(format!("not run against the reference: {reason}").into())
        }
        Verdict::HarnessError { message } => Err(format!("harness error: {message}").into()),
        Verdict::Fail(v) | Verdict::Warn(v) => {
            let mut msg = format!(
                "[{}] step {:?}: {} at {:?}\n  expected: {}\n  observed: {}\n",
                v.requirements.join(", "),
                v.step,
                v.message,
                v.pointer,
                v.expected,
                v.observed
            );
            for ex in &v.transcript {
                msg.push_str(&format!(
                    "  {}\n    -> {:?} {}\n",
                    curl_command(ex),
                    ex.status,
                    ex.response_body.as_deref().unwrap_or("")
                ));
            }
            Err(msg.into())
        }
    }
}

/// PV-TR-1: runs the vector on HTTP and on MCP and compares the outcomes step by step.
fn run_comparison(check: &Arc<dyn Check>) -> Result<(), Failed> {
    let _guard = if check.exclusive() {
        (
            None,
            Some(EXCLUSIVE.write().unwrap_or_else(|e| e.into_inner())),
        )
    } else {
        (
            Some(EXCLUSIVE.read().unwrap_or_else(|e| e.into_inner())),
            None,
        )
    };
    let s = shared()?;
    let ctx = |t| CheckCtx {
        target: s.legacy.clone(),
        transport: Some(t),
        run_nonce: format!("c{}", std::process::id()),
    };
    let (h, m) = (ctx(TransportKind::Http), ctx(TransportKind::Mcp));
    let http = s.rt.block_on(check.run(&h));
    let mcp = s.rt.block_on(check.run(&m));
    match conform::parley::compare::compare(check.id(), &http.steps, &mcp.steps) {
        Verdict::Pass => Ok(()),
        Verdict::Fail(v) => Err(format!(
            "{}\n  http: {}\n  mcp:  {}",
            v.message, v.expected, v.observed
        )
        .into()),
        other => Err(format!("{other:?}").into()),
    }
}

fn main() {
    let mut args = Arguments::from_args();
    if args.test_threads.is_none() {
        // Checks wait on the network, not the CPU: more threads than cores keeps both busy.
        args.test_threads = Some(8);
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors");
    let suite = match load_suite("parley", &dir) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("cannot load the parley suite: {e}");
            std::process::exit(2);
        }
    };
    // Vectors for a server without the dialectic profile do not apply to the reference.
    let vectors = match conform::parley::vectors::loader::load_dir(&dir.join("parley"), None, None)
    {
        Ok(v) => v,
        Err(e) => {
            eprintln!("cannot load the parley vectors: {e}");
            std::process::exit(2);
        }
    };
    let profile_absent: std::collections::HashSet<String> = vectors
        .iter()
        .filter(|lv| lv.vector.needs.iter().any(|n| n.starts_with('!')))
        .map(|lv| lv.vector.id.clone())
        .collect();
    let mut trials = Vec::new();
    for check in &suite.checks {
        let ignored = profile_absent.contains(check.id());
        match check.bindings() {
            Bindings::Once => {
                let c = check.clone();
                trials.push(
                    Trial::test(check.id().to_string(), move || run_check(&c, None, false))
                        .with_kind(check.area())
                        .with_ignored_flag(ignored),
                );
            }
            Bindings::Each(ks) => {
                if check.compare_transports() {
                    let c = check.clone();
                    let name = format!("PV-TR-1/{}", check.id());
                    trials.push(
                        Trial::test(name, move || run_comparison(&c))
                            .with_kind(check.area())
                            .with_ignored_flag(ignored),
                    );
                }
                for k in ks {
                    let c = check.clone();
                    let name = format!("{}@{k}", check.id());
                    trials.push(
                        Trial::test(name, move || run_check(&c, Some(k), false))
                            .with_kind(check.area())
                            .with_ignored_flag(ignored),
                    );
                    if k == TransportKind::Mcp {
                        let c = check.clone();
                        let name = format!("{}@mcp-2026", check.id());
                        trials.push(
                            Trial::test(name, move || run_check(&c, Some(k), true))
                                .with_kind(check.area())
                                .with_ignored_flag(ignored),
                        );
                    }
                }
            }
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
