//! Synthetic key sequences and run events drive `update`; state and effects are checked.

use super::keys::Key;
use super::*;
use crate::messages::{Outcome, RunEvent, RunSettings};
use crate::testing;
use bench_core::catalog::{CONCURRENCY, ROWS};
use bench_core::knobs::{self, KnobValue, Knobs};
use bench_core::measure::processes::Estimate;
use bench_core::measure::stats::PairedRatio;
use bench_core::protocol::Budget;
use bench_core::protocol::{DatasetStatus, Event};
use bench_core::workloads::single_row_lookup;
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn default_knobs() -> Knobs {
    knobs::resolve(&single_row_lookup::spec().knobs, &|_| None, &[]).unwrap()
}

fn state() -> State {
    let mut s = State::new(
        single_row_lookup::spec(),
        default_knobs(),
        false,
        RunSettings {
            budget: bench_core::service::args::BudgetArgs {
                time_s: "1".into(),
                ..Default::default()
            },
            ..Default::default()
        },
    );
    s.session.id_prefix = "t".into();
    s
}

fn exited(run: &str, outcome: Outcome) -> Action {
    Action::Run(RunEvent::Exited {
        run_id: run.into(),
        outcome,
    })
}

/// The value of a count knob in a request or a run.
fn count(knobs: &Knobs, name: &str) -> u64 {
    match knobs.get(name) {
        Some(KnobValue::Count(n)) => *n,
        other => panic!("{name} is {other:?}"),
    }
}

fn press(s: &mut State, keys: &[Key], now: Instant) -> Vec<Effect> {
    keys.iter()
        .flat_map(|k| update(s, Action::Key(*k), now))
        .collect()
}

fn chars(text: &str) -> Vec<Key> {
    text.chars().map(Key::Char).collect()
}

fn ev(run: &str, event: Event) -> Action {
    Action::Run(RunEvent::Event {
        run_id: run.into(),
        line: String::new(),
        event,
    })
}

fn start_event(debug: bool) -> Event {
    testing::start(
        &default_knobs(),
        false,
        debug,
        Budget {
            warmup_s: 0.0,
            time_s: 1.0,
            max_samples: 10,
            min_samples: 2,
            paired: false,
            group: None,
            processes: None,
            times: Default::default(),
        },
    )
}

fn finish_bench(s: &mut State, run: &str, bench: &str, median: f64, now: Instant) {
    for event in testing::bench_events(bench, "b", 10, &[median], None) {
        update(s, ev(run, event), now);
    }
}

#[test]
fn enter_runs_the_bench_under_the_cursor() {
    let mut s = state();
    let now = Instant::now();
    let fx = press(&mut s, &[Key::Down, Key::Down, Key::Enter], now);
    let [Effect::Start(req)] = fx.as_slice() else {
        panic!("{fx:?}")
    };
    assert_eq!(req.benches, vec!["middleware/inline"]);
    assert_eq!(req.run_id, "t-1");
    assert_eq!(req.budget().unwrap().time_s, 1.0);
    assert_eq!(count(&req.knobs, "rows"), 1000);
    assert_eq!(s.runs[0].state, RunState::Running);
}

#[test]
fn marked_benches_run_in_catalog_order_and_runs_queue() {
    let mut s = state();
    let now = Instant::now();
    // mark rusqlite (cursor moves down), skip sqlite3_c and inline, mark spawn_blocking
    press(
        &mut s,
        &[Key::Char(' '), Key::Down, Key::Down, Key::Char(' ')],
        now,
    );
    assert_eq!(s.catalog.marked.len(), 2);
    let fx = press(&mut s, &[Key::Enter], now);
    let [Effect::Start(req)] = fx.as_slice() else {
        panic!("{fx:?}")
    };
    assert_eq!(req.benches, vec!["rusqlite", "middleware/spawn_blocking"]);
    // A second run queues behind the first.
    let fx = press(&mut s, &[Key::Enter], now);
    assert!(fx.is_empty());
    assert_eq!(s.runs[1].state, RunState::Queued);
    assert!(s.status.as_ref().unwrap().text.contains("queued"));
    // The first ends: the second starts.
    let fx = update(&mut s, exited("t-1", Outcome::Completed), now);
    assert!(matches!(fx.as_slice(), [Effect::Start(r)] if r.run_id == "t-2"));
    assert_eq!(s.runs[0].state, RunState::Finished);
}

#[test]
fn knob_edits_refuse_bad_values_inline_and_accept_good_ones() {
    let mut s = state();
    let now = Instant::now();
    press(&mut s, &[Key::Tab], now);
    assert_eq!(s.focus, Focus::Knobs);
    // rows: typed 0 is refused with the range, nothing changes
    press(&mut s, &[Key::Enter, Key::Char('0'), Key::Enter], now);
    assert_eq!(
        s.knobs.error.as_deref(),
        Some("invalid value 0 for knob rows: out of range (allowed: 1..=50000000)")
    );
    assert!(
        s.knobs.editing.is_some(),
        "stays in edit mode to fix the value"
    );
    press(&mut s, &[Key::Backspace], now);
    press(&mut s, &chars("abc"), now);
    press(&mut s, &[Key::Enter], now);
    assert!(
        s.knobs
            .error
            .as_deref()
            .unwrap()
            .contains("not a whole number")
    );
    press(&mut s, &[Key::Esc], now);
    assert_eq!(
        (s.knobs.editing.clone(), s.knob_value("rows")),
        (None, 1000)
    );
    // typed 20k is accepted
    press(&mut s, &[Key::Enter], now);
    press(&mut s, &chars("20k"), now);
    press(&mut s, &[Key::Enter], now);
    assert_eq!(s.knob_value("rows"), 20_000);
    assert_eq!(s.knobs.error, None);
    // + doubles rows, - halves; clamped at the bounds with a message
    press(&mut s, &[Key::Char('+')], now);
    assert_eq!(s.knob_value("rows"), 40_000);
    press(&mut s, &[Key::Char('-'), Key::Char('-')], now);
    assert_eq!(s.knob_value("rows"), 10_000);
    press(&mut s, &[Key::Down, Key::Down, Key::Down, Key::Down], now); // spin_us (min 0)
    assert_eq!(s.target.knobs[s.knobs.cursor].name, "spin_us");
    press(
        &mut s,
        &[Key::Enter, Key::Char('0'), Key::Enter, Key::Char('-')],
        now,
    );
    assert!(
        s.knobs
            .error
            .as_deref()
            .unwrap()
            .contains("stays 0 (allowed: 0..=100000)")
    );
}

