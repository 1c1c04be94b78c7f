//! SSP request vectors (`vectors/ssp/requests/*.json`): hostile requests kept as golden
//! vectors — the findings of `conform fuzz --suite ssp --promote DIR`
//! (`ssp::fuzz::promote`) and hand-written regressions — each run by `conform run` as the
//! check `ssp-request/<id>` and judged by the fuzz campaign's oracles.
//!
//! - [`format`]: the file format and its loader;
//! - [`replay`]: a vector resolved through the target's profile, sent and judged.

pub mod format;
pub mod replay;

use std::path::Path;
use std::sync::Arc;

use futures::FutureExt as _;
use futures::future::BoxFuture;

use crate::engine::check::{Bindings, Check, CheckCtx, CheckOutcome};
use crate::engine::finding::{Finding, Step};
use crate::engine::requirements::Catalogue;
use crate::ssp::provider::env::Env;
use crate::ssp::vectors::VectorError;
use format::{Loaded, load_dir};

/// One check per request vector of `vectors_dir/ssp/requests`.
pub fn checks(
    vectors_dir: &Path,
    catalogue: &Catalogue,
) -> Result<Vec<Arc<dyn Check>>, VectorError> {
    let loaded = load_dir(&vectors_dir.join("ssp/requests"), catalogue)?;
    Ok(loaded
        .into_iter()
        .map(|l| {
            Arc::new(RequestCheck {
                id: format!("ssp-request/{}", l.vector.id),
                must: catalogue.any_required(&l.vector.requirements),
                loaded: l,
            }) as Arc<dyn Check>
        })
        .collect())
}

/// The check of one request vector.
pub struct RequestCheck {
    id: String,
    must: bool,
    loaded: Loaded,
}

impl Check for RequestCheck {
    fn id(&self) -> &str {
        &self.id
    }
    fn title(&self) -> &str {
        &self.loaded.vector.title
    }
    fn requirements(&self) -> &[String] {
        &self.loaded.vector.requirements
    }
    fn area(&self) -> &str {
        "requests"
    }
    fn bindings(&self) -> Bindings {
        Bindings::Once
    }
    fn run<'a>(&'a self, ctx: &'a CheckCtx) -> BoxFuture<'a, CheckOutcome> {
        async move {
            let mut env = match crate::ssp::provider::check_env(ctx) {
                Ok(env) => env,
                Err(verdict) => return CheckOutcome::verdict(*verdict),
            };
            let (result, warnings) = self.replay(&mut env).await;
            let requirements = &self.loaded.vector.requirements;
            CheckOutcome::scripted(
                &self.id,
                requirements,
                self.must,
                result,
                &warnings,
                env.exchanges,
            )
        }
        .boxed()
    }
}

impl RequestCheck {
    /// Resolves, sends and judges the vector's request; its exchange joins `env`'s. A
    /// request that never left the harness is an error of the run, never a pass.
    async fn replay(&self, env: &mut Env) -> (Step<()>, Vec<Box<Finding>>) {
        let case = match replay::case(env, &self.loaded.vector).await {
            Ok(c) => c,
            Err(f) => return (Err(f), Vec::new()),
        };
        let (ex, resp, _) = crate::ssp::fuzz::send::send_case(&env.client_handle(), &case).await;
        if resp.is_none()
            && ex.status.is_none()
            && let Some(why) = ex
                .error
                .as_deref()
                .filter(|e| crate::transport::never_built(e))
        {
            let message = format!("the request could not be built: {why}");
            env.exchanges.push(ex);
            return (Err(Finding::harness(message)), Vec::new());
        }
        let found = crate::ssp::fuzz::oracles::judge(&case, resp.as_ref(), &ex);
        env.exchanges.push(ex);
        let (result, warnings) = replay::verdict_parts(found, &self.loaded.vector.requirements);
        // A throttled answer is no refusal of the request itself: nothing was judged.
        let throttled = resp.as_ref().is_some_and(|r| matches!(r.status, 429 | 503));
        if result.is_ok() && case.invalid && throttled {
            let why =
                "the provider throttled the request (429/503): whether it refuses it was not shown";
            return (Err(Finding::untested(why)), warnings);
        }
        (result, warnings)
    }
}
