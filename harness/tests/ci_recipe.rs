//! The CI recipe (issue 15, item 7): `action.yml` at the repository root is a composite action
//! with the inputs, steps and uploads the README promises, and the README's job uses only
//! inputs the action declares. No YAML parser is in the dependency tree, so this reads the
//! file's structure from its indentation (the action is written in plain block style).
#![expect(clippy::expect_used, clippy::unwrap_used)] // tests: a panic is the failure report

use std::collections::BTreeSet;
use std::path::Path;

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)).unwrap()
}

/// Keys directly under `parent` (a top-level key), i.e. the lines indented by two spaces.
fn keys_under(doc: &str, parent: &str) -> BTreeSet<String> {
    let mut inside = false;
    let mut out = BTreeSet::new();
    for line in doc.lines() {
        if !line.starts_with(' ') && !line.trim().is_empty() && !line.starts_with('#') {
            inside = line.trim_end() == format!("{parent}:");
            continue;
        }
        if let Some(rest) = line.strip_prefix("  ")
            && inside
            && !rest.starts_with(' ')
            && !rest.starts_with('#')
            && let Some((key, _)) = rest.split_once(':')
        {
            out.insert(key.trim().to_string());
        }
    }
    out
}

fn top_level_keys(doc: &str) -> BTreeSet<String> {
    (doc.lines())
        .filter(|l| !l.starts_with(' ') && !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.split_once(':').map(|(k, _)| k.to_string()))
        .collect()
}

/// The steps of `runs.steps`: each `- ` item at the steps' indentation with its lines.
fn steps(doc: &str) -> Vec<String> {
    let body = doc.split_once("\n  steps:\n").expect("runs.steps").1;
    let mut out: Vec<String> = Vec::new();
    for line in body.lines() {
        if line.starts_with("    - ") {
            out.push(String::new());
        } else if !line.starts_with("      ") && !line.trim().is_empty() {
            break;
        }
        if let Some(step) = out.last_mut() {
            step.push_str(line);
            step.push('\n');
        }
    }
    out
}

/// Every `${{ inputs.NAME }}`-style reference (also inside expressions) in a text.
fn input_refs(text: &str) -> BTreeSet<String> {
    let re = regex::Regex::new(r"inputs\.([A-Za-z0-9_-]+)").unwrap();
    re.captures_iter(text).map(|c| c[1].to_string()).collect()
}

#[test]
fn action_is_a_composite_action_with_the_promised_inputs() {
    let doc = read("action.yml");
    assert!(!doc.contains('\t'), "YAML forbids tabs for indentation");
    let top = top_level_keys(&doc);
    for key in ["name", "description", "inputs", "outputs", "runs"] {
        assert!(top.contains(key), "top-level {key} missing: {top:?}");
    }
    assert!(keys_under(&doc, "runs").contains("using"));
    assert!(doc.contains("\n  using: composite\n"), "a composite action");
    let inputs = keys_under(&doc, "inputs");
    for i in [
        "target",
        "spawn-reference",
        "suite",
        "filter",
        "args",
        "out",
        "report-url",
    ] {
        assert!(inputs.contains(i), "input {i} missing: {inputs:?}");
    }
    let undeclared: Vec<_> = input_refs(&doc).difference(&inputs).cloned().collect();
    assert!(
        undeclared.is_empty(),
        "undeclared inputs used: {undeclared:?}"
    );
}

#[test]
fn action_builds_runs_uploads_and_fails_on_required_checks() {
    let doc = read("action.yml");
    let steps = steps(&doc);
    assert!(steps.len() >= 4, "{steps:#?}");
    for s in &steps {
        assert!(
            s.contains("\n      name: ") || s.starts_with("    - name: "),
            "unnamed step {s}"
        );
        if s.contains("run: |") {
            // Composite run steps must name their shell.
            assert!(
                s.contains("\n      shell: bash\n"),
                "run step without shell: {s}"
            );
            // Inputs reach scripts through env, never spliced into the script text.
            let script = s.split_once("run: |").unwrap().1;
            assert!(!script.contains("${{"), "expression inside a script: {s}");
        }
    }
    let find = |needle: &str| {
        steps
            .iter()
            .find(|s| s.contains(needle))
            .unwrap_or_else(|| panic!("no step with {needle}"))
    };
    assert!(find("cargo install").contains("--path \"$GITHUB_ACTION_PATH/harness\""));
    assert!(find("cargo install").contains("--locked"));
    assert!(find("cargo install").contains("--no-default-features"));
    let run = find("conform --vectors");
    assert!(run.contains("id: run") && run.contains("exit-code=$code"));
    let sarif = find("github/codeql-action/upload-sarif@");
    assert!(sarif.contains("report.sarif") && sarif.contains("always()"));
    let artifact = find("actions/upload-artifact@");
    assert!(artifact.contains("always()"));
    let fail = steps.last().unwrap();
    assert!(fail.contains("steps.run.outputs.exit-code") && fail.contains("exit 1"));
}

/// The README's job uses this action with inputs it declares, and documents the permissions
/// code scanning needs.
#[test]
fn readme_job_uses_declared_inputs() {
    let readme = read("README.md");
    let section = readme
        .split_once("\n## CI recipe\n")
        .expect("README section `## CI recipe`")
        .1;
    let section = section.split("\n## ").next().unwrap();
    let inputs = keys_under(&read("action.yml"), "inputs");
    let yaml = section
        .split("```yaml\n")
        .nth(1)
        .and_then(|b| b.split_once("```"))
        .expect("a yaml block")
        .0;
    assert!(yaml.contains("security-events: write"));
    assert!(
        yaml.contains("services:"),
        "runs against a service container"
    );
    let with = yaml.split_once("with:\n").expect("the action's inputs").1;
    let used: BTreeSet<String> = with
        .lines()
        .take_while(|l| l.starts_with("          "))
        .filter_map(|l| l.trim().split_once(':').map(|(k, _)| k.to_string()))
        .collect();
    assert!(!used.is_empty());
    let unknown: Vec<_> = used.difference(&inputs).collect();
    assert!(
        unknown.is_empty(),
        "README uses undeclared inputs {unknown:?}"
    );
}
