from dsl import *


def V(vid, reqs, title, steps_fn, **kw):
    CUR["id"] = vid
    return vector("envelope", vid, reqs, title, steps_fn(), **kw)


def rep(s, n):
    return {"$repeat": {"s": s, "n": n}}


def cat(*parts):
    return {"$concat": list(parts)}


# ---------------------------------------------------------------- PV-EN-2 body length
# Every boundary is written against 500, whatever the manifest declares: PV-MF-2 makes
# body_max_chars "the one limit that is not the server's to choose" (seed « enveloppe »:
# "un corps d'au plus 500 caractères"); a declared other value fails manifest/limits.
L = 500


def plus(n):
    return L + n


def fill(s, chars):
    """Exactly `chars` code points: whole copies of `s`, padded with "a"."""
    return {"$fill": {"s": s, "chars": chars}}


BOUNDARY = [
    # (slug, accepted body, refused body, what it catches)
    ("ascii", fill("a", L), fill("a", plus(1)), "an off-by-one on the declared limit"),
    ("emoji", fill("😀", L), fill("😀", plus(1)),
     "counting bytes (4 per emoji) or UTF-16 units (2 per emoji) instead of code points"),
    ("cjk", fill("漢", L), fill("漢", plus(1)), "counting UTF-8 bytes (3 per CJK character) instead of code points"),
    ("combining", fill("e\u0301", L), fill("e\u0301", plus(1)),
     "counting grapheme clusters (é built from e + U+0301 is 2 code points)"),
    ("zwj", fill("👨\u200d👩\u200d👧", L), fill("👨\u200d👩\u200d👧", plus(1)),
     "counting graphemes or bytes on ZWJ sequences (one family is 5 code points)"),
]
for slug, good, bad, bug in BOUNDARY:
    V(f"envelope/body-500-{slug}-accepted", ["PV-EN-2", "PV-MF-2"],
      f"A body of exactly 500 code points (body_max_chars, fixed by the seed; {slug}) is accepted and stored intact (catches {bug})",
      # The boundary is the declared limit: missing it breaks PV-EN-2 and PV-MF-2 alike.
      lambda good=good: [on(post("agent_a", env("ask", b=good),
                                 created({"message": {"body": good, "kind": "ask"}}),
                                 capture={"t": "/thread/id"}), "PV-EN-2", "PV-MF-2"),
                         read("agent_a", "$t", {"messages": [{"body": good}]})])
    V(f"envelope/body-501-{slug}-refused", ["PV-EN-2", "PV-MF-2"],
      f"A body of 501 code points (body_max_chars + 1; {slug}) is refused body_too_long (catches {bug})",
      lambda bad=bad: [on(post("agent_a", env("ask", b=bad), TOO_LONG), "PV-EN-2", "PV-MF-2")])

V("envelope/body-251-emoji-accepted", ["PV-EN-2"],
  "body_max_chars − 1 emoji (almost twice as many UTF-16 units as the limit) are accepted: the limit counts code points, not UTF-16 units",
  lambda: [post("agent_a", env("ask", b=fill("😀", plus(-1))), created({"message": {"body": {"$len": plus(-1)}}}))])
V("envelope/body-600-combining-refused", ["PV-EN-2"],
  "é written e + U+0301 up to body_max_chars + 100 code points (fewer graphemes than the limit) are refused: a grapheme counter would accept them",
  lambda: [post("agent_a", env("ask", b=fill("e\u0301", plus(100))), TOO_LONG)])
V("envelope/body-499-ascii-plus-emoji-accepted", ["PV-EN-2"],
  "body_max_chars − 1 ASCII letters + 1 emoji (exactly the limit in code points, 3 bytes over it) are accepted",
  lambda: [post("agent_a", env("ask", b=cat(fill("a", plus(-1)), "😀")), created())])
V("envelope/body-500-plus-combining-mark-refused", ["PV-EN-2"],
  "body_max_chars letters followed by one combining mark (one code point over, as many graphemes as the limit) are refused",
  lambda: [post("agent_a", env("ask", b=cat(fill("a", L), "\u0301")), TOO_LONG)])
