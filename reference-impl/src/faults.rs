//! Named, seeded faults: deliberately broken variants of the reference server, used to
//! measure the power of the `conform` suite (issue 6).
//!
//! Each [`Fault`] is a small, realistic bug an implementer could make, tagged with the
//! requirement IDs it violates. A fault is switched on per server instance
//! ([`crate::config::Config::faults`], `reference-server serve --fault NAME`), never globally:
//! tests run several faulty servers side by side in one process.
//!
//! The catalogue itself ([`Fault`]) is always compiled (it is data: the harness lists it).
//! Switching a fault on needs the cargo feature `faults`. Without it [`Faults`] is a
//! zero-sized type whose [`Faults::is_on`] is a constant `false` and whose
//! [`Faults::from_names`] rejects every name, so the hooks in the server need no `#[cfg]`
//! and a default build carries no fault at all (the optimiser removes the dead branches).
//!
//! Where each fault acts: the Parley service calls the named hook points of `hooks`
//! (one module per stage: request pipeline, post, thread state, reads); the faults that
//! change what goes on the wire (MCP refusal shape, SSP provider) live in the `wire`
//! middleware. A fault's variant name occurs in the catalogue and in one of those files.

/// Declares the catalogue: variant, kebab-case name, violated requirement IDs, description.
macro_rules! catalogue {
    ($( $variant:ident = $name:literal, [$($req:literal),+ $(,)?], $desc:literal; )+) => {
        /// One seeded fault of the catalogue (see the module documentation).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Fault {
            $( #[doc = $desc] $variant, )+
        }

        impl Fault {
            /// Every fault, in catalogue order.
            pub const ALL: &'static [Fault] = &[$(Fault::$variant),+];

            /// The kebab-case name (`--fault NAME`, `Config::faults`).
            pub fn name(self) -> &'static str {
                match self { $(Fault::$variant => $name,)+ }
            }

            /// The requirement IDs the fault violates (first = primary).
            pub fn requirements(self) -> &'static [&'static str] {
                match self { $(Fault::$variant => &[$($req),+],)+ }
            }

            /// One sentence: what the broken server does.
            pub fn description(self) -> &'static str {
                match self { $(Fault::$variant => $desc,)+ }
            }
        }
    };
}

