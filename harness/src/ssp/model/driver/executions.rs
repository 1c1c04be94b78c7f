//! Execution steps of the SSP model: status and result reads judged against the model's
//! lifecycle, waiting for a terminal status, and unknown executions (SSP-INV-3…6).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::ssp::codes::Condition;
use crate::ssp::model::state::{self, Exec, Read, Refusal, World, breach};
use crate::ssp::provider::env::{ExecutionWait, Resp, THROTTLED_POLL};
use crate::ssp::types::ExecutionStatus;
use crate::ssp::validator::DocType;

use super::{Driver, Step, THROTTLE, or_throttled, poll_pause, throttled};

impl Driver<'_> {
    pub(super) fn url(&self, w: &World, exec: usize, result: bool) -> Option<(String, usize)> {
        let id = self.ids.get(exec).cloned().flatten()?;
        let s = w.units[w.execs[exec].unit].skill;
        let t = if result {
            w.skills[s].result_url.as_deref()
        } else {
            w.skills[s].status_url.as_deref()
        }?;
        Some((crate::ssp::consumer::expand_template(t, &id).url, s))
    }

    pub(super) async fn read(
        &mut self,
        w: &World,
        by: usize,
        exec: usize,
        result: bool,
    ) -> Step<()> {
        let Some((url, s)) = self.url(w, exec, result) else {
            return Ok(());
        };
        let cred = self.secrets.cred(w.callers[by], Some(&w.skills[s]));
        let r = self.send("GET", &url, None, &cred).await?;
        if throttled(&r) {
            return self.check_error(r.status, r.json.as_ref(), &THROTTLE, &["SSP-ERR-3"], "poll");
        }
        let e = &w.execs[exec];
        match state::read(w, exec, by) {
            Read::Refuse(list) => self.hidden(&r, &list),
            // A readable answer (200, 202, an early result's 409) is judged as the creator's.
            Read::Either(list) if list.iter().any(|x| x.status == r.status) => {
                self.hidden(&r, &list)
            }
            _ if result => {
                if self.result_answer(e, exec, &r)? {
                    self.confirm_ended(w, exec, r.status).await?;
                }
                Ok(())
            }
            _ => self.status_answer(e, exec, &r),
        }
    }

    /// SSP-INV-4: an error answered to a result read is an answer for a failed or timed-out
    /// execution only (no output to give). The status read right after, as the execution's
    /// creator, says which the execution was: terminal states are final (SSP-INV-3), so one
    /// completed then was not failed when its result was read, and one still running then
    /// was running — unless its effective timeout may already have passed (a provider may
    /// show `running` for a grace after an overrun, SSP-INV-5, while its result handler
    /// already reports the timeout). A throttled status read leaves the answer unjudged
    /// (SSP-ERR-3 allows throttling anywhere).
    async fn confirm_ended(&mut self, w: &World, exec: usize, answered: u16) -> Step<()> {
        let read_by = Instant::now();
        let Some((url, s)) = self.url(w, exec, false) else {
            return Ok(());
        };
        let e = &w.execs[exec];
        let cred = self.secrets.cred(w.callers[e.owner], Some(&w.skills[s]));
        let r = self.send("GET", &url, None, &cred).await?;
        if throttled(&r) {
            return Ok(());
        }
        self.status_answer(e, exec, &r)?;
        // An upper bound of the execution's age when its result was refused: its clock
        // started after the invocation was sent.
        let age_ms =
            (self.invoked.get(exec)).map(|t| read_by.duration_since(*t).as_secs_f64() * 1000.0);
        let timeout_may_have_passed = match (e.effective_ms, age_ms) {
            (Some(eff), Some(age)) => age >= eff,
            _ => false,
        };
        match self.last_status(exec) {
            None | Some(ExecutionStatus::Failed | ExecutionStatus::Timeout) => Ok(()),
            Some(s) if !s.is_terminal() && timeout_may_have_passed => Ok(()),
            Some(after) => Err(breach(
                &["SSP-INV-4"],
                format!(
                    "the result read answered {answered}, but the status read right after shows the execution {}: \
                     before its end the result is 202 without output (or 409), once completed 200 with its output",
                    after.as_str()
                ),
                json!({"before the end": [202, 409], "completed": 200}),
                json!({"http": answered, "status right after": after.as_str()}),
            )),
        }
    }

    /// [`state::check_error`], its tolerated readings kept as warnings (SSP-ERR-3).
    pub(super) fn check_error(
        &mut self,
        status: u16,
        body: Option<&Value>,
        allowed: &[Refusal],
        rules: &[&'static str],
        what: &str,
    ) -> Step<()> {
        let judged = state::check_error(status, body, allowed, rules, what)?;
        if let Some(w) = judged.warning {
            self.warnings.push(("SSP-ERR-3", w));
        }
        Ok(())
    }

    /// SSP-INV-6: another caller learns nothing of a non-public execution.
    fn hidden(&mut self, r: &Resp, allowed: &[Refusal]) -> Step<()> {
        self.check_error(
            r.status,
            r.json.as_ref(),
            allowed,
            &["SSP-INV-6"],
            "another caller's read of the execution",
        )?;
        if r.json
            .as_ref()
            .is_some_and(|j| j.get("output").is_some() || j.get("execution_id").is_some())
        {
            return Err(breach(
                &["SSP-INV-6"],
                "no output or state leaks to another caller",
                json!({"output": null}),
                r.json.clone().unwrap_or_default(),
            ));
        }
        Ok(())
    }

    pub(super) fn observe(
        &mut self,
        e: &Exec,
        exec: usize,
        r: &Resp,
        rules: &[&'static str],
    ) -> Step<ExecutionStatus> {
        let resp: crate::ssp::types::InvocationResponse =
            self.typed(r, DocType::Response, rules, "the InvocationResponse")?;
        let Some(Some(track)) = self.tracks.get(exec) else {
            return Ok(resp.status);
        };
        let seen = track.observe(e, r.json.as_ref().unwrap_or(&Value::Null))?;
        self.warnings.extend(seen.warnings);
        self.tracks[exec] = Some(seen.track);
        Ok(resp.status)
    }

    /// SSP-INV-3: the creator's status read is 200 and a forward-only InvocationResponse.
    fn status_answer(&mut self, e: &Exec, exec: usize, r: &Resp) -> Step<()> {
        if r.status != 200 {
            let rules: &[&'static str] = if matches!(r.status, 408 | 504) {
                &["SSP-INV-5", "SSP-INV-3"]
            } else {
                &["SSP-INV-3"]
            };
            return Err(breach(
                rules,
                "a status poll answers 200 with the InvocationResponse (408/504 never apply to a poll)",
                json!(200),
                json!({"http": r.status, "body": r.json}),
            ));
        }
        self.observe(e, exec, r, &["SSP-INV-3"]).map(drop)
    }

    /// SSP-INV-4: 200 with output once completed; before, 202 without output, or 409. An
    /// error for an execution that may have failed is judged on its code, and `true` asks
    /// [`Driver::confirm_ended`] whether it had (unless a read already showed it ended so).
    fn result_answer(&mut self, e: &Exec, exec: usize, r: &Resp) -> Step<bool> {
        const RULES: &[&str] = &["SSP-INV-4"];
        let last = self.tracks.get(exec).cloned().flatten();
        match r.status {
            200 | 202 => {
                let status = self.observe(e, exec, r, RULES)?;
                let early = r.status == 202;
                if early == status.is_terminal()
                    || (early && r.json.as_ref().is_some_and(|j| j.get("output").is_some()))
                {
                    return Err(breach(
                        RULES,
                        "result_url: 200 once terminal, 202 without output before",
                        json!({"200": "terminal", "202": "accepted|running, no output"}),
                        json!({"http": r.status, "status": status.as_str()}),
                    ));
                }
                Ok(false)
            }
            _ if last.as_ref().and_then(|t| t.last) == Some(ExecutionStatus::Completed) => {
                Err(breach(
                    RULES,
                    "the result of a completed execution is 200 with its output",
                    json!(200),
                    json!({"http": r.status, "body": r.json}),
                ))
            }
            409 => self
                .check_error(
                    409,
                    r.json.as_ref(),
                    &[state::refuse(409, Condition::EarlyResult)],
                    RULES,
                    "early result",
                )
                .map(|()| false),
            s if (400..600).contains(&s)
                && !matches!(s, 401 | 403 | 404)
                && last.as_ref().is_none_or(|t| {
                    t.allowed.has(ExecutionStatus::Failed)
                        || t.allowed.has(ExecutionStatus::Timeout)
                }) =>
            {
                // No output to give: the notes do not fix the answer for a failed or
                // timed-out execution's result (SSP-ERR-3) — if it had ended so.
                self.check_error(
                    s,
                    r.json.as_ref(),
                    &[state::refuse(s, Condition::SkillFailed)],
                    RULES,
                    "result without output",
                )?;
                let ended = matches!(
                    last.as_ref().and_then(|t| t.last),
                    Some(ExecutionStatus::Failed | ExecutionStatus::Timeout)
                );
                Ok(!ended)
            }
            s => Err(breach(
                RULES,
                "the creator's result read answers 200, 202 or 409",
                json!([200, 202, 409]),
                json!({"http": s, "body": r.json}),
            )),
        }
    }

    /// Polls an execution until it is terminal. SSP-INV-5 fails it only when certain: it
    /// was seen `running` and stayed non-terminal for its whole effective timeout plus a
    /// grace after that. A queue (`accepted` throughout), throttled polls (the deadline
    /// moves by their time) and timeouts beyond the cap of [`ExecutionWait`] (the scripted
    /// checks' wait, the same) end the wait inconclusively.
    pub(super) async fn await_terminal(&mut self, w: &World, exec: usize) -> Step<()> {
        let Some((url, s)) = self.url(w, exec, false) else {
            return Ok(());
        };
        let e = &w.execs[exec];
        let cred = self.secrets.cred(w.callers[e.owner], Some(&w.skills[s]));
        let bound = e.effective_ms.map(|t| t.max(0.0));
        // Without an effective timeout the wait ends inconclusively, never as a failure.
        let wait = ExecutionWait::new(self.env.time_scale(), bound);
        let (span, grace) = (wait.span, wait.grace);
        let started = Instant::now();
        let mut deadline = started + span;
        // Bounds the loop whatever the provider answers (throttling moves `deadline`).
        let hard_stop = started + span * 3;
        let mut running_since: Option<Instant> = None;
        let invoked = self.invoked.get(exec).copied().unwrap_or(started);
        loop {
            let sent = Instant::now();
            let r = self.send("GET", &url, None, &cred).await?;
            if throttled(&r) {
                deadline += sent.elapsed() + THROTTLED_POLL;
                if Instant::now() >= hard_stop {
                    let last = self.last_status(exec);
                    self.unfinished_instant(w, exec, last, started.elapsed());
                    return Ok(());
                }
                let _pausing = self.idle.pause();
                tokio::time::sleep(THROTTLED_POLL).await;
                continue;
            }
            self.status_answer(e, exec, &r)?;
            let last = self.last_status(exec);
            if last.is_some_and(ExecutionStatus::is_terminal) {
                return Ok(());
            }
            if last == Some(ExecutionStatus::Running) && running_since.is_none() {
                running_since = Some(Instant::now());
                deadline = deadline.max(Instant::now() + span);
            }
            if Instant::now() >= deadline.min(hard_stop) {
                return match bound {
                    Some(b)
                        if wait.covers(b)
                            && running_since.is_some()
                            && Instant::now() >= deadline =>
                    {
                        Err(breach(
                            &["SSP-INV-5"],
                            format!(
                                "still running {} ms after its effective timeout of {b} ms: an overrun ends as timeout (waited {grace})",
                                grace.limit_ms()
                            ),
                            json!("a terminal status"),
                            json!(last.map(ExecutionStatus::as_str)),
                        ))
                    }
                    _ => {
                        self.unfinished_instant(w, exec, last, started.elapsed());
                        Ok(())
                    }
                };
            }
            let _pausing = self.idle.pause();
            tokio::time::sleep(poll_pause(invoked.elapsed())).await;
        }
    }

    /// The last status read of execution `exec` (`None`: none yet).
    fn last_status(&self, exec: usize) -> Option<ExecutionStatus> {
        self.tracks
            .get(exec)
            .and_then(Option::as_ref)
            .and_then(|t| t.last)
    }

    /// An execution the profile declares instant (`[ssp.roles]`, finishes at once) that
    /// is still not terminal when the wait ends: nothing is judged on time (no timeout it
    /// overran was seen), but it does not pass silently either — its result went unjudged.
    fn unfinished_instant(
        &mut self,
        w: &World,
        exec: usize,
        last: Option<ExecutionStatus>,
        waited: Duration,
    ) {
        let unit = &w.units[w.execs[exec].unit];
        if unit.lifecycle == Some(state::Lifecycle::Instant) {
            self.warnings.push((
                "SSP-INV-3",
                format!(
                    "the profile's role `{}` (skill {}) finishes at once, yet it was still {} after {} ms of polling: its outcome went unjudged",
                    unit.role,
                    w.skills[unit.skill].id,
                    last.map_or("unread", ExecutionStatus::as_str),
                    waited.as_millis()
                ),
            ));
        }
    }

    pub(super) async fn unknown_execution(
        &mut self,
        w: &World,
        by: usize,
        unit: usize,
        result: bool,
    ) -> Step<()> {
        let s = &w.skills[w.units[unit].skill];
        self.unknown += 1;
        let bogus = format!("{}-unknown-{}", self.env.caller_id, self.unknown);
        let t = if result {
            s.result_url.as_deref()
        } else {
            s.status_url.as_deref()
        };
        let Some(url) = t.map(|t| crate::ssp::consumer::expand_template(t, &bogus).url) else {
            return Ok(());
        };
        let cred = self.secrets.cred(w.callers[by], Some(s));
        let r = self.send("GET", &url, None, &cred).await?;
        const RULES: &[&str] = &["SSP-INV-4"];
        let owner = w.owner_of(unit) == Some(by);
        let mut allowed = vec![state::NO_RESOURCE];
        if !owner {
            allowed.extend([state::AUTH_REQUIRED, state::PERMISSION_DENIED]);
        }
        self.check_error(
            r.status,
            r.json.as_ref(),
            &or_throttled(allowed, &r),
            RULES,
            "unknown execution id",
        )?;
        let named = r
            .json
            .as_ref()
            .and_then(|j| j.pointer("/error/details/execution_id"))
            .and_then(Value::as_str);
        // Seed §8.2 makes `details` optional: details.execution_id is a SHOULD (SSP-INV-4).
        if r.status == 404 && named != Some(bogus.as_str()) {
            self.warnings.push((
                "SSP-INV-4",
                format!(
                    "the 404 of an unknown execution SHOULD name it in details.execution_id (got {named:?})"
                ),
            ));
        }
        Ok(())
    }
}
