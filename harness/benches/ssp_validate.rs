//! Validator throughput on the seed's §3.6 weather descriptor (issue 5: ≥ 50,000
//! validations/s on one core, schema compiled once).
//!
//! `cargo bench -p conform --bench ssp_validate` — prints validations per second for the
//! fast path (`is_valid`) and for the full report (`validate`), strict and lenient.

// Test code: a failed expectation is a test failure, so panicking helpers are the point.
#![expect(clippy::expect_used)]

use conform::ssp::validator::{DocType, Mode, SspValidator};
use std::hint::black_box;
use std::time::{Duration, Instant};

// Only the fixtures of the tests' support: the rest (servers, the reference) is not for a
// bench, and including it whole would need its dev-dependencies and dead-code allowances.
#[path = "../tests/support/fixtures.rs"]
mod fixtures;

fn measure(name: &str, budget: Duration, mut f: impl FnMut() -> bool) {
    // Warm-up (also proves the document is valid: a throughput of failures means nothing).
    for _ in 0..1_000 {
        assert!(f(), "{name}: the weather descriptor must be valid");
    }
    let start = Instant::now();
    let mut n: u64 = 0;
    while start.elapsed() < budget {
        for _ in 0..1_000 {
            black_box(f());
        }
        n += 1_000;
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{name:<28} {:>10.0} validations/s  ({n} in {secs:.2} s)",
        n as f64 / secs
    );
}

fn main() {
    let doc = fixtures::weather();
    let v = SspValidator::global().expect("embedded schema compiles");
    let budget = Duration::from_millis(
        std::env::var("SSP_BENCH_MS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(2_000),
    );
    measure("is_valid strict", budget, || {
        v.is_valid(black_box(&doc), DocType::Descriptor, Mode::Strict)
    });
    measure("validate strict (report)", budget, || {
        v.validate(black_box(&doc), DocType::Descriptor, Mode::Strict)
            .valid
    });
    measure("validate lenient (report)", budget, || {
        v.validate(black_box(&doc), DocType::Descriptor, Mode::Lenient)
            .valid
    });
}
