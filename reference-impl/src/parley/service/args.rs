//! Operation arguments (other than the post envelope): exact member sets, unknown members →
//! 400 `invalid_body` (PV-EN-1 applied to every operation), ids in every accepted form
//! (PV-EN-5), inbox `limit`/`since`/`extension` (PV-RD-3).

use serde_json::{Map, Value};

use super::context::{Fail, refused};
use crate::domain::parley::ids::{IdKind, parse_id};
use crate::domain::parley::limits::{Limits, extension_ok};
use crate::domain::parley::{Reason, ThreadState};

/// The arguments as an object holding only `allowed` members.
pub(crate) fn object<'a>(
    args: &'a Value,
    allowed: &[&str],
) -> Result<&'a Map<String, Value>, Fail> {
    let Value::Object(map) = args else {
        return refused(Reason::InvalidBody, "arguments must be a JSON object");
    };
    if let Some(k) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
        return refused(Reason::InvalidBody, format!("unknown argument {k:?}"));
    }
    Ok(map)
}

fn present<'a>(map: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    map.get(name).filter(|v| !v.is_null())
}

/// A required id member (`thread`, `claim`).
pub(crate) fn required_id(map: &Map<String, Value>, name: &str, kind: IdKind) -> Result<i64, Fail> {
    match present(map, name) {
        None => refused(Reason::InvalidBody, format!("{name} is required")),
        Some(v) => parse_id(kind, v).map_or_else(
            || {
                refused(
                    Reason::InvalidBody,
                    format!(
                        "{name} must be {}N, a number or a digit string",
                        kind.prefix()
                    ),
                )
            },
            Ok,
        ),
    }
}

/// `list_events` `since`: an event id (`ev_N`, N, "N"); absent/empty = from the start.
pub(crate) fn event_since(map: &Map<String, Value>) -> Result<i64, Fail> {
    match present(map, "since") {
        None => Ok(0),
        Some(Value::String(s)) if s.is_empty() => Ok(0),
        Some(v) => parse_id(IdKind::Event, v).map_or_else(
            || refused(Reason::InvalidBody, "since must be an event id (ev_N)"),
            Ok,
        ),
    }
}

/// `mark` `state`: any forward or lateral state (PV-ST-2).
pub(crate) fn state(map: &Map<String, Value>) -> Result<ThreadState, Fail> {
    match present(map, "state") {
        Some(Value::String(s)) => ThreadState::parse(s).map_or_else(
            || refused(Reason::InvalidBody, format!("unknown state {s:?}")),
            Ok,
        ),
        Some(_) => refused(Reason::InvalidBody, "state must be a string"),
        None => refused(Reason::InvalidBody, "state is required"),
    }
}

/// The prefix of inbox cursors (`ib1.N`).
pub const CURSOR_PREFIX: &str = "ib1.";

/// Formats an inbox cursor. Opaque to clients; it carries a position in the persisted,
/// monotonic activity sequence (never a timestamp, PV-RD-3).
pub(crate) fn format_cursor(seq: i64) -> String {
    format!("{CURSOR_PREFIX}{seq}")
}

/// Inbox arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InboxArgs {
    pub(crate) since: i64,
    pub(crate) extension: Option<String>,
    pub(crate) limit: usize,
}

/// PV-RD-3: `since` = a cursor this server returned; `extension` matches the pattern;
/// `limit` an integer or digit string ≥ 1, capped at `inbox_limit_max`, default
/// `inbox_limit_default`. An empty string counts as absent (the route template of §1 is
/// `?since=&extension=&limit=`).
pub(crate) fn inbox(args: &Value, limits: &Limits) -> Result<InboxArgs, Fail> {
    let map = object(args, &["since", "extension", "limit"])?;
    let non_empty = |name: &str| present(map, name).filter(|v| v.as_str() != Some(""));
    let since = match non_empty("since") {
        None => 0,
        Some(Value::String(s)) => match s
            .strip_prefix(CURSOR_PREFIX)
            .and_then(crate::domain::parley::ids::parse_digits)
        {
            Some(n) => n,
            None => {
                return refused(
                    Reason::InvalidBody,
                    "since must be a cursor returned by inbox",
                );
            }
        },
        Some(_) => return refused(Reason::InvalidBody, "since must be a cursor string"),
    };
    let extension = match non_empty("extension") {
        None => None,
        Some(Value::String(s)) if extension_ok(s) => Some(s.clone()),
        Some(_) => {
            return refused(
                Reason::InvalidBody,
                "extension must match ^[a-z0-9][a-z0-9_-]{0,31}$",
            );
        }
    };
    let requested = match non_empty("limit") {
        None => u64::from(limits.inbox_limit_default),
        Some(Value::Number(n)) => match n.as_u64() {
            Some(n) => n,
            None => return refused(Reason::InvalidBody, "limit must be a positive integer"),
        },
        Some(Value::String(s)) if s.bytes().all(|b| b.is_ascii_digit()) => {
            // Digit strings too long for u64 are simply "very large" → capped.
            s.parse::<u64>().unwrap_or(u64::MAX)
        }
        Some(_) => return refused(Reason::InvalidBody, "limit must be a positive integer"),
    };
    if requested == 0 {
        return refused(Reason::InvalidBody, "limit must be at least 1");
    }
    let limit = requested.min(u64::from(limits.inbox_limit_max)) as usize;
    Ok(InboxArgs {
        since,
        extension,
        limit,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::parley::REFERENCE;
    use serde_json::json;

    #[test]
    fn inbox_args_table() {
        let ok = |since: i64, ext: Option<&str>, limit: usize| {
            Some(InboxArgs {
                since,
                extension: ext.map(str::to_string),
                limit,
            })
        };
        let table: Vec<(Value, Option<InboxArgs>)> = vec![
            (json!({}), ok(0, None, 50)),
            (json!({"limit": 10}), ok(0, None, 10)),
            (json!({"limit": "10"}), ok(0, None, 10)),
            (json!({"limit": 200}), ok(0, None, 200)),
            (json!({"limit": 201}), ok(0, None, 200)),
            (
                json!({"limit": "99999999999999999999999"}),
                ok(0, None, 200),
            ),
            (json!({"limit": 0}), None),
            (json!({"limit": "0"}), None),
            (json!({"limit": -1}), None),
            (json!({"limit": 1.5}), None),
            (json!({"limit": "ten"}), None),
            (json!({"limit": ""}), ok(0, None, 50)),
            (
                json!({"since": "ib1.7", "extension": "w1"}),
                ok(7, Some("w1"), 50),
            ),
            (json!({"since": "7"}), None),
            (json!({"since": "", "extension": ""}), ok(0, None, 50)),
            (json!({"extension": "BAD"}), None),
            (json!({"other": 1}), None),
        ];
        for (v, want) in table {
            assert_eq!(inbox(&v, &REFERENCE).ok(), want, "{v}");
        }
    }
}