impl State {
    fn knob_value(&self, name: &str) -> u64 {
        count(&self.knobs.values, name)
    }
}

#[test]
fn a_knob_change_while_running_restarts_after_the_debounce_and_keeps_the_old_column() {
    let mut s = state();
    let t0 = Instant::now();
    press(&mut s, &[Key::Char(' '), Key::Char(' '), Key::Enter], t0);
    finish_bench(&mut s, "t-1", "rusqlite", 1500.0, t0);
    press(&mut s, &[Key::Tab, Key::Char('+')], t0);
    assert_eq!(s.restart_at, Some(t0 + DEBOUNCE));
    // A second change inside the debounce window pushes the restart back.
    let t1 = t0 + Duration::from_millis(300);
    press(&mut s, &[Key::Char('+')], t1);
    assert!(
        update(&mut s, Action::Tick, t1 + Duration::from_millis(400)).is_empty(),
        "still settling"
    );
    let fx = update(&mut s, Action::Tick, t1 + DEBOUNCE);
    assert_eq!(fx.len(), 2, "{fx:?}");
    assert_eq!(fx[0], Effect::Cancel("t-1".into()));
    let Effect::Start(req) = &fx[1] else {
        panic!("{fx:?}")
    };
    assert_eq!(count(&req.knobs, "rows"), 4000);
    assert_eq!(req.benches, vec!["rusqlite", "sqlite3_c"]);
    assert_eq!(s.runs[0].state, RunState::Superseded);
    assert_eq!(s.runs[1].previous.as_deref(), Some("t-1"));
    assert_eq!(s.lineage(&s.runs[1]).len(), 2);
    // The superseded run's finished result is kept, and its exit does not fail it.
    update(&mut s, exited("t-1", Outcome::Cancelled), t1);
    assert_eq!(s.runs[0].state, RunState::Superseded);
    assert!(
        s.runs[0]
            .record
            .bench("rusqlite")
            .unwrap()
            .summary
            .is_some()
    );
}

#[test]
fn cancel_keeps_results_and_starts_the_next_queued_run() {
    let mut s = state();
    let now = Instant::now();
    press(&mut s, &[Key::Enter, Key::Enter], now);
    finish_bench(&mut s, "t-1", "rusqlite", 1500.0, now);
    press(&mut s, &[Key::Tab, Key::Tab], now);
    assert_eq!(s.focus, Focus::Live);
    let fx = press(&mut s, &[Key::Char('c')], now);
    assert_eq!(fx[0], Effect::Cancel("t-1".into()));
    assert!(matches!(&fx[1], Effect::Start(r) if r.run_id == "t-2"));
    assert_eq!(s.runs[0].state, RunState::Cancelled);
    assert!(
        s.runs[0]
            .record
            .bench("rusqlite")
            .unwrap()
            .summary
            .is_some()
    );
}

#[test]
fn baseline_bench_and_run_are_picked_in_the_comparison() {
    let mut s = state();
    let now = Instant::now();
    press(&mut s, &[Key::Char(' '), Key::Char(' '), Key::Enter], now);
    finish_bench(&mut s, "t-1", "rusqlite", 1500.0, now);
    finish_bench(&mut s, "t-1", "sqlite3_c", 900.0, now);
    update(&mut s, exited("t-1", Outcome::Completed), now);
    press(&mut s, &[Key::BackTab], now);
    assert_eq!(s.focus, Focus::Compare);
    assert_eq!(s.compare_rows(), vec!["rusqlite", "sqlite3_c"]);
    press(&mut s, &[Key::Down, Key::Char('b')], now);
    assert_eq!(s.compare.baseline_bench, "sqlite3_c");
    press(&mut s, &[Key::Left, Key::Char('B')], now);
    assert_eq!(s.compare.baseline_run.as_deref(), Some("t-1"));
}

#[test]
fn export_needs_results_then_reports_the_paths() {
    let mut s = state();
    let now = Instant::now();
    assert!(press(&mut s, &[Key::Char('e')], now).is_empty());
    assert!(s.status.as_ref().unwrap().error);
    press(&mut s, &[Key::Enter], now);
    finish_bench(&mut s, "t-1", "rusqlite", 1500.0, now);
    assert_eq!(press(&mut s, &[Key::Char('e')], now), vec![Effect::Export]);
    update(
        &mut s,
        Action::Exported(Ok(vec!["snapshots/a.md".into(), "snapshots/a.json".into()])),
        now,
    );
    assert_eq!(
        s.status.as_ref().unwrap().text,
        "exported snapshots/a.md and snapshots/a.json"
    );
    update(&mut s, Action::Exported(Err("disk full".into())), now);
    assert!(s.status.as_ref().unwrap().error);
}

#[test]
fn quit_asks_while_runs_are_going() {
    let mut s = state();
    let now = Instant::now();
    assert_eq!(press(&mut s, &[Key::Char('q')], now), vec![Effect::Quit]);
    let mut s = state();
    press(&mut s, &[Key::Enter], now);
    assert!(press(&mut s, &[Key::Char('q')], now).is_empty());
    assert_eq!(s.overlay, Some(Overlay::ConfirmQuit));
    press(&mut s, &[Key::Char('n')], now);
    assert_eq!((s.overlay.clone(), s.quit), (None, false));
    press(&mut s, &[Key::Char('q')], now);
    assert_eq!(press(&mut s, &[Key::Char('y')], now), vec![Effect::Quit]);
    let mut s = state();
    press(&mut s, &[Key::Enter], now);
    assert_eq!(
        press(&mut s, &[Key::CtrlC], now),
        vec![Effect::Quit],
        "ctrl-c quits at once"
    );
}

