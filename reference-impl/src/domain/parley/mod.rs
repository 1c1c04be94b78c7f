//! Parley v1 domain rules (pure, no IO): every rule of `parley-v1.md` that can be decided
//! without the store. The service layer looks things up, asks these modules, and persists.

pub mod authority;
pub mod awaiting;
pub mod dialectic;
pub mod envelope;
pub mod ids;
pub mod kinds;
pub mod limits;
pub mod manifest;
pub mod operation;
pub mod reasons;
pub mod state;

pub use authority::{Actor, Party, Right};
pub use awaiting::Awaiting;
pub use dialectic::{ClaimStatus, Evidence};
pub use envelope::{Envelope, Provenance};
pub use kinds::Kind;
pub use limits::{Limits, REFERENCE};
pub use reasons::{Reason, Refusal};
pub use state::{MarkOutcome, Origin, StateView, ThreadState};
