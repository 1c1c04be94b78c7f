//! `reference-server`: the Parley v1 + SSP 1.0 reference server.
//!
//! `serve` listens on HTTP (Parley `/v1`, MCP `/mcp`, SSP routes) and prints exactly one
//! line `listening on http://ADDR` on stdout once bound; `stdio` speaks MCP over
//! stdin/stdout for clients that spawn their servers. Logs go to stderr.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::{Args, Parser, Subcommand};
use reference_impl::config::{Config, SspCredentials, TokenFile};

mod soak;

#[derive(Debug, Parser)]
#[command(
    name = "reference-server",
    version,
    about = "Reference server for Parley v1 and SSP 1.0"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve HTTP: Parley `/v1/...`, MCP `POST /mcp`, the SSP provider.
    Serve(ServeArgs),
    /// Serve MCP over stdin/stdout. Calls are authenticated with the `PARLEY_TOKEN`
    /// environment variable (stdio has no Authorization header).
    Stdio(StdioArgs),
    /// Soak and fault test: mixed Parley + SSP traffic, hostile clients and `kill -9`
    /// restarts against a `serve` child on a file database; prints one table, fails on a
    /// broken bound (loopback only).
    Soak(soak::SoakArgs),
}

#[derive(Debug, Args)]
struct Common {
    /// SQLite database file (`:memory:` for a throw-away one).
    #[arg(long, default_value = "./parley.db")]
    db: PathBuf,
    /// Load the public demo token set (loopback only).
    #[arg(long, conflicts_with = "tokens")]
    demo: bool,
    /// TOML file of `[[token]]` rows: token, identity, rights, lock_label, quota_per_minute.
    #[arg(long, value_name = "FILE")]
    tokens: Option<PathBuf>,
    /// Serve Parley without the dialectic profile (its kinds are then `kind_unknown`).
    #[arg(long)]
    no_dialectic: bool,
    /// Switch on a named seeded fault (measures the suite; `faults` builds only).
    #[cfg(feature = "faults")]
    #[arg(long, value_name = "NAME")]
    fault: Vec<String>,
    /// Switch on a named legal variant (the suite must accept it; `variants` builds only).
    #[cfg(feature = "variants")]
    #[arg(long, value_name = "NAME")]
    variant: Vec<String>,
}

#[derive(Debug, Args)]
struct ServeArgs {
    /// Address to listen on (port 0 picks a free port; the printed line has the real one).
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Public base URL used in SSP descriptors (default: from the bound address).
    #[arg(long)]
    base_url: Option<String>,
    /// Concurrent connections served; one more gets `503 server_busy`.
    #[arg(long, default_value_t = reference_impl::server::MAX_CONNECTIONS)]
    max_connections: usize,
    /// Seconds a connection may take to deliver a complete request head (idle sockets,
    /// slowloris); then it is closed.
    #[arg(long, default_value_t = reference_impl::server::HEADER_READ_TIMEOUT.as_secs())]
    head_timeout_secs: u64,
    /// Seconds a whole request may take (`408 request_timeout`).
    #[arg(long, default_value_t = reference_impl::server::REQUEST_TIMEOUT.as_secs())]
    request_timeout_secs: u64,
    /// Also answer this `Host` (HOST or HOST:PORT; `*` = any), besides the loopback names and
    /// the --base-url host. Repeatable. Others get 403 (DNS-rebinding protection) when the
    /// server listens on loopback or this flag is given.
    #[arg(long, value_name = "HOST")]
    allowed_host: Vec<String>,
    /// Also allow this browser `Origin` (SCHEME://HOST[:PORT], `:*` = any port, `null`, or
    /// `*` = any), besides loopback origins (when listening on loopback) and the --base-url
    /// origin. Repeatable. A request with another Origin gets 403; no Origin always passes.
    #[arg(long, value_name = "ORIGIN")]
    allowed_origin: Vec<String>,
    /// SSP: also accept this API key (`X-API-Key`), with permission to invoke, on the
    /// `api_key` skills. Repeatable; each key is a client of its own for
    /// --ssp-rate-per-minute. Visible to local users in the process list: test keys only.
    #[arg(long, value_name = "KEY")]
    ssp_api_key: Vec<String>,
    #[command(flatten)]
    ssp_limits: reference_impl::config::SspLimitArgs,
    #[command(flatten)]
    common: Common,
}

