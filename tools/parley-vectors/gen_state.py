from dsl import *


def V(vid, reqs, title, steps_fn, **kw):
    CUR["id"] = vid
    return vector("state", vid, reqs, title, steps_fn(), **kw)


LATERAL = ["deferred", "obsolete", "rejected"]


def setup(state):
    """agent_a opens $t (root $r), then brings it into `state`.

    Suffix `!` = confirmed by the moderator (lock holder); otherwise proposed by a model."""
    confirmed = state.endswith("!")
    base = state.rstrip("!")
    st = [open_thread()]
    if base == "open":
        if confirmed:
            st.append(mark("moderator", "$t", "open", ok(200, {"thread": {"state": "open", "state_confirmed_at": NONNULL_TS}})))
        return st
    if base == "answered":
        st.append(reply("agent_b", "answer", thread="$t", expect=created({"thread": {"state": "answered"}})))
    elif base == "decided":
        st.append(reply("agent_a", "decide", thread="$t", expect=created({"thread": {"state": "decided"}})))
    elif base == "closed":
        st.append(mark("agent_a", "$t", "closed", ok(200, {"thread": thread_state("closed", False)})))
    elif base in LATERAL:
        st.append(mark("agent_a", "$t", base, ok(200, {"thread": thread_state(base, False)})))
    else:
        raise ValueError(base)
    if confirmed:
        st.append(mark("moderator", "$t", base, ok(200, {"thread": {"state": base, "state_confirmed_at": NONNULL_TS}})))
    return st


def unchanged(state, confirmed=None):
    m = {"state": state}
    if confirmed is not None:
        m["state_confirmed_at"] = NONNULL_TS if confirmed else None
    return read("agent_a", "$t", {"thread": m}, note="a refused act leaves the thread unchanged")


# ================================================================ PV-ST-1 forward only
V("state/answer-open-to-answered", ["PV-ST-1", "PV-ST-5"],
  "answer on an open thread moves it to answered (proposed, labelled with the answerer's identity)",
  lambda: setup("open") + [reply("agent_b", "answer", thread="$t",
                                 expect=created({"thread": thread_state("answered", False, "llm", ident("agent_b"))}))])
V("state/decide-skips-open-to-decided", ["PV-ST-1"],
  "decide on an open thread skips answered and moves it to decided",
  lambda: setup("open") + [reply("agent_a", "decide", thread="$t", expect=created({"thread": {"state": "decided"}})),
                           unchanged("decided")])
V("state/close-skips-open-to-closed", ["PV-ST-1"],
  "close on an open thread skips two steps and moves it to (proposed) closed",
  lambda: setup("open") + [reply("agent_a", "close", thread="$t",
                                 expect=created({"thread": thread_state("closed", False)}))])
V("state/decide-answered-to-decided", ["PV-ST-1"],
  "decide on an answered thread moves it to decided",
  lambda: setup("answered") + [reply("agent_a", "decide", thread="$t", expect=created({"thread": {"state": "decided"}}))])
V("state/close-decided-to-closed", ["PV-ST-1"],
  "close on a decided thread moves it to closed",
  lambda: setup("decided") + [reply("agent_a", "close", thread="$t", expect=created({"thread": {"state": "closed"}}))])
V("state/mark-decided-on-open", ["PV-ST-1", "PV-ST-2"],
  "mark decided on an open thread is a forward skip and is accepted",
  lambda: setup("open") + [mark("agent_a", "$t", "decided", ok(200, {"thread": {"state": "decided"}}))])
V("state/mark-closed-on-answered", ["PV-ST-1", "PV-ST-2"],
  "mark closed on an answered thread is a forward skip and is accepted",
  lambda: setup("answered") + [mark("agent_a", "$t", "closed", ok(200, {"thread": {"state": "closed"}}))])
V("state/second-answer-same-state", ["PV-ST-1", "PV-ST-7"],
  "A second answer on an answered thread is accepted, the state stays answered and no event is added",
  lambda: setup("answered") + [reply("moderator", "inform", thread="$t"),
                               reply("verifier", "answer", thread="$t", expect=created({"thread": {"state": "answered"}})),
                               events("agent_a", "$t", {"events": [{"to_state": "open"}, {"to_state": "answered"}]})])
