from dsl import *
from gen_state import setup


def V(vid, reqs, title, steps_fn, **kw):
    CUR["id"] = vid
    return vector("authority", vid, reqs, title, steps_fn(), **kw)


def unchanged(state, confirmed=None):
    m = {"state": state}
    if confirmed is not None:
        m["state_confirmed_at"] = NONNULL_TS if confirmed else None
    return read("agent_a", "$t", {"thread": m}, note="a refused act leaves the thread unchanged")


# ================================================================ PV-AU-1 rights
V("authority/reader-cannot-open-thread", ["PV-AU-1"],
  "A read-only token posting an ask is refused 403 token_right_missing",
  lambda: [post("reader", env("ask"), RIGHT_MISSING)])
V("authority/reader-cannot-reply", ["PV-AU-1"],
  "A read-only token answering in an existing thread is refused 403 token_right_missing and nothing changes",
  lambda: setup("open") + [reply("reader", "answer", thread="$t", expect=RIGHT_MISSING), unchanged("open"),
                           read("agent_a", "$t", {"messages": [{"replies": []}]})])
V("authority/reader-cannot-mark", ["PV-AU-1"],
  "A read-only token marking a thread is refused 403 token_right_missing",
  lambda: setup("open") + [mark("reader", "$t", "closed", RIGHT_MISSING), unchanged("open")])
V("authority/reader-cannot-reopen", ["PV-AU-1", "PV-AU-3"],
  "A read-only token reopening a closed thread is refused 403 token_right_missing (reopen needs write)",
  lambda: setup("closed") + [reopen("reader", "$t", RIGHT_MISSING), unchanged("closed")])
V("authority/reader-can-read", ["PV-AU-1"],
  "A read-only token can read_thread, list_events and inbox",
  lambda: setup("open") + [read("reader", "$t", {"thread": {"id": "$t"}}),
                           events("reader", "$t", {"events": {"$len": 1}}),
                           inbox("reader", {"items": {"$type": "array"}}, paginate=False, limit=1)])
V("authority/writer-without-lock-can-post", ["PV-AU-1"],
  "A read+write token can post in another's thread (201)",
  lambda: setup("open") + [reply("agent_b", "clarify", thread="$t", expect=created())])

# ================================================================ PV-AU-2 thread authority
for slug, act in [
    ("decide", lambda: reply("agent_b", "decide", thread="$t", expect=AUTHORITY)),
    ("close", lambda: reply("agent_b", "close", thread="$t", expect=AUTHORITY)),
    ("mark-decided", lambda: mark("agent_b", "$t", "decided", AUTHORITY)),
    ("mark-deferred", lambda: mark("agent_b", "$t", "deferred", AUTHORITY)),
    ("mark-current-state", lambda: mark("agent_b", "$t", "open", AUTHORITY)),
]:
    V(f"authority/non-creator-{slug}-refused", ["PV-AU-2"],
      f"A writer who is not the creator, has no lock and is not human: {slug.replace('-', ' ')} is 403 thread_authority_missing",
      lambda act=act: setup("open") + [act(), unchanged("open")])
V("authority/participant-gains-no-authority", ["PV-AU-2"],
  "Having answered in the thread does not give agent_b authority: its decide is 403 thread_authority_missing",
  lambda: setup("answered") + [reply("agent_b", "decide", thread="$t", expect=AUTHORITY), unchanged("answered")])
V("authority/verifier-has-no-thread-authority", ["PV-AU-2"],
  "The verify right is not thread authority: the verifier's close is 403 thread_authority_missing",
  lambda: setup("open") + [reply("verifier", "close", thread="$t", expect=AUTHORITY)])
V("authority/non-creator-decide-on-own-reply-refused", ["PV-AU-2"],
  "agent_b deciding beneath its own reply in agent_a's thread still lacks authority",
  lambda: setup("open") + [reply("agent_b", "propose", thread="$t", capture={"m": "/message/id"}),
                           reply("agent_b", "decide", parent="$m", expect=AUTHORITY)])
