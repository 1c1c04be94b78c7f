//! Pure protocol logic, no IO: exhaustively unit-tested and shared by both bindings.

pub mod parley;
pub mod ssp;
