//! Screens drawn on ratatui's TestBackend and compared with insta snapshots, at 80x24 and
//! 120x40, compact at 60x16, and the too-small message.

use std::time::{Duration, Instant};

use bench_core::knobs;
use bench_core::measure::trace::Phase;
use bench_core::protocol::{Budget, DatasetStatus, Event};
use bench_core::workloads::single_row_lookup;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use crate::messages::{Outcome, RunEvent};
use crate::model::keys::Key;
use crate::model::{Action, State, update};
use crate::testing::{self, samples};

fn base_state() -> State {
    let k = knobs::resolve(&single_row_lookup::spec().knobs, &|_| None, &[]).unwrap();
    let mut s = State::new(single_row_lookup::spec(), k, false, Default::default());
    s.session.id_prefix = "t".into();
    s.session.color = false;
    s
}

fn ev(s: &mut State, run: &str, event: Event, now: Instant) {
    update(
        s,
        Action::Run(RunEvent::Event {
            run_id: run.into(),
            event,
            line: String::new(),
        }),
        now,
    );
}

fn exited(s: &mut State, run: &str, outcome: Outcome, now: Instant) {
    update(
        s,
        Action::Run(RunEvent::Exited {
            run_id: run.into(),
            outcome,
        }),
        now,
    );
}

fn keys(s: &mut State, keys: &[Key], now: Instant) {
    for k in keys {
        update(s, Action::Key(*k), now);
    }
}

fn start(debug: bool, knobs: &bench_core::knobs::Knobs) -> Event {
    let budget = Budget {
        warmup_s: 0.1,
        ..testing::BUDGET
    };
    testing::start(knobs, true, debug, budget)
}

/// A finished bench of 30 samples around `median`; with `phases`, a phase window every third
/// sample.
fn finish(s: &mut State, run: &str, bench: &str, median: f64, phases: bool, now: Instant) {
    let xs = samples(median, 30);
    for e in testing::bench_events(bench, "b", 1000, &xs, Some(1.1)) {
        ev(s, run, e, now);
    }
    if !phases {
        return;
    }
    for i in (0..xs.len()).step_by(3) {
        let scale = 1.0 + (i % 5) as f64 / 20.0;
        let ns_per_op = [
            (Phase::Checkout, 0.09 * median * scale),
            (Phase::Prepare, 0.04 * median),
            (Phase::Bind, 0.03 * median),
            (Phase::Dispatch, 0.3 * median * scale),
            (Phase::ExecuteMarshal, 0.45 * median),
            (Phase::Decode, 0.09 * median),
        ]
        .into_iter()
        .collect();
        ev(
            s,
            run,
            Event::Phases {
                bench: bench.into(),
                iter: i as u64,
                ops: 3000,
                ns_per_op,
            },
            now,
        );
    }
}

/// Two finished runs side by side (the second with more rows and trace on), a third running.
fn busy_state() -> State {
    let mut s = base_state();
    let t = Instant::now();
    keys(
        &mut s,
        &[
            Key::Char(' '),
            Key::Down,
            Key::Down,
            Key::Down,
            Key::Down,
            Key::Down,
            Key::Char(' '),
            Key::Enter,
        ],
        t,
    );
    let k1 = s.knobs.values.clone();
    ev(&mut s, "t-1", start(false, &k1), t);
    ev(
        &mut s,
        "t-1",
        Event::Dataset {
            status: DatasetStatus::Built,
            rows: 1000,
            path: "p".into(),
            build_ms: Some(3.0),
        },
        t,
    );
    finish(&mut s, "t-1", "rusqlite", 1580.0, false, t);
    finish(&mut s, "t-1", "middleware/spin", 4390.0, false, t);
    exited(&mut s, "t-1", Outcome::Completed, t);
    keys(
        &mut s,
        &[
            Key::Tab,
            Key::Char('+'),
            Key::Char('t'),
            Key::BackTab,
            Key::Enter,
        ],
        t,
    );
    let k2 = s.knobs.values.clone();
    ev(&mut s, "t-2", start(false, &k2), t);
    finish(&mut s, "t-2", "rusqlite", 1610.0, false, t);
    finish(&mut s, "t-2", "middleware/spin", 4720.0, true, t);
    exited(&mut s, "t-2", Outcome::Completed, t);
    keys(&mut s, &[Key::Enter], t);
    ev(&mut s, "t-3", start(false, &k2), t);
    ev(
        &mut s,
        "t-3",
        Event::BenchStart {
            bench: "rusqlite".into(),
            backend: "b".into(),
            strategy: None,
            ops: 1000,
            work: None,
            sqlite: Default::default(),
        },
        t,
    );
    for (i, x) in samples(1600.0, 12).iter().enumerate() {
        ev(
            &mut s,
            "t-3",
            Event::Sample {
                bench: "rusqlite".into(),
                iter: i as u64,
                ops: 1000,
                elapsed_ns: (x * 1000.0) as u64,
                work: None,
                cost: None,
                memory: None,
            },
            t,
        );
    }
    update(&mut s, Action::Tick, t + Duration::from_secs(1));
    s
}

