//! The terminal of the `conform` binary (issue 26, findings 7–9): a reader that goes away
//! (`conform list | head -1`) ends the output quietly with the command's own exit code; an
//! unwritable `--out` stops the run before its first request; `run` off a terminal prints
//! nothing per check unless `--verbose`, `--quiet` prints the summary only, the spawned
//! reference's log goes to `reference.log` in `--out`, colour only where asked, and the
//! progress counter counts every result of the report. Items 8 and 9: a copied or installed
//! binary finds its vectors wherever it runs (and says where it looked when it cannot),
//! `explain` accepts every id the output prints, and `--suite` help lists every protocol.
#![expect(clippy::expect_used, clippy::unwrap_used)] // tests: a panic is the failure report

use std::io::ErrorKind;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use conform::engine::protocol::default_vectors_dir;

/// `conform --vectors <the source tree's> <args>`, ready to run.
fn conform(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_conform"));
    cmd.arg("--vectors").arg(default_vectors_dir()).args(args);
    cmd
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs `cmd` with its stdout a pipe whose reading end is already closed: every write to it
/// fails with `EPIPE` (deterministically, unlike a reader that stops after a few bytes,
/// which may come after the whole output already sat in the pipe's buffer).
fn into_closed_pipe(mut cmd: Command) -> Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    cmd.stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("conform starts")
}

/// `conform list | head -1` and the like: every command prints through one quiet standard
/// output (the library's commands too: they panicked with exit 101 on a closed pipe), so a
/// reader that went away ends the output with exit 0 and nothing on stderr.
#[test]
fn commands_into_a_closed_pipe_exit_0_quietly() {
    let commands: [&[&str]; 4] = [
        &["list"],
        &["explain", "PV-ST-4"],
        &["faults", "--list"],
        &["variants", "--list"],
    ];
    for args in commands {
        let out = into_closed_pipe(conform(args));
        assert_eq!(
            (out.status.code(), text(&out.stderr).as_str()),
            (Some(0), ""),
            "conform {args:?} | head -1"
        );
    }
}

/// `--out` under a regular file cannot be created (by any user, root included): the run
/// stops with exit 2 naming the path, and the target — a listener that would accept the
/// pre-flight's connection — was never contacted.
#[test]
fn unwritable_out_stops_before_the_first_request() {
    let tmp = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let profile = tmp.path().join("target.toml");
    std::fs::write(
        &profile,
        format!(
            "format_version = 1\nbase_url = \"http://{}\"\ntimeout_ms = 1500\n",
            listener.local_addr().unwrap()
        ),
    )
    .unwrap();
    let file = tmp.path().join("not-a-dir");
    std::fs::write(&file, "").unwrap();
    let out_dir = file.join("x");
    let out = conform(&["run", "--suite", "parley", "--transport", "http"])
        .arg("--target")
        .arg(&profile)
        .arg("--out")
        .arg(&out_dir)
        .output()
        .expect("conform starts");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&out_dir.display().to_string()) && stderr.contains("output directory"),
        "the error names --out: {stderr}"
    );
    assert!(!out_dir.exists());
    listener.set_nonblocking(true).unwrap();
    match listener.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        other => panic!("the target was contacted: {other:?}\n{stderr}"),
    }
}

