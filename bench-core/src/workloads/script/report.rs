//! The script target's own views: each bench's transactions (rate, latency percentiles, busy
//! errors, rows compared), every statement's mean latency per bench (pgbench's `-r` table),
//! and the database the run copied, with its checksum.

use crate::text::Text;
use std::collections::BTreeMap;

use crate::format::ops;
use crate::protocol::results::{BenchResult, RunRecord};
use crate::script::report::{RowsCheck, ScriptReport};
use crate::sections::{Section, Sections, Table};
use crate::units::ns;

/// The script target's sections.
#[derive(Debug)]
pub struct ScriptSections;

/// Each bench's report, its rows check across runners resolved (see
/// [`crate::script::report::cross_check`]).
fn reports(run: &RunRecord) -> Vec<(&BenchResult, ScriptReport)> {
    let found: Vec<(&BenchResult, &ScriptReport)> = run
        .benches
        .iter()
        .filter_map(|b| Some((b, b.script.as_ref()?)))
        .collect();
    let named: Vec<(&str, &ScriptReport)> = found.iter().map(|(b, r)| (b.name.raw(), *r)).collect();
    let checks = crate::script::report::cross_check(&named);
    found
        .into_iter()
        .zip(checks)
        .map(|((b, r), rows)| (b, ScriptReport { rows, ..r.clone() }))
        .collect()
}

enum Per {
    Transaction,
    Statement,
}

/// A script bench's allocations per transaction (its operation) or per statement it ran
/// (the transaction's over the statements a transaction ran on average), `-` where they
/// were not counted.
fn allocs_per(s: Option<&crate::measure::stats::Summary>, r: &ScriptReport, per: Per) -> String {
    let Some(m) = s.and_then(|s| s.memory) else {
        return "-".into();
    };
    let statements: u64 = r.statements.iter().map(|st| st.count).sum();
    match per {
        Per::Transaction => crate::format::count(m.allocs_per_op),
        Per::Statement if statements > 0 && r.transactions > 0 => {
            crate::format::count(m.allocs_per_op * r.transactions as f64 / statements as f64)
        }
        Per::Statement => "-".into(),
    }
}

/// How a bench's rows compared, in a few words.
pub fn rows_word(r: &RowsCheck) -> String {
    match r {
        RowsCheck::Reference { transactions } => {
            format!("reference ({transactions} transactions kept)")
        }
        RowsCheck::Same {
            against,
            transactions,
        } => format!("same as {against} ({transactions} transactions)"),
        RowsCheck::Differ { against, .. } => format!("DIFFER from {against}"),
        RowsCheck::NotCompared { .. } => "not compared".into(),
    }
}

fn transactions_table(rs: &[(&BenchResult, ScriptReport)]) -> Table {
    let rows = rs
        .iter()
        .map(|(b, r)| {
            let s = b.summary.as_ref();
            let lat = s.and_then(|s| s.latency.as_ref());
            let p = |f: fn(&crate::measure::stats::Percentiles) -> u64| {
                lat.map_or("-".into(), |l| ns(f(l) as f64))
            };
            vec![
                b.name.raw().to_string(),
                r.clients.to_string(),
                // What got through: a sample's rate counts given-up transactions too.
                s.map_or("-".into(), |s| {
                    let through = r.transactions as f64 / (r.transactions + r.failed).max(1) as f64;
                    ops(1e9 / s.median * through)
                }),
                p(|l| l.p50),
                p(|l| l.p99),
                p(|l| l.max),
                r.transactions.to_string(),
                r.busy.to_string(),
                r.retries.to_string(),
                r.failed.to_string(),
                rows_word(&r.rows),
                allocs_per(s, r, Per::Transaction),
                allocs_per(s, r, Per::Statement),
            ]
        })
        .collect();
    Table {
        title: "Transactions".into(),
        about: "transactions/s that got through, from the median sample; latency percentiles of single transactions (hdrhistogram over the timed samples); busy: SQLITE_BUSY or SQLITE_LOCKED met, each retried or given up as on_busy says; allocs: allocations per transaction over the samples, and per statement run (a transaction's over the statements a transaction ran on average), where the runner counted them".into(),
        headers: [
            "bench",
            "clients",
            "tx/s",
            "p50",
            "p99",
            "max",
            "transactions",
            "busy",
            "retried",
            "given up",
            "rows",
            "allocs/tx",
            "allocs/stmt",
        ]
        .map(Text::from)
        .to_vec(),
        rows: crate::sections::cells(rows),
        left: 1,
        ..Default::default()
    }
}

