//! Loads vector files: JSON Schema validation first (precise messages), then the typed model,
//! then semantic checks the schema cannot express (unique ids, known requirement IDs,
//! captures defined before use, valid matchers).

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::model::{Expect, Role, Step, StepAction, Vector, VectorFile};
use crate::engine::requirements::Catalogue;
use crate::json::matcher::validate_matcher;
use crate::json::placeholders::referenced_names;

/// The operations a vector may name (`parley-v1.md` §1).
pub const OPERATIONS: &[&str] = &[
    "get_manifest",
    "whoami",
    "post",
    "read_thread",
    "list_events",
    "inbox",
    "mark",
    "reopen",
    "read_claim",
];

/// Why vectors could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// File or directory unreadable.
    #[error("{path}: {source}")]
    Io {
        /// Path.
        path: PathBuf,
        /// OS error.
        source: std::io::Error,
    },
    /// The schema itself is invalid.
    #[error("schema {path}: {message}")]
    Schema {
        /// Schema path.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// One or more files are invalid (all problems listed).
    #[error("invalid vectors:\n  {}", .0.join("\n  "))]
    Invalid(Vec<String>),
}

/// A loaded vector with the file it came from.
#[derive(Debug, Clone)]
pub struct LoadedVector {
    /// The vector.
    pub vector: Vector,
    /// Area of its file.
    pub area: String,
    /// Its file.
    pub file: PathBuf,
}

/// Compiled schema for vector files.
pub struct SchemaValidator {
    validator: jsonschema::Validator,
}

impl SchemaValidator {
    /// Compiles `vectors/schemas/vector.schema.json`.
    pub fn load(path: &Path) -> Result<Self, LoadError> {
        let text = std::fs::read_to_string(path).map_err(|source| LoadError::Io {
            path: path.into(),
            source,
        })?;
        let schema: Value = serde_json::from_str(&text).map_err(|e| LoadError::Schema {
            path: path.into(),
            message: e.to_string(),
        })?;
        let validator = jsonschema::validator_for(&schema).map_err(|e| LoadError::Schema {
            path: path.into(),
            message: e.to_string(),
        })?;
        Ok(Self { validator })
    }

    /// Every schema violation of one file, as `pointer: message` lines.
    pub fn errors(&self, instance: &Value) -> Vec<String> {
        self.validator
            .iter_errors(instance)
            .map(|e| format!("{}: {}", e.instance_path(), e))
            .collect()
    }
}

/// Parses and checks one file's text; problems are appended to `problems`.
pub fn parse_file(
    path: &Path,
    text: &str,
    schema: Option<&SchemaValidator>,
    catalogue: Option<&Catalogue>,
    problems: &mut Vec<String>,
) -> Option<VectorFile> {
    let shown = path.display();
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            problems.push(format!("{shown}: not JSON: {e}"));
            return None;
        }
    };
    if let Some(s) = schema {
        let errs = s.errors(&value);
        if !errs.is_empty() {
            problems.extend(
                errs.into_iter()
                    .take(20)
                    .map(|e| format!("{shown}: schema: {e}")),
            );
            return None;
        }
    }
    let file: VectorFile = match serde_json::from_value(value) {
        Ok(f) => f,
        Err(e) => {
            problems.push(format!("{shown}: {e}"));
            return None;
        }
    };
    if file.format_version != 1 {
        problems.push(format!(
            "{shown}: format_version {} is not supported",
            file.format_version
        ));
        return None;
    }
    for v in &file.vectors {
        check_vector(v, catalogue, &mut |m| {
            problems.push(format!("{shown}: vector {}: {m}", v.id));
        });
    }
    Some(file)
}

fn check_expect(e: &Expect, at: &str, report: &mut dyn FnMut(String)) {
    let headers = e.headers().into_iter().flatten();
    for (name, m) in headers {
        if let Err(msg) = validate_matcher(m, &format!("{at}/headers/{name}")) {
            report(msg);
        }
    }
    match e {
        Expect::Success(s) => {
            if let Some(m) = &s.matcher
                && let Err(msg) = validate_matcher(m, &format!("{at}/match"))
            {
                report(msg);
            }
        }
        Expect::OneOf(o) => {
            for (i, alt) in o.one_of.iter().enumerate() {
                check_expect(alt, &format!("{at}/one_of/{i}"), report);
            }
        }
        Expect::WellFormed(w) if !w.well_formed => {
            report(format!(
                "{at}: well_formed must be true (false would expect nothing)"
            ));
        }
        Expect::Refusal(_) | Expect::JsonRpcError(_) | Expect::WellFormed(_) => {}
    }
}

