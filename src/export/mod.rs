//! Exporters: pure functions from results to text. Each format in its own file.

pub mod charts;
pub mod csv;
pub mod histogram;
pub mod history;
pub mod html;
pub mod json;
pub mod layout;
pub mod markdown;
pub mod profiles;
pub mod repeats;
pub mod scaling;
pub mod scenario;
pub mod table;

use bench_core::baselines::Baselines;
use bench_core::compare::{ComparisonRow, Settings};
use bench_core::protocol::results::RunRecord;

/// What every exporter is given: the runs to show, side by side, and what they are compared
/// against.
pub struct Report<'a> {
    pub runs: &'a [RunRecord],
    /// The bench every ratio is relative to.
    pub baseline: &'a str,
    /// The run (an index into `runs`) every change and verdict is relative to, if any.
    pub baseline_run: Option<usize>,
    /// The number each run carries in the explorer (1-based), in the order of `runs`.
    pub run_numbers: Option<&'a [usize]>,
    pub settings: Settings,
    /// When the report was made (RFC 3339), passed in so exports stay pure.
    pub generated_at: &'a str,
    /// Whether the text table may colour overheads (a terminal, NO_COLOR unset).
    pub color: bool,
    /// SVG charts written beside the markdown (caption, file name), which it links; or why
    /// there are none.
    pub charts: Option<Result<Vec<(String, String)>, String>>,
    /// Each run's comparison rows, worked out once for every format rendered from this
    /// report ([`Report::comparison`]).
    pub compared: std::cell::OnceCell<Vec<Vec<ComparisonRow>>>,
    /// The groups of runs made the same way and the sweep among the runs, worked out once
    /// for every format ([`Report::repeats`], [`Report::scaling`]).
    pub grouped: std::cell::OnceCell<(Vec<repeats::Repeats>, Option<scaling::Scaling>)>,
}

impl<'a> Report<'a> {
    /// The same report with the charts drawn for it (or why there are none), for the
    /// markdown to link.
    pub fn with_charts(&self, charts: Result<Vec<(String, String)>, String>) -> Report<'a> {
        Report {
            runs: self.runs,
            baseline: self.baseline,
            baseline_run: self.baseline_run,
            run_numbers: self.run_numbers,
            settings: self.settings,
            generated_at: self.generated_at,
            color: self.color,
            charts: Some(charts),
            compared: self.compared.clone(),
            grouped: self.grouped.clone(),
        }
    }

    pub fn new(runs: &'a [RunRecord], baseline: &'a str, generated_at: &'a str) -> Self {
        Report {
            runs,
            baseline,
            baseline_run: None,
            run_numbers: None,
            settings: Settings::default(),
            generated_at,
            color: false,
            charts: None,
            compared: Default::default(),
            grouped: Default::default(),
        }
    }

    /// The comparison model every view reads.
    pub fn baselines(&self) -> Baselines<'_> {
        Baselines {
            bench: self.baseline,
            run: self.baseline_run.and_then(|i| self.runs.get(i)),
            settings: self.settings,
            peers: self.runs.iter().collect(),
        }
    }

    /// The comparison rows of the run at `index` (ratios with their bootstrap intervals,
    /// changes and verdicts): worked out once for all runs, on first use, and shared by the
    /// table, markdown, JSON and CSV.
    pub fn comparison(&self, index: usize) -> &[ComparisonRow] {
        let all = self.compared.get_or_init(|| {
            let baselines = self.baselines();
            self.runs
                .iter()
                .map(|r| bench_core::baselines::comparison(r, &baselines))
                .collect()
        });
        all.get(index).map_or(&[], Vec::as_slice)
    }

    fn grouped(&self) -> &(Vec<repeats::Repeats>, Option<scaling::Scaling>) {
        self.grouped.get_or_init(|| {
            (
                repeats::repeats(self.runs, &self.baselines()),
                scaling::scaling(self.runs),
            )
        })
    }

    /// The groups of runs made the same way, with each bench's spread across them.
    pub fn repeats(&self) -> &[repeats::Repeats] {
        &self.grouped().0
    }

    /// The sweep (or matrix of two knobs) among the runs, if they make one.
    pub fn scaling(&self) -> Option<&scaling::Scaling> {
        self.grouped().1.as_ref()
    }

    /// The change of `bench` in the run at `index` against the baseline run, from its row.
    pub fn change(&self, index: usize, bench: &str) -> Option<&bench_core::compare::Change> {
        self.comparison(index)
            .iter()
            .find(|r| r.bench == bench)?
            .change
            .as_ref()
    }

    /// The run at `index` on its target's two axes (cases x subjects) with the ratios of its
    /// comparison rows, as a section of one table; `None` for other targets.
    pub fn matrix(&self, index: usize) -> Option<bench_core::sections::Section> {
        let run = self.runs.get(index)?;
        let target = bench_core::workloads::find(run.start.as_ref()?.target.raw()).ok()?;
        let rows = self.comparison(index);
        let ratio = |bench: &str| rows.iter().find(|r| r.bench == bench)?.ratio;
        let m = bench_core::matrix::matrix(target, run, &ratio)?;
        Some(bench_core::sections::Section {
            tables: vec![m.table("Matrix: case x backend")],
            ..Default::default()
        })
    }

    /// The number to show for the run at `index`.
    pub fn number(&self, index: usize) -> usize {
        self.run_numbers
            .and_then(|n| n.get(index).copied())
            .unwrap_or(index + 1)
    }

    /// The baseline run's number, when there is one.
    pub fn baseline_number(&self) -> Option<usize> {
        self.baseline_run.map(|i| self.number(i))
    }
}

