//! Discovery steps of the SSP model: the index under each filter and caller, descriptors,
//! and the descriptor of a skill nobody published (SSP-DISC, SSP-SCH).

use std::collections::BTreeSet;

use serde_json::json;

use crate::ssp::model::state::{self, Caller, Filter, Read, World, breach};
use crate::ssp::provider::env::unknown_descriptor_url;
use crate::ssp::types::{SkillDescriptor, SkillIndex};
use crate::ssp::validator::DocType;

use super::{Driver, NO_SUCH_TYPE, Step, THROTTLE, or_throttled, throttled};

impl Driver<'_> {
    pub(super) async fn discover(&mut self, w: &World, by: usize, filter: Filter) -> Step<()> {
        let query = match filter {
            Filter::None => String::new(),
            Filter::Capability(t, false) => format!("?capability_type={}", t.as_str()),
            Filter::Capability(t, true) => format!("?type={}", t.as_str()),
            Filter::Unknown => format!("?capability_type={NO_SUCH_TYPE}"),
        };
        let pred = state::discovery(w, by, filter);
        let Some(got) = self.discovery_answer(w, by, filter, &query, &pred).await? else {
            return Ok(());
        };
        // SSP-DISC-3 is met by either spelling (seed §4.2 names `?type=`, ssp.md
        // `?capability_type=`): one answered as if unfiltered is a warning, never a failure;
        // the scripted filter check fails a target honouring neither.
        let unfiltered = state::discovery(w, by, Filter::None).exactly;
        if let (Filter::Capability(t, registry), Some(all)) = (filter, &unfiltered)
            && *all == got
            && pred.exactly.as_ref() != Some(&got)
        {
            let param = if registry { "type" } else { "capability_type" };
            self.warnings.push((
                "SSP-DISC-3",
                format!(
                    "?{param}={} is not honoured (the index came back unfiltered)",
                    t.as_str()
                ),
            ));
            return state::judge_index(w, by, Filter::None, Some(all), &got);
        }
        // The same for the unknown value: a target that knows only `?type=` ignores
        // `?capability_type=` whatever its value, so the value is sent again in the
        // spelling it may know, and that answer is judged.
        // (Unfiltered: what the model expects of this caller, or what it listed when the
        // run began, so a target also breaking SSP-DISC-2 is still recognised here.)
        let seen = w.seen.get(by).cloned().flatten();
        if matches!(filter, Filter::Unknown)
            && !got.is_empty()
            && (unfiltered.as_ref() == Some(&got) || seen.as_ref() == Some(&got))
        {
            self.warnings.push((
                "SSP-DISC-3",
                format!("?capability_type={NO_SUCH_TYPE} is not honoured (the index came back unfiltered): sent again as ?type="),
            ));
            let query = format!("?type={NO_SUCH_TYPE}");
            let Some(got) = self.discovery_answer(w, by, filter, &query, &pred).await? else {
                return Ok(());
            };
            return state::judge_index(w, by, filter, pred.exactly.as_ref(), &got);
        }
        state::judge_index(w, by, filter, pred.exactly.as_ref(), &got)
    }

    /// One discovery request with `query`: a refusal judged against `pred` (`None`), an
    /// empty index where one is allowed (`None`), else the ids the index lists.
    async fn discovery_answer(
        &mut self,
        w: &World,
        by: usize,
        filter: Filter,
        query: &str,
        pred: &state::Discovery,
    ) -> Step<Option<BTreeSet<String>>> {
        let url = self
            .env
            .url(&format!("{}{query}", self.env.profile.well_known_path()));
        let cred = self.secrets.cred(w.callers[by], None);
        let r = self.send("GET", &url, None, &cred).await?;
        let rules: &[&'static str] = if matches!(filter, Filter::None) {
            &["SSP-DISC-2"]
        } else {
            &["SSP-DISC-3"]
        };
        if throttled(&r) {
            self.check_error(r.status, r.json.as_ref(), &THROTTLE, rules, "discovery")?;
            return Ok(None);
        }
        if r.status != 200 {
            self.check_error(
                r.status,
                r.json.as_ref(),
                &pred.refusals,
                rules,
                "discovery",
            )?;
            return Ok(None);
        }
        let idx: SkillIndex = self.typed(&r, DocType::Index, &["SSP-DISC-1"], "the Skill Index")?;
        let got: BTreeSet<String> = idx.skills.iter().map(|e| e.id.clone()).collect();
        if pred.empty_ok && got.is_empty() {
            return Ok(None);
        }
        Ok(Some(got))
    }

    pub(super) async fn descriptor(&mut self, w: &World, by: usize, skill: usize) -> Step<()> {
        let s = &w.skills[skill];
        let cred = self.secrets.cred(w.callers[by], Some(s));
        let r = self.send("GET", &s.descriptor_url, None, &cred).await?;
        const RULES: &[&str] = &["SSP-DISC-4"];
        if throttled(&r) {
            return self.check_error(r.status, r.json.as_ref(), &THROTTLE, RULES, "descriptor");
        }
        let refusals = match state::descriptor(w, by, skill) {
            Read::Ok => Vec::new(),
            Read::Refuse(list) => {
                return self.check_error(
                    r.status,
                    r.json.as_ref(),
                    &list,
                    RULES,
                    "descriptor read",
                );
            }
            Read::Either(list) => list,
        };
        if r.status != 200 {
            return self.check_error(
                r.status,
                r.json.as_ref(),
                &refusals,
                RULES,
                "descriptor read",
            );
        }
        let d: SkillDescriptor = self.typed(&r, DocType::Descriptor, RULES, "the descriptor")?;
        let want = json!([
            s.id,
            s.name_version.0,
            s.capability.as_str(),
            s.access.as_str(),
            s.name_version.1
        ]);
        let got = json!([
            d.id,
            d.name,
            d.capability_type.as_str(),
            d.access.as_str(),
            d.version
        ]);
        if want != got {
            return Err(breach(
                RULES,
                "the descriptor agrees with its index entry (id, name, capability_type, access, version)",
                want,
                got,
            ));
        }
        Ok(())
    }

    pub(super) async fn unknown_descriptor(&mut self, w: &World, by: usize) -> Step<()> {
        let Some(first) = w.skills.first() else {
            return Ok(());
        };
        let unknown = "conform-model-unknown-skill";
        let Some((url, layout)) = unknown_descriptor_url(&first.descriptor_url, &first.id, unknown)
        else {
            return Ok(());
        };
        // Only a path of the provider's own descriptor layout is certain to be one.
        let not_found = if layout {
            state::NOT_FOUND
        } else {
            state::NO_RESOURCE
        };
        let cred = self.secrets.cred(w.callers[by], None);
        let r = self.send("GET", &url, None, &cred).await?;
        let mut allowed = vec![not_found];
        if w.callers[by] == Caller::Wrong {
            allowed.push(state::AUTH_REQUIRED);
        }
        self.check_error(
            r.status,
            r.json.as_ref(),
            &or_throttled(allowed, &r),
            &["SSP-DISC-4"],
            "unknown descriptor path",
        )
    }
}
