//! SSP validator vectors (`vectors/ssp/validator/*.json`, format in `vectors/README.md`,
//! "SSP validator vectors"): the typed model, the loader, and the check of one vector.
//!
//! Used by the libtest-mimic binary `tests/ssp_validator_vectors.rs` (one test per vector)
//! and by the engine check `SSP-SCH-1/validator-vectors` (so `conform run --suite ssp`
//! reports VAL coverage too).

use crate::ssp::document::{SspDocument, parse, parse_str, serialize};
use crate::ssp::types::{
    ErrorResponse, InvocationRequest, InvocationResponse, SkillDescriptor, SkillIndex,
};
use crate::ssp::validator::{DocType, Mode, SspValidator, ValidationIssue, ValidationReport};
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// `"member": null` is a value (null), not an absent member.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// One vector file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VectorFile {
    /// Must be 1.
    pub format_version: u32,
    /// Must be `ssp-validator`.
    pub suite: String,
    /// Group (test-name prefix).
    pub group: String,
    /// Free text.
    #[serde(default)]
    pub description: Option<String>,
    /// Named base documents.
    #[serde(default)]
    pub bases: BTreeMap<String, Value>,
    /// The vectors.
    pub vectors: Vec<Vector>,
}

/// One vector.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Vector {
    /// Unique id.
    pub id: String,
    /// Requirement IDs (first = primary).
    pub requirements: Vec<String>,
    /// One line.
    pub title: String,
    /// Document type.
    pub doc_type: DocType,
    /// Validation mode.
    #[serde(default)]
    pub mode: Mode,
    /// Where the document comes from.
    #[serde(default)]
    pub source: Option<String>,
    /// The literal document.
    #[serde(default, deserialize_with = "present")]
    pub document: Option<Value>,
    /// Or a base …
    #[serde(default)]
    pub base: Option<String>,
    /// … and a patch.
    #[serde(default)]
    pub patch: Vec<PatchOp>,
    /// Expected verdict.
    pub expect: Expect,
}

/// RFC 6902 operation (add, remove, replace).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PatchOp {
    /// `add` | `remove` | `replace`.
    pub op: String,
    /// JSON Pointer.
    pub path: String,
    /// Value for add/replace.
    #[serde(default, deserialize_with = "present")]
    pub value: Option<Value>,
}

/// Expected result.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// Expected `valid`.
    pub valid: bool,
    /// Exactly these error paths.
    #[serde(default)]
    pub errors: Vec<IssueMatch>,
    /// Exactly these warning paths.
    #[serde(default)]
    pub warnings: Vec<IssueMatch>,
}

/// One expected issue.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IssueMatch {
    /// JSON Pointer.
    pub path: String,
    /// Exact message, when given.
    #[serde(default)]
    pub message: Option<String>,
    /// Exact `expected`, when given.
    #[serde(default, deserialize_with = "present")]
    pub expected: Option<Value>,
    /// Exact `actual`, when given.
    #[serde(default, deserialize_with = "present")]
    pub actual: Option<Value>,
}

/// A vector ready to run: its group, the vector and the built document.
#[derive(Debug, Clone)]
pub struct LoadedVector {
    /// File group.
    pub group: String,
    /// The vector.
    pub vector: Vector,
    /// The document (base + patch applied).
    pub document: Value,
}

/// Why the vectors cannot be loaded (a defect of the vector data, not of any validator).
#[derive(Debug, thiserror::Error)]
#[error("{file}: {message}")]
pub struct VectorError {
    /// File.
    pub file: String,
    /// What is wrong.
    pub message: String,
}