/// `conform explain <id>`: exit code, stdout and stderr.
fn explain(id: &str) -> (Option<i32>, String, String) {
    let out = conform(&["explain", id]).output().expect("conform starts");
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

/// Every shape of id the output prints is explained: a requirement ID in any case, a result
/// id with its binding, a derived `PV-TR-1/<vector>` check (the rule and the vector).
#[test]
fn explain_accepts_every_id_the_output_prints() {
    let (code, stdout, stderr) = explain("pv-st-4");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.starts_with("PV-ST-4 (MUST"), "{stdout}");

    const VECTOR: &str = "state/locked-refuses-answer-by-other";
    for binding in ["http", "mcp"] {
        let (code, stdout, stderr) = explain(&format!("{VECTOR}@{binding}"));
        assert_eq!(code, Some(0), "{binding}: {stderr}");
        assert!(
            stdout.contains(&format!("vector {VECTOR} (")) && stdout.contains(binding),
            "{stdout}"
        );
    }
    let (code, stdout, stderr) = explain(&format!("PV-TR-1/{VECTOR}"));
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("PV-TR-1 (MUST"), "the rule: {stdout}");
    assert!(
        stdout.contains(&format!("vector {VECTOR} (")),
        "the vector: {stdout}"
    );
    // Model, history and MCP-layer results, and a check id in another case.
    for id in [
        "model/parley-claims@mcp",
        "history/parley-concurrency@http",
        "mcp-lc-1/initialize",
        "SSP-DISC-1/well-known",
    ] {
        let (code, stdout, stderr) = explain(id);
        assert_eq!(code, Some(0), "{id}: {stderr}");
        assert!(!stdout.is_empty(), "{id}");
    }
    let (code, _, stderr) = explain("no-such/check@http");
    assert_eq!(code, Some(2));
    assert!(stderr.contains("no-such/check@http"), "{stderr}");
}

/// `explain` prints words, not Rust's Debug text (`method: Http`, `roles: [Reader]`).
#[test]
fn explain_shows_no_debug_text() {
    let (code, stdout, stderr) = explain("SSP-INV-1");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("\nmethod: HTTP\n"), "{stdout}");
    let (code, stdout, stderr) = explain("state/locked-refuses-answer-by-other");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.contains("roles: agent_a, agent_b, moderator"),
        "{stdout}"
    );
    assert!(!stdout.contains('['), "{stdout}");
}

/// The `--suite` entry of a command's help.
fn suite_help(command: &str) -> String {
    let out = conform(&[command, "--help"])
        .output()
        .expect("conform starts");
    let help = text(&out.stdout);
    let at = help.find("--suite").expect("a --suite option");
    let rest = &help[at..];
    let end = rest[1..].find("\n  -").map_or(rest.len(), |i| i + 1);
    rest[..end].to_string()
}

/// The registered protocols (parley, ssp, mcp) in `--suite`'s help, from the registry.
#[test]
fn suite_help_lists_every_protocol() {
    for command in ["run", "list"] {
        let help = suite_help(command);
        for name in conform::registry::names() {
            assert!(help.contains(name), "{command} --suite: {name}: {help}");
        }
    }
}

/// Places the `conform` binary under test at `dir/conform`: a hard link (its resolved path
/// is then `dir/conform`; a symbolic link would resolve to the build directory), else a copy.
fn place_binary(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let exe = dir.join("conform");
    if std::fs::hard_link(env!("CARGO_BIN_EXE_conform"), &exe).is_err() {
        std::fs::copy(env!("CARGO_BIN_EXE_conform"), &exe).unwrap();
    }
    exe
}

/// A vectors directory at `dir` that only this test has: the repository's vectors (linked),
/// with the Parley catalogue's first rule marked, so `list` shows which one was read.
const MARK: &str = "MARKED-COPY ";
fn marked_vectors(dir: &Path) {
    let source = default_vectors_dir();
    std::fs::create_dir_all(dir.join("requirements")).unwrap();
    for sub in ["parley", "schemas", "ssp"] {
        std::os::unix::fs::symlink(source.join(sub).canonicalize().unwrap(), dir.join(sub))
            .unwrap();
    }
    for file in ["parley.toml", "ssp.toml", "mcp.toml"] {
        let mut toml = std::fs::read_to_string(source.join("requirements").join(file)).unwrap();
        if file == "parley.toml" {
            toml = toml.replacen("\nrule = \"", &format!("\nrule = \"{MARK}"), 1);
        }
        std::fs::write(dir.join("requirements").join(file), toml).unwrap();
    }
}

/// `conform list --suite parley` by the binary `exe`, from `cwd`, without `$CONFORM_VECTORS`.
fn list_from(exe: &Path, cwd: &Path) -> Output {
    std::fs::create_dir_all(cwd).unwrap();
    Command::new(exe)
        .args(["list", "--suite", "parley"])
        .current_dir(cwd)
        .env_remove("CONFORM_VECTORS")
        .output()
        .expect("conform starts")
}

