from dsl import *

DIA = ["dialectic"]
EVD = [{"kind": "url", "ref": "https://example.org/evidence/1"}]
EVD2 = [{"kind": "log", "ref": "ci run 4711, line 12"}]


def V(vid, reqs, title, steps_fn, area="dialectic", **kw):
    CUR["id"] = vid
    kw.setdefault("needs", DIA)
    return vector(area, vid, reqs, title, steps_fn(), **kw)


def assert_(as_="agent_a", c="c", t="t", r="r", thread=None, parent=None, ext=None, expect=None, evidence=EVD, **extra):
    e = env("assert", thread=thread, parent=parent, ext=ext, **extra)
    if evidence is not None:
        e["evidence"] = evidence
    cap = {c: "/message/claim"}
    if thread is None and parent is None:
        cap.update({t: "/thread/id", r: "/message/id"})
    return post(as_, e, expect or created(), capture=cap if (expect is None or "status" in expect) else None)


def act(as_, kind, c, thread="$t", parent=None, ext=None, expect=None, evidence=EVD2, capture=None, **extra):
    e = env(kind, thread=thread, parent=parent, ext=ext, **extra)
    if c is not None:
        e["claim"] = c
    if evidence is not None:
        e["evidence"] = evidence
    return post(as_, e, expect or created(), capture=capture)


def status(c, st, as_="reader", **more):
    return claim(as_, c, dict({"id": c, "status": st}, **more))


# ================================================================ PV-DI-2 assert
V("dialectic/assert-opens-thread-with-unverified-claim", ["PV-DI-2", "PV-EN-6", "PV-KD-2"],
  "An assert without thread opens a thread (awaiting anyone but the author) and creates an unverified claim attached to its message",
  lambda: [assert_(expect=created({"message": {"kind": "assert", "claim": rx(CL), "evidence": EVD},
                                   "thread": {"state": "open", "awaiting": {"any": True, "except": party("agent_a")}}})),
           status("$c", "unverified", message="$r", thread="$t", author=party("agent_a"), support=0)])
V("dialectic/assert-in-existing-thread", ["PV-DI-2", "PV-KD-2"],
  "An assert inside an existing thread creates a claim there, awaits the parent's author and leaves the state alone",
  lambda: [open_thread(t="t", r="r"),
           assert_("agent_b", thread="$t", expect=created({"message": {"thread": "$t", "parent": "$r"},
                                                           "thread": {"state": "open", "awaiting": party("agent_a")}})),
           status("$c", "unverified", thread="$t")])
V("dialectic/valid-until-future", ["PV-DI-2", "PV-DI-7"],
  "An assert with a future valid_until stores it and the claim is not expired",
  lambda: [assert_(valid_until={"$time_from_now": 86400}),
           status("$c", "unverified", valid_until={"$type": "string"}, expired=False)])
V("dialectic/valid-until-absent", ["PV-DI-2", "PV-DI-7"],
  "Without valid_until the claim reads valid_until null, expired false",
  lambda: [assert_(), status("$c", "unverified", valid_until=None, expired=False)])
V("dialectic/valid-until-past-refused", ["PV-DI-2"],
  "valid_until must lie in the future: a past timestamp is refused 400 invalid_body",
  lambda: [assert_(valid_until={"$time_from_now": -86400}, expect=INVALID)])
V("dialectic/valid-until-not-rfc3339-refused", ["PV-DI-2"],
  "valid_until that is not RFC 3339 is refused 400 invalid_body",
  lambda: [assert_(valid_until="next tuesday", expect=INVALID)])

# ================================================================ PV-DI-1 evidence
ALL_KINDS = [{"kind": "url", "ref": "https://example.org/a"}, {"kind": "hash", "ref": "sha256:" + "ab" * 32},
             {"kind": "artifact", "ref": "build/output.tar"}, {"kind": "commit", "ref": "0123abc"},
             {"kind": "log", "ref": "log line 7"}, {"kind": "reproducer", "ref": "cargo test -p x"},
             {"kind": "note", "ref": "see the thread", "note": "a note on the note"}, {"kind": "other", "ref": "anything"}]
EVMAX = "$limits.evidence_max"
V("dialectic/evidence-all-eight-kinds", ["PV-DI-1", "PV-DI-7"],
  "Each of the eight evidence kinds is accepted (one assert per kind, so any declared evidence_max ≥ 1 holds them) and read back",
  lambda: [step for e in ALL_KINDS
           for step in (assert_(evidence=[e]), status("$c", "unverified", evidence=[{"kind": e["kind"], "ref": e["ref"]}]))])