/// The frame the explorer draws once its analysis caught up with the results (a tick does
/// that at most MIN_GAP after a bench finished while a run streams).
fn draw(state: &mut State, w: u16, h: u16) -> String {
    state.refresh_analysis(state.now, true);
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| super::render(state, f)).unwrap();
    let buf = term.backend().buffer().clone();
    let mut out = String::new();
    for y in 0..h {
        let line: String = (0..w).map(|x| buf[(x, y)].symbol().to_string()).collect();
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[test]
fn empty_explorer() {
    let mut s = base_state();
    insta::assert_snapshot!("empty_80x24", draw(&mut s, 80, 24));
    insta::assert_snapshot!("empty_120x40", draw(&mut s, 120, 40));
}

#[test]
fn each_panel_focused() {
    let mut s = busy_state();
    let t = s.now;
    for (i, name) in ["catalog", "knobs", "live", "compare"].iter().enumerate() {
        if i > 0 {
            keys(&mut s, &[Key::Tab], t);
        }
        insta::assert_snapshot!(format!("{name}_80x24"), draw(&mut s, 80, 24));
        insta::assert_snapshot!(format!("{name}_120x40"), draw(&mut s, 120, 40));
    }
}

#[test]
fn live_phase_sparklines_and_knob_error() {
    let mut s = busy_state();
    let t = s.now;
    // Show run 2's traced bench in the live panel: cancel run 3 so the latest run with results shows.
    keys(&mut s, &[Key::Tab, Key::Tab, Key::Char('c')], t);
    exited(&mut s, "t-3", Outcome::Cancelled, t);
    s.runs.retain(|r| r.id != "t-3");
    keys(&mut s, &[Key::Down], t);
    insta::assert_snapshot!("live_phases_120x40", draw(&mut s, 120, 40));
    keys(
        &mut s,
        &[Key::BackTab, Key::Enter, Key::Char('0'), Key::Enter],
        t,
    );
    insta::assert_snapshot!("knob_error_80x24", draw(&mut s, 80, 24));
    // The sweep prompt on the same knob: the values offered, then what was typed.
    keys(
        &mut s,
        &[Key::Esc, Key::Char('s'), Key::Char(' '), Key::Char('c')],
        t,
    );
    insta::assert_snapshot!("knob_sweep_80x24", draw(&mut s, 80, 24));
}

#[test]
fn compare_with_baselines_and_a_debug_run() {
    let mut s = busy_state();
    let t = s.now;
    let k = s.knobs.values.clone();
    ev(&mut s, "t-3", start(true, &k), t);
    keys(
        &mut s,
        &[
            Key::BackTab,
            Key::Left,
            Key::Left,
            Key::Char('B'),
            Key::Right,
            Key::Down,
            Key::Char('b'),
        ],
        t,
    );
    insta::assert_snapshot!("compare_baselines_120x40", draw(&mut s, 120, 40));
}

#[test]
fn help_and_quit_overlays() {
    let mut s = busy_state();
    let t = s.now;
    keys(&mut s, &[Key::Char('?')], t);
    insta::assert_snapshot!("help_80x24", draw(&mut s, 80, 24));
    insta::assert_snapshot!("help_120x40", draw(&mut s, 120, 40));
    keys(&mut s, &[Key::Esc, Key::Char('q')], t);
    insta::assert_snapshot!("confirm_quit_80x24", draw(&mut s, 80, 24));
}

#[test]
fn compact_and_too_small() {
    let mut s = busy_state();
    insta::assert_snapshot!("compact_60x16", draw(&mut s, 60, 16));
    insta::assert_snapshot!("compact_40x12", draw(&mut s, 40, 12));
    insta::assert_snapshot!("too_small_39x12", draw(&mut s, 39, 12));
    insta::assert_snapshot!("too_small_80x11", draw(&mut s, 80, 11));
}

/// async_contention in the explorer: a scenario's reads/s and p99 over time with the gauges,
/// and its figures in the comparison.
#[test]
fn a_scenario_live_and_in_the_comparison() {
    let t = bench_core::workloads::async_contention::spec();
    let k = knobs::resolve(&t.knobs, &|_| None, &[]).unwrap();
    let mut s = State::new(t, k.clone(), false, Default::default());
    s.session.id_prefix = "t".into();
    s.session.color = false;
    let now = s.now;
    keys(&mut s, &[Key::Char(' '), Key::Char(' '), Key::Enter], now);
    let mut start = testing::start(&k, false, false, testing::BUDGET);
    if let Event::Start(st) = &mut start {
        st.target = t.name.into();
    }
    ev(&mut s, "t-1", start, now);
    for e in testing::scenario_events("inline", 2.0, 0.06, 0.0, 10) {
        ev(&mut s, "t-1", e, now);
    }
    let running = testing::scenario_events("spawn_blocking", 5650.0, 0.93, 0.9, 6);
    for e in &running[..running.len() - 1] {
        ev(&mut s, "t-1", e.clone(), now);
    }
    keys(&mut s, &[Key::Tab, Key::Tab, Key::Down], now);
    insta::assert_snapshot!("scenario_live_120x40", draw(&mut s, 120, 40));
    ev(&mut s, "t-1", running.last().unwrap().clone(), now);
    exited(&mut s, "t-1", Outcome::Completed, now);
    keys(&mut s, &[Key::Tab], now);
    insta::assert_snapshot!("scenario_compare_120x40", draw(&mut s, 120, 40));
}

/// crud_overhead in the comparison: every bench against the same operation on rusqlite, and
/// the backend's overall and cached lines under the selected bench.
#[test]
fn crud_overhead_in_the_comparison() {
    let t = bench_core::workloads::crud_overhead::spec();
    let k = knobs::resolve(&t.knobs, &|_| None, &[]).unwrap();
    let mut s = State::new(t, k, false, Default::default());
    s.session.id_prefix = "t".into();
    s.session.color = false;
    let now = s.now;
    let run = testing::crud_run();
    for b in &run.benches {
        let name = t.spec(b.name.raw()).unwrap().name;
        s.catalog.marked.insert(name);
    }
    keys(&mut s, &[Key::Enter], now);
    ev(&mut s, "t-1", Event::Start(run.start.clone().unwrap()), now);
    for b in &run.benches {
        for e in testing::bench_events(
            b.name.raw(),
            b.backend.raw(),
            b.ops,
            &b.samples,
            b.summary.as_ref().unwrap().latency.map(|_| 1.3),
        ) {
            ev(&mut s, "t-1", e, now);
        }
    }
    ev(&mut s, "t-1", Event::Done, now);
    exited(&mut s, "t-1", Outcome::Completed, now);
    keys(
        &mut s,
        &[
            Key::Tab,
            Key::Tab,
            Key::Tab,
            Key::Down,
            Key::Down,
            Key::Down,
            Key::Down,
        ],
        now,
    );
    insta::assert_snapshot!("crud_compare_120x40", draw(&mut s, 120, 40));
    // `m`: the same run as operations x backends, the selected cell's figures below; the
    // catalog's filter narrows its rows too.
    keys(&mut s, &[Key::Char('m'), Key::Right, Key::Down], now);
    insta::assert_snapshot!("crud_matrix_120x40", draw(&mut s, 120, 40));
    insta::assert_snapshot!("crud_matrix_80x24", draw(&mut s, 80, 24));
    keys(&mut s, &[Key::Tab, Key::Char('/')], now);
    for c in "select".chars() {
        keys(&mut s, &[Key::Char(c)], now);
    }
    keys(&mut s, &[Key::Enter], now);
    keys(&mut s, &[Key::BackTab], now);
    assert_eq!(s.catalog.filter, "select");
    let (_, m, rows) = s.matrix_view().unwrap();
    let names: Vec<&str> = rows.iter().map(|&i| m.rows[i].as_str()).collect();
    assert_eq!(names, ["select", "select_cached", "select_first"]);
    // The selected cell (second row, second column: → and ↓ were pressed) is the one drawn
    // highlighted, among the rows shown.
    assert_eq!((s.compare.matrix_row, s.compare.matrix_col), (1, 1));
    assert_eq!(
        s.matrix_bench().as_deref(),
        Some("select_cached/middleware/spin")
    );
    insta::assert_snapshot!("crud_matrix_filtered_120x40", draw(&mut s, 120, 40));
    // The arrows keep within the run's matrix: four backends, three rows shown.
    keys(&mut s, &[Key::Right; 10], now);
    keys(&mut s, &[Key::Down; 5], now);
    assert_eq!((s.compare.matrix_row, s.compare.matrix_col), (2, 3));
    keys(&mut s, &[Key::Left], now);
    assert_eq!(s.matrix_bench().as_deref(), Some("select_first/turso"));
}

/// A bench profiled with `f`: its column is marked, and the detail shows its CPU by layer,
/// top frames and flamegraph (from the recorded profile in the test fixtures).
#[test]
fn a_profiled_bench_in_the_comparison() {
    let mut s = base_state();
    let t = Instant::now();
    keys(&mut s, &[Key::Char('f')], t);
    let k = s.knobs.values.clone();
    ev(&mut s, "t-1", start(false, &k), t);
    finish(&mut s, "t-1", "rusqlite", 1430.0, false, t);
    let mut profile = bench_core::profile::breakdown(
        include_str!("../../tests/fixtures/rusqlite.folded"),
        crate::profile::TOP_FRAMES,
    );
    profile.flamegraph = Some("snapshots/flamegraphs/single_row_lookup-rusqlite-t-1.svg".into());
    let mut allocations = bench_core::profile::AllocationProfile::of(
        "r;rusqlite::statement::Statement::query_row;rusqlite::row::Row::get 99\nr;bench_core::measure::drive::timed_ops 1\n",
        crate::profile::TOP_FRAMES,
    );
    allocations.flamegraph =
        Some("snapshots/flamegraphs/single_row_lookup-rusqlite-t-1.alloc.svg".into());
    profile.allocations = Some(allocations);
    ev(
        &mut s,
        "t-1",
        Event::Profile {
            bench: "rusqlite".into(),
            profile,
        },
        t,
    );
    exited(&mut s, "t-1", Outcome::Completed, t);
    keys(&mut s, &[Key::BackTab], t);
    insta::assert_snapshot!("profiled_120x40", draw(&mut s, 120, 40));
    // Where the allocations come from, under the CPU's, where the detail has the rows.
    let tall = draw(&mut s, 120, 60);
    assert!(
        tall.contains("allocations by layer: driver 99%, middleware 1%"),
        "{tall}"
    );
    assert!(
        tall.contains("top callers: rusqlite::row::Row::get 99.0%"),
        "{tall}"
    );
}

/// `g` in the comparison shows the scaling table and chart of runs that differ in a knob.
#[test]
fn a_sweep_scaling_overlay() {
    let mut s = base_state();
    let t = Instant::now();
    for (i, rows) in [(1, 1000u64), (2, 8000)] {
        s.knobs.values.set("rows", rows);
        keys(&mut s, &[Key::Enter], t);
        let id = format!("t-{i}");
        let k = s.knobs.values.clone();
        ev(&mut s, &id, start(false, &k), t);
        finish(&mut s, &id, "rusqlite", 1400.0 + i as f64 * 300.0, false, t);
        exited(&mut s, &id, Outcome::Completed, t);
    }
    keys(&mut s, &[Key::BackTab, Key::Char('g')], t);
    insta::assert_snapshot!("scaling_overlay_80x24", draw(&mut s, 80, 24));
}

/// A first sqlx run while its harness builds: the core bench done, the sqlx bench waiting,
/// the build's progress where its figures will be.
#[test]
fn a_run_while_the_sqlx_harness_builds() {
    let mut s = base_state();
    let t = Instant::now();
    update(
        &mut s,
        Action::Harness(
            bench_core::catalog::Harness::Sqlx,
            crate::messages::HarnessBuild::Building {
                done: 112,
                total: Some(276),
                current: "sqlx-core".into(),
            },
        ),
        t,
    );
    insta::assert_snapshot!("harness_building_idle_80x24", draw(&mut s, 80, 24));
    let k = crate::testing::keys_to_run_rusqlite_and_sqlx(&s);
    keys(&mut s, &k, t);
    let k1 = s.knobs.values.clone();
    ev(&mut s, "t-1", start(false, &k1), t);
    finish(&mut s, "t-1", "rusqlite", 1400.0, false, t);
    insta::assert_snapshot!("harness_building_run_120x40", draw(&mut s, 120, 40));
}

/// The questions about results on disk: reopening the last session at start, and quitting
/// with results no export holds.
#[test]
fn reopen_and_unexported_quit_questions() {
    let mut s = base_state();
    let t = Instant::now();
    let mut record = bench_core::protocol::results::RunRecord::default();
    for e in testing::bench_events("rusqlite", "b", 1000, &samples(1400.0, 10), None) {
        record.apply(e);
    }
    let run = crate::journal::Run {
        run_id: "old-1".into(),
        seq: 1,
        target: "single_row_lookup".into(),
        benches: vec!["rusqlite".into()],
        knobs: s.knobs.values.clone(),
        trace: false,
        profiled: false,
        record,
        outcome: Some("finished".into()),
    };
    s.session.offer = Some(crate::journal::Session {
        path: "/home/u/.local/share/benchscope/sessions/session-20261123T101500-4242.jsonl".into(),
        runs: vec![run],
        ..Default::default()
    });
    s.overlay = Some(crate::model::Overlay::Reopen);
    insta::assert_snapshot!("reopen_80x24", draw(&mut s, 80, 24));
    keys(&mut s, &[Key::Char('y')], t);
    keys(&mut s, &[Key::Char('q')], t);
    insta::assert_snapshot!("quit_unexported_120x40", draw(&mut s, 120, 40));
}

/// Run 1 of rusqlite, finished.
fn one_finished_run() -> (State, Instant) {
    let mut s = base_state();
    let t = Instant::now();
    keys(&mut s, &[Key::Enter], t);
    let k = s.knobs.values.clone();
    ev(&mut s, "t-1", start(false, &k), t);
    finish(&mut s, "t-1", "rusqlite", 1400.0, false, t);
    exited(&mut s, "t-1", Outcome::Completed, t);
    (s, t)
}

/// A sweep asked about on top of a long queue; the queue's length on the progress line.
#[test]
fn a_sweep_on_a_long_queue() {
    let mut s = base_state();
    let t = Instant::now();
    keys(&mut s, &[Key::Char('s'), Key::Enter, Key::Char('s')], t);
    insta::assert_snapshot!("confirm_sweep_80x24", draw(&mut s, 80, 24));
}

/// `d` on a comparison cell: the bench's distribution.
#[test]
fn a_histogram_overlay() {
    let (mut s, t) = one_finished_run();
    keys(&mut s, &[Key::BackTab, Key::Char('d')], t);
    insta::assert_snapshot!("histogram_120x40", draw(&mut s, 120, 40));
}

/// `H` on a comparison row: the bench's history from the results store, its step marked and
/// this run's value placed against the newest point; `update` asks for the history, the
/// loop's answer fills it in.
#[test]
fn a_history_overlay() {
    let (mut s, t) = one_finished_run();
    let effects = crate::model::update(&mut s, crate::model::Action::Key(Key::BackTab), t);
    assert!(effects.is_empty());
    let effects = crate::model::update(&mut s, crate::model::Action::Key(Key::Char('H')), t);
    assert_eq!(
        effects,
        vec![crate::model::Effect::LoadHistory {
            target: "single_row_lookup".into(),
            bench: "rusqlite".into()
        }]
    );
    assert!(draw(&mut s, 100, 30).contains("reading the history of rusqlite"));
    let points: Vec<crate::store::Point> = (0..20)
        .map(|i| crate::store::Point {
            run: i,
            recorded_at: format!("2026-11-25T10:00:{i:02}Z"),
            machine_id: "m".into(),
            machine_name: "vm-1".into(),
            cpu: "Test CPU".into(),
            cores: 2,
            kernel: "Linux 6.1".into(),
            commit: None,
            dirty: None,
            label: Some(format!("c{i:02}")),
            target: "single_row_lookup".into(),
            knobs: "{}".into(),
            build_profile: "release".into(),
            cpu_idle: Some("slept".into()),
            cpus: None,
            bench: "rusqlite".into(),
            median: if i < 12 { 1330.0 } else { 1400.0 } + (i % 3) as f64,
            ci: [1300.0, 1450.0],
            allocs: None,
        })
        .collect();
    let series = crate::history::series(&points, 0.02, &Default::default());
    crate::model::update(
        &mut s,
        crate::model::Action::HistoryLoaded {
            bench: "rusqlite".into(),
            result: Ok(series),
        },
        t,
    );
    insta::assert_snapshot!("history_100x30", draw(&mut s, 100, 30));
    keys(&mut s, &[Key::Char('x')], t);
    assert!(s.overlay.is_none(), "any key closes it");
}

/// `benchscope open target/criterion`: a Criterion folder's results as a read-only column.
#[test]
fn a_criterion_folder_opened_beside_a_run() {
    let (mut s, t) = one_finished_run();
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/criterion");
    let runs = crate::import::criterion(&dir).unwrap();
    s.show_saved(runs, None, "tests/fixtures/criterion");
    s.status.as_mut().unwrap().text = s
        .status
        .as_ref()
        .unwrap()
        .text
        .replace(env!("CARGO_MANIFEST_DIR"), "");
    for r in &mut s.runs {
        if let Some(src) = &mut r.record.source {
            *src = src
                .replace(env!("CARGO_MANIFEST_DIR"), "")
                .split(", results of")
                .next()
                .unwrap()
                .to_string()
                + &src
                    .split("; knobs")
                    .nth(1)
                    .map(|x| format!("; knobs{x}"))
                    .unwrap_or_default();
        }
    }
    keys(&mut s, &[Key::BackTab], t);
    insta::assert_snapshot!("criterion_opened_120x40", draw(&mut s, 120, 40));
}

/// `o`: the path of saved results typed on the status line, with the reason a path failed.
#[test]
fn the_open_line() {
    let mut s = base_state();
    let t = Instant::now();
    let mut k = vec![Key::Char('o')];
    k.extend("snapshots/old.json".chars().map(Key::Char));
    keys(&mut s, &k, t);
    insta::assert_snapshot!("open_line_120x40", draw(&mut s, 120, 40));
    update(
        &mut s,
        Action::Opened(Err(
            "cannot read snapshots/old.json: no such file or folder".into(),
        )),
        t,
    );
    insta::assert_snapshot!("open_line_error_80x24", draw(&mut s, 80, 24));
}

/// `S` in the comparison: the baseline's name typed on the status line (offered as the
/// target and the time, here replaced), then a name refused with the reason.
#[test]
fn the_baseline_name_line() {
    let (mut s, t) = one_finished_run();
    keys(&mut s, &[Key::BackTab, Key::Char('S')], t);
    let offered = s.prompt.text.clone().unwrap_or_default();
    let mut k = vec![Key::Backspace; offered.len()];
    k.extend("main".chars().map(Key::Char));
    keys(&mut s, &k, t);
    let screen = draw(&mut s, 120, 40);
    let status = screen.lines().rev().nth(1).unwrap_or_default().to_string();
    insta::assert_snapshot!("baseline_name_line", status);
    k = vec![Key::Char('/'), Key::Enter];
    keys(&mut s, &k, t);
    let screen = draw(&mut s, 120, 40);
    let status = screen.lines().rev().nth(1).unwrap_or_default().to_string();
    insta::assert_snapshot!("baseline_name_refused", status);
}

/// Every target's catalog, knobs and status line as drawn: no markdown code span's backticks
/// (the catalog's texts are written for the docs), and no heading with nothing under it.
#[test]
fn catalog_texts_are_drawn_without_markdown() {
    let mut s = base_state();
    let now = Instant::now();
    for _ in bench_core::workloads::targets() {
        // Right in the catalog switches to the next target and says its description.
        keys(&mut s, &[Key::Right], now);
        let screen = draw(&mut s, 200, 60);
        assert!(s.status.is_some(), "{screen}");
        assert!(!screen.contains('`'), "{}:\n{screen}", s.target.name);
        assert!(!screen.contains("planned"), "{}:\n{screen}", s.target.name);
    }
}

/// `/spin` typed in the catalog of a busy explorer: the catalog and the comparison's rows
/// narrowed, the filter and its count on screen, the hints of the typed line; then kept
/// (enter), at 80x24 and 120x40.
#[test]
fn the_catalog_filtered() {
    let mut s = busy_state();
    let t = s.now;
    keys(&mut s, &[Key::Char('/'), Key::Char('s'), Key::Char('p')], t);
    keys(&mut s, &[Key::Char('i'), Key::Char('n')], t);
    insta::assert_snapshot!("filter_typed_120x40", draw(&mut s, 120, 40));
    keys(&mut s, &[Key::Enter], t);
    insta::assert_snapshot!("filter_kept_80x24", draw(&mut s, 80, 24));
    insta::assert_snapshot!("filter_kept_120x40", draw(&mut s, 120, 40));
}

/// key_value's 306 benches with every group folded (`Z`): one row per group, a marked group
/// shown whole, then one group opened again (`z`), at 120x40.
#[test]
fn key_value_groups_folded() {
    let t = bench_core::workloads::key_value::spec();
    let k = knobs::resolve(&t.knobs, &|_| None, &[]).unwrap();
    let mut s = State::new(t, k, false, Default::default());
    s.session.id_prefix = "t".into();
    s.session.color = false;
    let now = s.now;
    keys(&mut s, &[Key::Char('Z'), Key::Down, Key::Char(' ')], now);
    insta::assert_snapshot!("kv_folded_120x40", draw(&mut s, 120, 40));
    keys(&mut s, &[Key::Up, Key::Char('z')], now);
    insta::assert_snapshot!("kv_one_group_open_120x40", draw(&mut s, 120, 40));
}

/// The detail of a bench that hands its query to another thread says that, on every CPU, its
/// ratio moves from run to run; confined to one CPU (`--cpus 0`) it does not.
#[test]
fn the_detail_says_how_far_a_ratio_moved_across_runs_made_the_same_way() {
    let mut s = base_state();
    let t = Instant::now();
    s.catalog.marked.extend(["rusqlite", "middleware/worker"]);
    let k = s.knobs.values.clone();
    // Two runs with the same knobs: the worker at 8.39x rusqlite, then 9.09x.
    for (id, worker) in [("t-1", 12_000.0), ("t-2", 13_000.0)] {
        keys(&mut s, &[Key::Enter], t);
        ev(&mut s, id, start(false, &k), t);
        finish(&mut s, id, "rusqlite", 1430.0, false, t);
        finish(&mut s, id, "middleware/worker", worker, false, t);
        exited(&mut s, id, Outcome::Completed, t);
    }
    keys(&mut s, &[Key::BackTab, Key::Down], t);
    let text = draw(&mut s, 400, 40).replace('\u{a0}', " ");
    let (lo, hi) = (12_000.0 / 1430.0, 13_000.0 / 1430.0);
    let apart = (hi - lo) / ((lo + hi) / 2.0) * 100.0;
    let want = format!("its ratio {lo:.2}–{hi:.2}x ({apart:.1}% apart)");
    assert!(text.contains(&want), "{want} in\n{text}");
    assert!(text.contains("across 2 runs with these knobs"), "{text}");
}

#[test]
fn a_bench_that_hands_off_says_so_in_its_detail() {
    let detail = |cpus: Option<Vec<usize>>| {
        let mut s = base_state();
        let t = Instant::now();
        s.catalog.marked.extend(["rusqlite", "middleware/worker"]);
        keys(&mut s, &[Key::Enter], t);
        let k = s.knobs.values.clone();
        let mut first = start(false, &k);
        if let Event::Start(st) = &mut first {
            st.env.cpus = cpus;
        }
        ev(&mut s, "t-1", first, t);
        finish(&mut s, "t-1", "rusqlite", 1430.0, false, t);
        let xs = samples(12_000.0, 30);
        for mut e in testing::bench_events("middleware/worker", "b", 1000, &xs, Some(1.1)) {
            if let Event::Summary { stats, .. } = &mut e {
                stats.cost.as_mut().unwrap().voluntary_per_op = 2.0;
            }
            ev(&mut s, "t-1", e, t);
        }
        exited(&mut s, "t-1", Outcome::Completed, t);
        keys(&mut s, &[Key::BackTab, Key::Down], t);
        // Drawn text keeps some words together with no-break spaces.
        draw(&mut s, 400, 40).replace('\u{a0}', " ")
    };
    let free = detail(None);
    assert!(
        free.contains("middleware/worker · run 1")
            && free.contains("hands its query to another thread (2.0 switches/op): on every CPU its ratio moves from run to run"),
        "{free}"
    );
    let confined = detail(Some(vec![0]));
    assert!(
        confined.contains("middleware/worker · run 1")
            && !confined.contains("hands its query to another thread"),
        "{confined}"
    );
}

/// A bench whose crate reports its statement cache says what the cache did in its detail; one
/// whose crate does not says nothing of it.
#[test]
fn the_detail_says_what_a_reported_statement_cache_did() {
    let mut s = base_state();
    let t = Instant::now();
    s.catalog.marked.extend(["rusqlite", "middleware/worker"]);
    keys(&mut s, &[Key::Enter], t);
    let k = s.knobs.values.clone();
    ev(&mut s, "t-1", start(false, &k), t);
    finish(&mut s, "t-1", "rusqlite", 1430.0, false, t);
    let xs = samples(12_000.0, 30);
    for e in testing::bench_events("middleware/worker", "b", 1000, &xs, Some(1.1)) {
        if matches!(e, Event::Summary { .. }) {
            ev(
                &mut s,
                "t-1",
                Event::Statements {
                    bench: "middleware/worker".into(),
                    cache: bench_core::measure::statements::StatementCache {
                        by: "a crate's events".into(),
                        run: 3000,
                        prepared: 1,
                        text: 1000,
                        ops: 1000,
                    },
                },
                t,
            );
        }
        ev(&mut s, "t-1", e, t);
    }
    exited(&mut s, "t-1", Outcome::Completed, t);
    keys(&mut s, &[Key::BackTab, Key::Down], t);
    let text = draw(&mut s, 400, 40).replace('\u{a0}', " ");
    assert!(
        text.contains("middleware/worker · run 1")
            && text.contains("statement cache (a crate's events): 99.95% hits; 3000 statements run (3.00/op), 1999 from the cache, 1 prepared into it (0.00/op), 1000 run as text (not cached)"),
        "{text}"
    );
    keys(&mut s, &[Key::Up], t);
    let text = draw(&mut s, 400, 40);
    assert!(
        text.contains("rusqlite · run 1") && !text.contains("statement cache"),
        "{text}"
    );
}

/// A bench measured in several runner processes says in its detail that its interval is the
/// next run's, across how many processes, and when they agreed within their own intervals.
#[test]
fn the_detail_names_the_processes_an_interval_is_across() {
    let detail = |spread: f64| {
        let mut s = base_state();
        let t = Instant::now();
        s.catalog.marked.extend(["rusqlite", "middleware/worker"]);
        keys(&mut s, &[Key::Enter], t);
        let k = s.knobs.values.clone();
        ev(&mut s, "t-1", start(false, &k), t);
        finish(&mut s, "t-1", "rusqlite", 1430.0, false, t);
        let xs = samples(12_000.0, 30);
        for mut e in testing::bench_events("middleware/worker", "b", 1000, &xs, Some(1.1)) {
            if let Event::Summary { stats, .. } = &mut e {
                let m = stats.median;
                stats.processes = [1.0, 1.0 + spread, 1.0 - spread]
                    .iter()
                    .map(|f| bench_core::measure::processes::Estimate {
                        value: m * f,
                        ci95: [m * f * 0.98, m * f * 1.02],
                    })
                    .collect();
            }
            ev(&mut s, "t-1", e, t);
        }
        exited(&mut s, "t-1", Outcome::Completed, t);
        keys(&mut s, &[Key::BackTab, Key::Down], t);
        draw(&mut s, 400, 40).replace('\u{a0}', " ")
    };
    let apart = detail(0.2);
    assert!(
        apart.contains("(the next run's 95%, across 3 processes)"),
        "{apart}"
    );
    let agreed = detail(0.001);
    assert!(
        agreed.contains(
            "(the next run's 95%, across 3 processes, which agreed within their own intervals)"
        ),
        "{agreed}"
    );
}