#[test]
fn quit_asks_while_results_are_not_exported_and_e_exports_them() {
    let mut s = state();
    let now = Instant::now();
    s.session.journal = Some("/data/sessions/session-1.jsonl".into());
    press(&mut s, &[Key::Enter], now);
    finish_bench(&mut s, "t-1", "rusqlite", 1500.0, now);
    update(&mut s, exited("t-1", Outcome::Completed), now);
    assert_eq!(s.unexported(), 1);
    assert!(press(&mut s, &[Key::Char('q')], now).is_empty());
    assert_eq!(s.overlay, Some(Overlay::ConfirmQuit));
    let (question, keys) = s.quit_question();
    assert_eq!(question, "1 run has results no export holds. Quit anyway?");
    assert!(keys.contains("/data/sessions/session-1.jsonl"), "{keys}");
    // e in the question exports (and the question goes away).
    assert_eq!(press(&mut s, &[Key::Char('e')], now), vec![Effect::Export]);
    assert_eq!(s.overlay, None);
    let fx = update(
        &mut s,
        Action::Exported(Ok(vec!["snapshots/a.md".into()])),
        now,
    );
    assert_eq!(
        fx,
        vec![Effect::Journal(crate::journal::Entry::Exported {
            run_ids: vec!["t-1".into()]
        })]
    );
    assert_eq!(s.unexported(), 0);
    assert_eq!(press(&mut s, &[Key::Char('q')], now), vec![Effect::Quit]);
}

#[test]
fn the_last_session_is_reopened_as_columns_or_dismissed() {
    let session = || {
        let mut record = bench_core::protocol::results::RunRecord::default();
        for e in testing::bench_events("rusqlite", "b", 10, &[1500.0], None) {
            record.apply(e);
        }
        crate::journal::Session {
            path: "/data/sessions/session-0.jsonl".into(),
            runs: vec![
                crate::journal::Run {
                    run_id: "old-3".into(),
                    seq: 3,
                    target: "single_row_lookup".into(),
                    benches: vec!["rusqlite".into()],
                    knobs: default_knobs(),
                    trace: false,
                    profiled: false,
                    record: record.clone(),
                    outcome: Some("cancelled".into()),
                },
                crate::journal::Run {
                    run_id: "old-4".into(),
                    seq: 4,
                    target: "no_such_target".into(),
                    benches: vec![],
                    knobs: Knobs::default(),
                    trace: false,
                    profiled: false,
                    record,
                    outcome: None,
                },
            ],
            ..Default::default()
        }
    };
    let now = Instant::now();
    let mut s = state();
    // The session begins with the last one offered: the overlay asks.
    let began = |offer| Action::Began {
        journal: "/data/sessions/session-1.jsonl".into(),
        offer,
        color: false,
    };
    assert_eq!(update(&mut s, began(Some(session())), now), vec![]);
    assert_eq!(s.overlay, Some(Overlay::Reopen));
    assert_eq!(
        s.session.journal.as_deref(),
        Some(std::path::Path::new("/data/sessions/session-1.jsonl"))
    );
    assert_eq!(
        press(&mut s, &[Key::Char('y')], now),
        vec![Effect::ContinueJournal(
            "/data/sessions/session-0.jsonl".into()
        )]
    );
    assert_eq!(s.runs.len(), 1);
    assert_eq!(s.runs[0].state, RunState::Cancelled);
    assert!(
        s.runs[0]
            .record
            .bench("rusqlite")
            .unwrap()
            .summary
            .is_some()
    );
    assert!(s.status.as_ref().unwrap().text.contains("no_such_target"));
    // New runs are numbered after the reopened ones.
    let fx = press(&mut s, &[Key::Enter], now);
    assert!(matches!(&fx[..], [Effect::Start(r)] if r.run_id == "t-4"));

    let mut s = state();
    s.session.offer = Some(session());
    s.overlay = Some(Overlay::Reopen);
    assert_eq!(
        press(&mut s, &[Key::Char('n')], now),
        vec![Effect::DismissJournal(
            "/data/sessions/session-0.jsonl".into()
        )]
    );
    assert!(s.runs.is_empty() && s.session.offer.is_none() && s.overlay.is_none());
    // Nothing worth offering: nothing asks.
    let mut s = state();
    update(&mut s, began(None), now);
    assert!(s.session.offer.is_none() && s.overlay.is_none() && s.session.journal.is_some());
}

#[test]
fn a_sweep_on_top_of_a_long_queue_asks_first() {
    let mut s = state();
    let now = Instant::now();
    // One sweep starts one run and queues four: under the long-queue mark, no question.
    let fx = press(&mut s, &[Key::Char('s')], now);
    assert_eq!(fx.len(), 1);
    assert_eq!((s.waiting(), s.overlay.clone()), (4, None));
    press(&mut s, &[Key::Enter], now);
    assert_eq!(s.waiting(), LONG_QUEUE);
    // The next one asks; anything but y drops it.
    assert!(press(&mut s, &[Key::Char('s')], now).is_empty());
    assert_eq!(s.overlay, Some(Overlay::ConfirmSweep));
    press(&mut s, &[Key::Char('n')], now);
    assert_eq!((s.waiting(), s.overlay.clone()), (LONG_QUEUE, None));
    assert_eq!(s.status.as_ref().unwrap().text, "sweep not queued (5 runs)");
    // y queues it behind the others.
    press(&mut s, &[Key::Char('s'), Key::Char('y')], now);
    assert_eq!(s.waiting(), LONG_QUEUE + SWEEP.len());
    assert!(
        s.status
            .as_ref()
            .unwrap()
            .text
            .ends_with("behind 5 waiting runs"),
        "{:?}",
        s.status
    );
}

#[test]
fn a_command_line_sweep_is_what_s_queues() {
    let mut s = state();
    let now = Instant::now();
    let runs: Vec<Knobs> = [1u64, 2]
        .iter()
        .map(|c| {
            let mut k = default_knobs();
            k.set(CONCURRENCY.name, *c);
            k
        })
        .collect();
    s.command_line_sweep("concurrency".into(), runs);
    assert!(
        s.status
            .as_ref()
            .unwrap()
            .text
            .contains("sweep of concurrency (2 runs)")
    );
    let fx = press(&mut s, &[Key::Char('s')], now);
    assert!(matches!(&fx[..], [Effect::Start(r)] if count(&r.knobs, CONCURRENCY.name) == 1));
    assert_eq!(s.runs.len(), 2);
    assert_eq!(count(&s.runs[1].knobs, CONCURRENCY.name), 2);
    assert_eq!(
        s.status.as_ref().unwrap().text,
        "sweep of concurrency: 2 runs queued"
    );
}

