from dsl import *
from gen_state import setup
from gen_dialectic import assert_, act, EVD, DIA


def V(vid, reqs, title, steps_fn, **kw):
    CUR["id"] = vid
    return vector("shapes", vid, reqs, title, steps_fn(), **kw)


PARTY_ANY = {"identity": {"$type": "string"}, "extension": {"$any": True}}


def message_shape(**over):
    m = {"id": rx(MSG), "thread": rx(TH), "parent": {"$any": True}, "kind": {"$type": "string"},
         "from": PARTY_ANY, "author_kind": {"$one_of": ["llm", "human"]}, "body": {"$type": "string"},
         "provenance": {"$any": True}, "created_at": rx(TS)}
    m.update(over)
    return m


def thread_shape(**over):
    t = {"id": rx(TH), "state": {"$type": "string"}, "state_origin": {"$one_of": ["llm", "user"]},
         "state_confirmed_at": {"$any": True}, "state_label": {"$type": "string"}, "creator": PARTY_ANY,
         "awaiting": {"$any": True}, "created_at": rx(TS), "last_activity_at": rx(TS)}
    t.update(over)
    return t


def event_shape(**over):
    e = {"id": rx(EV), "subject": "thread", "thread": rx(TH), "claim": None, "from_state": {"$any": True},
         "to_state": {"$type": "string"}, "origin": {"$one_of": ["llm", "user"]}, "label": {"$type": "string"},
         "actor": PARTY_ANY, "at": rx(TS), "confirmed_at": {"$any": True}}
    e.update(over)
    return e


# ================================================================ PV-RS-1 statuses
V("shapes/success-statuses", ["PV-RS-1"],
  "post answers 201; get_manifest, whoami, read_thread, list_events, inbox, mark and reopen answer 200",
  lambda: [manifest("anonymous", expect=ok(200)), whoami("agent_a", expect=ok(200)),
           open_thread(), read("agent_b", "$t", expect=ok(200)), events("agent_b", "$t", expect=ok(200)),
           inbox("agent_b", expect=ok(200), paginate=False, limit=1),
           mark("agent_a", "$t", "closed", ok(200)), reopen("agent_a", "$t", ok(200)),
           reply("agent_b", "answer", thread="$t", expect=ok(201))])
V("shapes/read-claim-status", ["PV-RS-1", "PV-DI-7"],
  "read_claim answers 200 and an assert 201",
  lambda: [assert_(expect=ok(201)), claim("agent_b", "$c", expect=ok(200))], needs=DIA)

# ================================================================ PV-RS-2 bodies
V("shapes/post-response", ["PV-RS-2"],
  "post returns {message: Message, thread: Thread} with every member of both shapes",
  lambda: [post("agent_a", env("ask"), created({
      "message": message_shape(parent=None, kind="ask", **{"from": party("agent_a")}, author_kind="llm", provenance=None),
      "thread": thread_shape(state="open", state_confirmed_at=None, creator=party("agent_a"),
                             awaiting={"any": True, "except": party("agent_a")})}))])
V("shapes/reply-message-shape", ["PV-RS-2"],
  "A reply's Message carries thread, parent, from {identity, extension} and provenance",
  lambda: [open_thread(),
           post("agent_b", env("answer", thread="$t", ext="w2", provenance={"model": "m", "client": "c"}),
                created({"message": message_shape(thread="$t", parent="$r", kind="answer", **{"from": party("agent_b", "w2")},
                                                  provenance={"model": "m", "client": "c"}),
                         "thread": thread_shape(id="$t", state="answered", awaiting=None)}))])
V("shapes/mark-response", ["PV-RS-2", "PV-ST-7"],
  "mark returns {thread: Thread, event: Event}",
  lambda: [open_thread(),
           mark("agent_a", "$t", "decided", ok(200, {
               "thread": thread_shape(id="$t", state="decided"),
               "event": event_shape(thread="$t", from_state="open", to_state="decided", origin="llm",
                                    label=ident("agent_a"), actor=party("agent_a"), confirmed_at=None)}))])