/// An installed binary (a copy outside the build directory) reads the `vectors/` beside it
/// or the installation's `share/conform/vectors`, from any working directory; and
/// `$CONFORM_VECTORS` names another.
#[test]
fn a_copied_binary_finds_the_vectors_installed_with_it() {
    let tmp = tempfile::tempdir().unwrap();
    let elsewhere = tmp.path().join("elsewhere");
    // Beside it.
    let exe = place_binary(&tmp.path().join("beside"));
    marked_vectors(&tmp.path().join("beside/vectors"));
    let out = list_from(&exe, &elsewhere);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stdout.contains(MARK),
        "the vectors beside the binary: {stdout}"
    );
    // `<prefix>/bin/conform` and `<prefix>/share/conform/vectors` (`cargo install` layout).
    let prefix = tmp.path().join("prefix");
    let exe = place_binary(&prefix.join("bin"));
    marked_vectors(&prefix.join("share/conform/vectors"));
    let out = list_from(&exe, &elsewhere);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains(MARK), "share/conform/vectors: {stdout}");
    // `$CONFORM_VECTORS` first.
    let out = Command::new(env!("CARGO_BIN_EXE_conform"))
        .args(["list", "--suite", "parley"])
        .current_dir(&elsewhere)
        .env("CONFORM_VECTORS", prefix.join("share/conform/vectors"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains(MARK));
}

/// With no vectors anywhere it looks, the binary stops (exit 2) saying where it looked and
/// how to fix it; `diff`, which reads no catalogue, still runs there.
#[test]
fn a_copied_binary_without_vectors_says_where_it_looked() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = place_binary(&tmp.path().join("bin"));
    let out = list_from(&exe, &tmp.path().join("elsewhere"));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(text(&out.stdout), "");
    for part in [
        "no vectors directory found",
        "--vectors DIR",
        "$CONFORM_VECTORS",
        "beside the executable",
        &tmp.path().join("bin/vectors").display().to_string(),
        &tmp.path()
            .join("share/conform/vectors")
            .display()
            .to_string(),
        "Fix: ",
    ] {
        assert!(stderr.contains(part), "{part:?} in:\n{stderr}");
    }
    let out = Command::new(&exe)
        .args(["diff", "old.json", "new.json"])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("old.json") && !stderr.contains("vectors"),
        "{stderr}"
    );
}

/// Runs against the reference spawned in process (feature `reference`).
#[cfg(feature = "reference")]
mod spawned {
    use super::*;

    /// The two DNS-rebinding checks: fast, and each provokes a WARN line of the reference.
    const REBINDING: &str = "MCP-OR-*";
    /// One vector on both bindings: two runs and their PV-TR-1 comparison, three results.
    const ONE_VECTOR: &str = "authority/human-bound-by-lock";

    fn run(filter: &str, out_dir: &Path, extra: &[&str]) -> Command {
        let mut cmd = conform(&["run", "--spawn-reference", "--filter", filter]);
        cmd.arg("--out").arg(out_dir).args(extra);
        cmd
    }

    fn total(out_dir: &Path) -> u64 {
        let json = std::fs::read_to_string(out_dir.join("report.json")).unwrap();
        let report: serde_json::Value = serde_json::from_str(&json).unwrap();
        report["summary"]["total"].as_u64().unwrap()
    }

    /// `conform run … | head -2`: the reports are written, the exit code is the run's.
    #[test]
    fn run_into_a_closed_pipe_keeps_its_reports_and_exit_code() {
        let tmp = tempfile::tempdir().unwrap();
        let out = into_closed_pipe(run(REBINDING, tmp.path(), &[]));
        assert_eq!(
            (out.status.code(), text(&out.stderr).as_str()),
            (Some(0), "")
        );
        assert_eq!(total(tmp.path()), 2);
    }

