//! Saved baselines: the runs of a `benchscope run` (repeats and sweeps included) kept as a
//! named JSON file, and the comparison of later runs against them with a verdict per bench a
//! CI job can gate on.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use bench_core::compare::{Settings, Verdict, groups, judge, judge_rounds, setup_differences};
use bench_core::protocol::results::{BenchResult, RunRecord};
use bench_core::text::Text;
use serde::{Deserialize, Serialize};

use crate::format;

pub const SCHEMA: &str = "benchscope.baseline";
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Baseline {
    pub schema: String,
    pub schema_version: u32,
    pub name: bench_core::text::Text,
    pub saved_at: String,
    pub runs: Vec<RunRecord>,
}

/// How verdicts are made and where baselines are, for `run` and `compare`.
#[derive(Debug, Clone, clap::Args)]
pub struct VerdictArgs {
    /// Folder of saved baselines (default: `baselines` in the dataset cache folder).
    #[arg(long, value_name = "DIR")]
    pub baseline_dir: Option<PathBuf>,
    /// Changes up to this many percent are within noise, whatever the tests say.
    #[arg(long, value_name = "PCT", default_value = "2")]
    pub noise: String,
    /// Significance level of the tests behind a verdict, two-sided, and the level of the
    /// interval shown with it: 0.01 (a 99% interval; A/A runs called regressed 4 times in 20 at
    /// 0.05 on these machines) or 0.05 (Criterion's, a 95% interval); `1%` and `5%` also read.
    #[arg(long, value_name = "ALPHA", default_value = "0.01")]
    pub significance: String,
}

impl VerdictArgs {
    pub fn settings(&self) -> Result<Settings, String> {
        let t = self.noise.trim().trim_end_matches('%');
        let noise = match t.parse::<f64>() {
            Ok(p) if (0.0..=50.0).contains(&p) => p / 100.0,
            _ => {
                return Err(format!(
                    "invalid value {:?} for --noise: expected a percentage (allowed: 0 to 50, e.g. 2 or 2%)",
                    self.noise
                ));
            }
        };
        Ok(Settings {
            noise,
            alpha: significance(&self.significance)?,
            ..Settings::default()
        })
    }

    pub fn dir(&self, cache_dir: &Path) -> PathBuf {
        dir(self.baseline_dir.as_deref(), cache_dir)
    }
}

/// The level `--significance` names: the two the t quantiles behind a verdict are known at.
fn significance(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let value = match t.strip_suffix('%') {
        Some(pct) => pct.trim().parse::<f64>().map(|p| p / 100.0),
        None => t.parse::<f64>(),
    };
    // Exactly: "1%" is 1/100, which rounds to the same double as 0.01 (and 5/100 to 0.05).
    match value {
        Ok(a @ (0.01 | 0.05)) => Ok(a),
        _ => Err(format!(
            "invalid value {text:?} for --significance: expected 0.01 or 0.05 (or 1% or 5%): the levels the verdicts' t quantiles are known at"
        )),
    }
}

/// `benchscope compare BASELINE [CURRENT]`.
#[derive(Debug, Clone, clap::Args)]
pub struct CompareArgs {
    /// The baseline: a saved name, a baseline or report JSON file, or a Criterion folder
    /// (`target/criterion`: its latest results; `target/criterion@NAME`: its result set NAME,
    /// `base` or a baseline saved with `--save-baseline NAME`).
    pub baseline: String,
    /// What to judge against it, read as the baseline is (a fresh run: `benchscope run ...
    /// --baseline NAME`). A Criterion folder's own change is shown beside the verdicts.
    pub current: String,
    #[command(flatten)]
    pub verdicts: VerdictArgs,
    /// Dataset cache folder, where the baselines folder is by default.
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
}

/// Runs `compare`: 0 when nothing regressed, 3 when something did, 2 on bad input.
pub fn run(args: CompareArgs) -> i32 {
    let settings = match args.verdicts.settings() {
        Ok(s) => s,
        Err(e) => {
            crate::out::say!("error: {e}");
            return 2;
        }
    };
    let cache = args
        .cache_dir
        .clone()
        .unwrap_or_else(bench_core::dataset::default_cache_dir);
    let dir = args.verdicts.dir(&cache);
    let current = load_with_changes(&dir, &args.current);
    let (base, (cur, changes)) = match (load(&dir, &args.baseline), current) {
        (Ok(b), Ok(c)) => (b, c),
        (Err(e), _) | (_, Err(e)) => {
            crate::out::say!("error: {e}");
            return 2;
        }
    };
    let rows = compare(&base.runs, &cur.runs, &settings);
    if rows.is_empty() {
        crate::out::say!(
            "error: nothing to compare: {} and {} have no bench of a target in common",
            base.name.terminal(),
            cur.name.terminal()
        );
        return 2;
    }
    crate::out::print(&report(&base.name, &rows, &changes, &settings));
    if any_regressed(&rows) { 3 } else { 0 }
}

