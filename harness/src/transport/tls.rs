//! TLS of `https://` targets: which certificates the shared client trusts.
//!
//! The client trusts the Mozilla roots shipped with the binary (`webpki-root-certs`), so a
//! machine without a system certificate store still reaches a public server, plus the
//! extra roots of `--ca-cert FILE` (a staging CA). `--insecure` accepts any certificate: it
//! is never implied, prints a warning and is recorded in the report's target information,
//! so a published report shows that the server's identity was not verified.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// TLS settings: the profile's `[tls]` table and the `--ca-cert`/`--insecure` options.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct TlsOptions {
    /// PEM file of extra trusted root certificate(s) for an `https://` target (e.g. a
    /// staging CA); the Mozilla roots stay trusted.
    #[arg(long, value_name = "FILE")]
    #[serde(default)]
    pub ca_cert: Option<PathBuf>,
    /// Accept any TLS certificate (self-signed, expired, wrong host). The server's identity
    /// is not verified: a warning is printed and the report records it.
    #[arg(long)]
    #[serde(default)]
    pub insecure: bool,
}

/// Why the TLS settings cannot be used (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// The CA file could not be read.
    #[error("--ca-cert {path}: {message}")]
    CaCert {
        /// File.
        path: String,
        /// What is wrong.
        message: String,
    },
}

impl TlsOptions {
    /// These options with `over`'s set ones taking precedence (command line over profile):
    /// its CA file replaces ours; `insecure` is on when either asks for it.
    pub fn overridden_by(&self, over: &Self) -> Self {
        Self {
            ca_cert: over.ca_cert.clone().or_else(|| self.ca_cert.clone()),
            insecure: self.insecure || over.insecure,
        }
    }

    /// A relative CA path taken as relative to `dir` (a profile's directory), so a profile
    /// works from any working directory.
    pub fn relative_to(mut self, dir: &Path) -> Self {
        if let Some(p) = &self.ca_cert
            && p.is_relative()
        {
            self.ca_cert = Some(dir.join(p));
        }
        self
    }

    /// Whether anything differs from the defaults.
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }

    /// Applies the settings to a client under construction.
    pub fn apply(
        &self,
        builder: reqwest::ClientBuilder,
    ) -> Result<reqwest::ClientBuilder, TlsError> {
        let mut roots = mozilla_roots().to_vec();
        if let Some(path) = &self.ca_cert {
            roots.extend(read_ca(path)?);
        }
        Ok(builder
            .tls_certs_only(roots)
            .tls_danger_accept_invalid_certs(self.insecure))
    }

    /// The warning printed when `insecure` is on.
    pub fn warning(&self) -> Option<&'static str> {
        self.insecure.then_some(
            "WARNING: --insecure: TLS certificates are NOT verified; the server's identity is \
             unproven and the report records this run as insecure",
        )
    }
}

/// The certificates of a PEM file (at least one).
fn read_ca(path: &Path) -> Result<Vec<reqwest::Certificate>, TlsError> {
    let err = |message: String| TlsError::CaCert {
        path: path.display().to_string(),
        message,
    };
    let pem = std::fs::read(path).map_err(|e| err(e.to_string()))?;
    let certs = reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| err(e.to_string()))?;
    if certs.is_empty() {
        return Err(err("no PEM `CERTIFICATE` block in the file".into()));
    }
    Ok(certs)
}

/// The Mozilla root certificates, converted once per process (each client of a run reuses
/// them; the SSP provider checks build one client per check).
fn mozilla_roots() -> &'static [reqwest::Certificate] {
    static ROOTS: OnceLock<Vec<reqwest::Certificate>> = OnceLock::new();
    ROOTS.get_or_init(|| {
        webpki_root_certs::TLS_SERVER_ROOT_CERTS
            .iter()
            // `from_der` only copies the bytes (parsing happens when the client is built).
            .filter_map(|der| reqwest::Certificate::from_der(der).ok())
            .collect()
    })
}

/// The text of an error and every error under it (`error sending request: … invalid peer
/// certificate: UnknownIssuer`): reqwest's own message hides the TLS cause.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    // Bounded: error chains are short, but a cyclic `source` must not hang the harness.
    for _ in 0..8 {
        let Some(c) = cause else { break };
        let text = c.to_string();
        if !s.contains(&text) {
            s.push_str(": ");
            s.push_str(&text);
        }
        cause = c.source();
    }
    s
}

#[cfg(test)]
#[expect(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;

    #[test]
    fn command_line_overrides_the_profile() {
        let profile = TlsOptions {
            ca_cert: Some("profile.pem".into()),
            insecure: true,
        };
        let cli = TlsOptions {
            ca_cert: Some("cli.pem".into()),
            insecure: false,
        };
        let m = profile.overridden_by(&cli);
        assert_eq!(m.ca_cert.as_deref(), Some(Path::new("cli.pem")));
        assert!(m.insecure, "insecure from either side stays on");
        let m = profile.overridden_by(&TlsOptions::default());
        assert_eq!(m.ca_cert.as_deref(), Some(Path::new("profile.pem")));
    }

    #[test]
    fn relative_ca_path_is_the_profile_directory() {
        let o = TlsOptions {
            ca_cert: Some("ca.pem".into()),
            insecure: false,
        }
        .relative_to(Path::new("/etc/conform"));
        assert_eq!(o.ca_cert.as_deref(), Some(Path::new("/etc/conform/ca.pem")));
    }

    #[test]
    fn mozilla_roots_are_bundled() {
        assert!(mozilla_roots().len() > 100);
    }

    #[test]
    fn a_file_without_certificates_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("empty.pem");
        std::fs::write(&path, "not a certificate\n").unwrap();
        let e = TlsOptions {
            ca_cert: Some(path),
            insecure: false,
        }
        .apply(reqwest::Client::builder())
        .unwrap_err();
        assert!(e.to_string().contains("no PEM"), "{e}");
    }
}