catalogue! {
    // ---- Parley: envelope (PV-EN) -------------------------------------------------------
    BodyRefusesExactLimit = "body-refuses-exact-limit", ["PV-EN-2", "PV-MF-2"],
        "Off by one at the body limit: a body of exactly 500 characters is refused body_too_long (the manifest still declares 500).";
    BodyAcceptsOneOver = "body-accepts-one-over", ["PV-EN-2", "PV-MF-2"],
        "Off by one at the body limit: a body of 501 characters is accepted.";
    BodyCountsBytes = "body-counts-bytes", ["PV-EN-2"],
        "The body limit counts UTF-8 bytes instead of Unicode scalar values (500 emoji are refused).";
    UnknownFieldAccepted = "unknown-field-accepted", ["PV-EN-1"],
        "Unknown top-level envelope members are silently dropped instead of refused 400 invalid_body.";
    EmptyBodyAccepted = "empty-body-accepted", ["PV-EN-1"],
        "An empty body (\"\") is accepted and stored (the seed: \"un body vide est rejeté avec 400 invalid_body\").";
    KindUnknownAsInvalidBody = "kind-unknown-as-invalid-body", ["PV-EN-3"],
        "An unknown kind is refused with reason invalid_body instead of kind_unknown.";
    ThreadRequiredNotEnforced = "thread-required-not-enforced", ["PV-EN-6"],
        "A non-opening core kind sent without thread and parent opens a new thread instead of 400 thread_required.";
    ParentOutsideThreadAccepted = "parent-outside-thread-accepted", ["PV-EN-5"],
        "A parent that belongs to another thread than `thread` is accepted.";
    ClientIdentityHonoured = "client-identity-honoured", ["PV-EN-4", "PV-ID-1"],
        "A client-sent from.identity is stored as the author's identity (identity spoofing).";
    ExtensionPatternNotEnforced = "extension-pattern-not-enforced", ["PV-EN-7"],
        "from.extension is stored without checking extension_pattern.";
    UnstableThreadNotFound = "unstable-thread-not-found", ["PV-EN-5"],
        "Unstable error codes: an unknown thread is refused with the generic reason not_found instead of thread_not_found.";
    // ---- Parley: state machine (PV-ST) --------------------------------------------------
    ProposedClosedLocks = "proposed-closed-locks", ["PV-ST-4"],
        "A proposed (unconfirmed) closed thread locks like a confirmed one: posts and marks get 409 thread_locked.";
    ConfirmedClosedOpenToHumans = "confirmed-closed-open-to-humans", ["PV-ST-4", "PV-AU-4"],
        "A confirmed closed thread still accepts posts from humans (the lock is treated as an authority rule).";
    LateralAcceptsAnswer = "lateral-accepts-answer", ["PV-ST-3"],
        "A thread in a lateral state accepts an answer and moves to answered.";
    MarkBackwardsAccepted = "mark-backwards-accepted", ["PV-ST-1"],
        "mark to an earlier forward state (decided → answered) is accepted.";
    MarkOpenAccepted = "mark-open-accepted", ["PV-ST-2"],
        "mark {state: open} moves a thread back to open instead of 409 invalid_transition.";
    CreatorMarkConfirmed = "creator-mark-confirmed", ["PV-ST-5"],
        "A state set by the thread's creator (mark/decide/close) is stored as confirmed instead of a proposal.";
    ModelThreadStartsConfirmed = "model-thread-starts-confirmed", ["PV-ST-5"],
        "A thread opened by a model without lock starts as a confirmed open instead of a proposed one.";
    ReopenFromAnyState = "reopen-from-any-state", ["PV-ST-6"],
        "reopen of an answered or decided thread is accepted instead of 409 invalid_transition.";
    ConfirmationWithoutEvent = "confirmation-without-event", ["PV-ST-7"],
        "Confirming a proposed state changes the thread but records no event.";
    LockLabelIsIdentity = "lock-label-is-identity", ["PV-ST-7"],
        "States set by a lock holder are labelled with its identity instead of `KI · <lock label>`.";
    // ---- Parley: authority (PV-AU) ------------------------------------------------------
    ReaderCanPost = "reader-can-post", ["PV-AU-1"],
        "post checks the read right instead of write: a read-only token can post.";
    AnyWriterDecides = "any-writer-decides", ["PV-AU-2"],
        "decide and close are accepted from any writer (no thread authority check on posts).";
    ReopenByAnyWriter = "reopen-by-any-writer", ["PV-AU-3"],
        "Any writer may reopen another's closed thread.";
    CreatorReopensLateral = "creator-reopens-lateral", ["PV-AU-3"],
        "The creator may reopen its own thread from a lateral state (that is reserved to moderation).";
    BodyCheckedBeforeRight = "body-checked-before-right", ["PV-AU-6"],
        "Check order swapped: a post body is validated (400) before the write right (403) is checked.";
    ExtensionGrantsAuthority = "extension-grants-authority", ["PV-AU-5"],
        "Posting from extension `moderator` grants lock authority (rights read from the extension).";
    HumanMarkIsProposal = "human-mark-is-proposal", ["PV-AU-4", "PV-ST-5"],
        "A human's state changes are stored as proposals (origin user but unconfirmed).";
    McpMarkSkipsAuthority = "mcp-mark-skips-authority", ["PV-TR-1", "PV-AU-2"],
        "MCP and HTTP disagree on one authority rule: over MCP, mark needs no thread authority.";
    // ---- Parley: transport and shapes (PV-TR, PV-RS) ------------------------------------
    QuotaNotEnforced = "quota-not-enforced", ["PV-TR-5"],
        "The per-token write quota is never enforced (no 429).";
    RateLimitWithoutRetryAfter = "rate-limit-without-retry-after", ["PV-TR-5"],
        "429 rate_limited is sent without a Retry-After header.";
    PayloadLimitNotEnforced = "payload-limit-not-enforced", ["PV-TR-5"],
        "Requests over request_max_bytes are processed instead of 413 payload_too_large.";
    UnknownTokenAsMissing = "unknown-token-as-missing", ["PV-TR-4"],
        "An unknown bearer token is refused token_missing instead of token_invalid.";
    HttpRefusalNotJson = "http-refusal-not-json", ["PV-TR-3"],
        "HTTP refusals are served with Content-Type text/plain (the body is still the JSON error).";
    NonJsonContentTypeAccepted = "non-json-content-type-accepted", ["PV-RS-4"],
        "A POST body with a non-JSON Content-Type is parsed anyway instead of 415 unsupported_media_type.";
    ManifestDropsMcpBinding = "manifest-drops-mcp-binding", ["PV-TR-1a", "PV-MF-1"],
        "The manifest declares the MCP binding of inbox as null (the operation looks HTTP-only).";
    MessageParentOmittedAtRoot = "message-parent-omitted-at-root", ["PV-RS-2"],
        "A root message is rendered without its `parent` member instead of `parent: null`.";
    PostReturns200 = "post-returns-200", ["PV-RS-1"],
        "A successful post answers 200 instead of 201.";
    McpRefusalAsJsonRpcError = "mcp-refusal-as-jsonrpc-error", ["PV-TR-2"],
        "MCP refusals are sent as JSON-RPC errors instead of tool results with isError: true.";
    UriTooLong500 = "uri-too-long-500", ["PV-TR-6", "PV-TR-3"],
        "A request target over the server's URI limit crashes its handler: 500 (a JSON error body) instead of 414 uri_too_long.";
    // ---- Parley: identity (PV-ID) -------------------------------------------------------
    SelfReplyByIdentity = "self-reply-by-identity", ["PV-ID-2"],
        "Self-reply is checked on the identity alone: extension A may not reply to extension B of the same identity.";
    SelfReplyIgnoresImplicitParent = "self-reply-ignores-implicit-parent", ["PV-ID-2"],
        "Self-reply is checked only against an explicit parent, not the implicit root parent of `thread` alone.";
    SelfReplyBlocksDecide = "self-reply-blocks-decide", ["PV-ID-2"],
        "decide and close are not exempt from the self-reply rule.";
    // ---- Parley: kinds and awaiting (PV-KD, PV-MF) --------------------------------------
    ObjectNotAwaiting = "object-not-awaiting", ["PV-KD-2"],
        "An object is treated as a non-awaiting kind: the thread awaits nobody after it.";
    RefuteAwaitsParent = "refute-awaits-parent", ["PV-KD-2", "PV-RS-3"],
        "A refutation awaits its parent's author instead of the refuted claim's author.";
    ManifestMissesKind = "manifest-misses-kind", ["PV-KD-1", "PV-MF-1"],
        "The manifest lists only eight core kinds (agree is missing) although the server accepts nine.";
    ManifestBodyLimitMismatch = "manifest-body-limit-mismatch", ["PV-MF-2"],
        "The manifest declares body_max_chars 280 while the server enforces 500.";
    // ---- Parley: reading (PV-RD) --------------------------------------------------------
    InboxCursorRepeats = "inbox-cursor-repeats", ["PV-RD-3"],
        "The inbox cursor points before the last returned item: the next page repeats it.";
    InboxCursorSkips = "inbox-cursor-skips", ["PV-RD-3"],
        "A full inbox page's cursor points past the next visible item: it is never returned.";
    InboxShowsLateral = "inbox-shows-lateral", ["PV-RD-3"],
        "The inbox lists threads in a lateral state.";
    InboxShowsOwnExtension = "inbox-shows-own-extension", ["PV-RD-3"],
        "With `extension`, threads whose last message came from the caller's own (identity, extension) are not hidden.";
    ListEventsIgnoresSince = "list-events-ignores-since", ["PV-RD-2"],
        "list_events ignores `since` and always returns every event.";
    ReadThreadFlat = "read-thread-flat", ["PV-RD-1"],
        "read_thread returns the messages as a flat list (every message at the top level, replies empty).";
    // ---- Parley: dialectic (PV-DI) ------------------------------------------------------
    ValidUntilPastAccepted = "valid-until-past-accepted", ["PV-DI-2"],
        "An assert whose valid_until lies in the past is accepted (only the format is checked).";
    RefutedClaimVerifiable = "refuted-claim-verifiable", ["PV-DI-5", "PV-DI-4"],
        "A refuted claim can still be verified (and moves to verified).";
    AuthorAttestsOwnClaim = "author-attests-own-claim", ["PV-DI-3"],
        "The claim's author may attest its own claim.";
    SelfAttestByExtension = "self-attest-by-extension", ["PV-DI-3"],
        "self_attest compares (identity, extension): the author attests its own claim from another extension.";
    VerifyWithoutRight = "verify-without-right", ["PV-DI-4"],
        "verify needs only the write right, not verify.";
    RefuteOfVerifiedRefused = "refute-of-verified-refused", ["PV-DI-5"],
        "A verified claim cannot be refuted (409 invalid_transition) — the Popperian asymmetry is lost.";
    SupersedeAnyClaim = "supersede-any-claim", ["PV-DI-6"],
        "An assert may supersede another identity's claim without lock or human.";
    EvidenceUrlUnchecked = "evidence-url-unchecked", ["PV-DI-1"],
        "Evidence of kind url is not validated (relative or non-http URLs accepted).";
    EvidenceMaxOffByOne = "evidence-max-off-by-one", ["PV-DI-1", "PV-MF-2"],
        "evidence_max + 1 evidence items are accepted.";
    VerifyAddsSupport = "verify-adds-support", ["PV-RS-3"],
        "verify counts towards a claim's support like an attestation.";
    RepeatVerifyWritesEvent = "repeat-verify-writes-event", ["PV-DI-9"],
        "A verify of an already verified claim is treated as a transition: a second status event verified → verified is written.";
    RepeatRefuteWritesEvent = "repeat-refute-writes-event", ["PV-DI-9"],
        "A refute of an already refuted claim is treated as a transition: a second status event refuted → refuted is written.";
    ClaimChangeWithoutEvent = "claim-change-without-event", ["PV-DI-7"],
        "Claim status changes (attest, verify, refute, supersede) record no event.";
    // ---- Parley: only a sequence reveals these (issue 10) --------------------------------
    SecondReopenRefused = "second-reopen-refused", ["PV-ST-6"],
        "A thread that was reopened once refuses every later reopen (409 invalid_transition).";
    ReopenTransfersAuthority = "reopen-transfers-authority", ["PV-AU-2"],
        "After someone else reopened a thread, its creator can no longer mark it (403 thread_authority_missing).";
    ForwardMarkAfterReopenRefused = "forward-mark-after-reopen-refused", ["PV-ST-1"],
        "After a reopen, mark to answered or decided is refused 409 invalid_transition (the old state is remembered).";
    ConfirmAfterReopenIgnored = "confirm-after-reopen-ignored", ["PV-ST-5"],
        "Once a thread was reopened, a lock holder's or human's mark no longer confirms a proposed state.";
    SecondReopenKeepsConfirmation = "second-reopen-keeps-confirmation", ["PV-ST-5"],
        "A model reopening a confirmed state of a thread reopened before leaves the new open confirmed.";
    PostAfterReopenConfirmed = "post-after-reopen-confirmed", ["PV-ST-5"],
        "Once a thread was reopened, a model's answer/decide/close is stored as a confirmed state instead of a proposal.";
    AnswerReproposesConfirmed = "answer-reproposes-confirmed", ["PV-ST-5"],
        "A model's answer/decide/close on a thread confirmed in that state turns it back into a proposal.";
    ReplyToEarlierMessageKeepsAwaiting = "reply-to-earlier-message-keeps-awaiting", ["PV-KD-2"],
        "A reply to a message other than the thread's last one leaves awaiting unchanged.";
    InboxHidesReopenedReplies = "inbox-hides-reopened-replies", ["PV-RD-3"],
        "A reopened thread awaiting a named party (not anyone) never appears in that party's inbox.";
    RelockAfterReopenMissed = "relock-after-reopen-missed", ["PV-ST-4"],
        "Once a thread was reopened, confirming closed again no longer locks it: posts are accepted.";
    ReadThreadStaleAfterReopen = "read-thread-stale-after-reopen", ["PV-ST-6"],
        "read_thread of a thread reopened more than once reports the state before the last reopen until the next state change.";
    ReadThreadDropsDeepReplies = "read-thread-drops-deep-replies", ["PV-RD-1"],
        "read_thread drops replies nested deeper than three levels below the root.";
    ExpiryNeverReported = "expiry-never-reported", ["PV-DI-2"],
        "A claim whose valid_until has passed still reads expired: false (only time reveals it).";
    SupportCappedAtTwo = "support-capped-at-two", ["PV-DI-3"],
        "A claim's support never counts more than two attestations (a third attest is recorded but not counted).";
    SupersedeChainStops = "supersede-chain-stops", ["PV-DI-6"],
        "A claim that itself superseded another cannot be superseded: the assert is accepted, the claim keeps its status.";
    // ---- Parley: only concurrency reveals these (issue 10, concurrent histories) --------
    MarkDecidesOnStaleState = "mark-decides-on-stale-state", ["PV-ST-3", "PV-ST-1", "PV-ST-7"],
        "mark is check-then-act: it decides on the state it read, then writes in a later transaction, so two concurrent marks from one state both succeed (two lateral ends, or a forward mark after a lateral one).";
    PostDecidesOnStaleThread = "post-decides-on-stale-thread", ["PV-ST-7", "PV-ST-1"],
        "post decides its state change on a snapshot of the thread read before its write transaction: two concurrent answers on an open thread both record open → answered (one state change, two events).";
    // ---- SSP: discovery (SSP-DISC) ------------------------------------------------------
    SspPrivateVisibleAnonymously = "ssp-private-visible-anonymously", ["SSP-DISC-2"],
        "Private skills are listed in the anonymous discovery index.";
    SspIndexNotJson = "ssp-index-not-json", ["SSP-DISC-1"],
        "The well-known Skill Index is served with Content-Type text/plain.";
    SspFilterIgnored = "ssp-filter-ignored", ["SSP-DISC-3"],
        "The capability_type filter is ignored: every visible skill is listed.";
    SspDescriptorVersionDrift = "ssp-descriptor-version-drift", ["SSP-DISC-4"],
        "The index entry announces another version than the descriptor it points to.";
    // ---- SSP: invocation (SSP-INV) ------------------------------------------------------
    SspInvoke200 = "ssp-invoke-200", ["SSP-INV-1"],
        "An invocation is answered 200 instead of 202 Accepted.";
    SspWrongSkillExecuted = "ssp-wrong-skill-executed", ["SSP-INV-2"],
        "The endpoint ignores the request's skill_id and runs its own skill (wrong-skill execution).";
    SspStatusGoesBackwards = "ssp-status-goes-backwards", ["SSP-INV-3"],
        "After a terminal state, a later status poll reports running again.";
    SspFailedErrorWithoutMessage = "ssp-failed-error-without-message", ["SSP-ERR-1", "SSP-INV-3"],
        "The error inside a failed InvocationResponse has a code but no message (not the unified shape).";
    SspCompletedAtMissing = "ssp-completed-at-missing", ["SSP-INV-3"],
        "Terminal InvocationResponses carry no timestamps.completed_at.";
    SspResultOutputEarly = "ssp-result-output-early", ["SSP-INV-4"],
        "result_url before completion answers 202 with an `output: null` member (the serializer never skips it).";
    SspUnstableExecutionNotFound = "ssp-unstable-execution-not-found", ["SSP-ERR-3", "SSP-INV-4"],
        "Unstable error codes: an unknown execution is refused with code EXECUTION_NOT_FOUND instead of SKILL_NOT_FOUND.";
    SspTimeoutAsFailed = "ssp-timeout-as-failed", ["SSP-INV-5"],
        "An overrun is reported as status failed instead of timeout.";
    SspContextTimeoutIgnored = "ssp-context-timeout-ignored", ["SSP-INV-5"],
        "context.timeout_ms is ignored: only endpoint.timeout_ms limits an execution.";
    SspExecutionReadableByOthers = "ssp-execution-readable-by-others", ["SSP-INV-6"],
        "A non-public execution is readable with any valid credential, not only the one that created it.";
    SspUnstableAuthCode = "ssp-unstable-auth-code", ["SSP-ERR-3", "SSP-AUTH-2", "SSP-ERR-2"],
        "Unstable error codes: 401 answers carry the code UNAUTHENTICATED instead of AUTH_REQUIRED.";
    // ---- SSP: auth (SSP-AUTH) -----------------------------------------------------------
    SspPublicNeedsCredentials = "ssp-public-needs-credentials", ["SSP-AUTH-1"],
        "A public skill with auth none refuses anonymous invocations with 401.";
    Ssp401PermissionDenied = "ssp-401-permission-denied", ["SSP-ERR-2"],
        "Missing or invalid credentials get 401 with the code PERMISSION_DENIED (one of the seven, but not the seed's code for the condition).";
    SspFailedOwnCode = "ssp-failed-own-code", ["SSP-ERR-3"],
        "A skill that ran and failed reports an error code of its own (SKILL_FAILED), outside the seed's seven.";
    SspMissingScopeAs401 = "ssp-missing-scope-as-401", ["SSP-AUTH-3"],
        "A valid credential lacking the scope gets 401 AUTH_REQUIRED instead of 403 PERMISSION_DENIED.";
    SspApiKeyAnyHeader = "ssp-api-key-any-header", ["SSP-AUTH-4"],
        "The API key is accepted from any header, not only the one the descriptor declares.";
    // ---- SSP: only a sequence (or a combination) reveals these (issue 10) -----------------
    SspTerminalReadableByOthers = "ssp-terminal-readable-by-others", ["SSP-INV-6"],
        "Once a status or result read has shown a non-public execution terminal, any later read with some credential is served as if it came from the creator.";
    SspIdReusedAfterResult = "ssp-id-reused-after-result", ["SSP-INV-7"],
        "After the result of a completed execution has been read (200), the next accepted invocation is answered with that execution's id again.";
    SspStatusChangesAfterResult = "ssp-status-changes-after-result", ["SSP-INV-3"],
        "Once the result of a completed execution has been read (200), its status reads failed with an error (a terminal state changes).";
    SspFilterLeaksPrivate = "ssp-filter-leaks-private", ["SSP-DISC-2"],
        "Anonymous discovery with a capability filter lists the matching private skills (visibility is decided as if authenticated whenever a filter is given).";
    SspResultErrorWhileRunning = "ssp-result-error-while-running", ["SSP-INV-4"],
        "A result read of an execution that will overrun (conform/overrun) answers 500 ENDPOINT_UNREACHABLE while it is still running, instead of 202 without output.";
}