/// What `compare` prints: the verdicts against the baseline, then Criterion's own reading of
/// the change, beside benchscope's, when the current side is a Criterion folder's latest
/// results.
fn report(base: &Text, rows: &[Row], changes: &[Text], settings: &Settings) -> String {
    let mut out = text(
        &format!("against baseline {}", base.terminal()),
        rows,
        settings,
    );
    if !changes.is_empty() {
        out.push_str("\nCriterion's own change, from its folder:\n");
        for l in changes {
            out.push_str(&format!("  {}\n", l.terminal()));
        }
    }
    out
}

/// The baselines folder: `--baseline-dir`, else `baselines` in the dataset cache folder.
pub fn dir(baseline_dir: Option<&Path>, cache_dir: &Path) -> PathBuf {
    baseline_dir
        .map(Path::to_path_buf)
        .unwrap_or_else(|| cache_dir.join("baselines"))
}

/// A name is a file name: letters, digits, `.`, `_` and `-`, not starting with a dot.
pub fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "invalid baseline name {name:?}: use up to 64 letters, digits, '.', '_' or '-', not starting with '.'"
        ))
    }
}

pub fn path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.json"))
}

/// Saves `runs` as baseline `name` (replacing one of that name), atomically.
pub fn save(dir: &Path, name: &str, runs: &[RunRecord], saved_at: &str) -> Result<PathBuf, String> {
    check_name(name)?;
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let b = Baseline {
        schema: SCHEMA.into(),
        schema_version: SCHEMA_VERSION,
        name: name.into(),
        saved_at: saved_at.into(),
        runs: runs.to_vec(),
    };
    let p = path(dir, name);
    let text = bench_core::text::json::pretty(&b);
    crate::files::write_atomic(&p, &text)?;
    Ok(p)
}

/// The names of the baselines in `dir`.
pub fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = bench_core::opener::list(dir)
        .into_iter()
        .flatten()
        .filter_map(|n| {
            let p = dir.join(n);
            if p.extension()? != "json" {
                return None;
            }
            Some(p.file_stem()?.to_string_lossy().into_owned())
        })
        .collect();
    v.sort();
    v
}

/// Loads a baseline by name from `dir`, or from a file: a baseline, or a report written by
/// `run --format json` or the explorer's export (its runs are taken as they are).
pub fn load(dir: &Path, what: &str) -> Result<Baseline, String> {
    load_with_changes(dir, what).map(|(b, _)| b)
}

/// [`load`], and for a Criterion folder's latest results Criterion's own change of each
/// benchmark, in words (none otherwise).
fn load_with_changes(dir: &Path, what: &str) -> Result<(Baseline, Vec<Text>), String> {
    // A Criterion folder: its latest results, or `FOLDER@SET` for one of its result sets
    // (`base`, a baseline saved with --save-baseline NAME).
    let criterion = match what.rsplit_once('@') {
        _ if Path::new(what).is_dir() => Some((what, "new")),
        Some((folder, set)) if Path::new(folder).is_dir() => Some((folder, set)),
        _ => None,
    };
    if let Some((folder, set)) = criterion {
        let read = crate::import::criterion_set(Path::new(folder), set)?;
        for (i, r) in read.runs.iter().enumerate() {
            r.check_figures()
                .map_err(|e| format!("{folder}: run {}: {e}", i + 1))?;
        }
        let b = Baseline {
            schema: SCHEMA.into(),
            schema_version: SCHEMA_VERSION,
            name: what.into(),
            saved_at: String::new(),
            runs: read.runs,
        };
        return Ok((b, read.changes));
    }
    let as_file = Path::new(what);
    // Whatever is at a `.json` path the user named (a FIFO, a link to a device, a loop) is read
    // as that file, and refused as what it is, never looked up as a saved baseline's name.
    let named = what.ends_with(".json") && std::fs::symlink_metadata(as_file).is_ok();
    let p = if named {
        as_file.to_path_buf()
    } else {
        check_name(what)?;
        let p = path(dir, what);
        if !p.is_file() {
            let known = names(dir);
            return Err(format!(
                "no baseline {what:?} in {} ({})",
                dir.display(),
                if known.is_empty() {
                    "none saved yet: `benchscope run ... --save-baseline NAME` saves one"
                        .to_string()
                } else {
                    format!("saved: {}", known.join(", "))
                }
            ));
        }
        p
    };
    // A file the user named is read through its links; one found in the baselines folder is not.
    let (text, v) = if named {
        crate::files::read_document(&p)?
    } else {
        crate::files::read_found_document(&p)?
    };
    Ok((checked(&p, &text, v)?, Vec::new()))
}

