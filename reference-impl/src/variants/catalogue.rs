//! The catalogue of legal variants: each [`Variant`] with its name, the sentence that allows
//! it and what it changes, the set of those switched on ([`Variants`]), and the constants of
//! the moved routes and the realm that the wire service and its JSON rewrites share.

use crate::config::TokenRow;
use crate::domain::parley::Limits;

/// Declares the catalogue: variant, kebab-case name, the sentence that allows it, description.
macro_rules! catalogue {
    ($( $variant:ident = $name:literal, $allowed_by:literal, $desc:literal; )+) => {
        /// One legal variant of the catalogue (see the module documentation).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Variant {
            $( #[doc = $desc] $variant, )+
        }

        impl Variant {
            /// Every variant, in catalogue order.
            pub const ALL: &'static [Variant] = &[$(Variant::$variant),+];

            /// The kebab-case name (`--variant NAME`, `Config::variants`).
            pub fn name(self) -> &'static str {
                match self { $(Variant::$variant => $name,)+ }
            }

            /// The sentence (document, section, quote) that makes the behaviour legal.
            pub fn allowed_by(self) -> &'static str {
                match self { $(Variant::$variant => $allowed_by,)+ }
            }

            /// One sentence: what the server does differently from the reference.
            pub fn description(self) -> &'static str {
                match self { $(Variant::$variant => $desc,)+ }
            }
        }
    };
}

