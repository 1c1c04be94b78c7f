//! The driver's dialectic steps (PV-DI): the requests of `assert`, `attest`, `verify`,
//! `refute` and `read_claim`, the claim ids the target assigns, the claim read back
//! against the model's, and `valid_until` on the target's own clock.
//!
//! Time: the target's clock is read off the `created_at` of its messages
//! ([`super::clock`]). An assert's `valid_until` is the run's shared deadline, a little ahead
//! of the target's clock, and `expired` is compared only when the whole read was handled
//! clearly before or after that instant (the offset's uncertainty apart): a claim read in
//! that window may read either way. A read generated "after expiry" waits for the instant to
//! pass — a short real wait in the driver, shared by the run's claims, never in the pure model.

use chrono::{SecondsFormat, Utc};
use serde_json::{Value, json};

use super::dialectic::{Act, Claim, ClaimSt, Evidence, Until};
use super::driver::{Driver, Finding, agree, mismatch};
use super::observe::Answer;
use super::observe::{extension_of, str_at};
use super::party::EXTENSIONS;
use super::state::World;

/// The `evidence` member of a dialectic post (`None`: left out), PV-DI-1.
pub fn evidence_json(e: Evidence) -> Option<Value> {
    match e {
        Evidence::Valid => Some(json!([{"kind": "url", "ref": "https://example.org/model"}])),
        Evidence::Invalid => Some(json!([{"kind": "url", "ref": "/relative/model"}])),
        Evidence::Missing => None,
    }
}

