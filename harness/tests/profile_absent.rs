//! PV-DI-8 from both sides: against a reference server started WITHOUT the dialectic profile,
//! the `!dialectic` vectors pass (the four dialectic kinds are `kind_unknown`), every vector
//! that needs the profile is `unsupported` (never a pass, never a failure), and nothing else
//! fails. Against the default reference those same `!dialectic` vectors are `unsupported`.
#![expect(clippy::expect_used)] // tests: a panic is the failure report

mod support;

use conform::engine::target::ConnectOptions;
use conform::engine::verdict::Verdict;

/// The Parley suite over HTTP against a reference spawned with or without the dialectic
/// profile.
async fn report_against(dialectic: bool) -> conform::engine::report::Report {
    let mut config = reference_impl::Config::demo_in_memory();
    config.dialectic = dialectic;
    let target = support::reference::spawn_with(config, &ConnectOptions::default(), &["parley"])
        .await
        .expect("pre-flight");
    support::reference::parley_over_http(target).await
}

fn is_profile_absent_vector(check: &str) -> bool {
    check.starts_with("profiles/no-dialectic/")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_without_dialectic_is_checked_on_pv_di_8() {
    let report = report_against(false).await;
    let failing: Vec<_> = report
        .checks
        .iter()
        .filter(|c| matches!(c.verdict, Verdict::Fail(_) | Verdict::HarnessError { .. }))
        .map(|c| c.id.clone())
        .collect();
    assert!(
        failing.is_empty(),
        "false failures without the profile: {failing:?}"
    );
    let absent: Vec<_> = report
        .checks
        .iter()
        .filter(|c| is_profile_absent_vector(&c.check))
        .collect();
    assert!(
        absent.len() >= 6,
        "the PV-DI-8 vectors ran: {}",
        absent.len()
    );
    assert!(absent.iter().all(|c| c.verdict == Verdict::Pass));
    let dialectic_unsupported = report
        .checks
        .iter()
        .filter(|c| c.check.starts_with("dialectic/"))
        .all(|c| matches!(c.verdict, Verdict::Unsupported { .. }));
    assert!(
        dialectic_unsupported,
        "vectors needing the profile must be unsupported"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pv_di_8_vectors_do_not_apply_to_a_server_with_the_profile() {
    let report = report_against(true).await;
    let absent: Vec<_> = report
        .checks
        .iter()
        .filter(|c| is_profile_absent_vector(&c.check))
        .collect();
    assert!(!absent.is_empty());
    assert!(
        absent
            .iter()
            .all(|c| matches!(c.verdict, Verdict::Unsupported { .. })),
        "`!dialectic` vectors are unsupported where the profile is enabled"
    );
}
