//! Legal variants accepted (issue 14): the dual of [`crate::faults`].
//!
//! For each variant of `reference_impl::variants::Variant` — a behaviour the design notes
//! or seeds allow, which the reference happens not to have — the runner spawns an
//! in-process reference server with exactly that variant on, runs **every** check of every
//! suite against it and records what failed. A variant is **accepted** when nothing fails
//! and no check ends in a harness error; warnings are allowed (they are how the suite
//! reports rules below MUST and points the notes leave open). Any failure is a false
//! failure of the suite: a check stricter than the text it cites.
//!
//! The harness reads only the variant catalogue (name, the sentence allowing it,
//! description); it never looks at how the server implements a variant.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt as _;
use reference_impl::variants::Variant;

use crate::capability::command::Launcher;
use crate::engine::protocol::Suite;
use crate::engine::report::power::{
    VariantResult, VariantsAccepted, cell, render_variants_markdown,
};
use crate::engine::run::RunOptions;
use crate::reference_runs::{
    PowerError, failed, harness_errors, load_suites, run_configured, with_verdict,
};

/// Progress callback: (finished variant, done, total).
pub type VariantProgressFn = Arc<dyn Fn(&VariantResult, usize, usize) + Send + Sync>;

/// The variants to measure, in catalogue order (empty `names` = the whole catalogue).
pub fn select(names: &[String]) -> Result<Vec<Variant>, PowerError> {
    for n in names {
        if Variant::from_name(n).is_none() {
            return Err(PowerError::UnknownVariant(n.clone()));
        }
    }
    Ok(Variant::ALL
        .iter()
        .copied()
        .filter(|v| names.is_empty() || names.iter().any(|n| n == v.name()))
        .collect())
}

/// The suites whose checks `variant` can change: an SSP variant changes only the SSP routes,
/// a Parley variant only the forum's bindings (the MCP layer included: it is the forum's MCP
/// endpoint), a variant of both every suite. The test `variants_accepted` runs each variant
/// on these (issue 25: CI time); `conform variants` still runs every suite.
pub fn affected(suites: &[Suite], variant: Variant) -> Vec<Suite> {
    let keep = |s: &Suite| match variant.suite() {
        "ssp" => s.name == "ssp",
        "parley" => s.name != "ssp",
        _ => true,
    };
    suites.iter().filter(|s| keep(s)).cloned().collect()
}

/// Runs every check of `suites` against a reference with `variant` on.
pub async fn measure_variant(variant: Variant, suites: &[Suite], jobs: usize) -> VariantResult {
    let started = Instant::now();
    let mut config = reference_impl::Config::demo_in_memory();
    config.variants = vec![variant.name().to_string()];
    let name = format!("reference with variant {variant}");
    let flags = format!(" --variant {variant}");
    let mut result = VariantResult {
        name: variant.name().into(),
        suite: variant.suite().into(),
        allowed_by: variant.allowed_by().into(),
        description: variant.description().into(),
        checks_run: 0,
        failures: Vec::new(),
        warnings: Vec::new(),
        harness_errors: Vec::new(),
        untested: Vec::new(),
        error: None,
        wall_time_ms: 0,
        report: None,
    };
    match run_configured(
        config,
        (name, &flags),
        suites,
        RunOptions {
            jobs,
            ..RunOptions::default()
        },
    )
    .await
    {
        Ok(report) => {
            result.checks_run = report.checks.len();
            result.failures = failed(&report);
            result.warnings = with_verdict(&report, true);
            result.harness_errors = harness_errors(&report);
            result.untested = (report.requirements.iter())
                .filter(|q| q.untested_required())
                .map(|q| q.id.clone())
                .collect();
            result.report = Some(Box::new(report));
        }
        Err(e) => result.error = Some(e),
    }
    result.wall_time_ms = started.elapsed().as_millis() as u64;
    result
}

/// Measures `variants` (at most `parallel` servers at a time), in catalogue order.
pub async fn measure(
    variants: &[Variant],
    suites: &[Suite],
    parallel: usize,
    jobs: usize,
    progress: Option<VariantProgressFn>,
) -> VariantsAccepted {
    let started = Instant::now();
    let total = variants.len();
    let mut runs = std::pin::pin!(
        futures::stream::iter(variants.iter().copied())
            .map(|v| measure_variant(v, suites, jobs))
            .buffer_unordered(parallel.max(1))
    );
    let mut done: Vec<VariantResult> = Vec::with_capacity(total);
    while let Some(r) = runs.next().await {
        done.push(r);
        if let (Some(p), Some(last)) = (&progress, done.last()) {
            p(last, done.len(), total);
        }
    }
    let order = |name: &str| Variant::ALL.iter().position(|v| v.name() == name);
    done.sort_by_key(|r| order(&r.name));
    VariantsAccepted {
        total,
        accepted: done.iter().filter(|r| r.is_accepted()).count(),
        variants: done,
        wall_time_ms: started.elapsed().as_millis() as u64,
    }
}

