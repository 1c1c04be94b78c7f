//! The SSP Schema Validator (seed §9.3; SSP-SCH-1, SSP-SCH-4, SSP-SCH-5, SSP-SCH-6).
//!
//! One schema file (`vectors/schemas/ssp/1.0.0/schema.json`, embedded at build time) is the
//! single source of structure. It is compiled **once** per document type and mode; the
//! validator then adds what JSON Schema cannot state (unique index ids, unique parameter
//! names, timestamp order) and maps every violation onto the seed §8.3.1 shape
//! `{path, message, expected, actual}` — all of them, not just the first.
//!
//! Modes (SSP-SCH-1): **strict** applies the schema as written (closed objects, and
//! `restricted`/`private` with `auth.type none` is an error). **Lenient** compiles a copy of
//! the schema with the closed-object constraints and the access/auth coherence rule removed,
//! and reports whatever only the strict schema rejects as *warnings* — so a newer MINOR
//! release's added members do not make a document invalid.

use crate::ssp::types::{ErrorCode, ErrorObject, ErrorResponse};
use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{ValidationError, Validator};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::fmt;
use std::sync::LazyLock;

/// The embedded protocol schema text (the single source; SSP-SCH-1).
pub const SCHEMA_TEXT: &str = include_str!("../../../vectors/schemas/ssp/1.0.0/schema.json");

/// Which protocol document a value claims to be (selects the schema `$defs` entry).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DocType {
    /// `SkillDescriptor` (the schema root).
    Descriptor,
    /// `SkillIndex` (well-known document).
    Index,
    /// `InvocationRequest`.
    Request,
    /// `InvocationResponse`.
    Response,
    /// `ErrorResponse` (`{"error": {...}}`).
    Error,
}

impl DocType {
    /// Every document type.
    pub const ALL: [Self; 5] = [
        Self::Descriptor,
        Self::Index,
        Self::Request,
        Self::Response,
        Self::Error,
    ];

    /// The `$defs` name of the type in the schema.
    pub fn def_name(self) -> &'static str {
        match self {
            Self::Descriptor => "SkillDescriptor",
            Self::Index => "SkillIndex",
            Self::Request => "InvocationRequest",
            Self::Response => "InvocationResponse",
            Self::Error => "ErrorResponse",
        }
    }

    /// CLI / vector spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Descriptor => "descriptor",
            Self::Index => "index",
            Self::Request => "request",
            Self::Response => "response",
            Self::Error => "error",
        }
    }

    /// Guesses the type of a document from its members, for `conform validate` without
    /// `--type` (an implementer usually has one file and knows what it is, but should not
    /// have to say so for the common cases).
    pub fn detect(doc: &Value) -> Self {
        let Some(obj) = doc.as_object() else {
            return Self::Descriptor;
        };
        if obj.contains_key("skills") {
            Self::Index
        } else if obj.contains_key("execution_id") {
            Self::Response
        } else if obj.contains_key("caller") {
            Self::Request
        } else if obj.contains_key("error") && obj.len() == 1 {
            Self::Error
        } else {
            Self::Descriptor
        }
    }
}

impl fmt::Display for DocType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for DocType {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| {
                format!("unknown document type {s:?} (descriptor|index|request|response|error)")
            })
    }
}

/// Strict (closed objects, the default for VAL checks) or lenient (unknown members and
/// access/auth incoherence are warnings) — SSP-SCH-1, SSP-SCH-4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Everything the schema says is an error.
    #[default]
    Strict,
    /// Unknown members and restricted/private-without-auth become warnings.
    Lenient,
}

/// One violation in the seed §8.3.1 shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValidationIssue {
    /// JSON Pointer to the offending member (for a missing member: where it should be).
    pub path: String,
    /// What is wrong.
    pub message: String,
    /// The expected value or type.
    pub expected: Value,
    /// The value or type found.
    pub actual: Value,
}

/// Result of `validate` (seed §9.3: `valid` and `errors`), plus lenient-mode warnings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValidationReport {
    /// No errors (warnings do not count).
    pub valid: bool,
    /// Every violation.
    pub errors: Vec<ValidationIssue>,
    /// Lenient mode: what strict mode would have rejected.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<ValidationIssue>,
}

