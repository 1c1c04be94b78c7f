//! A non-linearizable group as a violation message: the seed and group, the history with
//! each step's client, instants and answer, the longest linearizable prefix, and why each
//! remaining step cannot come next.

use std::fmt::Write as _;

use super::run::{GroupRun, Settings, line, stuck_rules};
use super::spec::Observed;
use crate::engine::history::Explanation;
use crate::parley::model::runner::Cast;
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