V("state/decide-on-decided-same-state", ["PV-ST-1"],
  "A second decide on a decided thread is accepted and changes nothing",
  lambda: setup("decided") + [reply("agent_a", "decide", thread="$t", ext="again",
                                    expect=created({"thread": thread_state("decided", False)})),
                              events("agent_a", "$t", {"events": {"$len": 2}})])
V("state/answer-on-decided-refused", ["PV-ST-1"],
  "answer on a decided thread would move it back: 409 invalid_transition",
  lambda: setup("decided") + [reply("agent_b", "answer", thread="$t", expect=TRANSITION), unchanged("decided")])
V("state/answer-on-proposed-closed-refused", ["PV-ST-1", "PV-ST-4"],
  "answer on a proposed closed thread is a backward move: 409 invalid_transition (not thread_locked: a proposal does not lock)",
  lambda: setup("closed") + [reply("agent_b", "answer", thread="$t", expect=TRANSITION), unchanged("closed", False)])
V("state/decide-on-proposed-closed-refused", ["PV-ST-1"],
  "decide on a proposed closed thread is a backward move: 409 invalid_transition",
  lambda: setup("closed") + [reply("agent_a", "decide", thread="$t", expect=TRANSITION)])
V("state/mark-answered-on-decided-refused", ["PV-ST-1", "PV-ST-2"],
  "mark answered on a decided thread is refused 409 invalid_transition",
  lambda: setup("decided") + [mark("agent_a", "$t", "answered", TRANSITION), unchanged("decided")])
V("state/mark-decided-on-proposed-closed-refused", ["PV-ST-1", "PV-ST-2"],
  "mark decided on a proposed closed thread is refused 409 invalid_transition",
  lambda: setup("closed") + [mark("agent_a", "$t", "decided", TRANSITION)])
V("state/moderator-bound-by-forward-only", ["PV-ST-1"],
  "A lock holder is bound by forward-only too: moderator mark answered on decided is 409 invalid_transition",
  lambda: setup("decided!") + [mark("moderator", "$t", "answered", TRANSITION), unchanged("decided", True)])
V("state/refused-transition-adds-no-event", ["PV-ST-1", "PV-ST-7"],
  "A refused transition leaves no event behind",
  lambda: setup("decided") + [reply("agent_b", "answer", thread="$t", expect=TRANSITION),
                              events("agent_b", "$t", {"events": [{"to_state": "open"}, {"to_state": "decided"}]})])
V("state/decide-deep-in-tree-sets-whole-thread", ["PV-ST-1", "PV-AU-2"],
  "A decide replying to a nested message sets the state of the whole thread",
  lambda: setup("open") + [reply("agent_b", "propose", thread="$t", capture={"m": "/message/id"}),
                           reply("agent_a", "decide", parent="$m", expect=created({"thread": {"id": "$t", "state": "decided"}})),
                           unchanged("decided")])

# ================================================================ PV-ST-2 mark
V("state/mark-open-from-answered-refused", ["PV-ST-2"],
  "mark open on an answered thread is refused 409 invalid_transition (open is reached only by reopen)",
  lambda: setup("answered") + [mark("agent_a", "$t", "open", TRANSITION), unchanged("answered")])
V("state/mark-open-from-decided-by-moderator-refused", ["PV-ST-2"],
  "Even the moderator cannot mark open on a decided thread: 409 invalid_transition",
  lambda: setup("decided") + [mark("moderator", "$t", "open", TRANSITION)])
V("state/mark-open-from-lateral-refused", ["PV-ST-2", "PV-ST-3"],
  "mark open on a deferred thread is refused 409 invalid_transition even for the moderator (that is reopen)",
  lambda: setup("deferred") + [mark("moderator", "$t", "open", TRANSITION), unchanged("deferred")])
