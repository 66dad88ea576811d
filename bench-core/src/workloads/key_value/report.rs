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
