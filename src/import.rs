//! Results from outside a live run, as read-only runs: a Criterion folder (`target/criterion`
//! or any CRITERION_HOME), and the files benchscope writes itself (a report, a baseline, a
//! session journal).

use bench_core::protocol::CRITERION_HARNESS as HARNESS;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bench_core::knobs::Knobs;
use bench_core::measure::stats::summarize;
use bench_core::protocol::results::RunRecord;
use bench_core::protocol::{Budget, Event, RunEnv, Start};
use serde::Deserialize;

/// `new/benchmark.json` of a Criterion benchmark (the fields read here).
#[derive(Debug, Deserialize)]
struct CriterionId {
    group_id: String,
    function_id: Option<String>,
    value_str: Option<String>,
    #[serde(default)]
    throughput: Option<BTreeMap<String, u64>>,
}

/// `new/sample.json`: per sample, the iterations and their total time in ns.
#[derive(Debug, Deserialize)]
struct CriterionSample {
    iters: Vec<f64>,
    times: Vec<f64>,
}

#[derive(Debug, Deserialize)]
struct Estimate {
    point_estimate: f64,
    confidence_interval: Interval,
}

#[derive(Debug, Deserialize)]
struct Interval {
    lower_bound: f64,
    upper_bound: f64,
}

#[derive(Debug, Deserialize)]
struct CriterionEstimates {
    median: Estimate,
    mean: Estimate,
}

/// One imported Criterion benchmark, and what Criterion itself estimated (per operation).
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    pub group: String,
    /// The bench: Criterion's function id (its value alone where it has none).
    pub bench: String,
    /// Criterion's parameter (`1000` of `rusqlite/1000`), where the benchmark has one beside
    /// its function id.
    pub param: Option<String>,
    pub ops_per_iter: u64,
    /// ns per operation of each sample.
    pub samples: Vec<f64>,
    /// Each sample as Criterion recorded it: iterations, and their time in ns.
    pub raw: Vec<(u64, u64)>,
    /// Criterion's median and its 95% interval, per operation.
    pub median: (f64, [f64; 2]),
    pub mean: f64,
}

/// What can be wrong with a Criterion folder, as a caller can match on it; each message names
/// the file and what is allowed.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// A file of the folder that cannot be read, or a walk the opener refused, in its words.
    #[error("{0}")]
    File(String),
    /// A file that is not what Criterion writes there.
    #[error("{path} does not read: {why}")]
    Unreadable { path: String, why: String },
    #[error("{path}: {iters} iteration counts for {times} times")]
    Counts {
        path: String,
        iters: usize,
        times: usize,
    },
    /// A sample that cannot be one.
    #[error("{path}: {what}[{i}] is {value} (allowed: {allowed})")]
    Sample {
        path: String,
        what: &'static str,
        i: usize,
        value: f64,
        allowed: &'static str,
    },
    #[error("{path}: the {what} estimate is {value} (allowed: a finite time in ns, 0 or more)")]
    Estimate {
        path: String,
        what: &'static str,
        value: f64,
    },
    #[error("{path}: the {what} change {value} (allowed: a finite relative change above -1)")]
    Change {
        path: String,
        what: &'static str,
        value: f64,
    },
    #[error("{0} holds no Criterion results (no */new/benchmark.json under it)")]
    Empty(String),
    #[error("{root} holds no Criterion result set {set:?} (it holds: {sets})")]
    NoSet {
        root: String,
        set: String,
        sets: String,
    },
}

impl From<ImportError> for String {
    fn from(e: ImportError) -> String {
        e.to_string()
    }
}

fn read_json<T: serde::de::DeserializeOwned>(p: &Path) -> Result<T, ImportError> {
    let (_, v) = crate::files::read_found_document(p).map_err(ImportError::File)?;
    serde_json::from_value(v).map_err(|e| ImportError::Unreadable {
        path: p.display().to_string(),
        why: e.to_string(),
    })
}

