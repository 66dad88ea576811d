//! key_value runs: each group's table per backend, with the suite's targets as pass / fail.

use std::fmt::Write;

use bench_core::workloads::key_value::report::{GroupTable, Holds, Overview};

use crate::format;

fn verdict(holds: Option<Holds>) -> &'static str {
    match holds {
        Some(Holds::Pass) => "pass",
        Some(Holds::Fail) => "FAIL",
        Some(Holds::Undecided) => "within CI",
        None => "-",
    }
}

/// One group's table: headers and rows.
pub fn group_cells(g: &GroupTable) -> (Vec<String>, Vec<Vec<String>>) {
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
                format::ns(r.median_ns),
                format::ci(r.ci95_ns),
                r.p99_ns
                    .map(|p| format::ns(p as f64))
                    .unwrap_or_else(|| "-".into()),
                format::ops(r.ops_per_s),
                r.speedup
                    .map(format::ratio_short)
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

pub fn text(o: &Overview) -> String {
    let mut out = String::new();
    for g in &o.groups {
        let _ = writeln!(out, "\n{}", g.group);
        let (h, rows) = group_cells(g);
        out.push_str(&super::layout::align(&h, &rows, 2));
    }
    let _ = writeln!(out, "\nsuite targets");
    for line in summary(o) {
        let _ = writeln!(out, "  {line}");
    }
    out
}

pub fn markdown(o: &Overview) -> String {
    let mut out = String::new();
    for g in &o.groups {
        let _ = writeln!(out, "\n#### {}\n", g.group);
        let (h, rows) = group_cells(g);
        super::layout::md_table(&mut out, &h, &rows, 2);
    }
    let _ = writeln!(out, "\n#### Suite targets\n");
    for line in summary(o) {
        let _ = writeln!(out, "- {line}");
    }
    out
}
