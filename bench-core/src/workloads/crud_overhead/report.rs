//! What a `crud_overhead` run says, as one model the explorer and every export read: each
//! operation per backend with its overhead against rusqlite, the overall overhead of the mix,
//! SELECT cached against SELECT, and the batch-insert sweep.

use std::collections::BTreeMap;

use serde::Serialize;

use super::plan::{BATCHES, Case, Op};
use crate::compare::{Ratio, ratio_of};
use crate::protocol::results::{BenchResult, RunRecord};

/// How heavy an overhead is: the explorer colours by it, the exports name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Band {
    Baseline,
    /// Under 2x rusqlite.
    Light,
    /// 2x to 5x.
    Heavy,
    /// 5x or more.
    Severe,
}

impl Band {
    pub fn of(ratio: f64) -> Band {
        if ratio < 2.0 {
            Band::Light
        } else if ratio < 5.0 {
            Band::Heavy
        } else {
            Band::Severe
        }
    }
}

/// One operation on one backend.
#[derive(Debug, Clone, Serialize)]
pub struct OpRow {
    pub bench: String,
    pub op: &'static str,
    pub backend: String,
    /// Operations of this kind in one pass.
    pub count: u64,
    pub median_ns: f64,
    pub ci95_ns: [f64; 2],
    pub p99_ns: Option<u64>,
    /// Against the same operation on rusqlite.
    pub overhead: Option<Ratio>,
    pub band: Option<Band>,
}

/// One backend across the batch sizes of the sweep.
#[derive(Debug, Clone, Serialize)]
pub struct SweepRow {
    pub backend: String,
    /// Per [`BATCHES`] size, then the prepared reference: time for all the sweep's rows (ns).
    pub time_ns: Vec<Option<f64>>,
    /// The same as rows/s.
    pub rows_per_s: Vec<Option<f64>>,
    /// Against batch 1 of the same backend.
    pub speedup: Vec<Option<f64>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Overview {
    /// Backends with a finished bench, in catalog order.
    pub backends: Vec<String>,
    pub ops: Vec<OpRow>,
    /// Per backend: the mix's time (count x median over begin, insert, update, delete, select,
    /// commit) against rusqlite's, with a conservative interval from the medians' CIs.
    pub overall: BTreeMap<String, Ratio>,
    /// Per backend: a fixed query's median against a SELECT of the mix.
    pub cached_vs_select: BTreeMap<String, Ratio>,
    /// Rows of the sweep (empty when no batch bench ran).
    pub sweep_rows: u64,
    pub sweep: Vec<SweepRow>,
}

/// The mix's operations, whose time makes the overall overhead.
const MIX: [Op; 6] = [
    Op::Begin,
    Op::Insert,
    Op::Update,
    Op::Delete,
    Op::Select,
    Op::Commit,
];

/// The overview of `run`, if it is a crud_overhead run.
pub fn overview(run: &RunRecord) -> Option<Overview> {
    let target = run.start.as_ref().map(|s| s.target.as_str())?;
    if target != super::NAME {
        return None;
    }
    let spec = super::spec();
    // Each finished bench with its case and backend, in catalog order.
    let mut done: Vec<(Case, String, &BenchResult)> = Vec::new();
    for b in &spec.benches {
        let (Some(case), Some(r)) = (super::case_of(b), run.bench(b.name)) else {
            continue;
        };
        if r.summary.is_some() {
            done.push((case, b.subject.slug(), r));
        }
    }
    let find = |case: Case, backend: &str| {
        done.iter()
            .find(|(c, be, _)| *c == case && be == backend)
            .map(|(_, _, r)| *r)
    };
    let mut backends: Vec<String> = Vec::new();
    for (_, be, _) in &done {
        if !backends.contains(be) {
            backends.push(be.clone());
        }
    }
    let ops = done
        .iter()
        .filter_map(|(case, backend, r)| {
            let Case::Op(op) = case else { return None };
            let s = r.summary.as_ref()?;
            let base = find(*case, "rusqlite");
            let is_base = backend == "rusqlite";
            let overhead = if is_base {
                None
            } else {
                base.and_then(|b| ratio_of(r, b))
            };
            Some(OpRow {
                bench: r.name.clone(),
                op: op.name(),
                backend: backend.clone(),
                count: r.ops,
                median_ns: s.median,
                ci95_ns: s.ci95_median,
                p99_ns: s.latency.map(|l| l.p99),
                band: if is_base {
                    Some(Band::Baseline)
                } else {
                    overhead.map(|o| Band::of(o.value))
                },
                overhead,
            })
        })
        .collect();
    let total = |backend: &str| -> Option<[f64; 3]> {
        let mut t = [0.0; 3];
        for op in MIX {
            let s = find(Case::Op(op), backend)?.summary.as_ref()?;
            let n = find(Case::Op(op), backend)?.ops as f64;
            t[0] += n * s.median;
            t[1] += n * s.ci95_median[0];
            t[2] += n * s.ci95_median[1];
        }
        Some(t)
    };
    let overall = backends
        .iter()
        .filter(|b| *b != "rusqlite")
        .filter_map(|b| {
            let (r, x) = total("rusqlite").zip(total(b))?;
            let ratio = Ratio {
                value: x[0] / r[0],
                err: (x[2] / r[1] - x[1] / r[2]) / 2.0,
                ci95: Some([x[1] / r[2], x[2] / r[1]]),
            };
            Some((b.clone(), ratio))
        })
        .collect();
    let cached_vs_select = backends
        .iter()
        .filter_map(|b| {
            let cached = find(Case::Op(Op::SelectCached), b)?;
            let select = find(Case::Op(Op::Select), b)?;
            Some((b.clone(), ratio_of(cached, select)?))
        })
        .collect();
    let sizes: Vec<Case> = BATCHES
        .iter()
        .map(|n| Case::Batch(*n))
        .chain([Case::Prepared])
        .collect();
    let mut sweep_rows = 0;
    let sweep = backends
        .iter()
        .filter_map(|b| {
            let cells: Vec<Option<&BenchResult>> = sizes.iter().map(|c| find(*c, b)).collect();
            if cells.iter().all(Option::is_none) {
                return None;
            }
            let time: Vec<Option<f64>> = cells
                .iter()
                .map(|r| {
                    let r = (*r)?;
                    sweep_rows = r.ops;
                    Some(r.summary.as_ref()?.median * r.ops as f64)
                })
                .collect();
            let one = time[0];
            Some(SweepRow {
                backend: b.clone(),
                rows_per_s: cells
                    .iter()
                    .map(|r| {
                        let s = (*r)?.summary.as_ref()?;
                        (s.median > 0.0).then(|| 1e9 / s.median)
                    })
                    .collect(),
                speedup: time.iter().map(|t| Some(one? / (*t)?)).collect(),
                time_ns: time,
            })
        })
        .collect();
    Some(Overview {
        backends,
        ops,
        overall,
        cached_vs_select,
        sweep_rows,
        sweep,
    })
}

/// The sweep's column names: the batch sizes, then the prepared reference.
pub fn sweep_columns() -> Vec<String> {
    BATCHES
        .iter()
        .map(|n| format!("{n} rows"))
        .chain(["prepared".to_string()])
        .collect()
}
