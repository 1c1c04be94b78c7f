//! PV-TR-6: refusals the HTTP layer raises before routing. An oversized request target and
//! an oversized header section, each sent to the manifest's route without a token, must not
//! draw a server error; the status of their §10 row (414, 431) passes, another 4xx or no
//! answer is a warning, and so is a right status whose body is not the PV-TR-3 refusal
//! with the row's reason listed in the manifest (PV-MF-1 asks the transport reasons as a
//! SHOULD). A target that serves both at 1 MiB refused nothing: the check is unsupported
//! there, never passed.

use futures::FutureExt as _;
use futures::future::BoxFuture;
use serde_json::{Value, json};

use super::preflight::ParleyTarget;
use crate::engine::check::{Bindings, Check, CheckCtx, CheckOutcome};
use crate::engine::finding::{self, Finding};
use crate::engine::target::truncate;
use crate::engine::verdict::Verdict;
use crate::transport::pre_routing::{
    Condition, Status, describe, judge_status, oversized, routed, shortened, sizes,
};
use crate::transport::raw::RawHttp;
use crate::transport::{Auth, Exchange, Reply, Transport, TransportKind};

/// PV-TR-6 (status) with PV-TR-3 (a 5xx is no refusal).
pub struct PreRouting {
    /// The cited IDs (`PV-TR-6`, `PV-TR-3`).
    pub requirements: Vec<String>,
}

/// What one condition drew.
struct Probe {
    cond: Condition,
    size: usize,
    /// `None`: the harness could not send the request at all (nothing to judge).
    status: Option<Status>,
    reply: Option<Reply>,
}

impl Check for PreRouting {
    fn id(&self) -> &str {
        "PV-TR-6/pre-routing"
    }
    fn title(&self) -> &str {
        "an oversized request target or header section is refused with its §10 transport status, never a 5xx"
    }
    fn requirements(&self) -> &[String] {
        &self.requirements
    }
    fn area(&self) -> &str {
        "transport"
    }
    fn bindings(&self) -> Bindings {
        Bindings::Once
    }
    fn run<'a>(&'a self, ctx: &'a CheckCtx) -> BoxFuture<'a, CheckOutcome> {
        async move {
            let Some(parley) = ctx.target.part::<ParleyTarget>() else {
                return CheckOutcome::verdict(Verdict::HarnessError {
                    message: "the Parley pre-flight did not run".into(),
                });
            };
            let route = parley
                .manifest
                .routes
                .0
                .get("get_manifest")
                .cloned()
                .flatten();
            let Some(route) = route else {
                return CheckOutcome::verdict(Verdict::not_offered(
                    "the manifest declares no HTTP route for get_manifest",
                ));
            };
            let http = parley.transport(TransportKind::Http);
            let mut exchanges = Vec::new();
            let mut probes = Vec::new();
            for cond in [Condition::UriTooLong, Condition::HeadTooLarge] {
                let p = probe(
                    http.as_ref(),
                    &route.method,
                    &route.path,
                    cond,
                    &mut exchanges,
                )
                .await;
                probes.push(p);
            }
            let declared = parley.manifest.reasons();
            let verdict = self.verdict(&probes, &declared, &exchanges);
            CheckOutcome {
                verdict,
                exchanges,
                steps: Vec::new(),
                unkept: 0,
            }
        }
        .boxed()
    }
}

