//! Invocation steps of the SSP model: the body sent, the acceptance judged against the
//! skill, and invalid invocations (SSP-INV-1, SSP-INV-2).

use std::time::Instant;

use serde_json::{Value, json};

use crate::ssp::model::lifecycle::Track;
use crate::ssp::model::state::{self, Invalid, Invoke, Skill, Timeout, World, breach};
use crate::ssp::provider::env::Resp;
use crate::ssp::types::ExecutionStatus;
use crate::ssp::validator::DocType;

use super::{Driver, INVOKE_TRANSIENT, Step, or_throttled};

impl Driver<'_> {
    fn body(&self, w: &World, unit: usize, timeout: Timeout) -> Value {
        let u = &w.units[unit];
        let mut b = self.env.request(&w.skills[u.skill].id, &u.inputs, None);
        let number = |x: f64| {
            if x.fract() == 0.0 {
                json!(x as i64)
            } else {
                json!(x)
            }
        };
        match timeout {
            Timeout::Absent => {}
            Timeout::Ms(x) | Timeout::Odd(x) => b["context"]["timeout_ms"] = number(x),
            Timeout::Text => b["context"]["timeout_ms"] = json!("100"),
        }
        b
    }

    pub(super) async fn invoke(
        &mut self,
        w: &World,
        by: usize,
        unit: usize,
        timeout: Timeout,
    ) -> Step<()> {
        let s = &w.skills[w.units[unit].skill];
        let body = self.body(w, unit, timeout);
        let cred = self.secrets.cred(w.callers[by], Some(s));
        let sent = Instant::now();
        let r = self
            .send(&s.method, &s.endpoint, Some(&body), &cred)
            .await?;
        let pred = state::invoke(w, by, unit, timeout);
        let tracked = pred == Invoke::Accept;
        if INVOKE_TRANSIENT.iter().any(|t| t.status == r.status) {
            // Whether an execution exists is unknown: the model does not follow it.
            if tracked {
                self.ids.push(None);
                self.tracks.push(None);
                self.invoked.push(sent);
            }
            return self.check_error(
                r.status,
                r.json.as_ref(),
                &INVOKE_TRANSIENT,
                &["SSP-ERR-3"],
                "invocation",
            );
        }
        let (refusals, rules) = match &pred {
            Invoke::Accept => (Vec::new(), &["SSP-INV-1", "SSP-AUTH-1"][..]),
            Invoke::Refuse(l, rules) | Invoke::Either(l, rules) => (l.clone(), *rules),
        };
        if r.status != 202 || matches!(pred, Invoke::Refuse(..)) {
            if r.status == 202 {
                self.accepted(&r, s)?;
            }
            let rules: &[&'static str] = if r.status == 200 {
                &["SSP-INV-1"]
            } else {
                rules
            };
            return self.check_error(r.status, r.json.as_ref(), &refusals, rules, "invocation");
        }
        let id = self.accepted(&r, s)?;
        if tracked {
            let mut w2 = w.clone();
            let n = state::create(&mut w2, unit, by, timeout);
            let exec = &w2.execs[n];
            let track = Track::new(&id, &s.id, exec);
            let body = r.json.unwrap_or_default();
            let seen = track.observe(exec, &body)?;
            self.warnings.extend(seen.warnings);
            self.ids.push(Some(id));
            self.tracks.push(Some(seen.track));
            self.invoked.push(sent);
        }
        Ok(())
    }

    /// SSP-INV-1/7: a 202's body is an accepted InvocationResponse with a fresh id.
    fn accepted(&mut self, r: &Resp, s: &Skill) -> Step<String> {
        let resp: crate::ssp::types::InvocationResponse =
            self.typed(r, DocType::Response, &["SSP-INV-1"], "the 202 answer")?;
        if resp.status != ExecutionStatus::Accepted || resp.skill_id != s.id {
            return Err(breach(
                &["SSP-INV-1"],
                "202 carries an accepted InvocationResponse of the invoked skill",
                json!({"status": "accepted", "skill_id": s.id}),
                json!({"status": resp.status.as_str(), "skill_id": resp.skill_id}),
            ));
        }
        let fresh = self
            .seen_ids
            .lock()
            .map(|mut ids| ids.insert(resp.execution_id.clone()))
            .unwrap_or(true);
        if !fresh {
            return Err(breach(
                &["SSP-INV-7"],
                "execution ids are unique across invocations: this one was returned before",
                json!("a new execution_id"),
                json!(resp.execution_id),
            ));
        }
        Ok(resp.execution_id)
    }

    pub(super) async fn invalid(&mut self, w: &World, unit: usize, what: Invalid) -> Step<()> {
        let Some(owner) = w.owner_of(unit) else {
            return Ok(());
        };
        let s = &w.skills[w.units[unit].skill];
        let mut body = self.body(
            w,
            unit,
            if what == Invalid::TextTimeout {
                Timeout::Text
            } else {
                Timeout::Absent
            },
        );
        match what {
            Invalid::MissingRequired => {
                if let Some((name, _)) = s
                    .inputs
                    .iter()
                    .find(|(n, r)| *r && body["inputs"].get(n).is_some())
                    && let Some(inputs) = body["inputs"].as_object_mut()
                {
                    inputs.remove(name);
                }
            }
            Invalid::Undeclared => body["inputs"]["conform_model_undeclared"] = json!(true),
            Invalid::UnknownSkill => body["skill_id"] = json!("conform-model/no-such-skill"),
            Invalid::OtherSkill(o) => body["skill_id"] = json!(w.skills[o].id),
            Invalid::TextTimeout => {}
        }
        let cred = self.secrets.cred(w.callers[owner], Some(s));
        let r = self
            .send(&s.method, &s.endpoint, Some(&body), &cred)
            .await?;
        if r.status == 202 {
            let _ = self.accepted(&r, s);
        }
        self.check_error(
            r.status,
            r.json.as_ref(),
            &or_throttled(state::invalid(what), &r),
            &["SSP-INV-2"],
            "invalid invocation",
        )
    }
}