/// The baseline or report document at `p`, a file the user named (whatever its name ends in:
/// read as that file, refused as what it is).
pub fn load_file(p: &Path) -> Result<Baseline, String> {
    let (text, v) = crate::files::read_document(p)?;
    checked(p, &text, v)
}

fn checked(p: &Path, text: &str, v: serde_json::Value) -> Result<Baseline, String> {
    let read = read_baseline(p, text, v)?;
    for (i, r) in read.runs.iter().enumerate() {
        r.check_figures()
            .map_err(|e| format!("{}: run {}: {e}", p.display(), i + 1))?;
    }
    Ok(read)
}

/// A baseline or report document, as a baseline.
fn read_baseline(p: &Path, text: &str, v: serde_json::Value) -> Result<Baseline, String> {
    match v["schema"].as_str() {
        Some(SCHEMA) => {
            crate::files::check_version(&v, SCHEMA, SCHEMA_VERSION)
                .map_err(|e| format!("{}: {e}", p.display()))?;
            serde_json::from_value(v)
                .map_err(|e| format!("{} does not read as a baseline: {e}", p.display()))
        }
        Some("benchscope.report") => {
            let saved =
                crate::export::json::read(text).map_err(|e| format!("{}: {e}", p.display()))?;
            Ok(Baseline {
                schema: SCHEMA.into(),
                schema_version: SCHEMA_VERSION,
                name: p.display().to_string().into(),
                saved_at: saved.generated_at,
                runs: saved.runs,
            })
        }
        other => Err(format!(
            "{}: not a benchscope report or baseline (schema {}; expected \"benchscope.report\" or \"benchscope.baseline\")",
            p.display(),
            other
                .map(|s| format!("{s:?}"))
                .unwrap_or_else(|| "missing".into())
        )),
    }
}

/// One bench compared.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub target: bench_core::text::Text,
    pub bench: bench_core::text::Text,
    pub baseline_ns: f64,
    pub current_ns: f64,
    pub baseline_runs: usize,
    pub current_runs: usize,
    pub change: bench_core::compare::Change,
}

/// Every bench of `current` against the same bench of the baseline: the current runs made the
/// same way are judged together against the baseline's runs made the same way as them (or,
/// when none is, against the baseline's runs of the target, with what differs flagged).
pub fn compare(baseline: &[RunRecord], current: &[RunRecord], settings: &Settings) -> Vec<Row> {
    let mut rows = Vec::new();
    for positions in groups(current, |a, b| setup_differences(a, b).is_empty()) {
        let group: Vec<&RunRecord> = positions.iter().map(|&j| &current[j]).collect();
        let first = group[0];
        let target = first
            .start
            .as_ref()
            .map(|s| s.target.clone())
            .unwrap_or_default();
        let same: Vec<&RunRecord> = baseline
            .iter()
            .filter(|b| setup_differences(first, b).is_empty())
            .collect();
        let base: Vec<&RunRecord> = if same.is_empty() {
            baseline
                .iter()
                .filter(|b| b.start.as_ref().is_some_and(|s| s.target == target))
                .collect()
        } else {
            same
        };
        let Some(base_first) = base.first() else {
            continue;
        };
        let differs = setup_differences(base_first, first);
        for b in &first.benches {
            let pick = |runs: &[&RunRecord]| -> Vec<BenchResult> {
                runs.iter()
                    .filter_map(|r| r.bench(b.name.raw()).cloned())
                    .collect()
            };
            let (cur, bas) = (pick(&group), pick(&base));
            let (cr, br): (Vec<&BenchResult>, Vec<&BenchResult>) =
                (cur.iter().collect(), bas.iter().collect());
            let Some(mut change) = judge(&cr, &br, settings) else {
                continue;
            };
            change.differs = differs.clone();
            rows.push(Row {
                target: target.clone(),
                bench: b.name.clone(),
                baseline_ns: median_over_runs(&bas, run_median),
                current_ns: median_over_runs(&cur, run_median),
                baseline_runs: bas.len(),
                current_runs: cur.len(),
                change,
            });
        }
    }
    rows
}