impl PreRouting {
    fn verdict(
        &self,
        probes: &[Probe],
        declared: &std::collections::BTreeSet<String>,
        exchanges: &[Exchange],
    ) -> Verdict {
        let mut fails = Vec::new();
        let mut warns = Vec::new();
        let mut judged = 0;
        for p in probes {
            let what = describe(p.cond, p.size);
            match &p.status {
                None | Some(Status::Served) => {}
                Some(Status::Row) => {
                    judged += 1;
                    match &p.reply {
                        Some(r) => warns.extend(
                            body_warnings(p.cond, r, declared).map(|w| format!("{what}: {w}")),
                        ),
                        // Over the harness's own limits: the status came, the body's shape
                        // (PV-TR-3) cannot be told, so it cannot pass.
                        None => warns.push(format!("{what}: the refusal's body was not readable")),
                    }
                }
                Some(Status::Other(m)) => {
                    judged += 1;
                    warns.push(format!("{what}: {m}"));
                }
                Some(Status::ServerError(m)) => {
                    judged += 1;
                    fails.push(format!("{what}: {m}"));
                }
            }
        }
        let expected = json!(
            (probes.iter())
                .map(|p| format!("{} {}", p.cond.status(), p.cond.reason()))
                .collect::<Vec<_>>()
        );
        let verdict =
            |f: Box<Finding>| finding::found(self.id(), &self.requirements, true, f, exchanges);
        if !fails.is_empty() {
            let f = Finding::fail("", expected, json!(fails), fails.join("; "));
            return verdict(f.on(&self.requirements));
        }
        if !warns.is_empty() {
            let f = Finding::warn("", expected, json!(warns), warns.join("; "));
            return verdict(f.on(&["PV-TR-6"]));
        }
        if judged == 0 {
            let tried: Vec<String> = (probes.iter())
                .filter(|p| p.status.is_some())
                .map(|p| describe(p.cond, p.size))
                .collect();
            if tried.is_empty() {
                return Verdict::HarnessError {
                    message: "the harness could not send an oversized request".into(),
                };
            }
            return Verdict::not_offered(format!(
                "no transport refusal to judge: the target served {}",
                tried.join(" and ")
            ));
        }
        Verdict::Pass
    }
}

/// Sends `cond`'s request at each size until one is not served.
async fn probe(
    http: &dyn Transport,
    method: &str,
    path: &str,
    cond: Condition,
    exchanges: &mut Vec<Exchange>,
) -> Probe {
    let mut p = Probe {
        cond,
        size: 0,
        status: None,
        reply: None,
    };
    for size in sizes(cond) {
        let (target, headers) = oversized(cond, path, size);
        let req = RawHttp {
            method: method.to_string(),
            path: target,
            headers: headers.into_iter().collect(),
            body: None,
            body_json: None,
            body_base64: None,
        };
        let (status, reply) = match http.raw_http(&req, &Auth::None).await {
            Ok(mut r) => {
                exchanges.extend(r.exchanges.drain(..).map(shortened));
                (Some(r.http_status), Some(r))
            }
            Err(e) => {
                if crate::transport::never_built(&e.to_string()) {
                    // The harness's HTTP stack refused to build it: nothing reached the target.
                    return p;
                }
                let ex = e.exchanges().to_vec();
                // An answer over the harness's own limits still came: its status counts.
                let status = ex.last().and_then(|x| x.status);
                exchanges.extend(ex.into_iter().map(shortened));
                (status, None)
            }
        };
        let reason = (reply.as_ref())
            .and_then(|r| r.json.as_ref())
            .and_then(|j| j.pointer("/error/reason"))
            .and_then(Value::as_str);
        // A route's own refusal: the request was within the target's limit, like a 2xx.
        let judged = match status {
            Some(s) if routed(cond, s, reason) => Status::Served,
            _ => judge_status(cond, status),
        };
        p = Probe {
            cond,
            size,
            status: Some(judged),
            reply,
        };
        if p.status != Some(Status::Served) {
            break;
        }
    }
    p
}