V("envelope/body-501-reply-refused", ["PV-EN-2"],
  "The limit also binds replies: an answer of body_max_chars + 1 CJK characters is refused body_too_long and the thread stays open",
  lambda: [open_thread(),
           reply("agent_b", "answer", thread="$t", b=fill("語", plus(1)), expect=TOO_LONG),
           read("agent_b", "$t", {"thread": {"state": "open"}, "messages": [{"replies": []}]})])
V("envelope/body-500-reply-accepted", ["PV-EN-2"],
  "An answer of exactly body_max_chars emoji is accepted (a server checking bytes on replies would refuse it)",
  lambda: [open_thread(),
           reply("agent_b", "answer", thread="$t", b=fill("🎉", L), expect=created({"message": {"body": {"$len": L}}}))])
V("envelope/body-one-char-accepted", ["PV-EN-2", "PV-EN-1"],
  "A one-character body is accepted (the minimum is one non-blank character)",
  lambda: [post("agent_a", env("ask", b="?"), created({"message": {"body": "?"}}))])

# ---------------------------------------------------------------- PV-EN-1 invalid_body
INVALID_OPEN = [
    ("missing-kind", "missing kind is invalid_body, not kind_unknown", {"body": "x"}),
    ("missing-body", "missing body", {"kind": "ask"}),
    ("empty-body", "empty body", {"kind": "ask", "body": ""}),
    ("null-body", "body null", {"kind": "ask", "body": None}),
    ("number-body", "body of JSON type number", {"kind": "ask", "body": 42}),
    ("array-body", "body of JSON type array", {"kind": "ask", "body": ["a", "b"]}),
    ("object-body", "body of JSON type object", {"kind": "ask", "body": {"text": "hi"}}),
    ("number-kind", "kind of JSON type number", {"kind": 7, "body": "x"}),
    ("null-kind", "kind null", {"kind": None, "body": "x"}),
    ("unknown-top-level-field", "an unknown top-level field", {"kind": "ask", "body": "x", "priority": "high"}),
    ("unknown-field-state", "a client trying to set the thread state with an unknown field",
     {"kind": "ask", "body": "x", "state": "closed"}),
    ("unknown-field-in-from", "an unknown field inside from", {"kind": "ask", "body": "x", "from": {"extension": "w1", "role": "admin"}}),
    ("unknown-field-in-provenance", "an unknown field inside provenance",
     {"kind": "ask", "body": "x", "provenance": {"model": "m", "temperature": 0.2}}),
    ("from-not-object", "from of JSON type string", {"kind": "ask", "body": "x", "from": "agent"}),
    ("provenance-not-object", "provenance of JSON type string", {"kind": "ask", "body": "x", "provenance": "gpt"}),
    ("provenance-model-number", "provenance.model of JSON type number", {"kind": "ask", "body": "x", "provenance": {"model": 4}}),
    ("parley-version-2", "parley \"2\" (must be \"1\" when present)", {"parley": "2", "kind": "ask", "body": "x"}),
    ("parley-version-number", "parley 1 as a JSON number", {"parley": 1, "kind": "ask", "body": "x"}),
    ("thread-boolean", "thread of JSON type boolean", {"kind": "ask", "body": "x", "thread": True}),
    ("parent-object", "parent of JSON type object", {"kind": "ask", "body": "x", "parent": {"id": "msg_1"}}),
    ("extension-number", "from.extension of JSON type number", {"kind": "ask", "body": "x", "from": {"extension": 7}}),
]
for slug, what, e in INVALID_OPEN:
    V(f"envelope/invalid-{slug}", ["PV-EN-1"],
      f"An envelope with {what} is refused 400 invalid_body",
      lambda e=e: [post("agent_a", e, INVALID)])

V("envelope/invalid-unknown-field-on-reply", ["PV-EN-1"],
  "An unknown field on a reply inside an existing thread is refused invalid_body and nothing is stored",
  lambda: [open_thread(),
           reply("agent_b", "answer", thread="$t", expect=INVALID, mood="confident"),
           read("agent_b", "$t", {"thread": {"state": "open"}, "messages": [{"replies": []}]})])
