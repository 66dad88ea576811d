//! The analysis the explorer draws: every figure of its comparison (ratios with their
//! intervals, changes and verdicts, overhead bands, run-to-run spreads, a workload's own line,
//! the sweep) worked out when the results change (a bench finishes, a run is added, a baseline
//! is picked), never while drawing. Drawing a frame reads it and computes nothing.
//!
//! The results change at most once per finished bench; while a run streams samples nothing here
//! moves. A ratio's bootstrap is made once per pair of finished benches and kept.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::time::{Duration, Instant};

use bench_core::baselines::Baselines;
use bench_core::compare::Band;
use bench_core::compare::{Change, Ratio, Settings, Spread, groups, run_differences, spread};
use bench_core::protocol::results::RunRecord;

use crate::export::scaling::Scaling;

/// A run as the analysis takes it: its id and what it recorded.
#[derive(Clone, Copy)]
pub struct Run<'a> {
    pub id: &'a str,
    pub record: &'a RunRecord,
}

/// What the analysis is made of: the runs shown side by side, and what they are compared with.
pub struct Inputs<'a> {
    pub runs: Vec<Run<'a>>,
    /// The bench ratios are against.
    pub bench: &'a str,
    /// The run verdicts are against (it may be a run of another target).
    pub baseline_run: Option<Run<'a>>,
    pub settings: Settings,
}

/// The figures of one finished bench of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// The bench its ratio is against (its catalog entry's, else the baseline bench).
    pub base: String,
    pub ratio: Option<Ratio>,
    /// Against the same bench of the baseline run.
    pub change: Option<Change>,
    /// How heavy its overhead is, for benches compared with a baseline of their own.
    pub band: Option<Band>,
    /// How its median moves across the runs made with the same knobs.
    pub spread: Option<Spread>,
    /// How its ratio moves across those runs.
    pub ratio_spread: Option<Spread>,
    /// What its workload says of it (its own line, from the workload's sections).
    pub workload: Option<bench_core::text::Text>,
    /// Its run took turns in paired rounds but its ratio was not (a bench of another
    /// harness, measured in its own runner).
    pub unpaired: bool,
}

/// Ratios already resampled: (run, bench, base, samples of each).
type RatioKey = (String, String, String, Figures, Figures);

/// A bench's figures so far, as a key ([`figures`]).
type Figures = (usize, u64, u64);

#[derive(Clone, Default)]
pub struct Analysis {
    fingerprint: Option<u64>,
    built_at: Option<Instant>,
    cells: HashMap<(String, String), Cell>,
    scaling: Option<Scaling>,
    /// Per run, its benches on the target's two axes (cases x subjects), where it has them.
    matrices: HashMap<String, bench_core::matrix::Matrix>,
    ratios: HashMap<RatioKey, Option<Ratio>>,
    /// How many times it was worked out (what the tests check it by).
    pub builds: usize,
}

impl std::fmt::Debug for Analysis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Analysis")
            .field("cells", &self.cells.len())
            .field("builds", &self.builds)
            .finish()
    }
}

impl Analysis {
    /// The least time between two analyses made because a bench finished in a streaming run.
    pub const MIN_GAP: Duration = Duration::from_millis(250);

    /// The figures of `bench` in run `run`, once it finished.
    pub fn cell(&self, run: &str, bench: &str) -> Option<&Cell> {
        self.cells.get(&(run.to_string(), bench.to_string()))
    }

    /// The sweep (or matrix) among the runs, as the exports draw it.
    pub fn scaling(&self) -> Option<&Scaling> {
        self.scaling.as_ref()
    }

    /// Run `run` on its target's two axes (cases x subjects), with the ratios of its cells.
    pub fn matrix(&self, run: &str) -> Option<&bench_core::matrix::Matrix> {
        self.matrices.get(run)
    }

