//! Bindings: the ways a protocol is reached (Parley's `http` and `mcp`), as opaque ids the
//! engine plans over. A protocol declares its own ([`Protocol::bindings`]); the engine only
//! compares them, runs a check once per binding it is bound to that the target offers, and
//! prints them (`<check>@<binding>`, `--transport <binding>`).
//!
//! [`Protocol::bindings`]: super::protocol::Protocol::bindings

use std::collections::BTreeSet;
use std::fmt;
use std::sync::{Mutex, OnceLock};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A binding id, declared by a protocol (`http`, `mcp`).
///
/// `Copy` and `'static` so that jobs, results and baselines carry it freely; a name read
/// from a file (a report being merged, a baseline) is interned once per distinct name.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Binding(&'static str);

impl Binding {
    /// The binding named `name` (a protocol's constant).
    pub const fn new(name: &'static str) -> Self {
        Self(name)
    }

    /// The binding named `name`, read at run time (a report, a baseline, the command line).
    pub fn named(name: &str) -> Self {
        Self(intern(name))
    }

    /// Its name.
    pub fn as_str(self) -> &'static str {
        self.0
    }
}

/// `name` as a `'static` string, leaked once per distinct name for the life of the process:
/// the names are a handful (the bindings the registered protocols declare), and a hostile
/// file can add no more distinct names than its own length.
fn intern(name: &str) -> &'static str {
    static NAMES: OnceLock<Mutex<BTreeSet<&'static str>>> = OnceLock::new();
    let names = NAMES.get_or_init(Mutex::default);
    // A poisoned lock only means another thread panicked while inserting: the set is intact.
    let mut names = names
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(known) = names.get(name) {
        return known;
    }
    let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
    names.insert(leaked);
    leaked
}

/// Its name, as in a report (`[http, mcp]` in a mismatch message).
impl fmt::Debug for Binding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// The value of `--transport` that selects every binding.
pub const EVERY: &str = "both";

/// The bindings a `--transport` value selects: [`EVERY`] selects every one (empty: no
/// choice), any other value the binding of that name.
pub fn selection(value: &str) -> Vec<Binding> {
    if value == EVERY {
        Vec::new()
    } else {
        vec![Binding::named(value)]
    }
}

/// Whether `selected` (a run's `--transport` choice; empty = no choice) takes `binding`.
pub fn selects(selected: &[Binding], binding: Binding) -> bool {
    selected.is_empty() || selected.contains(&binding)
}

impl fmt::Display for Binding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl Serialize for Binding {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0)
    }
}

impl<'de> Deserialize<'de> for Binding {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = std::borrow::Cow::<'de, str>::deserialize(d)?;
        Ok(Self::named(&name))
    }
}

#[cfg(test)]
#[expect(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;

    /// A name read back is the same binding as the constant, and serializes as its name.
    #[test]
    fn a_name_read_back_is_the_declared_binding() {
        const ALPHA: Binding = Binding::new("alpha");
        let read: Binding = serde_json::from_str("\"alpha\"").unwrap();
        assert_eq!(read, ALPHA);
        assert_eq!(serde_json::to_string(&read).unwrap(), "\"alpha\"");
        // Interned: one allocation per distinct name, however often it is read.
        let (a, b) = (Binding::named("beta"), Binding::named("beta"));
        assert!(std::ptr::eq(a.as_str(), b.as_str()));
        assert_ne!(Binding::named("beta"), ALPHA);
        assert_eq!(ALPHA.to_string(), "alpha");
    }
}
