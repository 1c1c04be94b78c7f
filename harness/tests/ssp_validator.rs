//! SSP validator: seed examples of the error shape, modes, parse/serialize, and property
//! tests (SSP-SCH-1, SSP-SCH-4, SSP-SCH-5, SSP-SCH-6, SSP-DISC-1, SSP-DISC-3).

// Test code: a failed expectation is a test failure, so panicking helpers are the point.
#![expect(clippy::expect_used)]

mod support;

use conform::ssp::types::*;
use conform::ssp::validator::{DetailsShape, field_to_pointer, parse_validation_details};
use conform::ssp::{DocType, Mode, SspValidator, parse, parse_str, serialize, validate};
use proptest::prelude::*;
use serde_json::{Map, Number, Value, json};
use support::fixtures::weather;

#[test]
fn embedded_schema_compiles_for_every_doc_type() {
    let v = SspValidator::global().expect("schema compiles");
    assert!(v.is_valid(&weather(), DocType::Descriptor, Mode::Strict));
}

/// SSP-SCH-6 / seed §8.3.1: the two faults of the seed's example give exactly the seed's
/// VALIDATION_ERROR object.
#[test]
fn seed_validation_error_example() {
    let mut doc = weather();
    doc["capability_type"] = json!("invalid_type");
    doc["endpoint"]["method"] = json!("PATCH");
    let report = validate(&doc, DocType::Descriptor, Mode::Strict).expect("schema");
    assert!(!report.valid);
    let got =
        serde_json::to_value(report.to_error_response(DocType::Descriptor)).expect("serializes");
    let seed = json!({
      "error": {
        "code": "VALIDATION_ERROR",
        "message": "Invalid SkillDescriptor document",
        "details": [
          {
            "path": "/capability_type",
            "message": "must be equal to one of the allowed values",
            "expected": ["plugin", "api", "knowledge", "task"],
            "actual": "invalid_type"
          },
          {
            "path": "/endpoint/method",
            "message": "must be equal to one of the allowed values",
            "expected": ["GET", "POST", "PUT", "DELETE"],
            "actual": "PATCH"
          }
        ]
      }
    });
    assert_eq!(got, seed);
    // And the object itself is a valid ErrorResponse.
    assert!(
        validate(&got, DocType::Error, Mode::Strict)
            .expect("schema")
            .valid
    );
}

/// ssp.md §1: both detail shapes are read back into the same violations.
#[test]
fn error_object_details_shapes() {
    let seed: ErrorResponse = serde_json::from_value(json!({"error": {"code": "VALIDATION_ERROR", "message": "m",
        "details": [{"path": "/endpoint/method", "message": "bad", "expected": ["GET"], "actual": "PATCH"}]}}))
    .expect("typed");
    let (issues, shape) = parse_validation_details(&seed.error).expect("seed shape");
    assert_eq!(shape, DetailsShape::Seed);
    assert_eq!(issues[0].path, "/endpoint/method");
    let upstream: ErrorResponse = serde_json::from_value(json!({"error": {"code": "VALIDATION_ERROR", "message": "m",
        "details": {"errors": [{"field": "endpoint.method", "expected": ["GET"], "actual": "PATCH", "message": "bad"}]}}}))
    .expect("typed");
    let (issues2, shape2) = parse_validation_details(&upstream.error).expect("upstream shape");
    assert_eq!(shape2, DetailsShape::Upstream);
    assert_eq!(issues, issues2);
    assert_eq!(field_to_pointer("inputs[1].name"), "/inputs/1/name");
    assert_eq!(field_to_pointer("a/b.c"), "/a~1b/c");
    assert_eq!(field_to_pointer("/already"), "/already");
    let not_details = ErrorObject {
        code: ErrorCode::new("X"),
        message: "m".into(),
        details: Some(json!("text")),
        retry: None,
    };
    assert!(parse_validation_details(&not_details).is_err());
}