V("authority/creator-other-extension-decides", ["PV-AU-2", "PV-AU-5"],
  "The creator keeps authority from any extension: opened from ext a, decided from ext b",
  lambda: [open_thread(ext="a"),
           reply("agent_a", "decide", thread="$t", ext="b", expect=created({"thread": {"state": "decided"}}))])
V("authority/creator-marks-thread-opened-from-extension", ["PV-AU-2", "PV-AU-5"],
  "Opened from extension a, the thread can be marked by its creator's token (authority is the identity's, not the extension's)",
  lambda: [open_thread(ext="a"), mark("agent_a", "$t", "deferred", ok(200, {"thread": {"state": "deferred"}}))])
V("authority/creator-closes-own-thread", ["PV-AU-2"],
  "The creator may close its own thread (a proposal)",
  lambda: setup("answered") + [reply("agent_a", "close", thread="$t", expect=created({"thread": thread_state("closed", False)}))])
V("authority/moderator-decides-foreign-thread", ["PV-AU-2"],
  "A lock holder has authority over a foreign thread: decide is accepted",
  lambda: setup("open") + [reply("moderator", "decide", thread="$t", expect=created({"thread": {"state": "decided"}}))])
V("authority/moderator-marks-foreign-thread", ["PV-AU-2"],
  "A lock holder marks a foreign thread deferred",
  lambda: setup("answered") + [mark("moderator", "$t", "deferred", ok(200, {"thread": {"state": "deferred"}}))])
V("authority/human-decides-foreign-thread", ["PV-AU-2", "PV-AU-4"],
  "The human decides agent_a's thread (confirmed, user)",
  lambda: setup("open") + [reply("human", "decide", thread="$t", expect=created({"thread": thread_state("decided", True, "user")}))])
V("authority/agent-cannot-mark-human-thread", ["PV-AU-2"],
  "agent_a has no authority over the human's thread: mark closed is 403 thread_authority_missing",
  lambda: [open_thread("human"), mark("agent_a", "$t", "closed", AUTHORITY)])
V("authority/agent-cannot-close-moderator-thread", ["PV-AU-2"],
  "agent_b has no authority over the moderator's thread: close is 403 thread_authority_missing",
  lambda: [open_thread("moderator"), reply("agent_b", "close", thread="$t", expect=AUTHORITY)])
V("authority/moderator-closes-human-thread", ["PV-AU-2"],
  "A lock holder has authority over any thread, the human's included",
  lambda: [open_thread("human"), mark("moderator", "$t", "closed", ok(200, {"thread": thread_state("closed", True, "llm", KI_MOD)}))])

# ================================================================ PV-AU-3 reopen
for st, who, exp, why in [
    ("closed", "agent_b", AUTHORITY, "a writer reopening another's proposed closed thread"),
    ("closed!", "agent_b", AUTHORITY, "a writer reopening another's confirmed closed thread"),
    ("closed!", "verifier", AUTHORITY, "the verifier reopening another's confirmed closed thread"),
    ("deferred", "agent_a", AUTHORITY, "the creator reopening its own proposed deferred thread (lateral: moderation only)"),
    ("obsolete!", "agent_a", AUTHORITY, "the creator reopening its own confirmed obsolete thread"),
    ("rejected", "agent_b", AUTHORITY, "another writer reopening a rejected thread"),
]:
    V(f"authority/reopen-{st.rstrip('!')}{'-confirmed' if st.endswith('!') else ''}-by-{who.replace('_', '-')}-refused",
      ["PV-AU-3"], f"{why[0].upper()}{why[1:]} is refused 403 thread_authority_missing",
      lambda st=st, who=who, exp=exp: setup(st) + [reopen(who, "$t", exp), unchanged(st.rstrip("!"))])