impl Driver<'_> {
    /// Learns whether the target keeps `valid_until` to the millisecond before the run's
    /// first `soon` assert needs a deadline (see [`super::clock`]): without it that deadline
    /// is rounded up to a whole second, and the first read "after expiry" waits up to a
    /// second for it. One assert by `actor` (who holds the write and read rights), valid a
    /// day ahead with a fraction of 987 ms; the claim's own `valid_until` read back from the
    /// post's `claim` (PV-RS-2), else from `read_claim` — never the message's, which may echo
    /// the request whatever the claim keeps. Nothing is judged: a refusal or an odd answer
    /// leaves the precision unknown and the rounding in place. The exchanges it made
    /// (counted by the run, never a step of a sequence).
    pub async fn probe_precision(&mut self, actor: usize) -> usize {
        let until = self.clock.probe_until();
        let args = json!({
            "kind": "assert",
            "body": "model clock probe",
            "valid_until": until.to_rfc3339_opts(SecondsFormat::Millis, true),
            "evidence": evidence_json(Evidence::Valid),
        });
        // Admitted first, then counted: the order of `step` and `send_op`.
        let auth = self.admit(actor, true).await;
        self.quota.attempt(actor);
        let sent = Utc::now();
        let (answer, mut exchanges) = self.call(auth, "post", args).await;
        let Answer::Success(b) = answer else {
            return exchanges.len();
        };
        if let Some(created) = str_at(&b, "/message/created_at") {
            self.clock.observe(created, sent, Utc::now());
        }
        let echoed = match str_at(&b, "/claim/valid_until") {
            Some(e) => Some(e.to_string()),
            None => {
                let claim = str_at(&b, "/message/claim").unwrap_or_default().to_string();
                let auth = self.admit(actor, false).await;
                let (read, got) = self.call(auth, "read_claim", json!({"claim": claim})).await;
                exchanges.extend(got);
                match read {
                    Answer::Success(v) => v["valid_until"].as_str().map(str::to_string),
                    _ => None,
                }
            }
        };
        if let Some(e) = echoed {
            self.clock.observe_until(until, &e);
        }
        exchanges.len()
    }

    /// The server id of claim `c`.
    pub(super) fn claim_id(&self, c: usize) -> String {
        self.ids.claims.get(c).cloned().unwrap_or_default()
    }

    /// The `post` arguments of an assert (PV-DI-2, PV-DI-6).
    pub(super) fn assert_args(
        &self,
        thread: Option<usize>,
        supersedes: Option<usize>,
        until: Until,
        evidence: Evidence,
    ) -> Value {
        let mut v = json!({"kind": "assert", "body": "model step"});
        if let Some(t) = thread {
            v["thread"] = json!(self.ids.threads.get(t).cloned().unwrap_or_default());
        }
        if let Some(c) = supersedes {
            v["supersedes"] = json!([self.claim_id(c)]);
        }
        match until {
            Until::Never => {}
            Until::Soon => {
                let t = self.pending_until.unwrap_or_else(|| self.clock.soon());
                // Milliseconds when the deadline has them (see `clock`).
                v["valid_until"] = json!(t.to_rfc3339_opts(SecondsFormat::AutoSi, true));
            }
            Until::Past => {
                let t = self.clock.target_now() - chrono::Duration::days(1);
                v["valid_until"] = json!(t.to_rfc3339_opts(SecondsFormat::Secs, true));
            }
        }
        if let Some(e) = evidence_json(evidence) {
            v["evidence"] = e;
        }
        v
    }

    /// The `post` arguments of a claim act: a reply to the claim's message (PV-RS-3).
    pub(super) fn act_args(&self, w: &World, c: usize, act: Act, evidence: Evidence) -> Value {
        let claim = &w.claims[c];
        let mid = self
            .ids
            .messages
            .get(claim.thread)
            .and_then(|ms| ms.get(claim.message))
            .cloned()
            .unwrap_or_default();
        let mut v = json!({
            "kind": act.kind().as_str(),
            "thread": self.ids.threads.get(claim.thread).cloned().unwrap_or_default(),
            "parent": mid,
            "claim": self.claim_id(c),
            "body": "model step",
        });
        if let Some(e) = evidence_json(evidence) {
            v["evidence"] = e;
        }
        v
    }

    /// After an accepted assert: the new claim's id, fresh (PV-DI-2, PV-RS-2).
    pub(super) fn record_claim(&mut self, body: &Value, until: Until) -> Result<(), Box<Finding>> {
        let id = str_at(body, "/message/claim")
            .unwrap_or_default()
            .to_string();
        if id.is_empty() || self.ids.claims.contains(&id) {
            return Err(mismatch(
                &["PV-DI-2", "PV-RS-2"],
                "an assert's message carries no fresh claim id",
                json!("a fresh claim id"),
                json!(id),
            ));
        }
        self.ids.claims.push(id);
        self.ids.until.push(match until {
            Until::Soon => self.pending_until,
            Until::Never | Until::Past => None,
        });
        Ok(())
    }

    /// After an accepted claim act: its message names the claim (PV-RS-2).
    pub(super) fn check_act_claim(&self, c: usize, body: &Value) -> Result<(), Box<Finding>> {
        agree(
            &["PV-RS-2", "PV-DI-7"],
            "the claim act's message does not name its claim",
            json!(self.claim_id(c)),
            body.pointer("/message/claim").cloned().unwrap_or_default(),
        )
    }

    /// Waits, when asked, until claim `c`'s `valid_until` has clearly passed (PV-DI-2).
    pub(super) async fn await_expiry(&self, c: usize) {
        if let Some(Some(until)) = self.ids.until.get(c) {
            self.clock.await_past(*until).await;
        }
    }

    /// `read_claim`'s answer against the model's claim `c` (PV-DI-2..7), member by member,
    /// each citing the rule that decides it.
    pub(super) fn check_claim(&self, w: &World, c: usize, v: &Value) -> Result<(), Box<Finding>> {
        let claim = &w.claims[c];
        // Collected first, compared after: the clock learns from the echoed `valid_until`
        // even when an earlier member differs.
        let mut checks = self.origin_checks(w, c, v);
        checks.extend(standing_checks(claim, v));
        checks.push(self.supersedes_check(claim, v));
        checks.push(valid_until_check(claim, v));
        checks.extend(self.superseded_by_check(claim, v));
        checks.extend(self.expired_check(c, v));
        for (rules, what, expected, observed) in checks {
            agree(
                rules,
                &format!("read_claim's {what} differs from the model's claim"),
                expected,
                observed,
            )?;
        }
        Ok(())
    }

    /// Where claim `c` comes from: its id, thread, message and author (PV-DI-7).
    fn origin_checks(&self, w: &World, c: usize, v: &Value) -> Vec<ClaimCheck> {
        let claim = &w.claims[c];
        vec![
            (
                &["PV-DI-7", "PV-RS-2"],
                "id",
                json!(self.claim_id(c)),
                v["id"].clone(),
            ),
            (
                &["PV-DI-7", "PV-DI-2"],
                "thread",
                json!(self.ids.threads.get(claim.thread)),
                v["thread"].clone(),
            ),
            (
                &["PV-DI-7", "PV-DI-2"],
                "message",
                json!(
                    self.ids
                        .messages
                        .get(claim.thread)
                        .and_then(|m| m.get(claim.message))
                ),
                v["message"].clone(),
            ),
            (
                &["PV-DI-7", "PV-ID-1"],
                "author",
                json!({"identity": w.actors[claim.author.actor].identity, "extension": claim.author.ext.map(|e| EXTENSIONS[e])}),
                json!({"identity": v.pointer("/author/identity").cloned().unwrap_or_default(), "extension": extension_of(&v["author"])}),
            ),
        ]
    }

    /// `supersedes`, as the target's claim ids (PV-DI-6).
    fn supersedes_check(&self, claim: &Claim, v: &Value) -> ClaimCheck {
        let ids = claim
            .supersedes
            .iter()
            .map(|x| self.claim_id(*x))
            .collect::<Vec<_>>();
        (
            &["PV-DI-6", "PV-DI-7"],
            "supersedes",
            json!(ids),
            v["supersedes"].clone(),
        )
    }

    /// `superseded_by`, unless the model leaves it to the target (PV-DI-6).
    fn superseded_by_check(&self, claim: &Claim, v: &Value) -> Option<ClaimCheck> {
        let observed_by = &v["superseded_by"];
        let by = claim
            .superseded_by
            .expected(observed_by, |x| self.claim_id(x))?;
        Some((
            &["PV-DI-6", "PV-DI-7"],
            "superseded_by",
            by,
            v["superseded_by"].clone(),
        ))
    }

    /// `expired`, unless the read fell too near the deadline to tell (PV-DI-2); the echoed
    /// `valid_until` also teaches the clock the target's precision.
    fn expired_check(&self, c: usize, v: &Value) -> Option<ClaimCheck> {
        let expired = match self.ids.until.get(c).copied().flatten() {
            None => Some(false),
            Some(t) => {
                if let Some(echoed) = v["valid_until"].as_str() {
                    self.clock.observe_until(t, echoed);
                }
                self.clock.expired(t, self.step_sent, Utc::now())
            }
        };
        let e = expired?;
        Some((&["PV-DI-2"], "expired", json!(e), v["expired"].clone()))
    }
}