/// SSP-SCH-1: strict rejects unknown members, lenient reports them as warnings only.
#[test]
fn lenient_unknown_members_are_warnings() {
    let mut doc = weather();
    doc["x_future_member"] = json!({"minor": 1});
    doc["endpoint"]["x_priority"] = json!("high");
    let strict = validate(&doc, DocType::Descriptor, Mode::Strict).expect("schema");
    assert!(!strict.valid);
    assert_eq!(strict.errors.len(), 2);
    let lenient = validate(&doc, DocType::Descriptor, Mode::Lenient).expect("schema");
    assert!(lenient.valid, "{lenient:?}");
    let mut paths: Vec<_> = lenient.warnings.iter().map(|w| w.path.as_str()).collect();
    paths.sort_unstable();
    assert_eq!(paths, ["/endpoint/x_priority", "/x_future_member"]);
    // parse in lenient mode drops the unknown members.
    let d: SkillDescriptor = conform::ssp::parse_with(&doc, Mode::Lenient).expect("lenient parse");
    assert_eq!(d.id, "example-provider/weather-forecast");
    assert!(parse::<SkillDescriptor>(&doc).is_err());
}

/// SSP-SCH-3: the strict validator wants `{execution_id}` exactly once; the lenient one
/// (provider checks) takes a template without it (warned when it is polled) or repeating it
/// (expanded at every occurrence), never another template expression or a relative URI.
#[test]
fn lenient_templates_may_omit_or_repeat_the_execution_id() {
    for (template, strict_ok, lenient_ok) in [
        ("https://p.example/status/{execution_id}", true, true),
        ("https://p.example/status", false, true),
        (
            "https://p.example/x/{execution_id}?id={execution_id}",
            false,
            true,
        ),
        ("https://p.example/x/{other}", false, false),
        ("https://p.example/x/{execution_id}/{other}", false, false),
        ("/status/{execution_id}", false, false),
    ] {
        let mut doc = weather();
        doc["endpoint"]["status_url"] = json!(template);
        let strict = validate(&doc, DocType::Descriptor, Mode::Strict).expect("schema");
        let lenient = validate(&doc, DocType::Descriptor, Mode::Lenient).expect("schema");
        assert_eq!(strict.valid, strict_ok, "strict, {template}: {strict:?}");
        assert_eq!(
            lenient.valid, lenient_ok,
            "lenient, {template}: {lenient:?}"
        );
    }
}

/// Seed §9.3: serialize writes 2-space indentation; the seed descriptor round-trips byte for
/// byte modulo whitespace.
#[test]
fn serialize_two_space_indentation() {
    let d: SkillDescriptor = parse(&weather()).expect("valid");
    let text = serialize(&d).expect("serializes");
    assert!(
        text.starts_with("{\n  \"protocol\": {\n    \"version\": \"1.0.0\""),
        "{text}"
    );
    assert!(!text.contains('\t'));
    let back: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(back, weather());
    assert_eq!(parse_str::<SkillDescriptor>(&text).expect("valid"), d);
}

#[test]
fn parse_reports_every_violation() {
    let mut doc = weather();
    doc.as_object_mut().expect("object").remove("name");
    doc["access"] = json!("world");
    match parse::<SkillDescriptor>(&doc) {
        Err(conform::ssp::ParseError::Invalid { report, doc_type }) => {
            assert_eq!(doc_type, DocType::Descriptor);
            assert_eq!(report.errors.len(), 2);
        }
        other => panic!("expected Invalid, got {other:?}"),
    }
    assert!(matches!(
        parse_str::<SkillDescriptor>("{"),
        Err(conform::ssp::ParseError::Json(_))
    ));
}

#[test]
fn detect_doc_type() {
    assert_eq!(DocType::detect(&weather()), DocType::Descriptor);
    assert_eq!(DocType::detect(&json!({"skills": []})), DocType::Index);
    assert_eq!(
        DocType::detect(&json!({"execution_id": "e"})),
        DocType::Response
    );
    assert_eq!(DocType::detect(&json!({"caller": {}})), DocType::Request);
    assert_eq!(DocType::detect(&json!({"error": {}})), DocType::Error);
    assert_eq!("index".parse::<DocType>(), Ok(DocType::Index));
    assert!("nope".parse::<DocType>().is_err());
}

// ---------------------------------------------------------------- property tests

fn ident() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9-]{0,10}"
}

fn semver_s() -> impl Strategy<Value = String> {
    (
        0u32..30,
        0u32..30,
        0u32..30,
        prop::option::of("[a-z][a-z0-9]{0,5}(\\.[1-9][0-9]{0,2})?"),
        prop::option::of("[a-z0-9]{1,6}"),
    )
        .prop_map(|(a, b, c, pre, build)| {
            let mut s = format!("{a}.{b}.{c}");
            if let Some(p) = pre {
                s.push('-');
                s.push_str(&p);
            }
            if let Some(b) = build {
                s.push('+');
                s.push_str(&b);
            }
            s
        })
}