V("authority/reopen-confirmed-closed-by-creator", ["PV-AU-3", "PV-ST-6", "PV-ST-5"],
  "The creator may reopen its own thread even after the moderator confirmed the close; the reopen is a proposal and unlocks",
  lambda: setup("closed!") + [reopen("agent_a", "$t", ok(200, {"thread": thread_state("open", False, "llm", ident("agent_a"))})),
                              reply("agent_b", "inform", thread="$t", expect=created())])
V("authority/reopen-closed-by-moderator-foreign", ["PV-AU-3"],
  "A lock holder reopens a foreign proposed closed thread",
  lambda: setup("closed") + [reopen("moderator", "$t", ok(200, {"thread": thread_state("open", True, "llm", KI_MOD)}))])
V("authority/reopen-closed-by-human", ["PV-AU-3", "PV-AU-4"],
  "The human reopens any closed thread (always): confirmed, user",
  lambda: setup("closed!") + [reopen("human", "$t", ok(200, {"thread": thread_state("open", True, "user")}))])
V("authority/reopen-lateral-by-human", ["PV-AU-3", "PV-AU-4"],
  "The human reopens a confirmed deferred thread",
  lambda: setup("deferred!") + [reopen("human", "$t", ok(200, {"thread": {"state": "open"}}))])
V("authority/reopen-lateral-by-moderator", ["PV-AU-3"],
  "The moderator reopens a confirmed rejected thread",
  lambda: setup("rejected!") + [reopen("moderator", "$t", ok(200, {"thread": thread_state("open", True, "llm", KI_MOD)}))])
V("authority/reopen-anonymous", ["PV-AU-3", "PV-TR-4"],
  "reopen without a token is refused 401 token_missing",
  lambda: setup("closed") + [reopen("anonymous", "$t", TOKEN_MISSING)])

# ================================================================ PV-AU-4 human
V("authority/human-closes-any-thread", ["PV-AU-4", "PV-ST-5"],
  "The human marks closed on agent_a's open thread: a confirmed closed, never a proposal",
  lambda: setup("open") + [mark("human", "$t", "closed", ok(200, {"thread": thread_state("closed", True, "user"),
                                                                  "event": {"origin": "user", "confirmed_at": rx(TS)}}))])
V("authority/human-remarks-lateral", ["PV-AU-4"],
  "The human re-marks agent_a's answered thread as obsolete (confirmed, user)",
  lambda: setup("answered") + [mark("human", "$t", "obsolete", ok(200, {"thread": thread_state("obsolete", True, "user")}))])
V("authority/human-bound-by-lock", ["PV-AU-4", "PV-ST-4"],
  "The human's posts are refused 409 thread_locked on a confirmed closed thread until it is reopened",
  lambda: setup("closed!") + [reply("human", "answer", thread="$t", expect=LOCKED),
                              reopen("human", "$t"),
                              reply("human", "answer", thread="$t", expect=created({"thread": thread_state("answered", True, "user")}))])
V("authority/human-bound-by-forward-only", ["PV-AU-4", "PV-ST-1"],
  "The human cannot move a decided thread back: answer is 409 invalid_transition",
  lambda: setup("decided") + [reply("human", "answer", thread="$t", expect=TRANSITION), unchanged("decided")])
V("authority/human-cannot-mark-open", ["PV-AU-4", "PV-ST-2"],
  "The human cannot mark open on an answered thread (409 invalid_transition): reopen is the way",
  lambda: setup("answered") + [mark("human", "$t", "open", TRANSITION)])

# ================================================================ PV-AU-5 extension grants nothing
V("authority/extension-named-moderator-grants-nothing", ["PV-AU-5", "PV-AU-2"],
  "agent_b posting from extension moderator still lacks authority on agent_a's thread",
  lambda: setup("open") + [reply("agent_b", "close", thread="$t", ext="moderator", expect=AUTHORITY)])
V("authority/extension-named-writer-grants-nothing", ["PV-AU-5", "PV-AU-1"],
  "A read-only token posting from extension writer is still 403 token_right_missing",
  lambda: [post("reader", env("ask", ext="writer"), RIGHT_MISSING)])
