//! Running groups against one binding and checking each history: set-up steps one after
//! the other, the concurrent steps at once (each client's write admitted by the pacer
//! first, so the quota wait is not part of the race), the read-back last; then the
//! linearizability checker against the Parley model.

use std::time::{Duration, Instant};

use futures::future::join_all;
use serde_json::{Value, json};

use super::client::{self, Ids, Sent};
use super::groups::{Cast as Parties, Group, GroupRun, Settings, draw};
use super::spec::{ClaimView, Model, Observed, ParleySpec, Step};
use crate::capability::history::{Clock, History, Linearizability, Response, check};
use crate::engine::finding::{Finding, Source};
use crate::parley::model::observe::Answer;
use crate::parley::model::runner::cast;
use crate::parley::model::state::Op;
use crate::parley::pacing::Pacer;
use crate::parley::preflight::ParleyTarget;
use crate::parley::role::Role;
use crate::transport::{Exchange, TransportKind};

/// A non-linearizable group.
pub struct Failure {
    /// The group as it ran.
    pub run: GroupRun,
    /// What was found: the requirement IDs of the operations that could not be placed, the
    /// explanation rendered as its message, every answer as observed.
    pub finding: Box<Finding>,
}

impl Failure {
    /// The failure of `run`, whose operations on `rules` could not be placed (`message`).
    fn of(run: GroupRun, rules: &[&str], message: String) -> Self {
        let observed: Vec<Value> = (run.history.ops.iter())
            .map(|o| json!(format!("{:?}", o.response.as_ref().map(|r| &r.output))))
            .collect();
        let expected = json!(
            "a sequential order consistent with real time in which the Parley model allows every answer"
        );
        let finding = Finding::broke(Source::History, rules, message, expected, json!(observed));
        Self { run, finding }
    }
}

/// What a history run did.
#[derive(Default)]
pub struct HistoryRun {
    /// Groups sent.
    pub groups_run: usize,
    /// Exchanges the groups made.
    pub exchanges: u64,
    /// Histories the checker decided.
    pub decided: usize,
    /// Groups not decided (checker bound, or a quota refusal), with why.
    pub undecided: Vec<String>,
    /// Nodes the checker expanded over all histories.
    pub nodes: u64,
    /// Checker time over all histories.
    pub check_time: Duration,
    /// The longest single check.
    pub slowest_check: Duration,
    /// Groups whose concurrent steps all overlapped in time (each was invoked before every
    /// other one answered): the race was really run.
    pub overlapped: usize,
    /// One line per decided group: template, answers, the linearization found.
    pub log: Vec<String>,
    /// The first non-linearizable group.
    pub failure: Option<Box<Failure>>,
    /// Why nothing could run (`unsupported`).
    pub unsupported: Option<String>,
}

struct Ctx<'a> {
    target: &'a ParleyTarget,
    kind: TransportKind,
    pacer: Option<&'a Pacer>,
    roles: &'a [Role],
    clock: Clock,
}

/// One step as sent: the history entry, its client's role, the answer.
async fn one(ctx: &Ctx<'_>, client: usize, op: &Op, ids: &Ids) -> (usize, Op, u64, Sent) {
    let role = ctx
        .roles
        .get(op.actor())
        .copied()
        .unwrap_or(Role::Anonymous);
    let auth = client::auth(ctx.target, role, op.is_write(), ctx.pacer).await;
    let invoked = ctx.clock.now();
    let sent = match client::request(op, ids) {
        Some((name, args)) => client::send(ctx.target, ctx.kind, name, &args, &auth).await,
        None => Sent {
            answer: Some(Answer::Other(
                "the group names a message that was not created".into(),
            )),
            exchanges: Vec::new(),
        },
    };
    (client, op.clone(), invoked, sent)
}

