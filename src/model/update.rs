//! The one place the state changes: `update` dispatches an action (a key to the focused
//! panel's keys or the global ones, a run's event, a tick) and returns the effects.

use std::time::Instant;

use bench_core::protocol::{DatasetStatus, Event};

use super::keys::{Cmd, Key};
use std::path::PathBuf;

use super::panels::*;
use super::runs::{RunState, RunView};
use super::state::*;
use super::{catalog, compare, keys, knobs, live};
use crate::messages::HarnessBuild;
use crate::messages::{Outcome, RunEvent};

/// Applies one action; returns what the main loop must do.
pub fn update(state: &mut State, action: Action, now: Instant) -> Vec<Effect> {
    state.now = now;
    // A bench finishing while samples stream shows at a later tick (the analysis is worked
    // out at most every MIN_GAP then; a streamed event alone does no analysis at all);
    // everything else (a key, a run ending, a file opened) shows at once.
    let streamed = matches!(action, Action::Run(RunEvent::Event { .. }));
    let urgent = !streamed && action != Action::Tick;
    let fx = apply(state, action, now);
    if !streamed {
        state.refresh_analysis(now, urgent);
    }
    fx
}

fn apply(state: &mut State, action: Action, now: Instant) -> Vec<Effect> {
    match action {
        Action::Key(key) => on_key(state, key, now),
        Action::Run(ev) => on_run_event(state, ev, now),
        Action::Tick => on_tick(state, now),
        Action::Began {
            journal,
            offer,
            color,
        } => {
            state.session.journal = Some(journal);
            state.session.color = color;
            if offer.is_some() {
                state.overlay = Some(super::state::Overlay::Reopen);
            }
            state.session.offer = offer;
            vec![]
        }
        Action::Exported(Ok(paths)) => {
            let (_, numbers, _) = state.export_runs();
            let run_ids: Vec<String> = state
                .runs
                .iter()
                .filter(|r| r.target.name == state.target.name && numbers.contains(&r.seq))
                .map(|r| r.id.clone())
                .collect();
            state.session.exported.extend(run_ids.iter().cloned());
            // Say what the files hold: this target's runs only.
            let others = state
                .runs
                .iter()
                .filter(|r| r.target.name != state.target.name)
                .count();
            let note = if others > 0 {
                format!(
                    " ({} runs only; {others} runs of other targets are not in it)",
                    state.target.name
                )
            } else {
                String::new()
            };
            state.set_status(format!("exported {}{note}", paths.join(" and ")), false);
            vec![Effect::Journal(crate::journal::Entry::Exported { run_ids })]
        }
        Action::Opened(Ok((runs, numbers, path))) => {
            state.prompt.close();
            state.show_saved(runs, numbers, &path);
            vec![]
        }
        Action::Opened(Err(e)) => {
            // The line stays open with the reason, for another try.
            state.prompt.error = Some(e);
            vec![]
        }
        Action::BaselineSaved(Ok(text)) => {
            state.set_status(text, false);
            vec![]
        }
        Action::BaselineSaved(Err(e)) => {
            state.set_status(format!("baseline not saved: {e}"), true);
            vec![]
        }
        Action::JournalFailed(e) => {
            state.set_status(
                format!("session journal: {e}; results are no longer kept on disk"),
                true,
            );
            state.session.journal = None;
            vec![]
        }
        Action::StoreFailed(e) => {
            state.set_status(e, true);
            vec![]
        }
        Action::HistoryLoaded { bench, result } => {
            if let Some(h) = state.history.as_mut().filter(|h| h.bench == bench) {
                h.loaded = Some(result);
            }
            vec![]
        }
        Action::DismissFailed(e) => {
            state.set_status(
                format!("cannot mark the last session as declined: {e}"),
                true,
            );
            vec![]
        }
        Action::Harness(which, h) => {
            if let HarnessBuild::Failed(_) = &h {
                state.set_status(
                    h.describe(crate::messages::build_name(which))
                        .unwrap_or_default(),
                    true,
                );
            }
            state.harness.set(which, h);
            vec![]
        }
        Action::Exported(Err(e)) => {
            state.set_status(format!("export failed: {e}"), true);
            vec![]
        }
    }
}