V("authority/extension-named-human-grants-nothing", ["PV-AU-5", "PV-ST-5"],
  "agent_a posting from extension human opens an ordinary proposed thread",
  lambda: [open_thread(ext="human", match={"thread": thread_state("open", False, "llm", ident("agent_a"))})])
V("authority/moderator-lock-from-any-extension", ["PV-AU-5"],
  "The lock right follows the token, not the extension: the moderator's close from extension night-shift is confirmed",
  lambda: setup("open") + [reply("moderator", "close", thread="$t", ext="night-shift",
                                 expect=created({"thread": thread_state("closed", True, "llm", KI_MOD)}))])

# ================================================================ PV-AU-6 check order
V("authority/order-anonymous-invalid-body", ["PV-AU-6", "PV-TR-4"],
  "No token and an invalid body: 401 token_missing comes first",
  lambda: [post("anonymous", {"kind": "ask"}, TOKEN_MISSING)])
V("authority/order-bad-token-invalid-body", ["PV-AU-6", "PV-TR-4"],
  "An unknown token and an invalid body: 401 token_invalid comes first",
  lambda: [post("agent_a", {"kind": "ask", "bogus": 1}, TOKEN_INVALID, token="not-a-real-token")])
V("authority/order-reader-invalid-body", ["PV-AU-6", "PV-AU-1"],
  "A reader posting an invalid body gets 403 token_right_missing before 400",
  lambda: [post("reader", {"kind": "ask", "body": "", "bogus": 1}, RIGHT_MISSING)])
V("authority/order-reader-unknown-thread", ["PV-AU-6", "PV-AU-1"],
  "A reader posting into an unknown thread gets 403 token_right_missing before 404",
  lambda: [reply("reader", "answer", thread="th_987654321", expect=RIGHT_MISSING)])
V("authority/order-reader-locked-thread", ["PV-AU-6", "PV-AU-1"],
  "A reader posting into a locked thread gets 403 token_right_missing before 409",
  lambda: setup("closed!") + [reply("reader", "inform", thread="$t", expect=RIGHT_MISSING)])
V("authority/order-reader-mark-unknown-thread", ["PV-AU-6", "PV-AU-1"],
  "A reader marking an unknown thread gets 403 token_right_missing before 404",
  lambda: [mark("reader", "th_987654321", "closed", RIGHT_MISSING)])
V("authority/order-reader-reopen-open-thread", ["PV-AU-6", "PV-AU-1"],
  "A reader reopening an open thread gets 403 token_right_missing before 409",
  lambda: setup("open") + [reopen("reader", "$t", RIGHT_MISSING)])
V("authority/order-anonymous-read-unknown-thread", ["PV-AU-6", "PV-TR-4"],
  "Reading an unknown thread without a token is 401 before 404",
  lambda: [read("anonymous", "th_987654321", expect=TOKEN_MISSING)])
V("authority/order-invalid-body-before-unknown-thread", ["PV-AU-6", "PV-EN-1"],
  "An invalid body addressed to an unknown thread is 400 invalid_body before 404",
  lambda: [reply("agent_a", "answer", thread="th_987654321", expect=INVALID, tone="x")])
V("authority/order-too-long-before-unknown-thread", ["PV-AU-6", "PV-EN-2"],
  "A body one character over body_max_chars (501), addressed to an unknown thread, is 400 body_too_long before 404",
  lambda: [reply("agent_a", "answer", thread="th_987654321", b={"$fill": {"s": "x", "chars": 501}}, expect=TOO_LONG)])
V("authority/order-unknown-kind-before-unknown-thread", ["PV-AU-6", "PV-EN-3"],
  "An unknown kind addressed to an unknown thread is 400 kind_unknown before 404",
  lambda: [reply("agent_a", "shrug", thread="th_987654321", expect=KIND_UNKNOWN)])
V("authority/order-bad-extension-before-unknown-parent", ["PV-AU-6", "PV-EN-7"],
  "An invalid extension replying to an unknown parent is 400 invalid_body before 404",
  lambda: [reply("agent_a", "answer", parent="msg_987654321", ext="NOPE", expect=INVALID)])