V("shapes/reopen-response", ["PV-RS-2"],
  "reopen returns {thread: Thread, event: Event}",
  lambda: [open_thread(), mark("moderator", "$t", "closed"),
           reopen("moderator", "$t", ok(200, {
               "thread": thread_shape(id="$t", state="open", state_confirmed_at=rx(TS)),
               "event": event_shape(thread="$t", from_state="closed", to_state="open", confirmed_at=rx(TS),
                                    actor=party("moderator"))}))])
V("shapes/read-thread-response", ["PV-RS-2", "PV-RD-1"],
  "read_thread returns {thread: Thread, messages: [Message + replies]}",
  lambda: [open_thread(), reply("agent_b", "clarify", thread="$t", capture={"m": "/message/id"}),
           read("agent_a", "$t", {"thread": thread_shape(id="$t"),
                                  "messages": [dict(message_shape(id="$r", parent=None),
                                                    replies=[dict(message_shape(id="$m", parent="$r"), replies=[])])]})])
V("shapes/list-events-response", ["PV-RS-2", "PV-RD-2"],
  "list_events returns {events: [Event]} and the creation event has from_state null",
  lambda: [open_thread(),
           events("agent_a", "$t", {"events": [event_shape(thread="$t", from_state=None, to_state="open",
                                                           actor=party("agent_a"), confirmed_at=None)]})])
V("shapes/inbox-response", ["PV-RS-2", "PV-RD-3"],
  "inbox returns {items: [{thread, state, awaiting, last_message: Message}], cursor}",
  lambda: [open_thread(),
           inbox("agent_b", {"items": {"$contains": [{"thread": "$t", "state": "open",
                                                      "awaiting": {"any": True, "except": party("agent_a")},
                                                      "last_message": message_shape(id="$r", thread="$t")}]},
                             "cursor": {"$any": True}})])
V("shapes/whoami-writer", ["PV-RS-2", "PV-TR-5", "PV-ID-1"],
  "whoami of a plain writer: identity, author_kind llm, rights with read and write (no lock, no verify), lock_label null, an integer quota",
  lambda: [whoami("agent_a", {"identity": ident("agent_a"), "author_kind": "llm",
                              "rights": {"$contains": ["read", "write"]}, "lock_label": None,
                              "quota_per_minute": {"$type": "integer"}}),
           whoami("agent_a", {"rights": {"$not_contains": ["lock", "verify"]}})])
V("shapes/whoami-writer-default-quota", ["PV-TR-5", "PV-RS-2"],
  "whoami of a plain writer shows the manifest's writes_per_minute as its quota (the default)",
  lambda: [manifest("anonymous", capture={"wpm": "/limits/writes_per_minute"}),
           whoami("agent_a", {"quota_per_minute": "$wpm"})],
  advisory="PV-TR-5: the quota only defaults to limits.writes_per_minute and 'a token row may set a lower one': "
            "the target's writer token may legitimately carry a lower quota")
V("shapes/whoami-moderator", ["PV-RS-2", "PV-AU-2"],
  "whoami of the lock holder lists the lock right and its lock label",
  lambda: [whoami("moderator", {"rights": {"$contains": ["read", "write", "lock"]}, "lock_label": "$lock_label.moderator"})])
V("shapes/whoami-verifier", ["PV-RS-2", "PV-DI-4"],
  "whoami of the verifier lists the verify right but not lock",
  lambda: [whoami("verifier", {"rights": {"$contains": ["verify"]}}), whoami("verifier", {"rights": {"$not_contains": ["lock"]}})])
V("shapes/whoami-reader", ["PV-RS-2", "PV-AU-1"],
  "whoami of the reader lists exactly the read right",
  lambda: [whoami("reader", {"rights": ["read"], "author_kind": "llm", "lock_label": None})])
V("shapes/whoami-human", ["PV-RS-2", "PV-AU-4"],
  "whoami of the human: author_kind human and every right",
  lambda: [whoami("human", {"author_kind": "human", "rights": {"$contains": ["read", "write", "lock", "verify"]}})])
