//! A run as a front end hands it to a runner: one typed value, written whole on the runner's
//! stdin (`--request -`). Everything in it was checked and resolved by the front end (the
//! target's every knob, this process's share of the budget, each bench by its exact name);
//! the runner checks it against its catalog again, but parses no flag and reads no setting
//! from its environment. The PostgreSQL URL is not in it: it stays in the runner's environment,
//! never where a request could be kept or shown.

use std::io::Read;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::catalog::{BenchSpec, CatalogError, Harness};
use crate::error::BenchError;
use crate::knobs::Knobs;
use crate::protocol::Budget;
use crate::script::ScriptArgs;
use crate::workload::Plan;
use crate::workloads;

/// The request's format: a runner refuses another (a front end and a runner of other builds).
pub const FORMAT: u32 = 1;

/// The most bytes a request may take (a script run's names and paths are the most of it).
const MAX_BYTES: u64 = 1 << 20;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunnerRequest {
    pub format: u32,
    pub run_id: String,
    pub target: String,
    /// Benches by their exact names, in the order they run.
    pub benches: Vec<String>,
    /// Every knob of the target (and the script target's `:NAME` variables).
    pub knobs: Knobs,
    /// What this runner is given: the run's whole budget, or one process's share, each
    /// bench's own time (`--time-for`) in `times`.
    pub budget: Budget,
    pub trace: bool,
    pub cache_dir: Option<PathBuf>,
    /// The script target's files (absolute paths), variables and database.
    pub script: ScriptArgs,
}