V("dialectic/evidence-at-max-accepted", ["PV-DI-1", "PV-DI-7", "PV-MF-2"],
  "Exactly the declared evidence_max items (8 on the reference), cycling through the eight kinds, are accepted and all read back",
  # PV-DI-7 lists `evidence[]` without fixing an order: the count is checked, not the order.
  lambda: [assert_(evidence={"$take": {"items": ALL_KINDS, "n": EVMAX}}),
           status("$c", "unverified", evidence={"$len": EVMAX})])
GOOD = [("url-http", {"kind": "url", "ref": "http://example.org"}),
        ("commit-7-hex", {"kind": "commit", "ref": "abcdef1"}),
        ("commit-40-hex", {"kind": "commit", "ref": "0123456789abcdef0123456789abcdef01234567"}),
        ("hash-sha1", {"kind": "hash", "ref": "sha1:da39a3ee5e6b4b0d3255bfef95601890afd80709"})]
for slug, ev in GOOD:
    V(f"dialectic/evidence-valid-{slug}", ["PV-DI-1"],
      f"Evidence {ev['kind']} {ev['ref']!r} is valid and accepted",
      lambda ev=ev: [assert_(evidence=[ev])])
BAD = [("url-relative", {"kind": "url", "ref": "/docs/page"}, "a relative URL"),
       ("url-ftp", {"kind": "url", "ref": "ftp://example.org/file"}, "an ftp URL (not http(s))"),
       ("url-no-scheme", {"kind": "url", "ref": "example.org/page"}, "a URL without scheme"),
       ("url-javascript", {"kind": "url", "ref": "javascript:alert(1)"}, "a javascript: URL"),
       ("hash-no-algo", {"kind": "hash", "ref": "deadbeefdeadbeef"}, "a hash without <algo>:"),
       ("hash-not-hex", {"kind": "hash", "ref": "sha256:not-hex-at-all"}, "a hash whose digest is not hex"),
       ("hash-empty-digest", {"kind": "hash", "ref": "sha256:"}, "a hash with an empty digest"),
       ("commit-6-hex", {"kind": "commit", "ref": "abcdef"}, "a 6-character commit"),
       ("commit-41-hex", {"kind": "commit", "ref": "0123456789abcdef0123456789abcdef012345678"}, "a 41-character commit"),
       ("commit-not-hex", {"kind": "commit", "ref": "ghijklm"}, "a commit with non-hex characters"),
       ("unknown-kind", {"kind": "opinion", "ref": "I am sure"}, "an evidence kind outside the eight (an opinion is no proof)")]
for slug, ev, what in BAD:
    V(f"dialectic/evidence-invalid-{slug}", ["PV-DI-1"],
      f"Evidence with {what} is refused 400 evidence_invalid",
      lambda ev=ev: [assert_(evidence=[{"kind": "note", "ref": "fine"}, ev], expect=EV_INVALID)])
V("dialectic/evidence-invalid-on-attest", ["PV-DI-1", "PV-DI-3"],
  "Evidence is validated on attest too: a relative url is 400 evidence_invalid and the claim stays unverified",
  lambda: [assert_(), act("agent_b", "attest", "$c", evidence=[{"kind": "url", "ref": "not a url"}], expect=EV_INVALID),
           status("$c", "unverified", support=0)])
V("dialectic/evidence-item-unknown-field", ["PV-DI-1", "PV-EN-1"],
  "An unknown member in an evidence item is refused 400 invalid_body",
  lambda: [assert_(evidence=[{"kind": "note", "ref": "x", "weight": 0.9}], expect=INVALID)])
V("dialectic/evidence-not-array", ["PV-DI-1", "PV-EN-1"],
  "evidence given as an object instead of an array is refused 400 invalid_body",
  lambda: [assert_(evidence={"kind": "note", "ref": "x"}, expect=INVALID)])
V("dialectic/evidence-item-without-ref", ["PV-DI-1"],
  "An evidence item without ref is refused 400",
  lambda: [assert_(evidence=[{"kind": "note"}], expect=one_of(INVALID, EV_INVALID))])