impl ValidationReport {
    /// The unified `VALIDATION_ERROR` object for this report (SSP-SCH-6: local, no HTTP
    /// status), `details` being the seed §8.3.1 array.
    pub fn to_error_response(&self, doc_type: DocType) -> ErrorResponse {
        let details = self
            .errors
            .iter()
            .map(|e| serde_json::to_value(e).unwrap_or(Value::Null))
            .collect();
        ErrorResponse {
            error: ErrorObject {
                code: ErrorCode::new(ErrorCode::VALIDATION_ERROR),
                message: format!("Invalid {} document", doc_type.def_name()),
                details: Some(Value::Array(details)),
                retry: None,
            },
        }
    }
}

/// The embedded schema could not be compiled (a harness defect, never a target failure).
#[derive(Debug, thiserror::Error)]
#[error("SSP schema cannot be compiled: {0}")]
pub struct SchemaError(pub String);

struct Compiled {
    strict: Validator,
    lenient: Validator,
}

/// A compiled SSP validator: every document type in both modes.
pub struct SspValidator {
    compiled: HashMap<DocType, Compiled>,
    /// Pattern text → readable message, for the schema's named string formats (a raw
    /// SemVer regex helps nobody reading `conform validate` output).
    patterns: HashMap<String, &'static str>,
}

/// Readable messages for the `$defs` string types that are defined by a `pattern`.
const PATTERN_MESSAGES: [(&str, &str); 4] = [
    (
        "ProtocolSemVer",
        "must be MAJOR.MINOR.PATCH (no pre-release, no build, no leading zeros)",
    ),
    (
        "SemVer",
        "must be a SemVer 2.0.0 version (MAJOR.MINOR.PATCH[-pre-release][+build])",
    ),
    ("AbsoluteUri", "must be an absolute URI"),
    (
        "ExecutionUriTemplate",
        "must be an absolute URI template containing {execution_id} exactly once",
    ),
];

static GLOBAL: LazyLock<Result<SspValidator, SchemaError>> = LazyLock::new(|| {
    let schema: Value = serde_json::from_str(SCHEMA_TEXT)
        .map_err(|e| SchemaError(format!("schema.json is not JSON: {e}")))?;
    SspValidator::from_schema(&schema)
});

/// Validates `doc` as `doc_type` with the embedded schema (compiled once per process).
pub fn validate(
    doc: &Value,
    doc_type: DocType,
    mode: Mode,
) -> Result<ValidationReport, SchemaError> {
    Ok(SspValidator::global()?.validate(doc, doc_type, mode))
}

impl SspValidator {
    /// The process-wide validator over the embedded schema.
    pub fn global() -> Result<&'static Self, SchemaError> {
        GLOBAL.as_ref().map_err(|e| SchemaError(e.0.clone()))
    }

    /// Compiles a validator from a schema document shaped like the protocol schema (a
    /// `$defs` entry per [`DocType::def_name`]), so a library user can check documents
    /// against another revision of the schema than the embedded one.
    pub fn from_schema(schema: &Value) -> Result<Self, SchemaError> {
        let mut compiled = HashMap::new();
        let mut patterns = HashMap::new();
        for (def, message) in PATTERN_MESSAGES {
            if let Some(p) = schema
                .pointer(&format!("/$defs/{def}/pattern"))
                .and_then(Value::as_str)
            {
                patterns.insert(p.to_owned(), message);
            }
        }
        for t in DocType::ALL {
            let strict_schema = retarget(schema, t)?;
            let lenient_schema = loosen(&strict_schema);
            compiled.insert(
                t,
                Compiled {
                    strict: build(&strict_schema, t)?,
                    lenient: build(&lenient_schema, t)?,
                },
            );
        }
        Ok(Self { compiled, patterns })
    }

    /// Validates `doc` as `doc_type`; reports every violation (SSP-SCH-5).
    pub fn validate(&self, doc: &Value, doc_type: DocType, mode: Mode) -> ValidationReport {
        let Some(c) = self.compiled.get(&doc_type) else {
            // Unreachable: `from_schema` compiles every DocType; kept total without a panic.
            return ValidationReport {
                valid: false,
                errors: vec![issue(
                    "",
                    "no compiled schema for this document type",
                    json!(doc_type.def_name()),
                    Value::Null,
                )],
                warnings: Vec::new(),
            };
        };
        let (mut errors, warnings) = match mode {
            Mode::Strict => (self.schema_issues(&c.strict, doc), Vec::new()),
            Mode::Lenient => {
                let errors = self.schema_issues(&c.lenient, doc);
                let strict = self.schema_issues(&c.strict, doc);
                let warnings = strict.into_iter().filter(|s| !errors.contains(s)).collect();
                (errors, warnings)
            }
        };
        cross_field(doc, doc_type, &mut errors);
        ValidationReport {
            valid: errors.is_empty(),
            errors,
            warnings,
        }
    }

    /// Whether `doc` is valid (no report built: the fast path for throughput).
    pub fn is_valid(&self, doc: &Value, doc_type: DocType, mode: Mode) -> bool {
        let Some(c) = self.compiled.get(&doc_type) else {
            return false;
        };
        let v = match mode {
            Mode::Strict => &c.strict,
            Mode::Lenient => &c.lenient,
        };
        if !v.is_valid(doc) {
            return false;
        }
        let mut errors = Vec::new();
        cross_field(doc, doc_type, &mut errors);
        errors.is_empty()
    }
}

