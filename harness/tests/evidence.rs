//! Offline-verifiable evidence (issue 30 item 3), end to end through the binary: `conform run
//! --sign KEY` writes a signed report.json carrying the suite digest and the target's
//! fingerprint; `conform verify REPORT --key PUB` accepts it, and refuses — exit 1, with the
//! reason — a report edited by one byte, one signed by another key, one with a member given
//! twice, an unsigned one, one judged by another suite, and one whose run was partial.
#![expect(clippy::unwrap_used)] // tests: a panic is the failure report

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ed25519_dalek::SigningKey;
use ed25519_dalek::pkcs8::{
    EncodePrivateKey as _, EncodePublicKey as _, spki::der::pem::LineEnding,
};

fn conform() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_conform"));
    c.current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."));
    c
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\n{}{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A key pair written as the PEM files `openssl genpkey` / `openssl pkey -pubout` make.
fn keys(dir: &Path, name: &str, seed: u8) -> (PathBuf, PathBuf) {
    let key = SigningKey::from_bytes(&[seed; 32]);
    let private = dir.join(format!("{name}.pem"));
    let public = dir.join(format!("{name}.pub.pem"));
    std::fs::write(
        &private,
        key.to_pkcs8_pem(LineEnding::LF).unwrap().as_bytes(),
    )
    .unwrap();
    std::fs::write(
        &public,
        key.verifying_key()
            .to_public_key_pem(LineEnding::LF)
            .unwrap(),
    )
    .unwrap();
    (private, public)
}

/// `conform run --spawn-reference --suite ssp --sign KEY` plus `extra`: the report's path.
fn signed_run(dir: &Path, name: &str, key: &Path, extra: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let o = conform()
        .args([
            "run",
            "--spawn-reference",
            "--suite",
            "ssp",
            "--quiet",
            "--format",
            "json,md",
        ])
        .arg("--sign")
        .arg(key)
        .arg("--out")
        .arg(&out)
        .args(extra)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    out.join("report.json")
}

fn verify(report: &Path, key: &Path, vectors: Option<&Path>) -> Output {
    let mut c = conform();
    if let Some(v) = vectors {
        c.arg("--vectors").arg(v);
    }
    c.arg("verify")
        .arg(report)
        .arg("--key")
        .arg(key)
        .output()
        .unwrap()
}

fn refused(o: &Output, reason: &str) {
    let t = text(o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("NOT VERIFIED"), "{t}");
    assert!(t.contains(reason), "expected {reason:?} in:\n{t}");
}

#[test]
fn a_signed_report_verifies_and_every_kind_of_mismatch_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (key, public) = keys(dir.path(), "signer", 7);
    let (_, stranger) = keys(dir.path(), "stranger", 8);
    let report = signed_run(dir.path(), "full", &key, &[]);

    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let digest = &written["suite_digest"];
    assert!(
        digest["sha256"].as_str().unwrap().starts_with("sha256:"),
        "{digest}"
    );
    assert!(digest["files"].as_u64().unwrap() > 10, "{digest}");
    let prints = written["target"]["fingerprint"].as_object().unwrap();
    assert!(prints.contains_key("ssp/index"), "{prints:?}");
    assert!(
        prints.keys().any(|k| k.starts_with("ssp/descriptor/")),
        "{prints:?}"
    );

    let ok = verify(&report, &public, None);
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok));
    assert!(text(&ok).contains("verified:"), "{}", text(&ok));

    // One byte: a digit of the wall time.
    let raw = std::fs::read_to_string(&report).unwrap();
    let at = raw.find("\"wall_time_ms\": ").unwrap() + "\"wall_time_ms\": ".len();
    let mut bytes = raw.into_bytes();
    bytes[at] = if bytes[at] == b'9' {
        b'8'
    } else {
        bytes[at] + 1
    };
    let edited = dir.path().join("edited.json");
    std::fs::write(&edited, bytes).unwrap();
    refused(&verify(&edited, &public, None), "changed after signing");

    refused(&verify(&report, &stranger, None), "signed by another key");

    // One byte that breaks the JSON, and one that breaks the format (a member renamed):
    // refused as mismatches (exit 1), not as unreadable input.
    let raw = std::fs::read_to_string(&report).unwrap();
    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, raw.replacen('{', "[", 1)).unwrap();
    refused(
        &verify(&broken, &public, None),
        "form: the file is not JSON",
    );
    let renamed = dir.path().join("renamed.json");
    std::fs::write(&renamed, raw.replacen("\"pass\"", "\"Pass\"", 1)).unwrap();
    refused(
        &verify(&renamed, &public, None),
        "form: the file is not a conform report of this format",
    );

    // A member given twice: the last one parses as the signed value, the first is what a
    // reader (or another parser) may take.
    let raw = std::fs::read_to_string(&report).unwrap();
    let doubled = raw.replacen("{\n", "{\n  \"wall_time_ms\": 0,\n", 1);
    let twice = dir.path().join("twice.json");
    std::fs::write(&twice, doubled).unwrap();
    let o = verify(&twice, &public, None);
    refused(&o, "not as conform renders");
    assert!(text(&o).contains("ok    signature"), "{}", text(&o));

    // The signature taken out.
    let mut v: serde_json::Value = serde_json::from_str(&raw).unwrap();
    v.as_object_mut().unwrap().remove("signature");
    let unsigned = dir.path().join("unsigned.json");
    std::fs::write(&unsigned, serde_json::to_string_pretty(&v).unwrap() + "\n").unwrap();
    refused(&verify(&unsigned, &public, None), "not signed");

    // The same report against a suite whose vectors differ by one file.
    let other = dir.path().join("vectors");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors"),
        &other,
    );
    let catalogue = other.join("requirements/parley.toml");
    let mut text_of = std::fs::read_to_string(&catalogue).unwrap();
    text_of.push_str("\n# one more line\n");
    std::fs::write(&catalogue, text_of).unwrap();
    refused(&verify(&report, &public, Some(&other)), "other data files");

    // A partial run (a filter) is signed, and is no evidence of conformance.
    let partial = signed_run(dir.path(), "partial", &key, &["--filter", "SSP-DISC-*"]);
    refused(&verify(&partial, &public, None), "a partial run");
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let path = e.unwrap().path();
        let dest = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_dir(&path, &dest);
        } else {
            std::fs::copy(&path, &dest).unwrap();
        }
    }
}
