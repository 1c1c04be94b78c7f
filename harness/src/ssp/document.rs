//! `parse` and `serialize` (seed §9.3; SSP-SCH-5).
//!
//! `parse` validates first and only then deserializes, so a typed value always comes from
//! a document the validator accepted; `serialize` writes 2-space-indented JSON, and
//! `parse(serialize(d)) == d` holds for every valid `d` (property-tested).

use crate::ssp::types::{
    ErrorResponse, InvocationRequest, InvocationResponse, SkillDescriptor, SkillIndex,
};
use crate::ssp::validator::{DocType, Mode, SchemaError, SspValidator, ValidationReport};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A protocol document type with its schema entry.
pub trait SspDocument: Serialize + DeserializeOwned {
    /// Which `$defs` entry validates it.
    const DOC_TYPE: DocType;
}

impl SspDocument for SkillDescriptor {
    const DOC_TYPE: DocType = DocType::Descriptor;
}
impl SspDocument for SkillIndex {
    const DOC_TYPE: DocType = DocType::Index;
}
impl SspDocument for InvocationRequest {
    const DOC_TYPE: DocType = DocType::Request;
}
impl SspDocument for InvocationResponse {
    const DOC_TYPE: DocType = DocType::Response;
}
impl SspDocument for ErrorResponse {
    const DOC_TYPE: DocType = DocType::Error;
}

/// Why `parse` refused a document.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    /// Not JSON at all.
    #[error("not JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// JSON, but invalid against the protocol schema; the report lists every violation.
    #[error("invalid {doc_type} document ({} error(s))", report.errors.len())]
    Invalid {
        /// The document type it was parsed as.
        doc_type: DocType,
        /// All violations (turn into the unified error with `to_error_response`).
        report: ValidationReport,
    },
    /// The embedded schema is broken (a harness defect).
    #[error(transparent)]
    Schema(#[from] SchemaError),
}

/// Validates (strict) and parses a JSON value into a typed document.
pub fn parse<T: SspDocument>(doc: &Value) -> Result<T, ParseError> {
    parse_with(doc, Mode::Strict)
}

/// Validates in `mode` and parses; in lenient mode unknown members are dropped (they were
/// reported as warnings by `validate`).
pub fn parse_with<T: SspDocument>(doc: &Value, mode: Mode) -> Result<T, ParseError> {
    let report = SspValidator::global()?.validate(doc, T::DOC_TYPE, mode);
    if !report.valid {
        return Err(ParseError::Invalid {
            doc_type: T::DOC_TYPE,
            report,
        });
    }
    Ok(T::deserialize(doc)?)
}

/// Parses JSON text (strict).
pub fn parse_str<T: SspDocument>(text: &str) -> Result<T, ParseError> {
    let v: Value = serde_json::from_str(text)?;
    parse(&v)
}

/// Serializes with 2-space indentation (seed §9.3).
pub fn serialize<T: Serialize>(doc: &T) -> Result<String, serde_json::Error> {
    serde_json::to_string_pretty(doc)
}