/// `conform variants`: arguments (wired in under the `variants` feature).
#[derive(Debug, Clone, clap::Args)]
pub struct VariantsArgs {
    /// Measure only this variant (repeatable; default: the whole catalogue).
    #[arg(long = "variant", value_name = "NAME")]
    pub variants: Vec<String>,
    /// Print the variant catalogue and exit.
    #[arg(long)]
    pub list: bool,
    /// Reference servers measured at the same time.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub parallel: u16,
    /// Concurrent checks inside one run.
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub jobs: u16,
    /// Output directory: `variants.{json,md}`.
    #[arg(long, value_name = "DIR", default_value = "reports/variants")]
    pub out: PathBuf,
}

/// The variant catalogue as a Markdown table.
pub fn catalogue_markdown() -> String {
    let mut out = String::from(
        "| variant | suite | what the server does | allowed by |\n|---|---|---|---|\n",
    );
    for v in Variant::ALL {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            v.name(),
            v.suite(),
            cell(v.description()),
            cell(v.allowed_by())
        ));
    }
    out
}

/// The progress of a measurement: one line per finished variant, a note to the user.
pub fn progress(launcher: &'static dyn Launcher) -> VariantProgressFn {
    Arc::new(move |r: &VariantResult, done, total| print_progress(r, done, total, launcher))
}

/// One finished variant, as a note to the user.
fn print_progress(r: &VariantResult, done: usize, total: usize, launcher: &dyn Launcher) {
    let verdict = if r.is_accepted() {
        "accepted".to_string()
    } else {
        format!(
            "NOT ACCEPTED ({} failures, {} harness errors{})",
            r.failures.len(),
            r.harness_errors.len(),
            r.error
                .as_deref()
                .map(|e| format!(", {e}"))
                .unwrap_or_default()
        )
    };
    launcher.note(&format!(
        "[{done}/{total}] {verdict} {} ({} ms)",
        r.name, r.wall_time_ms
    ));
}

/// Runs `conform variants`: measures, writes `variants.json` and `.md` under `--out`,
/// prints the Markdown. Exit code 0 when every variant is accepted, else 1.
pub fn execute(
    args: &VariantsArgs,
    vectors_dir: &Path,
    launcher: &'static dyn Launcher,
) -> Result<u8, PowerError> {
    if args.list {
        crate::reference_runs::print(&catalogue_markdown(), launcher)?;
        return Ok(0);
    }
    let selected = select(&args.variants)?;
    let suites = load_suites(vectors_dir)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(PowerError::Runtime)?;
    let progress = progress(launcher);
    let mut accepted = rt.block_on(measure(
        &selected,
        &suites,
        usize::from(args.parallel),
        usize::from(args.jobs),
        Some(progress),
    ));
    let columns: Vec<crate::reference_runs::Column> = (accepted.variants.iter_mut())
        .filter_map(|v| Some((v.name.clone(), *v.report.take()?, None)))
        .collect();
    let md = render_variants_markdown(&accepted);
    let json = serde_json::to_string_pretty(&accepted).map_err(|e| PowerError::Io {
        path: args.out.join("variants.json"),
        source: std::io::Error::other(e),
    })?;
    crate::reference_runs::write_files(
        &args.out,
        &[("variants.json", json), ("variants.md", md.clone())],
    )?;
    crate::reference_runs::write_matrix_or_warn(&args.out, columns, "variants", launcher);
    crate::reference_runs::print(&md, launcher)?;
    Ok(if accepted.is_complete() { 0 } else { 1 })
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used)] // tests: a panic is the failure report
    use super::*;

    #[test]
    fn unknown_variant_names_are_refused() {
        assert!(matches!(
            select(&["no-such-variant".into()]),
            Err(PowerError::UnknownVariant(_))
        ));
        assert_eq!(select(&[]).unwrap().len(), Variant::ALL.len());
        let one = select(&["pretty-json".into()]).unwrap();
        assert_eq!(one, vec![Variant::PrettyJson]);
    }

    #[test]
    fn the_catalogue_cites_its_sentences() {
        let md = catalogue_markdown();
        for v in Variant::ALL {
            assert!(md.contains(v.name()));
        }
    }
}