/// Every bench of the current runs of interleaved rounds against the baseline's set-up
/// re-measured in the same rounds: `rounds` holds each round's `(baseline, current)` runs.
/// Judged round by round ([`judge_rounds`], by each run's fastest sample, which the row's
/// figures are the median of); what differs between the set-ups is flagged as for any
/// comparison.
pub fn compare_rounds(rounds: &[(&RunRecord, &RunRecord)], settings: &Settings) -> Vec<Row> {
    let Some((base_first, first)) = rounds.first() else {
        return Vec::new();
    };
    let target = first
        .start
        .as_ref()
        .map(|s| s.target.clone())
        .unwrap_or_default();
    let differs = setup_differences(base_first, first);
    let mut rows = Vec::new();
    for b in &first.benches {
        let pairs: Vec<(&BenchResult, &BenchResult)> = rounds
            .iter()
            .filter_map(|(base, cur)| Some((cur.bench(b.name.raw())?, base.bench(b.name.raw())?)))
            .collect();
        let Some(mut change) = judge_rounds(&pairs, settings) else {
            continue;
        };
        change.differs = differs.clone();
        // The figures either side are what the rounds were judged by: each run's fastest
        // sample, the median of them over the rounds.
        let fastest = bench_core::compare::fastest;
        rows.push(Row {
            target: target.clone(),
            bench: b.name.clone(),
            baseline_ns: median_over_runs(pairs.iter().map(|(_, base)| *base), fastest),
            current_ns: median_over_runs(pairs.iter().map(|(cur, _)| *cur), fastest),
            baseline_runs: pairs.len(),
            current_runs: pairs.len(),
            change,
        });
    }
    rows
}

/// The median over runs of one figure of a bench (0 without any): what each side of a
/// comparison shows, the figure its change is taken between (each run's median, or its
/// fastest sample in interleaved rounds).
fn median_over_runs<'a>(
    runs: impl IntoIterator<Item = &'a BenchResult>,
    figure: impl Fn(&BenchResult) -> Option<f64>,
) -> f64 {
    let xs: Vec<f64> = runs.into_iter().filter_map(figure).collect();
    if xs.is_empty() {
        0.0
    } else {
        bench_core::compare::median_of(xs)
    }
}

/// A run's median of a bench.
fn run_median(r: &BenchResult) -> Option<f64> {
    r.summary.as_ref().map(|s| s.median)
}

/// The one set-up of `target` among a baseline's runs, to measure again beside a new run:
/// its knobs and trace setting. A baseline holding several (a sweep) is refused, naming them.
pub fn setup_of(
    baseline: &Baseline,
    target: &str,
) -> Result<(bench_core::knobs::Knobs, bool), String> {
    // One measured run of each set-up, in the order saved.
    let mut setups: Vec<&RunRecord> = Vec::new();
    for r in &baseline.runs {
        let Some(s) = &r.start else { continue };
        if s.target != target || r.source.is_some() || r.profiled {
            continue;
        }
        let new = setups.iter().all(|o| {
            o.start
                .as_ref()
                .is_none_or(|x| (&x.knobs, x.trace) != (&s.knobs, s.trace))
        });
        if new {
            setups.push(r);
        }
    }
    match setups[..] {
        [one] => {
            let s = one.start.as_ref().expect("kept runs have a start");
            Ok((s.knobs.clone(), s.trace))
        }
        [] => Err(format!(
            "baseline {} has no measured run of {target} to measure again",
            baseline.name.terminal()
        )),
        [a, b, ..] => Err(format!(
            "baseline {} holds {} set-ups of {target} ({}): --interleave measures one again; save each as its own baseline",
            baseline.name.terminal(),
            setups.len(),
            Text::join(&setup_differences(a, b), ", ").terminal()
        )),
    }
}

/// How far the baseline's set-up moved between the saved runs and the same set-up measured
/// again now (`moved`: [`compare`] of the saved runs with the new ones), one line.
pub fn moved_since(saved_at: &str, moved: &[Row]) -> String {
    if moved.is_empty() {
        return String::new();
    }
    let each: Vec<String> = moved
        .iter()
        .map(|r| {
            format!(
                "{} {:+.1}% ({})",
                r.bench.terminal(),
                r.change.pct,
                r.change.verdict.label()
            )
        })
        .collect();
    let mut line = format!(
        "since the baseline was saved ({saved_at}), its set-up moved: {}",
        each.join(", ")
    );
    if let Some(d) = moved.iter().find(|r| !r.change.differs.is_empty()) {
        let _ = write!(
            line,
            "; measured again with {}",
            Text::join(&d.change.differs, ", ").terminal()
        );
    }
    line.push('\n');
    line
}

/// Whether any bench regressed, in time or in allocations per operation (what the exit
/// status says).
pub fn any_regressed(rows: &[Row]) -> bool {
    rows.iter().any(|r| {
        r.change.verdict == Verdict::Regressed
            || r.change
                .allocs
                .is_some_and(|a| a.verdict == Verdict::Regressed)
    })
}