    /// Works the analysis out again when its inputs changed. `urgent` (a key, a run ending)
    /// does it now; otherwise (a bench finished while samples stream) not sooner than
    /// [`Self::MIN_GAP`] after the last time, and the next call catches up. Returns whether
    /// it was worked out.
    pub fn refresh(&mut self, inputs: &Inputs<'_>, now: Instant, urgent: bool) -> bool {
        let fp = fingerprint(inputs);
        if self.fingerprint == Some(fp) {
            return false;
        }
        if !urgent
            && self
                .built_at
                .is_some_and(|at| now.saturating_duration_since(at) < Self::MIN_GAP)
        {
            return false;
        }
        self.build(inputs);
        self.fingerprint = Some(fp);
        self.built_at = Some(now);
        self.builds += 1;
        true
    }

    fn build(&mut self, inputs: &Inputs<'_>) {
        let records: Vec<&RunRecord> = inputs.runs.iter().map(|r| r.record).collect();
        let baselines = Baselines {
            bench: inputs.bench,
            run: inputs.baseline_run.map(|r| r.record),
            settings: inputs.settings,
            peers: records.clone(),
        };
        let mut cells = HashMap::new();
        let groups = groups(&records, |a, b| run_differences(a, b).is_empty());
        for (i, run) in inputs.runs.iter().enumerate() {
            let record = run.record;
            // The runs made the same way as this one: where its spread is taken.
            let same: Vec<&RunRecord> = groups
                .iter()
                .find(|g| g.contains(&i))
                .map(|g| g.iter().map(|&j| records[j]).collect())
                .unwrap_or_default();
            let lines = bench_core::workloads::sections_of(record)
                .map(|s| s.bench_lines(record))
                .unwrap_or_default();
            for b in record.benches.iter().filter(|b| b.summary.is_some()) {
                let name = b.name.raw();
                let base = baselines.base_of(record, name);
                let key = (
                    run.id.to_string(),
                    name.to_string(),
                    base.to_string(),
                    figures(record.bench(name)),
                    figures(record.bench(base)),
                );
                let ratio = self
                    .ratios
                    .entry(key)
                    .or_insert_with(|| baselines.ratio(record, name))
                    .to_owned();
                let band = if base == inputs.bench {
                    None
                } else if base == name {
                    Some(Band::Baseline)
                } else {
                    ratio.as_ref().map(|r| Band::of(r.value))
                };
                let workload = lines.get(&bench_core::text::Text::from(name)).cloned();
                cells.insert(
                    (run.id.to_string(), name.to_string()),
                    Cell {
                        base: base.to_string(),
                        ratio,
                        change: baselines.change(record, name),
                        band,
                        spread: spread(same.iter().copied(), name),
                        ratio_spread: crate::export::repeats::ratio_spread(
                            &baselines,
                            same.iter().copied(),
                            name,
                        ),
                        workload,
                        unpaired: crate::export::table::unpaired_in_paired_run(
                            record, name, &baselines,
                        ),
                    },
                );
            }
        }
        self.matrices = inputs
            .runs
            .iter()
            .filter_map(|run| {
                let target =
                    bench_core::workloads::find(run.record.start.as_ref()?.target.raw()).ok()?;
                let ratio = |bench: &str| {
                    cells
                        .get(&(run.id.to_string(), bench.to_string()))
                        .and_then(|c: &Cell| c.ratio)
                };
                let m = bench_core::matrix::matrix(target, run.record, &ratio)?;
                Some((run.id.to_string(), m))
            })
            .collect();
        self.cells = cells;
        self.scaling = crate::export::scaling::scaling(&records);
        // Keep the resampled ratios of the runs still shown only.
        self.ratios
            .retain(|k, _| inputs.runs.iter().any(|r| r.id == k.0));
    }
}

/// What the analysis depends on, hashed: the runs and their benches' figures so far
/// ([`figures`]), the baselines and the verdict settings. Cheap: it is taken at every tick.
fn fingerprint(inputs: &Inputs<'_>) -> u64 {
    let mut h = DefaultHasher::new();
    inputs.bench.hash(&mut h);
    inputs.baseline_run.map(|r| r.id).hash(&mut h);
    inputs.settings.noise.to_bits().hash(&mut h);
    inputs.settings.alpha.to_bits().hash(&mut h);
    let mut runs: Vec<&Run> = inputs.runs.iter().collect();
    runs.extend(inputs.baseline_run.as_ref());
    for r in runs {
        r.id.hash(&mut h);
        r.record.profiled.hash(&mut h);
        // A bench still streaming its first samples has no figures yet.
        for b in r.record.benches.iter().filter(|b| b.summary.is_some()) {
            figures(Some(b)).hash(&mut h);
        }
    }
    h.finish()
}