#[test]
fn s_in_the_comparison_saves_the_finished_runs_as_a_baseline() {
    let mut s = state();
    let now = Instant::now();
    s.focus = Focus::Compare;
    assert!(press(&mut s, &[Key::Char('S')], now).is_empty());
    assert!(s.status.as_ref().unwrap().error);
    s.focus = Focus::Catalog;
    press(&mut s, &[Key::Enter], now);
    finish_bench(&mut s, "t-1", "rusqlite", 1500.0, now);
    s.focus = Focus::Compare;
    // A name is asked for, offered as <target>-<UTC time>; a bad one is refused in place.
    assert!(press(&mut s, &[Key::Char('S')], now).is_empty());
    assert_eq!(s.prompt.purpose, crate::model::TypedFor::BaselineName);
    let offered = s.prompt.text.clone().unwrap();
    assert!(offered.starts_with("single_row_lookup-2"), "{offered}");
    let mut keys = vec![Key::Backspace; offered.len()];
    keys.extend(chars("a/b"));
    keys.push(Key::Enter);
    assert!(press(&mut s, &keys, now).is_empty());
    assert!(
        s.prompt
            .error
            .as_deref()
            .unwrap()
            .starts_with("invalid baseline name \"a/b\""),
        "{:?}",
        s.prompt.error
    );
    let mut keys = vec![Key::Backspace; 3];
    keys.extend(chars("main"));
    keys.push(Key::Enter);
    let fx = press(&mut s, &keys, now);
    assert_eq!(fx, vec![Effect::SaveBaseline("main".into())]);
    assert_eq!(
        (s.prompt.text.clone(), s.prompt.error.clone()),
        (None, None)
    );
    update(&mut s, Action::BaselineSaved(Err("disk full".into())), now);
    assert_eq!(
        s.status.as_ref().unwrap().text,
        "baseline not saved: disk full"
    );
}

#[test]
fn o_opens_saved_results_from_a_typed_path() {
    let mut s = state();
    let now = Instant::now();
    assert!(press(&mut s, &[Key::Char('o')], now).is_empty());
    assert_eq!(s.prompt.text.as_deref(), Some(""));
    let mut keys = chars("r.jsx");
    keys.extend([Key::Backspace, Key::Char('o'), Key::Char('n'), Key::Enter]);
    let fx = press(&mut s, &keys, now);
    assert_eq!(fx, vec![Effect::OpenFile("r.json".into())]);
    // Unreadable: the line stays with the reason.
    update(
        &mut s,
        Action::Opened(Err("cannot read r.json".into())),
        now,
    );
    assert_eq!(s.prompt.error.as_deref(), Some("cannot read r.json"));
    assert!(s.prompt.text.is_some());
    press(&mut s, &[Key::Esc], now);
    assert_eq!(
        (s.prompt.text.clone(), s.prompt.error.clone()),
        (None, None)
    );
    // Read: its runs are columns, read-only.
    let mut record = bench_core::protocol::results::RunRecord::default();
    record.apply(testing::start(
        &default_knobs(),
        false,
        false,
        testing::BUDGET,
    ));
    for e in testing::bench_events("rusqlite", "b", 10, &[1500.0], None) {
        record.apply(e);
    }
    update(
        &mut s,
        Action::Opened(Ok((vec![record], Some(vec![7]), "r.json".into()))),
        now,
    );
    assert_eq!(s.runs.len(), 1);
    assert_eq!(
        (s.runs[0].seq, s.runs[0].record.source.as_deref()),
        (7, Some("r.json"))
    );
    assert_eq!(
        s.unexported(),
        0,
        "read from a file: nothing to export before quitting"
    );
    assert!(
        s.status
            .as_ref()
            .unwrap()
            .text
            .starts_with("1 saved runs from r.json")
    );
}

#[test]
fn progress_counts_a_finished_bench_once_while_the_next_has_not_started() {
    let mut s = state();
    let now = Instant::now();
    // rusqlite and sqlx: rusqlite done, sqlx not started (its harness still builds).
    let keys = testing::keys_to_run_rusqlite_and_sqlx(&s);
    press(&mut s, &keys, now);
    update(
        &mut s,
        ev(
            "t-1",
            testing::start(&default_knobs(), false, false, testing::BUDGET),
        ),
        now,
    );
    finish_bench(&mut s, "t-1", "rusqlite", 1500.0, now);
    let later = now + std::time::Duration::from_secs(30);
    let (fraction, _) = s.runs[0].progress(later);
    assert!((fraction - 0.5).abs() < 1e-9, "{fraction}");
}

#[test]
fn help_overlay_and_trace_toggle() {
    let mut s = state();
    let now = Instant::now();
    press(&mut s, &[Key::Char('?')], now);
    assert_eq!(s.overlay, Some(Overlay::Help));
    press(&mut s, &[Key::Char('x')], now);
    assert_eq!(s.overlay, None);
    press(&mut s, &[Key::Char('t'), Key::Enter], now);
    assert!(matches!(&s.runs[0], r if r.trace));
}

#[test]
fn run_events_update_progress_dataset_and_failures() {
    let mut s = state();
    let now = Instant::now();
    press(&mut s, &[Key::Enter], now);
    update(&mut s, ev("t-1", start_event(true)), now);
    assert_eq!(
        s.status.as_ref().unwrap().text,
        "debug build: numbers are not representative"
    );
    update(
        &mut s,
        ev(
            "t-1",
            Event::Dataset {
                status: DatasetStatus::Building,
                rows: 1000,
                path: "p".into(),
                build_ms: None,
            },
        ),
        now,
    );
    assert_eq!(
        s.datasets.get("single_row_lookup").map(String::as_str),
        Some("building the dataset (1000 rows)…")
    );
    update(
        &mut s,
        ev(
            "t-1",
            Event::BenchStart {
                bench: "rusqlite".into(),
                backend: "b".into(),
                strategy: None,
                ops: 10,
                work: None,
                sqlite: Default::default(),
            },
        ),
        now,
    );
    for i in 0..5 {
        update(
            &mut s,
            ev(
                "t-1",
                Event::Sample {
                    bench: "rusqlite".into(),
                    iter: i,
                    ops: 10,
                    elapsed_ns: 100,
                    work: None,
                    cost: None,
                    memory: None,
                },
            ),
            now,
        );
    }
    let (fraction, _) = s.runs[0].progress(now);
    assert!((fraction - 0.5).abs() < 1e-9, "5 of 10 samples: {fraction}");
    update(
        &mut s,
        exited("t-1", Outcome::Failed("runner exited with 101".into())),
        now,
    );
    assert_eq!(
        s.runs[0].state,
        RunState::Failed("runner exited with 101".into())
    );
    assert!(s.status.as_ref().unwrap().error);
    // Events of unknown runs are ignored.
    assert!(update(&mut s, ev("nope", Event::Done), now).is_empty());
}

