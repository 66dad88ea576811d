//! What a script bench reports beside its summary: transactions finished and lost, busy
//! errors, every statement's latency (pgbench's `-r` table) and whether its rows matched the
//! other backends'.

use serde::{Deserialize, Serialize};

use crate::measure::stats::{CompactLatency, Percentiles};

/// One statement's figures over a bench.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatementStat {
    /// The statement's number across the mix (file order).
    pub index: usize,
    /// `file:line` where it starts.
    pub at: String,
    pub text: String,
    /// Times it ran (warm-up included).
    pub count: u64,
    pub mean_ns: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<Percentiles>,
    /// Rows it returned in all.
    pub rows: u64,
}

/// Whether a bench's rows matched another backend's for the same seed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum RowsCheck {
    /// The first bench of the run: the others are compared with it.
    Reference { transactions: u64 },
    /// Every transaction compared returned what `against`'s did.
    Same { against: String, transactions: u64 },
    /// The first transaction whose results differ, described.
    Differ { against: String, first: String },
    /// Why no comparison was made.
    NotCompared { reason: String },
}

/// A script bench's report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScriptReport {
    pub clients: u64,
    /// Transactions finished (warm-up included).
    pub transactions: u64,
    /// Their mean latency, ns.
    #[serde(default)]
    pub tx_mean_ns: f64,
    /// Transactions given up after a busy or locked error (`on_busy=fail`).
    pub failed: u64,
    /// Busy or locked errors met.
    pub busy: u64,
    /// Transactions run again after one (`on_busy=retry`).
    pub retries: u64,
    pub statements: Vec<StatementStat>,
    pub rows: RowsCheck,
    /// The user's database (the run used a copy).
    pub db: String,
    /// Its SHA-256 when the run started.
    pub db_sha256: String,
    /// What the kept results hash to, to compare benches that ran in different runners
    /// (a harness's with the core's): see [`cross_check`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept: Option<KeptRows>,
}

/// A bench's kept results as one number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeptRows {
    /// Transactions kept, per client.
    pub per_client: Vec<u64>,
    /// XXH3 of every kept transaction's results (each statement's index, digest, rows and
    /// rows changed), client by client, in hex.
    pub xxh3: String,
    /// The same over each client's first n transactions, for n = 1, 2, 5, 10, 20, ... 1000
    /// as far as every client kept that many: two benches that kept different counts are
    /// compared on the longest prefix both have.
    #[serde(default)]
    pub prefixes: Vec<(u64, String)>,
}

/// Each bench's rows check as a run's views show it: a bench that was its runner's reference
/// but not the run's (a harness runs its own benches) is compared with the run's reference
/// by the hash of their kept results. The first transaction that differs is named only
/// within one runner; across runners, that they differ.
pub fn cross_check(reports: &[(&str, &ScriptReport)]) -> Vec<RowsCheck> {
    let first = reports
        .iter()
        .find(|(_, r)| matches!(r.rows, RowsCheck::Reference { .. }));
    reports
        .iter()
        .map(|(name, r)| match (&r.rows, first) {
            (RowsCheck::Reference { .. }, Some((against, reference))) if against != name => {
                match (&r.kept, &reference.kept) {
                    (Some(mine), Some(theirs)) => compare_kept(against, mine, theirs),
                    _ => r.rows.clone(),
                }
            }
            _ => r.rows.clone(),
        })
        .collect()
}

/// Mixes of more statements than this keep each statement's count, mean and rows, but not
/// the distribution of its latencies (a few KB per statement and bench, which every bench
/// of a paired run holds at once): a 10,000-statement mix stays within 200 MB.
pub const PERCENTILES_UP_TO: usize = 1000;

/// One statement's running figures in one client.
#[derive(Default)]
pub struct StatementAcc {
    pub hist: CompactLatency,
    pub sum_ns: u64,
    pub count: u64,
    pub rows: u64,
}

impl StatementAcc {
    /// The figures of one statement of a mix of `statements`.
    pub fn for_mix(statements: usize) -> Self {
        StatementAcc {
            hist: if statements > PERCENTILES_UP_TO {
                CompactLatency::off()
            } else {
                CompactLatency::default()
            },
            ..StatementAcc::default()
        }
    }

    pub fn record(&mut self, ns: u64, rows: u64) {
        self.hist.record(ns);
        self.sum_ns += ns;
        self.count += 1;
        self.rows += rows;
    }

    pub fn add(&mut self, o: &StatementAcc) {
        self.hist.add(&o.hist);
        self.sum_ns += o.sum_ns;
        self.count += o.count;
        self.rows += o.rows;
    }
}

/// The statements' table, each statement's figures from `acc` (its index to its figures,
/// merged over the clients one statement at a time: no second copy of every statement's).
pub fn statements(
    mix: &super::model::Mix,
    acc: impl Fn(usize) -> StatementAcc,
) -> Vec<StatementStat> {
    mix.scripts
        .iter()
        .flat_map(|script| script.statements().map(move |s| (script, s)))
        .map(|(script, s)| {
            let a = &acc(s.index);
            StatementStat {
                index: s.index,
                at: format!("{}:{}", script.name, s.at.line),
                text: s.text.clone(),
                count: a.count,
                mean_ns: if a.count == 0 {
                    0.0
                } else {
                    a.sum_ns as f64 / a.count as f64
                },
                latency: a.hist.percentiles(),
                rows: a.rows,
            }
        })
        .collect()
}

impl ScriptReport {
    /// What a transaction spent outside its statements, on average: the checkout and the
    /// connection's return, `\sleep`s, the loop between statements.
    pub fn outside_statements_ns(&self) -> Option<f64> {
        if self.transactions == 0 {
            return None;
        }
        let inside: f64 = self
            .statements
            .iter()
            .map(|s| s.mean_ns * s.count as f64)
            .sum::<f64>()
            / self.transactions as f64;
        Some((self.tx_mean_ns - inside).max(0.0))
    }
}

/// Two benches' kept results compared: all of them when both kept as many, else the longest
/// prefix both hashed.
fn compare_kept(against: &str, mine: &KeptRows, theirs: &KeptRows) -> RowsCheck {
    let clients = mine.per_client.len() as u64;
    let (transactions, same) = if mine.per_client == theirs.per_client {
        (mine.per_client.iter().sum(), mine.xxh3 == theirs.xxh3)
    } else {
        let common = mine.prefixes.iter().rev().find_map(|(n, h)| {
            let theirs = theirs.prefixes.iter().find(|(m, _)| m == n)?;
            Some((*n, *h == theirs.1))
        });
        match common {
            Some((n, same)) if mine.per_client.len() == theirs.per_client.len() => {
                (n * clients, same)
            }
            _ => {
                return RowsCheck::NotCompared {
                    reason: format!(
                        "it kept {:?} transactions per client, {against} {:?}: run at least as many in both",
                        mine.per_client, theirs.per_client
                    ),
                };
            }
        }
    };
    if same {
        RowsCheck::Same {
            against: against.to_string(),
            transactions,
        }
    } else {
        RowsCheck::Differ {
            against: against.to_string(),
            first: format!(
                "the rows of its first {transactions} transactions hash differently from {against}'s (it ran in another runner; the first difference is named when both run in one)"
            ),
        }
    }
}
