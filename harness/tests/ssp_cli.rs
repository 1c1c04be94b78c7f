//! `conform validate` (issue 5): human-readable output snapshot-tested on a few invalid
//! documents, exit codes, `--type`, `--lenient`, `--json`, and fetching from a URL.

// Test code: a failed expectation is a test failure, so panicking helpers are the point.
#![expect(clippy::expect_used)]

mod support;

use conform::ssp::DocType;
use conform::ssp::cli::{EXIT_INVALID, EXIT_VALID, ValidateArgs, run};
use serde_json::{Value, json};
use support::fixtures::{WEATHER, weather};

async fn run_on(
    doc: &Value,
    doc_type: Option<DocType>,
    lenient: bool,
    json_out: bool,
) -> (i32, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("doc.json");
    std::fs::write(&path, serde_json::to_string_pretty(doc).expect("json")).expect("write");
    let args = ValidateArgs {
        source: path.to_string_lossy().into_owned(),
        doc_type,
        lenient,
        json: json_out,
        tls: Default::default(),
    };
    let mut out = Vec::new();
    let code = run(&args, &mut out).await.expect("runs");
    let text = String::from_utf8(out)
        .expect("utf-8")
        .replace(&args.source, "doc.json");
    (code, text)
}

#[tokio::test]
async fn valid_descriptor_exits_zero() {
    let (code, text) = run_on(&weather(), None, false, false).await;
    assert_eq!(code, EXIT_VALID);
    assert_eq!(text, "doc.json: valid SkillDescriptor (strict)\n");
}

#[tokio::test]
async fn seed_faulty_descriptor() {
    let mut d = weather();
    d["capability_type"] = json!("invalid_type");
    d["endpoint"]["method"] = json!("PATCH");
    let (code, text) = run_on(&d, Some(DocType::Descriptor), false, false).await;
    assert_eq!(code, EXIT_INVALID);
    insta::assert_snapshot!("seed_faulty_descriptor", text);
    let (code, json_text) = run_on(&d, None, false, true).await;
    assert_eq!(code, EXIT_INVALID);
    insta::assert_snapshot!("seed_faulty_descriptor_json", json_text);
}

#[tokio::test]
async fn several_violations_and_lenient_warnings() {
    let mut d = weather();
    d.as_object_mut().expect("object").remove("name");
    d["version"] = json!("v2.1");
    d["endpoint"]["status_url"] = json!("https://api.weather.example.com/v2/status");
    d["access"] = json!("private");
    d["auth"] = json!({"type": "none"});
    d["x_vendor"] = json!(true);
    let (code, strict) = run_on(&d, None, false, false).await;
    assert_eq!(code, EXIT_INVALID);
    insta::assert_snapshot!("several_violations_strict", strict);
    let (code, lenient) = run_on(&d, None, true, false).await;
    assert_eq!(code, EXIT_INVALID);
    insta::assert_snapshot!("several_violations_lenient", lenient);
}

#[tokio::test]
async fn index_with_duplicate_ids() {
    let doc = json!({
        "protocol": {"version": "1.0"},
        "provider": {"name": "Example Corp"},
        "skills": [
            {"id": "a", "name": "A", "capability_type": "api", "description": "", "descriptor_url": "https://e.example/a.json", "access": "public", "version": "1.0.0"},
            {"id": "a", "name": "B", "capability_type": "api", "description": "", "descriptor_url": "b.json", "access": "public", "version": "1.0.0"}
        ]
    });
    let (code, text) = run_on(&doc, Some(DocType::Index), false, false).await;
    assert_eq!(code, EXIT_INVALID);
    insta::assert_snapshot!("index_with_duplicate_ids", text);
}

#[tokio::test]
async fn lenient_unknown_member_only_warns() {
    let mut d = weather();
    d["x_vendor"] = json!(true);
    let (code, text) = run_on(&d, None, true, false).await;
    assert_eq!(code, EXIT_VALID);
    insta::assert_snapshot!("lenient_unknown_member_only_warns", text);
}

#[tokio::test]
async fn response_lifecycle_incoherent() {
    let doc = json!({
        "execution_id": "exec-1", "status": "completed", "skill_id": "s",
        "error": {"code": "X", "message": "x"},
        "timestamps": {"created_at": "2025-07-01T12:00:00Z", "updated_at": "2025-07-01T11:00:00Z"}
    });
    let (code, text) = run_on(&doc, None, false, false).await;
    assert_eq!(code, EXIT_INVALID);
    insta::assert_snapshot!("response_lifecycle_incoherent", text);
}

#[tokio::test]
async fn unreadable_and_non_json_inputs_are_errors() {
    let args = ValidateArgs {
        source: "/nonexistent/doc.json".into(),
        doc_type: None,
        lenient: false,
        json: false,
        tls: Default::default(),
    };
    let mut out = Vec::new();
    assert!(run(&args, &mut out).await.is_err());
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("x.json");
    std::fs::write(&p, "{ not json").expect("write");
    let args = ValidateArgs {
        source: p.to_string_lossy().into_owned(),
        doc_type: None,
        lenient: false,
        json: false,
        tls: Default::default(),
    };
    assert!(matches!(
        run(&args, &mut out).await,
        Err(conform::ssp::cli::CliError::NotJson { .. })
    ));
}

#[tokio::test]
async fn validates_a_url() {
    use axum::routing::get;
    let body = WEATHER.to_owned();
    let app = axum::Router::new()
        .route(
            "/skills/weather.json",
            get(move || async move { ([("content-type", "application/json")], body) }),
        )
        .route(
            "/missing",
            get(|| async { (axum::http::StatusCode::NOT_FOUND, "nope") }),
        );
    let base = support::http::serve(app).await;
    let args = ValidateArgs {
        source: format!("{base}/skills/weather.json"),
        doc_type: None,
        lenient: false,
        json: false,
        tls: Default::default(),
    };
    let mut out = Vec::new();
    assert_eq!(run(&args, &mut out).await.expect("runs"), EXIT_VALID);
    let args = ValidateArgs {
        source: format!("{base}/missing"),
        ..args
    };
    assert!(matches!(
        run(&args, &mut out).await,
        Err(conform::ssp::cli::CliError::Fetch { .. })
    ));
}
