//! Commands of the `conform` binary that have a file of their own (the rest are still in
//! `main.rs`): each parses its arguments, calls the library, prints and returns an exit code.

pub(crate) mod matrix;
pub(crate) mod verify;