#[cfg(test)]
mod snapshot_tests {
    //! The exporters on fixed results.
    use super::*;
    use crate::testing;
    use bench_core::knobs::Knobs;
    use bench_core::measure::trace::Phase;
    use bench_core::protocol::results::RunRecord;
    use bench_core::protocol::{Budget, DatasetStatus, Event};

    fn run(rows: u64, debug: bool, spin_median: f64) -> RunRecord {
        let mut knobs = Knobs::default();
        knobs.set("rows", rows);
        knobs.set("lookups", 1000u64);
        let mut r = RunRecord::default();
        let mut start = testing::start(&knobs, true, debug, testing::BUDGET);
        if let Event::Start(s) = &mut start {
            s.benches = ["rusqlite", "middleware/spin", "middleware/interact"]
                .map(String::from)
                .to_vec();
        }
        r.apply(start);
        r.apply(Event::Dataset {
            status: DatasetStatus::Reused,
            rows,
            path: "/cache/x.sqlite".into(),
            build_ms: None,
        });
        for (bench, backend, median) in [
            ("rusqlite", "rusqlite", 1580.0),
            ("middleware/spin", "rusqlite worker pool", spin_median),
        ] {
            let xs: Vec<f64> = (0..20)
                .map(|i| median + (i % 5) as f64 * median / 500.0)
                .collect();
            for e in testing::bench_events(bench, backend, 1000, &xs, Some(1.0)) {
                r.apply(e);
            }
        }
        r.apply(Event::Phases {
            bench: "middleware/spin".into(),
            iter: 19,
            ops: 20_000,
            ns_per_op: [
                (Phase::Checkout, 420.0),
                (Phase::Prepare, 166.0),
                (Phase::Bind, 162.0),
                (Phase::Dispatch, 1490.0),
                (Phase::ExecuteMarshal, 2430.0),
                (Phase::Decode, 454.0),
            ]
            .into(),
        });
        r.apply(Event::Error {
            bench: Some("middleware/interact".into()),
            message: "pool: timed out".into(),
        });
        r.apply(Event::Done);
        r
    }

    const AT: &str = "2026-11-21T23:00:00Z";

    #[test]
    fn csv_side_by_side() {
        let runs = [run(1000, false, 4700.0), run(2000, false, 4900.0)];
        let text = csv::render(&Report::new(&runs, "rusqlite", AT));
        // Every row has every column, and reads back with a CSV reader.
        let mut r = ::csv::Reader::from_reader(text.as_bytes());
        let widths: Vec<usize> = r.records().map(|x| x.unwrap().len()).collect();
        assert_eq!(widths, vec![27; 4]);
        insta::assert_snapshot!(text);
    }