impl RunnerRequest {
    /// The request a runner reads from `input`: bounded, of this format, every field known.
    pub fn read(input: impl Read) -> Result<RunnerRequest, BenchError> {
        let mut text = String::new();
        input
            .take(MAX_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(|e| BenchError::Invalid(format!("cannot read the run request: {e}")))?;
        if text.len() as u64 > MAX_BYTES {
            return Err(BenchError::Invalid(format!(
                "the run request is over {} KiB (allowed: at most {} KiB)",
                MAX_BYTES >> 10,
                MAX_BYTES >> 10
            )));
        }
        let request: RunnerRequest = serde_json::from_str(&text)
            .map_err(|e| BenchError::Invalid(format!("the run request does not read: {e}")))?;
        if request.format != FORMAT {
            return Err(BenchError::Invalid(format!(
                "the run request is of format {} (allowed: {FORMAT}, this runner's)",
                request.format
            )));
        }
        Ok(request)
    }

    /// The run it asks for, checked against the catalog: the target, each bench by its exact
    /// name (of `harness`, when one is given), every knob the target's and within its bounds,
    /// and a budget that holds together.
    pub fn plan(&self, harness: Option<Harness>) -> Result<Plan, BenchError> {
        let mut target = workloads::find(&self.target)?;
        if target.name == workloads::script::NAME {
            target = workloads::script::spec_for(&self.script);
        }
        let mut benches: Vec<&'static BenchSpec> = Vec::new();
        for name in &self.benches {
            let b = target.spec(name)?;
            if harness.is_some_and(|h| b.harness() != h) {
                return Err(CatalogError::OtherHarness {
                    bench: b.name.to_string(),
                    harness: b.harness().name(),
                }
                .into());
            }
            if !benches.iter().any(|s| s.name == b.name) {
                benches.push(b);
            }
        }
        for spec in &target.knobs {
            let value = self.knobs.get(spec.name).ok_or_else(|| {
                BenchError::Invalid(format!(
                    "the run request has no value for knob {} of {}",
                    spec.name, target.name
                ))
            })?;
            spec.parse(&value.to_string())
                .map_err(|e| BenchError::Invalid(e.to_string()))?;
        }
        if let Some(k) = self
            .knobs
            .0
            .keys()
            .find(|k| !k.starts_with(':') && !target.knobs.iter().any(|s| s.name == k.as_str()))
        {
            return Err(BenchError::Invalid(format!(
                "the run request sets knob {k}, which {} does not have (allowed: {})",
                target.name,
                target
                    .knobs
                    .iter()
                    .map(|s| s.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        check_budget(&self.budget)?;
        Ok(Plan {
            target,
            benches,
            knobs: self.knobs.clone(),
            budget: self.budget.clone(),
            trace: self.trace,
        })
    }
}

/// A budget that holds together: finite, non-negative times, at least one sample, the least
/// no more than the most.
fn check_budget(b: &Budget) -> Result<(), BenchError> {
    let times = [b.time_s, b.warmup_s]
        .into_iter()
        .chain(b.times.values().copied());
    if let Some(t) = times.into_iter().find(|t| !t.is_finite() || *t < 0.0) {
        return Err(BenchError::Invalid(format!(
            "the run request's budget has {t} s (allowed: finite seconds, 0 or more)"
        )));
    }
    if b.max_samples == 0 || b.min_samples == 0 || b.min_samples > b.max_samples {
        return Err(BenchError::Invalid(format!(
            "the run request's budget asks {}..={} samples (allowed: 1 or more, the least no more than the most)",
            b.min_samples, b.max_samples
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::args::{BudgetArgs, budget_for};

    fn request(target: &str, benches: &[&str]) -> RunnerRequest {
        let t = workloads::find(target).unwrap();
        let specs: Vec<&BenchSpec> = benches.iter().map(|b| t.spec(b).unwrap()).collect();
        RunnerRequest {
            format: FORMAT,
            run_id: "r1".into(),
            target: target.into(),
            benches: benches.iter().map(|b| b.to_string()).collect(),
            knobs: crate::knobs::resolve(&t.knobs, &|_| None, &[]).unwrap(),
            budget: budget_for(&BudgetArgs::default(), t, &specs).unwrap(),
            trace: false,
            cache_dir: None,
            script: ScriptArgs::default(),
        }
    }

    #[test]
    fn a_request_crosses_as_json_and_plans_what_it_names() {
        let r = request("single_row_lookup", &["rusqlite", "middleware/spin"]);
        let json = serde_json::to_string(&r).unwrap();
        let back = RunnerRequest::read(json.as_bytes()).unwrap();
        assert_eq!(back, r);
        let plan = back.plan(Some(Harness::Core)).unwrap();
        let names: Vec<_> = plan.benches.iter().map(|b| b.name).collect();
        assert_eq!(names, ["rusqlite", "middleware/spin"]);
        assert_eq!(plan.budget, r.budget);
        assert_eq!(plan.knobs, r.knobs);
    }

    #[test]
    fn a_request_that_does_not_hold_is_refused_with_what_is_allowed() {
        let r = request("single_row_lookup", &["rusqlite"]);
        let refused = |r: &RunnerRequest| r.plan(Some(Harness::Core)).unwrap_err().to_string();
        let mut other = r.clone();
        other.benches = vec!["sqlx".into()];
        assert!(refused(&other).contains("sqlx"), "{}", refused(&other));
        let mut knob = r.clone();
        knob.knobs.set("rows", 0u64);
        assert!(refused(&knob).contains("rows"), "{}", refused(&knob));
        let mut missing = r.clone();
        missing.knobs.0.remove("lookups");
        assert!(refused(&missing).contains("lookups"));
        let mut stray = r.clone();
        stray.knobs.set("keys", 5u64);
        assert!(refused(&stray).contains("keys"));
        let mut budget = r.clone();
        budget.budget.min_samples = budget.budget.max_samples + 1;
        assert!(refused(&budget).contains("samples"));
        budget.budget = r.budget.clone();
        budget.budget.time_s = f64::NAN;
        assert!(refused(&budget).contains("NaN"));
        // Another format, an unknown field, or too much text: not read at all.
        let json = serde_json::to_string(&r).unwrap();
        let e = RunnerRequest::read(json.replace("\"format\":1", "\"format\":2").as_bytes());
        assert!(e.unwrap_err().to_string().contains("format 2"));
        let e = RunnerRequest::read(json.replacen('{', "{\"extra\":1,", 1).as_bytes());
        assert!(e.unwrap_err().to_string().contains("extra"));
        let big = " ".repeat((MAX_BYTES + 1) as usize) + &json;
        let e = RunnerRequest::read(big.as_bytes()).unwrap_err().to_string();
        assert!(e.contains("KiB"), "{e}");
    }
}
