//! The named hook points where a switched-on [`Fault`](super::Fault) bends the Parley
//! service (issue 6, issue 9 §4). The HTTP-boundary faults (MCP refusal shape, SSP
//! provider) live in the `wire` middleware instead.
//!
//! The service calls a handful of hooks per operation, each named after the step it may
//! bend (`request::enforced`, `post::parse_envelope`, `threads::confirms_states`, …). A hook
//! either returns the correct value it was given (or computes the domain rule itself, for
//! the few rules a fault rewrites as a whole) unless one of its faults is on. Every
//! `Fault::X` of the catalogue outside `wire` is named in exactly one of these files, so
//! searching a fault's variant name finds its whole effect. Without the cargo feature
//! `faults`, [`Faults::is_on`](super::Faults::is_on) is a constant `false` and every hook
//! folds to the correct behaviour.

pub(crate) mod post;
pub(crate) mod races;
pub(crate) mod reads;
pub(crate) mod request;
pub(crate) mod sequences;
pub(crate) mod threads;