/// What a bench's figures are made of so far, as a key: its summary (how many samples, its
/// median) and the ratio paired rounds gave it. A paired ratio comes after the summary, and a
/// run of several processes replaces both after each process; samples streaming in between
/// never count (the analysis is not worked out again for them).
fn figures(b: Option<&bench_core::protocol::results::BenchResult>) -> Figures {
    b.map_or((0, 0, 0), |b| {
        (
            b.summary.as_ref().map_or(0, |s| s.samples),
            b.summary.as_ref().map_or(0, |s| s.median.to_bits()),
            b.paired.as_ref().map_or(0, |(_, p)| p.median.to_bits()),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;

    fn run(median: f64, base: f64) -> RunRecord {
        let mut r = RunRecord::default();
        r.apply(testing::start(
            &bench_core::knobs::Knobs::default(),
            false,
            false,
            testing::BUDGET,
        ));
        for (bench, m) in [("rusqlite", base), ("middleware/spin", median)] {
            for e in testing::bench_events(bench, "b", 1000, &testing::samples(m, 30), None) {
                r.apply(e);
            }
        }
        r
    }

    fn inputs<'a>(runs: &'a [(String, RunRecord)], baseline: Option<usize>) -> Inputs<'a> {
        let as_run = |(id, record): &'a (String, RunRecord)| Run { id, record };
        Inputs {
            runs: runs.iter().map(as_run).collect(),
            bench: "rusqlite",
            baseline_run: baseline.map(|i| as_run(&runs[i])),
            settings: Settings::default(),
        }
    }

    #[test]
    fn the_figures_are_those_of_the_comparison_model() {
        let runs = vec![
            ("a".to_string(), run(4600.0, 1400.0)),
            ("b".to_string(), run(9200.0, 1400.0)),
        ];
        let mut a = Analysis::default();
        assert!(a.refresh(&inputs(&runs, Some(0)), Instant::now(), true));
        let b = Baselines {
            bench: "rusqlite",
            run: Some(&runs[0].1),
            settings: Settings::default(),
            peers: runs.iter().map(|r| &r.1).collect(),
        };
        let cell = a.cell("b", "middleware/spin").unwrap();
        assert_eq!(cell.ratio, b.ratio(&runs[1].1, "middleware/spin"));
        assert_eq!(cell.change, b.change(&runs[1].1, "middleware/spin"));
        assert!((cell.ratio.as_ref().unwrap().value - 9200.0 / 1400.0).abs() < 0.05);
        assert_eq!(a.cell("a", "rusqlite").unwrap().base, "rusqlite");
        assert!(
            a.cell("a", "rusqlite").unwrap().change.is_none(),
            "not against itself"
        );
        let sp = a.cell("a", "middleware/spin").unwrap().spread.unwrap();
        assert_eq!(sp.runs, 2, "both runs were made the same way");
        // Its ratio moved from 4600/1400 to 9200/1400 across them; rusqlite's is no ratio.
        let r = a
            .cell("b", "middleware/spin")
            .unwrap()
            .ratio_spread
            .unwrap();
        assert_eq!(r.runs, 2);
        assert!((r.min - 4600.0 / 1400.0).abs() < 0.05, "{r:?}");
        assert!((r.max - 9200.0 / 1400.0).abs() < 0.05, "{r:?}");
        assert_eq!(a.cell("a", "rusqlite").unwrap().ratio_spread, None);
    }

    #[test]
    fn it_is_worked_out_again_only_when_results_or_baselines_change() {
        let mut runs = vec![("a".to_string(), run(4600.0, 1400.0))];
        let mut a = Analysis::default();
        let t0 = Instant::now();
        assert!(a.refresh(&inputs(&runs, None), t0, false));
        // Nothing changed: nothing to do, however often it is asked.
        assert!(!a.refresh(&inputs(&runs, None), t0 + Duration::from_secs(1), true));
        // A sample streaming into a bench that has not finished changes nothing.
        runs[0].1.apply(bench_core::protocol::Event::BenchStart {
            bench: "middleware/worker".into(),
            backend: "b".into(),
            strategy: None,
            ops: 1000,
            work: None,
            sqlite: Default::default(),
        });
        assert!(!a.refresh(&inputs(&runs, None), t0 + Duration::from_secs(2), false));
        // A baseline picked: at once.
        assert!(a.refresh(&inputs(&runs, Some(0)), t0 + Duration::from_secs(2), true));
        // A bench finished while a run streams: not sooner than MIN_GAP after the last time.
        runs.push(("b".to_string(), run(4700.0, 1400.0)));
        let soon = t0 + Duration::from_secs(2) + Duration::from_millis(10);
        assert!(!a.refresh(&inputs(&runs, Some(0)), soon, false));
        assert!(a.cell("b", "rusqlite").is_none());
        assert!(a.refresh(&inputs(&runs, Some(0)), soon + Analysis::MIN_GAP, false));
        assert!(a.cell("b", "rusqlite").is_some());
        assert_eq!(a.builds, 3);
        // The gap is MIN_GAP exactly: a nanosecond short of it waits, MIN_GAP itself does not.
        let last = soon + Analysis::MIN_GAP;
        runs.push(("c".to_string(), run(4800.0, 1400.0)));
        let short = last + Analysis::MIN_GAP - Duration::from_nanos(1);
        assert!(!a.refresh(&inputs(&runs, Some(0)), short, false));
        assert!(a.refresh(&inputs(&runs, Some(0)), last + Analysis::MIN_GAP, false));
        assert_eq!(a.builds, 4);
    }

    /// Bands colour a bench against its own baseline bench (crud_overhead's: the same
    /// operation on rusqlite); where the base is the run's baseline bench there is no band.
    #[test]
    fn bands_are_for_benches_against_their_own_baseline_bench() {
        let runs = vec![("c".to_string(), testing::crud_run())];
        let mut a = Analysis::default();
        assert!(a.refresh(&inputs(&runs, None), Instant::now(), true));
        let band = |bench: &str| a.cell("c", bench).unwrap().band;
        assert_eq!(band("insert/rusqlite"), Some(Band::Baseline));
        assert_eq!(band("insert/middleware/spin"), Some(Band::Light), "1.6x");
        assert_eq!(band("insert/turso"), Some(Band::Heavy), "3.2x");
        assert_eq!(band("insert/sqlx_sqlite"), Some(Band::Severe), "24x");
        assert_eq!(a.cell("c", "insert/turso").unwrap().base, "insert/rusqlite");
        // single_row_lookup: every ratio is against the run's baseline bench, and no band.
        let runs = vec![("a".to_string(), run(4600.0, 1400.0))];
        let mut a = Analysis::default();
        assert!(a.refresh(&inputs(&runs, None), Instant::now(), true));
        assert_eq!(a.cell("a", "rusqlite").unwrap().band, None);
        assert_eq!(a.cell("a", "middleware/spin").unwrap().band, None);
    }

    /// Ratios resampled for runs no longer shown are dropped; those of the runs shown are kept
    /// and not worked out again.
    #[test]
    fn the_ratio_cache_keeps_the_runs_shown_only() {
        let mut runs = vec![
            ("a".to_string(), run(4600.0, 1400.0)),
            ("b".to_string(), run(4700.0, 1400.0)),
        ];
        let mut a = Analysis::default();
        assert!(a.refresh(&inputs(&runs, None), Instant::now(), true));
        let shown = |a: &Analysis| {
            let mut ids: Vec<String> = a.ratios.keys().map(|k| k.0.clone()).collect();
            ids.sort();
            ids.dedup();
            ids
        };
        assert_eq!(shown(&a), ["a", "b"]);
        runs.remove(0);
        assert!(a.refresh(&inputs(&runs, None), Instant::now(), true));
        assert_eq!(shown(&a), ["b"]);
    }

    #[test]
    fn its_debug_form_says_what_it_holds() {
        let runs = vec![("a".to_string(), run(4600.0, 1400.0))];
        let mut a = Analysis::default();
        a.refresh(&inputs(&runs, None), Instant::now(), true);
        assert_eq!(format!("{a:?}"), "Analysis { cells: 2, builds: 1 }");
    }
}