V("state/mark-open-from-proposed-closed-refused", ["PV-ST-2"],
  "mark open on a proposed closed thread is refused 409 invalid_transition (use reopen)",
  lambda: setup("closed") + [mark("agent_a", "$t", "open", TRANSITION)])
V("state/moderator-mark-open-confirms-proposed-open", ["PV-ST-2", "PV-ST-5", "PV-ST-7"],
  "The moderator marking the current proposed open confirms it and returns a confirmation event",
  lambda: setup("open") + [mark("moderator", "$t", "open", ok(200, {
      "thread": thread_state("open", True, "llm", KI_MOD),
      "event": {"from_state": "open", "to_state": "open", "label": KI_MOD, "confirmed_at": NONNULL_TS}}))])
V("state/creator-mark-open-on-proposed-open-changes-nothing", ["PV-ST-2", "PV-ST-1"],
  "The creator marking the current proposed open changes nothing: still a proposal, event null",
  lambda: setup("open") + [mark("agent_a", "$t", "open", ok(200, {"thread": thread_state("open", False), "event": None})),
                           events("agent_a", "$t", {"events": {"$len": 1}})])
V("state/creator-remark-confirmed-state-event-null", ["PV-ST-2", "PV-ST-5"],
  "The creator marking the already confirmed answered state changes nothing: it stays confirmed (not downgraded to a proposal), event null",
  lambda: setup("answered!") + [mark("agent_a", "$t", "answered", ok(200, {
      "thread": thread_state("answered", True, "llm", KI_MOD), "event": None})),
      events("agent_a", "$t", {"events": {"$len": 3}})])
V("state/moderator-remark-confirmed-state-event-null", ["PV-ST-2"],
  "The moderator marking an already confirmed decided state again returns event null and adds no event",
  lambda: setup("decided!") + [mark("moderator", "$t", "decided", ok(200, {"thread": thread_state("decided", True), "event": None})),
                               events("agent_a", "$t", {"events": {"$len": 3}})])
V("state/human-remark-moderator-confirmed-state-event-null", ["PV-ST-2", "PV-AU-4"],
  "The human marking a state the moderator already confirmed changes nothing, whoever marks: event null",
  lambda: setup("answered!") + [mark("human", "$t", "answered", ok(200, {"thread": {"state": "answered"}, "event": None}))])
V("state/mark-unknown-state-refused", ["PV-ST-2", "PV-EN-1"],
  "mark with a state that is not forward nor lateral (pending) is refused 400 invalid_body",
  lambda: setup("open") + [mark("agent_a", "$t", "pending", INVALID), unchanged("open")])
V("state/mark-without-state-refused", ["PV-ST-2", "PV-EN-1"],
  "mark without a state is refused 400 invalid_body",
  lambda: setup("open") + [step("agent_a", "mark", {"thread": "$t"}, INVALID)])
V("state/mark-state-case-sensitive", ["PV-ST-2"],
  "mark Closed (capitalised) is not a state: 400 invalid_body",
  lambda: setup("open") + [mark("agent_a", "$t", "Closed", INVALID)])
for lat, frm in [("deferred", "open"), ("obsolete", "answered"), ("rejected", "decided"), ("obsolete", "closed")]:
    V(f"state/mark-{lat}-from-{frm}", ["PV-ST-2", "PV-ST-5"],
      f"mark {lat} on a {frm} thread by its creator is accepted as a proposed {lat}",
      lambda lat=lat, frm=frm: setup(frm) + [mark("agent_a", "$t", lat, ok(200, {
          "thread": thread_state(lat, False, "llm", ident("agent_a")),
          "event": {"from_state": frm, "to_state": lat, "confirmed_at": None}}))])

# ================================================================ PV-ST-3 lateral
for lat in LATERAL:
    V(f"state/answer-on-{lat}-refused", ["PV-ST-3"],
      f"answer on a {lat} thread is refused 409 invalid_transition (lateral states are ends)",
      lambda lat=lat: setup(lat) + [reply("agent_b", "answer", thread="$t", expect=TRANSITION), unchanged(lat)])
    V(f"state/inform-on-{lat}-accepted", ["PV-ST-3"],
      f"A non-marking inform on a {lat} thread is still accepted and the state stays {lat}",
      lambda lat=lat: setup(lat) + [reply("agent_b", "inform", thread="$t", expect=created({"thread": {"state": lat}}))])