fn url_s() -> impl Strategy<Value = String> {
    ("[a-z]{1,10}", "[a-z0-9/]{0,12}").prop_map(|(h, p)| format!("https://{h}.example/{p}"))
}

fn timestamp_s() -> impl Strategy<Value = String> {
    (2000u32..2100, 1u32..13, 1u32..29, 0u32..24, 0u32..60)
        .prop_map(|(y, mo, d, h, mi)| format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:00Z"))
}

fn small_json() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(|n| json!(n)),
        "[a-z ]{0,8}".prop_map(Value::String),
        prop::collection::vec(any::<u8>().prop_map(|n| json!(n)), 0..3).prop_map(Value::Array),
    ]
}

fn param(name: String) -> impl Strategy<Value = ParameterDefinition> {
    (
        prop::sample::select(vec![
            "string", "number", "integer", "boolean", "object", "array", "null",
        ]),
        ".{0,12}",
        any::<bool>(),
        prop::option::of(small_json()),
        any::<bool>(),
    )
        .prop_map(move |(kind, description, required, default, with_schema)| {
            ParameterDefinition {
                name: name.clone(),
                kind: kind.into(),
                description,
                required,
                default,
                schema: with_schema.then(|| {
                    let mut m = Map::new();
                    m.insert("type".into(), json!(kind));
                    m
                }),
            }
        })
}

fn params() -> impl Strategy<Value = Vec<ParameterDefinition>> {
    (0usize..4).prop_flat_map(|n| (0..n).map(|i| param(format!("p{i}"))).collect::<Vec<_>>())
}

fn auth_s() -> impl Strategy<Value = AuthConfig> {
    let none = Just(AuthConfig {
        kind: AuthType::None,
        description: None,
        header: None,
        oauth2: None,
        custom: None,
    });
    let api = "[A-Za-z][A-Za-z0-9-]{0,12}".prop_map(|h| AuthConfig {
        kind: AuthType::ApiKey,
        description: Some("key".into()),
        header: Some(h),
        oauth2: None,
        custom: None,
    });
    let oauth = (
        url_s(),
        url_s(),
        prop::collection::btree_map("[a-z:]{1,8}", ".{0,8}", 0..3),
    )
        .prop_map(|(a, t, scopes)| AuthConfig {
            kind: AuthType::Oauth2,
            description: None,
            header: None,
            oauth2: Some(OAuth2Config {
                authorization_url: a,
                token_url: t,
                scopes: scopes
                    .into_iter()
                    .map(|(k, v)| (k, Value::String(v)))
                    .collect(),
            }),
            custom: None,
        });
    let custom = ("[A-Za-z ]{1,20}", params()).prop_map(|(instructions, parameters)| AuthConfig {
        kind: AuthType::Custom,
        description: None,
        header: None,
        oauth2: None,
        custom: Some(CustomAuthConfig {
            instructions,
            parameters,
        }),
    });
    prop_oneof![none, api, oauth, custom]
}