catalogue! {
    // ---- Parley: the manifest is authoritative (PV-MF-1, PV-MF-2) ----------------------
    ProfileKindsAsObjects = "profile-kinds-as-objects",
        "parley-v1.md §2 PV-MF-1: `profiles` (e.g. `[{\"name\":\"dialectic\",\"kinds\":[...]}]`) — an example; the element shape of `kinds` is not fixed",
        "The dialectic profile lists its kinds as kind objects (the shape of the top-level `kinds`) instead of bare names.";
    OperationBindingsAsStrings = "operation-bindings-as-strings",
        "parley-v1.md §2 PV-MF-1: `operations` (the table above, machine-readable) — no layout is fixed",
        "Each operation's MCP binding is the bare tool name (`\"mcp\": \"post\"`) instead of `{\"tool\": \"post\"}`.";
    ManifestInformationalMembers = "manifest-informational-members",
        "parley-v1.md §11 PV-RS-2: extra members are allowed (a harness ignores what it does not know)",
        "The manifest carries extra informational members (server, contact, documentation) at the top level, in `limits`, in each kind and each operation.";
    ServerVersionPrerelease = "server-version-prerelease",
        "parley-v1.md §2 PV-MF-1: `version` (SemVer of the server) — any SemVer 2.0.0 version",
        "The manifest's `version` is a pre-release with build metadata (`1.0.0-rc.2+build.7`).";
    IdentityRealmForum = "identity-realm-forum",
        "parley-v1.md §7 PV-ID-1: identity `<realm>:<handle>` (here `ainotes:<handle>`) — the realm is the server's",
        "Identities live in the realm `forum` (`forum:agent-a`), declared as `identity.realm`.";
    OperationRoutesMoved = "operation-routes-moved",
        "parley-v1.md preamble: the harness must read the target's manifest and adapt to what a third-party server declares there (operation routes, limits, profiles)",
        "Every HTTP operation route but the manifest's lives under `/forum/api/` (declared in `operations`); the `/v1/` paths of the table are unknown routes.";
    ForeignNotFoundShape = "foreign-not-found-shape",
        "parley-v1.md §10: `not_found` (unknown route) is a Parley reason; paths outside `/v1/` and `/mcp` are not Parley's namespace",
        "Unknown routes outside `/v1/` and `/mcp` are answered 404 in SSP's error shape (`{\"error\":{\"code\":\"SKILL_NOT_FOUND\"}}`, SSP-ERR-3), as by a server hosting both on one origin.";
    BlankBodyAccepted = "blank-body-accepted",
        "parley-v1.md PV-EN-1: a whitespace-only `body` SHOULD be refused the same way; a check warns (never fails) when it is accepted",
        "A body of ASCII whitespace only is accepted and stored as sent (only a missing or empty body is refused).";
    // ---- Parley: other declared limits, enforced exactly (PV-MF-2) ---------------------
    // Not body_max_chars: the seed fixes "un corps d'au plus 500 caractères" and the
    // preamble of parley-v1.md checks the 500-character body against every target.
    InboxLimitsSmall = "inbox-limits-small",
        "parley-v1.md §8 PV-RD-3: `limit` defaults to / is capped by the manifest values",
        "Declares and enforces inbox_limit_default 10 and inbox_limit_max 25.";
    EvidenceLimitsSmall = "evidence-limits-small",
        "parley-v1.md §2 PV-MF-2 and §9 PV-DI-1: 1..`evidence_max` items; limits are the manifest's",
        "Declares and enforces evidence_max 3, evidence_ref_max_chars 256, provenance_max_chars 64.";
    RequestMax16k = "request-max-16k",
        "parley-v1.md §1 PV-TR-5: requests over `limits.request_max_bytes` → 413",
        "Declares and enforces request_max_bytes 16384.";
    QuotaLower = "quota-lower",
        "parley-v1.md §1 PV-TR-5: the quota defaults to `limits.writes_per_minute` — the server's value",
        "Declares and enforces writes_per_minute 3000 (half the reference's).";
    LimitsLarger = "limits-larger",
        "parley-v1.md §2 PV-MF-2: \"the server MUST enforce exactly the limits it declares\" and checks read every limit from the manifest; only body_max_chars is fixed",
        "Declares and enforces larger limits than the reference: inbox_limit_default 100, inbox_limit_max 1000, evidence_max 16, evidence_ref_max_chars 4096, provenance_max_chars 1000, request_max_bytes 262144, writes_per_minute 12000.";
    // ---- Parley + SSP: the wire layout (PV-RS-2, PV-TR-2/3, RFC 9110, RFC 8259) --------
    ExtraResponseMembers = "extra-response-members",
        "parley-v1.md §11 PV-RS-2: extra members are allowed (a harness ignores what it does not know)",
        "Every object of every Parley success body and refusal carries an extra member `x_server`.";
    MembersReversed = "members-reversed",
        "RFC 8259 §4: an object is an unordered collection of members; neither note fixes an order",
        "Every JSON object of every response has its members in reverse order.";
    PrettyJson = "pretty-json",
        "RFC 8259 §2: insignificant whitespace is allowed; PV-TR-2 asks for the same JSON as text, not the same bytes",
        "Every JSON response body (and MCP `content[0].text`) is pretty-printed.";
    JsonCharsetParameter = "json-charset-parameter",
        "parley-v1.md §1 PV-TR-3: `Content-Type: application/json` — a media type with parameters is still that type (RFC 9110 §8.3.1)",
        "Every JSON response says `Content-Type: application/json; charset=utf-8`.";
    ChunkedResponses = "chunked-responses",
        "RFC 9112 §7.1: chunked transfer coding; no note fixes Content-Length",
        "Every response body is sent chunked, in small pieces, without Content-Length.";
    RefusalMessagesFrench = "refusal-messages-french",
        "parley-v1.md §10: reasons are the stable, machine-readable part; ssp.md SSP-ERR-1: `message` required, its text free",
        "Every refusal and SSP error `message` is a French sentence.";
    TimestampsWithOffset = "timestamps-with-offset",
        "parley-v1.md §3: `created_at` (RFC 3339 UTC) — RFC 3339 §4.2/§5.6 allows `+00:00` and any fraction",
        "Every timestamp is written with microseconds and `+00:00` instead of milliseconds and `Z`.";
    RetryAfterHttpDate = "retry-after-http-date",
        "parley-v1.md §1 PV-TR-5: 429 with `Retry-After`; RFC 9110 §10.2.3 allows an HTTP-date or delay-seconds",
        "`Retry-After` is an HTTP-date instead of a number of seconds.";
    TitleCaseHeaders = "title-case-headers",
        "RFC 9110 §5.1: field names are case-insensitive; no note fixes their casing",
        "Response header names are written in title case (`Content-Type`, `Retry-After`).";
    TransportRefusalsPlain = "transport-refusals-plain",
        "parley-v1.md §1 PV-TR-6: a refusal raised before routing SHOULD use the PV-TR-3 shape with its row's reason; a check judges the status only (shape and reason are warnings)",
        "The refusals the HTTP layer raises before routing for the URI limit and the request deadline (414, 408) are plain text, as a stock HTTP stack sends them, not the Parley refusal shape.";
    ConnectionClose = "connection-close",
        "RFC 9112 §9.6: a server may close the connection after any response (`Connection: close`); no note asks for keep-alive",
        "Every connection is closed after one response: no keep-alive.";
    // ---- SSP --------------------------------------------------------------------------
    SspPrivateDescriptor404 = "ssp-private-descriptor-404",
        "ssp.md SSP-DISC-4: a private descriptor without credentials → 401 `AUTH_REQUIRED` (the harness also accepts 404)",
        "A private descriptor read without credentials is 404 SKILL_NOT_FOUND, hiding its existence.";
    SspEarlyResult409 = "ssp-early-result-409",
        "ssp.md SSP-INV-4: before completion 202 … (the harness also accepts 409 + error)",
        "The result of an unfinished execution is 409 with an error in the unified shape.";
    SspUnknownFilterEmpty = "ssp-unknown-filter-empty",
        "ssp.md SSP-DISC-3: unknown value → 400 `VALIDATION_ERROR`; the harness also accepts 200 with no entries",
        "An unknown capability_type filter gives 200 with an empty skill list.";
    SspExecutionTimeoutAlias = "ssp-execution-timeout-alias",
        "ssp.md §1: the harness accepts `EXECUTION_TIMEOUT` as a known alias and reports it as a warning, not a failure",
        "A timed-out execution carries the upstream code EXECUTION_TIMEOUT.";
    SspExtraMembers = "ssp-extra-members",
        "ssp.md SSP-SCH-1: provider HTTP checks run lenient for unknown members (a MINOR release may add members)",
        "The index, its entries, descriptors, invocation responses and errors carry an extra member `x_provider`.";
    SspBareErrors = "ssp-bare-errors",
        "seed §8.2: `details` and `retry` are optional (\"Non\"); ssp.md SSP-INV-2/4/5, SSP-AUTH-2/3: details, retry and `WWW-Authenticate` SHOULD (a missing one is a warning)",
        "Every SSP error, HTTP answers and the error of a failed or timed-out execution, carries only code and message: no details, no retry, and a 401 has no WWW-Authenticate.";
    SspHiddenExecutionRefused = "ssp-hidden-execution-refused",
        "ssp.md SSP-INV-6: without credentials 404 or 401 `AUTH_REQUIRED`; with other valid credentials 404 or 403 `PERMISSION_DENIED` (seed §7.4)",
        "Another caller's read of a non-public execution is 401 AUTH_REQUIRED without valid credentials and 403 PERMISSION_DENIED with other valid ones, instead of 404.";
    SspValidationDetailsUpstream = "ssp-validation-details-upstream",
        "ssp.md §1: upstream validation errors list violations as `{field, expected, actual, message}`, the seed `{path, message, expected, actual}`; the harness's validator parser accepts both shapes (SSP-INV-2: the seed's shape is a SHOULD)",
        "Every VALIDATION_ERROR's `details` lists its violations in the upstream shape: `field` instead of `path`.";
    SspFilterRegistrySpelling = "ssp-filter-registry-spelling",
        "ssp.md SSP-DISC-3: `?capability_type=<t>` (also accept `?type=<t>`, the registry spelling); seed §4.2's only query syntax is `?type=`",
        "Discovery filters on `?type=` only: `?capability_type=` is an unknown query parameter, ignored (the index comes back unfiltered).";
    SspFilterSpellingRefused = "ssp-filter-spelling-refused",
        "ssp.md SSP-DISC-3: `?capability_type=<t>` (also accept `?type=<t>`, the registry spelling); seed §4.2's only query syntax is `?type=`",
        "Discovery filters on `?type=` only, and refuses `?capability_type=` as an unknown query parameter (400 VALIDATION_ERROR).";
    SspAuthRetryOther = "ssp-auth-retry-other",
        "ssp.md SSP-AUTH-2: `retry {suggested_delay_ms: 0, max_attempts: 1}` SHOULD (seed example; §8.2: optional)",
        "AUTH_REQUIRED suggests another retry: `{suggested_delay_ms: 1000, max_attempts: 3}`.";
    SspTemplatesWithoutId = "ssp-templates-without-id",
        "ssp.md SSP-SCH-3: provider checks: a template without `{execution_id}` is a warning, never a failure, and the client then polls `<template>/<execution_id>` (the seed §5.2 diagram's reading)",
        "Descriptors declare `status_url` and `result_url` without `{execution_id}` (`…/ssp/status`): the execution id is appended as a last segment.";
    SspPathsMoved = "ssp-paths-moved",
        "ssp.md §7 and seed §4: descriptors carry `descriptor_url`, `endpoint.url`, `status_url`, `result_url`; only `/.well-known/skill-sharing` is fixed",
        "Every SSP route but discovery lives under `/skills-api/` instead of `/ssp/`; the old paths are unknown.";
}