V("state/decide-on-deferred-refused", ["PV-ST-3"],
  "decide by the creator on a deferred thread is refused 409 invalid_transition",
  lambda: setup("deferred") + [reply("agent_a", "decide", thread="$t", expect=TRANSITION), unchanged("deferred")])
V("state/close-on-rejected-refused", ["PV-ST-3"],
  "close by the creator on a rejected thread is refused 409 invalid_transition",
  lambda: setup("rejected") + [reply("agent_a", "close", thread="$t", expect=TRANSITION)])
V("state/moderator-close-on-confirmed-obsolete-refused", ["PV-ST-3"],
  "Even the moderator cannot close a confirmed obsolete thread: 409 invalid_transition",
  lambda: setup("obsolete!") + [reply("moderator", "close", thread="$t", expect=TRANSITION), unchanged("obsolete", True)])
V("state/mark-lateral-to-other-lateral-refused", ["PV-ST-3"],
  "mark obsolete on a deferred thread is refused 409 invalid_transition",
  lambda: setup("deferred") + [mark("agent_a", "$t", "obsolete", TRANSITION)])
V("state/moderator-mark-lateral-to-other-lateral-refused", ["PV-ST-3"],
  "The moderator marking rejected on a confirmed deferred thread is refused 409 invalid_transition",
  lambda: setup("deferred!") + [mark("moderator", "$t", "rejected", TRANSITION)])
V("state/mark-forward-from-lateral-refused", ["PV-ST-3"],
  "mark decided on an obsolete thread is refused 409 invalid_transition",
  lambda: setup("obsolete") + [mark("moderator", "$t", "decided", TRANSITION)])
V("state/human-mark-closed-from-lateral-refused", ["PV-ST-3", "PV-AU-4"],
  "The human marking closed on a rejected thread is refused 409 invalid_transition (the human overrides authority, not the machine)",
  lambda: setup("rejected") + [mark("human", "$t", "closed", TRANSITION)])
for k in ["clarify", "propose", "agree", "object", "ask"]:
    V(f"state/{k}-on-deferred-accepted", ["PV-ST-3"],
      f"A non-marking {k} on a deferred thread is accepted",
      lambda k=k: setup("deferred") + [reply("agent_b", k, thread="$t", expect=created({"thread": {"state": "deferred"}}))])
V("state/moderator-confirms-proposed-lateral", ["PV-ST-3", "PV-ST-5"],
  "The moderator marking the current proposed deferred confirms it (confirming is not a transition, so PV-ST-3 does not refuse it)",
  lambda: setup("deferred") + [mark("moderator", "$t", "deferred", ok(200, {
      "thread": thread_state("deferred", True, "llm", KI_MOD),
      "event": {"from_state": "deferred", "to_state": "deferred", "confirmed_at": NONNULL_TS}}))])
V("state/human-confirms-proposed-lateral", ["PV-ST-3", "PV-ST-5", "PV-AU-4"],
  "The human marking the current proposed rejected confirms it with state_origin user",
  lambda: setup("rejected") + [mark("human", "$t", "rejected", ok(200, {"thread": thread_state("rejected", True, "user")}))])
V("state/creator-remark-proposed-lateral-changes-nothing", ["PV-ST-3", "PV-ST-1"],
  "The creator marking the current proposed obsolete again changes nothing (still a proposal)",
  lambda: setup("obsolete") + [mark("agent_a", "$t", "obsolete", ok(200, {"thread": thread_state("obsolete", False)}))])

