//! The JSON document: every run with its raw samples and summaries, plus the comparison.

use bench_core::catalog::CONCURRENCY;
use bench_core::compare::{ComparisonRow, Settings};
use bench_core::protocol::results::RunRecord;
use serde::Serialize;

use super::Report;

/// Version of the JSON document's layout.
pub const SCHEMA_VERSION: u32 = 1;

/// What a saved report holds that a render needs.
#[derive(Debug)]
pub struct Saved {
    pub runs: Vec<RunRecord>,
    pub baseline: String,
    pub generated_at: String,
    pub run_numbers: Option<Vec<usize>>,
}

/// Reads a saved report, or says why the file is not one.
pub fn read(text: &str) -> Result<Saved, String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    if v["schema"] != "benchscope.report" {
        return Err(format!(
            "not a benchscope report (schema {}; expected \"benchscope.report\")",
            v["schema"]
        ));
    }
    crate::files::check_version(&v, "benchscope.report", SCHEMA_VERSION)?;
    let runs: Vec<RunRecord> = serde_json::from_value(v["runs"].clone())
        .map_err(|e| format!("its runs do not read: {e}"))?;
    // Every run read from a file is checked as any other is: figures that can be times, each
    // bench named once.
    for (i, r) in runs.iter().enumerate() {
        r.check_figures()
            .map_err(|e| format!("run {}: {e}", i + 1))?;
    }
    Ok(Saved {
        runs,
        baseline: v["baseline"].as_str().unwrap_or("rusqlite").to_string(),
        generated_at: v["generated_at"].as_str().unwrap_or("").to_string(),
        run_numbers: serde_json::from_value(v["run_numbers"].clone()).ok(),
    })
}

#[derive(Serialize)]
struct Document<'a> {
    schema: &'static str,
    schema_version: u32,
    generated_at: &'a str,
    baseline: &'a str,
    /// The number of the run changes and verdicts are against.
    #[serde(skip_serializing_if = "Option::is_none")]
    baseline_run: Option<usize>,
    /// The explorer's number of each run, when it is not its position.
    #[serde(skip_serializing_if = "Option::is_none")]
    run_numbers: Option<Vec<usize>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    verdict_settings: Option<Settings>,
    runs: &'a [RunRecord],
    comparison: Vec<Vec<ComparisonRow>>,
    /// Groups of runs made the same way, with each bench's spread between them.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    repeats: &'a [super::repeats::Repeats],
    /// Scenario runs laid out by the knobs that vary: (title, headers, rows) per table.
    #[serde(skip_serializing_if = "Option::is_none")]
    matrix: Option<Vec<super::scenario::Table>>,
    /// Each workload's own figures (key_value's groups with the suite's targets judged,
    /// crud_overhead's operations against rusqlite, the overall and the sweep),
    /// under its target's name, one per run of it.
    #[serde(flatten)]
    workloads: std::collections::BTreeMap<String, Vec<Box<serde_json::value::RawValue>>>,
    /// ops/s by concurrency when the runs form a sweep.
    #[serde(skip_serializing_if = "Option::is_none")]
    scaling: Option<ScalingDoc>,
}

#[derive(Serialize)]
struct ScalingDoc {
    /// The knobs the sweep varies (one, or two for a matrix).
    knobs: Vec<String>,
    /// Each column's values of those knobs, as text.
    points: Vec<Vec<String>>,
    /// The concurrency of each column, when concurrency is all the sweep varies.
    #[serde(skip_serializing_if = "Option::is_none")]
    concurrency: Option<Vec<u64>>,
    cores: usize,
    ops_per_s: std::collections::BTreeMap<String, Vec<Option<f64>>>,
}

/// What each run's workload adds to the document, by target.
fn workloads(
    runs: &[RunRecord],
) -> std::collections::BTreeMap<String, Vec<Box<serde_json::value::RawValue>>> {
    let mut out: std::collections::BTreeMap<String, Vec<Box<serde_json::value::RawValue>>> =
        Default::default();
    for run in runs {
        let (Some(w), Some(s)) = (bench_core::workloads::sections_of(run), run.start.as_ref())
        else {
            continue;
        };
        if let Some(v) = w.json(run) {
            out.entry(s.target.raw().to_string()).or_default().push(v);
        }
    }
    out
}

pub fn render(report: &Report<'_>) -> String {
    let doc = Document {
        schema: "benchscope.report",
        schema_version: SCHEMA_VERSION,
        generated_at: report.generated_at,
        baseline: report.baseline,
        baseline_run: report.baseline_number(),
        run_numbers: report.run_numbers.map(<[usize]>::to_vec),
        verdict_settings: report.baseline_run.map(|_| report.settings),
        runs: report.runs,
        comparison: (0..report.runs.len())
            .map(|i| report.comparison(i).to_vec())
            .collect(),
        repeats: report.repeats(),
        workloads: workloads(report.runs),
        matrix: super::scenario::matrix(report.runs).map(|m| m.tables()),
        scaling: report.scaling().cloned().map(|s| ScalingDoc {
            concurrency: (s.knobs == [CONCURRENCY.name])
                .then(|| s.points.iter().map(|p| p.values[0].parse().ok()).collect())
                .flatten(),
            knobs: s.knobs,
            points: s.points.into_iter().map(|p| p.values).collect(),
            cores: s.cores,
            ops_per_s: s
                .rows
                .into_iter()
                .map(|(name, v)| (name.into_raw(), v))
                .collect(),
        }),
    };
    let mut s = bench_core::text::json::pretty(&doc);
    s.push('\n');
    s
}
