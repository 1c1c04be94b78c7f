//! `conform` CLI: parse arguments, call the library, map outcomes to exit codes.
//!
//! Exit codes: 0 = every required check passed; 1 = a required (MUST) check failed, a
//! selected suite is incomplete (not `--partial`) or a baseline entry is stale (not
//! `--allow-stale-baseline`); 2 = usage, profile, vectors, pre-flight or harness error. Standard output is written through
//! [`cli::out`]: a reader that goes away (`conform list | head -1`) ends it quietly, with the
//! command's own exit code.

// Every command writes through `cli::out` / `term::note`: a `print!` panics once the reader
// went away (issue 26), so the binary denies them as the library does.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod cli;
mod term;

/// The whole run (harness and the in-process reference) allocates and frees JSON values on
/// every exchange; glibc's allocator spent a third of the main job's CPU on it (issue 25).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{CommandFactory as _, FromArgMatches as _, Parser, Subcommand};
use conform::capability::command::Commands;
use conform::engine::vectors_dir;
use conform::registry;

use cli::{parse_suite, suite_help};

const EXIT_HELP: &str = "EXIT CODES:\n  0  every required (MUST, REC) check passed and every selected suite is complete (warnings,\n     expected failures allowed)\n  1  a required check failed; or a selected suite is incomplete (nothing executed, or a\n     MUST/REC rule untested for want of a token or credential) without --partial; or a\n     baseline entry is stale (an expected failure passed) without --allow-stale-baseline\n  2  usage, profile, pre-flight or harness error\n  130  interrupted (Ctrl-C): the reports hold the results so far, the rest skipped";

#[derive(Parser, Debug)]
#[command(name = "conform", version, about = "Conformance suite for Parley v1 and SSP 1.0", after_help = EXIT_HELP)]
struct Cli {
    /// Directory holding requirements/, schemas/ and the vectors. Default, the first found:
    /// $CONFORM_VECTORS, ./vectors, vectors/ beside the executable,
    /// <exe dir>/../share/conform/vectors, the source tree of a binary still in cargo's
    /// target directory.
    #[arg(long, global = true, value_name = "DIR")]
    vectors: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the checks against a target and write reports.
    #[command(after_help = EXIT_HELP)]
    Run(cli::run::RunArgs),
    /// List the requirement catalogue(s) with coverage.
    List {
        #[arg(long, default_value = "all", value_parser = parse_suite, help = suite_help("Suite to list"))]
        suite: String,
    },
    /// Write a commented target profile for a server (roles from `whoami`, SSP fixture
    /// roles from its descriptors, what is missing and which checks it leaves unsupported).
    Init(conform::capability::init::InitArgs),
    /// Explain a requirement ID (rule, seed text, the checks that test it) or a check: any id
    /// the output prints.
    Explain {
        /// A requirement ID (`PV-ST-4`, any case), a check or vector id, a result id
        /// (`<check>@http`) or a derived check (`PV-TR-1/<vector>`).
        id: String,
    },
    /// Fuzz a server with hostile requests (each protocol's black-box campaign); the
    /// oracles are checks of the report (exit 1 on a finding).
    #[command(after_help = EXIT_HELP)]
    Fuzz(conform::capability::fuzz::cli::FuzzArgs),
    /// Run a protocol's state-machine model against a target: seeded random operation
    /// sequences, shrunk to a minimal counterexample (exit 1) when the target disagrees
    Model(conform::capability::model::ModelArgs),
    /// Suite power: run the suites against the reference with each seeded fault in turn
    /// (built with `--features faults`; exit 0 only if every fault is caught on its own IDs).
    #[cfg(feature = "faults")]
    Faults(conform::faults::FaultsArgs),
    /// Run the whole suite against the reference with each legal variant on, one at a time
    /// (built with `--features variants`; exit 0 only if every variant gives no failure).
    #[cfg(feature = "variants")]
    Variants(conform::variants::VariantsArgs),
    /// Compare two report.json files: new failures, fixes, requirement changes, latency
    /// (Markdown for a PR comment; exit 1 on a regression).
    Diff(cli::diff::DiffArgs),
    /// Merge the report.json files of every shard of a `run --shard k/n` into one report.
    Merge(cli::merge::MergeArgs),
    /// Check a report offline: its Ed25519 signature against a key you trust, its suite
    /// digest against this conform's suite, and that its run was complete (exit 1 with the
    /// reasons on any mismatch).
    Verify(cli::verify::VerifyArgs),
    /// Put several implementations' reports of one suite side by side: requirements as
    /// rows, implementations as columns (matrix.html, .md, .json; reports of different
    /// suites are refused).
    Matrix(cli::matrix::MatrixArgs),
}

