//! What a store's two backends (SQLite, PostgreSQL) share: the rows written and read, the
//! queries that read them, the schema check.

use bench_core::protocol::results::{BenchStatus, RunRecord};

use super::origin::{Code, Fingerprint, MachineId};

/// A run as it is written.
#[derive(Debug, Clone)]
pub struct NewRun<'a> {
    /// Unique in the store: a run recorded twice (an import read again) is kept once.
    pub key: String,
    pub recorded_at: String,
    pub machine: &'a MachineId,
    pub fingerprint: &'a Fingerprint,
    pub code: &'a Code,
    pub record: &'a RunRecord,
    /// The file an imported run came from.
    pub source: Option<String>,
}

impl NewRun<'_> {
    pub(super) fn target(&self) -> String {
        self.record
            .start
            .as_ref()
            .map(|s| s.target.raw().to_string())
            .unwrap_or_else(|| "?".into())
    }

    pub(super) fn knobs(&self) -> String {
        self.record
            .start
            .as_ref()
            .map(|s| serde_json::to_string(&s.knobs).expect("knobs serialize"))
            .unwrap_or_else(|| "{}".into())
    }

    /// The CPUs the run's runners were confined to, as a list (`0-1,3`); `None` on every CPU.
    pub(super) fn cpus(&self) -> Option<String> {
        self.record
            .starts()
            .find_map(|s| s.env.cpus.as_deref())
            .map(bench_core::units::cpu_list)
    }

    /// What idle CPUs did while the run measured (the protocol's `cpu_idle` state).
    pub(super) fn cpu_idle(&self) -> Option<&'static str> {
        use bench_core::protocol::CpuIdle;
        self.record
            .machine
            .as_ref()
            .and_then(|m| m.cpu_idle.as_ref())
            .map(|c| match c {
                CpuIdle::Slept => "slept",
                CpuIdle::Held => "held",
                CpuIdle::Unavailable { .. } => "unavailable",
            })
    }

    pub(super) fn build_profile(&self) -> String {
        self.record
            .start
            .as_ref()
            .map(|s| s.env.profile.raw().to_string())
            .unwrap_or_default()
    }

    pub(super) fn json(&self) -> String {
        serde_json::to_string(self.record).expect("a run record serializes")
    }

    /// Each bench as a row: name, status, median, CI of the median, samples.
    pub(super) fn benches(&self) -> Vec<BenchRow> {
        self.record
            .benches
            .iter()
            .map(|b| BenchRow {
                bench: b.name.raw().to_string(),
                status: match b.status() {
                    BenchStatus::Finished => "finished",
                    BenchStatus::Failed => "failed",
                    BenchStatus::Skipped => "skipped",
                    BenchStatus::Running => "unfinished",
                },
                median: b.summary.as_ref().map(|s| s.median),
                ci: b.summary.as_ref().map(|s| s.ci95_median),
                samples: b.samples.len() as i32,
                allocs: b
                    .summary
                    .as_ref()
                    .and_then(|s| Some(s.memory?.allocs_per_op)),
            })
            .collect()
    }
}

pub(super) struct BenchRow {
    pub(super) bench: String,
    pub(super) status: &'static str,
    pub(super) median: Option<f64>,
    pub(super) ci: Option<[f64; 2]>,
    pub(super) samples: i32,
    pub(super) allocs: Option<f64>,
}

/// Which points `history` reads.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub target: Option<String>,
    pub benches: Vec<String>,
    /// A machine's name or identity.
    pub machine: Option<String>,
    /// Runs recorded at or after this time (RFC 3339, or a date: 2026-11-01).
    pub since: Option<String>,
}

/// One finished bench of one run, as history reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub run: i64,
    pub recorded_at: String,
    pub machine_id: String,
    pub machine_name: String,
    pub cpu: String,
    pub cores: i64,
    pub kernel: String,
    pub commit: Option<String>,
    pub dirty: Option<bool>,
    pub label: Option<String>,
    pub target: String,
    pub knobs: String,
    /// "release" or "debug".
    pub build_profile: String,
    /// What idle CPUs did while the run measured (`slept`, `held`, `unavailable`); `None`
    /// for runs recorded before it was kept (their CPUs slept).
    pub cpu_idle: Option<String>,
    /// The CPUs the run's runners were confined to (`0-1,3`); `None` on every CPU.
    pub cpus: Option<String>,
    pub bench: String,
    pub median: f64,
    pub ci: [f64; 2],
    /// Allocations per operation, where the run's runner counted them.
    pub allocs: Option<f64>,
}

/// What a read of the store gave: the rows that read as figures, and a line for each that did
/// not. A store many machines write is input from others: a row of the wrong type, or a
/// figure that cannot be a time (negative, infinite, absurd), is left out and named rather
/// than failing the read for everyone.
#[derive(Debug, Clone, PartialEq)]
pub struct Read<T> {
    pub rows: Vec<T>,
    pub skipped: Vec<String>,
}

impl<T> Read<T> {
    /// A read where `results` are the rows as they came: the ones that read are kept.
    pub fn of(results: impl IntoIterator<Item = Result<T, String>>) -> Read<T> {
        let mut r = Read {
            rows: Vec::new(),
            skipped: Vec::new(),
        };
        for x in results {
            match x {
                Ok(v) => r.rows.push(v),
                Err(e) => r.skipped.push(e),
            }
        }
        r
    }