/// Every result set under `root`: a folder holding a `benchmark.json` beside a benchmark's
/// other sets. Criterion keeps the latest results of a benchmark in `new/`, the ones before in
/// `base/`, and a baseline saved by name (`--save-baseline main`) in a folder of that name;
/// `change/` (its comparison) and `report/` are not result sets. Walked by the opener: eight
/// folders down at most, no link followed, each folder once.
fn result_dirs(root: &Path) -> Result<Vec<PathBuf>, ImportError> {
    let entries =
        bench_core::opener::walk(root, 9).map_err(|e| ImportError::File(e.to_string()))?;
    let files: std::collections::HashSet<&Path> = entries
        .iter()
        .filter(|e| e.is_file())
        .map(|e| e.path.as_path())
        .collect();
    let mut out: Vec<PathBuf> = Vec::new();
    // Sorted by path: a folder comes just before what is in it.
    for e in entries.iter().filter(|e| e.is_dir() && e.depth <= 8) {
        let rel = e.path.strip_prefix(root).unwrap_or(&e.path);
        if rel
            .components()
            .any(|c| c.as_os_str() == "report" || c.as_os_str() == "change")
        {
            continue;
        }
        if out.last().is_some_and(|d| e.path.starts_with(d)) {
            continue;
        }
        if files.contains(e.path.join("benchmark.json").as_path()) {
            out.push(e.path.clone());
        }
    }
    Ok(out)
}

/// `change/estimates.json`: Criterion's comparison of `new/` with the baseline it was
/// compared against, as relative changes (0.11 is 11% slower).
#[derive(Debug, Deserialize)]
struct CriterionChange {
    mean: Estimate,
    median: Estimate,
}

/// Criterion's change of one benchmark, read from its `change/` folder, in words: its median
/// and mean changes with their 95% intervals, and what its interval of the mean says against
/// Criterion's default noise threshold (±1%). Criterion's own verdict also rests on a p-value
/// it does not write down, so the words are a reading of the interval, and say so.
fn change_words(bench: &str, dir: &Path) -> Result<Option<String>, ImportError> {
    let p = dir.join("change/estimates.json");
    if !bench_core::opener::is_file(&p) {
        return Ok(None);
    }
    let c: CriterionChange = read_json(&p)?;
    for (what, e) in [("mean", &c.mean), ("median", &c.median)] {
        for v in [
            e.point_estimate,
            e.confidence_interval.lower_bound,
            e.confidence_interval.upper_bound,
        ] {
            if !(v.is_finite() && v > -1.0 && v < 1e6) {
                return Err(ImportError::Change {
                    path: p.display().to_string(),
                    what,
                    value: v,
                });
            }
        }
    }
    let pct = |e: &Estimate| {
        format!(
            "{:+.1}% [{:+.1}%, {:+.1}%]",
            e.point_estimate * 100.0,
            e.confidence_interval.lower_bound * 100.0,
            e.confidence_interval.upper_bound * 100.0
        )
    };
    let [lo, hi] = [
        c.mean.confidence_interval.lower_bound,
        c.mean.confidence_interval.upper_bound,
    ];
    // Criterion calls a change only when its whole interval lies past the noise threshold.
    let reading = if lo <= 0.0 && hi >= 0.0 {
        "holds no change: Criterion's \"no change in performance detected\""
    } else if lo > 0.01 {
        "lies above +1%: Criterion's \"performance has regressed\""
    } else if hi < -0.01 {
        "lies below -1%: Criterion's \"performance has improved\""
    } else {
        "reaches within ±1%: Criterion's \"change within noise threshold\""
    };
    Ok(Some(format!(
        "{bench}: Criterion's change against its baseline: median {}, mean {}; the mean's interval {reading} (read from change/estimates.json; its p-value is not written down)",
        pct(&c.median),
        pct(&c.mean)
    )))
}

