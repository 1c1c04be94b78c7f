//! Issue 14: every legal variant of the reference server is accepted by the whole suite —
//! no failing check, no harness error (warnings allowed). The dual of `faults_caught`: a
//! failure here is a false failure of the suite, a check stricter than the text it cites.
//!
//! One named test per variant (`accepted/<variant>`), each against its own in-process
//! server, running every check of the suites the variant can change
//! (`conform::variants::affected`; `conform variants` runs them all). Filter as usual:
//! `cargo test -p conform --features variants --test variants_accepted -- pretty-json`.

mod support;

#[cfg(feature = "variants")]
mod accepted {
    use conform::engine::protocol::Suite;
    use conform::variants::{affected, measure_variant};
    use libtest_mimic::{Arguments, Failed, Trial};
    use reference_impl::variants::Variant;

    /// Concurrent checks inside one run.
    const JOBS: usize = 8;

    fn suites() -> Result<&'static [Suite], Failed> {
        crate::support::vectors::all_suites().map_err(Failed::from)
    }

    fn accepted(variant: Variant) -> Result<(), Failed> {
        let suites = suites()?;
        let rt = crate::support::runtime(2).map_err(Failed::from)?;
        let r = rt.block_on(measure_variant(variant, &affected(suites, variant), JOBS));
        if r.is_accepted() {
            return Ok(());
        }
        let mut problems = vec![format!(
            "variant {} ({}) is legal — {} — yet:",
            r.name, r.description, r.allowed_by
        )];
        problems.extend(
            r.error
                .iter()
                .map(|e| format!("the run could not be made: {e}")),
        );
        problems.extend(
            r.failures
                .iter()
                .map(|f| format!("false failure {} {:?}: {}", f.id, f.requirements, f.message)),
        );
        problems.extend(
            r.harness_errors
                .iter()
                .map(|h| format!("harness error {h}")),
        );
        problems.extend(
            r.untested
                .iter()
                .map(|id| format!("required rule {id} untested: the run is incomplete (exit 1)")),
        );
        Err(problems.join("\n").into())
    }

    pub(crate) fn main() {
        let mut args = Arguments::from_args();
        // Each trial spawns its own server and runs every check; two at a time keeps two
        // cores busy without starving the per-request timeouts. `.ci/run` runs two parts of
        // this binary side by side (tools/ci/run_tests.py), so four at once there: measured
        // green on 2 cores (2026-12-05, 329 s and 264 s for the two parts).
        if args.test_threads.is_none() {
            args.test_threads = Some(2);
        }
        let trials = Variant::ALL
            .iter()
            .map(|v| {
                let v = *v;
                Trial::test(format!("accepted/{}", v.name()), move || accepted(v))
                    .with_kind(v.suite())
            })
            .collect();
        libtest_mimic::run(&args, trials).exit();
    }
}

fn main() {
    #[cfg(feature = "variants")]
    accepted::main();
}