# PV-EN-1: "A whitespace-only body SHOULD be refused the same way; a check warns (never
# fails) when it is accepted, and sends ASCII whitespace only."
BLANK = ("PV-EN-1: a whitespace-only body SHOULD be refused 400 invalid_body; accepting it is "
         "a warning, never a failure (only the empty body is a MUST)")
for slug, what, b in [("spaces", "spaces only", "     "),
                      ("mixed-whitespace", "tabs and newlines only", " \n\t \r\n ")]:
    V(f"envelope/invalid-blank-body-{slug}", ["PV-EN-1"],
      f"An envelope with a body of {what} is refused 400 invalid_body (SHOULD)",
      lambda b=b: [post("agent_a", {"kind": "ask", "body": b}, INVALID)], advisory=BLANK)
V("envelope/invalid-blank-body-on-reply", ["PV-EN-1"],
  "A whitespace-only answer is refused invalid_body (SHOULD; a server that only checks the opening post would store it)",
  lambda: [open_thread(), reply("agent_b", "answer", thread="$t", b="   ", expect=INVALID)],
  advisory=BLANK)
V("envelope/parley-version-1-accepted", ["PV-EN-1", "PV-RS-1"],
  "An envelope carrying parley \"1\" and a provenance is accepted (201) and the provenance is stored",
  lambda: [post("agent_a", env("ask", parley="1", provenance={"model": "m-1", "client": "c-1"}),
                created({"message": {"provenance": {"model": "m-1", "client": "c-1"}}}))])
V("envelope/seed-example-envelope-accepted", ["PV-EN-1", "PV-EN-5"],
  "The seed's full example envelope (parley, kind answer, thread, parent, from.extension worker-2, provenance) is accepted",
  lambda: [open_thread(),
           post("agent_b", {"parley": "1", "kind": "answer", "thread": "$t", "parent": "$r",
                            "from": {"extension": "worker-2"}, "body": body("seed example"),
                            "provenance": {"model": "model-x", "client": "client-y"}},
                created({"message": {"thread": "$t", "parent": "$r", "kind": "answer",
                                     "from": {"identity": ident("agent_b"), "extension": "worker-2"},
                                     "provenance": {"model": "model-x", "client": "client-y"}},
                         "thread": {"id": "$t", "state": "answered"}}))])
PROVMAX = lambda: manifest("anonymous", {"limits": {"provenance_max_chars": {"$type": "integer"}}},
                          capture={"provmax": "/limits/provenance_max_chars"})
V("envelope/provenance-at-max-accepted", ["PV-MF-2", "PV-EN-1"],
  "A provenance.model of exactly the declared provenance_max_chars (200 on the reference), in CJK, is accepted and stored intact",
  lambda: [PROVMAX(), post("agent_a", env("ask", provenance={"model": rep("模", "$provmax")}),
                           created({"message": {"provenance": {"model": rep("模", "$provmax")}}}))])
V("envelope/provenance-over-max-refused", ["PV-MF-2"],
  "A provenance.model one character over the declared provenance_max_chars is refused 400",
  lambda: [PROVMAX(), post("agent_a", env("ask", provenance={"model": cat(rep("m", "$provmax"), "m")}),
                           one_of(INVALID, TOO_LONG))])

# raw HTTP bodies
def raw_post(as_, body_text=None, body_b64=None, ctype="application/json", expect=None, path="/v1/messages"):
    h = {"method": "POST", "path": path, "headers": {"content-type": ctype}}
    if body_text is not None:
        h["body"] = body_text
    if body_b64 is not None:
        h["body_base64"] = body_b64
    return step(as_, http=h, expect=expect)


V("envelope/http-malformed-json", ["PV-EN-1", "PV-TR-3"],
  "A POST /v1/messages body that is not JSON is refused 400 invalid_body with the JSON error body (not a 422 or a plain-text error)",
  lambda: [raw_post("agent_a", '{"kind": "ask", "body": ', expect=INVALID)])