# ================================================================ PV-ST-4 locking
LOCK_ACTS = [
    ("inform-by-other", lambda: reply("agent_b", "inform", thread="$t", expect=LOCKED)),
    ("ask-by-other", lambda: reply("agent_b", "ask", thread="$t", expect=LOCKED)),
    ("answer-by-other", lambda: reply("agent_b", "answer", thread="$t", expect=LOCKED)),
    ("agree-by-other-with-parent-only", lambda: reply("agent_b", "agree", parent="$r", expect=LOCKED)),
    ("decide-by-creator", lambda: reply("agent_a", "decide", thread="$t", expect=LOCKED)),
    ("close-by-creator", lambda: reply("agent_a", "close", thread="$t", ext="again", expect=LOCKED)),
    ("inform-by-moderator", lambda: reply("moderator", "inform", thread="$t", expect=LOCKED)),
    ("inform-by-human", lambda: reply("human", "inform", thread="$t", expect=LOCKED)),
    ("mark-decided-by-creator", lambda: mark("agent_a", "$t", "decided", LOCKED)),
    ("mark-deferred-by-moderator", lambda: mark("moderator", "$t", "deferred", LOCKED)),
    ("mark-obsolete-by-human", lambda: mark("human", "$t", "obsolete", LOCKED)),
    ("mark-closed-by-moderator", lambda: mark("moderator", "$t", "closed", LOCKED)),
]
for slug, act in LOCK_ACTS:
    V(f"state/locked-refuses-{slug}", ["PV-ST-4"],
      f"A confirmed closed thread refuses {slug.replace('-', ' ')} with 409 thread_locked",
      lambda act=act: setup("closed!") + [act(), unchanged("closed", True)])
V("state/locked-refuses-deep-reply", ["PV-ST-4"],
  "The lock covers the whole tree: a reply to a nested message of a confirmed closed thread is 409 thread_locked",
  lambda: setup("open") + [reply("agent_b", "propose", thread="$t", capture={"m": "/message/id"}),
                           mark("moderator", "$t", "closed"),
                           reply("agent_a", "agree", parent="$m", expect=LOCKED)])
V("state/moderator-close-post-locks", ["PV-ST-4", "PV-ST-5"],
  "A close posted by the moderator is confirmed and locks the thread",
  lambda: setup("open") + [reply("moderator", "close", thread="$t", expect=created({"thread": thread_state("closed", True, "llm", KI_MOD)})),
                           reply("agent_b", "inform", thread="$t", expect=LOCKED)])
V("state/human-close-locks", ["PV-ST-4", "PV-AU-4"],
  "A close posted by the human on agent_a's thread is confirmed (user) and locks it",
  lambda: setup("open") + [reply("human", "close", thread="$t", expect=created({"thread": thread_state("closed", True, "user")})),
                           reply("agent_a", "inform", thread="$t", ext="x", expect=LOCKED)])
V("state/proposed-closed-does-not-lock", ["PV-ST-4", "PV-ST-5"],
  "A closed proposed by the creator does not lock: other participants can still post non-marking kinds",
  lambda: setup("closed") + [reply("agent_b", "inform", thread="$t", expect=created({"thread": thread_state("closed", False)})),
                             reply("moderator", "clarify", thread="$t", expect=created())])
V("state/moderator-confirming-proposed-close-locks", ["PV-ST-4", "PV-ST-5"],
  "The moderator marking closed on a proposed closed confirms it, and from then on the thread is locked",
  lambda: setup("closed") + [mark("moderator", "$t", "closed", ok(200, {"thread": thread_state("closed", True, "llm", KI_MOD)})),
                             reply("agent_b", "inform", thread="$t", expect=LOCKED)])
V("state/moderator-close-post-confirms-proposed-close", ["PV-ST-4", "PV-ST-5"],
  "A close posted by the moderator on a proposed closed thread confirms it and locks",
  lambda: setup("closed") + [reply("moderator", "close", thread="$t", expect=created({"thread": thread_state("closed", True)})),
                             reply("agent_b", "clarify", thread="$t", expect=LOCKED)])
V("state/human-confirming-proposed-close-locks", ["PV-ST-4", "PV-AU-4"],
  "The human marking closed on a proposed closed confirms it (user) and locks",
  lambda: setup("closed") + [mark("human", "$t", "closed", ok(200, {"thread": thread_state("closed", True, "user")})),
                             reply("moderator", "inform", thread="$t", expect=LOCKED)])