REFMAX = manifest("anonymous", {"limits": {"evidence_ref_max_chars": {"$type": "integer"}}}, capture={"refmax": "/limits/evidence_ref_max_chars"})
V("dialectic/evidence-ref-at-max-accepted", ["PV-DI-1", "PV-MF-2"],
  "A ref of exactly the declared evidence_ref_max_chars (1024 on the reference), in emoji, is accepted",
  lambda: [REFMAX, assert_(evidence=[{"kind": "note", "ref": {"$repeat": {"s": "🔎", "n": "$refmax"}}}])])
V("dialectic/evidence-ref-over-max-refused", ["PV-DI-1", "PV-MF-2"],
  "A ref one character over the declared evidence_ref_max_chars is refused 400",
  lambda: [REFMAX, assert_(evidence=[{"kind": "note", "ref": {"$concat": [{"$repeat": {"s": "r", "n": "$refmax"}}, "r"]}}],
                           expect=one_of(EV_INVALID, INVALID))])
V("dialectic/evidence-nine-items-refused", ["PV-DI-1", "PV-MF-2"],
  "evidence_max + 1 evidence items (nine on the reference) are refused 400 evidence_required",
  lambda: [assert_(evidence={"$take": {"items": [{"kind": "note", "ref": f"item {i}"} for i in range(9)],
                                       "n": {"$sum": [EVMAX, 1]}}}, expect=EV_REQUIRED)])
V("dialectic/evidence-empty-array-refused", ["PV-DI-1"],
  "An assert with evidence [] is refused 400 evidence_required",
  lambda: [assert_(evidence=[], expect=EV_REQUIRED)])
V("dialectic/assert-without-evidence-refused", ["PV-DI-1"],
  "An assert without evidence is refused 400 evidence_required",
  lambda: [assert_(evidence=None, expect=EV_REQUIRED)])
for k, who in [("attest", "agent_b"), ("refute", "agent_b"), ("verify", "verifier")]:
    V(f"dialectic/{k}-without-evidence-refused", ["PV-DI-1"],
      f"{k} without evidence is refused 400 evidence_required and the claim is unchanged",
      lambda k=k, who=who: [assert_(), act(who, k, "$c", evidence=None, expect=EV_REQUIRED), status("$c", "unverified")])

# ================================================================ PV-DI-3 attest
V("dialectic/attest-supports", ["PV-DI-3", "PV-DI-7"],
  "An attest by another participant moves unverified to supported with support 1 and one attestation",
  lambda: [assert_(), act("agent_b", "attest", "$c", expect=created({"message": {"kind": "attest", "claim": "$c"}})),
           status("$c", "supported", support=1, attestations={"$len": 1})])
V("dialectic/further-attests-add-support", ["PV-DI-3"],
  "Further attests by others keep supported and add support (2 attests → support 2)",
  lambda: [assert_(), act("agent_b", "attest", "$c"), act("moderator", "attest", "$c"),
           status("$c", "supported", support=2, attestations={"$len": 2})])
V("dialectic/self-attest-refused", ["PV-DI-3", "PV-AU-6"],
  "The claim's author attesting its own claim is 403 self_attest (before the 409 self_reply that would also apply)",
  lambda: [assert_(), act("agent_a", "attest", "$c", expect=SELF_ATTEST), status("$c", "unverified", support=0)])
V("dialectic/self-attest-other-extension-refused", ["PV-DI-3"],
  "The author attesting its own claim from another extension is still 403 self_attest (the author is the identity)",
  lambda: [assert_(ext="a"), act("agent_a", "attest", "$c", ext="b", expect=SELF_ATTEST)])
V("dialectic/attest-refuted-refused", ["PV-DI-3", "PV-DI-5"],
  "Attesting a refuted claim is 409 invalid_transition (nothing leaves refuted)",
  lambda: [assert_(), act("moderator", "refute", "$c"), act("agent_b", "attest", "$c", expect=TRANSITION),
           status("$c", "refuted")])
V("dialectic/attest-superseded-refused", ["PV-DI-3", "PV-DI-6"],
  "Attesting a superseded claim is 409 invalid_transition",
  lambda: [assert_(), assert_(c="c2", t="t2", r="r2", supersedes=["$c"]),
           act("agent_b", "attest", "$c", expect=TRANSITION), status("$c", "superseded")])
V("dialectic/attest-unknown-claim", ["PV-DI-3", "PV-DI-7"],
  "Attesting an unknown claim is 404 claim_not_found",
  lambda: [assert_(), act("agent_b", "attest", "cl_987654321", expect=CLAIM_NF)])
