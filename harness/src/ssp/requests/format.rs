//! The request-vector format (`vectors/ssp/requests/*.json`, `vectors/README.md` "SSP
//! request vectors") and its loader: every object closed (`deny_unknown_fields`), ids
//! unique across the directory, every requirement ID in the SSP catalogue.
//!
//! A vector names what differs between providers by the profile's fixture roles (the
//! endpoint of the `auth_api_key` skill, its valid request, its working credential), never
//! by the URLs or secrets of the provider it was found on, so it runs against any provider.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::engine::requirements::Catalogue;
use crate::ssp::fuzz::cases::Template;
use crate::ssp::provider::profile::FixtureRole;
use crate::ssp::vector_files;
use crate::ssp::vectors::VectorError;

/// One file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestFile {
    /// Must be 1.
    pub format_version: u32,
    /// Must be `ssp-requests`.
    pub suite: String,
    /// Free text: where the vectors come from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The vectors.
    pub vectors: Vec<RequestVector>,
}

/// One hostile request and what its answer must satisfy.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestVector {
    /// Unique id (the check is `ssp-request/<id>`).
    pub id: String,
    /// Requirement IDs (first = primary).
    pub requirements: Vec<String>,
    /// One line.
    pub title: String,
    /// The request.
    pub request: Request,
    /// What the answer must satisfy.
    pub expect: Expect,
}

/// The request, in terms every provider resolves through its own profile.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// The fuzz operation it came from (`discover`, `descriptor`, `invoke`, `status`,
    /// `auth`, `method`, `headers`).
    pub op: String,
    /// HTTP method.
    pub method: String,
    /// Where it goes.
    pub to: Url,
    /// Extra headers, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<(String, String)>,
    /// The body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Body>,
    /// The credential.
    #[serde(default, skip_serializing_if = "CredSpec::is_none")]
    pub cred: CredSpec,
}

/// A URL on the target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Url {
    /// The discovery path (the profile's `well_known`) followed by this suffix (a query).
    WellKnown(String),
    /// `endpoint.url` of the skill the profile maps to this role.
    Endpoint(FixtureRole),
    /// That skill's `status_url` or `result_url` template with this execution id segment
    /// (already in URL form) in place of `{execution_id}`.
    Execution {
        /// The fixture role.
        role: FixtureRole,
        /// Which template.
        which: Template,
        /// The segment.
        id: String,
    },
    /// A path on the target's origin, as sent to the provider it was found on: there it was
    /// an SSP route, elsewhere maybe none, so its error shape is not judged.
    Path(String),
}

/// A body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Body {
    /// UTF-8 text, sent as is.
    Text(String),
    /// Bytes that are not UTF-8, in hex.
    Hex(String),
    /// The valid InvocationRequest of the skill the profile maps to this role.
    ValidRequestOf(FixtureRole),
}

/// A credential.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum CredSpec {
    /// None.
    #[default]
    None,
    /// One literal header (a foreign or malformed credential).
    Header(String, String),
    /// The credential that works for the skill the profile maps to `role`; for an API key,
    /// `header` moves it into another header than the descriptor's.
    Of {
        /// The fixture role.
        role: FixtureRole,
        /// Another header for an API key.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        header: Option<String>,
    },
}

impl CredSpec {
    /// Whether it is [`CredSpec::None`] (for serialization).
    pub fn is_none(&self) -> bool {
        *self == Self::None
    }
}

/// What the answer must satisfy: always the fuzz oracles' "well formed" (an answer in time,
/// no 5xx, no internals, SSP errors in the unified shape with their code's status);
/// `refused` adds "not a 2xx".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// Must be true (the oracles apply).
    pub well_formed: bool,
    /// The request is certainly invalid: any 2xx fails (SSP-INV-2, SSP-AUTH-2/4).
    #[serde(default)]
    pub refused: bool,
    /// The URL stays on an SSP route: an error answer must have the unified shape (false:
    /// the HTTP layer may answer first, e.g. an oversized head).
    #[serde(default = "yes")]
    pub ssp_route: bool,
    /// Hostile bytes in the URI: a 400 without JSON is the HTTP layer's.
    #[serde(default)]
    pub hostile_uri: bool,
    /// A server may close the connection without an answer.
    #[serde(default)]
    pub may_drop: bool,
}

fn yes() -> bool {
    true
}

/// A loaded vector and the file it came from.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The file.
    pub file: PathBuf,
    /// The vector.
    pub vector: RequestVector,
}