fn on_key(state: &mut State, key: Key, now: Instant) -> Vec<Effect> {
    if key == Key::CtrlC {
        state.quit = true;
        return vec![Effect::Quit];
    }
    match state.overlay {
        Some(Overlay::ConfirmQuit) => {
            return match key {
                Key::Char('y') | Key::Char('Y') | Key::Char('q') => {
                    state.quit = true;
                    vec![Effect::Quit]
                }
                Key::Char('e') if !state.any_active() => {
                    state.overlay = None;
                    on_global(state, Cmd::Export, now).unwrap_or_default()
                }
                _ => {
                    state.overlay = None;
                    state.set_status("quit cancelled", false);
                    vec![]
                }
            };
        }
        Some(Overlay::ConfirmSweep) => {
            state.overlay = None;
            let Some(sweep) = state.pending_sweep.take() else {
                return vec![];
            };
            if matches!(key, Key::Char('y') | Key::Char('Y')) {
                // Asked once: queued now (the queue's bound still holds).
                let waiting = state.waiting();
                let n = sweep.runs.len();
                if state.refuse_if_full(n) {
                    return vec![];
                }
                let mut fx = Vec::new();
                for k in sweep.runs {
                    fx.extend(state.queue(sweep.benches.clone(), Some(k), now));
                }
                state.set_status(
                    format!("{}, behind {waiting} waiting runs", sweep.queued),
                    false,
                );
                return fx;
            }
            state.set_status(
                format!("sweep not queued ({} runs)", sweep.runs.len()),
                false,
            );
            return vec![];
        }
        Some(Overlay::Reopen) => {
            state.overlay = None;
            let Some(session) = state.session.offer.take() else {
                return vec![];
            };
            return if matches!(key, Key::Char('y') | Key::Char('Y')) {
                reopen(state, session)
            } else {
                state.set_status(
                    format!(
                        "not reopened; {} stays on disk and is not offered again",
                        session.path.display()
                    ),
                    false,
                );
                vec![Effect::DismissJournal(session.path)]
            };
        }
        Some(Overlay::Help)
        | Some(Overlay::Scaling)
        | Some(Overlay::Histogram { .. })
        | Some(Overlay::History { .. }) => {
            state.overlay = None;
            return vec![];
        }
        None => {}
    }
    if state.prompt.text.is_some() {
        let max = match state.prompt.purpose {
            TypedFor::Open => 400,
            TypedFor::BaselineName => 64,
        };
        let knobs::Typed::Submitted(text) =
            knobs::type_key(&mut state.prompt.text, &mut state.prompt.error, key, max)
        else {
            return vec![];
        };
        let text = text.trim();
        return match state.prompt.purpose {
            TypedFor::Open if !text.is_empty() => vec![Effect::OpenFile(PathBuf::from(text))],
            TypedFor::Open => vec![],
            TypedFor::BaselineName => match crate::baseline::check_name(text) {
                Ok(()) => {
                    state.prompt.close();
                    vec![Effect::SaveBaseline(text.to_string())]
                }
                Err(e) => {
                    state.prompt.error = Some(e);
                    vec![]
                }
            },
        };
    }
    if state.catalog.filtering {
        return catalog::on_filter_key(state, key, now);
    }
    if state.knobs.editing.is_some() {
        return knobs::on_edit_key(state, key, now);
    }
    if state.knobs.sweep.is_some() {
        return knobs::on_sweep_key(state, key, now);
    }
    let Some(cmd) = keys::lookup(state.focus, key) else {
        return vec![];
    };
    if let Some(fx) = on_global(state, cmd, now) {
        return fx;
    }
    match state.focus {
        Focus::Catalog => catalog::on_cmd(state, cmd, now),
        Focus::Knobs => knobs::on_cmd(state, cmd, now),
        Focus::Live => live::on_cmd(state, cmd, now),
        Focus::Compare => compare::on_cmd(state, cmd),
    }
}