impl ServeArgs {
    fn limits(&self) -> reference_impl::server::Limits {
        reference_impl::server::Limits {
            max_connections: self.max_connections,
            head_timeout: std::time::Duration::from_secs(self.head_timeout_secs.max(1)),
            request_timeout: std::time::Duration::from_secs(self.request_timeout_secs.max(1)),
            ..Default::default()
        }
    }
}

#[derive(Debug, Args)]
struct StdioArgs {
    /// The bearer token every call is made with.
    #[arg(long, env = "PARLEY_TOKEN", hide_env_values = true)]
    token: Option<String>,
    #[command(flatten)]
    common: Common,
}

fn config(common: &Common) -> anyhow::Result<Config> {
    let mut config = if common.demo {
        Config::demo(common.db.clone())
    } else if let Some(path) = &common.tokens {
        let tokens = TokenFile::load(path)?;
        Config {
            db_path: common.db.clone(),
            tokens,
            ssp: SspCredentials::default(),
            ssp_limits: Default::default(),
            base_url: None,
            faults: Vec::new(),
            variants: Vec::new(),
            dialectic: true,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
        }
    } else {
        bail!(
            "no tokens: pass --demo (public demo tokens, loopback only) or --tokens FILE \
             ([[token]] rows); without tokens every operation but get_manifest is refused"
        );
    };
    #[cfg(feature = "faults")]
    {
        config.faults = common.fault.clone();
    }
    config.faults.retain(|f| !f.is_empty());
    #[cfg(feature = "variants")]
    {
        config.variants = common.variant.clone();
        config.variants.retain(|v| !v.is_empty());
    }
    config.dialectic = !common.no_dialectic;
    Ok(config)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    reference_impl::logging::init("info,rmcp=warn");
    match Cli::parse().command {
        Command::Serve(args) => serve(args).await,
        Command::Soak(args) => soak::run(args).await,
        Command::Stdio(args) => {
            let config = config(&args.common)?;
            let db = reference_impl::store::Db::open(&config.db_path)
                .with_context(|| format!("opening {}", config.db_path.display()))?;
            let faults = reference_impl::faults::Faults::from_names(&config.faults)?;
            // Over stdio only the variants below the wire apply (limits, realm); the wire
            // variants rewrite HTTP exchanges, which stdio has none of.
            let variants = reference_impl::variants::Variants::from_names(&config.variants)?;
            let tokens = variants.tokens(config.tokens);
            let mut service =
                reference_impl::parley::service::ParleyService::with_faults(db, tokens, faults)
                    .with_limits(variants.limits(reference_impl::domain::parley::REFERENCE));
            if !config.dialectic {
                service = service.without_dialectic();
            }
            reference_impl::parley::api::mcp::serve_stdio(service, args.token).await?;
            Ok(())
        }
    }
}

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let mut config = config(&args.common)?;
    let limits = args.limits();
    config.base_url = args.base_url;
    config.allowed_hosts = args.allowed_host;
    config.allowed_origins = args.allowed_origin;
    // A header value is trimmed and cannot hold a line break: such a key could never match.
    if let Some(bad) = args
        .ssp_api_key
        .iter()
        .find(|k| k.is_empty() || k.contains(char::is_whitespace))
    {
        bail!("--ssp-api-key {bad:?}: a key must be non-empty and without whitespace");
    }
    config.ssp.api_keys_allowed.extend(args.ssp_api_key);
    config.ssp_limits = args.ssp_limits.into();
    // The handlers are in place before the listening line: that line is the readiness a
    // supervisor waits for, and a SIGTERM sent after it must shut down gracefully (exit 0),
    // never hit the default disposition and kill the process (a CI run caught that race).
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
    let mut interrupt = signal(SignalKind::interrupt()).context("installing the SIGINT handler")?;
    let mut server = reference_impl::server::spawn_with(config, args.listen, limits).await?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening on http://{}", server.addr)?;
        out.flush()?;
    }
    tokio::select! {
        _ = interrupt.recv() => tracing::info!("interrupt: shutting down"),
        _ = term.recv() => tracing::info!("SIGTERM: shutting down"),
        _ = server.stopped() => bail!("server stopped unexpectedly"),
    }
    server.shutdown().await;
    Ok(())
}
