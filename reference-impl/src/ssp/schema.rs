//! The SSP protocol schema (`vectors/schemas/ssp/1.0.0/schema.json`), compiled once.
//!
//! The file is embedded with `include_str!` so the server, the harness and the tests all
//! validate with the same single source (SSP-SCH-1). One validator per `$defs` type is
//! compiled at startup; validation reports **all** violations in the seed §8.3.1 shape
//! (SSP-SCH-5).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::domain::ssp::ValidationDetail;

/// The schema text, byte for byte as in the repository.
pub const SCHEMA_JSON: &str = include_str!("../../../vectors/schemas/ssp/1.0.0/schema.json");

/// The `$defs` types the provider validates documents against.
pub const TYPES: &[&str] = &[
    "SkillDescriptor",
    "SkillIndex",
    "SkillIndexEntry",
    "InvocationRequest",
    "InvocationResponse",
    "ErrorResponse",
    "ProtocolVersion",
    "ParameterDefinition",
    "AuthConfig",
    "InvocationEndpoint",
    "OutputDefinition",
];

/// Why the schema could not be loaded (a build defect: refuses startup).
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// The embedded file is not JSON.
    #[error("schema.json is not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// A `$defs` type could not be compiled.
    #[error("schema type {name}: {message}")]
    Compile {
        /// The `$defs` name.
        name: String,
        /// The compiler's message.
        message: String,
    },
}

/// Compiled validators, one per `$defs` type.
pub struct Schemas {
    root: Value,
    validators: BTreeMap<String, jsonschema::Validator>,
}

impl std::fmt::Debug for Schemas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Schemas")
            .field("types", &self.validators.keys())
            .finish()
    }
}

/// Compiles `schema` (any JSON Schema, Draft 2020-12) with format assertions on, so
/// `date-time` and `uri` are checked as the schema intends.
pub fn compile(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(schema)
        .map_err(|e| e.to_string())
}

impl Schemas {
    /// Parses the embedded schema and compiles a validator for every type in [`TYPES`]
    /// (and every other `$defs` entry).
    pub fn load() -> Result<Self, SchemaError> {
        let root: Value = serde_json::from_str(SCHEMA_JSON)?;
        let defs = root.get("$defs").cloned().unwrap_or_else(|| json!({}));
        let names: Vec<String> = defs
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        let mut validators = BTreeMap::new();
        for name in names
            .iter()
            .map(String::as_str)
            .chain(TYPES.iter().copied())
        {
            if validators.contains_key(name) {
                continue;
            }
            // A wrapper document with the same $defs: local `#/$defs/…` refs resolve in it.
            let wrapper = json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "$id": format!("https://conform.example/schemas/ssp/1.0.0/{name}.json"),
                "$defs": defs,
                "$ref": format!("#/$defs/{name}"),
            });
            let v = compile(&wrapper).map_err(|message| SchemaError::Compile {
                name: name.to_string(),
                message,
            })?;
            validators.insert(name.to_string(), v);
        }
        Ok(Self { root, validators })
    }

    /// The parsed schema document.
    pub fn document(&self) -> &Value {
        &self.root
    }

    /// Validates `doc` against `$defs/<type_name>`, returning every violation. An unknown
    /// type name is itself reported as a violation (never a silent pass).
    pub fn validate(&self, type_name: &str, doc: &Value) -> Vec<ValidationDetail> {
        let Some(v) = self.validators.get(type_name) else {
            return vec![ValidationDetail {
                path: String::new(),
                message: format!("schema has no type {type_name}"),
                expected: json!(TYPES),
                actual: json!(type_name),
            }];
        };
        v.iter_errors(doc).map(|e| detail_of(&e)).collect()
    }

    /// True when `doc` is a valid `type_name`.
    pub fn is_valid(&self, type_name: &str, doc: &Value) -> bool {
        self.validators
            .get(type_name)
            .is_some_and(|v| v.is_valid(doc))
    }
}

/// Converts one jsonschema error into a seed §8.3.1 detail (`path` = JSON Pointer).
pub fn detail_of(e: &jsonschema::ValidationError<'_>) -> ValidationDetail {
    use jsonschema::error::ValidationErrorKind as K;
    let actual_value = e.instance().clone().into_owned();
    let type_of = |v: &Value| json!(crate::domain::ssp::json_type_name(v));
    let (message, expected, actual) = match e.kind() {
        K::Enum { options } => (
            "must be equal to one of the allowed values".to_string(),
            (**options).clone(),
            actual_value,
        ),
        K::Constant { expected_value } => (
            "must be equal to the constant".to_string(),
            (**expected_value).clone(),
            actual_value,
        ),
        K::Required { property } => (
            format!("missing required member {property}"),
            property.clone(),
            json!("missing"),
        ),
        K::AdditionalProperties { unexpected } => (
            format!("unknown member(s): {}", unexpected.join(", ")),
            json!("no additional members"),
            json!(unexpected),
        ),
        K::Type { kind } => {
            let expected = match kind {
                jsonschema::error::TypeKind::Single(t) => json!(t.as_str()),
                jsonschema::error::TypeKind::Multiple(set) => {
                    json!(set.iter().map(|t| t.as_str()).collect::<Vec<_>>())
                }
            };
            (
                "wrong JSON type".to_string(),
                expected,
                type_of(&actual_value),
            )
        }
        K::Pattern { pattern } => (
            "must match the pattern".to_string(),
            json!({ "pattern": pattern }),
            actual_value,
        ),
        K::Format { format } => (
            format!("must be a valid {format}"),
            json!({ "format": format }),
            actual_value,
        ),
        K::Minimum { limit } => (
            "below the minimum".into(),
            json!({ "minimum": limit }),
            actual_value,
        ),
        K::Maximum { limit } => (
            "above the maximum".into(),
            json!({ "maximum": limit }),
            actual_value,
        ),
        K::ExclusiveMinimum { limit } => (
            "must be greater than the limit".into(),
            json!({ "exclusiveMinimum": limit }),
            actual_value,
        ),
        K::ExclusiveMaximum { limit } => (
            "must be less than the limit".into(),
            json!({ "exclusiveMaximum": limit }),
            actual_value,
        ),
        K::MinLength { limit } => (
            "too short".into(),
            json!({ "minLength": limit }),
            actual_value,
        ),
        K::MaxLength { limit } => (
            "too long".into(),
            json!({ "maxLength": limit }),
            actual_value,
        ),
        K::FalseSchema => (
            "member not allowed here".into(),
            json!("absent"),
            actual_value,
        ),
        _ => (
            e.to_string(),
            json!({ "keyword": e.kind().keyword() }),
            actual_value,
        ),
    };
    let mut path = e.instance_path().as_str().to_string();
    if let K::Required {
        property: Value::String(p),
    } = e.kind()
    {
        // Point at the missing member itself, like the seed's §8.3.1 paths do.
        path = format!("{path}/{}", crate::domain::ssp::escape_pointer(p));
    }
    ValidationDetail {
        path,
        message,
        expected,
        actual,
    }
}