/// Loads every `*.json` of `dir` (sorted), checking each file against the vector schema
/// (`schema`, when given), the format version, unique ids, known requirement IDs (when
/// `known` is given) and that every document can be built.
pub fn load_dir(
    dir: &Path,
    schema: Option<&Value>,
    known: Option<&BTreeSet<String>>,
) -> Result<Vec<LoadedVector>, VectorError> {
    let err = |file: &str, message: String| VectorError {
        file: file.to_owned(),
        message,
    };
    let file_validator = match schema {
        Some(s) => Some(
            jsonschema::validator_for(s)
                .map_err(|e| err("ssp-validator-vector.schema.json", e.to_string()))?,
        ),
        None => None,
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| err(&dir.display().to_string(), e.to_string()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    let mut ids = BTreeSet::new();
    for path in files {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut file = read_file(&path, file_validator.as_ref()).map_err(|m| err(&name, m))?;
        for v in std::mem::take(&mut file.vectors) {
            if !ids.insert(v.id.clone()) {
                return Err(err(&name, format!("duplicate vector id {}", v.id)));
            }
            if let Some(known) = known
                && let Some(r) = v.requirements.iter().find(|r| !known.contains(*r))
            {
                return Err(err(&name, format!("{}: unknown requirement {r}", v.id)));
            }
            let document = document(&file, &v).map_err(|m| err(&name, m))?;
            out.push(LoadedVector {
                group: file.group.clone(),
                vector: v,
                document,
            });
        }
    }
    Ok(out)
}

/// One vector file, read, checked against the vector schema (when given), parsed, of
/// format version 1 and suite `ssp-validator`.
fn read_file(path: &Path, schema: Option<&jsonschema::Validator>) -> Result<VectorFile, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let raw: Value = serde_json::from_str(&text).map_err(|e| format!("not JSON: {e}"))?;
    if let Some(v) = schema {
        let problems: Vec<String> = v
            .iter_errors(&raw)
            .map(|e| format!("{}: {e}", e.instance_path().as_str()))
            .collect();
        if !problems.is_empty() {
            return Err(format!(
                "breaks the vector schema:\n{}",
                problems.join("\n")
            ));
        }
    }
    let file: VectorFile = serde_json::from_value(raw).map_err(|e| e.to_string())?;
    if file.format_version != 1 || file.suite != "ssp-validator" {
        return Err("format_version must be 1 and suite ssp-validator".into());
    }
    Ok(file)
}

/// The document vector `v` describes: given whole, or a base of `file` with a patch.
fn document(file: &VectorFile, v: &Vector) -> Result<Value, String> {
    match (&v.document, &v.base) {
        (Some(d), None) if v.patch.is_empty() => Ok(d.clone()),
        (None, Some(b)) => {
            let mut d = (file.bases.get(b).cloned())
                .ok_or_else(|| format!("{}: unknown base {b}", v.id))?;
            apply_patch(&mut d, &v.patch).map_err(|e| format!("{}: {e}", v.id))?;
            Ok(d)
        }
        _ => Err(format!("{}: exactly one of document / base(+patch)", v.id)),
    }
}

/// RFC 6902 subset: add, remove, replace.
pub fn apply_patch(doc: &mut Value, ops: &[PatchOp]) -> Result<(), String> {
    for op in ops {
        let Some(i) = op.path.rfind('/') else {
            return Err(format!("bad patch path {:?}", op.path));
        };
        let parent_ptr = &op.path[..i];
        let last = op.path[i + 1..].replace("~1", "/").replace("~0", "~");
        let parent = doc
            .pointer_mut(parent_ptr)
            .ok_or_else(|| format!("patch parent {parent_ptr:?} not found"))?;
        let value = || {
            op.value
                .clone()
                .ok_or_else(|| format!("{} needs a value", op.op))
        };
        match (op.op.as_str(), parent) {
            ("remove", Value::Object(m)) => {
                m.shift_remove(&last)
                    .ok_or_else(|| format!("remove: {} absent", op.path))?;
            }
            ("remove", Value::Array(a)) => {
                let i: usize = last
                    .parse()
                    .map_err(|_| format!("bad index in {}", op.path))?;
                if i >= a.len() {
                    return Err(format!("remove: {} out of range", op.path));
                }
                a.remove(i);
            }
            ("add" | "replace", Value::Object(m)) => {
                if op.op == "replace" && !m.contains_key(&last) {
                    return Err(format!("replace: {} absent", op.path));
                }
                m.insert(last, value()?);
            }
            ("add", Value::Array(a)) => {
                if last == "-" {
                    a.push(value()?);
                } else {
                    let i: usize = last
                        .parse()
                        .map_err(|_| format!("bad index in {}", op.path))?;
                    if i > a.len() {
                        return Err(format!("add: {} out of range", op.path));
                    }
                    a.insert(i, value()?);
                }
            }
            ("replace", Value::Array(a)) => {
                let i: usize = last
                    .parse()
                    .map_err(|_| format!("bad index in {}", op.path))?;
                let v = value()?;
                let slot = a
                    .get_mut(i)
                    .ok_or_else(|| format!("replace: {} out of range", op.path))?;
                *slot = v;
            }
            (o, _) => return Err(format!("unsupported patch op {o:?} at {}", op.path)),
        }
    }
    Ok(())
}

fn show(issues: &[ValidationIssue]) -> String {
    issues
        .iter()
        .map(|i| {
            format!(
                "    {} — {} (expected {}, actual {})",
                i.path, i.message, i.expected, i.actual
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn compare(kind: &str, want: &[IssueMatch], got: &[ValidationIssue]) -> Result<(), String> {
    let want_paths: BTreeSet<&str> = want.iter().map(|w| w.path.as_str()).collect();
    let got_paths: BTreeSet<&str> = got.iter().map(|g| g.path.as_str()).collect();
    if want_paths != got_paths {
        return Err(format!(
            "{kind} paths differ: expected {want_paths:?}, got {got_paths:?}\n  got {kind}s:\n{}",
            show(got)
        ));
    }
    for w in want {
        let ok = got.iter().any(|g| {
            g.path == w.path
                && w.message.as_ref().is_none_or(|m| &g.message == m)
                && w.expected.as_ref().is_none_or(|e| &g.expected == e)
                && w.actual.as_ref().is_none_or(|a| &g.actual == a)
        });
        if !ok {
            return Err(format!(
                "no {kind} at {} matches {w:?}\n  got {kind}s:\n{}",
                w.path,
                show(got)
            ));
        }
    }
    Ok(())
}

/// Runs one vector: the report must match the expectation exactly; the fast path must
/// agree; a valid strict document must round-trip through parse/serialize (SSP-SCH-5).
pub fn check(validator: &SspValidator, lv: &LoadedVector) -> Result<ValidationReport, String> {
    let v = &lv.vector;
    let doc = &lv.document;
    let report = validator.validate(doc, v.doc_type, v.mode);
    if report.valid != v.expect.valid {
        return Err(format!(
            "expected valid={}, got valid={}\n  errors:\n{}\n  warnings:\n{}",
            v.expect.valid,
            report.valid,
            show(&report.errors),
            show(&report.warnings)
        ));
    }
    compare("error", &v.expect.errors, &report.errors)?;
    compare("warning", &v.expect.warnings, &report.warnings)?;
    if validator.is_valid(doc, v.doc_type, v.mode) != report.valid {
        return Err("is_valid disagrees with validate".into());
    }
    if report.valid && v.mode == Mode::Strict {
        match v.doc_type {
            DocType::Descriptor => roundtrip::<SkillDescriptor>(doc)?,
            DocType::Index => roundtrip::<SkillIndex>(doc)?,
            DocType::Request => roundtrip::<InvocationRequest>(doc)?,
            DocType::Response => roundtrip::<InvocationResponse>(doc)?,
            DocType::Error => roundtrip::<ErrorResponse>(doc)?,
        }
    }
    Ok(report)
}

fn roundtrip<T: SspDocument + PartialEq + std::fmt::Debug>(doc: &Value) -> Result<(), String> {
    let d: T = parse(doc).map_err(|e| format!("parse: {e}"))?;
    let text = serialize(&d).map_err(|e| e.to_string())?;
    let back: T = parse_str(&text).map_err(|e| format!("parse(serialize): {e}"))?;
    if back != d {
        return Err("parse(serialize(d)) != d".into());
    }
    // Nothing is lost either: the typed value serializes back to the same JSON.
    let again: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    if &again != doc {
        return Err(format!("serialize(parse(doc)) != doc:\n{text}"));
    }
    Ok(())
}