/// The commands that mean the same in every panel; `None` for a panel's own.
fn on_global(state: &mut State, cmd: Cmd, now: Instant) -> Option<Vec<Effect>> {
    match cmd {
        // Cancel works from every panel (the live panel says "c cancels" wherever focus is).
        Cmd::Cancel => return Some(state.cancel_running(now)),
        Cmd::ClearQueue => {
            let before = state.runs.len();
            state.runs.retain(|r| r.state != RunState::Queued);
            let removed = before - state.runs.len();
            state.compare.col = state
                .compare
                .col
                .min(state.target_runs().count().saturating_sub(1));
            state.set_status(
                if removed == 0 {
                    "the queue is empty".to_string()
                } else {
                    format!("queue cleared: {removed} runs that had not started removed")
                },
                false,
            );
        }
        Cmd::NextFocus => state.focus = state.focus.step(1),
        Cmd::PrevFocus => state.focus = state.focus.step(-1),
        Cmd::Help => state.overlay = Some(Overlay::Help),
        Cmd::Quit => {
            if state.any_active() || state.unexported() > 0 {
                state.overlay = Some(Overlay::ConfirmQuit);
            } else {
                state.quit = true;
                return Some(vec![Effect::Quit]);
            }
        }
        Cmd::OpenFile => {
            state.prompt.open(String::new(), TypedFor::Open);
        }
        Cmd::TogglePaired => {
            state.paired = !state.paired;
            state.set_status(
                if state.paired {
                    "paired rounds on from the next run: its benches take turns sample by sample, ratios pair by pair"
                } else {
                    "paired rounds off from the next run"
                },
                false,
            );
        }
        Cmd::ToggleTrace => {
            state.trace = !state.trace;
            state.set_status(
                if state.trace {
                    "trace on: phase timings from the next run"
                } else {
                    "trace off from the next run"
                },
                false,
            );
        }
        Cmd::Export => {
            // The export holds the target on screen: none of its runs has a result, no file.
            if state.target_runs().any(|r| {
                r.record
                    .benches
                    .iter()
                    .any(|b| b.summary.is_some() || b.scenario.is_some())
            }) {
                return Some(vec![Effect::Export]);
            }
            state.set_status(
                format!(
                    "nothing to export on {}: no finished bench of it yet",
                    state.target.name
                ),
                true,
            );
        }
        _ => return None,
    }
    Some(vec![])
}

fn on_tick(state: &mut State, now: Instant) -> Vec<Effect> {
    let Some(at) = state.restart_at else {
        return vec![];
    };
    if now < at {
        return vec![];
    }
    state.restart_at = None;
    let Some(i) = state.runs.iter().position(|r| r.state == RunState::Running) else {
        return vec![];
    };
    if state.runs[i].knobs == state.knobs.values {
        return vec![];
    }
    state.runs[i].state = RunState::Superseded;
    let old_id = state.runs[i].id.clone();
    // Every bench of the run is measured again with the new knobs; what the old run finished
    // keeps its results in the old column.
    let benches = state.runs[i].benches.clone();
    let run = state.new_run(benches, Some(old_id.clone()));
    let seq = run.seq;
    state.runs.push(run);
    state.set_status(
        format!(
            "knobs changed: run {seq} restarts the benches with {}",
            state.knobs.values
        ),
        false,
    );
    let mut fx = vec![Effect::Cancel(old_id)];
    fx.extend(state.start_next(now));
    fx
}