V("dialectic/attest-without-claim-refused", ["PV-DI-3", "PV-EN-1"],
  "An attest without a claim is refused 400 invalid_body",
  lambda: [assert_(), act("agent_b", "attest", None, expect=INVALID)])
V("dialectic/attest-by-reader-refused", ["PV-DI-3", "PV-AU-1"],
  "A read-only token attesting is 403 token_right_missing",
  lambda: [assert_(), act("reader", "attest", "$c", expect=RIGHT_MISSING)])
V("dialectic/self-attest-before-invalid-transition", ["PV-DI-3", "PV-AU-6"],
  "The author attesting its own refuted claim gets 403 self_attest before 409 invalid_transition",
  lambda: [assert_(), act("agent_b", "refute", "$c"), act("agent_a", "attest", "$c", ext="z", expect=SELF_ATTEST)])

# ================================================================ PV-DI-4 verify
V("dialectic/verify-unverified", ["PV-DI-4"],
  "The verifier verifies an unverified claim: verified",
  lambda: [assert_(), act("verifier", "verify", "$c", expect=created({"message": {"kind": "verify", "claim": "$c"}})),
           status("$c", "verified")])
V("dialectic/verify-supported", ["PV-DI-4", "PV-RS-3"],
  "The verifier verifies a supported claim: verified, and support stays 1 (verify is no attestation)",
  lambda: [assert_(), act("agent_b", "attest", "$c"), act("verifier", "verify", "$c"),
           status("$c", "verified", support=1)])
V("dialectic/verify-by-human", ["PV-DI-4", "PV-AU-4"],
  "The human may verify without an explicit verify right: verified",
  lambda: [assert_(), act("human", "verify", "$c"), status("$c", "verified")])
V("dialectic/verify-without-right-refused", ["PV-DI-4", "PV-AU-1"],
  "A writer without the verify right verifying is 403 token_right_missing and the claim stays unverified",
  lambda: [assert_(), act("agent_b", "verify", "$c", expect=RIGHT_MISSING), status("$c", "unverified")])
V("dialectic/verify-lock-is-not-verify", ["PV-DI-4"],
  "The lock right is not the verify right: the moderator verifying is 403 token_right_missing",
  lambda: [assert_(), act("moderator", "verify", "$c", expect=RIGHT_MISSING)])
V("dialectic/verify-own-claim-refused", ["PV-DI-4"],
  "The verifier verifying its own claim (even from another extension) is 403 self_attest",
  lambda: [assert_("verifier", ext="v1"), act("verifier", "verify", "$c", ext="v2", expect=SELF_ATTEST),
           status("$c", "unverified")])
V("dialectic/verify-refuted-refused", ["PV-DI-4", "PV-DI-5"],
  "Verifying a refuted claim is 409 invalid_transition",
  lambda: [assert_(), act("agent_b", "refute", "$c"), act("verifier", "verify", "$c", expect=TRANSITION),
           status("$c", "refuted")])
V("dialectic/verify-superseded-refused", ["PV-DI-4", "PV-DI-6"],
  "Verifying a superseded claim is 409 invalid_transition",
  lambda: [assert_(), assert_(c="c2", t="t2", r="r2", supersedes=["$c"]),
           act("verifier", "verify", "$c", expect=TRANSITION)])
V("dialectic/verify-unknown-claim", ["PV-DI-4"],
  "The verifier verifying an unknown claim gets 404 claim_not_found",
  lambda: [assert_(), act("verifier", "verify", "cl_987654321", expect=CLAIM_NF)])
V("dialectic/order-verify-right-before-not-found", ["PV-AU-6", "PV-DI-4"],
  "A writer without verify right verifying an unknown claim gets 403 token_right_missing before 404 (the kind is read for the right check)",
  lambda: [assert_(), act("agent_b", "verify", "cl_987654321", expect=RIGHT_MISSING)])
V("dialectic/order-verify-right-before-body", ["PV-AU-6", "PV-DI-4"],
  "A writer without verify right verifying with no evidence and an unknown field gets 403 before 400",
  lambda: [assert_(), act("agent_b", "verify", "$c", evidence=None, expect=RIGHT_MISSING, confidence=1)])

