//! Named legal variants: alternative behaviours the design notes and seeds allow, the dual
//! of the seeded [`faults`](crate::faults) (issue 14).
//!
//! A fault is a behaviour the suite must reject; a variant is one it must accept. Each
//! [`Variant`] names the sentence of `parley-v1.md`, `ssp.md` or a seed that allows it,
//! and `conform variants` runs the whole suite against a reference server with each one
//! switched on: every variant must give zero failures on required checks. A variant that
//! draws a failure is a false failure of the suite (a check stricter than the text), never
//! a defect of the variant.
//!
//! Like faults, the catalogue is always compiled (the harness lists it) and switching a
//! variant on needs the cargo feature `variants`; without it [`Variants::from_names`]
//! rejects every name and [`Variants::is_on`] is a constant `false`.
//!
//! Where each variant acts, so that searching its name finds its whole effect:
//! - declared limits and quotas ([`Variants::limits`]): the service enforces exactly what
//!   the manifest then declares (PV-MF-2);
//! - the identity realm ([`Variants::tokens`]): the token rows' identities;
//! - header casing and keep-alive ([`Variants::connection`]): the HTTP/1.1 accept loop;
//! - everything a client sees on the wire (manifest shapes, routes, member order and
//!   formatting, headers, SSP statuses and shapes): the `wire` service in front of the
//!   router, with its pure JSON rewrites in `json`.

mod catalogue;
#[cfg(feature = "variants")]
mod json;
#[cfg(feature = "variants")]
mod wire;

pub use catalogue::{Variant, VariantError, Variants};

/// Puts the wire variants in front of `router` (which must already carry its fallbacks, so
/// that unknown routes are rewritten too). Returns `router` unchanged when no variant is on
/// — always, in a build without the `variants` feature.
pub fn layer(router: axum::Router, variants: Variants) -> axum::Router {
    #[cfg(feature = "variants")]
    if variants.any() {
        return wire::wrap(router, variants);
    }
    let _ = variants;
    router
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalogue_is_well_formed() {
        assert!(
            Variant::ALL.len() >= 20,
            "issue 14 asks for at least 20 variants"
        );
        let mut names = std::collections::HashSet::new();
        for v in Variant::ALL {
            assert!(names.insert(v.name()), "duplicate name {}", v.name());
            assert!(
                v.name()
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                "{} is not kebab-case",
                v.name()
            );
            assert!(
                v.allowed_by().contains(".md") || v.allowed_by().contains("RFC"),
                "{} must cite the sentence that allows it",
                v.name()
            );
            assert_eq!(Variant::from_name(v.name()), Some(*v));
        }
    }

    #[test]
    fn unknown_names_are_refused() {
        assert_eq!(
            Variants::from_names(&["no-such-variant"]),
            Err(VariantError::Unknown("no-such-variant".into()))
        );
        assert_eq!(Variants::from_names::<&str>(&[]), Ok(Variants::none()));
    }

    #[cfg(feature = "variants")]
    #[test]
    #[expect(clippy::unwrap_used, reason = "tests: a panic is the failure report")]
    fn limits_are_changed_only_by_limit_variants() {
        use crate::domain::parley::REFERENCE;
        let v = Variants::from_names(&["pretty-json"]).unwrap();
        assert_eq!(v.limits(REFERENCE), REFERENCE);
        let v = Variants::from_names(&["request-max-16k", "quota-lower"]).unwrap();
        let l = v.limits(REFERENCE);
        assert_eq!((l.request_max_bytes, l.writes_per_minute), (16384, 3000));
        assert_eq!(l.body_max_chars, REFERENCE.body_max_chars);
    }
}
