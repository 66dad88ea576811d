//! CSV: one row per bench of each run, for spreadsheets and scripts. Times in nanoseconds per
//! operation; empty cells where a figure does not exist (no baseline, no latency recording).
//! `processes` is how many runner processes a bench's figures are across: above one, its
//! intervals say where a repeat of the run lands.

use super::Report;
use bench_core::text::{Text, csv_cell};

const HEADERS: [&str; 27] = [
    "run",
    "target",
    "bench",
    "backend",
    "strategy",
    "samples",
    "processes",
    "median_ns",
    "median_ci95_lo_ns",
    "median_ci95_hi_ns",
    "mean_ns",
    "sd_ns",
    "min_ns",
    "max_ns",
    "p99_ns",
    "ops_per_s",
    "ratio",
    "ratio_ci95_lo",
    "ratio_ci95_hi",
    "ratio_against",
    "cpu_ns_per_op",
    "switches_per_op",
    "knobs",
    "allocs_per_op",
    "bytes_per_op",
    "peak_bytes",
    "retained_bytes",
];

pub fn render(report: &Report<'_>) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(HEADERS).expect("writing to memory");
    let baselines = report.baselines();
    // Three decimals are below any figure's resolution and keep float noise out.
    let num = |x: f64| format!("{}", (x * 1000.0).round() / 1000.0);
    for (i, run) in report.runs.iter().enumerate() {
        let (target, knobs) = run
            .start
            .as_ref()
            .map(|s| (s.target.csv_cell(), csv_cell(&s.knobs.to_string())))
            .unwrap_or_default();
        for r in report.comparison(i) {
            let s = run.bench(r.bench.raw()).and_then(|b| b.summary.as_ref());
            let pick = |f: fn(&bench_core::measure::stats::Summary) -> f64| {
                s.map(|s| num(f(s))).unwrap_or_default()
            };
            let base = baselines.base_of(run, r.bench.raw());
            let (ratio, lo, hi, against) = match &r.ratio {
                Some(x) if r.bench != base => {
                    let [lo, hi] = x.ci95.unwrap_or([x.value - x.err, x.value + x.err]);
                    (num(x.value), num(lo), num(hi), csv_cell(base))
                }
                _ => Default::default(),
            };
            let (cost, mem) = (r.cost.as_ref(), r.memory.as_ref());
            let record = [
                report.number(i).to_string(),
                // Every text from data as a cell a spreadsheet reads as text, never a formula
                // (the csv crate quotes the rest, RFC 4180).
                target.clone(),
                r.bench.csv_cell(),
                r.backend.csv_cell(),
                r.strategy.as_ref().map(Text::csv_cell).unwrap_or_default(),
                r.samples.to_string(),
                // The runner processes its figures are across (their intervals the next run's).
                s.map(|s| s.processes.len().max(1).to_string())
                    .unwrap_or_default(),
                num(r.median_ns),
                num(r.ci95_ns[0]),
                num(r.ci95_ns[1]),
                pick(|s| s.mean),
                pick(|s| s.std_dev),
                pick(|s| s.min),
                pick(|s| s.max),
                r.p99_ns.map(|p| p.to_string()).unwrap_or_default(),
                num(r.ops_per_s),
                ratio,
                lo,
                hi,
                against,
                cost.map(|c| num(c.cpu_ns_per_op)).unwrap_or_default(),
                cost.map(|c| num(c.switches_per_op())).unwrap_or_default(),
                knobs.clone(),
                mem.map(|m| num(m.allocs_per_op)).unwrap_or_default(),
                mem.map(|m| num(m.bytes_per_op)).unwrap_or_default(),
                mem.map(|m| m.peak_bytes.to_string()).unwrap_or_default(),
                mem.map(|m| m.retained_bytes.to_string())
                    .unwrap_or_default(),
            ];
            w.write_record(&record).expect("writing to memory");
        }
    }
    String::from_utf8(w.into_inner().expect("flushing to memory")).expect("CSV of UTF-8 text")
}