    #[test]
    fn markdown_one_run() {
        let runs = [run(20_000, false, 4390.0)];
        insta::assert_snapshot!(markdown::render(&Report::new(&runs, "rusqlite", AT)));
    }

    #[test]
    fn markdown_side_by_side_with_a_debug_run() {
        let runs = [run(20_000, false, 4390.0), run(40_000, true, 4720.0)];
        insta::assert_snapshot!(markdown::render(&Report::new(&runs, "rusqlite", AT)));
    }

    /// The explorer's baseline run carries into the export: every other run's figures get
    /// the change and verdict the explorer shows, and runs keep the explorer's numbers.
    #[test]
    fn markdown_and_json_carry_verdicts_against_the_baseline_run() {
        let runs = [run(20_000, false, 4390.0), run(20_000, false, 4720.0)];
        let report = Report {
            baseline_run: Some(0),
            run_numbers: Some(&[3, 5]),
            ..Report::new(&runs, "rusqlite", AT)
        };
        let md = markdown::render(&report);
        assert!(md.contains("### Run 5: "), "{md}");
        insta::assert_snapshot!(md);
        let v: serde_json::Value = serde_json::from_str(&json::render(&report)).unwrap();
        assert_eq!(v["baseline_run"], 3);
        let spin = &v["comparison"][1][1];
        assert_eq!(spin["bench"], "middleware/spin");
        // One run a side, 7.5% apart: less than a run can move by.
        assert_eq!(spin["change"]["verdict"], "cannot_tell");
        assert!(
            spin["change"]["basis"]
                .as_str()
                .unwrap()
                .contains("repeat runs"),
            "{spin}"
        );
        assert!(
            v["comparison"][0][1].get("change").is_none(),
            "not against itself"
        );
        let table = table::render(&report);
        assert!(table.contains("vs run 3"), "{table}");
    }

    /// Runs that differ in one knob make a sweep, in two a matrix; in three, neither.
    #[test]
    fn sweeps_over_any_knob_and_matrices() {
        let with = |knobs: &[(&str, bench_core::knobs::KnobValue)], spin: f64| {
            let mut r = run(20_000, false, spin);
            for (k, v) in knobs {
                r.start.as_mut().unwrap().knobs.set(k, v.clone());
            }
            r
        };
        use bench_core::knobs::KnobValue::{Count, Word};
        let rows: Vec<RunRecord> = [(1000, 4000.0), (10_000, 4400.0), (100_000, 5200.0)]
            .into_iter()
            .map(|(n, spin)| with(&[("rows", Count(n))], spin))
            .collect();
        let sc = scaling::scaling(&rows).unwrap();
        assert_eq!(sc.knobs, ["rows"]);
        let text = sc.text();
        assert!(
            text.starts_with("scaling: ops/s by rows (single_row_lookup)\n"),
            "{text}"
        );
        assert!(
            text.contains("bench                  1000   10000  100000\n"),
            "{text}"
        );
        // spin at about 4.0, 4.4 and 5.2 µs a lookup
        assert!(
            text.contains("middleware/spin      249k/s  226k/s  192k/s\n"),
            "{text}"
        );
        let mut matrix = Vec::new();
        for c in [1u64, 4] {
            for mode in ["normal", "exclusive"] {
                matrix.push(with(
                    &[
                        ("concurrency", Count(c)),
                        ("locking_mode", Word(mode.into())),
                    ],
                    4000.0 + c as f64 * 100.0,
                ));
            }
        }
        let sc = scaling::scaling(&matrix).unwrap();
        assert_eq!(sc.knobs, ["concurrency", "locking_mode"]);
        let heads: Vec<String> = sc.points.iter().map(|p| sc.header(p)).collect();
        assert_eq!(
            heads,
            [
                "c=1 locking_mode=normal",
                "c=1 locking_mode=exclusive",
                "c=4* locking_mode=normal",
                "c=4* locking_mode=exclusive"
            ]
        );
        let md = markdown::render(&Report::new(&matrix, "rusqlite", AT));
        assert!(
            md.contains("### Scaling: ops/s by concurrency and locking_mode"),
            "{md}"
        );
        let v: serde_json::Value =
            serde_json::from_str(&json::render(&Report::new(&matrix, "rusqlite", AT))).unwrap();
        assert_eq!(v["scaling"]["knobs"][1], "locking_mode");
        assert_eq!(v["scaling"]["points"][3][1], "exclusive");
        let mut three = matrix.clone();
        three[0].start.as_mut().unwrap().knobs.set("rows", 5u64);
        assert!(scaling::scaling(&three).is_none());
    }