#[test]
fn left_right_in_the_catalog_switch_target_and_keep_shared_knobs() {
    let mut s = state();
    let now = Instant::now();
    press(&mut s, &[Key::Tab, Key::Char('+'), Key::BackTab], now); // rows 2000
    press(&mut s, &[Key::Char(' ')], now);
    press(&mut s, &[Key::Right], now);
    assert_eq!(s.target.name, "multithread_pool_checkout");
    assert_eq!(
        s.knob_value(ROWS.name),
        2000,
        "shared knobs keep their values"
    );
    assert_eq!(
        s.knobs.values.get("lookups_per_checkout"),
        None,
        "knobs of the other target are gone"
    );
    assert!(s.catalog.marked.is_empty());
    assert_eq!(s.compare.baseline_bench, "rusqlite_blocking");
    let fx = press(&mut s, &[Key::Enter], now);
    assert!(
        matches!(&fx[..], [Effect::Start(r)] if r.target == "multithread_pool_checkout" && r.benches == ["rusqlite_blocking"])
    );
    press(&mut s, &[Key::Left], now);
    assert_eq!(s.target.name, "single_row_lookup");
    assert_eq!(
        s.compare_rows(),
        Vec::<&str>::new(),
        "the comparison shows the shown target's runs only"
    );
}

#[test]
fn sweep_queues_one_run_per_concurrency() {
    let mut s = state();
    let now = Instant::now();
    let fx = press(&mut s, &[Key::Char('s')], now);
    assert_eq!(s.runs.len(), SWEEP.len());
    let cs: Vec<u64> = s
        .runs
        .iter()
        .map(|r| count(&r.knobs, CONCURRENCY.name))
        .collect();
    assert_eq!(cs, SWEEP.to_vec());
    assert!(matches!(&fx[..], [Effect::Start(r)] if count(&r.knobs, CONCURRENCY.name) == 1));
    assert!(
        s.runs[1..].iter().all(|r| r.state == RunState::Queued),
        "one run at a time"
    );
    assert!(
        s.status
            .as_ref()
            .unwrap()
            .text
            .starts_with("sweep: 5 runs queued")
    );
}