fn descriptor_s() -> impl Strategy<Value = SkillDescriptor> {
    let head = (
        prop::option::of(url_s()),
        (ident(), ident()),
        "[A-Za-z][A-Za-z ]{0,15}",
        semver_s(),
        prop::sample::select(CapabilityType::ALL.to_vec()),
        ".{0,30}",
        (
            "[A-Za-z][A-Za-z .]{0,15}",
            prop::option::of(url_s()),
            prop::option::of("[a-z]{1,5}@[a-z]{1,5}\\.example"),
        ),
    );
    let endpoint = (
        url_s(),
        prop::sample::select(vec![
            HttpMethod::Get,
            HttpMethod::Post,
            HttpMethod::Put,
            HttpMethod::Delete,
        ]),
        prop::option::of(Just("application/json".to_owned())),
        prop::option::of(url_s().prop_map(|u| format!("{u}/status/{{execution_id}}"))),
        prop::option::of(url_s().prop_map(|u| format!("{u}?id={{execution_id}}"))),
        prop::option::of(1u32..600_000),
        prop::option::of((0u32..10, 0u32..10_000)),
    )
        .prop_map(
            |(url, method, content_type, status_url, result_url, timeout, retry)| {
                InvocationEndpoint {
                    url,
                    method,
                    content_type,
                    status_url,
                    result_url,
                    timeout_ms: timeout.map(Number::from),
                    retry: retry.map(|(a, b)| RetryConfig {
                        max_attempts: Some(a.into()),
                        backoff_ms: Some(b.into()),
                    }),
                }
            },
        );
    let tail = (
        params(),
        ("[a-z]+/[a-z]+", prop::option::of(".{0,10}"), any::<bool>()),
        auth_s(),
        prop::sample::select(vec![
            AccessPolicy::Public,
            AccessPolicy::Restricted,
            AccessPolicy::Private,
        ]),
        prop::option::of(prop::collection::vec("[a-z]{1,6}", 0..4)),
        prop::option::of(url_s()),
        prop::option::of(timestamp_s()),
        prop::option::of(timestamp_s()),
    );
    (head, endpoint, tail).prop_map(
        |(
            (
                changelog,
                (owner, skill),
                name,
                version,
                capability_type,
                description,
                (pname, purl, contact),
            ),
            endpoint,
            (
                inputs,
                (ctype, odesc, with_schema),
                auth,
                access,
                tags,
                documentation_url,
                created_at,
                updated_at,
            ),
        )| {
            // SSP-SCH-4 (strict): restricted/private need a real auth type.
            let access = if auth.kind == AuthType::None {
                AccessPolicy::Public
            } else {
                access
            };
            SkillDescriptor {
                protocol: ProtocolVersion {
                    version: "1.0.0".into(),
                    changelog_url: changelog,
                },
                id: format!("{owner}/{skill}"),
                name,
                version,
                capability_type,
                description,
                provider: ProviderInfo {
                    name: pname,
                    url: purl,
                    contact,
                },
                endpoint,
                inputs,
                output: OutputDefinition {
                    content_type: ctype,
                    schema: with_schema.then(|| {
                        let mut m = Map::new();
                        m.insert("type".into(), json!("object"));
                        m
                    }),
                    description: odesc,
                },
                auth,
                access,
                tags,
                documentation_url,
                created_at,
                updated_at,
            }
        },
    )
}

/// Every JSON Pointer of a required member present in `doc` (seed §3.2, §3.5).
fn required_pointers(doc: &Value) -> Vec<String> {
    let mut out: Vec<String> = [
        "protocol",
        "id",
        "name",
        "version",
        "capability_type",
        "description",
        "provider",
        "endpoint",
        "inputs",
        "output",
        "auth",
        "access",
    ]
    .iter()
    .map(|m| format!("/{m}"))
    .collect();
    out.extend(
        [
            "/protocol/version",
            "/provider/name",
            "/endpoint/url",
            "/endpoint/method",
            "/output/content_type",
            "/auth/type",
        ]
        .map(String::from),
    );
    if let Some(inputs) = doc["inputs"].as_array() {
        for i in 0..inputs.len() {
            for m in ["name", "type", "description", "required"] {
                out.push(format!("/inputs/{i}/{m}"));
            }
        }
    }
    if doc.pointer("/endpoint/retry").is_some() {
        out.extend(
            ["/endpoint/retry/max_attempts", "/endpoint/retry/backoff_ms"].map(String::from),
        );
    }
    match doc["auth"]["type"].as_str() {
        Some("api_key") => out.push("/auth/header".into()),
        Some("oauth2") => out.extend(
            [
                "/auth/oauth2",
                "/auth/oauth2/authorization_url",
                "/auth/oauth2/token_url",
                "/auth/oauth2/scopes",
            ]
            .map(String::from),
        ),
        Some("custom") => out.extend(
            [
                "/auth/custom",
                "/auth/custom/instructions",
                "/auth/custom/parameters",
            ]
            .map(String::from),
        ),
        _ => {}
    }
    out
}

fn remove_pointer(doc: &mut Value, ptr: &str) -> bool {
    let Some(i) = ptr.rfind('/') else {
        return false;
    };
    let (parent, last) = (&ptr[..i], &ptr[i + 1..]);
    doc.pointer_mut(parent)
        .and_then(Value::as_object_mut)
        .is_some_and(|m| m.shift_remove(last).is_some())
}

