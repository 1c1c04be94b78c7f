//! Parley v1 domain rules (pure).
