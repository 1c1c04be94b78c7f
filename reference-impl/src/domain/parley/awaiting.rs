//! Who must reply (PV-KD-2): derived from a thread's last message only; never more than one
//! awaited party.

use serde::ser::{Serialize, SerializeMap as _, Serializer};
use serde_json::Value;

use super::authority::Party;
use super::kinds::Kind;

/// A thread's `awaiting`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Awaiting {
    /// Non-awaiting last message: `null`.
    Nobody,
    /// An opening `ask`/`assert`: anyone except the author's party.
    Any {
        /// The opener's party.
        except: Party,
    },
    /// One named party.
    Party(Party),
}

/// §11 JSON: `null` | `{"any": true, "except": Party}` | Party.
impl Serialize for Awaiting {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Nobody => s.serialize_none(),
            Self::Any { except } => {
                let mut map = s.serialize_map(Some(2))?;
                map.serialize_entry("any", &true)?;
                map.serialize_entry("except", except)?;
                map.end()
            }
            Self::Party(p) => p.serialize(s),
        }
    }
}

/// PV-KD-2: `kind` is the last message's kind, `author` its party, `parent_author` the
/// author of its (explicit or implicit root) parent — `None` only for the opening message —
/// and `refuted_claim_author` the author of the claim a `refute` targets.
pub fn derive(
    kind: Kind,
    author: &Party,
    parent_author: Option<&Party>,
    refuted_claim_author: Option<&Party>,
) -> Awaiting {
    if !kind.awaiting() {
        return Awaiting::Nobody;
    }
    if kind == Kind::Refute
        && let Some(claim_author) = refuted_claim_author
    {
        // PV-KD-2 / PV-RS-3: a refutation awaits the refuted claim's author.
        return Awaiting::Party(claim_author.clone());
    }
    match parent_author {
        Some(p) => Awaiting::Party(p.clone()),
        None => Awaiting::Any {
            except: author.clone(),
        },
    }
}

impl Awaiting {
    /// §11 JSON: `null` | `{"any": true, "except": Party}` | Party (its `Serialize`).
    pub fn to_json(&self) -> Value {
        // Infallible: a party is two strings.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// PV-RD-3: does the thread await `caller` (whose party is `(identity, extension)`;
    /// `caller_passed_extension` = the caller gave `extension` to inbox)?
    /// `any` → the last author is not the caller's party; a party → same identity and, when
    /// both the awaited party and the caller carry an extension, the same extension.
    pub fn awaits(&self, caller: &Party, caller_passed_extension: bool) -> bool {
        match self {
            Self::Nobody => false,
            Self::Any { except } => except != caller,
            Self::Party(p) => {
                p.identity == caller.identity
                    && match (&p.extension, caller_passed_extension) {
                        (Some(ext), true) => caller.extension.as_ref() == Some(ext),
                        _ => true,
                    }
            }
        }
    }
}

/// PV-RD-3 as one predicate: a thread appears in `caller`'s inbox when it is neither locked
/// nor lateral, it awaits the caller, and — when the caller passed an extension — its last
/// message does not come from the caller's own `(identity, extension)`.
pub fn inbox_visible(
    locked: bool,
    lateral: bool,
    awaiting: &Awaiting,
    last_author: &Party,
    caller: &Party,
    caller_passed_extension: bool,
) -> bool {
    let own_last_message = caller_passed_extension && last_author == caller;
    let hidden = locked || lateral || own_last_message;
    !hidden && awaiting.awaits(caller, caller_passed_extension)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(id: &str, ext: Option<&str>) -> Party {
        Party::new(id, ext.map(str::to_string))
    }

    #[test]
    fn derivation_table() {
        let a = p("ainotes:a", Some("w1"));
        let b = p("ainotes:b", None);
        let c = p("ainotes:c", None);
        // opening ask / assert → any except the author
        assert_eq!(
            derive(Kind::Ask, &a, None, None),
            Awaiting::Any { except: a.clone() }
        );
        assert_eq!(
            derive(Kind::Assert, &a, None, None),
            Awaiting::Any { except: a.clone() }
        );
        // awaiting kinds with a parent → the parent's author
        for k in [
            Kind::Ask,
            Kind::Clarify,
            Kind::Propose,
            Kind::Object,
            Kind::Assert,
        ] {
            assert_eq!(
                derive(k, &b, Some(&a), None),
                Awaiting::Party(a.clone()),
                "{k:?}"
            );
        }
        // refute → the claim's author, not the parent's
        assert_eq!(
            derive(Kind::Refute, &b, Some(&a), Some(&c)),
            Awaiting::Party(c.clone())
        );
        // non-awaiting → null
        for k in [
            Kind::Answer,
            Kind::Inform,
            Kind::Agree,
            Kind::Decide,
            Kind::Close,
            Kind::Attest,
            Kind::Verify,
        ] {
            assert_eq!(derive(k, &b, Some(&a), None), Awaiting::Nobody, "{k:?}");
        }
    }

    #[test]
    fn inbox_table() {
        // PV-RD-3
        let a_w1 = p("ainotes:a", Some("w1"));
        let a = p("ainotes:a", None);
        let b = p("ainotes:b", None);
        let any_except_a_w1 = Awaiting::Any {
            except: a_w1.clone(),
        };
        // (awaiting, last author, caller, passed ext, locked, lateral, visible)
        let table: Vec<(Awaiting, Party, Party, bool, bool, bool, bool)> = vec![
            (
                any_except_a_w1.clone(),
                a_w1.clone(),
                b.clone(),
                false,
                false,
                false,
                true,
            ),
            (
                any_except_a_w1.clone(),
                a_w1.clone(),
                a_w1.clone(),
                true,
                false,
                false,
                false,
            ),
            // caller a without extension is the party (a, empty) ≠ (a, w1)
            (
                any_except_a_w1.clone(),
                a_w1.clone(),
                a.clone(),
                false,
                false,
                false,
                true,
            ),
            (
                any_except_a_w1.clone(),
                a_w1.clone(),
                b.clone(),
                false,
                true,
                false,
                false,
            ),
            (
                any_except_a_w1,
                a_w1.clone(),
                b.clone(),
                false,
                false,
                true,
                false,
            ),
            (
                Awaiting::Party(a_w1.clone()),
                b.clone(),
                a.clone(),
                false,
                false,
                false,
                true,
            ),
            (
                Awaiting::Party(a_w1.clone()),
                b.clone(),
                p("ainotes:a", Some("w2")),
                true,
                false,
                false,
                false,
            ),
            (
                Awaiting::Party(a_w1.clone()),
                b.clone(),
                a_w1,
                true,
                false,
                false,
                true,
            ),
            (
                Awaiting::Party(a.clone()),
                b.clone(),
                p("ainotes:a", Some("w2")),
                true,
                false,
                false,
                true,
            ),
            (
                Awaiting::Party(a.clone()),
                b.clone(),
                b.clone(),
                false,
                false,
                false,
                false,
            ),
            (Awaiting::Nobody, b, a, false, false, false, false),
        ];
        for (i, (aw, last, caller, ext, locked, lateral, visible)) in table.into_iter().enumerate()
        {
            assert_eq!(
                inbox_visible(locked, lateral, &aw, &last, &caller, ext),
                visible,
                "row {i}"
            );
        }
    }
}
