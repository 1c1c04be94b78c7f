//! Evidence a report carries so that it can be checked offline (issue 30): the digest of the
//! suite that judged the target, and an Ed25519 signature over the report's canonical form.
//!
//! - **Suite digest**: SHA-256 over every data file of the vectors directory (requirement
//!   catalogues, vectors, schemas, profiles: `*.json` and `*.toml`; symbolic links left
//!   out), each as its relative path with `/`, its length and its bytes with CRLF read as LF
//!   (a Windows checkout hashes as a Unix one), in path order; with the number of files. Two
//!   reports with one digest were judged with the same data files; the code that judged
//!   is named by the report's `tool.version`. `conform verify` compares the digest with the
//!   suite of the `conform` at hand.
//! - **Signature**: over the RFC 8785 (JCS) canonical form of the report as written, without
//!   its `signature` member — so a verifier needs only the file, the public key and a JCS
//!   implementation, in any language. Keys are PKCS#8 (private) and SPKI (public) PEM files,
//!   the form `openssl genpkey -algorithm ed25519` and `openssl pkey -pubout` write. The
//!   cryptography and the canonical form are `ed25519-dalek`'s and `serde_jcs`'s.

use std::path::Path;

use base64::Engine as _;
use ed25519_dalek::pkcs8::{DecodePrivateKey, DecodePublicKey};
use ed25519_dalek::{Signature, Signer as _, SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest as _, Sha256};

/// The member of a report's JSON that holds its signature (left out of what is signed).
pub const SIGNATURE_MEMBER: &str = "signature";

/// What judged the target: a digest of the suite's data files and their count.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteDigest {
    /// `sha256:<hex>` over every data file (see the module docs for the exact input).
    pub sha256: String,
    /// How many files it covers.
    pub files: usize,
}

/// An Ed25519 signature over the report's canonical form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportSignature {
    /// Always `ed25519`.
    pub algorithm: String,
    /// The signer's public key, base64 (32 bytes): which key to verify with, never a reason
    /// to trust it — `conform verify` takes the trusted key from the user.
    pub public_key: String,
    /// The signature, base64 (64 bytes).
    pub value: String,
}

/// Why evidence could not be made or does not hold.
#[derive(Debug, thiserror::Error)]
pub enum EvidenceError {
    /// A file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A key file is not an Ed25519 key in the expected PEM form.
    #[error("{path}: not an Ed25519 {what} PEM file ({reason})")]
    Key {
        /// The key file.
        path: String,
        /// `private key (PKCS#8)` or `public key (SPKI)`.
        what: &'static str,
        /// The decoder's reason.
        reason: String,
    },
    /// The report is not JSON, or has no canonical form.
    #[error("the report is not canonicalisable JSON: {0}")]
    Json(String),
    /// The report carries no signature.
    #[error("the report is not signed (no `signature` member)")]
    Unsigned,
    /// The signature member is not an Ed25519 signature this tool can read.
    #[error("the report's signature is malformed: {0}")]
    Malformed(String),
    /// Signed by another key than the one given.
    #[error("the report was signed by another key (its public key {signed_by}, given {given})")]
    OtherKey {
        /// The report's key, base64.
        signed_by: String,
        /// The given key, base64.
        given: String,
    },
    /// The signature does not match the content.
    #[error("the signature does not match the report's content: it was changed after signing")]
    Mismatch,
}

/// The digest of the data files under `dir` (see the module docs).
pub fn digest_dir(dir: &Path) -> Result<SuiteDigest, EvidenceError> {
    let mut files = Vec::new();
    collect(dir, dir, &mut files)?;
    files.sort();
    let mut hasher = Sha256::new();
    for rel in &files {
        let path = dir.join(rel);
        let raw = std::fs::read(&path).map_err(|source| EvidenceError::Io {
            path: path.display().to_string(),
            source,
        })?;
        let bytes = lf(&raw);
        // Length-prefixed, so no two different file sets hash the same input.
        hasher.update(format!("{}\n{}\n", rel, bytes.len()).as_bytes());
        hasher.update(&bytes);
    }
    Ok(SuiteDigest {
        sha256: format!("sha256:{}", hex::encode(hasher.finalize())),
        files: files.len(),
    })
}

/// `bytes` with every CRLF read as LF.
fn lf(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    for (i, b) in bytes.iter().enumerate() {
        if !(*b == b'\r' && bytes.get(i + 1) == Some(&b'\n')) {
            out.push(*b);
        }
    }
    out
}

