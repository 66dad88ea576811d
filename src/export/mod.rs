//! Exporters: pure functions from results to text. Each format in its own file.

pub mod json;
pub mod markdown;
pub mod scaling;
pub mod table;

use bench_core::results::RunRecord;

/// What every exporter is given: the runs to show, side by side, and the baseline bench.
pub struct Report<'a> {
    pub runs: &'a [RunRecord],
    pub baseline: &'a str,
    /// When the report was made (RFC 3339), passed in so exports stay pure.
    pub generated_at: &'a str,
}

/// Nanoseconds per op in a readable unit (ns, µs, ms, s) with three significant digits.
pub fn fmt_ns(ns: f64) -> String {
    let (v, unit) = if ns < 1e3 {
        (ns, "ns")
    } else if ns < 1e6 {
        (ns / 1e3, "µs")
    } else if ns < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    let digits = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$} {unit}")
}

/// Operations per second, short (`1.23M/s`, `456k/s`, `78/s`).
pub fn fmt_ops(ops: f64) -> String {
    let (v, unit) = if ops >= 1e6 {
        (ops / 1e6, "M")
    } else if ops >= 1e3 {
        (ops / 1e3, "k")
    } else {
        (ops, "")
    };
    let digits = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$}{unit}/s")
}

/// The CI of a median, as `lo–hi` in the unit of the low end.
pub fn fmt_ci(ci: [f64; 2]) -> String {
    format!("{} – {}", fmt_ns(ci[0]), fmt_ns(ci[1]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(fmt_ns(17.46), "17.5 ns");
        assert_eq!(fmt_ns(1598.2), "1.60 µs");
        assert_eq!(fmt_ns(65780.4), "65.8 µs");
        assert_eq!(fmt_ns(123_456_789.0), "123 ms");
        assert_eq!(fmt_ns(2.5e9), "2.50 s");
        assert_eq!(fmt_ops(1_234_567.0), "1.23M/s");
        assert_eq!(fmt_ops(456_000.0), "456k/s");
        assert_eq!(fmt_ops(78.0), "78.0/s");
    }
}

#[cfg(test)]
mod snapshot_tests {
    //! The exporters on fixed results.
    use super::*;
    use bench_core::knobs::Knobs;
    use bench_core::protocol::{Budget, DatasetStatus, Event, RunEnv, Start};
    use bench_core::results::RunRecord;
    use bench_core::stats::{LatencyHistogram, summarize};
    use bench_core::trace::Phase;

    fn run(rows: u64, debug: bool, spin_median: f64) -> RunRecord {
        let mut knobs = Knobs::default();
        knobs.set("rows", rows);
        knobs.set("lookups", 1000);
        let mut r = RunRecord::default();
        r.apply(Event::Start(Start {
            run: "fixed".into(),
            target: "single_row_lookup".into(),
            benches: vec![
                "rusqlite".into(),
                "middleware/spin".into(),
                "middleware/interact".into(),
            ],
            harness: "core".into(),
            knobs,
            seed: 0x5EED_1001,
            trace: true,
            budget: Budget {
                warmup_s: 0.3,
                time_s: 2.0,
                max_samples: 100,
                min_samples: 10,
            },
            env: RunEnv {
                profile: if debug { "debug" } else { "release" }.into(),
                sqlite: "3.53.2".into(),
                crates: [("rusqlite".to_string(), "0.40.2".to_string())].into(),
                cpu: "Test CPU".into(),
                cores: 2,
                os: "linux x86_64".into(),
                timer_ns: 19.5,
                settings: [("pool".to_string(), "max_size=8".to_string())].into(),
            },
        }));
        r.apply(Event::Dataset {
            status: DatasetStatus::Reused,
            rows,
            path: "/cache/x.sqlite".into(),
            build_ms: None,
        });
        for (bench, median) in [("rusqlite", 1580.0), ("middleware/spin", spin_median)] {
            let xs: Vec<f64> = (0..20)
                .map(|i| median + (i % 5) as f64 * median / 500.0)
                .collect();
            for (i, x) in xs.iter().enumerate() {
                r.apply(Event::Sample {
                    bench: bench.into(),
                    iter: i as u64,
                    ops: 1000,
                    elapsed_ns: (*x * 1000.0) as u64,
                });
            }
            let mut h = LatencyHistogram::new();
            xs.iter().for_each(|x| h.record(*x as u64));
            r.apply(Event::Summary {
                bench: bench.into(),
                stats: summarize(&xs, h.percentiles()).unwrap(),
            });
        }
        r.apply(Event::Phases {
            bench: "middleware/spin".into(),
            iter: 19,
            ops: 20_000,
            ns_per_op: [
                (Phase::Checkout, 420.0),
                (Phase::Prepare, 166.0),
                (Phase::Bind, 162.0),
                (Phase::Dispatch, 1490.0),
                (Phase::ExecuteMarshal, 2430.0),
                (Phase::Decode, 454.0),
            ]
            .into(),
        });
        r.apply(Event::Error {
            bench: Some("middleware/interact".into()),
            message: "pool: timed out".into(),
        });
        r.apply(Event::Done);
        r
    }

    #[test]
    fn markdown_one_run() {
        let runs = [run(20_000, false, 4390.0)];
        let md = markdown::render(&Report {
            runs: &runs,
            baseline: "rusqlite",
            generated_at: "2026-11-21T23:00:00Z",
        });
        insta::assert_snapshot!(md);
    }

    #[test]
    fn markdown_side_by_side_with_a_debug_run() {
        let runs = [run(20_000, false, 4390.0), run(40_000, true, 4720.0)];
        let md = markdown::render(&Report {
            runs: &runs,
            baseline: "rusqlite",
            generated_at: "2026-11-21T23:00:00Z",
        });
        insta::assert_snapshot!(md);
    }

    #[test]
    fn json_document() {
        let runs = [run(20_000, false, 4390.0)];
        let json = json::render(&Report {
            runs: &runs,
            baseline: "rusqlite",
            generated_at: "2026-11-21T23:00:00Z",
        });
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["schema_version"], json::SCHEMA_VERSION);
        insta::assert_snapshot!(json);
    }

    #[test]
    fn table_one_run() {
        let runs = [run(20_000, false, 4390.0)];
        insta::assert_snapshot!(table::render(&Report {
            runs: &runs,
            baseline: "rusqlite",
            generated_at: "x"
        }));
    }
}