V("envelope/http-json-array-body", ["PV-EN-1"],
  "A JSON array instead of an envelope object is refused 400 invalid_body",
  lambda: [raw_post("agent_a", '[{"kind": "ask", "body": "x"}]', expect=INVALID)])
V("envelope/http-json-string-body", ["PV-EN-1"],
  "A JSON string instead of an envelope object is refused 400 invalid_body",
  lambda: [raw_post("agent_a", '"ask"', expect=INVALID)])
V("envelope/http-empty-body", ["PV-EN-1"],
  "An empty POST /v1/messages body with a JSON content type is refused 400 invalid_body",
  lambda: [raw_post("agent_a", "", expect=INVALID)])
V("envelope/http-invalid-utf8", ["PV-EN-1"],
  "A body with invalid UTF-8 bytes is refused 400 invalid_body (never a 5xx)",
  # {"kind":"ask","body":"\xff\xfe"}
  lambda: [raw_post("agent_a", body_b64="eyJraW5kIjoiYXNrIiwiYm9keSI6Iv/+In0=", expect=INVALID)])
V("envelope/http-deep-json-in-unknown-member", ["PV-EN-1"],
  "Deeply nested JSON in an unknown member is refused 400 invalid_body without a crash",
  lambda: [raw_post("agent_a", '{"kind":"ask","body":"x","extra":' + "[" * 200 + "]" * 200 + "}", expect=INVALID)])

# ---------------------------------------------------------------- PV-EN-4 spoofing
SPOOF = {"id": "msg_999999999", "author_kind": "human", "created_at": "2001-01-01T00:00:00Z"}
V("envelope/spoofed-server-fields-ignored", ["PV-EN-4", "PV-ID-1"],
  "Client-sent id, from.identity, author_kind and created_at are ignored: the stored message carries the server's values",
  lambda: [post("agent_a", dict(env("ask", **SPOOF), **{"from": {"identity": "human:mallory", "extension": "w1"}}),
                created({"message": {"id": {"$not": "msg_999999999"},
                                     "from": {"identity": ident("agent_a"), "extension": "w1"},
                                     "author_kind": "llm",
                                     "created_at": {"$not": "2001-01-01T00:00:00Z"}}}),
                capture={"t": "/thread/id", "m": "/message/id"}),
           read("agent_a", "$t", {"messages": [{"id": "$m", "from": {"identity": ident("agent_a"), "extension": "w1"},
                                                 "author_kind": "llm", "created_at": rx(TS)}]})])
V("envelope/spoofed-id-format", ["PV-EN-4", "PV-RS-2"],
  "A client-sent id is replaced by a server id of the form msg_N",
  lambda: [post("agent_a", env("ask", id="msg_999999999"), created({"message": {"id": rx(MSG)}}))])
V("envelope/spoofed-created-at-is-server-time", ["PV-EN-4"],
  "A client-sent created_at in 2001 is replaced by the server's RFC 3339 UTC time",
  lambda: [post("agent_a", env("ask", created_at="2001-01-01T00:00:00Z"),
                created({"message": {"created_at": {"$regex": "^20[2-9][0-9]-"}}}))])
V("envelope/spoofed-human-author-kind-does-not-confirm", ["PV-EN-4", "PV-ST-5"],
  "A model claiming author_kind human and from.identity human:alice opens an ordinary proposed thread (state_origin llm, not confirmed)",
  lambda: [post("agent_a", env("ask", author_kind="human", **{"from": {"identity": "human:alice"}}),
                created({"message": {"author_kind": "llm", "from": party("agent_a")},
                         "thread": thread_state("open", False, "llm", ident("agent_a"))}))])
V("envelope/spoofed-creator-identity-gives-no-authority", ["PV-EN-4", "PV-AU-2"],
  "agent_b sending from.identity = agent_a's identity cannot decide agent_a's thread (403 thread_authority_missing)",
  lambda: [open_thread(),
           post("agent_b", dict(env("decide", thread="$t"), **{"from": {"identity": ident("agent_a")}}), AUTHORITY)])
