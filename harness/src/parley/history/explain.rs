//! A non-linearizable group as a violation message: the seed and group, the history with
//! each step's client, instants and answer, the longest linearizable prefix, and why each
//! remaining step cannot come next.

use std::fmt::Write as _;

use super::groups::{GroupRun, Settings};
use super::spec::{Observed, Step, rules};
use crate::capability::history::Explanation;
use crate::capability::history::History;
use crate::parley::model::driver::describe;
use crate::parley::model::predict::predict;
use crate::parley::model::runner::Cast;
use crate::parley::model::state::World;
use crate::transport::TransportKind;

fn ms(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1e6)
}

fn answer(o: Option<&Observed>) -> String {
    match o {
        None => "no answer".into(),
        Some(Observed::Accepted { event: true }) => "accepted, with an event".into(),
        Some(Observed::Accepted { event: false }) => "accepted".into(),
        Some(Observed::Refused(s, r)) => format!("refused {s} {r}"),
        Some(Observed::Other(s)) => format!("not a Parley answer: {s}"),
        Some(Observed::View(v)) => format!("{v:?}"),
    }
}

/// The rules and the message of a non-linearizable group (`number`: 1-based).
pub fn render(
    cast: &Cast,
    run: &GroupRun,
    e: &Explanation,
    settings: Settings,
    kind: TransportKind,
    number: usize,
) -> (Vec<&'static str>, String) {
    let stuck: Vec<usize> = e.stuck.iter().map(|s| s.op).collect();
    let rules = stuck_rules(cast, run, &e.prefix, &stuck);
    let mut m = format!(
        "no sequential order of group {number} ({}) explains what {} answered (seed {}, {} groups; replay: `conform run --filter history/parley-concurrency`, same seed, same groups)\n\nhistory (client, role, sent–answered in ms):\n",
        run.group.name,
        kind.as_str(),
        settings.seed,
        settings.groups
    );
    for (i, op) in run.history.ops.iter().enumerate() {
        let _ = writeln!(
            m,
            "  #{i} client {} ({}) [{}–{}] {} → {}",
            op.client,
            run.roles.get(i).map_or("?", |r| r.as_str()),
            ms(op.invoked),
            op.response.as_ref().map_or("…".into(), |r| ms(r.at)),
            line(cast, &op.input),
            answer(op.response.as_ref().map(|r| &r.output))
        );
    }
    let prefix: Vec<String> = e.prefix.iter().map(|i| format!("#{i}")).collect();
    let _ = writeln!(m, "\nlongest linearizable prefix: [{}]", prefix.join(", "));
    let _ = writeln!(m, "cannot come next:");
    for s in &e.stuck {
        let _ = writeln!(m, "  #{}: {}", s.op, s.why);
    }
    let _ = write!(
        m,
        "(checker: {} nodes, {} memo hits)",
        e.stats.nodes, e.stats.memo_hits
    );
    (rules, m)
}

/// The model after `prefix` of `history` (each step's one successor: Parley's model moves to
/// the same next state whatever the allowed outcome).
pub fn replay(world: &World, history: &History<Step, Observed>, prefix: &[usize]) -> World {
    prefix
        .iter()
        .fold(world.clone(), |w, &i| match &history.ops[i].input {
            Step::Op(op) if w.exists(op) => {
                let p = predict(&w, op);
                // The observed outcome decides between the two readings of a repeat.
                let accepted = matches!(
                    history.ops[i].response.as_ref().map(|r| &r.output),
                    Some(Observed::Accepted { .. })
                );
                super::spec::after(&p, accepted).clone()
            }
            _ => w,
        })
}

/// The requirement IDs of `steps` after `prefix`.
pub fn stuck_rules(
    cast: &Cast,
    run: &GroupRun,
    prefix: &[usize],
    steps: &[usize],
) -> Vec<&'static str> {
    let w = replay(&cast.world, &run.history, prefix);
    let mut out: Vec<&'static str> = Vec::new();
    for &i in steps {
        let step = &run.history.ops[i].input;
        let valid = match step {
            Step::Op(op) => w.exists(op),
            Step::ReadBack { .. } => true,
        };
        let rs = if valid {
            rules(&w, step)
        } else {
            vec!["PV-ST-1"]
        };
        for r in rs {
            if !out.contains(&r) {
                out.push(r);
            }
        }
    }
    out
}

/// One line for an operation of a group.
pub fn line(cast: &Cast, step: &Step) -> String {
    match step {
        Step::Op(op) => describe(
            &World::new(cast.world.actors.to_vec(), cast.world.body_max),
            op,
            &cast.roles,
        ),
        Step::ReadBack { by, .. } => format!(
            "{} reads T1 back (read_thread, list_events)",
            cast.roles.get(*by).map_or("?", |r| r.as_str())
        ),
    }
}