fn build(schema: &Value, t: DocType) -> Result<Validator, SchemaError> {
    jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .map_err(|e| SchemaError(format!("{}: {e}", t.def_name())))
}

/// The schema document with its root pointed at `$defs/<type>` (keeps `$id` and `$defs`
/// so every internal `$ref` still resolves).
fn retarget(schema: &Value, t: DocType) -> Result<Value, SchemaError> {
    let obj = schema
        .as_object()
        .ok_or_else(|| SchemaError("schema root is not an object".into()))?;
    let defs = obj
        .get("$defs")
        .and_then(Value::as_object)
        .ok_or_else(|| SchemaError("schema has no $defs".into()))?;
    if !defs.contains_key(t.def_name()) {
        return Err(SchemaError(format!("schema has no $defs/{}", t.def_name())));
    }
    let mut out = Map::new();
    for key in ["$schema", "$id"] {
        if let Some(v) = obj.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    out.insert(
        "$ref".into(),
        Value::String(format!("#/$defs/{}", t.def_name())),
    );
    out.insert("$defs".into(), Value::Object(defs.clone()));
    Ok(Value::Object(out))
}

/// The lenient pattern of a status/result URI template: an absolute URI whose only template
/// expression is `{execution_id}`, any number of times (none included).
const LENIENT_TEMPLATE: &str = r"^[A-Za-z][A-Za-z0-9+.-]*:[^{}\s]*(\{execution_id\}[^{}\s]*)*$";

/// The lenient copy: no `additionalProperties: false` anywhere, no access/auth coherence
/// conditional on `SkillDescriptor` (SSP-SCH-4: a warning in lenient mode), and status/result
/// templates with any number of `{execution_id}` (SSP-SCH-3: a missing one is a warning).
fn loosen(schema: &Value) -> Value {
    fn walk(v: &mut Value) {
        match v {
            Value::Object(m) => {
                if m.get("additionalProperties") == Some(&Value::Bool(false)) {
                    m.remove("additionalProperties");
                }
                if m.get("unevaluatedProperties") == Some(&Value::Bool(false)) {
                    m.remove("unevaluatedProperties");
                }
                m.values_mut().for_each(walk);
            }
            Value::Array(a) => a.iter_mut().for_each(walk),
            _ => {}
        }
    }
    let mut out = schema.clone();
    // SSP-SCH-3: a status/result template without `{execution_id}` is a warning in
    // provider checks (the client polls `<template>/<execution_id>`), and one that repeats
    // it is expanded at every occurrence; only another template expression stays an error.
    if let Some(t) = out
        .pointer_mut("/$defs/ExecutionUriTemplate")
        .and_then(Value::as_object_mut)
    {
        t.insert("pattern".into(), Value::String(LENIENT_TEMPLATE.into()));
    }
    if let Some(d) = out
        .pointer_mut("/$defs/SkillDescriptor")
        .and_then(Value::as_object_mut)
    {
        // The only conditional at the descriptor level is the access/auth coherence rule.
        d.remove("if");
        d.remove("then");
    }
    walk(&mut out);
    out
}

fn issue(
    path: &str,
    message: impl Into<String>,
    expected: Value,
    actual: Value,
) -> ValidationIssue {
    ValidationIssue {
        path: path.to_owned(),
        message: message.into(),
        expected,
        actual,
    }
}

/// JSON type name of a value, as JSON Schema spells it.
pub fn json_type(v: &Value) -> &'static str {
    crate::json::type_name(v)
}