/// Semantic checks of one vector.
pub fn check_vector(v: &Vector, catalogue: Option<&Catalogue>, report: &mut dyn FnMut(String)) {
    check_header(v, report);
    if let Some(c) = catalogue {
        check_citations(v, c, report);
    }
    let roles: HashSet<Role> = v.roles.iter().copied().collect();
    check_identity_roles(v, &roles, report);
    let mut defined = builtin_names();
    let (mut raw_http, mut raw_mcp) = (false, false);
    for (i, s) in v.steps.iter().enumerate() {
        let n = i + 1;
        let mut step = |m: String| report(format!("step {n}: {m}"));
        check_step_cites(v, s, &roles, &mut step);
        check_step_action(s, &mut step);
        raw_http |= matches!(s.action(), Some(StepAction::Http(_)));
        raw_mcp |= matches!(s.action(), Some(StepAction::Mcp(_)));
        check_step_placeholders(s, &defined, &mut step);
        check_expect(&s.expect, &format!("steps/{i}/expect"), &mut step);
        if let Some(e) = &s.expect_seen {
            check_expect(e, &format!("steps/{i}/expect_seen"), &mut step);
        }
        check_captures(s, &mut defined, &mut step);
    }
    if raw_http && raw_mcp {
        report("mixes raw HTTP and raw MCP steps: it could run on no transport".into());
    }
}

/// Vector-level members that need no catalogue: citations, `needs`, `advisory`.
fn check_header(v: &Vector, report: &mut dyn FnMut(String)) {
    if v.requirements.is_empty() {
        report("cites no requirement".into());
    }
    for need in &v.needs {
        if let Err(e) = super::model::Need::parse(need) {
            report(e);
        }
    }
    if v.advisory.as_deref().is_some_and(|a| a.trim().is_empty()) {
        report("advisory needs a reason".into());
    }
}

/// Cited IDs against the catalogue: they must exist, and a failure must blame a required one.
fn check_citations(v: &Vector, c: &Catalogue, report: &mut dyn FnMut(String)) {
    for id in &v.requirements {
        if c.get(id).is_none() {
            report(format!(
                "cites {id}, which is not in the {} catalogue",
                c.suite
            ));
        }
    }
    // A failure blames the primary ID unless its step names others: a primary below the
    // required level beside a required ID would fail the run on a rule that cannot.
    let primary_required = v.requirements.first().is_some_and(|p| c.any_required(&[p]));
    if v.advisory.is_none()
        && !primary_required
        && c.any_required(&v.requirements)
        && v.steps.iter().all(|s| s.requirements.is_empty())
    {
        report(
            "its primary requirement is not required but another cited one is: name the \
             violated IDs on the steps (`requirements`) or cite the required one first"
                .into(),
        );
    }
}

/// Every identity the vector names must belong to a listed role.
fn check_identity_roles(v: &Vector, roles: &HashSet<Role>, report: &mut dyn FnMut(String)) {
    // A named identity needs its role's token and whoami, so it is a role the vector uses:
    // listed, a profile without it makes the vector `unsupported` instead of a harness error.
    match super::model::identity_roles(v) {
        Ok(named) => {
            for name in named
                .iter()
                .filter(|n| !roles.iter().any(|r| r.as_str() == n.as_str()))
            {
                report(format!(
                    "names the identity of role {name}, which is not listed in roles"
                ));
            }
        }
        Err(e) => report(e),
    }
}

/// Placeholder names defined before the first step captures anything.
fn builtin_names() -> HashSet<String> {
    let mut defined: HashSet<String> = HashSet::from(["run".to_string()]);
    for r in Role::ALL {
        defined.insert(format!("identity.{r}"));
        defined.insert(format!("lock_label.{r}"));
    }
    for op in crate::parley::manifest::default_routes().0.keys() {
        defined.insert(format!("tool.{op}"));
    }
    defined
}