# ================================================================ PV-DI-5 refute
V("dialectic/refute-unverified", ["PV-DI-5", "PV-RS-3"],
  "A refute with evidence moves an unverified claim to refuted and awaits the claim's author",
  lambda: [assert_(), act("agent_b", "refute", "$c", expect=created({"thread": {"awaiting": party("agent_a")}})),
           status("$c", "refuted", refutations={"$len": 1})])
V("dialectic/refute-supported", ["PV-DI-5"],
  "A refute moves a supported claim to refuted",
  lambda: [assert_(), act("agent_b", "attest", "$c"), act("moderator", "refute", "$c"), status("$c", "refuted")])
V("dialectic/refute-verified-popper", ["PV-DI-5"],
  "Popperian asymmetry: a proven refutation topples a claim already verified",
  lambda: [assert_(), act("agent_b", "attest", "$c"), act("verifier", "verify", "$c"), status("$c", "verified"),
           act("agent_b", "refute", "$c", evidence=[{"kind": "reproducer", "ref": "run ./repro.sh: prints 41, not 42"}]),
           status("$c", "refuted")])
V("dialectic/refuted-stays-refuted-under-supersede", ["PV-DI-5", "PV-DI-6"],
  "Nothing leaves refuted: superseding a refuted claim leaves it refuted",
  lambda: [assert_(), act("agent_b", "refute", "$c"), assert_(c="c2", t="t2", r="r2", supersedes=["$c"]),
           status("$c", "refuted")])
V("dialectic/refute-awaits-claim-author-not-parent", ["PV-DI-5", "PV-KD-2", "PV-RS-3"],
  "A refute replying to agent_b's message awaits the refuted claim's author (agent_a), not the parent's author",
  lambda: [assert_(), reply("agent_b", "inform", thread="$t", capture={"m": "/message/id"}),
           act("moderator", "refute", "$c", thread=None, parent="$m",
               expect=created({"thread": {"awaiting": party("agent_a")}}))])

# ================================================================ PV-DI-6 supersede
V("dialectic/supersede-own-claim", ["PV-DI-6", "PV-DI-7"],
  "An assert with supersedes [own claim] marks it superseded; both claims link each other",
  lambda: [assert_(), assert_(c="c2", t="t2", r="r2", supersedes=["$c"]),
           status("$c", "superseded", superseded_by="$c2"),
           status("$c2", "unverified", supersedes=["$c"], superseded_by=None)])
V("dialectic/supersede-own-claim-other-extension", ["PV-DI-6"],
  "The same identity from another extension may supersede its claim",
  lambda: [assert_(ext="a"), assert_(c="c2", t="t2", r="r2", ext="b", supersedes=["$c"]), status("$c", "superseded")])
V("dialectic/supersede-verified", ["PV-DI-6"],
  "A verified claim can be superseded by its author's newer claim",
  lambda: [assert_(), act("verifier", "verify", "$c"), assert_(c="c2", t="t2", r="r2", supersedes=["$c"]),
           status("$c", "superseded")])
V("dialectic/supersede-foreign-claim-refused", ["PV-DI-6"],
  "A writer superseding another identity's claim is 403 thread_authority_missing and the claim is untouched",
  lambda: [assert_(), assert_("agent_b", c="c2", t="t2", r="r2", supersedes=["$c"], expect=AUTHORITY),
           status("$c", "unverified", superseded_by=None)])
V("dialectic/supersede-foreign-claim-by-moderator", ["PV-DI-6"],
  "A lock holder may supersede any claim",
  lambda: [assert_(), assert_("moderator", c="c2", t="t2", r="r2", supersedes=["$c"]), status("$c", "superseded", superseded_by="$c2")])
V("dialectic/supersede-foreign-claim-by-human", ["PV-DI-6", "PV-AU-4"],
  "The human may supersede any claim",
  lambda: [assert_(), assert_("human", c="c2", t="t2", r="r2", supersedes=["$c"]), status("$c", "superseded")])
V("dialectic/supersede-unknown-claim", ["PV-DI-6"],
  "supersedes naming an unknown claim is 404 claim_not_found",
  lambda: [assert_(supersedes=["cl_987654321"], expect=CLAIM_NF)])
V("dialectic/supersedes-not-array", ["PV-DI-6", "PV-EN-1"],
  "supersedes given as a string is refused 400 invalid_body",
  lambda: [assert_(), assert_(c="c2", t="t2", r="r2", supersedes="$c", expect=INVALID)])

