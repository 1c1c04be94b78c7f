//! Parley's two wire bindings: [`http`] (`/v1/…`) and [`mcp`] (`POST /mcp`, the nine tools).
//! Both translate the wire into a [`crate::parley::service::Request`] and the
//! [`crate::parley::service::Response`] back, so they cannot disagree (PV-TR-1); what they
//! share with the SSP routes is in [`crate::api`].

pub mod http;
pub mod mcp;