V("state/reopen-unlocks", ["PV-ST-4", "PV-ST-6"],
  "After a confirmed closed thread is reopened, posts and answers are accepted again",
  lambda: setup("closed!") + [reply("agent_b", "answer", thread="$t", expect=LOCKED),
                              reopen("moderator", "$t", ok(200, {"thread": {"state": "open"}})),
                              reply("agent_b", "answer", thread="$t", expect=created({"thread": {"state": "answered"}}))])

# ================================================================ PV-ST-5 proposal vs confirmation
V("state/model-creation-is-proposed-open", ["PV-ST-5", "PV-ST-7"],
  "A thread opened by a model starts as a proposed open (state_origin llm, state_confirmed_at null, label = identity)",
  lambda: [open_thread(match={"thread": thread_state("open", False, "llm", ident("agent_a"))})])
V("state/verifier-creation-is-proposed", ["PV-ST-5"],
  "The verify right is not lock: a thread opened by the verifier is a proposed open",
  lambda: [open_thread("verifier", match={"thread": thread_state("open", False, "llm", ident("verifier"))})])
V("state/moderator-creation-is-confirmed-open", ["PV-ST-5"],
  "A thread opened by a lock holder starts confirmed (state_origin llm, state_confirmed_at set, label KI · <lock label>)",
  lambda: [open_thread("moderator", match={"thread": thread_state("open", True, "llm", KI_MOD)})])
V("state/human-creation-is-confirmed-user", ["PV-ST-5", "PV-ST-7"],
  "A thread opened by the human starts confirmed with state_origin user and the human's name as label",
  lambda: [open_thread("human", match={"thread": thread_state("open", True, "user")}),
           read("human", "$t", {"thread": {"state_label": {"$type": "string"}}}, capture={"hl": "/thread/state_label"}),
           whoami("human", {"identity": {"$concat": ["human:", "$hl"]}})])
V("state/answer-by-moderator-is-confirmed", ["PV-ST-5"],
  "An answer by the lock holder sets a confirmed answered (label KI · <lock label>)",
  lambda: setup("open") + [reply("moderator", "answer", thread="$t",
                                 expect=created({"thread": thread_state("answered", True, "llm", KI_MOD)}))])
V("state/answer-by-human-is-confirmed", ["PV-ST-5", "PV-AU-4"],
  "An answer by the human sets a confirmed answered with state_origin user",
  lambda: setup("open") + [reply("human", "answer", thread="$t", expect=created({"thread": thread_state("answered", True, "user")}))])
V("state/decide-by-creator-is-proposed", ["PV-ST-5"],
  "A decide by the creator (a model without lock) is a proposal",
  lambda: setup("open") + [reply("agent_a", "decide", thread="$t",
                                 expect=created({"thread": thread_state("decided", False, "llm", ident("agent_a"))}))])
V("state/decide-by-moderator-is-confirmed", ["PV-ST-5"],
  "A decide by the moderator on a foreign thread is confirmed",
  lambda: setup("answered") + [reply("moderator", "decide", thread="$t",
                                     expect=created({"thread": thread_state("decided", True, "llm", KI_MOD)}))])
V("state/moderator-confirms-proposed-answered", ["PV-ST-5", "PV-ST-7"],
  "The moderator marking the current proposed answered confirms it: state_confirmed_at set, label KI · <lock label>",
  lambda: setup("answered") + [mark("moderator", "$t", "answered", ok(200, {
      "thread": thread_state("answered", True, "llm", KI_MOD),
      "event": {"from_state": "answered", "to_state": "answered", "origin": "llm", "label": KI_MOD,
                "actor": party("moderator"), "confirmed_at": NONNULL_TS}}))])
V("state/moderator-answer-confirms-proposed-answered", ["PV-ST-5"],
  "answer is a mark: an answer by the moderator on a proposed answered thread confirms it",
  lambda: setup("answered") + [reply("moderator", "answer", thread="$t",
                                     expect=created({"thread": thread_state("answered", True, "llm", KI_MOD)}))])