fn record(
    run: &mut GroupRun,
    ctx: &Ctx<'_>,
    (client, op, invoked, sent): (usize, Op, u64, Sent),
    at: u64,
) {
    let role = ctx
        .roles
        .get(op.actor())
        .copied()
        .unwrap_or(Role::Anonymous);
    let output = sent.answer.as_ref().map(|a| client::observed(&op, a));
    if matches!(&output, Some(Observed::Refused(429, r)) if r == "rate_limited") {
        run.inconclusive = Some(format!(
            "{role} met 429 rate_limited (writes from outside this check)"
        ));
    }
    run.history.ops.push(crate::capability::history::Operation {
        client,
        input: Step::Op(op),
        invoked,
        response: output.map(|output| Response { at, output }),
    });
    run.roles.push(role);
    run.exchanges.extend(sent.exchanges);
}

/// Runs `group`: set-up, concurrent steps, read-back.
async fn run_group(ctx: &Ctx<'_>, group: Group) -> GroupRun {
    let mut run = GroupRun {
        group: group.clone(),
        history: History::new(),
        roles: Vec::new(),
        exchanges: Vec::new(),
        inconclusive: None,
    };
    let mut ids = Ids::default();
    for op in &group.setup {
        let done = one(ctx, 0, op, &ids).await;
        if let Some(a) = &done.3.answer {
            client::remember(op, a, &mut ids);
        }
        let answered = done.3.answer.is_some();
        record(&mut run, ctx, done, ctx.clock.now());
        if ids.thread.is_none() || !answered {
            return run; // no thread, or an unknown effect: the history so far is judged
        }
    }
    let ids = &ids;
    let steps = group
        .concurrent
        .iter()
        .enumerate()
        .map(|(i, op)| async move {
            let done = one(ctx, i + 1, op, ids).await;
            (done, ctx.clock.now())
        });
    let mut all_answered = true;
    for (done, at) in join_all(steps).await {
        all_answered &= done.3.answer.is_some();
        record(&mut run, ctx, done, at);
    }
    // An unanswered step may still land between the read-back's two requests: without the
    // read-back, the answers alone are judged.
    if all_answered {
        read_back(ctx, &mut run, ids, group.reader).await;
    }
    run
}

/// `read_claim` of every claim the group created: their views (`Err`: a refusal, `None`:
/// an answer missing), and the exchanges.
async fn read_claims(
    ctx: &Ctx<'_>,
    auth: &crate::transport::Auth,
    ids: &Ids,
    events: &Value,
) -> (Option<Result<Vec<ClaimView>, String>>, Vec<Exchange>) {
    let mut views = Vec::new();
    let mut exchanges = Vec::new();
    for (id, _) in &ids.claims {
        let args = json!({"claim": id});
        let sent = client::send(ctx.target, ctx.kind, "read_claim", &args, auth).await;
        exchanges.extend(sent.exchanges);
        match sent.answer {
            Some(Answer::Success(body)) => views.push(client::claim_view(&body, id, events)),
            Some(other) => {
                let why = format!(" / read_claim: {}", other.summary());
                return (Some(Err(why)), exchanges);
            }
            None => return (None, exchanges),
        }
    }
    (Some(Ok(views)), exchanges)
}

async fn read_back(ctx: &Ctx<'_>, run: &mut GroupRun, ids: &Ids, reader: usize) {
    let role = ctx.roles.get(reader).copied().unwrap_or(Role::Anonymous);
    let auth = client::auth(ctx.target, role, false, None).await;
    let args = json!({"thread": ids.thread.clone().unwrap_or_default()});
    let invoked = ctx.clock.now();
    let tree = client::send(ctx.target, ctx.kind, "read_thread", &args, &auth).await;
    let events = client::send(ctx.target, ctx.kind, "list_events", &args, &auth).await;
    let no_events = Value::Null;
    let listed = match &events.answer {
        Some(Answer::Success(e)) => e,
        _ => &no_events,
    };
    let (claims, claim_exchanges) = read_claims(ctx, &auth, ids, listed).await;
    let output = match (&tree.answer, &events.answer, claims) {
        (Some(Answer::Success(t)), Some(Answer::Success(e)), Some(Ok(claims))) => {
            Some(Observed::View(client::view(t, e, claims)))
        }
        (None, _, _) | (_, None, _) | (_, _, None) => None,
        (Some(t), Some(e), claims) => Some(Observed::Other(format!(
            "read-back refused: {} / {}{}",
            t.summary(),
            e.summary(),
            claims.and_then(Result::err).unwrap_or_default()
        ))),
    };
    let at = ctx.clock.now();
    run.history.ops.push(crate::capability::history::Operation {
        client: 0,
        input: Step::ReadBack {
            by: reader,
            thread: 0,
        },
        invoked,
        response: output.map(|output| Response { at, output }),
    });
    run.roles.push(role);
    run.exchanges.extend(tree.exchanges);
    run.exchanges.extend(events.exchanges);
    run.exchanges.extend(claim_exchanges);
}

