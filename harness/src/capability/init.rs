//! `conform init`: a commented target profile for a server, written from what it answers.
//!
//! The engine writes the header (with the secrets warning) and its own keys (`base_url`,
//! `[tls]`); every registered protocol writes its own sections through
//! [`Initialisable::init`] — which tokens play which role, what is still missing, and which
//! checks a run would report `unsupported` because of it, computed by the same code the run
//! uses. A protocol the server does not speak writes a comment saying so instead.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::future::BoxFuture;

use crate::capability::command::Launcher;
use crate::engine::protocol::Protocol;
use crate::engine::target::{ConnectOptions, Profile, Target, TargetError};
use crate::transport::tls::TlsOptions;

/// Arguments of `conform init`.
#[derive(Debug, Clone, clap::Args)]
pub struct InitArgs {
    /// Origin of the server (`https://parley.example.com`).
    #[arg(long, value_name = "URL")]
    pub url: String,
    /// A token or credential: `ROLE=TOKEN` (a Parley role such as `agent_a`, or an SSP
    /// credential such as `api_key`), or a bare Parley `TOKEN` whose role `whoami` decides.
    /// Repeatable.
    #[arg(long = "token", value_name = "ROLE=TOKEN")]
    pub tokens: Vec<String>,
    /// Write the profile to FILE (mode 0600: it holds secrets) instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// `--ca-cert`/`--insecure` for an `https://` server; written into the profile's `[tls]`.
    #[command(flatten)]
    pub tls: TlsOptions,
}

/// A protocol that writes its sections of `conform init`.
pub trait Initialisable: Protocol {
    /// Role or credential names `conform init --token NAME=…` may give this protocol.
    fn init_roles(&self) -> Vec<&'static str>;
    /// This protocol's sections of a profile for `target` (no pre-flight ran), from the
    /// server's answers and the given tokens: the roles they play, what is still missing and
    /// which checks would be `unsupported` because of it.
    fn init<'a>(
        &'a self,
        target: &'a Target,
        tokens: &'a [GivenToken],
        vectors_dir: &'a Path,
    ) -> BoxFuture<'a, InitPart>;
}

/// One `--token` argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GivenToken {
    /// The role or credential name (`agent_a`, `api_key`), when given.
    pub role: Option<String>,
    /// The secret.
    pub token: String,
}

/// What one protocol adds to the generated profile.
#[derive(Debug, Clone, Default)]
pub struct InitPart {
    /// TOML sections and comments, ready to append.
    pub text: String,
    /// Indices (into the given tokens) of the tokens this protocol used or reported on.
    pub used: Vec<usize>,
    /// Whether the server speaks this protocol, as far as `init` could tell.
    pub speaks: Speaks,
}

/// What a protocol's `init` found out about the server.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Speaks {
    /// The protocol writes no section and asked nothing (it has no `init`).
    #[default]
    NotAsked,
    /// The server answered as this protocol's servers do.
    Yes,
    /// It did not: why, in one line.
    No(String),
}

/// Why `conform init` could not write a profile (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    /// A `--token` names no role of any protocol.
    #[error("--token {name}=…: no protocol knows the role {name:?} (known: {known})")]
    UnknownRole {
        /// Given name.
        name: String,
        /// Every known name.
        known: String,
    },
    /// The URL or the TLS settings are unusable.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// The server speaks none of the protocols `init` asked about: no profile is written.
    #[error(
        "{url} speaks none of the protocols conform init writes a profile for:{}\n\
         Check --url: the origin the server answers on (scheme, host, port, no path).",
        .reasons.iter().map(|(p, why)| format!("\n  - {p}: {why}")).collect::<String>()
    )]
    NoProtocol {
        /// The URL given.
        url: String,
        /// `(protocol, why not)` for each protocol asked.
        reasons: Vec<(String, String)>,
    },
    /// The profile could not be written.
    #[error("writing {path}: {message}")]
    Write {
        /// File.
        path: String,
        /// Cause.
        message: String,
    },
}

impl GivenToken {
    /// `ROLE=TOKEN` when the part before the first `=` is one of `roles`, else the whole
    /// argument is a token (base64 tokens end in `=`). A lowercase name that no protocol
    /// knows is an error, so a typo is not sent as a token.
    pub fn parse(arg: &str, roles: &[&str]) -> Result<Self, InitError> {
        if let Some((name, token)) = arg.split_once('=') {
            if roles.contains(&name) {
                return Ok(Self {
                    role: Some(name.to_string()),
                    token: token.to_string(),
                });
            }
            let looks_like_role = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '_' || c.is_ascii_digit())
                && !token.is_empty();
            if looks_like_role {
                return Err(InitError::UnknownRole {
                    name: name.to_string(),
                    known: roles.join(", "),
                });
            }
        }
        Ok(Self {
            role: None,
            token: arg.to_string(),
        })
    }
}

