//! What a `crud_overhead` run says, as one model the explorer and every export read: each
//! operation per backend with its overhead against rusqlite, the overall overhead of the mix,
//! SELECT cached against SELECT, and the batch-insert sweep.

use std::collections::BTreeMap;

use serde::Serialize;

use super::plan::{BATCHES, Case, Op};
pub use crate::compare::Band;
use crate::compare::{Ratio, ratio_of};
use crate::format;
use crate::protocol::results::{BenchResult, RunRecord};
use crate::text::Text;

/// One operation on one backend.
#[derive(Debug, Clone, Serialize)]
pub struct OpRow {
    pub bench: crate::text::Text,
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
    /// Per backend: a fixed query prepared anew against the same from the statement cache
    /// (the CRUD suite's first run against its cached runs).
    pub first_vs_cached: BTreeMap<String, Ratio>,
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
    overview_by(run, ratio_of)
}

/// Each operation's overhead from the two medians' intervals alone, where only the bench lines
/// are wanted (they show the mix's overall ratio, not each operation's): a bootstrap per row
/// is what made a whole overview cost tens of milliseconds.
fn cheap_ratio(num: &BenchResult, den: &BenchResult) -> Option<Ratio> {
    crate::compare::ratio_of_medians(num.summary.as_ref()?, den.summary.as_ref()?)
}