V("envelope/spoofed-human-identity-gives-no-authority", ["PV-EN-4", "PV-AU-4"],
  "agent_b sending from.identity human:alice and author_kind human cannot close agent_a's thread",
  lambda: [open_thread(),
           post("agent_b", dict(env("close", thread="$t", author_kind="human"), **{"from": {"identity": "human:alice"}}),
                AUTHORITY)])
V("envelope/spoofed-identity-cannot-dodge-self-reply", ["PV-EN-4", "PV-ID-2"],
  "agent_a replying to its own root while claiming agent_b's identity is still a self_reply",
  lambda: [open_thread(),
           post("agent_a", dict(env("inform", thread="$t"), **{"from": {"identity": ident("agent_b")}}), SELF_REPLY)])
V("envelope/spoofed-existing-id-does-not-overwrite", ["PV-EN-4"],
  "A reply sent with id = the root message's id gets a new id and leaves the root untouched",
  lambda: [open_thread(),
           reply("agent_b", "answer", thread="$t", id="$r", expect=created({"message": {"id": {"$not": "$r"}}}),
                 capture={"m": "/message/id"}),
           read("agent_b", "$t", {"messages": [{"id": "$r", "kind": "ask", "from": party("agent_a"),
                                                 "replies": [{"id": "$m", "kind": "answer"}]}]})])

# ---------------------------------------------------------------- PV-EN-5 thread/parent forms
V("envelope/thread-as-integer", ["PV-EN-5"],
  "thread given as a plain JSON integer (12) posts into th_12",
  lambda: [open_thread(),
           reply("agent_b", "answer", thread={"$number_of": "$t"},
                 expect=created({"message": {"thread": "$t", "parent": "$r"}, "thread": {"id": "$t"}}))])
V("envelope/thread-as-digit-string", ["PV-EN-5"],
  "thread given as a digit string (\"12\") posts into th_12",
  lambda: [open_thread(),
           reply("agent_b", "answer", thread={"$string_number_of": "$t"},
                 expect=created({"message": {"thread": "$t", "parent": "$r"}, "thread": {"id": "$t"}}))])
V("envelope/parent-as-integer", ["PV-EN-5"],
  "parent given as a plain JSON integer replies to msg_N",
  lambda: [open_thread(),
           reply("agent_b", "clarify", thread="$t", parent={"$number_of": "$r"},
                 expect=created({"message": {"thread": "$t", "parent": "$r"}}))])
V("envelope/parent-as-digit-string-without-thread", ["PV-EN-5", "PV-EN-6"],
  "parent given as a digit string without thread replies to msg_N in the parent's thread",
  lambda: [open_thread(),
           reply("agent_b", "clarify", parent={"$string_number_of": "$r"},
                 expect=created({"message": {"thread": "$t", "parent": "$r"}}))])
V("envelope/read-thread-by-number", ["PV-EN-5", "PV-RD-1"],
  "read_thread accepts the plain number and the digit string of a thread",
  lambda: [open_thread(),
           read("agent_b", {"$number_of": "$t"}, {"thread": {"id": "$t"}, "messages": [{"id": "$r"}]}),
           read("agent_b", {"$string_number_of": "$t"}, {"thread": {"id": "$t"}, "messages": [{"id": "$r"}]})])
V("envelope/mark-and-events-by-number", ["PV-EN-5"],
  "mark and list_events accept the thread as a plain number",
  lambda: [open_thread(),
           mark("agent_a", {"$number_of": "$t"}, "decided", ok(200, {"thread": {"id": "$t", "state": "decided"}})),
           events("agent_a", {"$number_of": "$t"}, {"events": {"$len": 2}})])
V("envelope/reopen-by-digit-string", ["PV-EN-5", "PV-ST-6"],
  "reopen accepts the thread as a digit string",
  lambda: [open_thread(), mark("agent_a", "$t", "closed"),
           reopen("agent_a", {"$string_number_of": "$t"}, ok(200, {"thread": {"id": "$t", "state": "open"}}))])
