//! The Parley service: one function per operation, authenticate → validate → decide →
//! persist → respond. Both bindings call only this layer (PV-TR-1).
