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

fn read_json<T: serde::de::DeserializeOwned>(p: &Path) -> Result<T, String> {
    let (_, v) = crate::files::read_document(p)?;
    serde_json::from_value(v).map_err(|e| format!("{} does not read: {e}", p.display()))
}

/// Every `new/` folder under `root` (Criterion keeps the latest results of a benchmark there).
fn new_dirs(root: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if depth > 6 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for d in dirs {
        if d.file_name().is_some_and(|n| n == "new") && d.join("benchmark.json").is_file() {
            out.push(d);
        } else if d.file_name().is_none_or(|n| n != "report") {
            new_dirs(&d, depth + 1, out);
        }
    }
}

/// Reads one benchmark from its `new/` folder.
pub fn read_benchmark(new: &Path) -> Result<Imported, String> {
    let id: CriterionId = read_json(&new.join("benchmark.json"))?;
    let sample: CriterionSample = read_json(&new.join("sample.json"))?;
    let est: CriterionEstimates = read_json(&new.join("estimates.json"))?;
    if sample.iters.len() != sample.times.len() || sample.iters.is_empty() {
        return Err(format!(
            "{}: {} iteration counts for {} times",
            new.join("sample.json").display(),
            sample.iters.len(),
            sample.times.len()
        ));
    }
    let bad = |what: &str, i: usize, v: f64, allowed: &str| {
        format!(
            "{}: {what}[{i}] is {v} (allowed: {allowed})",
            new.join("sample.json").display()
        )
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
            return Err(format!(
                "{}: the {what} estimate is {v} (allowed: a finite time in ns, 0 or more)",
                new.join("estimates.json").display()
            ));
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

/// A Criterion folder as runs: one per group and parameter value (`group/1000`), each
/// benchmark a bench named by its function id, with its raw samples (summarized as benchscope
/// summarizes its own) and Criterion's estimate beside them.
pub fn criterion(root: &Path) -> Result<Vec<RunRecord>, String> {
    let mut dirs = Vec::new();
    new_dirs(root, 0, &mut dirs);
    if dirs.is_empty() {
        return Err(format!(
            "{} holds no Criterion results (no */new/benchmark.json under it)",
            root.display()
        ));
    }
    let mut groups: BTreeMap<(String, Option<String>), Vec<Imported>> = BTreeMap::new();
    for d in dirs {
        let b = read_benchmark(&d)?;
        groups
            .entry((b.group.clone(), b.param.clone()))
            .or_default()
            .push(b);
    }
    let modified = |p: &Path| {
        std::fs::metadata(p)
            .and_then(|m| m.modified())
            .ok()
            .map(|t| time::OffsetDateTime::from(t).date().to_string())
    };
    Ok(groups
        .into_iter()
        .map(|((group, param), benches)| {
            let mut r = RunRecord::default();
            let max = benches.iter().map(|b| b.samples.len()).max().unwrap_or(0);
            let at = param
                .as_deref()
                .map(|p| format!("/{p}"))
                .unwrap_or_default();
            r.apply(Event::Start(Start {
                run: format!("criterion:{group}{at}"),
                target: group.clone(),
                benches: benches.iter().map(|b| b.bench.clone()).collect(),
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
                },
                env: RunEnv {
                    profile: "release".into(),
                    ..Default::default()
                },
            }));
            let mut notes = Vec::new();
            for b in &benches {
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
            }
            r.done = true;
            let when = modified(&root.join(&group))
                .map(|d| format!(", results of {d}"))
                .unwrap_or_default();
            let param = param
                .map(|p| format!("Criterion's parameter {p}; "))
                .unwrap_or_default();
            r.source = Some(format!(
                "Criterion folder {}{when}; {param}knobs unknown; {}",
                root.display(),
                notes.join("; ")
            ));
            r
        })
        .collect())
}

/// Runs from any file or folder benchscope reads: a Criterion folder, a session journal, a
/// baseline or a report. Each run is marked with where it came from.
pub fn open(path: &Path) -> Result<Vec<RunRecord>, String> {
    if !path.exists() {
        return Err(format!(
            "cannot read {}: no such file or folder",
            path.display()
        ));
    }
    if path.is_dir() {
        let runs = criterion(path)?;
        for r in &runs {
            r.check_figures()
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
        return Ok(runs);
    }
    let mut note = String::new();
    let mut runs: Vec<RunRecord> = if path.extension().is_some_and(|x| x == "jsonl") {
        let s = crate::journal::load(path)?;
        if s.runs.is_empty() {
            return Err(format!(
                "{}: a session journal with no run in it ({} line{} did not read; allowed: the JSON lines an explorer writes)",
                path.display(),
                s.bad_lines,
                if s.bad_lines == 1 { "" } else { "s" }
            ));
        }
        if s.bad_lines > 0 {
            note = format!(
                " ({} line{} of it did not read: cut short or not a journal's)",
                s.bad_lines,
                if s.bad_lines == 1 { "" } else { "s" }
            );
        }
        s.runs.into_iter().map(|r| r.record).collect()
    } else {
        crate::baseline::load(Path::new("."), &path.display().to_string())?.runs
    };
    for (i, r) in runs.iter_mut().enumerate() {
        r.check_figures()
            .map_err(|e| format!("{}: run {}: {e}", path.display(), i + 1))?;
        r.source
            .get_or_insert_with(|| format!("{}{note}", path.display()));
    }
    Ok(runs)
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
            if let Ok(runs) = open(d.path()) {
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
            (s.target.as_str(), s.harness.as_str()),
            ("single_row_lookup", "criterion")
        );
        let names: Vec<&str> = r.benches.iter().map(|b| b.name.as_str()).collect();
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

    #[test]
    fn a_folder_without_criterion_results_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let e = criterion(d.path()).unwrap_err();
        assert!(e.contains("holds no Criterion results"), "{e}");
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
        let names =
            |r: &RunRecord| -> Vec<String> { r.benches.iter().map(|b| b.name.clone()).collect() };
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