fn main() -> ExitCode {
    term::init_tracing();
    let protocols = registry::capabilities().commands;
    let mut command = Cli::command();
    for p in &protocols {
        for sub in p.commands() {
            command = command.subcommand(sub);
        }
    }
    let matches = command.get_matches();
    let result = match protocol_command(&protocols, &matches) {
        Some(r) => r,
        None => match Cli::from_arg_matches(&matches) {
            Ok(cli) => dispatch(cli),
            Err(e) => e.exit(),
        },
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            term::note(&format!("error: {}", error_text(&e)));
            ExitCode::from(2)
        }
    }
}

/// An error and its causes on one line, each cause once: a library error that already
/// shows its source (`{path}: {source}`) does not get it appended a second time.
fn error_text(e: &anyhow::Error) -> String {
    let mut text = e.to_string();
    for cause in e.chain().skip(1) {
        let c = cause.to_string();
        if !text.contains(&c) {
            text = format!("{text}: {c}");
        }
    }
    text
}

#[test]
fn each_cause_is_printed_once() {
    let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
    let shown = anyhow::Error::new(conform::engine::report::json::ReadError::Io {
        path: "/x".into(),
        source: io,
    });
    assert_eq!(error_text(&shown), "/x: no such file");
    let hidden = anyhow::anyhow!("inner").context("outer");
    assert_eq!(error_text(&hidden), "outer: inner");
}

/// A subcommand a protocol added (SSP's `validate`), run by that protocol.
fn protocol_command(
    protocols: &[Arc<dyn Commands>],
    matches: &clap::ArgMatches,
) -> Option<anyhow::Result<u8>> {
    let (name, sub) = matches.subcommand()?;
    let p = protocols
        .iter()
        .find(|p| p.commands().iter().any(|c| c.get_name() == name))?;
    Some(
        p.run_command(name, sub, &term::Terminal)
            .map_err(anyhow::Error::from),
    )
}

fn dispatch(cli: Cli) -> anyhow::Result<u8> {
    // Only the commands that read the catalogues look for them (`diff` and `merge` run
    // anywhere); not found is exit 2 with where it looked.
    let dir = || vectors_dir::locate(cli.vectors.as_deref());
    match cli.command {
        Command::Run(args) => cli::run::execute(args, &dir()?),
        Command::List { suite } => cli::catalogue::cmd_list(&suite, &dir()?).map(|()| 0),
        Command::Init(args) => Ok(conform::capability::init::execute(
            &args,
            &registry::capabilities().init,
            &dir()?,
            &term::Terminal,
        )?),
        Command::Explain { id } => cli::catalogue::cmd_explain(&id, &dir()?).map(|()| 0),
        Command::Fuzz(args) => {
            let protocols = registry::selected(
                registry::capabilities().fuzz,
                std::slice::from_ref(&args.suite),
            )?;
            Ok(conform::capability::fuzz::cli::execute(
                &args,
                &protocols,
                &dir()?,
                &term::Terminal,
            )?)
        }
        Command::Model(args) => Ok(conform::capability::model::execute(
            &args,
            &registry::capabilities().model,
            &registry::names(),
            &term::Terminal,
        )?),
        #[cfg(feature = "faults")]
        Command::Faults(args) => {
            conform::faults::execute(&args, &dir()?, &term::Terminal).map_err(anyhow::Error::from)
        }
        #[cfg(feature = "variants")]
        Command::Variants(args) => {
            conform::variants::execute(&args, &dir()?, &term::Terminal).map_err(anyhow::Error::from)
        }
        Command::Diff(args) => cli::diff::cmd_diff(&args),
        Command::Merge(args) => cli::merge::execute(&args),
        Command::Verify(args) => cli::verify::execute(&args, &dir()?),
        Command::Matrix(args) => cli::matrix::execute(&args),
    }
}