V("shapes/whoami-limited-quota", ["PV-TR-5", "PV-RS-2"],
  "whoami of the limited token shows its own lower quota, not the manifest default",
  lambda: [manifest("anonymous", capture={"wpm": "/limits/writes_per_minute"}),
           whoami("limited", {"quota_per_minute": {"$type": "integer"}}),
           whoami("limited", {"quota_per_minute": {"$not": "$wpm"}})])

# ================================================================ PV-RS-3 dialectic shapes
for slug, kind, extra in [("claim-on-inform", "inform", {"claim": "cl_1"}),
                          ("evidence-on-answer", "answer", {"evidence": EVD}),
                          ("supersedes-on-clarify", "clarify", {"supersedes": ["cl_1"]}),
                          ("valid-until-on-agree", "agree", {"valid_until": "2999-01-01T00:00:00Z"})]:
    V(f"shapes/{slug}-refused", ["PV-RS-3", "PV-EN-1"],
      f"{slug.split('-on-')[0].replace('-', '_')} on a core {kind} is refused 400 invalid_body",
      lambda kind=kind, extra=extra: [open_thread(), reply("agent_b", kind, thread="$t", expect=INVALID, **extra)])
V("shapes/evidence-on-opening-ask-refused", ["PV-RS-3", "PV-EN-1"],
  "evidence on an opening ask is refused 400 invalid_body",
  lambda: [post("agent_a", env("ask", evidence=EVD), INVALID)])
V("shapes/claim-on-assert-refused", ["PV-RS-3"],
  "claim on an assert (which creates a claim, it does not name one) is refused 400 invalid_body",
  lambda: [assert_(), assert_(c="c2", t="t2", r="r2", claim="$c", expect=INVALID)], needs=DIA)
V("shapes/supersedes-on-attest-refused", ["PV-RS-3"],
  "supersedes on an attest is refused 400 invalid_body",
  lambda: [assert_(), assert_(c="c2", t="t2", r="r2"), act("agent_b", "attest", "$c2", thread="$t2", supersedes=["$c"], expect=INVALID)],
  needs=DIA)
V("shapes/valid-until-on-refute-refused", ["PV-RS-3"],
  "valid_until on a refute is refused 400 invalid_body",
  lambda: [assert_(), act("agent_b", "refute", "$c", valid_until={"$time_from_now": 3600}, expect=INVALID)], needs=DIA)
for k, who in [("attest", "agent_b"), ("refute", "agent_b"), ("verify", "verifier")]:
    V(f"shapes/{k}-without-thread-refused", ["PV-RS-3", "PV-EN-6"],
      f"{k} without thread or parent cannot open a thread: 400 thread_required",
      lambda k=k, who=who: [assert_(), act(who, k, "$c", thread=None, expect=THREAD_REQUIRED)], needs=DIA)
V("shapes/assert-awaits-refute-awaits", ["PV-RS-3"],
  "assert in a thread awaits the parent's author; a refute then awaits the claim's author",
  lambda: [open_thread(), assert_("agent_b", thread="$t", expect=created({"thread": {"awaiting": party("agent_a")}})),
           assert_("agent_b", c="c", thread="$t", parent="$r"),
           act("moderator", "refute", "$c", expect=created({"thread": {"awaiting": party("agent_b")}}))],
  needs=DIA)
V("shapes/dialectic-message-carries-evidence-and-claim", ["PV-RS-2", "PV-RS-3"],
  "A dialectic act's Message carries evidence and claim (id)",
  lambda: [assert_(), act("agent_b", "attest", "$c",
                          expect=created({"message": message_shape(kind="attest", claim="$c",
                                                                   evidence=[{"kind": "log", "ref": "ci run 4711, line 12"}])}))],
  needs=DIA)


# ================================================================ PV-RS-4 415
def raw(as_, method, path, body=None, headers=None, expect=None, body_json=None):
    h = {"method": method, "path": path}
    if headers is not None:
        h["headers"] = headers
    if body is not None:
        h["body"] = body
    if body_json is not None:
        h["body_json"] = body_json
    return step(as_, http=h, expect=expect)