V("envelope/unknown-thread-key", ["PV-EN-5"],
  "Posting into an unknown thread th_987654321 is refused 404 thread_not_found",
  lambda: [reply("agent_a", "answer", thread="th_987654321", expect=THREAD_NF)])
V("envelope/unknown-thread-number", ["PV-EN-5"],
  "Posting into an unknown thread given as a number is refused 404 thread_not_found",
  lambda: [reply("agent_a", "answer", thread=987654321, expect=THREAD_NF)])
V("envelope/unknown-thread-digit-string", ["PV-EN-5"],
  "Posting into an unknown thread given as a digit string is refused 404 thread_not_found",
  lambda: [reply("agent_a", "answer", thread="987654321", expect=THREAD_NF)])
V("envelope/unknown-parent-key", ["PV-EN-5"],
  "Replying to an unknown parent msg_987654321 (no thread) is refused 404 message_not_found",
  lambda: [reply("agent_a", "answer", parent="msg_987654321", expect=MSG_NF)])
V("envelope/unknown-parent-in-known-thread", ["PV-EN-5"],
  "Replying in a known thread to an unknown parent number is refused 404 message_not_found",
  lambda: [open_thread(), reply("agent_b", "answer", thread="$t", parent=987654321, expect=MSG_NF)])
V("envelope/parent-not-in-thread", ["PV-EN-5"],
  "A parent that belongs to another thread is refused 400 invalid_body (and not posted into either thread)",
  lambda: [open_thread(t="t1", r="r1"), open_thread(t="t2", r="r2"),
           reply("agent_b", "answer", thread="$t1", parent="$r2", expect=INVALID),
           read("agent_b", "$t1", {"thread": {"state": "open"}, "messages": [{"replies": []}]}),
           read("agent_b", "$t2", {"thread": {"state": "open"}, "messages": [{"replies": []}]})])
V("envelope/read-unknown-thread", ["PV-EN-5", "PV-RD-1"],
  "read_thread of an unknown thread is 404 thread_not_found",
  lambda: [read("agent_a", "th_987654321", expect=THREAD_NF)])
V("envelope/events-unknown-thread", ["PV-EN-5", "PV-RD-2"],
  "list_events of an unknown thread is 404 thread_not_found",
  lambda: [events("agent_a", "th_987654321", expect=THREAD_NF)])
V("envelope/mark-unknown-thread", ["PV-EN-5"],
  "mark of an unknown thread is 404 thread_not_found (even for the moderator)",
  lambda: [mark("moderator", "th_987654321", "decided", THREAD_NF)])
V("envelope/reopen-unknown-thread", ["PV-EN-5"],
  "reopen of an unknown thread is 404 thread_not_found",
  lambda: [reopen("human", 987654321, THREAD_NF)])

# ---------------------------------------------------------------- PV-EN-6 opening and implicit parents
for k in ["answer", "clarify", "inform", "propose", "agree", "object", "decide", "close"]:
    V(f"envelope/no-thread-{k}-refused", ["PV-EN-6"],
      f"{k} without thread and parent cannot open a thread: 400 thread_required",
      lambda k=k: [post("agent_a", env(k), THREAD_REQUIRED)])
V("envelope/ask-opens-new-thread", ["PV-EN-6", "PV-KD-2"],
  "Two asks without thread open two distinct threads, each with its message as root (parent null)",
  lambda: [open_thread(t="t1", r="r1", match={"message": {"parent": None, "thread": {"$regex": TH}}}),
           open_thread(t="t2", r="r2"),
           read("agent_a", "$t2", {"thread": {"id": {"$not": "$t1"}}, "messages": [{"id": "$r2", "parent": None}]})])
V("envelope/thread-without-parent-replies-to-root", ["PV-EN-6"],
  "A message with thread but no parent gets the thread's root message as parent",
  lambda: [open_thread(),
           reply("agent_b", "clarify", thread="$t", capture={"m": "/message/id"}),
           reply("moderator", "inform", thread="$t",
                 expect=created({"message": {"parent": "$r", "thread": "$t"}}))])