// One bit per variant.
const _: () = assert!(Variant::ALL.len() <= 64);

impl Variant {
    /// The variant named `name` (kebab-case), if any.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|v| v.name() == name)
    }

    /// Which protocol the variant concerns: `parley`, `ssp` or `both`.
    pub fn suite(self) -> &'static str {
        use Variant::*;
        match self {
            MembersReversed
            | PrettyJson
            | JsonCharsetParameter
            | ChunkedResponses
            | RefusalMessagesFrench
            | TimestampsWithOffset
            | TransportRefusalsPlain => "both",
            // By name, not by a list: a new SSP variant can never default to Parley's
            // suites (and run none of the checks it can change).
            _ if self.name().starts_with("ssp-") => "ssp",
            _ => "parley",
        }
    }
}

impl std::fmt::Display for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a list of variant names cannot be switched on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VariantError {
    /// The name is not in the catalogue.
    #[error("unknown variant {0:?} (see reference_impl::variants::Variant::ALL)")]
    Unknown(String),
    /// The server was built without the cargo feature `variants`.
    #[error("variant {0:?} requested, but this build has no variants (cargo feature `variants`)")]
    NotBuilt(String),
}

/// The variants switched on for one server instance (cheap to copy).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Variants {
    on: u64,
}

impl Variants {
    /// No variant: the reference behaviour.
    pub const fn none() -> Self {
        Self { on: 0 }
    }