/// The relative paths (with `/`) of the `*.json` and `*.toml` files under `dir`, symbolic
/// links left out (no loop, no editor's dangling lock file).
fn collect(root: &Path, dir: &Path, out: &mut Vec<String>) -> Result<(), EvidenceError> {
    let io = |source| EvidenceError::Io {
        path: dir.display().to_string(),
        source,
    };
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        let kind = entry.file_type().map_err(io)?;
        let path = entry.path();
        if kind.is_symlink() {
            continue;
        } else if kind.is_dir() {
            collect(root, &path, out)?;
        } else if matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("json" | "toml")
        ) && let Ok(rel) = path.strip_prefix(root)
        {
            let parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            out.push(parts.join("/"));
        }
    }
    Ok(())
}

/// `sha256:<hex>` of a JSON document's canonical form (a target's manifest, an index): the
/// same document hashes the same however the server spaced or ordered it.
pub fn json_sha256(v: &Value) -> String {
    // Serialising a `Value` cannot fail (no non-string keys, no non-finite numbers reach it
    // from JSON); an empty input would only give a digest nobody matches.
    let bytes = serde_jcs::to_vec(v).unwrap_or_default();
    format!("sha256:{}", hex::encode(Sha256::digest(&bytes)))
}

/// The bytes a signature covers: the canonical form of `report` without its signature.
fn signed_bytes(report: &Value) -> Result<Vec<u8>, EvidenceError> {
    let mut v = report.clone();
    if let Some(m) = v.as_object_mut() {
        m.remove(SIGNATURE_MEMBER);
    } else {
        return Err(EvidenceError::Json(
            "the report is not a JSON object".into(),
        ));
    }
    serde_jcs::to_vec(&v).map_err(|e| EvidenceError::Json(e.to_string()))
}

/// Reads an Ed25519 private key (PKCS#8 PEM).
pub fn signing_key(path: &Path) -> Result<SigningKey, EvidenceError> {
    pem_key(path, "private key (PKCS#8)", |pem| {
        SigningKey::from_pkcs8_pem(pem).map_err(|e| e.to_string())
    })
}

/// Reads an Ed25519 public key (SPKI PEM).
pub fn verifying_key(path: &Path) -> Result<VerifyingKey, EvidenceError> {
    pem_key(path, "public key (SPKI)", |pem| {
        VerifyingKey::from_public_key_pem(pem).map_err(|e| e.to_string())
    })
}

/// The key `decode` makes of the PEM file at `path` (`what` names it in the error).
fn pem_key<K>(
    path: &Path,
    what: &'static str,
    decode: impl FnOnce(&str) -> Result<K, String>,
) -> Result<K, EvidenceError> {
    decode(&read(path)?).map_err(|reason| EvidenceError::Key {
        path: path.display().to_string(),
        what,
        reason,
    })
}