fn on_run_event(state: &mut State, ev: RunEvent, now: Instant) -> Vec<Effect> {
    match ev {
        RunEvent::Event { run_id, event, .. } => {
            let Some(run) = state.runs.iter_mut().find(|r| r.id == run_id) else {
                return vec![];
            };
            match &event {
                Event::BenchStart { bench, .. } => run.current = Some((bench.clone(), now)),
                Event::Dataset {
                    status: DatasetStatus::Building,
                    rows,
                    ..
                } => {
                    state.datasets.insert(
                        run.target.name,
                        format!("building the dataset ({rows} rows)…"),
                    );
                }
                Event::Dataset {
                    status,
                    rows,
                    build_ms,
                    ..
                } => {
                    let text = match build_ms {
                        Some(ms) => {
                            format!("dataset {rows} rows {status:?} in {ms:.0} ms").to_lowercase()
                        }
                        None => format!("dataset {rows} rows reused from the cache"),
                    };
                    state.datasets.insert(run.target.name, text);
                }
                Event::Start(s) if s.env.is_debug() => {
                    state.status = Some(Status {
                        text: bench_core::protocol::DEBUG_WARNING.into(),
                        error: true,
                    });
                }
                _ => {}
            }
            run.record.apply(event);
            vec![]
        }
        RunEvent::Note { text, .. } => {
            state.set_status(text, false);
            vec![]
        }
        RunEvent::Exited { run_id, outcome } => {
            let Some(run) = state.runs.iter_mut().find(|r| r.id == run_id) else {
                return vec![];
            };
            run.current = None;
            if run.state == RunState::Running {
                run.state = match outcome {
                    Outcome::Completed => RunState::Finished,
                    Outcome::Cancelled => RunState::Cancelled,
                    Outcome::Failed(e) => RunState::Failed(e),
                };
                let seq = run.seq;
                let text = match &run.state {
                    RunState::Failed(e) => {
                        format!("run {seq} failed: {}", e.lines().next().unwrap_or(""))
                    }
                    RunState::Cancelled => format!("run {seq} cancelled"),
                    _ => format!("run {seq} finished"),
                };
                let failed = matches!(run.state, RunState::Failed(_));
                state.set_status(text, failed);
            }
            state.start_next(now)
        }
    }
}

/// Brings the runs of a journal back as columns (read from disk, measured before): their
/// results, how each ended, and which an export holds.
fn reopen(state: &mut State, session: crate::journal::Session) -> Vec<Effect> {
    let mut n = 0;
    let mut skipped = Vec::new();
    for r in session.runs {
        let Ok(target) = bench_core::workloads::find(&r.target) else {
            skipped.push(r.target);
            continue;
        };
        let run_state = match r.outcome.as_deref() {
            Some(o) => RunState::from_journal(o),
            None => RunState::Failed("interrupted: the explorer stopped while it ran".into()),
        };
        if session.exported.contains(&r.run_id) {
            state.session.exported.insert(r.run_id.clone());
        }
        state.next_seq = state.next_seq.max(r.seq + 1);
        let paired = r.record.start.as_ref().is_some_and(|s| s.budget.paired);
        state.runs.push(RunView {
            id: r.run_id,
            target,
            seq: r.seq,
            knobs: r.knobs,
            trace: r.trace,
            benches: r.benches,
            record: r.record,
            state: run_state,
            started: None,
            current: None,
            previous: None,
            profiled: r.profiled,
            paired,
        });
        n += 1;
    }
    state.compare.col = state.target_runs().count().saturating_sub(1);
    let skipped = if skipped.is_empty() {
        String::new()
    } else {
        format!(
            " ({} runs of unknown targets left out: {})",
            skipped.len(),
            skipped.join(", ")
        )
    };
    state.set_status(
        format!("reopened {n} runs from {}{skipped}", session.path.display()),
        false,
    );
    state.session.journal = Some(session.path.clone());
    vec![Effect::ContinueJournal(session.path)]
}