/// `s` on a knob offers values to sweep; typed values are checked like a typed knob value;
/// a second `name=a,b` makes a matrix; enter queues one run per combination.
#[test]
fn any_knob_sweeps_and_two_make_a_matrix() {
    let mut s = state();
    let now = Instant::now();
    // rows is the first knob: offered around its value (1000, steps of x2)
    press(&mut s, &[Key::Tab, Key::Char('s')], now);
    assert_eq!(s.knobs.sweep.as_deref(), Some("250,500,1000,2000,4000"));
    // a bad value is refused, naming it and the range; nothing is queued
    let mut keys = vec![Key::Backspace; 22];
    keys.extend(chars("1000,0"));
    keys.push(Key::Enter);
    assert!(press(&mut s, &keys, now).is_empty());
    assert_eq!(
        s.knobs.error.as_deref(),
        Some("invalid value 0 for knob rows: out of range (allowed: 1..=50000000)")
    );
    assert!(s.runs.is_empty() && s.knobs.sweep.is_some());
    // rows 1000 and 20000 x locking_mode normal and exclusive: four runs, in that order
    let mut keys = vec![Key::Backspace; 6];
    keys.extend(chars("1000,20k locking_mode=normal,exclusive"));
    keys.push(Key::Enter);
    let fx = press(&mut s, &keys, now);
    assert!(s.knobs.sweep.is_none() && s.knobs.error.is_none());
    assert_eq!(fx.len(), 1, "one run at a time: {fx:?}");
    let got: Vec<String> = s
        .runs
        .iter()
        .map(|r| {
            format!(
                "{} {}",
                count(&r.knobs, "rows"),
                r.knobs.get("locking_mode").unwrap()
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            "1000 normal",
            "1000 exclusive",
            "20000 normal",
            "20000 exclusive"
        ]
    );
    assert!(s.runs.iter().all(|r| r.benches == ["rusqlite"]));
    assert!(
        s.status
            .as_ref()
            .unwrap()
            .text
            .starts_with("sweep of rows x locking_mode: 4 runs queued"),
        "{:?}",
        s.status
    );
    // one value is not a sweep; esc leaves without queueing
    press(&mut s, &[Key::Char('s')], now);
    let mut keys = vec![Key::Backspace; 22];
    keys.extend(chars("300"));
    keys.push(Key::Enter);
    press(&mut s, &keys, now);
    assert!(
        s.knobs
            .error
            .as_deref()
            .unwrap()
            .starts_with("a sweep of rows needs at least two values")
    );
    press(&mut s, &[Key::Esc], now);
    assert!(s.knobs.sweep.is_none() && s.knobs.error.is_none());
    assert_eq!(s.runs.len(), 4);
}

/// `f` profiles the bench under the cursor in a run of its own; a profiled run is marked and
/// never becomes the baseline run, nor gets a verdict against one.
#[test]
fn f_profiles_the_bench_under_the_cursor_and_it_is_never_a_baseline() {
    let mut s = state();
    let now = Instant::now();
    press(&mut s, &[Key::Char(' '), Key::Char(' '), Key::Enter], now);
    finish_bench(&mut s, "t-1", "rusqlite", 1500.0, now);
    finish_bench(&mut s, "t-1", "sqlite3_c", 1000.0, now);
    update(&mut s, exited("t-1", Outcome::Completed), now);
    press(&mut s, &[Key::Char('A')], now);
    s.catalog.cursor = 1;
    let fx = press(&mut s, &[Key::Char('f')], now);
    let [Effect::Start(req)] = fx.as_slice() else {
        panic!("{fx:?}")
    };
    assert_eq!(req.benches, ["sqlite3_c"]);
    assert_eq!(
        req.profile.as_deref(),
        Some(std::path::Path::new("flamegraphs"))
    );
    assert!(s.runs[1].profiled && !s.runs[0].profiled);
    finish_bench(&mut s, "t-2", "sqlite3_c", 1400.0, now);
    update(
        &mut s,
        ev(
            "t-2",
            Event::Profile {
                bench: "sqlite3_c".into(),
                profile: bench_core::profile::breakdown("r;sqlite3_step 3\nr;fcntl_[k] 1\n", 5),
            },
        ),
        now,
    );
    update(&mut s, exited("t-2", Outcome::Completed), now);
    assert!(s.runs[1].record.profiled);
    // The profiled run's column: B is refused with the reason.
    press(&mut s, &[Key::BackTab], now);
    assert_eq!(s.focus, Focus::Compare);
    press(&mut s, &[Key::Right, Key::Char('B')], now);
    assert_eq!(s.compare.baseline_run, None);
    let status = s.status.as_ref().unwrap();
    assert!(
        status.text.contains("ran under perf") && status.text.contains("cannot be the baseline"),
        "{}",
        status.text
    );
    // The unprofiled run as the baseline: no verdict for the profiled one.
    press(&mut s, &[Key::Left, Key::Char('B')], now);
    assert_eq!(s.compare.baseline_run.as_deref(), Some("t-1"));
    let change = |s: &State| {
        s.compare
            .analysis
            .cell("t-2", "sqlite3_c")
            .map(|c| c.change.is_some())
    };
    assert_eq!(change(&s), Some(false));
    // (an unprofiled run with the same bench gets one: the refusal is the profiler's)
    s.runs[1].record.profiled = false;
    s.refresh_analysis(now, true);
    assert_eq!(change(&s), Some(true));
}

/// Random typing cannot queue hundreds of runs: the queue holds MAX_QUEUED, and what does
/// not fit is refused with the reason.
#[test]
fn the_queue_is_bounded() {
    let mut s = state();
    let now = Instant::now();
    let keys: Vec<Key> = std::iter::repeat_n(Key::Enter, 300).collect();
    press(&mut s, &keys, now);
    let queued = s
        .runs
        .iter()
        .filter(|r| r.state == RunState::Queued)
        .count();
    assert_eq!(queued, crate::model::MAX_QUEUED);
    assert_eq!(s.runs.len(), crate::model::MAX_QUEUED + 1, "one running");
    let status = s.status.as_ref().unwrap();
    assert!(
        status
            .text
            .starts_with("the queue is full: 20 runs wait (at most 20)"),
        "{}",
        status.text
    );
    // A sweep that does not fit is refused whole.
    press(&mut s, &[Key::Char('s')], now);
    assert_eq!(s.runs.len(), crate::model::MAX_QUEUED + 1);
}

/// `e` on a target none of whose runs finished a bench writes nothing and says why, even when
/// another target has results.
#[test]
fn no_empty_export() {
    let mut s = state();
    let now = Instant::now();
    assert_eq!(press(&mut s, &[Key::Char('e')], now), vec![]);
    press(&mut s, &[Key::Enter], now);
    finish_bench(&mut s, "t-1", "rusqlite", 1500.0, now);
    update(&mut s, exited("t-1", Outcome::Completed), now);
    assert_eq!(press(&mut s, &[Key::Char('e')], now), vec![Effect::Export]);
    press(&mut s, &[Key::Right], now);
    assert_ne!(s.target.name, "single_row_lookup");
    assert_eq!(press(&mut s, &[Key::Char('e')], now), vec![]);
    let status = s.status.as_ref().unwrap();
    assert!(
        status.text.starts_with("nothing to export on "),
        "{}",
        status.text
    );
}

/// `c` cancels the running run from any panel; `C` clears the runs that have not started.
#[test]
fn cancel_from_any_panel_and_clear_the_queue() {
    let mut s = state();
    let now = Instant::now();
    press(&mut s, &[Key::Enter, Key::Enter, Key::Enter], now);
    assert_eq!(s.focus, Focus::Catalog);
    let fx = press(&mut s, &[Key::Char('c')], now);
    assert_eq!(fx[0], Effect::Cancel("t-1".into()), "{fx:?}");
    assert_eq!(s.runs[0].state, RunState::Cancelled);
    assert_eq!(s.runs[1].state, RunState::Running);
    press(&mut s, &[Key::Tab], now);
    assert_eq!(s.focus, Focus::Knobs);
    assert!(press(&mut s, &[Key::Char('C')], now).is_empty());
    assert_eq!(s.runs.len(), 2, "the queued run is gone, the others kept");
    assert_eq!(
        s.status.as_ref().unwrap().text,
        "queue cleared: 1 runs that had not started removed"
    );
}

/// After a target switch, the live panel and the header's dataset speak of the target on
/// screen (a run going on another target is still shown, named).
#[test]
fn live_and_dataset_follow_the_target() {
    let mut s = state();
    let now = Instant::now();
    press(&mut s, &[Key::Enter], now);
    update(
        &mut s,
        ev(
            "t-1",
            Event::Dataset {
                status: DatasetStatus::Reused,
                rows: 2000,
                path: "p".into(),
                build_ms: None,
            },
        ),
        now,
    );
    finish_bench(&mut s, "t-1", "rusqlite", 1500.0, now);
    update(&mut s, exited("t-1", Outcome::Completed), now);
    assert_eq!(s.live_bench().map(|(r, _)| r.id.as_str()), Some("t-1"));
    press(&mut s, &[Key::Right], now);
    assert_ne!(s.target.name, "single_row_lookup");
    assert!(s.live_bench().is_none(), "nothing of this target has run");
    assert!(!s.datasets.contains_key(s.target.name));
    press(&mut s, &[Key::Left], now);
    assert_eq!(s.live_bench().map(|(r, _)| r.id.as_str()), Some("t-1"));
    assert_eq!(
        s.datasets.get("single_row_lookup").map(String::as_str),
        Some("dataset 2000 rows reused from the cache")
    );
}

#[test]
fn a_skipped_bench_is_a_row_with_its_reason() {
    let mut s = state();
    let now = Instant::now();
    press(&mut s, &[Key::Right, Key::Right], now);
    assert_eq!(s.target.name, "bulk_insert");
    let postgres = s
        .catalog_benches()
        .iter()
        .position(|b| b.name == "postgres")
        .unwrap();
    s.catalog.cursor = postgres;
    press(&mut s, &[Key::Enter], now);
    update(
        &mut s,
        ev(
            "t-1",
            Event::Skipped {
                bench: "postgres".into(),
                reason: "no PostgreSQL URL".into(),
            },
        ),
        now,
    );
    update(&mut s, exited("t-1", Outcome::Completed), now);
    assert_eq!(s.compare_rows(), vec!["postgres"]);
    assert_eq!(
        s.runs[0].state,
        RunState::Finished,
        "a skip is not a failure"
    );
    let mut term = ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 40)).unwrap();
    term.draw(|f| crate::ui::render(&s, f)).unwrap();
    let text: String = term
        .backend()
        .buffer()
        .content()
        .iter()
        .map(|c| c.symbol())
        .collect();
    assert!(
        text.contains("skipped: no PostgreSQL URL"),
        "the detail line gives the reason"
    );
}