V("envelope/parent-without-thread-uses-parents-thread", ["PV-EN-6"],
  "A message with a nested parent and no thread lands in the parent's thread under that parent",
  lambda: [open_thread(),
           reply("agent_b", "clarify", thread="$t", capture={"m": "/message/id"}),
           reply("agent_a", "inform", parent="$m", ext="x",
                 expect=created({"message": {"parent": "$m", "thread": "$t"}, "thread": {"id": "$t"}})),
           read("agent_a", "$t", {"messages": [{"id": "$r", "replies": [{"id": "$m", "replies": [{"kind": "inform"}]}]}]})])
V("envelope/ask-with-thread-stays-in-thread", ["PV-EN-6", "PV-KD-2"],
  "An ask sent with a thread is a follow-up question in that thread, not a new thread, and awaits the root's author",
  lambda: [open_thread(),
           reply("agent_b", "ask", thread="$t",
                 expect=created({"message": {"thread": "$t", "parent": "$r"},
                                 "thread": {"id": "$t", "state": "open", "awaiting": party("agent_a")}}))])

# ---------------------------------------------------------------- PV-EN-7 extension pattern
GOOD_EXT = [("worker-2", "the seed's worker-2"), ("a", "a single character"), ("0agent", "a leading digit"),
            ("a_b-c", "underscore and dash"), ("x" * 32, "exactly 32 characters")]
for i, (ext, what) in enumerate(GOOD_EXT):
    V(f"envelope/extension-valid-{i + 1}", ["PV-EN-7"],
      f"from.extension {what} matches the pattern and is echoed in from",
      lambda ext=ext: [post("agent_a", env("ask", ext=ext),
                            created({"message": {"from": {"identity": ident("agent_a"), "extension": ext}}}))],
      needs=NEEDS_REF_EXT)
BAD_EXT = [("x" * 33, "33 characters"), ("Worker", "an uppercase letter"), ("-worker", "a leading dash"),
           ("_worker", "a leading underscore"), ("", "the empty string"), ("two words", "a space"),
           ("équipe", "a non-ASCII letter"), ("a.b", "a dot"), ("a/b", "a slash")]
for i, (ext, what) in enumerate(BAD_EXT):
    V(f"envelope/extension-invalid-{i + 1}", ["PV-EN-7"],
      f"from.extension with {what} is refused 400 invalid_body",
      lambda ext=ext: [post("agent_a", env("ask", ext=ext), INVALID)],
      needs=NEEDS_REF_EXT)
V("envelope/extension-invalid-on-reply", ["PV-EN-7"],
  "An invalid extension on a reply is refused 400 invalid_body too",
  lambda: [open_thread(), reply("agent_b", "answer", thread="$t", ext="Bad Ext", expect=INVALID)])
V("envelope/body-trailing-space-counts", ["PV-EN-2"],
  "body_max_chars letters plus a trailing space are one code point over and refused body_too_long (catches trimming before counting)",
  lambda: [post("agent_a", env("ask", b=cat(fill("a", L), " ")), TOO_LONG)])
V("envelope/body-leading-newline-counts", ["PV-EN-2"],
  "A newline followed by body_max_chars CJK characters is one code point over and refused body_too_long",
  lambda: [post("agent_a", env("ask", b=cat("\n", fill("字", L))), TOO_LONG)])
V("envelope/thread-and-nested-parent", ["PV-EN-5", "PV-RD-1"],
  "thread plus a nested parent replies under that parent, not under the root (catches a server that ignores parent when thread is given)",
  lambda: [open_thread(),
           reply("agent_b", "propose", thread="$t", capture={"m": "/message/id"}),
           reply("moderator", "object", thread="$t", parent="$m",
                 expect=created({"message": {"thread": "$t", "parent": "$m"}, "thread": {"awaiting": party("agent_b")}})),
           read("agent_a", "$t", {"messages": [{"id": "$r", "replies": [{"id": "$m", "replies": [{"kind": "object"}]}]}]})])
