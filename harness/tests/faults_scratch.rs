//! TEMPORARY scratch measurement (helper "faults"), removed before the report.
#![cfg(feature = "faults")]
#![allow(clippy::expect_used, clippy::unwrap_used, missing_docs)]

use std::collections::BTreeSet;
use std::sync::Arc;

use conform::faults::{load_suites, targeted};
use conform::run::{RunOptions, run};
use conform::target::{Profile, Target};
use conform::verdict::Verdict;
use futures::StreamExt;
use reference_impl::faults::{Fault, Faults};

async fn spawn_faulty(fault: Fault) -> (String, tokio::task::JoinHandle<()>) {
    let config = reference_impl::Config::demo_in_memory();
    let db = reference_impl::store::Db::open(std::path::Path::new(":memory:")).unwrap();
    let parley = reference_impl::service::ParleyService::with_faults(db.clone(), config.tokens.clone(), Faults::from_names(&[fault.name()]).unwrap());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mut config = config;
    config.base_url = Some(format!("http://{addr}"));
    let router = axum::Router::new()
        .merge(reference_impl::api::http::routes(parley.clone()))
        .merge(reference_impl::api::mcp::routes(parley.for_mcp(), reference_impl::api::mcp::AllowedHosts::Loopback));
    let state = reference_impl::ssp::SspState::new(db, &config, parley).unwrap();
    let router = router.merge(reference_impl::api::ssp::routes(state));
    let router = reference_impl::faults::layer(router, Faults::from_names(&[fault.name()]).unwrap(), &config);
    let router = router
        .fallback(reference_impl::api::http::not_found)
        .method_not_allowed_fallback(reference_impl::api::http::method_not_allowed);
    let h = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    (format!("http://{addr}"), h)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scratch() {
    let suites = load_suites(&std::env::var("VECTORS").map(std::path::PathBuf::from).unwrap_or_else(|_| conform::suite::default_vectors_dir())).unwrap();
    let only: Vec<String> = std::env::var("FAULTS").map(|s| s.split(',').map(String::from).collect()).unwrap_or_default();
    let faults: Vec<Fault> = Fault::ALL
        .iter()
        .copied()
        .filter(|f| std::env::var("ALL").is_ok() || f.suite() == "ssp" || *f == Fault::McpRefusalAsJsonRpcError)
        .filter(|f| only.is_empty() || only.iter().any(|o| o == f.name()))
        .collect();
    let lines = futures::stream::iter(faults)
        .map(|f| {
            let suites = &suites;
            async move {
                let (base, h) = spawn_faulty(f).await;
                let mut target = Target::connect(Profile::demo(&base), None, None).await.unwrap();
                target.info.spawned_reference = true;
                let sel = targeted(suites, f);
                let r = run(Arc::new(target), &sel, &RunOptions::default()).await;
                h.abort();
                let ids: BTreeSet<&str> = f.requirements().iter().copied().collect();
                match r {
                    Ok(rep) => {
                        let fails: Vec<_> = rep.checks.iter().filter(|c| matches!(c.verdict, Verdict::Fail(_))).collect();
                        let own: Vec<_> = fails.iter().filter(|c| c.requirements.iter().any(|x| ids.contains(x.as_str()))).map(|c| c.id.clone()).collect();
                        if std::env::var("DEBUG").is_ok() {
                            for c in &rep.checks {
                                if !c.verdict.is_pass() {
                                    println!("  {} {} {}", f.name(), c.id, serde_json::to_string(&c.verdict).unwrap().chars().take(600).collect::<String>());
                                }
                            }
                        }
                        let he = rep.checks.iter().filter(|c| matches!(c.verdict, Verdict::HarnessError{..})).count();
                        let warns = rep.checks.iter().filter(|c| matches!(c.verdict, Verdict::Warn(_)) && c.requirements.iter().any(|x| ids.contains(x.as_str()))).count();
                        format!("{:<40} checks={:<5} fails={:<4} own={:<4} ownwarn={} he={} {:?}", f.name(), rep.checks.len(), fails.len(), own.len(), warns, he, own.iter().take(3).collect::<Vec<_>>())
                    }
                    Err(e) => format!("{:<40} ERROR {e}", f.name()),
                }
            }
        })
        .buffer_unordered(4)
        .collect::<Vec<_>>()
        .await;
    for l in lines {
        println!("{l}");
    }
}