fn read(path: &Path) -> Result<String, EvidenceError> {
    std::fs::read_to_string(path).map_err(|source| EvidenceError::Io {
        path: path.display().to_string(),
        source,
    })
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Signs the report JSON `report` (its `signature` member, if any, left out).
pub fn sign(report: &Value, key: &SigningKey) -> Result<ReportSignature, EvidenceError> {
    let sig = key.sign(&signed_bytes(report)?);
    Ok(ReportSignature {
        algorithm: "ed25519".into(),
        public_key: b64(key.verifying_key().as_bytes()),
        value: b64(&sig.to_bytes()),
    })
}

/// Checks the signature of the report JSON `report` against the trusted `key`.
pub fn verify(report: &Value, key: &VerifyingKey) -> Result<(), EvidenceError> {
    let member = report
        .get(SIGNATURE_MEMBER)
        .ok_or(EvidenceError::Unsigned)?;
    let sig: ReportSignature = serde_json::from_value(member.clone())
        .map_err(|e| EvidenceError::Malformed(e.to_string()))?;
    if sig.algorithm != "ed25519" {
        return Err(EvidenceError::Malformed(format!(
            "algorithm {:?}, not ed25519",
            sig.algorithm
        )));
    }
    let given = b64(key.as_bytes());
    if sig.public_key != given {
        return Err(EvidenceError::OtherKey {
            signed_by: sig.public_key,
            given,
        });
    }
    let raw = base64::engine::general_purpose::STANDARD
        .decode(&sig.value)
        .map_err(|e| EvidenceError::Malformed(e.to_string()))?;
    let bytes: [u8; 64] = raw
        .try_into()
        .map_err(|_| EvidenceError::Malformed("a signature is 64 bytes".into()))?;
    key.verify_strict(&signed_bytes(report)?, &Signature::from_bytes(&bytes))
        .map_err(|_| EvidenceError::Mismatch)
}

/// The report's suite digest against `local` (this `conform`'s suite): a line saying
/// what holds, or why not.
pub fn judge_digest(recorded: Option<&SuiteDigest>, local: &SuiteDigest) -> Result<String, String> {
    match recorded {
        None => Err("suite digest: the report names none (written before reports carried one, or by another tool)".into()),
        Some(d) if d == local => Ok(format!(
            "suite digest: {} over {} files, the suite of this conform",
            d.sha256, d.files
        )),
        Some(d) => Err(format!(
            "suite digest: the report was judged with other data files ({} over {} files) than this conform's ({} over {} files)",
            d.sha256, d.files, local.sha256, local.files
        )),
    }
}

/// Whether `r` records a whole run: not interrupted, not chosen partial, every suite
/// complete (a 0-of-0 run is no evidence of conformance).
pub fn judge_completeness(r: &super::Report) -> Result<String, String> {
    let c = &r.completeness;
    let mut why = Vec::new();
    if r.interrupted {
        why.push("the run was interrupted".to_string());
    }
    if !c.partial.is_empty() {
        why.push(format!("a partial run ({})", c.partial.join(", ")));
    }
    if c.suites.is_empty() {
        why.push("no completeness recorded per suite".into());
    }
    for s in c.suites.iter().filter(|s| !s.complete) {
        why.push(format!(
            "suite {} judged the target in {} of {} results, {} required rules untested",
            s.suite, s.executed, s.declared, s.untested_required
        ));
    }
    if why.is_empty() && c.complete {
        let n: usize = c.suites.iter().map(|s| s.executed).sum();
        Ok(format!(
            "completeness: every suite complete ({n} results judged the target)"
        ))
    } else {
        if why.is_empty() {
            why.push("the report says the run was incomplete".into());
        }
        Err(format!("completeness: {}", why.join("; ")))
    }
}

#[cfg(test)]
#[expect(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;
    use serde_json::json;

    fn key() -> SigningKey {
        SigningKey::from_bytes(&[7; 32])
    }

    #[test]
    fn a_signed_report_verifies_and_any_change_breaks_it() {
        let report = json!({"format_version": 1, "summary": {"pass": 3, "fail": 0}, "x": 1.5});
        let mut signed = report.clone();
        signed[SIGNATURE_MEMBER] = serde_json::to_value(sign(&report, &key()).unwrap()).unwrap();
        verify(&signed, &key().verifying_key()).unwrap();
        // Member order and spacing are not content: the canonical form is the same.
        let reordered: Value = serde_json::from_str(
            r#"{"x": 1.5, "summary": {"fail": 0, "pass": 3}, "format_version": 1}"#,
        )
        .unwrap();
        let mut moved = reordered;
        moved[SIGNATURE_MEMBER] = signed[SIGNATURE_MEMBER].clone();
        verify(&moved, &key().verifying_key()).unwrap();
        let mut edited = signed.clone();
        edited["summary"]["fail"] = json!(1);
        assert!(matches!(
            verify(&edited, &key().verifying_key()),
            Err(EvidenceError::Mismatch)
        ));
        let other = SigningKey::from_bytes(&[8; 32]).verifying_key();
        assert!(matches!(
            verify(&signed, &other),
            Err(EvidenceError::OtherKey { .. })
        ));
        assert!(matches!(
            verify(&report, &key().verifying_key()),
            Err(EvidenceError::Unsigned)
        ));
    }

    #[test]
    fn the_suite_digest_covers_every_data_file_and_only_those() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a")).unwrap();
        std::fs::write(dir.path().join("a/v.json"), "{}").unwrap();
        std::fs::write(dir.path().join("c.toml"), "x = 1").unwrap();
        std::fs::write(dir.path().join("README.md"), "prose").unwrap();
        let d = digest_dir(dir.path()).unwrap();
        assert_eq!(d.files, 2);
        std::fs::write(dir.path().join("README.md"), "other prose").unwrap();
        assert_eq!(
            digest_dir(dir.path()).unwrap(),
            d,
            "documentation is not data"
        );
        std::fs::write(dir.path().join("c.toml"), "x = 1").unwrap();
        #[cfg(unix)]
        {
            // A link loop and a dangling link are not data, and break nothing.
            std::os::unix::fs::symlink(dir.path(), dir.path().join("a/loop")).unwrap();
            std::os::unix::fs::symlink("gone.json", dir.path().join("a/.#lock.json")).unwrap();
            assert_eq!(digest_dir(dir.path()).unwrap(), d);
        }
        std::fs::write(dir.path().join("c.toml"), "x = 1\r\n").unwrap();
        let crlf = digest_dir(dir.path()).unwrap();
        std::fs::write(dir.path().join("c.toml"), "x = 1\n").unwrap();
        assert_eq!(digest_dir(dir.path()).unwrap(), crlf, "CRLF hashes as LF");
        std::fs::write(dir.path().join("a/v.json"), "{ }").unwrap();
        assert_ne!(digest_dir(dir.path()).unwrap().sha256, crlf.sha256);
    }
}