    /// A profiled run: marked, with its by-layer table, top frames and flamegraph link.
    #[test]
    fn a_profiled_run_shows_where_the_cpu_goes() {
        let mut r = run(20_000, false, 4390.0);
        let mut profile = bench_core::profile::breakdown(
            "r;rusqlite::Statement::step;sqlite3_step;fcntl_[k] 45\nr;sqlite3_step 50\nr;malloc 5\n",
            8,
        );
        profile.flamegraph = Some("fg/single_row_lookup-rusqlite-1.svg".into());
        let mut allocations = bench_core::profile::AllocationProfile::of(
            "r;rusqlite::statement::Statement::query_row;rusqlite::row::Row::get 99\nr;bench_core::measure::drive::timed_ops 1\n",
            8,
        );
        allocations.flamegraph = Some("fg/single_row_lookup-rusqlite-1.alloc.svg".into());
        profile.allocations = Some(allocations);
        r.apply(Event::Profile {
            bench: "rusqlite".into(),
            profile,
        });
        r.apply(Event::Profile {
            bench: "middleware/spin".into(),
            profile: bench_core::profile::Profile::failed("perf recorded no samples"),
        });
        assert!(r.profiled);
        let runs = [r];
        let md = markdown::render(&Report::new(&runs, "rusqlite", AT));
        for want in [
            "### Run 1 (profiled: timings include perf): ",
            "#### where the CPU goes (perf, on-CPU samples, by layer)",
            "| bench | CPU sampled | kernel | SQLite (C) | driver | crate | runtime | middleware | allocator | other | flamegraph |",
            "| rusqlite | 100 ns | 45.0% | 50.0% | - | - | - | - | 5.0% | - | [svg](fg/single_row_lookup-rusqlite-1.svg) |",
            "| middleware/spin | - | - | - | - | - | - | - | - | - | none: perf recorded no samples |",
            "- rusqlite: top frames by self time: `sqlite3_step` 50.0%, `fcntl_[k]` 45.0%, `malloc` 5.0%",
            "on-CPU samples only",
            "#### where the allocations come from (every allocation of the samples, by the layer that asked for it)",
            "| bench | allocations | kernel | SQLite (C) | driver | crate | runtime | middleware | allocator | other | flamegraph |",
            "| rusqlite | 100 | - | - | 99.0% | - | - | 1.0% | - | - | [svg](fg/single_row_lookup-rusqlite-1.alloc.svg) |",
            "- rusqlite: top callers of the allocator: `rusqlite::row::Row::get` 99.0%, `bench_core::measure::drive::timed_ops` 1.0%",
        ] {
            assert!(md.contains(want), "{want}\n{md}");
        }
        // A bench whose profile has no allocations (its runner could not count): no row.
        assert!(!md.contains("| middleware/spin | 0 |"), "{md}");
        let text = table::render(&Report::new(&runs, "rusqlite", AT));
        assert!(
            text.contains("release build, PROFILED: timings include perf)"),
            "{text}"
        );
        assert!(text.contains("where the CPU goes"), "{text}");
        assert!(
            text.contains("rusqlite: top callers rusqlite::row::Row::get 99.0%"),
            "{text}"
        );
    }