impl Fault {
    /// The fault named `name` (kebab-case), if any.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|f| f.name() == name)
    }

    /// Which protocol the fault breaks: `parley` or `ssp` (from its primary requirement).
    pub fn suite(self) -> &'static str {
        if self.requirements()[0].starts_with("SSP-") {
            "ssp"
        } else {
            "parley"
        }
    }
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a list of fault names cannot be switched on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FaultError {
    /// The name is not in the catalogue.
    #[error("unknown fault {0:?} (see reference_impl::faults::Fault::ALL)")]
    Unknown(String),
    /// The server was built without the cargo feature `faults`.
    #[error("fault {0:?} requested, but this build has no faults (cargo feature `faults`)")]
    NotBuilt(String),
}

pub(crate) mod hooks;
#[cfg(feature = "faults")]
mod wire;

/// Wraps the whole router with the faults that live at the HTTP boundary (the MCP refusal
/// shape and the SSP provider's wire behaviour; see `faults/wire.rs`). Returns `router`
/// unchanged when none of them is on — always, in a build without the `faults` feature.
#[cfg(feature = "faults")]
pub fn layer(router: axum::Router, faults: Faults, config: &crate::config::Config) -> axum::Router {
    wire::layer(router, faults, config)
}

/// Wraps the whole router with the boundary faults: the identity in this build (no faults).
#[cfg(not(feature = "faults"))]
pub fn layer(
    router: axum::Router,
    _faults: Faults,
    _config: &crate::config::Config,
) -> axum::Router {
    router
}