/// One member compared by [`Driver::check_claim`]: the rules deciding it, its name, the
/// model's value and the target's.
type ClaimCheck = (&'static [&'static str], &'static str, Value, Value);

/// The rules deciding a claim's `status`: the act that gave it (PV-DI-3..6).
fn status_rules(status: ClaimSt) -> &'static [&'static str] {
    match status {
        ClaimSt::Refuted => &["PV-DI-5"],
        ClaimSt::Superseded => &["PV-DI-6"],
        ClaimSt::Verified => &["PV-DI-4"],
        ClaimSt::Unverified | ClaimSt::Supported => &["PV-DI-3"],
    }
}

/// Where the claim stands: its status, support, attestations and refutations
/// (PV-DI-3..5).
fn standing_checks(claim: &Claim, v: &Value) -> [ClaimCheck; 4] {
    let len = |p: &str| json!(v.get(p).and_then(Value::as_array).map(Vec::len));
    [
        (
            status_rules(claim.status),
            "status",
            json!(claim.status.as_str()),
            v["status"].clone(),
        ),
        (
            &["PV-DI-3", "PV-RS-3"],
            "support",
            json!(claim.support),
            v["support"].clone(),
        ),
        (
            &["PV-DI-3", "PV-DI-7"],
            "attestations",
            json!(claim.support),
            len("attestations"),
        ),
        (
            &["PV-DI-5", "PV-DI-7"],
            "refutations",
            json!(claim.refutations),
            len("refutations"),
        ),
    ]
}

/// Whether `valid_until` is set: only a `soon` assert gives one (PV-DI-2).
fn valid_until_check(claim: &Claim, v: &Value) -> ClaimCheck {
    (
        &["PV-DI-2", "PV-DI-7"],
        "valid_until set",
        json!(claim.until == Until::Soon),
        json!(!v["valid_until"].is_null()),
    )
}