#[test]
fn a_marks_the_cursors_group_and_capital_a_clears() {
    let t = bench_core::workloads::crud_overhead::spec();
    let k = bench_core::knobs::resolve(&t.knobs, &|_| None, &[]).unwrap();
    let mut s = State::new(t, k, false, Default::default());
    let now = s.now;
    // The cursor on create/rusqlite: every create/... bench, then none again.
    update(&mut s, Action::Key(Key::Char('a')), now);
    assert_eq!(
        s.catalog.marked.len(),
        19,
        "rusqlite, 7 strategies, turso, sqlx, postgres, 8 crates (sql-middleware on turso and PostgreSQL too)"
    );
    assert!(s.catalog.marked.iter().all(|n| n.starts_with("create/")));
    update(&mut s, Action::Key(Key::Char('a')), now);
    assert!(s.catalog.marked.is_empty());
    update(&mut s, Action::Key(Key::Char('a')), now);
    update(&mut s, Action::Key(Key::Char('A')), now);
    assert!(s.catalog.marked.is_empty());
}

/// What the loop could not write comes back as actions: the model says it and forgets the
/// journal's path (nothing is kept there any more).
#[test]
fn journal_failures_are_said_by_the_model() {
    let mut s = state();
    let now = Instant::now();
    s.session.journal = Some(PathBuf::from("/tmp/j.jsonl"));
    update(&mut s, Action::JournalFailed("disk full".into()), now);
    let st = s.status.clone().unwrap();
    assert!(
        st.error && st.text.contains("session journal: disk full"),
        "{}",
        st.text
    );
    assert_eq!(s.session.journal, None);
    update(&mut s, Action::DismissFailed("read-only".into()), now);
    assert!(s.status.unwrap().text.contains("declined: read-only"));
}

/// `/` narrows the catalog and the comparison's rows as one types (every word in a bench's
/// name, backend, strategy or phase); keys go to the filter while it is typed; marks and runs
/// act on what is shown; esc clears it and the cursor stays on its bench.
#[test]
fn the_filter_narrows_what_is_shown_and_what_runs() {
    let now = Instant::now();
    let mut s = state();
    let all = s.catalog_benches().len();
    // A mark made before filtering, on a bench the filter will hide.
    press(&mut s, &[Key::Char(' ')], now);
    let hidden_mark = s.catalog.marked.iter().next().copied().unwrap();
    assert!(!hidden_mark.contains("spin"));

    press(&mut s, &[Key::Char('/')], now);
    assert!(s.catalog.filtering);
    press(&mut s, &chars("SPIN"), now);
    let shown: Vec<&str> = s.catalog_benches().iter().map(|b| b.name).collect();
    assert!(shown.len() > 1 && shown.len() < all, "{shown:?}");
    assert!(shown.iter().all(|n| n.contains("spin")), "{shown:?}");
    // Typed keys are text, not commands: q does not quit, and nothing matches "spinq".
    assert_eq!(press(&mut s, &[Key::Char('q')], now), vec![]);
    assert!(!s.quit && s.catalog_benches().is_empty());
    press(&mut s, &[Key::Backspace, Key::Enter], now);
    assert!(!s.catalog.filtering);
    assert_eq!(s.catalog.filter, "SPIN");

    // Two words: both must be found (a phase counts).
    let mut t = state();
    press(&mut t, &[Key::Char('/')], now);
    press(&mut t, &chars("interact dispatch"), now);
    let both: Vec<&str> = t.catalog_benches().iter().map(|b| b.name).collect();
    assert!(!both.is_empty(), "a dispatch micro-bench through interact");
    assert!(both.iter().all(|n| n.starts_with("interact/")), "{both:?}");

    // A word with a pattern's special characters is a regular expression on the names, as
    // `run --bench` takes one: the same benches the catalog's own selection gives.
    let mut u = state();
    press(&mut u, &[Key::Char('/')], now);
    press(&mut u, &chars("^middleware/(spin|worker)$"), now);
    let picked: Vec<&str> = u.catalog_benches().iter().map(|b| b.name).collect();
    assert_eq!(picked, ["middleware/worker", "middleware/spin"]);
    let selected: Vec<&str> = single_row_lookup::spec()
        .select("^middleware/(spin|worker)$")
        .unwrap()
        .iter()
        .map(|b| b.name)
        .collect();
    assert_eq!(picked, selected);
    // A pattern that does not compile is text: "(spin" is found nowhere.
    let mut v = state();
    press(&mut v, &[Key::Char('/')], now);
    press(&mut v, &chars("(spin"), now);
    assert!(v.catalog_benches().is_empty());

    // Marks and runs act on what is shown: the mark hidden by the filter does not run.
    press(&mut s, &[Key::Char(' ')], now);
    let fx = press(&mut s, &[Key::Enter], now);
    let [Effect::Start(r)] = fx.as_slice() else {
        panic!("{fx:?}")
    };
    assert_eq!(r.benches, vec![shown[0].to_string()]);
    assert!(s.catalog.marked.contains(hidden_mark));
    // The comparison's rows are filtered the same way.
    assert!(s.compare_rows().iter().all(|n| n.contains("spin")));

    // esc clears the filter; the cursor stays on the bench it was on.
    press(&mut s, &[Key::Down], now);
    let under = s.catalog_benches()[s.catalog.cursor].name;
    press(&mut s, &[Key::Esc], now);
    assert!(s.catalog.filter.is_empty());
    assert_eq!(s.catalog_benches().len(), all);
    assert_eq!(s.catalog_benches()[s.catalog.cursor].name, under);

    // With nothing shown, a run is refused with the reason, not an index out of range.
    press(&mut s, &[Key::Char('/')], now);
    press(&mut s, &chars("no-such-bench"), now);
    press(&mut s, &[Key::Enter], now);
    assert_eq!(press(&mut s, &[Key::Enter], now), vec![]);
    assert!(s.status.as_ref().unwrap().text.contains("no bench matches"));
}