impl SspValidator {
    fn schema_issues(&self, v: &Validator, doc: &Value) -> Vec<ValidationIssue> {
        if v.is_valid(doc) {
            return Vec::new();
        }
        let mut out: Vec<ValidationIssue> = Vec::new();
        for e in v.iter_errors(doc) {
            for i in map_error(&e, &self.patterns) {
                if !out.contains(&i) {
                    out.push(i);
                }
            }
        }
        out
    }
}

/// Maps one jsonschema error onto seed §8.3.1 issues (one per unexpected member for
/// `additionalProperties`, the missing member's own pointer for `required`).
fn map_error(
    e: &ValidationError<'_>,
    patterns: &HashMap<String, &'static str>,
) -> Vec<ValidationIssue> {
    let path = e.instance_path().as_str();
    let inst: &Value = e.instance();
    let one = |message: String, expected: Value, actual: Value| {
        vec![issue(path, message, expected, actual)]
    };
    match e.kind() {
        ValidationErrorKind::Enum { options } => one(
            "must be equal to one of the allowed values".into(),
            (**options).clone(),
            inst.clone(),
        ),
        ValidationErrorKind::Constant { expected_value } => one(
            "must be equal to constant".into(),
            (**expected_value).clone(),
            inst.clone(),
        ),
        ValidationErrorKind::Type { kind } => {
            let expected = match kind {
                TypeKind::Single(t) => json!(t.as_str()),
                TypeKind::Multiple(set) => {
                    Value::Array(set.iter().map(|t| json!(t.as_str())).collect())
                }
            };
            let name = expected
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| expected.to_string());
            let actual = if inst.is_number() {
                "number"
            } else {
                json_type(inst)
            };
            one(format!("must be {name}"), expected, json!(actual))
        }
        ValidationErrorKind::Required { property } => {
            let name = property
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| property.to_string());
            vec![issue(
                &format!("{path}/{}", crate::json::pointer_token(&name)),
                format!("must have required property '{name}'"),
                json!("present"),
                json!("absent"),
            )]
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => unexpected
            .iter()
            .map(|name| {
                issue(
                    &format!("{path}/{}", crate::json::pointer_token(name)),
                    "must NOT have additional properties",
                    json!("absent"),
                    inst.get(name).cloned().unwrap_or(Value::Null),
                )
            })
            .collect(),
        ValidationErrorKind::FalseSchema => {
            one("must NOT be present".into(), json!("absent"), inst.clone())
        }
        ValidationErrorKind::Not { schema } => not_issue(path, inst, schema),
        ValidationErrorKind::Pattern { pattern } => one(
            match patterns.get(pattern) {
                Some(m) => (*m).to_owned(),
                None => format!("must match pattern \"{pattern}\""),
            },
            json!({ "pattern": pattern }),
            inst.clone(),
        ),
        ValidationErrorKind::Format { format } => one(
            format!("must match format \"{format}\""),
            json!({ "format": format }),
            inst.clone(),
        ),
        ValidationErrorKind::MinLength { limit } => one(
            format!("must NOT have fewer than {limit} characters"),
            json!({ "minLength": limit }),
            inst.clone(),
        ),
        ValidationErrorKind::MaxLength { limit } => one(
            format!("must NOT have more than {limit} characters"),
            json!({ "maxLength": limit }),
            inst.clone(),
        ),
        ValidationErrorKind::MinItems { limit } => one(
            format!("must NOT have fewer than {limit} items"),
            json!({ "minItems": limit }),
            json!(inst.as_array().map_or(0, Vec::len)),
        ),
        ValidationErrorKind::Minimum { limit } => one(
            format!("must be >= {limit}"),
            json!({ "minimum": limit }),
            inst.clone(),
        ),
        ValidationErrorKind::ExclusiveMinimum { limit } => one(
            format!("must be > {limit}"),
            json!({ "exclusiveMinimum": limit }),
            inst.clone(),
        ),
        ValidationErrorKind::Maximum { limit } => one(
            format!("must be <= {limit}"),
            json!({ "maximum": limit }),
            inst.clone(),
        ),
        ValidationErrorKind::UniqueItems => one(
            "must NOT have duplicate items".into(),
            json!({ "uniqueItems": true }),
            inst.clone(),
        ),
        other => one(
            e.to_string(),
            json!({ "keyword": other.keyword() }),
            inst.clone(),
        ),
    }
}