// One bit per fault; the catalogue must stay below 128 entries.
const _: () = assert!(Fault::ALL.len() <= 128);

/// The faults switched on for one server instance (cheap to copy).
#[cfg(feature = "faults")]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Faults {
    on: u128,
}

/// The faults switched on for one server instance: none, in a build without `faults`.
#[cfg(not(feature = "faults"))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Faults;

#[cfg(feature = "faults")]
impl Faults {
    /// No fault.
    pub const fn none() -> Self {
        Self { on: 0 }
    }

    /// Switches on the named faults; an unknown name is an error (a typo must not silently
    /// measure the fault-free server).
    pub fn from_names<S: AsRef<str>>(names: &[S]) -> Result<Self, FaultError> {
        let mut on = 0u128;
        for name in names {
            let name = name.as_ref();
            let fault = Fault::from_name(name).ok_or_else(|| FaultError::Unknown(name.into()))?;
            on |= 1u128 << (fault as u32);
        }
        Ok(Self { on })
    }

    /// True when `fault` is switched on.
    #[inline]
    pub const fn is_on(&self, fault: Fault) -> bool {
        self.on & (1u128 << (fault as u32)) != 0
    }

    /// The faults switched on, in catalogue order.
    pub fn enabled(&self) -> Vec<Fault> {
        Fault::ALL
            .iter()
            .copied()
            .filter(|f| self.is_on(*f))
            .collect()
    }
}