/// `m` in the comparison: refused with the reason on a target whose benches are not cases on
/// backends; toggles the matrix where they are, its keys moving within it.
#[test]
fn the_matrix_view_is_offered_where_a_target_has_two_axes() {
    let now = Instant::now();
    let mut s = state();
    s.focus = Focus::Compare;
    press(&mut s, &[Key::Char('m')], now);
    assert!(!s.compare.matrix);
    assert!(s.status.as_ref().unwrap().text.contains("no matrix"));

    let t = bench_core::workloads::crud_overhead::spec();
    let k = knobs::resolve(&t.knobs, &|_| None, &[]).unwrap();
    let mut s = State::new(t, k, false, RunSettings::default());
    s.focus = Focus::Compare;
    press(
        &mut s,
        &[Key::Char('m'), Key::Right, Key::Down, Key::Down],
        now,
    );
    assert!(s.compare.matrix);
    // No run yet: nothing to move within (the arrows keep to the run's matrix).
    assert_eq!((s.compare.matrix_row, s.compare.matrix_col), (0, 0));
    // The runs' column is not moved by the matrix's keys.
    assert_eq!(s.compare.col, 0);
    press(&mut s, &[Key::Char('m')], now);
    assert!(!s.compare.matrix);
}

/// `z` folds the bench's group into one row and back, `Z` every group; a folded row marks and
/// runs its whole group; the comparison's rows are not folded.
#[test]
fn groups_fold_into_one_row() {
    let now = Instant::now();
    let mut s = state();
    let all = s.catalog_benches().len();
    let middleware = s
        .catalog_benches()
        .iter()
        .position(|b| b.name.starts_with("middleware/"))
        .unwrap();
    let members: Vec<&str> = s.group_members("middleware/spin").collect();
    assert!(members.len() > 2, "{members:?}");
    press(&mut s, &vec![Key::Down; middleware], now);
    press(&mut s, &[Key::Down, Key::Char('z')], now);
    // One row for the group, the cursor on it.
    assert_eq!(s.catalog_benches().len(), all - members.len() + 1);
    let row = s.catalog_benches()[s.catalog.cursor].name;
    assert_eq!(group_of(row), "middleware");
    assert_eq!(s.filtered_benches().len(), all);
    // Enter on the folded row runs the group.
    let fx = press(&mut s, &[Key::Enter], now);
    let [Effect::Start(r)] = fx.as_slice() else {
        panic!("{fx:?}")
    };
    assert_eq!(r.benches, members);
    // Space on it marks the group, and moves on.
    press(&mut s, &[Key::Char(' ')], now);
    assert!(members.iter().all(|m| s.catalog.marked.contains(m)));
    press(&mut s, &[Key::Up, Key::Char('z')], now);
    assert_eq!(s.catalog_benches().len(), all);

    // Z: every group of more than one bench folded, then all open again.
    press(&mut s, &[Key::Char('Z')], now);
    let folded = s.catalog_benches().len();
    assert!(folded < all - members.len() + 1, "{folded}");
    let groups: std::collections::BTreeSet<&str> = s
        .catalog_benches()
        .iter()
        .map(|b| group_of(b.name))
        .collect();
    assert_eq!(groups.len(), folded, "one row per group");
    press(&mut s, &[Key::Char('Z')], now);
    assert_eq!(s.catalog_benches().len(), all);
}

/// A paired run's summaries arrive in one update and its paired ratios in the next; in a run
/// of several processes, the figures across more processes come after that, the number of
/// finished benches unchanged. The compare view shows each as it comes, never a ratio it has
/// since been told better.
#[test]
fn the_compare_view_shows_the_paired_ratio_that_came_after_the_summaries() {
    let mut s = state();
    let t0 = Instant::now();
    press(&mut s, &[Key::Char(' '), Key::Char(' '), Key::Enter], t0);
    assert_eq!(s.runs[0].benches, ["rusqlite", "sqlite3_c"]);
    update(&mut s, ev("t-1", start_event(false)), t0);
    finish_bench(&mut s, "t-1", "rusqlite", 1000.0, t0);
    finish_bench(&mut s, "t-1", "sqlite3_c", 1500.0, t0);
    let shown = |s: &State| {
        s.compare
            .analysis
            .cell("t-1", "sqlite3_c")
            .and_then(|c| c.ratio)
            .map(|r| (r.value, r.ci95))
    };
    let tick = |s: &mut State, secs: u64| {
        update(s, Action::Tick, t0 + Duration::from_secs(secs));
    };
    tick(&mut s, 1);
    let (unpaired, _) = shown(&s).expect("a ratio from the summaries");
    assert!((unpaired - 1.5).abs() < 0.05, "{unpaired}");
    let paired = |median: f64, processes: Vec<Estimate>| {
        ev(
            "t-1",
            Event::Paired {
                bench: "sqlite3_c".into(),
                against: "rusqlite".into(),
                ratio: PairedRatio {
                    pairs: 10,
                    median,
                    ci95: [median - 0.01, median + 0.01],
                    processes,
                },
            },
        )
    };
    update(
        &mut s,
        paired(1.40, Vec::new()),
        t0 + Duration::from_secs(1),
    );
    tick(&mut s, 2);
    assert_eq!(shown(&s), Some((1.40, Some([1.39, 1.41]))));
    // A second process: its summary and ratio across both processes replace the first's.
    let e = |value: f64| Estimate {
        value,
        ci95: [value - 0.01, value + 0.01],
    };
    let mut across = testing::bench_events("sqlite3_c", "b", 10, &[1480.0], None);
    let Some(Event::Summary { mut stats, .. }) = across.pop() else {
        panic!("a summary ends a bench's events")
    };
    stats.processes = vec![e(1500.0), e(1460.0)];
    update(
        &mut s,
        ev(
            "t-1",
            Event::Summary {
                bench: "sqlite3_c".into(),
                stats,
            },
        ),
        t0 + Duration::from_secs(2),
    );
    update(
        &mut s,
        paired(1.45, vec![e(1.40), e(1.50)]),
        t0 + Duration::from_secs(2),
    );
    tick(&mut s, 3);
    assert_eq!(shown(&s), Some((1.45, Some([1.44, 1.46]))));
}