/// Runs `settings.groups` groups on `kind` and checks each history (see the module docs).
pub async fn run_histories(
    target: &ParleyTarget,
    kind: TransportKind,
    settings: Settings,
    pacer: Option<&Pacer>,
) -> HistoryRun {
    let mut out = HistoryRun::default();
    let cast = match cast(target) {
        Ok(c) => c,
        Err(reason) => {
            out.unsupported = Some(reason);
            return out;
        }
    };
    let parties = Parties::of(&cast.world.actors).with_dialectic(cast.world.dialectic);
    let groups = draw(settings.seed, settings.groups, parties);
    if groups.is_empty() {
        out.unsupported = Some("the profile lacks the parties every group needs (a model writer and a lock holder, or two model writers)".into());
        return out;
    }
    let ctx = Ctx {
        target,
        kind,
        pacer,
        roles: &cast.roles,
        clock: Clock::new(),
    };
    for group in groups {
        let run = run_group(&ctx, group).await;
        out.groups_run += 1;
        out.exchanges += run.exchanges.len() as u64;
        if let Some(why) = &run.inconclusive {
            out.undecided.push(format!(
                "group {} ({}): {why}",
                out.groups_run, run.group.name
            ));
            continue;
        }
        let started = Instant::now();
        let verdict = check(
            &ParleySpec,
            &Model(cast.world.clone()),
            &run.history,
            settings.bound,
        );
        let took = started.elapsed();
        out.check_time += took;
        out.slowest_check = out.slowest_check.max(took);
        match verdict {
            Linearizability::Linearizable { stats, order } => {
                out.decided += 1;
                out.nodes += stats.nodes;
                out.overlapped += usize::from(overlapping(&run));
                out.log.push(summary(&run, &order));
            }
            Linearizability::Unknown { reason, stats } => {
                out.nodes += stats.nodes;
                out.undecided.push(format!(
                    "group {} ({}): {reason}",
                    out.groups_run, run.group.name
                ));
            }
            Linearizability::NotLinearizable(e) => {
                out.decided += 1;
                out.nodes += e.stats.nodes;
                let (rules, message) =
                    super::explain::render(&cast, &run, &e, settings, kind, out.groups_run);
                out.failure = Some(Box::new(Failure::of(run, &rules, message)));
                return out;
            }
        }
    }
    out
}

/// Whether every pair of the group's concurrent steps overlapped in time.
fn overlapping(run: &GroupRun) -> bool {
    let setup = run.group.setup.len();
    let n = run.group.concurrent.len();
    let ops = run
        .history
        .ops
        .iter()
        .skip(setup)
        .take(n)
        .collect::<Vec<_>>();
    ops.len() == n
        && ops.iter().all(|a| {
            ops.iter()
                .all(|b| b.response.as_ref().is_none_or(|r| a.invoked <= r.at))
        })
}

/// One line: the template, each step's answer, the order found.
fn summary(run: &GroupRun, order: &[usize]) -> String {
    let answers: Vec<String> = run
        .history
        .ops
        .iter()
        .map(|o| match o.response.as_ref().map(|r| &r.output) {
            Some(Observed::Accepted { event }) => format!("ok{}", if *event { "+ev" } else { "" }),
            Some(Observed::Refused(s, r)) => format!("{s} {r}"),
            Some(Observed::View(v)) => format!("{} {}ev", v.state, v.events.len()),
            Some(Observed::Other(_)) => "other".into(),
            None => "none".into(),
        })
        .collect();
    format!(
        "{}: [{}] order {order:?}",
        run.group.name,
        answers.join(", ")
    )
}