#[cfg(not(feature = "faults"))]
impl Faults {
    /// No fault.
    pub const fn none() -> Self {
        Self
    }

    /// Rejects every name: this build carries no faults. An empty list is fine.
    pub fn from_names<S: AsRef<str>>(names: &[S]) -> Result<Self, FaultError> {
        match names.first() {
            None => Ok(Self),
            Some(name) => {
                let name = name.as_ref();
                Err(match Fault::from_name(name) {
                    Some(_) => FaultError::NotBuilt(name.into()),
                    None => FaultError::Unknown(name.into()),
                })
            }
        }
    }

    /// Always false: this build carries no faults.
    #[inline]
    pub const fn is_on(&self, _fault: Fault) -> bool {
        false
    }

    /// Always empty.
    pub fn enabled(&self) -> Vec<Fault> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalogue_is_well_formed() {
        assert!(
            Fault::ALL.len() >= 40,
            "issue 6 asks for at least 40 faults"
        );
        let mut names = std::collections::HashSet::new();
        for f in Fault::ALL {
            assert!(names.insert(f.name()), "duplicate name {}", f.name());
            assert!(
                f.name()
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                "{} is not kebab-case",
                f.name()
            );
            assert_eq!(Fault::from_name(f.name()), Some(*f));
            assert!(!f.requirements().is_empty());
            for r in f.requirements() {
                assert!(r.starts_with("PV-") || r.starts_with("SSP-"), "{r}");
            }
            assert!(!f.description().is_empty());
        }
    }

    #[cfg(feature = "faults")]
    #[test]
    fn names_switch_faults_on() {
        let f = Faults::from_names(&["body-counts-bytes", "ssp-invoke-200"]).unwrap_or_default();
        assert!(f.is_on(Fault::BodyCountsBytes) && f.is_on(Fault::SspInvoke200));
        assert!(!f.is_on(Fault::ReaderCanPost));
        assert_eq!(
            f.enabled(),
            vec![Fault::BodyCountsBytes, Fault::SspInvoke200]
        );
        assert_eq!(
            Faults::from_names(&["nope"]),
            Err(FaultError::Unknown("nope".into()))
        );
        assert!(!Faults::none().is_on(Fault::BodyCountsBytes));
    }

    #[cfg(not(feature = "faults"))]
    #[test]
    fn default_build_has_no_faults() {
        assert_eq!(
            Faults::from_names(&["body-counts-bytes"]),
            Err(FaultError::NotBuilt("body-counts-bytes".into()))
        );
        assert!(Faults::from_names::<&str>(&[]).is_ok());
        assert!(!Faults::none().is_on(Fault::BodyCountsBytes));
        assert_eq!(std::mem::size_of::<Faults>(), 0);
    }
}
