//! The reference server for tests: spawned with a given config, shared by all the trials of
//! a libtest-mimic binary, and the Parley suite run against a server over HTTP.

use std::sync::{Arc, OnceLock, PoisonError, RwLock};

use conform::engine::binding::Binding;
use conform::engine::check::{Check, CheckCtx, CheckOutcome};
use conform::engine::report::Report;
use conform::engine::run::{RunOptions, run};
use conform::engine::target::{ConnectOptions, Target, TargetError};
use conform::transport::TransportKind;
use libtest_mimic::{Arguments, Failed};

/// Spawns the reference with `config` in process, pre-flighted by the protocols named in
/// `suites` with `opts`; the server lives as long as the target.
pub(crate) async fn spawn_with(
    config: reference_impl::Config,
    opts: &ConnectOptions,
    suites: &[&str],
) -> Result<Target, TargetError> {
    let names: Vec<String> = suites.iter().map(|s| (*s).to_string()).collect();
    let protocols = conform::registry::select(&names).map_err(|e| TargetError::Profile {
        path: "<suites>".into(),
        message: e.to_string(),
    })?;
    conform::reference::spawn_with(config, opts, &protocols).await
}

/// The reference spawned in process behind a proxy at `base_url`: its SSP documents name
/// their URLs after that base, so every SSP request (descriptors, invocations, polls) goes
/// through the proxy too.
pub(crate) async fn spawn_behind(base_url: &str) -> reference_impl::RunningServer {
    let mut config = reference_impl::Config::demo_in_memory();
    config.base_url = Some(base_url.to_string());
    reference_impl::spawn(config, std::net::SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .expect("reference server")
}

/// The demo profile at `base_url` of a reference behind a proxy: no spawned reference, so
/// its `[ssp]` table names the demo fixtures explicitly (`reference-demo.profile.toml`).
pub(crate) fn proxied_demo_profile(base_url: &str) -> conform::engine::target::Profile {
    let demo = super::vectors::dir().join("ssp/provider/reference-demo.profile.toml");
    let demo = conform::engine::protocol::load_profile(&demo, &conform::registry::protocols())
        .expect("demo profile");
    let mut profile = conform::reference::demo_profile(base_url);
    profile.sections.insert(
        "ssp".into(),
        demo.section("ssp").cloned().expect("[ssp] table"),
    );
    profile
}

/// The reference servers every trial of one libtest-mimic binary runs against, with the
/// runtime they live on.
pub(crate) struct Shared {
    rt: tokio::runtime::Runtime,
    targets: Vec<Arc<Target>>,
}

/// The command line of a binary whose trials run checks against the shared reference, with
/// 8 test threads unless `--test-threads` says otherwise: checks wait on the network, not
/// the CPU, so more threads than cores keeps both busy.
pub(crate) fn arguments() -> Arguments {
    let mut args = Arguments::from_args();
    if args.test_threads.is_none() {
        args.test_threads = Some(8);
    }
    args
}

static SHARED: OnceLock<Result<Shared, String>> = OnceLock::new();

/// Exclusive checks take the write side so nothing runs beside them (they assume no foreign
/// activity, e.g. inbox cursors); every other check takes the read side.
static EXCLUSIVE: RwLock<()> = RwLock::new(());

/// The binary's shared reference: on first use, one server per entry of `options` (demo
/// configuration, pre-flighted for every registered protocol) on a runtime with `workers`
/// threads. Later calls return the same servers, whatever they pass.
pub(crate) fn shared(
    options: &[ConnectOptions],
    workers: usize,
) -> Result<&'static Shared, Failed> {
    SHARED
        .get_or_init(|| {
            let rt = super::runtime(workers)?;
            let protocols = conform::registry::protocols();
            let targets = options
                .iter()
                .map(|o| {
                    rt.block_on(conform::reference::spawn(o, &protocols))
                        .map(Arc::new)
                        .map_err(|e| e.to_string())
                })
                .collect::<Result<_, _>>()?;
            Ok(Shared { rt, targets })
        })
        .as_ref()
        .map_err(|e| Failed::from(format!("reference server: {e}")))
}

impl Shared {
    /// The server spawned for the `index`-th entry of the options given to [`shared`].
    pub(crate) fn target(&self, index: usize) -> Result<Arc<Target>, Failed> {
        self.targets
            .get(index)
            .cloned()
            .ok_or_else(|| Failed::from(format!("no shared reference #{index}")))
    }

    /// Runs `check` once against `target` on `transport`, run nonce `<nonce_prefix><pid>`.
    pub(crate) fn run(
        &self,
        check: &dyn Check,
        target: Arc<Target>,
        transport: Option<Binding>,
        nonce_prefix: &str,
    ) -> CheckOutcome {
        let ctx = CheckCtx {
            target,
            transport,
            run_nonce: format!("{nonce_prefix}{}", std::process::id()),
            counterexamples: Default::default(),
            stop: None,
        };
        self.rt.block_on(check.run(&ctx))
    }
}

/// Runs `f` holding the lock `check` needs: alone when it is exclusive, beside the other
/// non-exclusive checks otherwise.
pub(crate) fn locked<T>(check: &dyn Check, f: impl FnOnce() -> T) -> T {
    if check.exclusive() {
        let _alone = EXCLUSIVE.write().unwrap_or_else(PoisonError::into_inner);
        f()
    } else {
        let _beside = EXCLUSIVE.read().unwrap_or_else(PoisonError::into_inner);
        f()
    }
}

/// Runs the Parley suite against `target` over HTTP only (8 checks at a time), without the
/// quota vectors: PV-TR-5 shares the `limited` token's one-minute window across the whole
/// run, so its outcome depends on scheduling (the main vector test covers it).
pub(crate) async fn parley_over_http(target: Target) -> Report {
    let mut suite = super::vectors::suite("parley").expect("parley suite");
    suite
        .checks
        .retain(|c| !c.requirements().iter().any(|r| r == "PV-TR-5"));
    let opts = RunOptions {
        transports: vec![TransportKind::Http.into()],
        jobs: 8,
        ..RunOptions::default()
    };
    run(Arc::new(target), &[suite], &opts).await.expect("run")
}