    /// One line saying what was left out (the first three named), or `None`.
    pub fn note(&self) -> Option<String> {
        let n = self.skipped.len();
        (n > 0).then(|| {
            let shown: Vec<&str> = self.skipped.iter().take(3).map(String::as_str).collect();
            format!(
                "{n} row{} of the results store did not read and {} left out: {}{}",
                if n == 1 { "" } else { "s" },
                if n == 1 { "was" } else { "were" },
                shown.join("; "),
                if n > 3 { "; ..." } else { "" }
            )
        })
    }
}

impl Point {
    /// The point, if its figures can be times: the median, and the interval's ends where it
    /// has them.
    pub fn checked(self) -> Result<Point, String> {
        use bench_core::protocol::results::plausible_ns;
        let ci_ok = self.ci.iter().all(|v| v.is_nan() || plausible_ns(*v));
        if let Some(a) = self.allocs.filter(|a| !(a.is_finite() && *a >= 0.0)) {
            return Err(format!(
                "run {} bench {:?}: allocations per operation {a} (allowed: a finite count >= 0)",
                self.run, self.bench
            ));
        }
        if plausible_ns(self.median) && ci_ok {
            Ok(self)
        } else {
            Err(format!(
                "run {} bench {:?}: median {} [{}, {}] (allowed: finite times in ns above 0)",
                self.run, self.bench, self.median, self.ci[0], self.ci[1]
            ))
        }
    }
}

/// Refuses a store whose schema is newer than this build's migrations (`found`, from its
/// refinery_schema_history; `known`, the newest migration embedded here): a newer benchscope
/// wrote it, and this one would misread it.
pub fn check_schema(found: Option<i64>, known: i64) -> Result<(), String> {
    match found {
        Some(v) if v > known => Err(format!(
            "written by a newer benchscope (schema version {v}; this one reads up to {known}): \
             read it with that benchscope or a newer one, or give another --store"
        )),
        _ => Ok(()),
    }
}

/// A run's record as the store holds it (JSON), read and its figures checked.
pub(super) fn record_of(id: i64, text: &str) -> Result<RunRecord, String> {
    let r: RunRecord = serde_json::from_str(text)
        .map_err(|e| format!("run {id}: its record does not read: {e}"))?;
    r.check_figures().map_err(|e| format!("run {id}: {e}"))?;
    Ok(r)
}

/// What a store holds, for `store info`.
#[derive(Debug, Clone, PartialEq)]
pub struct Info {
    pub schema_version: i64,
    pub runs: i64,
    pub machines: i64,
    pub benches: i64,
}

/// The columns `points` reads, in `Point`'s order.
const POINT_COLUMNS: &str = "r.id, r.recorded_at, r.machine_id, r.machine_name, r.cpu, r.cores, \
     r.kernel, r.commit_sha, r.dirty, r.label, r.target, r.knobs, r.build_profile, r.cpu_idle, \
     r.cpus, b.bench, b.median_ns, b.ci_low_ns, b.ci_high_ns, b.allocs_per_op";

/// ` AND ...` for each filter of `f` (benches too when `benches`), with placeholders made by
/// `ph(i)` (1-based), and the values in order.
pub(super) fn conditions(
    f: &Filter,
    benches: bool,
    ph: &impl Fn(usize) -> String,
) -> (String, Vec<String>) {
    let mut args: Vec<String> = Vec::new();
    // Each condition names its value `?`, numbered in turn.
    let mut conds: Vec<(String, Vec<String>)> = Vec::new();
    if let Some(t) = &f.target {
        conds.push(("r.target = ?".into(), vec![t.clone()]));
    }
    if let Some(m) = &f.machine {
        conds.push((
            "(r.machine_name = ? OR r.machine_id = ?)".into(),
            vec![m.clone(), m.clone()],
        ));
    }
    if let Some(s) = &f.since {
        conds.push(("r.recorded_at >= ?".into(), vec![s.clone()]));
    }
    if benches && !f.benches.is_empty() {
        let list = vec!["?"; f.benches.len()].join(", ");
        conds.push((format!("b.bench IN ({list})"), f.benches.clone()));
    }
    let mut sql = String::new();
    for (clause, values) in conds {
        sql.push_str(" AND ");
        for (i, piece) in clause.split('?').enumerate() {
            if i > 0 {
                sql.push_str(&ph(args.len() + 1));
                args.push(values[i - 1].clone());
            }
            sql.push_str(piece);
        }
    }
    (sql, args)
}

/// The query of `points`, and its values.
pub(super) fn points_query(f: &Filter, ph: impl Fn(usize) -> String) -> (String, Vec<String>) {
    let (cond, args) = conditions(f, true, &ph);
    (
        format!(
            "SELECT {POINT_COLUMNS} FROM runs r JOIN bench_results b ON b.run_id = r.id \
             WHERE b.status = 'finished' AND b.median_ns IS NOT NULL AND NOT r.profiled{cond} \
             ORDER BY r.recorded_at, r.id, b.bench"
        ),
        args,
    )
}

/// The query of the runs not profiled, newest first (id, target, machine, record): the newest
/// of each target on each machine that reads is taken from it ([`Store::latest`]).
pub(super) fn latest_query(f: &Filter, ph: impl Fn(usize) -> String) -> (String, Vec<String>) {
    let (cond, args) = conditions(f, false, &ph);
    (
        format!(
            "SELECT r.id, r.target, r.machine_id, r.record FROM runs r \
             WHERE NOT r.profiled{cond} ORDER BY r.id DESC"
        ),
        args,
    )
}

/// A run as [`latest_query`] reads it.
pub struct LatestRow {
    pub id: i64,
    pub target: String,
    pub machine: String,
    pub record: String,
}