/// pgbench's `-r`: each statement's mean latency, one column per bench.
fn statements_table(rs: &[(&BenchResult, ScriptReport)]) -> Option<Table> {
    let (_, first) = rs.first()?;
    let mut headers = vec![Text::from("statement"), Text::from("sql")];
    headers.extend(rs.iter().map(|(b, _)| b.name.clone()));
    let rows = first
        .statements
        .iter()
        .map(|st| {
            let mut row = vec![st.at.clone(), crate::format::fit(&st.text, 48)];
            for (_, r) in rs {
                let cell = r
                    .statements
                    .iter()
                    .find(|s| s.index == st.index)
                    .filter(|s| s.count > 0)
                    .map_or("-".into(), |s| ns(s.mean_ns));
                row.push(cell);
            }
            row
        })
        .chain(std::iter::once({
            let mut row = vec![
                "outside".to_string(),
                "checkout, return, \\sleep, between statements".to_string(),
            ];
            row.extend(
                rs.iter()
                    .map(|(_, r)| r.outside_statements_ns().map_or("-".into(), ns)),
            );
            row
        }))
        .collect();
    Some(Table {
        title: "Statements".into(),
        about: "mean latency of each statement as the client saw it (the dispatch included), over every transaction that got through; outside: a transaction's mean latency less its statements'".into(),
        headers,
        rows: crate::sections::cells(rows),
        left: 2,
        ..Default::default()
    })
}

fn notes(rs: &[(&BenchResult, ScriptReport)]) -> Vec<Text> {
    let mut out = Vec::new();
    if let Some((_, r)) = rs.first() {
        out.push(crate::text!(
            "database {} (sha256 {}): the run used a copy; the original was not written",
            r.db,
            r.db_sha256
        ));
    }
    for (b, r) in rs {
        if r.failed > 0 {
            out.push(crate::text!(
                "{}: {} of {} transactions given up after SQLITE_BUSY (on_busy=fail); its rate in the comparison counts them, the tx/s above does not",
                b.name.raw(),
                r.failed,
                r.transactions + r.failed
            ));
        }
        match &r.rows {
            RowsCheck::Differ { first, .. } => out.push(crate::text!("{}: {first}", b.name.raw())),
            RowsCheck::NotCompared { reason } => out.push(crate::text!(
                "{}: rows not compared: {reason}",
                b.name.raw()
            )),
            _ => {}
        }
    }
    out
}

impl Sections for ScriptSections {
    fn section(&self, run: &RunRecord) -> Option<Section> {
        let rs = reports(run);
        if rs.is_empty() {
            return None;
        }
        let mut tables = vec![transactions_table(&rs)];
        tables.extend(statements_table(&rs));
        Some(Section {
            tables,
            notes_title: "Database and rows".into(),
            notes: notes(&rs),
            ..Default::default()
        })
    }

    fn bench_lines(&self, run: &RunRecord) -> BTreeMap<Text, Text> {
        reports(run)
            .into_iter()
            .map(|(b, r)| {
                (
                    b.name.clone(),
                    crate::text!(
                        "{} transactions, {} busy ({} retried, {} given up); rows {}",
                        r.transactions,
                        r.busy,
                        r.retries,
                        r.failed,
                        rows_word(&r.rows)
                    ),
                )
            })
            .collect()
    }

    fn json(&self, run: &RunRecord) -> Option<Box<serde_json::value::RawValue>> {
        let rs = reports(run);
        if rs.is_empty() {
            return None;
        }
        let m: BTreeMap<&str, &ScriptReport> = rs.iter().map(|(b, r)| (b.name.raw(), r)).collect();
        serde_json::value::to_raw_value(&m).ok()
    }
}