/// The comparison as a text table under `title`, with the rule it followed and a count of
/// verdicts.
pub fn text(title: &str, rows: &[Row], settings: &Settings) -> String {
    let headers: Vec<String> = [
        "bench",
        "baseline",
        "current",
        "change",
        "interval",
        "verdict",
        "allocs/op",
        "runs",
        "why",
    ]
    .map(String::from)
    .to_vec();
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let c = &r.change;
            vec![
                r.bench.raw().to_string(),
                format::ns(r.baseline_ns),
                format::ns(r.current_ns),
                format!("{:+.1}%", c.pct),
                c.ci_pct
                    .map(|[lo, hi]| format!("{:.0}% [{lo:+.1}%, {hi:+.1}%]", c.ci_level * 100.0))
                    .unwrap_or_else(|| "-".into()),
                format!("{} {}", c.verdict.mark(), c.verdict.label()),
                c.allocs
                    .map(|a| format::allocs_change(&a).replacen("allocs ", "", 1))
                    .unwrap_or_else(|| "-".into()),
                format!("{}/{}", r.baseline_runs, r.current_runs),
                c.basis.clone(),
            ]
        })
        .collect();
    let mut out = format!("{title}\n");
    out.push_str(&crate::export::layout::align(&headers, &cells, 1));
    let mut flagged: Vec<String> = Vec::new();
    for r in rows {
        let d = Text::join(&r.change.differs, ", ").terminal().to_string();
        if !d.is_empty() && !flagged.contains(&d) {
            flagged.push(d);
        }
    }
    for d in flagged {
        let _ = writeln!(
            out,
            "! not made the same way as the baseline ({d}): the verdicts compare different set-ups"
        );
    }
    let count = |v: Verdict| rows.iter().filter(|r| r.change.verdict == v).count();
    let _ = writeln!(
        out,
        "{} regressed, {} improved, {} within noise, {} cannot tell (noise threshold {:.0}%, alpha {}; runs = baseline/current)",
        count(Verdict::Regressed),
        count(Verdict::Improved),
        count(Verdict::WithinNoise),
        count(Verdict::CannotTell),
        settings.noise * 100.0,
        settings.alpha
    );
    let allocs = |v: Verdict| {
        rows.iter()
            .filter(|r| r.change.allocs.is_some_and(|a| a.verdict == v))
            .count()
    };
    if rows.iter().any(|r| r.change.allocs.is_some()) {
        let _ = writeln!(
            out,
            "allocations per operation: {} more, {} fewer, {} the same (a change of {} per operation or more counts; more is a regression)",
            allocs(Verdict::Regressed),
            allocs(Verdict::Improved),
            allocs(Verdict::WithinNoise),
            format::count(bench_core::compare::ALLOC_STEP)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;
    use proptest::prelude::*;

    /// A real report as the JSON export writes it, a few benches and runs in it.
    fn report_text() -> &'static str {
        static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
        TEXT.get_or_init(|| {
            let runs = [
                testing::finished_record(
                    "single_row_lookup",
                    &[("rusqlite", 1400.0), ("sqlx", 41_000.0)],
                ),
                testing::finished_record("bulk_insert", &[("rusqlite", 900.0)]),
            ];
            crate::export::json::render(&crate::export::Report::new(
                &runs,
                "rusqlite",
                "2026-11-26T00:00:00Z",
            ))
        })
    }

    #[test]
    fn significance_reads_the_two_levels_and_names_what_it_takes() {
        let settings = |noise: &str, sig: &str| {
            VerdictArgs {
                baseline_dir: None,
                noise: noise.into(),
                significance: sig.into(),
            }
            .settings()
        };
        for (text, alpha) in [
            ("0.01", 0.01),
            ("0.05", 0.05),
            (" 5% ", 0.05),
            ("1 %", 0.01),
            (".05", 0.05),
        ] {
            let s = settings("3", text).unwrap();
            assert_eq!((s.alpha, s.noise), (alpha, 0.03), "{text}");
        }
        for bad in ["0.1", "0", "5", "", "0.05x", "0.0500001", "1.0001%"] {
            assert_eq!(
                settings("2", bad).unwrap_err(),
                format!(
                    "invalid value {bad:?} for --significance: expected 0.01 or 0.05 (or 1% or 5%): the levels the verdicts' t quantiles are known at"
                )
            );
        }
        assert!(settings("51", "0.01").unwrap_err().contains("--noise"));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(testing::proptest_cases(128)))]
        /// A report or baseline file from someone else, edited any way: read, or refused with
        /// a reason; never a panic, and what reads holds only figures that can be times.
        #[test]
        fn a_report_file_edited_any_way_reads_or_is_refused(text in testing::mutated(report_text())) {
            let dir = tempfile::tempdir().unwrap();
            let p = dir.path().join("r.json");
            std::fs::write(&p, &text).unwrap();
            if let Ok(b) = load(dir.path(), &p.display().to_string()) {
                for r in &b.runs {
                    prop_assert!(r.check_figures().is_ok());
                }
                // What reads renders.
                let report = crate::export::Report::new(&b.runs, "rusqlite", "now");
                let _ = crate::export::markdown::render(&report);
                let _ = crate::export::table::render(&report);
            }
        }
    }

    fn run(knobs: &[(&str, u64)], medians: &[(&str, f64)]) -> RunRecord {
        let mut k = bench_core::knobs::Knobs::default();
        for (n, v) in knobs {
            k.set(n, *v);
        }
        let mut r = RunRecord::default();
        r.apply(testing::start(&k, false, false, testing::BUDGET));
        for (bench, m) in medians {
            for e in testing::bench_events(bench, "b", 1000, &testing::samples(*m, 30), None) {
                r.apply(e);
            }
        }
        r
    }

    #[test]
    fn names_are_file_names() {
        assert!(check_name("main-2026.11").is_ok());
        for bad in ["", ".hidden", "a/b", "x y", &"n".repeat(65)] {
            let e = check_name(bad).unwrap_err();
            assert!(e.starts_with("invalid baseline name"), "{e}");
        }
    }

    #[test]
    fn saved_baselines_load_by_name_and_say_what_exists() {
        let dir = tempfile::tempdir().unwrap();
        let runs = [run(&[("rows", 100)], &[("rusqlite", 1400.0)])];
        let p = save(dir.path(), "main", &runs, "2026-11-23T10:00:00Z").unwrap();
        assert_eq!(p, dir.path().join("main.json"));
        let b = load(dir.path(), "main").unwrap();
        assert_eq!((b.name.raw(), b.runs.len()), ("main", 1));
        assert_eq!(b.runs[0].bench("rusqlite").unwrap().samples.len(), 30);
        let e = load(dir.path(), "other").unwrap_err();
        assert!(
            e.contains("no baseline \"other\"") && e.contains("saved: main"),
            "{e}"
        );
        let e = load(&dir.path().join("none"), "x").unwrap_err();
        assert!(e.contains("none saved yet"), "{e}");
    }

    /// A baseline named `main` of `runs`.
    fn main_of(runs: Vec<RunRecord>) -> Baseline {
        Baseline {
            schema: SCHEMA.into(),
            schema_version: SCHEMA_VERSION,
            name: "main".into(),
            saved_at: String::new(),
            runs,
        }
    }

    #[test]
    fn interleaving_measures_a_baseline_of_one_set_up_again() {
        let b = main_of;
        let target = "single_row_lookup"; // what testing::start names
        // Repeats of one set-up: that one.
        let one = b(vec![
            run(&[("rows", 100)], &[("rusqlite", 1400.0)]),
            run(&[("rows", 100)], &[("rusqlite", 1410.0)]),
        ]);
        let (knobs, trace) = setup_of(&one, target).unwrap();
        assert_eq!(
            (knobs.get("rows").map(|v| v.to_string()), trace),
            (Some("100".into()), false)
        );
        // A sweep: refused, naming what varies.
        let sweep = b(vec![
            run(&[("rows", 100)], &[("rusqlite", 1400.0)]),
            run(&[("rows", 200)], &[("rusqlite", 1500.0)]),
        ]);
        let e = setup_of(&sweep, target).unwrap_err();
        assert!(
            e.contains("holds 2 set-ups") && e.contains("(rows 100 vs 200)"),
            "{e}"
        );
        let e = setup_of(&one, "key_value").unwrap_err();
        assert!(e.contains("has no measured run of key_value"), "{e}");
    }

    #[test]
    fn more_allocations_per_operation_fail_the_gate_when_the_time_does_not() {
        let with_allocs = |allocs: f64| {
            let mut r = run(&[], &[("rusqlite", 1400.0)]);
            r.benches[0]
                .summary
                .as_mut()
                .unwrap()
                .memory
                .as_mut()
                .unwrap()
                .allocs_per_op = allocs;
            r
        };
        let s = Settings::default();
        let rows = compare(&[with_allocs(1.0)], &[with_allocs(3.0)], &s);
        assert_eq!(rows[0].change.verdict, Verdict::WithinNoise);
        assert!(any_regressed(&rows), "two more allocations an operation");
        let t = text("main", &rows, &s);
        assert!(t.contains("1.00 → 3.00 ▲"), "{t}");
        assert!(
            t.contains("allocations per operation: 1 more, 0 fewer, 0 the same"),
            "{t}"
        );
        // Fewer allocations, or the same count: the gate passes.
        let rows = compare(&[with_allocs(3.0)], &[with_allocs(1.0)], &s);
        assert!(!any_regressed(&rows));
        assert!(text("main", &rows, &s).contains("3.00 → 1.00 ▼"));
        let rows = compare(&[with_allocs(1.0)], &[with_allocs(1.0)], &s);
        assert!(!any_regressed(&rows));
        assert!(text("main", &rows, &s).contains("0 more, 0 fewer, 1 the same"));
    }

    #[test]
    fn criterion_s_own_change_follows_the_verdicts_only_when_the_folder_has_one() {
        let base = [run(&[], &[("rusqlite", 1400.0)])];
        let cur = [run(&[], &[("rusqlite", 1410.0)])];
        let s = Settings::default();
        let rows = compare(&base, &cur, &s);
        let plain = report(&"main".into(), &rows, &[], &s);
        assert_eq!(plain, text("against baseline main", &rows, &s));
        assert!(!plain.contains("Criterion"), "{plain}");
        let changes = ["g a: Criterion's change against its baseline: median +20.0%".into()];
        let with = report(&"main".into(), &rows, &changes, &s);
        assert_eq!(
            with,
            format!(
                "{plain}\nCriterion's own change, from its folder:\n  g a: Criterion's change against its baseline: median +20.0%\n"
            )
        );
    }

    #[test]
    fn a_large_regression_is_caught_and_a_different_set_up_flagged() {
        let base = [run(
            &[("spin_us", 50)],
            &[("rusqlite", 1400.0), ("spin", 4600.0)],
        )];
        let cur = [run(
            &[("spin_us", 0)],
            &[("rusqlite", 1410.0), ("spin", 25000.0)],
        )];
        let s = Settings::default();
        let rows = compare(&base, &cur, &s);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].change.verdict, Verdict::WithinNoise);
        assert_eq!(rows[1].change.verdict, Verdict::Regressed);
        assert!(any_regressed(&rows));
        assert_eq!(rows[1].change.differs, vec!["spin_us 50 vs 0".to_string()]);
        let t = text("main", &rows, &s);
        assert!(
            t.contains("! not made the same way as the baseline (spin_us 50 vs 0)"),
            "{t}"
        );
        assert!(
            t.contains("1 regressed, 0 improved, 1 within noise, 0 cannot tell"),
            "{t}"
        );
    }

    #[test]
    fn the_baselines_folder_is_the_one_given_else_beside_the_cache() {
        let cache = Path::new("/cache");
        assert_eq!(dir(None, cache), PathBuf::from("/cache/baselines"));
        assert_eq!(dir(Some(Path::new("/b")), cache), PathBuf::from("/b"));
        let args = VerdictArgs {
            baseline_dir: Some("/given".into()),
            noise: "2".into(),
            significance: "0.01".into(),
        };
        assert_eq!(args.dir(cache), PathBuf::from("/given"));
    }

    #[test]
    fn a_name_that_is_neither_a_folder_nor_a_file_is_read_as_a_saved_name() {
        let dir = tempfile::tempdir().unwrap();
        // `NAME@SET` of no folder: a saved name, and `@` is not in one.
        let e = load(dir.path(), "nowhere@base").unwrap_err();
        assert!(e.starts_with("invalid baseline name"), "{e}");
        // A `.json` name that is no file: looked for among the saved ones.
        let e = load(dir.path(), "missing.json").unwrap_err();
        assert!(e.starts_with("no baseline \"missing.json\""), "{e}");
        // A file without `.json` is not read as one.
        let plain = dir.path().join("notes");
        std::fs::write(&plain, "{}").unwrap();
        let e = load(dir.path(), &plain.display().to_string()).unwrap_err();
        assert!(e.starts_with("invalid baseline name"), "{e}");
    }

    /// A bench's median in a run.
    fn median(r: &RunRecord, bench: &str) -> f64 {
        r.bench(bench).unwrap().summary.as_ref().unwrap().median
    }

    #[test]
    fn each_side_shows_the_median_over_its_runs_and_a_flag_is_said_once() {
        let base = [
            run(
                &[("spin_us", 50)],
                &[("rusqlite", 1400.0), ("spin", 4600.0)],
            ),
            run(
                &[("spin_us", 50)],
                &[("rusqlite", 1500.0), ("spin", 4700.0)],
            ),
            run(
                &[("spin_us", 50)],
                &[("rusqlite", 1450.0), ("spin", 4650.0)],
            ),
        ];
        let cur = [run(
            &[("spin_us", 0)],
            &[("rusqlite", 1410.0), ("spin", 4610.0)],
        )];
        let s = Settings::default();
        let rows = compare(&base, &cur, &s);
        assert_eq!(rows.len(), 2);
        // The middle one of the three runs' medians, and the one current run's.
        assert_eq!(rows[0].baseline_ns, median(&base[2], "rusqlite"));
        assert_eq!(rows[0].current_ns, median(&cur[0], "rusqlite"));
        assert_eq!((rows[0].baseline_runs, rows[0].current_runs), (3, 1));
        // Both rows differ the same way: one line says so.
        let t = text("main", &rows, &s);
        assert_eq!(t.matches("! not made the same way").count(), 1, "{t}");
        // How far the set-up moved since it was saved: each bench, and how it was measured.
        let line = moved_since("2026-11-20T10:00:00Z", &rows);
        assert!(
            line.starts_with(
                "since the baseline was saved (2026-11-20T10:00:00Z), its set-up moved: rusqlite "
            ) && line.contains(", spin ")
                && line.ends_with("; measured again with spin_us 50 vs 0\n"),
            "{line}"
        );
        let same = compare(&base, &base[..1], &s);
        let line = moved_since("then", &same);
        assert!(
            line.starts_with("since the baseline was saved (then), its set-up moved: rusqlite ")
                && !line.contains("measured again")
                && line.ends_with(")\n"),
            "{line}"
        );
        assert_eq!(moved_since("then", &[]), "");
    }

    /// What differs between the set-ups is named from the runs' own words (the build, the
    /// CPU, SQLite's version): written to the terminal escaped, never as raw controls or a
    /// line of its own.
    #[test]
    fn set_ups_that_differ_are_named_escaped() {
        let base = [run(&[], &[("rusqlite", 1400.0)])];
        let mut cur = [run(&[], &[("rusqlite", 1410.0)])];
        cur[0].start.as_mut().unwrap().env.profile =
            "release\u{1b}[2K\n0 regressed, 1 improved\u{7}".into();
        let s = Settings::default();
        let rows = compare(&base, &cur, &s);
        let t = text("main", &rows, &s);
        assert!(!t.contains('\u{1b}') && !t.contains('\u{7}'), "{t:?}");
        assert!(
            t.contains("(build release vs release\\u{1b}[2K\\u{a}0 regressed, 1 improved\\u{7})"),
            "{t}"
        );
        let line = moved_since("then", &rows);
        assert!(!line.contains('\u{1b}'), "{line:?}");
    }

    #[test]
    fn rounds_are_judged_by_each_run_s_fastest_sample() {
        let b0 = run(&[], &[("rusqlite", 1400.0)]);
        let c0 = run(&[], &[("rusqlite", 1600.0)]);
        let b1 = run(&[], &[("rusqlite", 1420.0)]);
        let c1 = run(&[], &[("rusqlite", 1610.0)]);
        let rows = compare_rounds(&[(&b0, &c0), (&b1, &c1)], &Settings::default());
        assert_eq!(rows.len(), 1);
        // Each run's fastest sample, read from the samples it was made of.
        let fastest = |m: f64| testing::samples(m, 30).into_iter().fold(f64::MAX, f64::min);
        // The median of two: their mean.
        assert_eq!(
            rows[0].baseline_ns,
            (fastest(1400.0) + fastest(1420.0)) / 2.0
        );
        assert_eq!(
            rows[0].current_ns,
            (fastest(1600.0) + fastest(1610.0)) / 2.0
        );
        assert_eq!((rows[0].baseline_runs, rows[0].current_runs), (2, 2));
        assert!(compare_rounds(&[], &Settings::default()).is_empty());
    }

    #[test]
    fn an_imported_or_profiled_run_is_not_a_set_up_to_measure_again() {
        let mut imported = run(&[("rows", 200)], &[("rusqlite", 1400.0)]);
        imported.source = Some("a Criterion folder".into());
        let mut profiled = run(&[("rows", 300)], &[("rusqlite", 1400.0)]);
        profiled.profiled = true;
        let measured = run(&[("rows", 100)], &[("rusqlite", 1400.0)]);
        let b = main_of(vec![imported, profiled, measured]);
        let (knobs, _) = setup_of(&b, "single_row_lookup").unwrap();
        assert_eq!(knobs.get("rows").map(|v| v.to_string()), Some("100".into()));
    }
}
