//! The JSON document: every run with its raw samples and summaries, plus the comparison.

use bench_core::results::{ComparisonRow, RunRecord, comparison};
use serde::Serialize;

use super::Report;

/// Version of the JSON document's layout.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Serialize)]
struct Document<'a> {
    schema: &'static str,
    schema_version: u32,
    generated_at: &'a str,
    baseline: &'a str,
    runs: &'a [RunRecord],
    comparison: Vec<Vec<ComparisonRow>>,
    /// ops/s by concurrency when the runs form a sweep.
    #[serde(skip_serializing_if = "Option::is_none")]
    scaling: Option<ScalingDoc>,
}

#[derive(Serialize)]
struct ScalingDoc {
    concurrency: Vec<u64>,
    cores: usize,
    ops_per_s: std::collections::BTreeMap<String, Vec<Option<f64>>>,
}

pub fn render(report: &Report<'_>) -> String {
    let doc = Document {
        schema: "benchscope.report",
        schema_version: SCHEMA_VERSION,
        generated_at: report.generated_at,
        baseline: report.baseline,
        runs: report.runs,
        comparison: report
            .runs
            .iter()
            .map(|r| comparison(r, report.baseline))
            .collect(),
        scaling: super::scaling::scaling(report.runs).map(|s| ScalingDoc {
            concurrency: s.concurrency,
            cores: s.cores,
            ops_per_s: s.rows.into_iter().collect(),
        }),
    };
    let mut s = serde_json::to_string_pretty(&doc).expect("report serializes");
    s.push('\n');
    s
}