    /// Parses `--variant` names; an unknown name, or any name in a build without the
    /// `variants` feature, is an error (a server never starts with a variant it ignores).
    pub fn from_names<S: AsRef<str>>(names: &[S]) -> Result<Self, VariantError> {
        let mut on = 0u64;
        for name in names {
            let name = name.as_ref();
            let v = Variant::from_name(name).ok_or_else(|| VariantError::Unknown(name.into()))?;
            if !cfg!(feature = "variants") {
                return Err(VariantError::NotBuilt(name.into()));
            }
            on |= 1u64 << (v as u32);
        }
        Ok(Self { on })
    }

    /// Whether `v` is on (a constant `false` without the `variants` feature).
    #[inline]
    pub const fn is_on(&self, v: Variant) -> bool {
        cfg!(feature = "variants") && self.on & (1u64 << (v as u32)) != 0
    }

    /// Whether any variant is on.
    pub const fn any(&self) -> bool {
        cfg!(feature = "variants") && self.on != 0
    }

    /// The limits the server declares and enforces: the reference's, changed by the limit
    /// variants (PV-MF-2: declared = enforced, because both read this one value).
    pub fn limits(&self, mut limits: Limits) -> Limits {
        if self.is_on(Variant::InboxLimitsSmall) {
            limits.inbox_limit_default = 10;
            limits.inbox_limit_max = 25;
        }
        if self.is_on(Variant::EvidenceLimitsSmall) {
            limits.evidence_max = 3;
            limits.evidence_ref_max_chars = 256;
            limits.provenance_max_chars = 64;
        }
        if self.is_on(Variant::RequestMax16k) {
            limits.request_max_bytes = 16 * 1024;
        }
        if self.is_on(Variant::QuotaLower) {
            limits.writes_per_minute = 3000;
        }
        if self.is_on(Variant::LimitsLarger) {
            limits.inbox_limit_default = 100;
            limits.inbox_limit_max = 1000;
            limits.evidence_max = 16;
            limits.evidence_ref_max_chars = 4096;
            limits.provenance_max_chars = 1000;
            limits.request_max_bytes = 256 * 1024;
            limits.writes_per_minute = 12_000;
        }
        limits
    }