    /// Off a terminal, `--quiet`: the summary on stdout, nothing on stderr — no per-check
    /// line, no WARN of the reference (those are in `reference.log`, without colour codes).
    #[test]
    fn quiet_prints_the_summary_only_and_the_reference_logs_to_a_file() {
        let tmp = tempfile::tempdir().unwrap();
        let out = run(REBINDING, tmp.path(), &["--quiet"]).output().unwrap();
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
        assert_eq!(stderr, "", "nothing but the summary");
        assert!(
            stdout.starts_with("conform "),
            "the summary first: {stdout}"
        );
        assert!(
            stdout.lines().any(|l| l.starts_with("PASS")),
            "the verdict: {stdout}"
        );
        let log = tmp.path().join("reference.log");
        let logged = std::fs::read_to_string(&log).expect("reference.log written");
        assert!(logged.contains("DNS rebinding"), "{logged}");
        assert!(
            !logged.contains('\x1b'),
            "no colour codes in a file: {logged}"
        );
        assert!(
            stdout.contains(&format!("reference server log: {}", log.display())),
            "{stdout}"
        );
    }

    /// Off a terminal, nothing per check by default; `--verbose` gives one line per result,
    /// counted against the report's total (the PV-TR-1 comparison included), and a reference
    /// that logged nothing leaves no `reference.log`.
    #[test]
    fn verbose_lines_count_every_result_of_the_report() {
        let tmp = tempfile::tempdir().unwrap();
        let out = run(ONE_VECTOR, tmp.path(), &[]).output().unwrap();
        assert_eq!(
            (out.status.code(), text(&out.stderr).as_str()),
            (Some(0), "")
        );
        let out = run(ONE_VECTOR, tmp.path(), &["--verbose"])
            .output()
            .unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        let n = total(tmp.path());
        assert_eq!(n, 3);
        let counters: Vec<&str> = stderr
            .lines()
            .filter_map(|l| l.strip_prefix('[')?.split(']').next())
            .collect();
        assert_eq!(counters, ["1/3", "2/3", "3/3"], "{stderr}");
        assert!(stderr.contains("] pass PV-TR-1/authority/human-bound-by-lock"));
        assert!(!tmp.path().join("reference.log").exists());
    }

    /// No escape codes unless asked: `--color never`, `NO_COLOR`, or auto off a terminal;
    /// `--color always` paints the verdict line.
    #[test]
    fn colour_only_where_asked() {
        let tmp = tempfile::tempdir().unwrap();
        for (flag, no_color) in [("never", None), ("auto", Some("1")), ("auto", None)] {
            let mut cmd = run(REBINDING, tmp.path(), &["--quiet", "--color", flag]);
            match no_color {
                Some(v) => cmd.env("NO_COLOR", v),
                None => cmd.env_remove("NO_COLOR"),
            };
            let out = cmd.output().unwrap();
            let stdout = text(&out.stdout);
            assert_eq!(out.status.code(), Some(0), "{stdout}");
            assert!(
                !stdout.contains("\x1b["),
                "--color {flag}, NO_COLOR {no_color:?}: {stdout:?}"
            );
        }
        let out = run(REBINDING, tmp.path(), &["--quiet", "--color", "always"])
            .output()
            .unwrap();
        let stdout = text(&out.stdout);
        assert!(stdout.contains("\x1b[1;32mPASS"), "{stdout:?}");
    }
}

/// `conform model --focus quota --promote DIR` is refused before any target is reached: no
/// counterexample of that focus can be a vector (a write by the quota role depends on a
/// window other clients share), and a search that could only end in that refusal is not run.
#[test]
fn quota_focus_promote_is_refused_before_the_search() {
    let dir = tempfile::tempdir().unwrap();
    let out = conform(&[
        "model",
        "--spawn-reference",
        "--focus",
        "quota",
        "--promote",
    ])
    .arg(dir.path())
    .output()
    .expect("conform starts");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("--promote: the quota focus"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        !text(&out.stdout).contains("conform model: seed"),
        "{}",
        text(&out.stdout)
    );
}
