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
        let does_not_read = |e: &dyn std::fmt::Display| {
            BenchError::Invalid(format!("the run request does not read: {e}"))
        };
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| does_not_read(&e))?;
        if let Some(k) = value
            .get("budget")
            .and_then(|b| b.as_object())
            .and_then(|b| b.keys().find(|k| !BUDGET_FIELDS.contains(&k.as_str())))
        {
            return Err(does_not_read(&format!(
                "unknown field `{}` in budget, expected one of {}",
                crate::text::terminal_str(k),
                BUDGET_FIELDS.join(", ")
            )));
        }
        let request: RunnerRequest = serde_json::from_str(&text).map_err(|e| does_not_read(&e))?;
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
        // Every knob of the target, as its spec reads it: the value run and recorded is the one
        // checked (`5_000` as 5000, `WAL` as wal), never the text as sent.
        let mut knobs = crate::knobs::Knobs::default();
        for spec in &target.knobs {
            let value = self.knobs.get(spec.name).ok_or_else(|| {
                BenchError::Invalid(format!(
                    "the run request has no value for knob {} of {}",
                    spec.name, target.name
                ))
            })?;
            let read = spec
                .parse(&value.to_string())
                .map_err(|e| BenchError::Invalid(e.to_string()))?;
            knobs.set(spec.name, read);
        }
        // The script's variables come from its defines alone (as from -D on the command
        // line), so the values recorded are the ones the scripts run with.
        if let Some(k) = self
            .knobs
            .0
            .keys()
            .find(|k| !target.knobs.iter().any(|s| s.name == k.as_str()))
        {
            return Err(BenchError::Invalid(format!(
                "the run request sets knob {k}, which {} does not have (allowed: {}; a script's variables as its defines)",
                target.name,
                target
                    .knobs
                    .iter()
                    .map(|s| s.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        script_variables(target, &self.script.defines, &mut knobs);
        check_budget(&self.budget)?;
        if let Some(d) = self.cache_dir.as_deref().filter(|d| !d.is_absolute()) {
            return Err(BenchError::Invalid(format!(
                "the run request's cache folder {} is not an absolute path (allowed: an absolute path, or none for the default)",
                crate::text::terminal_str(&d.display().to_string())
            )));
        }
        Ok(Plan {
            target,
            benches,
            knobs,
            budget: self.budget.clone(),
            trace: self.trace,
        })
    }
}

/// The script target's -D values, recorded with the run's knobs as `:NAME` (the last -D of a
/// name wins, as in the scripts), so that every view of the run says them; nothing for
/// another target.
pub fn script_variables(
    target: &crate::catalog::Target,
    defines: &[String],
    knobs: &mut crate::knobs::Knobs,
) {
    if target.name != crate::workloads::script::NAME {
        return;
    }
    for d in defines {
        if let Ok((name, v)) = crate::script::parse_define(d) {
            let value = match v {
                crate::script::Value::Int(n) if n >= 0 => crate::knobs::KnobValue::Count(n as u64),
                other => crate::knobs::KnobValue::Word(other.to_string()),
            };
            knobs.set(&format!(":{name}"), value);
        }
    }
}

/// A budget that holds together, within the bounds its flags have: times finite, from 0 to
/// their most, 1 to the most samples with the least no more than the most, a group within its
/// most, and one process (a runner is one; the front end counts its processes).
fn check_budget(b: &Budget) -> Result<(), BenchError> {
    use super::budget::{MAX_GROUP, MAX_SAMPLES, MAX_TIME_S, MAX_WARMUP_S};
    let bad = |what: &str, v: &dyn std::fmt::Display, allowed: &str| {
        Err(BenchError::Invalid(format!(
            "the run request's budget has {what} {v} (allowed: {allowed})"
        )))
    };
    let seconds = |t: f64, most: f64| t.is_finite() && (0.0..=most).contains(&t);
    // A number past the bounds, short: `1e300`, not its 301 digits.
    let short = |t: f64| {
        if t.abs() >= 1e6 {
            format!("{t:e}")
        } else {
            t.to_string()
        }
    };
    if !seconds(b.time_s, MAX_TIME_S) {
        return bad("time_s", &short(b.time_s), "0..=3600 seconds");
    }
    if !seconds(b.warmup_s, MAX_WARMUP_S) {
        return bad("warmup_s", &short(b.warmup_s), "0..=600 seconds");
    }
    if let Some(t) = b.times.values().find(|t| !seconds(**t, MAX_TIME_S)) {
        return bad("a bench's time", &short(*t), "0..=3600 seconds");
    }
    if !(1..=MAX_SAMPLES).contains(&b.max_samples) || !(1..=b.max_samples).contains(&b.min_samples)
    {
        return bad(
            "samples",
            &format!("{}..={}", b.min_samples, b.max_samples),
            "1..=1000000, the least no more than the most",
        );
    }
    if let Some(g) = b.group.filter(|g| !(1..=MAX_GROUP).contains(g)) {
        return bad("group", &g, "1..=10000");
    }
    if let Some(p) = b.processes {
        return bad("processes", &p, "none: a runner is one process");
    }
    Ok(())
}

/// The fields a budget has: a request's budget with another is refused (the budget itself
/// reads streams of other versions, so it takes unknown fields elsewhere).
const BUDGET_FIELDS: [&str; 8] = [
    "warmup_s",
    "time_s",
    "max_samples",
    "min_samples",
    "paired",
    "group",
    "processes",
    "times",
];

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
        // A script variable is not a knob to send: on any target it is refused.
        let mut variable = r.clone();
        variable.knobs.set(":n", 5u64);
        assert!(refused(&variable).contains(":n"));
        // A value is run and recorded as its knob reads it, not as sent.
        let mut words = r.clone();
        words
            .knobs
            .set("rows", crate::knobs::KnobValue::Word("2_000".into()));
        words
            .knobs
            .set("journal_mode", crate::knobs::KnobValue::Word("WAL".into()));
        let plan = words.plan(Some(Harness::Core)).unwrap();
        assert_eq!(
            plan.knobs.get("rows"),
            Some(&crate::knobs::KnobValue::Count(2000))
        );
        assert_eq!(plan.knobs.get("journal_mode").unwrap().to_string(), "wal");
        // Within the bounds the flags have.
        for (field, value) in [
            ("time_s", serde_json::json!(1e300)),
            ("warmup_s", serde_json::json!(601.0)),
            ("max_samples", serde_json::json!(u64::MAX)),
            ("group", serde_json::json!(0)),
            ("processes", serde_json::json!(2)),
        ] {
            let mut v = serde_json::to_value(&r).unwrap();
            v["budget"][field] = value;
            let e = match RunnerRequest::read(v.to_string().as_bytes()) {
                Ok(q) => q.plan(Some(Harness::Core)).unwrap_err().to_string(),
                Err(e) => e.to_string(),
            };
            assert!(e.contains("budget"), "{field}: {e}");
        }
        let mut relative = r.clone();
        relative.cache_dir = Some("cache".into());
        assert!(refused(&relative).contains("absolute"));
        let mut times = r.clone();
        times.budget.times.insert("rusqlite".into(), 1e9);
        assert!(refused(&times).contains("a bench's time"));
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
        let e = RunnerRequest::read(
            json.replace("\"time_s\"", "\"pared\":true,\"time_s\"")
                .as_bytes(),
        );
        assert!(
            e.unwrap_err()
                .to_string()
                .contains("unknown field `pared` in budget")
        );
        let big = " ".repeat((MAX_BYTES + 1) as usize) + &json;
        let e = RunnerRequest::read(big.as_bytes()).unwrap_err().to_string();
        assert!(e.contains("KiB"), "{e}");
    }
}

/// The budget's fields are [`BUDGET_FIELDS`]: a field added to `Budget` is added there.
#[test]
fn budget_fields_are_the_budget_s() {
    let b = Budget {
        warmup_s: 0.1,
        time_s: 1.0,
        max_samples: 2,
        min_samples: 1,
        paired: true,
        group: Some(1),
        processes: Some(1),
        times: [("x".into(), 1.0)].into(),
    };
    let v = serde_json::to_value(&b).unwrap();
    let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort();
    let mut fields = BUDGET_FIELDS.to_vec();
    fields.sort();
    assert_eq!(keys, fields);
}