/// Reads one benchmark from one of its result sets (`new/`, `base/`, a named baseline).
pub fn read_benchmark(new: &Path) -> Result<Imported, ImportError> {
    let id: CriterionId = read_json(&new.join("benchmark.json"))?;
    let sample: CriterionSample = read_json(&new.join("sample.json"))?;
    let est: CriterionEstimates = read_json(&new.join("estimates.json"))?;
    if sample.iters.len() != sample.times.len() || sample.iters.is_empty() {
        return Err(ImportError::Counts {
            path: new.join("sample.json").display().to_string(),
            iters: sample.iters.len(),
            times: sample.times.len(),
        });
    }
    let bad =
        |what: &'static str, i: usize, value: f64, allowed: &'static str| ImportError::Sample {
            path: new.join("sample.json").display().to_string(),
            what,
            i,
            value,
            allowed,
        };
    for (i, (&n, &t)) in sample.iters.iter().zip(&sample.times).enumerate() {
        if !(n.is_finite() && (1.0..=1e15).contains(&n)) {
            return Err(bad("iters", i, n, "a whole count of iterations from 1"));
        }
        if !(t.is_finite() && t > 0.0 && t <= 1e15) {
            return Err(bad("times", i, t, "a finite time in ns above 0"));
        }
    }
    for (what, v) in [
        ("median", est.median.point_estimate),
        (
            "median lower bound",
            est.median.confidence_interval.lower_bound,
        ),
        (
            "median upper bound",
            est.median.confidence_interval.upper_bound,
        ),
        ("mean", est.mean.point_estimate),
    ] {
        if !(v.is_finite() && v >= 0.0) {
            return Err(ImportError::Estimate {
                path: new.join("estimates.json").display().to_string(),
                what,
                value: v,
            });
        }
    }
    // A throughput in elements makes an iteration that many operations: per-op figures then
    // read like the runner's.
    let ops = id
        .throughput
        .as_ref()
        .and_then(|t| t.get("Elements").copied())
        .filter(|n| *n > 0)
        .unwrap_or(1);
    // `rusqlite/1000` is bench rusqlite at parameter 1000: benches of one parameter value make
    // one run, so their names (and ratios) match live runs'.
    let (bench, param) = match (id.function_id.clone(), id.value_str.clone()) {
        (Some(f), Some(v)) if !f.is_empty() => (f, Some(v)),
        (Some(f), None) => (f, None),
        (_, Some(v)) => (v, None),
        (None, None) => (String::new(), None),
    };
    let per_op = |ns: f64| ns / ops as f64;
    Ok(Imported {
        group: id.group_id,
        bench,
        param,
        ops_per_iter: ops,
        samples: sample
            .iters
            .iter()
            .zip(&sample.times)
            .map(|(i, t)| per_op(t / i.max(1.0)))
            .collect(),
        raw: sample
            .iters
            .iter()
            .zip(&sample.times)
            .map(|(i, t)| (i.max(1.0) as u64, t.round() as u64))
            .collect(),
        median: (
            per_op(est.median.point_estimate),
            [
                per_op(est.median.confidence_interval.lower_bound),
                per_op(est.median.confidence_interval.upper_bound),
            ],
        ),
        mean: per_op(est.mean.point_estimate),
    })
}

/// Criterion's name of the result set a run was read from: `new` (its latest results), `base`
/// (the results before), or a baseline's name.
fn set_words(set: &str) -> String {
    match set {
        "new" => "its latest results (new/)".into(),
        "base" => "the results before its latest (base/)".into(),
        name => format!("its baseline {name:?} ({name}/)"),
    }
}

/// A Criterion folder as runs: one per group, parameter value (`group/1000`) and result set
/// (the latest results, the ones before, each named baseline), each benchmark a bench named
/// by its function id, with its raw samples (summarized as benchscope summarizes its own) and
/// Criterion's estimate beside them; the latest results carry Criterion's own change against
/// its baseline where it wrote one. The baselines come first, the latest results last.
pub fn criterion(root: &Path) -> Result<Vec<RunRecord>, ImportError> {
    criterion_sets(root, None).map(|read| read.runs)
}

/// What a Criterion folder's result sets read as.
#[derive(Debug)]
pub struct CriterionRead {
    pub runs: Vec<RunRecord>,
    /// Criterion's own change of each benchmark of the latest results that has one (its
    /// `change/`), in words, after its group and parameter: also in its run's source.
    pub changes: Vec<bench_core::text::Text>,
}

/// One result set of a Criterion folder (`new`, `base`, a baseline's name), or an error naming
/// the sets there are.
pub fn criterion_set(root: &Path, set: &str) -> Result<CriterionRead, ImportError> {
    criterion_sets(root, Some(set))
}