/// PV-TR-6's SHOULDs on a refusal with the right status: the PV-TR-3 shape, the row's
/// reason, that reason in the manifest's `reasons` (PV-MF-1).
fn body_warnings(
    cond: Condition,
    r: &Reply,
    declared: &std::collections::BTreeSet<String>,
) -> impl Iterator<Item = String> {
    let mut out = Vec::new();
    let json_type = r.labelled_json();
    let body = super::refusal::read(r.json.as_ref(), Some(r.http_status), declared);
    if !json_type || body.reason.is_none() || !body.shaped {
        out.push(format!(
            "not the PV-TR-3 refusal ({{\"error\": {{\"reason\", \"status\", \"message\"}}}}, application/json): {}",
            truncate(&r.text, 120)
        ));
    }
    if let Some(x) = &body.reason {
        if x != cond.reason() {
            out.push(format!("reason {x:?} where §10 gives {:?}", cond.reason()));
        }
        if !body.declared {
            out.push(format!(
                "reason {x:?} is not in the manifest's reasons (PV-MF-1)"
            ));
        }
    }
    out.into_iter()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(status: u16, ct: &str, text: &str) -> Reply {
        Reply {
            http_status: status,
            headers: vec![("content-type".into(), ct.into())],
            json: serde_json::from_str(text).ok(),
            text: text.into(),
            exchanges: Vec::new(),
        }
    }

    fn check() -> PreRouting {
        PreRouting {
            requirements: vec!["PV-TR-6".into(), "PV-TR-3".into()],
        }
    }

    fn probe(cond: Condition, status: Option<u16>, r: Option<Reply>) -> Probe {
        Probe {
            cond,
            size: sizes(cond)[0],
            status: Some(judge_status(cond, status)),
            reply: r,
        }
    }

    #[test]
    fn the_row_status_in_shape_passes_and_a_5xx_fails() {
        let declared = ["uri_too_long", "headers_too_large"]
            .map(String::from)
            .into_iter()
            .collect();
        let good = |s: u16, reason: &str| {
            let body = json!({"error": {"reason": reason, "status": s, "message": "m"}});
            reply(s, "application/json", &body.to_string())
        };
        let ok = [
            probe(
                Condition::UriTooLong,
                Some(414),
                Some(good(414, "uri_too_long")),
            ),
            probe(
                Condition::HeadTooLarge,
                Some(431),
                Some(good(431, "headers_too_large")),
            ),
        ];
        assert!(matches!(
            check().verdict(&ok, &declared, &[]),
            Verdict::Pass
        ));
        let broken = [
            probe(
                Condition::UriTooLong,
                Some(500),
                Some(reply(500, "text/plain", "boom")),
            ),
            probe(
                Condition::HeadTooLarge,
                Some(431),
                Some(good(431, "headers_too_large")),
            ),
        ];
        let Verdict::Fail(v) = check().verdict(&broken, &declared, &[]) else {
            panic!("a 500 must fail");
        };
        assert_eq!(v.requirements, ["PV-TR-6", "PV-TR-3"]);
    }

    #[test]
    fn what_the_notes_leave_open_only_warns() {
        let declared = std::collections::BTreeSet::new();
        let cases = [
            // hyper's default: empty body, no content type
            probe(Condition::UriTooLong, Some(414), Some(reply(414, "", ""))),
            // nginx's 400 for a large header, and no answer at all
            probe(
                Condition::HeadTooLarge,
                Some(400),
                Some(reply(400, "text/html", "<html>")),
            ),
        ];
        let Verdict::Warn(v) = check().verdict(&cases, &declared, &[]) else {
            panic!("only warnings");
        };
        assert_eq!(v.requirements, ["PV-TR-6"]);
        assert_eq!(v.observed.as_array().map(Vec::len), Some(2));
        let dropped = [probe(Condition::HeadTooLarge, None, None)];
        assert!(matches!(
            check().verdict(&dropped, &declared, &[]),
            Verdict::Warn(_)
        ));
        // Another reason, not declared: two warnings.
        let other = json!({"error": {"reason": "too_big", "status": 431, "message": "m"}});
        let r = reply(431, "application/json", &other.to_string());
        assert_eq!(
            body_warnings(Condition::HeadTooLarge, &r, &declared).count(),
            2
        );
    }

    #[test]
    fn served_everywhere_is_no_evidence() {
        let declared = std::collections::BTreeSet::new();
        let served = [
            probe(Condition::UriTooLong, Some(200), None),
            probe(Condition::HeadTooLarge, Some(200), None),
        ];
        assert!(matches!(
            check().verdict(&served, &declared, &[]),
            Verdict::Unsupported { .. }
        ));
    }
}