/// `not` violations in this schema are "must not be present" (`not: {required: [x]}`)
/// and "must not be this value" (`not: {const: v}`, the access/auth rule).
fn not_issue(path: &str, inst: &Value, schema: &Value) -> Vec<ValidationIssue> {
    if let Some(req) = schema.get("required").and_then(Value::as_array) {
        let status = inst.get("status").and_then(Value::as_str);
        return req
            .iter()
            .filter_map(Value::as_str)
            .filter(|name| inst.get(*name).is_some())
            .map(|name| {
                let message = match status {
                    Some(s) => format!("must NOT be present when status is \"{s}\""),
                    None => "must NOT be present".to_owned(),
                };
                issue(
                    &format!("{path}/{}", crate::json::pointer_token(name)),
                    message,
                    json!("absent"),
                    inst.get(name).cloned().unwrap_or(Value::Null),
                )
            })
            .collect();
    }
    if let Some(c) = schema.get("const") {
        let message = if path == "/auth/type" {
            // SSP-SCH-4: the only `not const` in the schema.
            format!("must NOT be {c} when access is restricted or private")
        } else {
            format!("must NOT be equal to {c}")
        };
        return vec![issue(path, message, json!({ "not": c }), inst.clone())];
    }
    vec![issue(
        path,
        "must NOT match the forbidden schema",
        json!({ "not": schema }),
        inst.clone(),
    )]
}

/// Rules JSON Schema cannot state. Each pushes an issue unless one already sits at the
/// same path (so a schema revision that learns the rule does not double-report).
fn cross_field(doc: &Value, t: DocType, errors: &mut Vec<ValidationIssue>) {
    let push = |i: ValidationIssue, errors: &mut Vec<ValidationIssue>| {
        if !errors.iter().any(|e| e.path == i.path) {
            errors.push(i);
        }
    };
    match t {
        DocType::Index => {
            // SSP-DISC-1 / seed §4.3.4: ids unique within one Skill Index.
            for i in unique_violations(doc, "/skills", "id", "Skill Index skill id") {
                push(i, errors);
            }
        }
        DocType::Descriptor => {
            // SSP-SCH-4: inputs[].name unique (and custom auth parameter names).
            for i in unique_violations(doc, "/inputs", "name", "input name") {
                push(i, errors);
            }
            for i in unique_violations(
                doc,
                "/auth/custom/parameters",
                "name",
                "custom auth parameter name",
            ) {
                push(i, errors);
            }
        }
        DocType::Response => {
            // SSP-INV-3: created_at <= updated_at (and <= completed_at).
            let created = doc
                .pointer("/timestamps/created_at")
                .and_then(Value::as_str);
            for later in ["updated_at", "completed_at"] {
                let p = format!("/timestamps/{later}");
                let value = doc.pointer(&p).and_then(Value::as_str);
                if let (Some(c), Some(v)) = (created, value)
                    && let (Ok(cd), Ok(vd)) = (
                        chrono::DateTime::parse_from_rfc3339(c),
                        chrono::DateTime::parse_from_rfc3339(v),
                    )
                    && vd < cd
                {
                    push(
                        issue(
                            &p,
                            "must not be earlier than created_at",
                            json!({ "minimum": c }),
                            json!(v),
                        ),
                        errors,
                    );
                }
            }
        }
        DocType::Request | DocType::Error => {}
    }
}