fn criterion_sets(root: &Path, only: Option<&str>) -> Result<CriterionRead, ImportError> {
    let dirs = result_dirs(root)?;
    if dirs.is_empty() {
        return Err(ImportError::Empty(root.display().to_string()));
    }
    let set_of = |d: &Path| {
        d.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let sets: std::collections::BTreeSet<String> = dirs.iter().map(|d| set_of(d)).collect();
    if let Some(want) = only
        && !sets.contains(want)
    {
        return Err(ImportError::NoSet {
            root: root.display().to_string(),
            set: want.to_string(),
            sets: sets.iter().cloned().collect::<Vec<_>>().join(", "),
        });
    }
    // The latest results last, the results before them just before, named baselines first.
    let rank = |set: &str| match set {
        "new" => 2,
        "base" => 1,
        _ => 0,
    };
    type Key = (String, Option<String>, u8, String);
    let mut groups: BTreeMap<Key, Vec<(Imported, Option<String>)>> = BTreeMap::new();
    let mut changes = Vec::new();
    for d in dirs {
        let set = set_of(&d);
        if only.is_some_and(|w| w != set) {
            continue;
        }
        let b = read_benchmark(&d)?;
        let change = match (set.as_str(), d.parent()) {
            ("new", Some(bench_dir)) => change_words(&b.bench, bench_dir)?,
            _ => None,
        };
        if let Some(words) = &change {
            let at = b
                .param
                .as_deref()
                .map(|p| format!("/{p}"))
                .unwrap_or_default();
            changes.push(bench_core::text!("{}{at} {words}", b.group));
        }
        groups
            .entry((b.group.clone(), b.param.clone(), rank(&set), set))
            .or_default()
            .push((b, change));
    }
    let modified = |p: &Path| {
        std::fs::metadata(p)
            .and_then(|m| m.modified())
            .ok()
            .map(|t| time::OffsetDateTime::from(t).date().to_string())
    };
    let runs = groups
        .into_iter()
        .map(|((group, param, _, set), benches)| {
            let mut r = RunRecord::default();
            let max = benches
                .iter()
                .map(|(b, _)| b.samples.len())
                .max()
                .unwrap_or(0);
            let at = param
                .as_deref()
                .map(|p| format!("/{p}"))
                .unwrap_or_default();
            let of_set = if set == "new" {
                String::new()
            } else {
                format!("@{set}")
            };
            r.apply(Event::Start(Start {
                run: format!("criterion:{group}{at}{of_set}"),
                target: group.clone().into(),
                benches: benches.iter().map(|(b, _)| b.bench.clone()).collect(),
                harness: HARNESS.into(),
                knobs: Knobs::default(),
                seed: 0,
                trace: false,
                budget: Budget {
                    warmup_s: 0.0,
                    time_s: 0.0,
                    max_samples: max,
                    min_samples: 0,
                    paired: false,
                    group: None,
                    processes: None,
                    times: Default::default(),
                },
                env: RunEnv {
                    profile: "release".into(),
                    ..Default::default()
                },
            }));
            let mut notes = Vec::new();
            for (b, change) in &benches {
                r.apply(Event::BenchStart {
                    bench: b.bench.clone(),
                    backend: "Criterion".into(),
                    strategy: None,
                    ops: b.ops_per_iter,
                    work: None,
                    sqlite: Default::default(),
                });
                for (i, (iters, ns)) in b.raw.iter().enumerate() {
                    r.apply(Event::Sample {
                        bench: b.bench.clone(),
                        iter: i as u64,
                        ops: iters * b.ops_per_iter,
                        elapsed_ns: *ns,
                        work: None,
                        cost: None,
                        memory: None,
                    });
                }
                if let Some(stats) = summarize(&b.samples, None) {
                    r.apply(Event::Summary {
                        bench: b.bench.clone(),
                        stats,
                    });
                }
                notes.push(format!(
                    "{}: Criterion's median {} [{}–{}]",
                    b.bench,
                    crate::format::ns(b.median.0),
                    crate::format::ns(b.median.1[0]),
                    crate::format::ns(b.median.1[1])
                ));
                notes.extend(change.clone());
            }
            r.done = true;
            let when = modified(&root.join(&group))
                .map(|d| format!(", results of {d}"))
                .unwrap_or_default();
            let param = param
                .map(|p| format!("Criterion's parameter {p}; "))
                .unwrap_or_default();
            r.source = Some(format!(
                "Criterion folder {}{when}, {}; {param}knobs unknown; {}",
                root.display(),
                set_words(&set),
                notes.join("; ")
            ));
            r
        })
        .collect();
    Ok(CriterionRead { runs, changes })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn fixture_file(name: &str) -> &'static str {
        let p = fixture().join("single_row_lookup/rusqlite/new").join(name);
        Box::leak(std::fs::read_to_string(p).unwrap().into_boxed_str())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::testing::proptest_cases(128)))]
        /// A Criterion folder's files edited any way, one at a time: read, or refused with a
        /// reason; never a panic, and what reads holds only figures that can be times.
        #[test]
        fn a_criterion_benchmark_edited_any_way_reads_or_is_refused(
            which in 0..3usize,
            benchmark in crate::testing::mutated(fixture_file("benchmark.json")),
            sample in crate::testing::mutated(fixture_file("sample.json")),
            estimates in crate::testing::mutated(fixture_file("estimates.json")),
        ) {
            let d = tempfile::tempdir().unwrap();
            let new = d.path().join("g/f/new");
            std::fs::create_dir_all(&new).unwrap();
            let files = [("benchmark.json", benchmark), ("sample.json", sample), ("estimates.json", estimates)];
            for (i, (name, edited)) in files.iter().enumerate() {
                let text = if i == which { edited.clone() } else { fixture_file(name).to_string() };
                std::fs::write(new.join(name), text).unwrap();
            }
            if let Ok(runs) = crate::sources::open(d.path()) {
                for r in &runs {
                    prop_assert!(r.check_figures().is_ok());
                }
            }
        }
    }

    /// A Criterion folder in Criterion's layout: the files of a real `cargo bench` of
    /// bench-core's lookup bench (its `new/` folders as Criterion 0.8 wrote them), trimmed to
    /// what is read.
    fn fixture() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/criterion")
    }

    #[test]
    fn a_criterion_folder_becomes_a_run_per_group_with_raw_samples() {
        let runs = criterion(&fixture()).unwrap();
        assert_eq!(runs.len(), 1);
        let r = &runs[0];
        let s = r.start.as_ref().unwrap();
        assert_eq!(
            (s.target.raw(), s.harness.as_str()),
            ("single_row_lookup", "criterion")
        );
        let names: Vec<&str> = r.benches.iter().map(|b| b.name.raw()).collect();
        assert_eq!(names, ["rusqlite", "turso_raw"]);
        let b = r.bench("rusqlite").unwrap();
        assert_eq!(b.samples.len(), 100);
        // Our median of Criterion's raw samples is Criterion's own median estimate.
        let ours = b.summary.as_ref().unwrap().median;
        let theirs = read_benchmark(&fixture().join("single_row_lookup/rusqlite/new"))
            .unwrap()
            .median
            .0;
        assert!((ours / theirs - 1.0).abs() < 0.005, "{ours} vs {theirs}");
        assert!(
            ours > 100.0 && ours < 100_000.0,
            "per lookup, not per iteration: {ours}"
        );
        let src = r.source.as_deref().unwrap();
        assert!(
            src.contains("Criterion folder") && src.contains("knobs unknown"),
            "{src}"
        );
        // The comparison's ratio works within the imported run.
        let b = bench_core::baselines::Baselines::bench("rusqlite");
        assert!(b.ratio(r, "turso_raw").unwrap().value > 0.0);
    }

    /// One benchmark of group `g` at `dir` (`g/f/new`, `g/f/main`...), its samples the
    /// fixture's scaled by `scale`.
    fn write_set(dir: &Path, function: &str, scale: f64) {
        std::fs::create_dir_all(dir).unwrap();
        let src = fixture().join("single_row_lookup/rusqlite/new");
        let mut sample: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(src.join("sample.json")).unwrap())
                .unwrap();
        for t in sample["times"].as_array_mut().unwrap() {
            *t = serde_json::json!((t.as_f64().unwrap() * scale).round());
        }
        std::fs::write(dir.join("sample.json"), sample.to_string()).unwrap();
        std::fs::copy(src.join("estimates.json"), dir.join("estimates.json")).unwrap();
        std::fs::write(
            dir.join("benchmark.json"),
            format!(r#"{{"group_id":"g","function_id":"{function}","value_str":null,"throughput":null}}"#),
        )
        .unwrap();
    }

    fn write_change(bench_dir: &Path, mean: [f64; 3]) {
        let e = |[m, lo, hi]: [f64; 3]| {
            serde_json::json!({"point_estimate": m, "standard_error": 0.001,
                "confidence_interval": {"confidence_level": 0.95, "lower_bound": lo, "upper_bound": hi}})
        };
        std::fs::create_dir_all(bench_dir.join("change")).unwrap();
        std::fs::write(
            bench_dir.join("change/estimates.json"),
            serde_json::json!({"mean": e(mean), "median": e(mean)}).to_string(),
        )
        .unwrap();
    }

    #[test]
    fn every_result_set_of_a_criterion_folder_is_a_run_and_its_change_is_said() {
        let d = tempfile::tempdir().unwrap();
        let g = d.path().join("g");
        // The latest results 20% slower than the results before, a named baseline between.
        write_set(&g.join("a/new"), "a", 1.2);
        write_set(&g.join("a/base"), "a", 1.0);
        write_set(&g.join("a/main"), "a", 1.1);
        write_set(&g.join("b/new"), "b", 1.0);
        write_change(&g.join("a"), [0.2, 0.18, 0.22]);
        let runs = criterion(d.path()).unwrap();
        let ids: Vec<&str> = runs
            .iter()
            .map(|r| r.start.as_ref().unwrap().run.as_str())
            .collect();
        assert_eq!(ids, ["criterion:g@main", "criterion:g@base", "criterion:g"]);
        let median = |r: &RunRecord| r.bench("a").unwrap().summary.as_ref().unwrap().median;
        assert!((median(&runs[2]) / median(&runs[1]) - 1.2).abs() < 0.01);
        assert!((median(&runs[0]) / median(&runs[1]) - 1.1).abs() < 0.01);
        assert!(runs[2].bench("b").is_some() && runs[1].bench("b").is_none());
        let src = |i: usize| runs[i].source.clone().unwrap();
        assert!(
            src(0).contains("its baseline \"main\" (main/)"),
            "{}",
            src(0)
        );
        assert!(
            src(1).contains("the results before its latest (base/)"),
            "{}",
            src(1)
        );
        assert!(src(2).contains("its latest results (new/)"), "{}", src(2));
        assert!(
            src(2).contains("a: Criterion's change against its baseline: median +20.0% [+18.0%, +22.0%], mean +20.0% [+18.0%, +22.0%]; the mean's interval lies above +1%: Criterion's \"performance has regressed\""),
            "{}",
            src(2)
        );
        assert!(
            !src(1).contains("Criterion's change"),
            "only the latest results carry it"
        );

        // One set alone, for compare; a set that is not there names those that are.
        let main = criterion_set(d.path(), "main").unwrap().runs;
        // The latest results' change, read once with them, for compare to list.
        let new = criterion_set(d.path(), "new").unwrap();
        assert_eq!(new.changes.len(), 1, "{:?}", new.changes);
        assert!(
            new.changes[0]
                .raw()
                .starts_with("g a: Criterion's change against its baseline: median +20.0%"),
            "{:?}",
            new.changes
        );
        assert!(criterion_set(d.path(), "base").unwrap().changes.is_empty());
        assert_eq!(main.len(), 1);
        assert_eq!(main[0].start.as_ref().unwrap().run, "criterion:g@main");
        let e = criterion_set(d.path(), "v2").unwrap_err();
        assert!(matches!(&e, ImportError::NoSet { set, .. } if set == "v2"));
        assert!(
            e.to_string()
                .ends_with("holds no Criterion result set \"v2\" (it holds: base, main, new)"),
            "{e}"
        );

        // compare reads FOLDER@SET and FOLDER: benchscope's verdict of base against new.
        let folder = d.path().display().to_string();
        let base = crate::baseline::load(d.path(), &format!("{folder}@base")).unwrap();
        let cur = crate::baseline::load(d.path(), &folder).unwrap();
        let rows = crate::baseline::compare(&base.runs, &cur.runs, &Default::default());
        let a = rows.iter().find(|r| r.bench == "a").unwrap();
        assert!((a.change.pct - 20.0).abs() < 1.0, "{}", a.change.pct);
        assert_eq!(a.change.verdict, bench_core::compare::Verdict::CannotTell);
    }

    #[test]
    fn criterions_change_is_read_as_its_interval_against_its_noise_threshold() {
        let words = |mean: [f64; 3]| {
            let d = tempfile::tempdir().unwrap();
            write_change(d.path(), mean);
            change_words("x", d.path()).unwrap().unwrap()
        };
        assert!(
            words([0.0, -0.02, 0.01])
                .contains("holds no change: Criterion's \"no change in performance detected\"")
        );
        assert!(
            words([0.015, 0.009, 0.019])
                .contains("reaches within ±1%: Criterion's \"change within noise threshold\"")
        );
        assert!(words([-0.015, -0.019, -0.009]).contains("within noise threshold"));
        assert!(
            words([0.05, 0.011, 0.09])
                .contains("lies above +1%: Criterion's \"performance has regressed\"")
        );
        assert!(
            words([-0.05, -0.09, -0.011])
                .contains("lies below -1%: Criterion's \"performance has improved\"")
        );
        let d = tempfile::tempdir().unwrap();
        assert_eq!(change_words("x", d.path()).unwrap(), None);
        write_change(d.path(), [-2.0, -2.5, -1.5]);
        let e = change_words("x", d.path()).unwrap_err();
        assert!(matches!(e, ImportError::Change { what: "mean", .. }));
        assert!(
            e.to_string()
                .contains("allowed: a finite relative change above -1"),
            "{e}"
        );
    }

    /// The edges of what a change, a sample and an estimate may hold, each side of each.
    #[test]
    fn criterion_figures_are_read_up_to_their_limits_and_refused_past_them() {
        let words = |mean: [f64; 3]| {
            let d = tempfile::tempdir().unwrap();
            write_change(d.path(), mean);
            change_words("x", d.path())
        };
        // A change's interval exactly at ±1% reaches within it.
        assert!(
            words([0.02, 0.01, 0.03])
                .unwrap()
                .unwrap()
                .contains("reaches within ±1%")
        );
        assert!(
            words([-0.02, -0.03, -0.01])
                .unwrap()
                .unwrap()
                .contains("reaches within ±1%")
        );
        // A relative change of -1 (no time at all) or of a million is not a change Criterion
        // writes; just inside either is read.
        for bad in [-1.0, 1e6] {
            let e = words([0.0, bad, 0.1]).unwrap_err();
            assert!(
                e.to_string().contains(&format!("the mean change {bad}")),
                "{e}"
            );
        }
        assert!(words([0.0, -0.999, 999_999.0]).is_ok());

        // One sample or estimate edited at a time.
        let read = |edit: &dyn Fn(&mut serde_json::Value, &mut serde_json::Value)| {
            let d = tempfile::tempdir().unwrap();
            let dir = d.path().join("g/f/new");
            write_set(&dir, "f", 1.0);
            let load = |f: &str| -> serde_json::Value {
                serde_json::from_str(&std::fs::read_to_string(dir.join(f)).unwrap()).unwrap()
            };
            let (mut sample, mut est) = (load("sample.json"), load("estimates.json"));
            edit(&mut sample, &mut est);
            std::fs::write(dir.join("sample.json"), sample.to_string()).unwrap();
            std::fs::write(dir.join("estimates.json"), est.to_string()).unwrap();
            read_benchmark(&dir)
        };
        assert!(read(&|_, _| {}).is_ok());
        let e = read(&|s, _| {
            s["iters"] = serde_json::json!([]);
            s["times"] = serde_json::json!([]);
        })
        .unwrap_err();
        assert!(matches!(
            e,
            ImportError::Counts {
                iters: 0,
                times: 0,
                ..
            }
        ));
        assert!(
            e.to_string()
                .ends_with("sample.json: 0 iteration counts for 0 times"),
            "{e}"
        );
        for (iters, ok) in [(0.5, false), (1.0, true), (1e15, true), (2e15, false)] {
            let r = read(&|s, _| s["iters"][0] = serde_json::json!(iters));
            assert_eq!(r.is_ok(), ok, "iters {iters}: {r:?}");
        }
        for (time, ok) in [
            (-1.0, false),
            (0.0, false),
            (0.5, true),
            (1e15, true),
            (2e15, false),
        ] {
            let r = read(&|s, _| s["times"][0] = serde_json::json!(time));
            assert_eq!(r.is_ok(), ok, "time {time}: {r:?}");
            if !ok {
                assert!(r.unwrap_err().to_string().contains(&format!(
                    "times[0] is {time} (allowed: a finite time in ns above 0)"
                )));
            }
        }
        for (median, ok) in [(-1.0, false), (0.0, true), (1e300, true)] {
            let r = read(&|_, e| e["median"]["point_estimate"] = serde_json::json!(median));
            assert_eq!(r.is_ok(), ok, "median {median}: {r:?}");
        }
    }

    /// A throughput in elements makes each iteration that many operations: every sample and
    /// the median are per operation, as the runner's are; a throughput of 0 elements is one.
    #[test]
    fn a_throughput_in_elements_makes_figures_per_operation() {
        let d = tempfile::tempdir().unwrap();
        let runs = criterion(&fixture()).unwrap();
        let b = runs[0].bench("rusqlite").unwrap();
        let imported = read_benchmark(&fixture().join("single_row_lookup/rusqlite/new")).unwrap();
        assert_eq!(imported.ops_per_iter, 20_000);
        assert_eq!(b.samples.len(), imported.raw.len());
        for (s, (iters, ns)) in b.samples.iter().zip(&imported.raw) {
            let by_hand = *ns as f64 / (*iters as f64 * 20_000.0);
            assert!((s / by_hand - 1.0).abs() < 1e-9, "{s} vs {by_hand}");
        }
        assert_eq!(
            runs[0].start.as_ref().unwrap().env.profile,
            "release",
            "Criterion measures a release build"
        );
        // 0 elements: an iteration is one operation.
        let dir = d.path().join("g/f/new");
        write_set(&dir, "f", 1.0);
        std::fs::write(
            dir.join("benchmark.json"),
            r#"{"group_id":"g","function_id":"f","value_str":null,"throughput":{"Elements":0}}"#,
        )
        .unwrap();
        let zero = read_benchmark(&dir).unwrap();
        assert_eq!(zero.ops_per_iter, 1);
        assert!(zero.median.0.is_finite() && zero.samples.iter().all(|s| s.is_finite()));
    }

    /// An empty function name with a parameter is a bench named by its parameter (Criterion's
    /// `bench_with_input` in a group of its own).
    #[test]
    fn a_benchmark_named_by_its_parameter_alone_is_that_bench() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("g/1000/new");
        write_set(&dir, "unused", 1.0);
        for function in [r#""""#, "null"] {
            std::fs::write(
                dir.join("benchmark.json"),
                format!(r#"{{"group_id":"g","function_id":{function},"value_str":"1000","throughput":null}}"#),
            )
            .unwrap();
            let b = read_benchmark(&dir).unwrap();
            assert_eq!((b.bench.as_str(), b.param), ("1000", None), "{function}");
        }
    }

    /// Result sets are found eight folders down at most, and never in Criterion's `report/`
    /// or `change/` folders.
    #[test]
    fn result_sets_are_searched_eight_folders_down_outside_report_and_change() {
        let d = tempfile::tempdir().unwrap();
        let nested = |levels: usize| {
            let mut p = d.path().to_path_buf();
            for i in 0..levels - 1 {
                p.push(format!("l{levels}_{i}"));
            }
            p.push("new");
            write_set(&p, "f", 1.0);
            p
        };
        let eight = nested(8);
        nested(9);
        write_set(&d.path().join("g/report/new"), "f", 1.0);
        write_set(&d.path().join("g/change/new"), "f", 1.0);
        assert_eq!(result_dirs(d.path()).unwrap(), [eight]);
    }

    #[test]
    fn a_folder_without_criterion_results_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let e = criterion(d.path()).unwrap_err();
        assert!(matches!(e, ImportError::Empty(_)));
        assert!(e.to_string().contains("holds no Criterion results"), "{e}");
    }

    /// Criterion's parameter (`rusqlite/1000`) is not part of the bench's name: the benches of
    /// one parameter value make one run, named as live runs' are, so their ratios work.
    #[test]
    fn a_parameterised_criterion_name_is_its_bench_at_that_parameter() {
        let d = tempfile::tempdir().unwrap();
        for (function, param) in [
            ("rusqlite", "1000"),
            ("turso_raw", "1000"),
            ("rusqlite", "2000"),
        ] {
            let new = d.path().join(format!("g/{function}/{param}/new"));
            std::fs::create_dir_all(&new).unwrap();
            let src = fixture().join("single_row_lookup/rusqlite/new");
            for f in ["sample.json", "estimates.json"] {
                std::fs::copy(src.join(f), new.join(f)).unwrap();
            }
            std::fs::write(
                new.join("benchmark.json"),
                format!(
                    r#"{{"group_id":"g","function_id":"{function}","value_str":"{param}","throughput":null,"full_id":"g/{function}/{param}","directory_name":"g/{function}/{param}","title":"g/{function}/{param}"}}"#
                ),
            )
            .unwrap();
        }
        let runs = criterion(d.path()).unwrap();
        let names = |r: &RunRecord| -> Vec<String> {
            r.benches.iter().map(|b| b.name.raw().to_string()).collect()
        };
        assert_eq!(runs.len(), 2);
        assert_eq!(names(&runs[0]), ["rusqlite", "turso_raw"]);
        assert_eq!(names(&runs[1]), ["rusqlite"]);
        assert_eq!(runs[0].start.as_ref().unwrap().run, "criterion:g/1000");
        assert!(
            runs[0]
                .source
                .as_deref()
                .unwrap()
                .contains("Criterion's parameter 1000")
        );
        let b = bench_core::baselines::Baselines::bench("rusqlite");
        assert!(b.ratio(&runs[0], "turso_raw").unwrap().value > 0.0);
    }
}
