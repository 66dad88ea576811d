//! What a `key_value` run says, as one model the explorer and every export read: each group's
//! benches per backend, and the suite's targets judged pass or fail where it sets one.

use serde::Serialize;

use super::plan::{Case, Group, Target, target};
use crate::catalog::Subject;
use crate::protocol::results::{BenchResult, RunRecord};

#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub bench: String,
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
        Target::Under(ns) => format!("< {} per op", fmt_ns(ns)),
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
                    headers,
                    rows,
                    left: 2,
                    ..Default::default()
                }
            })
            .collect();
        Some(crate::sections::Section {
            tables,
            notes_title: "Suite targets".into(),
            notes: summary(&o),
            ..Default::default()
        })
    }

    fn bench_lines(&self, run: &RunRecord) -> std::collections::BTreeMap<String, String> {
        let Some(o) = overview(run) else {
            return Default::default();
        };
        run.benches
            .iter()
            .filter_map(|b| Some((b.name.clone(), bench_line(&o, &b.name)?)))
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