fn index_s() -> impl Strategy<Value = SkillIndex> {
    prop::collection::vec(
        (
            prop::sample::select(CapabilityType::ALL.to_vec()),
            prop::sample::select(vec![
                AccessPolicy::Public,
                AccessPolicy::Restricted,
                AccessPolicy::Private,
            ]),
            semver_s(),
        ),
        0..12,
    )
    .prop_map(|entries| SkillIndex {
        protocol: ProtocolVersion {
            version: "1.0.0".into(),
            changelog_url: None,
        },
        provider: ProviderInfo {
            name: "P".into(),
            url: None,
            contact: None,
        },
        skills: entries
            .into_iter()
            .enumerate()
            .map(|(i, (capability_type, access, version))| SkillIndexEntry {
                id: format!("p/skill-{i}"),
                name: format!("Skill {i}"),
                capability_type,
                description: String::new(),
                descriptor_url: format!("https://p.example/skills/{i}.json"),
                access,
                version,
            })
            .collect(),
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// SSP-SCH-5: for generated valid descriptors, parse(serialize(d)) == d.
    #[test]
    fn prop_roundtrip(d in descriptor_s()) {
        let text = serialize(&d).expect("serializes");
        let value: Value = serde_json::from_str(&text).expect("JSON");
        let report = validate(&value, DocType::Descriptor, Mode::Strict).expect("schema");
        prop_assert!(report.valid, "generated descriptor invalid: {:?}\n{}", report.errors, text);
        let back: SkillDescriptor = parse_str(&text).expect("parses");
        prop_assert_eq!(back, d);
    }

    /// SSP-SCH-1/SSP-SCH-5: deleting any single required member is detected, at its path.
    #[test]
    fn prop_required_deletion_detected(d in descriptor_s(), pick in any::<prop::sample::Index>()) {
        let doc = serde_json::to_value(&d).expect("serializes");
        let ptrs = required_pointers(&doc);
        let ptr = pick.get(&ptrs).clone();
        let mut broken = doc;
        prop_assert!(remove_pointer(&mut broken, &ptr), "{} not present", ptr);
        for mode in [Mode::Strict, Mode::Lenient] {
            let report = validate(&broken, DocType::Descriptor, mode).expect("schema");
            prop_assert!(!report.valid, "deleting {} went unnoticed", ptr);
            prop_assert!(report.errors.iter().any(|e| e.path == ptr), "no error at {}: {:?}", ptr, report.errors);
        }
    }

    /// SSP-DISC-3 (seed §4.5): filtering returns only the matching entries, and all of them,
    /// in index order; the filtered index is still a valid SkillIndex (SSP-DISC-1).
    #[test]
    fn prop_filter_by_capability_type(index in index_s(), t in prop::sample::select(CapabilityType::ALL.to_vec())) {
        let filtered = index.filter_by_capability(t);
        prop_assert!(filtered.iter().all(|e| e.capability_type == t));
        let expected: Vec<&SkillIndexEntry> = index.skills.iter().filter(|e| e.capability_type.as_str() == t.as_str()).collect();
        prop_assert_eq!(&filtered, &expected);
        let sub = SkillIndex { skills: filtered.into_iter().cloned().collect(), ..index.clone() };
        let v = serde_json::to_value(&sub).expect("serializes");
        prop_assert!(validate(&v, DocType::Index, Mode::Strict).expect("schema").valid);
        // Partition: the filters over every type cover the index exactly once.
        let total: usize = CapabilityType::ALL.iter().map(|c| index.filter_by_capability(*c).len()).sum();
        prop_assert_eq!(total, index.skills.len());
    }

    /// SSP-DISC-1: any duplicated id is reported at the later entry.
    #[test]
    fn prop_duplicate_index_id_detected(index in index_s().prop_filter("≥2 entries", |i| i.skills.len() >= 2), a in any::<prop::sample::Index>(), b in any::<prop::sample::Index>()) {
        let n = index.skills.len();
        let (i, j) = (a.index(n), b.index(n));
        prop_assume!(i != j);
        let (first, later) = (i.min(j), i.max(j));
        let mut dup = index;
        dup.skills[later].id = dup.skills[first].id.clone();
        let v = serde_json::to_value(&dup).expect("serializes");
        let report = validate(&v, DocType::Index, Mode::Lenient).expect("schema");
        prop_assert!(!report.valid);
        let want = format!("/skills/{later}/id");
        prop_assert!(report.errors.iter().any(|e| e.path == want));
    }
}