impl vector_files::VectorFile for RequestFile {
    type Item = RequestVector;
    fn header_problem(&self) -> Option<String> {
        (self.format_version != 1 || self.suite != "ssp-requests")
            .then(|| "needs \"format_version\": 1 and \"suite\": \"ssp-requests\"".into())
    }
    fn items(self) -> Vec<RequestVector> {
        self.vectors
    }
    fn id(v: &RequestVector) -> &str {
        &v.id
    }
    fn requirements(v: &RequestVector) -> &[String] {
        &v.requirements
    }
    fn problem(v: &RequestVector) -> Option<String> {
        check(v).err()
    }
}

/// Every vector of the `*.json` files of `dir` (sorted; none when `dir` does not exist),
/// each citing only IDs of `catalogue`.
pub fn load_dir(dir: &Path, catalogue: &Catalogue) -> Result<Vec<Loaded>, VectorError> {
    let loaded = vector_files::load::<RequestFile>(dir, catalogue)?;
    Ok((loaded.into_iter())
        .map(|(file, vector)| Loaded { file, vector })
        .collect())
}

/// What a loader refuses in one vector (the catalogue aside).
fn check(v: &RequestVector) -> Result<(), String> {
    if !v.expect.well_formed {
        return Err("expect.well_formed must be true".into());
    }
    if v.requirements.is_empty() {
        return Err("cites no requirement".into());
    }
    if reqwest::Method::from_bytes(v.request.method.as_bytes()).is_err() {
        return Err(format!(
            "method {:?} is not an HTTP method token",
            v.request.method
        ));
    }
    if crate::ssp::fuzz::cases::op_named(&v.request.op).is_none() {
        return Err(format!("unknown op {:?}", v.request.op));
    }
    if let Some(Body::Hex(h)) = &v.request.body
        && hex::decode(h).is_err()
    {
        return Err("body.hex is not hex".into());
    }
    if let Url::Path(p) = &v.request.to
        && !p.starts_with('/')
    {
        return Err(format!("path {p:?} must start with /"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests: a panic is the failure report")]
    use super::*;

    const VECTOR: &str = r#"{"id": "ID", "requirements": ["SSP-INV-2"], "title": "t",
        "request": {"op": "invoke", "method": "POST", "to": {"endpoint": "instant"},
                    "body": {"text": "[]"}},
        "expect": {"well_formed": true, "refused": true}}"#;

    fn load(files: &[(&str, String)]) -> Result<Vec<Loaded>, VectorError> {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        let catalogue = crate::engine::requirements::Catalogue::load(
            &crate::engine::protocol::default_vectors_dir().join("requirements/ssp.toml"),
        )
        .unwrap();
        load_dir(dir.path(), &catalogue)
    }

    fn file(vectors: &[String]) -> String {
        format!(
            r#"{{"format_version": 1, "suite": "ssp-requests", "vectors": [{}]}}"#,
            vectors.join(",")
        )
    }

    #[test]
    fn a_vector_loads_with_its_defaults() {
        let v = load(&[("a.json", file(&[VECTOR.replace("ID", "a")]))]).unwrap();
        let e = v[0].vector.expect;
        assert!(e.refused && e.ssp_route && !e.may_drop && !e.hostile_uri);
        assert_eq!(v[0].vector.request.cred, CredSpec::None);
        assert_eq!(v[0].vector.request.to, Url::Endpoint(FixtureRole::Instant));
    }

    #[test]
    fn the_loader_refuses_what_it_cannot_judge() {
        let bad = [
            // An unknown member (a typo would silently drop an expectation).
            VECTOR.replace("\"refused\"", "\"refuse\""),
            VECTOR.replace("SSP-INV-2", "SSP-NOPE-1"),
            VECTOR.replace("\"invoke\"", "\"frobnicate\""),
            // Not a method token: the harness would fail to send it, never the server.
            VECTOR.replace("\"POST\"", "\"PO ST\""),
            VECTOR.replace("\"well_formed\": true", "\"well_formed\": false"),
            VECTOR.replace("{\"text\": \"[]\"}", "{\"hex\": \"zz\"}"),
            VECTOR.replace("{\"endpoint\": \"instant\"}", "{\"path\": \"x\"}"),
        ];
        for b in bad {
            let b = b.replace("ID", "a");
            assert!(
                load(&[("a.json", file(std::slice::from_ref(&b)))]).is_err(),
                "{b}"
            );
        }
        let twice = [VECTOR.replace("ID", "a"), VECTOR.replace("ID", "a")];
        assert!(load(&[("a.json", file(&twice))]).is_err());
        let other_suite = file(&[VECTOR.replace("ID", "a")]).replace("ssp-requests", "parley");
        assert!(load(&[("a.json", other_suite)]).is_err());
        assert!(load(&[]).unwrap().is_empty());
    }
}