V("authority/order-mark-invalid-state-unknown-thread", ["PV-AU-6", "PV-ST-2"],
  "mark with an invalid state on an unknown thread is 400 before 404",
  lambda: [mark("agent_a", "th_987654321", "pending", INVALID)])
V("authority/order-unknown-thread-before-authority", ["PV-AU-6", "PV-EN-5"],
  "A non-creator deciding an unknown thread gets 404 thread_not_found before 403 thread_authority_missing",
  lambda: [reply("agent_b", "decide", thread="th_987654321", expect=THREAD_NF)])
V("authority/order-mark-unknown-thread-before-authority", ["PV-AU-6"],
  "A non-creator marking an unknown thread gets 404 before 403",
  lambda: [mark("agent_b", "th_987654321", "closed", THREAD_NF)])
V("authority/order-invalid-body-before-authority", ["PV-AU-6"],
  "A non-creator's decide with an unknown field gets 400 invalid_body before 403 thread_authority_missing",
  lambda: setup("open") + [reply("agent_b", "decide", thread="$t", expect=INVALID, verdict="final")])
V("authority/order-authority-before-locked", ["PV-AU-6", "PV-AU-2", "PV-ST-4"],
  "A non-creator closing a locked thread gets 403 thread_authority_missing before 409 thread_locked",
  lambda: setup("closed!") + [reply("agent_b", "close", thread="$t", expect=AUTHORITY)])
V("authority/order-mark-authority-before-locked", ["PV-AU-6", "PV-AU-2"],
  "A non-creator marking a locked thread gets 403 before 409",
  lambda: setup("closed!") + [mark("agent_b", "$t", "deferred", AUTHORITY)])
V("authority/order-authority-before-transition", ["PV-AU-6", "PV-AU-2"],
  "A non-creator marking open on an answered thread gets 403 thread_authority_missing before 409 invalid_transition",
  lambda: setup("answered") + [mark("agent_b", "$t", "open", AUTHORITY)])
V("authority/order-invalid-body-before-locked", ["PV-AU-6", "PV-EN-1"],
  "An invalid (empty) body sent to a locked thread is 400 invalid_body before 409 thread_locked",
  lambda: setup("closed!") + [reply("agent_b", "inform", thread="$t", b="", expect=INVALID)])
V("authority/order-too-long-before-locked", ["PV-AU-6", "PV-EN-2"],
  "A body one character over body_max_chars (501), sent to a locked thread, is 400 body_too_long before 409",
  lambda: setup("closed!") + [reply("agent_b", "inform", thread="$t", b={"$fill": {"s": "😀", "chars": 501}}, expect=TOO_LONG)])
V("authority/order-unknown-parent-before-locked", ["PV-AU-6", "PV-EN-5"],
  "An unknown parent inside a locked thread is 404 message_not_found before 409",
  lambda: setup("closed!") + [reply("agent_b", "inform", thread="$t", parent="msg_987654321", expect=MSG_NF)])
V("authority/order-locked-before-self-reply", ["PV-AU-6", "PV-ST-4", "PV-ID-2"],
  "The creator replying to its own root in a locked thread gets 409 thread_locked (locked comes before self-reply)",
  lambda: setup("closed!") + [reply("agent_a", "inform", thread="$t", expect=LOCKED)])
V("authority/order-transition-before-self-reply", ["PV-AU-6", "PV-ID-2"],
  "The creator answering its own root on a decided thread gets 409 invalid_transition (transition comes before self-reply)",
  lambda: setup("decided") + [reply("agent_a", "answer", thread="$t", expect=TRANSITION)])
V("authority/order-thread-required-before-right-check-of-thread", ["PV-AU-6", "PV-EN-6"],
  "A decide without thread by a writer is 400 thread_required (no thread, so no authority question)",
  lambda: [post("agent_b", env("decide"), THREAD_REQUIRED)])