/// A TOML string literal (quoted and escaped).
pub fn toml_str(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// The profile text for the server at `args.url`, every protocol of `protocols` asked.
pub async fn generate(
    args: &InitArgs,
    protocols: &[Arc<dyn Initialisable>],
    vectors_dir: &Path,
) -> Result<String, InitError> {
    let known: Vec<&'static str> = protocols.iter().flat_map(|p| p.init_roles()).collect();
    let tokens = (args.tokens.iter())
        .map(|t| GivenToken::parse(t, &known))
        .collect::<Result<Vec<_>, _>>()?;
    if !(args.url.starts_with("http://") || args.url.starts_with("https://"))
        || url::Url::parse(&args.url).is_err()
    {
        return Err(InitError::Target(TargetError::Profile {
            path: "--url".into(),
            message: format!("{:?} is not an absolute http(s) URL", args.url),
        }));
    }
    let mut profile = Profile::new(args.url.trim_end_matches('/'));
    profile.tls = args.tls.clone();
    let opts = ConnectOptions::default();
    let target = Target::new(profile, &opts)?;
    let mut out = header(args, &target);
    let mut used = vec![false; tokens.len()];
    let mut asked = 0;
    let mut reasons = Vec::new();
    for p in protocols {
        let part = p.init(&target, &tokens, vectors_dir).await;
        match &part.speaks {
            Speaks::NotAsked => {}
            Speaks::Yes => asked += 1,
            Speaks::No(why) => {
                asked += 1;
                reasons.push((p.name().to_string(), why.clone()));
            }
        }
        for i in part.used {
            if let Some(u) = used.get_mut(i) {
                *u = true;
            }
        }
        out.push('\n');
        out.push_str(&part.text);
    }
    if asked > 0 && reasons.len() == asked {
        return Err(InitError::NoProtocol {
            url: target.info.base_url.clone(),
            reasons,
        });
    }
    for (i, t) in tokens.iter().enumerate() {
        if !used[i] {
            let _ = writeln!(
                out,
                "\n# token #{} ({}) was used by no protocol and is not written.",
                i + 1,
                t.role.as_deref().unwrap_or("no role given")
            );
        }
    }
    Ok(out)
}

/// The header comment and the engine's keys.
fn header(args: &InitArgs, target: &Target) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "# Target profile for {} — written by `conform init` (conform {}).",
        target.info.base_url,
        env!("CARGO_PKG_VERSION")
    );
    if args.tokens.is_empty() {
        let _ = writeln!(o, "# No tokens were given: add them where marked MISSING.");
    } else {
        let _ = writeln!(
            o,
            "# THIS FILE CONTAINS SECRETS: the tokens given with --token are written as given.\n\
             # Keep it out of version control and readable only by you."
        );
    }
    let _ = writeln!(
        o,
        "# Review it, fill what is marked MISSING, then: conform run --target <this file>\n"
    );
    let _ = writeln!(o, "format_version = 1");
    let _ = writeln!(o, "base_url = {}", toml_str(&target.info.base_url));
    let _ = writeln!(o, "# timeout_ms = 10000                      # per request");
    let _ = writeln!(
        o,
        "# time_scale = 1                          # multiplies every timeout and wait"
    );
    let _ = writeln!(
        o,
        "# concurrency = 8                         # default --jobs"
    );
    if !args.tls.is_default() {
        let _ = writeln!(o, "\n[tls]");
        if let Some(ca) = &args.tls.ca_cert {
            let _ = writeln!(
                o,
                "ca_cert = {}   # extra trusted root (a relative path is relative to this file)",
                // Absolute: the profile may be written anywhere, and a relative path in it is
                // read relative to its own directory.
                toml_str(
                    &std::fs::canonicalize(ca)
                        .unwrap_or_else(|_| ca.clone())
                        .display()
                        .to_string()
                )
            );
        }
        if args.tls.insecure {
            let _ = writeln!(
                o,
                "insecure = true   # certificates NOT verified; every report records it"
            );
        }
    }
    o
}

/// `conform init` for the registered `protocols`: writes the profile to `--out` (mode 0600)
/// or stdout; exit code 0 (an error, exit 2, when the server speaks none of them).
pub fn execute(
    args: &InitArgs,
    protocols: &[Arc<dyn Initialisable>],
    vectors_dir: &Path,
    launcher: &dyn Launcher,
) -> Result<u8, InitError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| InitError::Target(TargetError::Transport(e.to_string())))?;
    let text = rt.block_on(generate(args, protocols, vectors_dir))?;
    match &args.out {
        None => launcher.out(&text).map_err(|e| InitError::Write {
            path: "standard output".into(),
            message: e.to_string(),
        })?,
        Some(path) => {
            write_private(path, &text).map_err(|e| InitError::Write {
                path: path.display().to_string(),
                message: e.to_string(),
            })?;
            launcher.note(&format!("profile written to {}", path.display()));
        }
    }
    Ok(0)
}

/// Writes `text` to a file only its owner may read (it holds tokens).
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        opts.mode(0o600);
    }
    opts.open(path)?.write_all(text.as_bytes())
}

#[cfg(test)]
#[expect(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;

    const ROLES: [&str; 2] = ["agent_a", "api_key"];

    #[test]
    fn token_arguments() {
        let t = GivenToken::parse("agent_a=abc=", &ROLES).unwrap();
        assert_eq!(t.role.as_deref(), Some("agent_a"));
        assert_eq!(t.token, "abc=");
        let t = GivenToken::parse("dGVzdA==", &ROLES).unwrap();
        assert_eq!((t.role, t.token.as_str()), (None, "dGVzdA=="));
        let t = GivenToken::parse("plain-token", &ROLES).unwrap();
        assert_eq!(t.role, None);
        assert!(matches!(
            GivenToken::parse("agnet_a=abc", &ROLES),
            Err(InitError::UnknownRole { .. })
        ));
    }

    #[test]
    fn toml_strings_are_escaped() {
        for s in ["a\"b", "it's", "back\\slash", "line\nbreak"] {
            let t: toml::Table = toml::from_str(&format!("k = {}", toml_str(s))).unwrap();
            assert_eq!(t["k"].as_str(), Some(s));
        }
    }
}
