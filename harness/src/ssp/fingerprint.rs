//! What an SSP provider declares, in the report's target fingerprint (issue 30): the `sha256:`
//! of the canonical JSON of its anonymous Skill Index and of each descriptor the index lists
//! on the index's own origin. Read by the pre-flight, judged by nothing here — the discovery
//! checks (SSP-DISC-1..4) judge the same documents.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::provider::env::{Cred, Env};
use crate::engine::report::evidence::json_sha256;
use crate::engine::target::Target;

/// The most descriptors read (an index may be long; the fingerprint says when it stopped).
const MOST_DESCRIPTORS: usize = 64;
/// The longest the descriptor reads may take together, times the run's time scale (each
/// has the request timeout too).
const READS_WITHIN: Duration = Duration::from_secs(10);

/// Records the index at `index_url` and its descriptors in `target`'s fingerprint. One at
/// a time, anonymously; stops at the first throttling answer (429, 502, 503: the judged
/// checks come next and must not meet a window this read filled) or after
/// [`READS_WITHIN`], and says so.
pub(crate) async fn record(target: &mut Target, index_url: &str, index: &Value) {
    let mut prints = vec![("ssp/index".to_string(), json_sha256(index))];
    let origin = url::Url::parse(index_url)
        .map(|u| format!("{}/", u.origin().ascii_serialization()))
        .unwrap_or_default();
    let listed = descriptor_urls(index);
    if listed.len() > MOST_DESCRIPTORS {
        let note = format!("{MOST_DESCRIPTORS} of {} read", listed.len());
        prints.push(("ssp/descriptors".into(), note));
    }
    let started = Instant::now();
    let within = target
        .time_scale()
        .budget("fingerprint reads' bound", READS_WITHIN);
    for (id, url) in listed.into_iter().take(MOST_DESCRIPTORS) {
        let key = format!("ssp/descriptor/{id}");
        if origin.is_empty() || !url.starts_with(&origin) {
            // A pre-flight talks to the provider only (SSP-DISC-4's check follows such links).
            prints.push((key, "not on the index's origin: not read".into()));
            continue;
        }
        if started.elapsed() > within.limit() {
            let note = format!("stopped after {within}");
            prints.push(("ssp/descriptors".into(), note));
            break;
        }
        let (ex, resp) = Env::send_raw(&target.client, "GET", &url, &[], None, &Cred::None).await;
        let (print, throttled) = match resp {
            Some(r) if r.status == 200 => (
                (r.json.as_ref()).map_or_else(|| "not JSON".to_string(), json_sha256),
                false,
            ),
            Some(r) => (
                format!("HTTP {}", r.status),
                super::provider::env::throttling(r.status),
            ),
            None => (
                format!(
                    "unanswered: {}",
                    ex.error.as_deref().unwrap_or("no response")
                ),
                false,
            ),
        };
        prints.push((key, print));
        if throttled {
            prints.push(("ssp/descriptors".into(), "stopped: throttled".into()));
            break;
        }
    }
    target.info.fingerprint.extend(prints);
}

/// `(id, descriptor_url)` of each index entry that has both as strings.
fn descriptor_urls(index: &Value) -> Vec<(String, String)> {
    let Some(skills) = index.get("skills").and_then(Value::as_array) else {
        return Vec::new();
    };
    skills
        .iter()
        .filter_map(|s| Some((s.get("id")?.as_str()?, s.get("descriptor_url")?.as_str()?)))
        .map(|(id, url)| (id.to_string(), url.to_string()))
        .collect()
}