/// A step's role must be listed and its own IDs cited by the vector.
fn check_step_cites(v: &Vector, s: &Step, roles: &HashSet<Role>, step: &mut dyn FnMut(String)) {
    if !roles.contains(&s.role) {
        step(format!("role {} is not listed in roles", s.role));
    }
    for id in &s.requirements {
        if !v.requirements.contains(id) {
            step(format!("names {id}, which the vector does not cite"));
        }
    }
}

/// A step's action and the members that only make sense with some actions.
fn check_step_action(s: &Step, step: &mut dyn FnMut(String)) {
    match s.action() {
        None => step("needs exactly one of op, http, mcp".into()),
        Some(StepAction::Op(op)) => {
            if !OPERATIONS.contains(&op) {
                step(format!("unknown operation {op}"));
            }
            if s.paginate && op != "inbox" {
                step("paginate is for inbox only".into());
            }
        }
        Some(StepAction::Http(_) | StepAction::Mcp(_)) => {}
    }
    if s.args.is_some() && !matches!(s.action(), Some(StepAction::Op(_))) {
        step("args belong to op steps".into());
    }
    if let Some(r) = s.repeat
        && !(1..=50).contains(&r)
    {
        step("repeat must be 1..50".into());
    }
    if s.expect_seen.is_some() && s.repeat.is_none() {
        step("expect_seen needs repeat".into());
    }
}

/// Every `$name` a step sends or expects must be defined by then.
fn check_step_placeholders(s: &Step, defined: &HashSet<String>, step: &mut dyn FnMut(String)) {
    for name in step_placeholders(s) {
        // `$limits.<name>`: built-ins from the target's manifest (PV-MF-2).
        if !defined.contains(&name) && !name.starts_with("limits.") {
            step(format!("uses ${name} before any step captures it"));
        }
    }
}

/// The `$name`s a step references, in its arguments, raw request and expectation.
fn step_placeholders(s: &Step) -> Vec<String> {
    let mut used = Vec::new();
    for val in [
        s.args.as_ref(),
        s.http.as_ref().and_then(|h| h.body_json.as_ref()),
        s.mcp.as_ref().and_then(|m| m.body_json.as_ref()),
    ]
    .into_iter()
    .flatten()
    {
        referenced_names(val, &mut used);
    }
    if let Some(h) = &s.http {
        referenced_names(&Value::String(h.path.clone()), &mut used);
        if let Some(b) = &h.body {
            referenced_names(&Value::String(b.clone()), &mut used);
        }
    }
    if let Ok(e) = serde_json::to_value(&s.expect) {
        referenced_names(&e, &mut used);
    }
    used
}

/// Captures must be JSON pointers; each defines its name for the later steps.
fn check_captures(s: &Step, defined: &mut HashSet<String>, step: &mut dyn FnMut(String)) {
    for (name, ptr) in &s.capture {
        if !(ptr.is_empty() || ptr.starts_with('/')) {
            step(format!("capture {name}: {ptr:?} is not a JSON pointer"));
        }
        defined.insert(name.clone());
    }
}

/// Loads every `*.json` of `dir` (sorted), validating against `schema`; ids must be unique.
pub fn load_dir(
    dir: &Path,
    schema: Option<&SchemaValidator>,
    catalogue: Option<&Catalogue>,
) -> Result<Vec<LoadedVector>, LoadError> {
    let mut paths: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => rd
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(source) => {
            return Err(LoadError::Io {
                path: dir.into(),
                source,
            });
        }
    };
    paths.sort();
    load_files(&paths, schema, catalogue)
}

/// Loads the given files (ids must be unique across them).
pub fn load_files(
    paths: &[PathBuf],
    schema: Option<&SchemaValidator>,
    catalogue: Option<&Catalogue>,
) -> Result<Vec<LoadedVector>, LoadError> {
    let mut problems = Vec::new();
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for p in paths {
        let text = std::fs::read_to_string(p).map_err(|source| LoadError::Io {
            path: p.clone(),
            source,
        })?;
        if let Some(file) = parse_file(p, &text, schema, catalogue, &mut problems) {
            for v in file.vectors {
                if !seen.insert(v.id.clone()) {
                    problems.push(format!("{}: duplicate vector id {}", p.display(), v.id));
                }
                out.push(LoadedVector {
                    vector: v,
                    area: file.area.clone(),
                    file: p.clone(),
                });
            }
        }
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(LoadError::Invalid(problems))
    }
}
