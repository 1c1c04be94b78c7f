//! Issue 6: every seeded fault of the reference server is caught by the suite on its own
//! requirement IDs, and the fault-free reference passes every check (no false failures).
//!
//! One named test per fault (`caught/<fault>`) plus `clean/reference-passes-everything`,
//! run concurrently (each against its own in-process server). Filter as usual:
//! `cargo test -p conform --features faults --test faults_caught -- body-counts-bytes`.

mod support;

#[cfg(feature = "faults")]
mod power {
    use conform::engine::protocol::Suite;
    use conform::faults::{
        CONCURRENCY_ONLY, Detection, SEQUENCE_ONLY, SSP_SEQUENCE_ONLY, Scope, decide_fault,
        measure_clean, measure_fault, without_histories, without_models,
    };
    use libtest_mimic::{Arguments, Failed, Trial};
    use reference_impl::faults::Fault;

    /// Concurrent checks inside one faulty run.
    const JOBS: usize = 8;

    fn suites() -> Result<&'static [Suite], Failed> {
        crate::support::vectors::all_suites().map_err(Failed::from)
    }

    fn runtime() -> Result<tokio::runtime::Runtime, Failed> {
        crate::support::runtime(2).map_err(Failed::from)
    }

    fn caught(fault: Fault) -> Result<(), Failed> {
        let suites = suites()?;
        // Decided as `conform faults --scope targeted` decides it, stopping at the first
        // catch (`decide_fault`): the verdict is the same, only later catches are not run.
        let r = runtime()?.block_on(decide_fault(fault, suites, JOBS));
        if r.is_caught() {
            return Ok(());
        }
        match r.detection {
            Detection::Caught => Ok(()),
            Detection::CaughtAsWarning => Err(format!(
                "{} violates a MUST rule ({}) but draws only warnings: {:?}",
                r.name,
                r.requirements.join(", "),
                r.warned_by
                    .iter()
                    .map(|f| format!("{} {:?}", f.id, f.requirements))
                    .collect::<Vec<_>>()
            )
            .into()),
            Detection::CaughtElsewhere => Err(format!(
                "{} ({}) is caught only by checks citing other IDs: {:?}",
                r.name,
                r.requirements.join(", "),
                r.failed_elsewhere
                    .iter()
                    .map(|f| format!("{} {:?}", f.id, f.requirements))
                    .collect::<Vec<_>>()
            )
            .into()),
            Detection::Missed => Err(format!(
                "{} ({}) is missed: no check failed in {} checks ({} harness errors) — {}",
                r.name,
                r.requirements.join(", "),
                r.checks_run,
                r.harness_errors,
                r.description
            )
            .into()),
            Detection::HarnessError => Err(format!(
                "{}: the run could not be made: {}",
                r.name,
                r.error.unwrap_or_default()
            )
            .into()),
        }
    }

    /// Issue 10: a fault only sequences reveal is not caught on its IDs by the vectors (Parley)
    /// or the scripted checks (SSP) alone (the model's `caught/<fault>` trial shows the model
    /// catches it).
    fn vectors_miss(fault: Fault) -> Result<(), Failed> {
        let vectors = without_models(suites()?);
        let r = runtime()?.block_on(measure_fault(fault, &vectors, Scope::Targeted, JOBS));
        if let Some(e) = &r.error {
            return Err(format!("{}: the run could not be made: {e}", r.name).into());
        }
        if r.is_caught() {
            return Err(format!(
                "{} is meant to need a sequence, but the vectors alone catch it: {:?}",
                r.name,
                r.caught_by.iter().map(|f| f.id.clone()).collect::<Vec<_>>()
            )
            .into());
        }
        Ok(())
    }

    /// Issue 10: a fault only concurrency reveals is not caught on its IDs by the vectors
    /// and the sequential model (the `caught/<fault>` trial shows the history check does).
    fn sequential_misses(fault: Fault) -> Result<(), Failed> {
        let sequential = without_histories(suites()?);
        let r = runtime()?.block_on(measure_fault(fault, &sequential, Scope::Targeted, JOBS));
        if let Some(e) = &r.error {
            return Err(format!("{}: the run could not be made: {e}", r.name).into());
        }
        if r.is_caught() {
            return Err(format!(
                "{} is meant to need concurrency, but one client at a time catches it: {:?}",
                r.name,
                r.caught_by.iter().map(|f| f.id.clone()).collect::<Vec<_>>()
            )
            .into());
        }
        Ok(())
    }

    fn clean() -> Result<(), Failed> {
        let suites = suites()?;
        let c = runtime()?.block_on(measure_clean(suites, JOBS));
        if let Some(e) = c.error {
            return Err(format!("the fault-free run could not be made: {e}").into());
        }
        let mut problems: Vec<String> = c
            .failures
            .iter()
            .map(|f| format!("false failure {} {:?}: {}", f.id, f.requirements, f.message))
            .collect();
        problems.extend(
            c.harness_errors
                .iter()
                .map(|h| format!("harness error {h}")),
        );
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("\n").into())
        }
    }

    pub(crate) fn main() {
        let mut args = Arguments::from_args();
        // Each trial spawns its own server; four at a time keeps two cores busy without
        // starving the per-request timeouts.
        if args.test_threads.is_none() {
            args.test_threads = Some(4);
        }
        let mut trials = vec![Trial::test("clean/reference-passes-everything", clean)];
        trials.extend(Fault::ALL.iter().map(|f| {
            let f = *f;
            Trial::test(format!("caught/{}", f.name()), move || caught(f)).with_kind(f.suite())
        }));
        trials.extend(
            SEQUENCE_ONLY
                .iter()
                .chain(SSP_SEQUENCE_ONLY)
                .filter_map(|n| Fault::from_name(n))
                .map(|f| {
                    Trial::test(format!("vectors-miss/{}", f.name()), move || {
                        vectors_miss(f)
                    })
                    .with_kind(f.suite())
                }),
        );
        trials.extend(
            CONCURRENCY_ONLY
                .iter()
                .filter_map(|n| Fault::from_name(n))
                .map(|f| {
                    Trial::test(format!("sequential-misses/{}", f.name()), move || {
                        sequential_misses(f)
                    })
                    .with_kind(f.suite())
                }),
        );
        libtest_mimic::run(&args, trials).exit();
    }
}

fn main() {
    #[cfg(feature = "faults")]
    power::main();
}