fn unique_violations(doc: &Value, array_ptr: &str, key: &str, what: &str) -> Vec<ValidationIssue> {
    let Some(items) = doc.pointer(array_ptr).and_then(Value::as_array) else {
        return Vec::new();
    };
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let mut out = Vec::new();
    for (j, item) in items.iter().enumerate() {
        let Some(v) = item.get(key).and_then(Value::as_str) else {
            continue;
        };
        if let Some(first) = seen.get(v) {
            out.push(issue(
                &format!("{array_ptr}/{j}/{key}"),
                format!("{what} must be unique (duplicate of {array_ptr}/{first}/{key})"),
                json!("unique"),
                json!(v),
            ));
        } else {
            seen.insert(v, j);
        }
    }
    out
}

/// Which spelling a VALIDATION_ERROR's details used (ssp.md §1: the seed's
/// `{path, …}` wins, upstream's `{field, …}` is accepted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DetailsShape {
    /// Seed §8.3.1 `{path, message, expected, actual}`.
    Seed,
    /// Upstream `{field, expected, actual, message}`.
    Upstream,
}

/// A VALIDATION_ERROR whose details are not a list of violations in either shape.
#[derive(Debug, thiserror::Error)]
#[error("details are not a list of validation violations: {0}")]
pub struct DetailsError(pub String);

#[derive(Deserialize)]
struct RawDetail {
    path: Option<String>,
    field: Option<String>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    expected: Value,
    #[serde(default)]
    actual: Value,
}

/// Reads the violations out of a `VALIDATION_ERROR` object, accepting the seed's array of
/// `{path, message, expected, actual}` and upstream's `{field, expected, actual, message}`
/// (a dotted `field` such as `endpoint.method` becomes the pointer `/endpoint/method`).
/// The details may be the array itself or an object holding it under `errors`,
/// `violations` or `details`.
pub fn parse_validation_details(
    err: &ErrorObject,
) -> Result<(Vec<ValidationIssue>, DetailsShape), DetailsError> {
    let details = err
        .details
        .as_ref()
        .ok_or_else(|| DetailsError("no details".into()))?;
    let arr = match details {
        Value::Array(a) => a,
        Value::Object(o) => ["errors", "violations", "details"]
            .iter()
            .find_map(|k| o.get(*k).and_then(Value::as_array))
            .ok_or_else(|| {
                DetailsError("object without an errors/violations/details array".into())
            })?,
        other => return Err(DetailsError(format!("a {}", json_type(other)))),
    };
    let mut shape = DetailsShape::Seed;
    let mut out = Vec::with_capacity(arr.len());
    for (n, item) in arr.iter().enumerate() {
        let raw: RawDetail = serde_json::from_value(item.clone())
            .map_err(|e| DetailsError(format!("entry {n}: {e}")))?;
        let path = match (raw.path, raw.field) {
            (Some(p), _) => p,
            (None, Some(f)) => {
                shape = DetailsShape::Upstream;
                field_to_pointer(&f)
            }
            (None, None) => {
                return Err(DetailsError(format!(
                    "entry {n} has neither path nor field"
                )));
            }
        };
        out.push(ValidationIssue {
            path,
            message: raw.message.unwrap_or_default(),
            expected: raw.expected,
            actual: raw.actual,
        });
    }
    Ok((out, shape))
}

/// `endpoint.method` / `inputs[0].name` / `/already/a/pointer` → JSON Pointer.
pub fn field_to_pointer(field: &str) -> String {
    if field.is_empty() || field.starts_with('/') {
        return field.to_owned();
    }
    let mut out = String::new();
    for part in field.split('.') {
        let mut rest = part;
        if let Some(b) = rest.find('[') {
            out.push('/');
            out.push_str(&crate::json::pointer_token(&rest[..b]));
            rest = &rest[b..];
            while let Some(stripped) = rest.strip_prefix('[') {
                let Some(end) = stripped.find(']') else { break };
                out.push('/');
                out.push_str(&crate::json::pointer_token(&stripped[..end]));
                rest = &stripped[end + 1..];
            }
        } else {
            out.push('/');
            out.push_str(&crate::json::pointer_token(rest));
        }
    }
    out
}