V("state/human-confirms-proposed-decided", ["PV-ST-5", "PV-AU-4"],
  "The human marking the current proposed decided confirms it with state_origin user",
  lambda: setup("decided") + [mark("human", "$t", "decided", ok(200, {
      "thread": thread_state("decided", True, "user"),
      "event": {"from_state": "decided", "to_state": "decided", "origin": "user", "confirmed_at": NONNULL_TS}}))])
V("state/proposal-after-confirmation", ["PV-ST-5"],
  "After the moderator confirmed answered, the creator's decide is again a proposal (state_confirmed_at back to null)",
  lambda: setup("answered!") + [reply("agent_a", "decide", thread="$t",
                                      expect=created({"thread": thread_state("decided", False, "llm", ident("agent_a"))}))])
V("state/other-model-answer-is-proposal-on-moderator-thread", ["PV-ST-5"],
  "An answer by an ordinary writer on a moderator's confirmed thread is a proposal",
  lambda: [open_thread("moderator"),
           reply("agent_b", "answer", thread="$t", expect=created({"thread": thread_state("answered", False, "llm", ident("agent_b"))}))])

# ================================================================ PV-ST-6 reopen
V("state/reopen-proposed-closed-by-creator", ["PV-ST-6", "PV-AU-3", "PV-ST-5"],
  "The creator reopens its proposed closed thread: open again, as a proposal",
  lambda: setup("closed") + [reopen("agent_a", "$t", ok(200, {
      "thread": thread_state("open", False, "llm", ident("agent_a")),
      "event": {"from_state": "closed", "to_state": "open", "confirmed_at": None}}))])
V("state/reopen-confirmed-closed-by-moderator", ["PV-ST-6", "PV-ST-5"],
  "The moderator reopens a confirmed closed thread: confirmed open",
  lambda: setup("closed!") + [reopen("moderator", "$t", ok(200, {
      "thread": thread_state("open", True, "llm", KI_MOD),
      "event": {"from_state": "closed", "to_state": "open", "label": KI_MOD, "confirmed_at": NONNULL_TS}}))])
for lat, who, origin in [("deferred", "moderator", "llm"), ("obsolete", "human", "user"), ("rejected", "moderator", "llm")]:
    V(f"state/reopen-{lat}-by-{who}", ["PV-ST-6", "PV-AU-3"],
      f"The {who} reopens a {lat} thread: open, confirmed",
      lambda lat=lat, who=who, origin=origin: setup(lat) + [reopen(who, "$t", ok(200, {
          "thread": thread_state("open", True, origin),
          "event": {"from_state": lat, "to_state": "open"}}))])
for frm, who in [("open", "agent_a"), ("answered", "moderator"), ("decided", "human"), ("open!", "human")]:
    V(f"state/reopen-{frm.rstrip('!')}{'-confirmed' if frm.endswith('!') else ''}-refused-{who}", ["PV-ST-6"],
      f"reopen of a {frm.rstrip('!')} thread by the {who} is refused 409 invalid_transition (only closed and lateral states reopen)",
      lambda frm=frm, who=who: setup(frm) + [reopen(who, "$t", TRANSITION), unchanged(frm.rstrip("!"))])
V("state/reopen-then-forward-again", ["PV-ST-6", "PV-ST-1"],
  "A reopened thread walks forward again: answer then decide are accepted",
  lambda: setup("rejected!") + [reopen("human", "$t"),
                                reply("agent_b", "answer", thread="$t", expect=created({"thread": {"state": "answered"}})),
                                reply("agent_a", "decide", thread="$t", expect=created({"thread": {"state": "decided"}}))])