    /// A run that did not finish says so, and which benches have no result.
    #[test]
    fn an_unfinished_run_is_marked_with_what_it_misses() {
        let mut r = RunRecord::default();
        let mut knobs = Knobs::default();
        knobs.set("rows", 1000u64);
        let mut start = testing::start(&knobs, false, false, testing::BUDGET);
        if let Event::Start(s) = &mut start {
            s.benches = ["rusqlite", "middleware/spin", "decode"]
                .map(String::from)
                .to_vec();
        }
        r.apply(start);
        for e in testing::bench_events("rusqlite", "rusqlite", 10, &[1500.0, 1510.0], None) {
            r.apply(e);
        }
        r.error = Some("interrupted by SIGINT: the benches that finished are kept".into());
        assert_eq!(r.missing(), ["middleware/spin", "decode"]);
        let runs = [r];
        let md = markdown::render(&Report::new(&runs, "rusqlite", AT));
        assert!(md.contains("### Run 1 (incomplete): "), "{md}");
        assert!(
            md.contains(
                "- incomplete: no result for middleware/spin, decode (the run did not finish)"
            ),
            "{md}"
        );
    }

    #[test]
    fn json_document() {
        let runs = [run(20_000, false, 4390.0)];
        let json = json::render(&Report::new(&runs, "rusqlite", AT));
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["schema_version"], json::SCHEMA_VERSION);
        insta::assert_snapshot!(json);
    }

    /// async_contention runs over databases x write delay: every run's table and the matrix.
    #[test]
    fn scenario_runs_make_a_matrix() {
        let mut runs = Vec::new();
        for delay in [100u64, 1000] {
            for dbs in [1u64, 50] {
                let mut knobs = Knobs::default();
                knobs.set("databases", dbs);
                knobs.set("write_delay_ms", delay);
                knobs.set("workers", 2u64);
                let mut r = RunRecord::default();
                let mut start = testing::start(&knobs, false, false, testing::BUDGET);
                if let Event::Start(s) = &mut start {
                    s.target = "async_contention".into();
                }
                r.apply(start);
                let starved = dbs > 1;
                for (bench, reads, kept, canary) in [
                    (
                        "inline",
                        if starved { 2.0 } else { 1280.0 },
                        if starved { 0.06 } else { 1.0 },
                        if starved { 0.0 } else { 0.9 },
                    ),
                    (
                        "spawn_blocking",
                        1170.0 * dbs as f64 / 10.0 + 100.0,
                        1.0,
                        0.9,
                    ),
                    ("worker", 1150.0 * dbs as f64 / 10.0 + 110.0, 1.0, 0.88),
                ] {
                    for e in testing::scenario_events(bench, reads, kept, canary, 3) {
                        r.apply(e);
                    }
                }
                r.apply(Event::Done);
                runs.push(r);
            }
        }
        let report = Report::new(&runs, "spawn_blocking", AT);
        let m = scenario::matrix(&runs).unwrap();
        assert_eq!(
            (m.rows_knob.as_str(), m.section_knob.as_deref()),
            ("databases", Some("write_delay_ms"))
        );
        insta::assert_snapshot!("scenario_table", table::render(&report));
        insta::assert_snapshot!("scenario_markdown", markdown::render(&report));
        let v: serde_json::Value = serde_json::from_str(&json::render(&report)).unwrap();
        let matrix = v["matrix"].as_array().unwrap();
        assert_eq!(matrix.len(), 10, "5 tables per write delay");
        // The study's two figures first: writes/s (30 writes in 3 s) and the mean read.
        assert_eq!(matrix[0][0], "writes/s, write_delay_ms=100");
        assert_eq!(
            matrix[0][2][0],
            serde_json::json!(["1", "10.0", "10.0", "10.0"])
        );
        assert_eq!(matrix[1][0], "read mean, write_delay_ms=100");
        assert_eq!(
            v["runs"][1]["benches"][0]["scenario"]["write_completion"],
            0.06
        );
        // Three runs of each set-up (the second as measured, the others 20% fewer and more
        // reads): each cell is the median run's, whichever order the runs came in.
        let scaled = |r: &RunRecord, by: f64| {
            let mut r = r.clone();
            for b in &mut r.benches {
                if let Some(s) = &mut b.scenario {
                    s.reads_per_s *= by;
                }
            }
            r
        };
        let mut repeated = Vec::new();
        for r in &runs {
            repeated.extend([scaled(r, 1.2), r.clone(), scaled(r, 0.8)]);
        }
        let m = scenario::matrix(&repeated).unwrap();
        let tables = m.tables();
        let (title, _, rows) = &tables[3];
        assert_eq!(title, "reads/s, write_delay_ms=100 (median of 3 runs)");
        let (_, _, single) = &scenario::matrix(&runs).unwrap().tables()[3];
        assert_eq!(
            rows, single,
            "the median run's reads/s, the one as measured"
        );
    }

    /// crud_overhead: each operation against the same on rusqlite, the overall and cached
    /// lines, the sweep's grids and chart.
    #[test]
    fn crud_overhead_tables() {
        let runs = vec![testing::crud_run()];
        let report = Report::new(&runs, "insert/rusqlite", AT);
        insta::assert_snapshot!("crud_table", table::render(&report));
        insta::assert_snapshot!("crud_markdown", markdown::render(&report));
        let coloured = table::render(&Report {
            color: true,
            ..Report::new(&runs, "insert/rusqlite", AT)
        });
        assert!(coloured.contains("\x1b[32m"), "under 2x in green");
        assert!(coloured.contains("\x1b[31m"), "5x and over in red");
        let v: serde_json::Value = serde_json::from_str(&json::render(&report)).unwrap();
        let o = &v["crud_overhead"][0];
        assert_eq!(o["ops"].as_array().unwrap().len(), 16);
        assert_eq!(o["sweep"][0]["speedup"][0], 1.0);
        // The suite's headline: a query's first run against its cached runs (27 against 9 µs).
        assert_eq!(o["first_vs_cached"]["rusqlite"]["value"], 3.0);
    }

    /// The line the explorer shows under a crud_overhead bench, made once for the whole run:
    /// its backend's overall ratio on the mix and SELECT cached against SELECT, as the full
    /// overview (the section's) has them, for every bench of a backend that has either.
    #[test]
    fn crud_bench_lines_carry_the_overviews_ratios() {
        use bench_core::workloads::crud_overhead::report::overview;
        let run = testing::crud_run();
        let lines = bench_core::workloads::sections_of(&run)
            .unwrap()
            .bench_lines(&run);
        let o = overview(&run).unwrap();
        let mut checked = 0;
        for row in &o.ops {
            let overall = o.overall.get(&row.backend);
            let cached = o.cached_vs_select.get(&row.backend);
            if overall.is_none() && cached.is_none() {
                assert!(!lines.contains_key(&row.bench), "{:?}", row.bench);
                continue;
            }
            let line = &lines[&row.bench];
            for r in overall.into_iter().chain(cached) {
                let shown = bench_core::format::ratio(r);
                assert!(
                    line.raw().contains(&shown),
                    "{:?}: {line:?} lacks {shown}",
                    row.bench
                );
            }
            checked += 1;
        }
        assert!(checked > 0, "no bench had a line");
    }

    /// key_value: each group per backend, the suite's targets judged.
    #[test]
    fn key_value_groups_and_targets() {
        let runs = vec![testing::kv_run()];
        let report = Report::new(&runs, "single_get_100b/rusqlite", AT);
        insta::assert_snapshot!("kv_table", table::render(&report));
        insta::assert_snapshot!("kv_markdown", markdown::render(&report));
    }

    /// Benches that wait for another thread a switch or more per operation are marked `~` and
    /// named under the table (their ratios move with how soon a CPU takes the work), unless
    /// the runner was confined to given CPUs.
    #[test]
    fn benches_that_hand_off_their_query_are_named_unless_the_runner_was_confined() {
        let mut r = RunRecord::default();
        r.apply(testing::start(
            &Knobs::default(),
            false,
            false,
            testing::BUDGET,
        ));
        for (bench, median) in [("rusqlite", 1400.0), ("middleware/worker", 9000.0)] {
            for e in testing::bench_events(bench, "b", 1000, &testing::samples(median, 12), None) {
                r.apply(e);
            }
        }
        let note = |r: &RunRecord| {
            table::notes(r, &bench_core::baselines::Baselines::bench("rusqlite"))
                .into_iter()
                .find(|n| n.raw().starts_with("~ hand-offs: "))
        };
        // One voluntary switch per 100 operations: no hand-off.
        assert_eq!(note(&r), None);
        let worker = r
            .benches
            .iter_mut()
            .find(|b| b.name == "middleware/worker")
            .unwrap();
        worker
            .summary
            .as_mut()
            .unwrap()
            .cost
            .as_mut()
            .unwrap()
            .voluntary_per_op = 2.0;
        let row = |r: &RunRecord, name: &str| {
            table::render(&Report::new(std::slice::from_ref(r), "rusqlite", AT))
                .lines()
                .find(|l| l.starts_with(name))
                .unwrap()
                .trim_end()
                .to_string()
        };
        let worker = row(&r, "middleware/worker");
        assert!(worker.contains("] ~ "), "{worker}");
        assert!(!row(&r, "rusqlite").contains('~'));
        let n = note(&r).expect("the worker hands off");
        assert!(
            n.raw().starts_with("~ hand-offs: middleware/worker wait for another thread (a context switch or more per operation)")
                && n.raw().contains("--cpus 0 measures them on one CPU"),
            "{n:?}"
        );
        // Confined, the runner's hand-offs wake no other CPU: nothing to say.
        r.start.as_mut().unwrap().env.cpus = Some(vec![0]);
        assert_eq!(note(&r), None);
        assert!(!row(&r, "middleware/worker").contains(" ~"));
    }

    #[test]
    fn unpaired_ratios_are_said_to_be() {
        let paired = Budget {
            paired: true,
            ..testing::BUDGET
        };
        let mut r = RunRecord::default();
        r.apply(testing::start(&Knobs::default(), false, false, paired));
        for (bench, median) in [
            ("rusqlite", 1400.0),
            ("sqlite3_c", 1300.0),
            ("sqlx", 20000.0),
        ] {
            for e in testing::bench_events(bench, "b", 1000, &testing::samples(median, 12), None) {
                r.apply(e);
            }
        }
        // `bench`'s ratio to rusqlite from 12 rounds.
        let paired = |bench: &str, median: f64, ci95: [f64; 2]| Event::Paired {
            bench: bench.into(),
            against: "rusqlite".into(),
            ratio: bench_core::measure::stats::PairedRatio {
                pairs: 12,
                median,
                ci95,
                processes: Vec::new(),
            },
        };
        r.apply(paired("sqlite3_c", 0.93, [0.92, 0.94]));
        let runs = [r];
        let text = table::render(&Report::new(&runs, "rusqlite", AT));
        let row = |name: &str| {
            text.lines()
                .find(|l| l.starts_with(name))
                .unwrap()
                .to_string()
        };
        assert!(
            row("sqlx ").contains('‡') && !row("sqlite3_c").contains('‡'),
            "{text}"
        );
        assert!(
            text.contains("‡ unpaired: measured in its own harness's runner"),
            "{text}"
        );
        assert!(
            !text.contains("unpaired ratios: the benches ran one after another"),
            "{text}"
        );
        // One group held every paired bench: no word of groups.
        assert!(!text.contains("at a time"), "{text}");
        // Two paired benches in groups of one: said.
        let mut grouped = runs[0].clone();
        if let Some(s) = grouped.start.as_mut() {
            s.budget.group = Some(1);
            s.benches = ["rusqlite", "sqlite3_c", "sqlx"].map(String::from).to_vec();
        }
        grouped.apply(paired("sqlx", 14.0, [13.0, 15.0]));
        let text = table::render(&Report::new(&[grouped], "rusqlite", AT));
        assert!(
            text.contains("took turns sample by sample, at most 1 at a time beside the bench their ratio is taken against (--paired-group)"),
            "{text}"
        );
        let mut unpaired = runs[0].clone();
        if let Some(s) = unpaired.start.as_mut() {
            s.budget.paired = false;
        }
        for b in &mut unpaired.benches {
            b.paired = None;
        }
        let runs = [unpaired];
        let text = table::render(&Report::new(&runs, "rusqlite", AT));
        assert!(!text.contains('‡'), "{text}");
        assert!(
            text.contains("unpaired ratios: the benches ran one after another"),
            "{text}"
        );
    }

    #[test]
    fn table_one_run() {
        let runs = [run(20_000, false, 4390.0)];
        insta::assert_snapshot!(table::render(&Report::new(&runs, "rusqlite", "x")));
    }
}
