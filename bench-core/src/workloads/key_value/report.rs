//! What a `key_value` run says, as one model the explorer and every export read: each group's
//! benches per backend, and the suite's targets judged pass or fail where it sets one.

use serde::Serialize;

use super::plan::{Case, Group, Target, target};
use crate::catalog::Subject;
use crate::protocol::results::{BenchResult, RunRecord};

#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub bench: crate::text::Text,
    pub case: String,
    pub backend: String,
    pub median_ns: f64,
    pub ci95_ns: [f64; 2],
    pub p99_ns: Option<u64>,
    pub ops_per_s: f64,
    /// concurrent_reads: throughput against one task on the same backend.
    pub speedup: Option<f64>,
    /// The suite's target, in words, and whether it holds.
    pub target: Option<String>,
    pub holds: Option<Holds>,
}

/// Whether a target holds: judged on the median's 95% interval, so a median that sits on the
/// target's line is said to be undecided rather than passed or failed by luck.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Holds {
    Pass,
    Fail,
    /// The interval straddles the target.
    Undecided,
}

fn judge(lo_ok: bool, hi_ok: bool) -> Holds {
    match (lo_ok, hi_ok) {
        (true, true) => Holds::Pass,
        (false, false) => Holds::Fail,
        _ => Holds::Undecided,
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct GroupTable {
    pub group: &'static str,
    pub rows: Vec<Row>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Overview {
    pub groups: Vec<GroupTable>,
    /// Cores of the machine: linear scaling past them cannot hold.
    pub cores: usize,
}

fn words(t: Target, case: Case) -> String {
    match t {
        Target::Under(ns) => match case {
            Case::PrefixScan(_) => format!("< {} per scan", fmt_ns(ns)),
            _ => format!("< {} per op", fmt_ns(ns)),
        },
        Target::AtLeast(r) => format!(">= {} ops/s", fmt_rate(r)),
        Target::Linear => match case {
            Case::ConcurrentReads(n) => format!("linear: >= {:.1}x", 0.8 * n as f64),
            _ => "linear".into(),
        },
    }
}

fn fmt_ns(ns: f64) -> String {
    if ns >= 1e3 {
        format!("{:.0} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

fn fmt_rate(r: f64) -> String {
    if r >= 1e6 {
        format!("{:.0}M", r / 1e6)
    } else {
        format!("{:.0}K", r / 1e3)
    }
}

/// The overview of `run`, if it is a key_value run.
pub fn overview(run: &RunRecord) -> Option<Overview> {
    let start = run.start.as_ref()?;
    if start.target != super::NAME {
        return None;
    }
    let spec = super::spec();
    let mut done: Vec<(Case, Subject, &BenchResult)> = Vec::new();
    for b in &spec.benches {
        let (Some(case), Some(r)) = (super::case_of(b), run.bench(b.name)) else {
            continue;
        };
        if r.summary.is_some() {
            done.push((case, b.subject, r));
        }
    }
    let one_task = |subject: Subject| {
        done.iter()
            .find(|(c, s, _)| *c == Case::ConcurrentReads(1) && *s == subject)
            .and_then(|(_, _, r)| r.summary.as_ref())
            .map(|s| s.median)
    };
    let groups = [
        Group::Single,
        Group::Batch,
        Group::Concurrent,
        Group::Patterns,
        Group::Ttl,
    ]
    .into_iter()
    .filter_map(|g| {
        let rows: Vec<Row> = done
            .iter()
            .filter(|(c, _, _)| c.group() == g)
            .map(|(case, subject, r)| {
                let s = r.summary.as_ref().expect("finished");
                let speedup = match case {
                    Case::ConcurrentReads(_) => one_task(*subject).map(|one| one / s.median),
                    _ => None,
                };
                let t = target(*case, *subject == Subject::Memory);
                let [lo, hi] = s.ci95_median;
                let holds = t.and_then(|t| match t {
                    Target::Under(ns) => Some(judge(lo < ns, hi < ns)),
                    Target::AtLeast(rate) => Some(judge(1e9 / hi >= rate, 1e9 / lo >= rate)),
                    Target::Linear => match case {
                        Case::ConcurrentReads(n) => {
                            let one = one_task(*subject)?;
                            let want = 0.8 * *n as f64;
                            Some(judge(one / hi >= want, one / lo >= want))
                        }
                        _ => None,
                    },
                });
                Row {
                    bench: r.name.clone(),
                    case: case.name(),
                    backend: subject.slug(),
                    median_ns: s.median,
                    ci95_ns: s.ci95_median,
                    p99_ns: s.latency.map(|l| l.p99),
                    ops_per_s: if s.median > 0.0 { 1e9 / s.median } else { 0.0 },
                    speedup,
                    target: t.map(|t| words(t, *case)),
                    holds,
                }
            })
            .collect();
        (!rows.is_empty()).then_some(GroupTable {
            group: g.name(),
            rows,
        })
    })
    .collect();
    Some(Overview {
        groups,
        cores: run.start.as_ref().map(|s| s.env.cores).unwrap_or(0),
    })
}

/// key_value's own views: each group's table per backend with the suite's targets judged, how
/// many targets hold per backend, a line on each bench, and the overview as JSON.
#[derive(Debug)]
pub struct KvSections;

impl crate::sections::Sections for KvSections {
    fn section(&self, run: &RunRecord) -> Option<crate::sections::Section> {
        let o = overview(run)?;
        let tables = o
            .groups
            .iter()
            .map(|g| {
                let (headers, rows) = group_cells(g);
                crate::sections::Table {
                    title: g.group.to_string(),
                    headers: crate::sections::texts(headers),
                    rows: crate::sections::cells(rows),
                    left: 2,
                    ..Default::default()
                }
            })
            .collect();
        Some(crate::sections::Section {
            tables,
            notes_title: "Suite targets".into(),
            notes: crate::sections::texts(summary(&o)),
            ..Default::default()
        })
    }

    fn bench_lines(
        &self,
        run: &RunRecord,
    ) -> std::collections::BTreeMap<crate::text::Text, crate::text::Text> {
        let Some(o) = overview(run) else {
            return Default::default();
        };
        run.benches
            .iter()
            .filter_map(|b| Some((b.name.clone(), bench_line(&o, b.name.raw())?.into())))
            .collect()
    }

    fn json(&self, run: &RunRecord) -> Option<Box<serde_json::value::RawValue>> {
        serde_json::value::to_raw_value(&overview(run)?).ok()
    }
}

fn verdict(holds: Option<Holds>) -> &'static str {
    match holds {
        Some(Holds::Pass) => "pass",
        Some(Holds::Fail) => "FAIL",
        Some(Holds::Undecided) => "within CI",
        None => "-",
    }
}

/// One group's table: headers and rows.
fn group_cells(g: &GroupTable) -> (Vec<String>, Vec<Vec<String>>) {
    let headers = [
        "bench",
        "backend",
        "median/op",
        "95% CI (median)",
        "p99/op",
        "ops/s",
        "speedup vs 1 task",
        "suite target",
        "holds",
    ]
    .map(String::from)
    .to_vec();
    let rows = g
        .rows
        .iter()
        .map(|r| {
            vec![
                r.case.clone(),
                r.backend.clone(),
                crate::format::ns(r.median_ns),
                crate::format::ci(r.ci95_ns),
                r.p99_ns
                    .map(|p| crate::format::ns(p as f64))
                    .unwrap_or_else(|| "-".into()),
                crate::format::ops(r.ops_per_s),
                r.speedup
                    .map(crate::format::ratio_short)
                    .unwrap_or_else(|| "-".into()),
                r.target.clone().unwrap_or_else(|| "-".into()),
                verdict(r.holds).to_string(),
            ]
        })
        .collect();
    (headers, rows)
}

/// How many targets hold, per backend, and why linear scaling cannot on this machine.
fn summary(o: &Overview) -> Vec<String> {
    let mut backends: Vec<&str> = Vec::new();
    for g in &o.groups {
        for r in &g.rows {
            if !backends.contains(&r.backend.as_str()) {
                backends.push(&r.backend);
            }
        }
    }
    let mut out: Vec<String> = backends
        .iter()
        .filter_map(|b| {
            let judged: Vec<_> = o
                .groups
                .iter()
                .flat_map(|g| g.rows.iter())
                .filter(|r| r.backend == *b && r.holds.is_some())
                .collect();
            if judged.is_empty() {
                return None;
            }
            let with = |h: Holds| -> Vec<&str> {
                judged
                    .iter()
                    .filter(|r| r.holds == Some(h))
                    .map(|r| r.case.as_str())
                    .collect()
            };
            let (failed, undecided) = (with(Holds::Fail), with(Holds::Undecided));
            let mut line = format!(
                "{b}: {} of {} targets hold",
                with(Holds::Pass).len(),
                judged.len()
            );
            if !failed.is_empty() {
                line.push_str(&format!("; not: {}", failed.join(", ")));
            }
            if !undecided.is_empty() {
                line.push_str(&format!("; within the CI: {}", undecided.join(", ")));
            }
            Some(line)
        })
        .collect();
    if o.cores > 0 {
        out.push(format!(
            "linear scaling is judged as a speedup of at least 0.8 x the tasks; this machine has {} cores, so past {} tasks it cannot hold",
            o.cores, o.cores
        ));
    }
    out
}

/// For a key_value bench: its ops/s, its speedup against one task, and the suite's target.
fn bench_line(o: &Overview, bench: &str) -> Option<String> {
    use crate::format;
    let r = o
        .groups
        .iter()
        .flat_map(|g| g.rows.iter())
        .find(|r| r.bench == bench)?;
    let mut t = format!("{}: {}", r.case, format::ops(r.ops_per_s));
    if let Some(x) = r.speedup {
        t.push_str(&format!(
            " · {} the throughput of 1 task",
            format::ratio_short(x)
        ));
    }
    if let (Some(target), Some(h)) = (&r.target, r.holds) {
        t.push_str(&format!(
            " · suite target {target}: {}",
            match h {
                Holds::Pass => "holds",
                Holds::Fail => "does not hold",
                Holds::Undecided => "undecided (the CI straddles it)",
            }
        ));
    }
    Some(t)
}

#[cfg(test)]
mod tests {
    use super::super::plan::Size;
    use super::*;

    /// A finished key_value run of these benches, each `(case, subject, median, [lo, hi])` in
    /// ns per operation.
    fn run_of(benches: &[(Case, Subject, f64, [f64; 2])]) -> RunRecord {
        let named: Vec<(&str, f64, f64, f64)> = benches
            .iter()
            .map(|(case, subject, m, [lo, hi])| {
                let b = super::super::spec()
                    .benches
                    .iter()
                    .find(|b| super::super::case_of(b) == Some(*case) && b.subject == *subject)
                    .unwrap_or_else(|| panic!("no bench {case:?} on {subject:?}"));
                (b.name, *m, *lo, *hi)
            })
            .collect();
        let mut r = crate::compare::tests::record(&named);
        r.apply(crate::compare::tests::start(
            super::super::NAME,
            Default::default(),
        ));
        r
    }

    fn row<'a>(o: &'a Overview, case: Case, backend: &str) -> &'a Row {
        o.groups
            .iter()
            .flat_map(|g| g.rows.iter())
            .find(|r| r.case == case.name() && r.backend == backend)
            .unwrap_or_else(|| panic!("no row {case:?} on {backend}"))
    }

    #[test]
    fn every_target_the_suite_states_is_judged_on_the_interval() {
        use Case::*;
        use Subject::{Memory, Rusqlite};
        let o = overview(&run_of(&[
            // In memory, a single operation under 1 µs: below, straddling, above.
            (Delete, Memory, 900.0, [850.0, 950.0]),
            (Exists, Memory, 1000.0, [950.0, 1050.0]),
            (Get(Size::Small), Memory, 1200.0, [1100.0, 1300.0]),
            // The mixed workload at 500K ops/s or more: 2.5 µs an operation is 400K.
            (Mixed, Memory, 2500.0, [2400.0, 2600.0]),
            // A scan of 1000 keys under 100 µs; the smaller scans have no target.
            (PrefixScan(1000), Memory, 90e3, [85e3, 95e3]),
            (PrefixScan(100), Memory, 9e3, [8e3, 10e3]),
            // A put with a TTL under 2 µs (in memory; none on SQLite).
            (PutWithTtl, Memory, 2500.0, [2400.0, 2600.0]),
            (PutWithTtl, Rusqlite, 20e3, [19e3, 21e3]),
            // On SQLite every single operation under 100 µs, batches at 10K ops/s or more.
            (Delete, Rusqlite, 99e3, [98e3, 99.5e3]),
            (Exists, Rusqlite, 101e3, [100.5e3, 102e3]),
            (BulkGet, Rusqlite, 120e3, [110e3, 130e3]),
            (BulkPut, Rusqlite, 100e3, [90e3, 110e3]),
            (Mixed, Rusqlite, 50e3, [40e3, 60e3]),
            (ExpiredRead, Rusqlite, 2e3, [1.9e3, 2.1e3]),
            // Linear scaling: at least 0.8 x the readers against one reader.
            (ConcurrentReads(1), Rusqlite, 1000.0, [990.0, 1010.0]),
            (ConcurrentReads(2), Rusqlite, 600.0, [580.0, 620.0]),
            (ConcurrentReads(4), Rusqlite, 300.0, [300.0, 330.0]),
            (ConcurrentReads(8), Rusqlite, 500.0, [480.0, 520.0]),
        ]))
        .unwrap();
        let judged = |case: Case, backend: &str| {
            let r = row(&o, case, backend);
            (r.target.clone(), r.holds)
        };
        let t = |s: &str| Some(s.to_string());
        use Holds::*;
        assert_eq!(judged(Delete, "memory"), (t("< 1 µs per op"), Some(Pass)));
        assert_eq!(
            judged(Exists, "memory"),
            (t("< 1 µs per op"), Some(Undecided))
        );
        assert_eq!(
            judged(Get(Size::Small), "memory"),
            (t("< 1 µs per op"), Some(Fail))
        );
        assert_eq!(judged(Mixed, "memory"), (t(">= 500K ops/s"), Some(Fail)));
        assert_eq!(
            judged(PrefixScan(1000), "memory"),
            (t("< 100 µs per scan"), Some(Pass))
        );
        assert_eq!(judged(PrefixScan(100), "memory"), (None, None));
        assert_eq!(
            judged(PutWithTtl, "memory"),
            (t("< 2 µs per op"), Some(Fail))
        );
        assert_eq!(judged(PutWithTtl, "rusqlite"), (None, None));
        assert_eq!(
            judged(Delete, "rusqlite"),
            (t("< 100 µs per op"), Some(Pass))
        );
        assert_eq!(
            judged(Exists, "rusqlite"),
            (t("< 100 µs per op"), Some(Fail))
        );
        // 1e9 / [110, 130] µs is [7.7K, 9.1K] ops/s; 1e9 / [90, 110] µs straddles 10K.
        assert_eq!(judged(BulkGet, "rusqlite"), (t(">= 10K ops/s"), Some(Fail)));
        assert_eq!(
            judged(BulkPut, "rusqlite"),
            (t(">= 10K ops/s"), Some(Undecided))
        );
        assert_eq!(judged(Mixed, "rusqlite"), (None, None));
        assert_eq!(judged(ExpiredRead, "rusqlite"), (None, None));
        // One reader: 1000 ns. Two: 1000 / [580, 620] = [1.61, 1.72] >= 1.6. Four: 1000 /
        // [300, 330] = [3.03, 3.33] straddles 3.2. Eight: about 2x, far from 6.4.
        assert_eq!(judged(ConcurrentReads(1), "rusqlite"), (None, None));
        assert_eq!(
            judged(ConcurrentReads(2), "rusqlite"),
            (t("linear: >= 1.6x"), Some(Pass))
        );
        assert_eq!(
            judged(ConcurrentReads(4), "rusqlite"),
            (t("linear: >= 3.2x"), Some(Undecided))
        );
        assert_eq!(
            judged(ConcurrentReads(8), "rusqlite"),
            (t("linear: >= 6.4x"), Some(Fail))
        );
        let speedup = row(&o, ConcurrentReads(2), "rusqlite").speedup.unwrap();
        assert!((speedup - 1000.0 / 600.0).abs() < 1e-9, "{speedup}");

        // The summary counts them per backend and names the ones that do not hold.
        let lines = summary(&o);
        assert_eq!(
            lines[0],
            "memory: 2 of 6 targets hold; not: single_get_100b, mixed_workload, put_with_ttl; within the CI: single_exists"
        );
        assert_eq!(
            lines[1],
            "rusqlite: 2 of 7 targets hold; not: single_exists, bulk_get, concurrent_reads_8; within the CI: bulk_put, concurrent_reads_4"
        );
    }
}