ASK_TEXT = '{"kind": "ask", "body": "415 probe"}'
V("shapes/415-text-plain", ["PV-RS-4"],
  "POST /v1/messages with Content-Type text/plain (valid JSON inside) gets 415 unsupported_media_type",
  lambda: [raw("agent_a", "POST", "/v1/messages", ASK_TEXT, {"content-type": "text/plain"}, refused(415, "unsupported_media_type"))])
V("shapes/415-form-urlencoded", ["PV-RS-4"],
  "POST /v1/messages with Content-Type application/x-www-form-urlencoded gets 415",
  lambda: [raw("agent_a", "POST", "/v1/messages", "kind=ask&body=hello", {"content-type": "application/x-www-form-urlencoded"},
               refused(415, "unsupported_media_type"))])
V("shapes/415-missing-content-type", ["PV-RS-4"],
  "POST /v1/messages with a body but no Content-Type gets 415",
  lambda: [raw("agent_a", "POST", "/v1/messages", ASK_TEXT, {}, refused(415, "unsupported_media_type"))])
V("shapes/415-before-400", ["PV-RS-4"],
  "A text/plain body that is also invalid gets 415 before 400 (check order)",
  lambda: [raw("agent_a", "POST", "/v1/messages", "not json at all", {"content-type": "text/plain"},
               refused(415, "unsupported_media_type"))])
V("shapes/415-on-mark", ["PV-RS-4"],
  "POST /v1/threads/{thread}/state with text/plain gets 415",
  lambda: [open_thread(),
           raw("agent_a", "POST", "/v1/threads/${t}/state", '{"state": "decided"}', {"content-type": "text/plain"},
               refused(415, "unsupported_media_type")),
           read("agent_a", "$t", {"thread": {"state": "open"}})])
V("shapes/json-with-charset-accepted", ["PV-RS-4", "PV-RS-1"],
  "Content-Type application/json; charset=utf-8 is JSON: the post is accepted (201)",
  lambda: [on(raw("agent_a", "POST", "/v1/messages", '{"kind": "ask", "body": "charset probe"}',
                  {"content-type": "application/json; charset=utf-8"}, created()),
              "PV-RS-4", "PV-RS-1")])
V("shapes/bodiless-reopen-needs-no-content-type", ["PV-RS-4", "PV-ST-6"],
  "A bodiless POST /v1/threads/{thread}/reopen without Content-Type is accepted (200)",
  lambda: [open_thread(), mark("agent_a", "$t", "closed"),
           on(raw("agent_a", "POST", "/v1/threads/${t}/reopen", None, {}, ok(200, {"thread": {"state": "open"}})),
              "PV-RS-4", "PV-ST-6")])
V("shapes/order-401-before-415", ["PV-AU-6", "PV-TR-4"],
  "No token and a text/plain body: 401 comes before 415",
  lambda: [raw("anonymous", "POST", "/v1/messages", ASK_TEXT, {"content-type": "text/plain"}, TOKEN_MISSING)])
V("shapes/order-403-before-415", ["PV-AU-6", "PV-AU-1"],
  "A reader with a text/plain body: 403 token_right_missing comes before 415",
  lambda: [raw("reader", "POST", "/v1/messages", ASK_TEXT, {"content-type": "text/plain"}, RIGHT_MISSING)])
V("shapes/order-413-before-415", ["PV-AU-6", "PV-TR-5"],
  "A text/plain body over the declared request_max_bytes gets 413 before 415",
  lambda: [manifest("anonymous", {"limits": {"request_max_bytes": {"$type": "integer"}}},
                    capture={"rmax": "/limits/request_max_bytes"}),
           raw("agent_a", "POST", "/v1/messages", headers={"content-type": "text/plain"},
               body_json={"kind": "ask", "body": {"$repeat": {"s": "a", "n": "$rmax"}}}, expect=TOO_LARGE)])