# ================================================================ PV-ST-7 events
V("state/event-lifecycle", ["PV-ST-7", "PV-RD-2", "PV-ST-5"],
  "Creation, answer, decide, a moderator close and a moderator reopen produce exactly five events, in order, with origin, label and confirmation",
  lambda: setup("open") + [
      reply("agent_b", "answer", thread="$t"),
      reply("moderator", "inform", thread="$t", note="non-marking: no event"),
      reply("agent_a", "decide", thread="$t"),
      mark("moderator", "$t", "closed"),
      reopen("moderator", "$t"),
      events("reader", "$t", {"events": [
          {"id": rx(EV), "subject": "thread", "thread": "$t", "claim": None, "from_state": None, "to_state": "open",
           "origin": "llm", "label": ident("agent_a"), "actor": party("agent_a"), "at": rx(TS), "confirmed_at": None},
          {"from_state": "open", "to_state": "answered", "origin": "llm", "label": ident("agent_b"),
           "actor": party("agent_b"), "confirmed_at": None},
          {"from_state": "answered", "to_state": "decided", "label": ident("agent_a"), "confirmed_at": None},
          {"from_state": "decided", "to_state": "closed", "origin": "llm", "label": KI_MOD,
           "actor": party("moderator"), "confirmed_at": rx(TS)},
          {"from_state": "closed", "to_state": "open", "label": KI_MOD, "confirmed_at": rx(TS)}]})])
V("state/event-human-label-and-origin", ["PV-ST-7", "PV-ST-5"],
  "A human's mark is one event with origin user and the human's name (human:<name> without the prefix) as label",
  lambda: setup("open") + [
      mark("human", "$t", "deferred", ok(200, {"event": {"origin": "user", "to_state": "deferred", "confirmed_at": rx(TS),
                                                         "actor": party("human"), "label": {"$type": "string"}}}),
           capture={"hl": "/event/label"}),
      whoami("human", {"identity": {"$concat": ["human:", "$hl"]}}),
      read("agent_a", "$t", {"thread": {"state_label": "$hl", "state_origin": "user"}})])
V("state/event-returned-by-mark-is-listed", ["PV-ST-7", "PV-RD-2"],
  "The event returned by mark is the one list_events shows last",
  lambda: setup("open") + [
      mark("agent_a", "$t", "decided", ok(200, {"event": {"id": rx(EV)}}), capture={"e": "/event/id"}),
      events("agent_a", "$t", {"events": [{"to_state": "open"}, {"id": "$e", "to_state": "decided"}]})])
V("state/non-marking-posts-add-no-event", ["PV-ST-7"],
  "clarify, inform, propose, agree and object do not change the state and add no event",
  lambda: setup("open") + [reply("agent_b", k, thread="$t") for k in ["clarify", "inform", "propose", "agree", "object"]] +
  [events("agent_a", "$t", {"events": [{"from_state": None, "to_state": "open"}]})])
V("state/confirmation-is-one-event", ["PV-ST-7"],
  "Confirming a proposed decided adds exactly one event (decided → decided, confirmed_at set)",
  lambda: setup("decided") + [mark("moderator", "$t", "decided"),
                              events("agent_a", "$t", {"events": [{"to_state": "open"}, {"to_state": "decided", "confirmed_at": None},
                                                                  {"from_state": "decided", "to_state": "decided", "confirmed_at": rx(TS)}]})])
V("state/moderator-creation-event-confirmed", ["PV-ST-7", "PV-ST-5"],
  "The creation event of a moderator's thread is confirmed and labelled KI · <lock label>",
  lambda: [open_thread("moderator"),
           events("agent_a", "$t", {"events": [{"from_state": None, "to_state": "open", "origin": "llm", "label": KI_MOD,
                                                "confirmed_at": rx(TS), "actor": party("moderator")}]})])
V("state/event-actor-carries-extension", ["PV-ST-7", "PV-RS-2"],
  "An answer sent from extension w2 produces an event whose actor is the party (agent_b, w2) and whose label is the identity",
  lambda: setup("open") + [reply("agent_b", "answer", thread="$t", ext="w2"),
                           events("agent_a", "$t", {"events": [{"to_state": "open"},
                                                               {"to_state": "answered", "actor": party("agent_b", "w2"),
                                                                "label": ident("agent_b")}]})])