# ================================================================ PV-DI-7 read_claim, claim events
V("dialectic/read-claim-shape", ["PV-DI-7", "PV-RS-2"],
  "read_claim returns every member of the Claim shape",
  lambda: [assert_(),
           claim("reader", "$c", {"id": "$c", "thread": "$t", "message": "$r", "author": party("agent_a"), "status": "unverified",
                                  "support": 0, "evidence": EVD, "attestations": [], "refutations": [], "supersedes": [],
                                  "superseded_by": None, "valid_until": None, "expired": False})])
V("dialectic/read-claim-unknown", ["PV-DI-7"],
  "read_claim of an unknown claim is 404 claim_not_found",
  lambda: [claim("agent_a", "cl_987654321", expect=CLAIM_NF)])
V("dialectic/read-claim-anonymous", ["PV-DI-7", "PV-TR-4"],
  "read_claim without a token is 401 token_missing",
  lambda: [assert_(), claim("anonymous", "$c", expect=TOKEN_MISSING)])
V("dialectic/claim-status-changes-are-events", ["PV-DI-7", "PV-ST-7"],
  "attest, verify and refute each add a claim event (subject claim) to the thread's events",
  lambda: [assert_(), act("agent_b", "attest", "$c"), act("verifier", "verify", "$c"), act("moderator", "refute", "$c"),
           events("reader", "$t", {"events": {"$ordered": [
               {"subject": "claim", "claim": "$c", "from_state": "unverified", "to_state": "supported", "id": rx(EV)},
               {"subject": "claim", "claim": "$c", "from_state": "supported", "to_state": "verified"},
               {"subject": "claim", "claim": "$c", "from_state": "verified", "to_state": "refuted",
                "actor": party("moderator")}]}})])
V("dialectic/supersede-is-an-event", ["PV-DI-7", "PV-DI-6"],
  "Superseding adds a claim event to the superseded claim's thread",
  lambda: [assert_(), assert_(c="c2", t="t2", r="r2", supersedes=["$c"]),
           events("reader", "$t", {"events": {"$contains": [{"subject": "claim", "claim": "$c", "to_state": "superseded"}]}})])
# ================================================================ PV-DI-9 repeats
# "the server either accepts it — the message is stored, a refute is appended to
# refutations[], the claim's status and support do not change, no claim status event is
# written — or refuses it 409 invalid_transition. Both conform (MAY, per act)." Either way
# the thread's events after the repeat are exactly those before it.
V("dialectic/verify-twice-no-second-event", ["PV-DI-9", "PV-DI-4", "PV-DI-7"],
  "A repeat verify: accepted or 409, never a second status event",
  lambda: [assert_(), act("agent_b", "attest", "$c"), act("verifier", "verify", "$c"),
           claim("reader", "$c", {"status": "verified"}, capture={"sup": "/support"}),
           events("reader", "$t", capture={"ev": "/events"}),
           act("verifier", "verify", "$c", expect=one_of(created(), TRANSITION)),
           events("reader", "$t", {"events": "$ev"}),
           status("$c", "verified", support="$sup")])
V("dialectic/refute-twice-no-second-event", ["PV-DI-9", "PV-DI-5", "PV-DI-7"],
  "A repeat refute: accepted or 409, never a second status event",
  lambda: [assert_(), act("moderator", "refute", "$c"),
           events("reader", "$t", capture={"ev": "/events"}),
           act("agent_b", "refute", "$c", expect=one_of(created(), TRANSITION)),
           events("reader", "$t", {"events": "$ev"}),
           claim("reader", "$c", {"status": "refuted",
                                  "refutations": {"$one_of": [{"$len": 1}, {"$len": 2}]}})])
V("dialectic/attest-awaits-nobody", ["PV-RS-3", "PV-KD-2"],
  "attest and verify do not await a reply: after each, awaiting is null",
  lambda: [assert_(), act("agent_b", "attest", "$c", expect=created({"thread": {"awaiting": None}})),
           act("verifier", "verify", "$c", expect=created({"thread": {"awaiting": None}}))])
V("dialectic/attest-on-verified-stays-verified", ["PV-DI-3", "PV-DI-4"],
  "An attest on a verified claim adds support but never moves the claim back to supported",
  lambda: [assert_(), act("verifier", "verify", "$c"), act("agent_b", "attest", "$c"),
           status("$c", "verified", support=1)])