/// The overview, with each operation's overhead against rusqlite's computed by `op_ratio`.
fn overview_by(
    run: &RunRecord,
    op_ratio: fn(&BenchResult, &BenchResult) -> Option<Ratio>,
) -> Option<Overview> {
    let target = run.start.as_ref().map(|s| s.target.raw())?;
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
                base.and_then(|b| op_ratio(r, b))
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
    let first_vs_cached = backends
        .iter()
        .filter_map(|b| {
            let first = find(Case::Op(Op::SelectFirst), b)?;
            let cached = find(Case::Op(Op::SelectCached), b)?;
            Some((b.clone(), ratio_of(first, cached)?))
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
        first_vs_cached,
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

/// crud_overhead's own views: the per-operation overhead table (rows banded by overhead), the
/// overall overhead of the mix with SELECT cached against SELECT, and the batch-insert sweep
/// as grids and bars.
pub struct CrudSections;

impl crate::sections::Sections for CrudSections {
    fn section(&self, run: &RunRecord) -> Option<crate::sections::Section> {
        let o = overview(run)?;
        let mut tables = Vec::new();
        if !o.ops.is_empty() {
            let (headers, rows, bands) = op_cells(&o);
            tables.push(crate::sections::Table {
                title: "Overhead per operation against rusqlite".into(),
                about: "Each operation of the seeded mix, timed alone on every backend, against \
                        the same operation on rusqlite (bands: under 2x, 2-5x, 5x and over)."
                    .into(),
                headers: crate::sections::texts(headers),
                rows: crate::sections::cells(rows),
                left: 2,
                bands,
            });
            let (headers, rows) = summary_cells(&o);
            if !rows.is_empty() {
                tables.push(crate::sections::Table {
                    title: "Overall".into(),
                    headers: crate::sections::texts(headers),
                    rows: crate::sections::cells(rows),
                    left: 1,
                    ..Default::default()
                });
            }
        }
        tables.extend(sweep_grids(&o));
        Some(crate::sections::Section {
            tables,
            bars: sweep_bars(&o).into_iter().collect(),
            ..Default::default()
        })
    }

    fn bench_lines(&self, run: &RunRecord) -> BTreeMap<Text, Text> {
        let Some(o) = overview_by(run, cheap_ratio) else {
            return Default::default();
        };
        run.benches
            .iter()
            .filter_map(|b| Some((b.name.clone(), bench_line(&o, &b.name)?.into())))
            .collect()
    }

    fn json(&self, run: &RunRecord) -> Option<Box<serde_json::value::RawValue>> {
        serde_json::value::to_raw_value(&overview(run)?).ok()
    }
}

/// For one bench: its backend's overall overhead on the mix and its SELECT cached against
/// SELECT.
fn bench_line(o: &Overview, bench: &Text) -> Option<String> {
    let backend = &o.ops.iter().find(|r| &r.bench == bench)?.backend;
    let mut parts = Vec::new();
    if let Some(r) = o.overall.get(backend) {
        parts.push(format!(
            "mix overall {} ({}) vs rusqlite",
            format::ratio(r),
            format::overhead_pct(r)
        ));
    }
    if let Some(r) = o.cached_vs_select.get(backend) {
        parts.push(format!("SELECT cached {} of SELECT", format::ratio(r)));
    }
    if let Some(r) = o.first_vs_cached.get(backend) {
        parts.push(format!("first run {} of cached", format::ratio(r)));
    }
    (!parts.is_empty()).then(|| format!("{backend}: {}", parts.join(" · ")))
}

fn band_label(b: Option<Band>) -> &'static str {
    match b {
        Some(Band::Baseline) => "baseline",
        Some(Band::Light) => "< 2x",
        Some(Band::Heavy) => "2-5x",
        Some(Band::Severe) => ">= 5x",
        None => "-",
    }
}

/// The per-operation table: headers, rows and each row's band.
fn op_cells(o: &Overview) -> (Vec<String>, Vec<Vec<String>>, Vec<Option<Band>>) {
    let headers = [
        "op",
        "backend",
        "count",
        "median/op",
        "95% CI (median)",
        "p99/op",
        "vs rusqlite (95% CI)",
        "overhead",
        "band",
    ]
    .map(String::from)
    .to_vec();
    let rows = o
        .ops
        .iter()
        .map(|r| {
            let (ratio, pct) = match (&r.overhead, r.band) {
                (_, Some(Band::Baseline)) => ("baseline".to_string(), "-".to_string()),
                (Some(x), _) => (format::ratio(x), format::overhead_pct(x)),
                (None, _) => ("-".into(), "-".into()),
            };
            vec![
                r.op.to_string(),
                r.backend.clone(),
                r.count.to_string(),
                format::ns(r.median_ns),
                format::ci(r.ci95_ns),
                r.p99_ns
                    .map(|p| format::ns(p as f64))
                    .unwrap_or_else(|| "-".into()),
                ratio,
                pct,
                band_label(r.band).to_string(),
            ]
        })
        .collect();
    (headers, rows, o.ops.iter().map(|r| r.band).collect())
}

/// Per backend: the overall overhead of the mix and SELECT cached against SELECT.
fn summary_cells(o: &Overview) -> (Vec<String>, Vec<Vec<String>>) {
    let headers = [
        "backend",
        "mix overall vs rusqlite",
        "overhead",
        "SELECT cached vs SELECT",
        "first run vs cached",
    ]
    .map(String::from)
    .to_vec();
    let dash = || "-".to_string();
    let rows = o
        .backends
        .iter()
        .map(|b| {
            let overall = o.overall.get(b);
            let cached = o.cached_vs_select.get(b);
            let first = o.first_vs_cached.get(b);
            vec![
                b.clone(),
                if b == "rusqlite" {
                    "baseline".into()
                } else {
                    overall.map(format::ratio).unwrap_or_else(dash)
                },
                overall.map(format::overhead_pct).unwrap_or_else(dash),
                cached.map(format::ratio).unwrap_or_else(dash),
                first.map(format::ratio).unwrap_or_else(dash),
            ]
        })
        .collect();
    (headers, rows)
}

/// The sweep as three grids: time for all rows, rows/s, speedup against batch 1.
fn sweep_grids(o: &Overview) -> Vec<crate::sections::Table> {
    if o.sweep.is_empty() {
        return Vec::new();
    }
    let mut headers = vec!["backend".to_string()];
    headers.extend(sweep_columns());
    let grid =
        |title: String, f: &dyn Fn(&SweepRow) -> Vec<Option<f64>>, show: fn(f64) -> String| {
            crate::sections::Table {
                title: format!("Batch-insert sweep: {title}"),
                headers: crate::sections::texts(headers.clone()),
                rows: o
                    .sweep
                    .iter()
                    .map(|r| {
                        let cells = f(r)
                            .into_iter()
                            .map(|v| v.map(show).unwrap_or_else(|| "-".into()));
                        std::iter::once(r.backend.clone().into())
                            .chain(cells.map(Text::from))
                            .collect()
                    })
                    .collect(),
                left: 1,
                ..Default::default()
            }
        };
    vec![
        grid(
            format!("time to insert {} rows", o.sweep_rows),
            &|r| r.time_ns.clone(),
            format::ns,
        ),
        grid("rows/s".into(), &|r| r.rows_per_s.clone(), format::ops),
        grid(
            "speedup against 1 row per INSERT".into(),
            &|r| r.speedup.clone(),
            format::ratio_short,
        ),
    ]
}

/// The sweep as bars: rows/s per batch size, one block per backend.
fn sweep_bars(o: &Overview) -> Option<crate::sections::Bars> {
    if o.sweep.is_empty() {
        return None;
    }
    Some(crate::sections::Bars {
        title: "Batch-insert sweep: rows/s by rows per INSERT statement".into(),
        points: BATCHES.iter().map(|b| b.to_string().into()).collect(),
        series: o
            .sweep
            .iter()
            .map(|r| {
                (
                    r.backend.clone().into(),
                    r.rows_per_s[..BATCHES.len()].to_vec(),
                )
            })
            .collect(),
    })
}