    /// Whether the pre-routing refusals of the URI limit and the request deadline are plain
    /// text (`transport-refusals-plain`) instead of the Parley refusal shape.
    pub fn plain_transport_refusals(&self) -> bool {
        self.is_on(Variant::TransportRefusalsPlain)
    }

    /// How the accept loop speaks HTTP/1.1 under the connection variants:
    /// `(title-case header names, keep-alive)`.
    pub fn connection(&self) -> (bool, bool) {
        (
            self.is_on(Variant::TitleCaseHeaders),
            !self.is_on(Variant::ConnectionClose),
        )
    }

    /// The token rows, with identities moved to the variant's realm (`identity-realm-forum`).
    pub fn tokens(&self, mut tokens: Vec<TokenRow>) -> Vec<TokenRow> {
        if self.is_on(Variant::IdentityRealmForum) {
            for t in &mut tokens {
                if let Some(handle) = t.identity.strip_prefix(&format!("{REALM}:")) {
                    t.identity = format!("{VARIANT_REALM}:{handle}");
                }
            }
        }
        tokens
    }
}

/// The reference's identity realm (parley-v1.md §2 `identity: {"realm": "ainotes"}`).
pub(super) const REALM: &str = "ainotes";
/// The realm of `identity-realm-forum`.
pub(super) const VARIANT_REALM: &str = "forum";
/// The prefix of the reference's SSP routes, and where `ssp-paths-moved` puts them.
#[cfg(feature = "variants")]
pub(super) const SSP_PREFIX: &str = "/ssp/";
/// See [`SSP_PREFIX`].
#[cfg(feature = "variants")]
pub(super) const SSP_MOVED: &str = "/skills-api/";
/// Where `operation-routes-moved` puts the Parley routes' `/v1/`.
#[cfg(feature = "variants")]
pub(super) const PARLEY_MOVED: &str = "/forum/api/";

/// The public path of a Parley route under `operation-routes-moved`: every `/v1/…` route
/// but the manifest (the harness's entry point) moves to [`PARLEY_MOVED`].
#[cfg(feature = "variants")]
pub(super) fn moved_parley_path(path: &str) -> Option<String> {
    let rest = path.strip_prefix("/v1/")?;
    (rest != "manifest").then(|| format!("{PARLEY_MOVED}{rest}"))
}
