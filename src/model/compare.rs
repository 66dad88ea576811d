//! The comparison panel: benches as rows, runs as columns; pick the baseline bench (ratios)
//! and the baseline run (verdicts).

use super::keys::Cmd;
use super::state::{Effect, State, move_cursor};

pub(super) fn on_cmd(state: &mut State, cmd: Cmd) -> Vec<Effect> {
    if state.compare.matrix {
        let (rows, columns) = state
            .matrix_view()
            .map_or((0, 0), |(_, m, rows)| (rows.len(), m.columns.len()));
        match cmd {
            Cmd::Up | Cmd::Down => {
                move_cursor(&mut state.compare.matrix_row, rows, cmd == Cmd::Down);
                return vec![];
            }
            Cmd::Left | Cmd::Right => {
                move_cursor(&mut state.compare.matrix_col, columns, cmd == Cmd::Right);
                return vec![];
            }
            _ => {}
        }
    }
    match cmd {
        Cmd::Matrix => {
            if state.compare.matrix {
                state.compare.matrix = false;
            } else if bench_core::matrix::axes(state.target).is_some() {
                state.compare.matrix = true;
                state.compare.matrix_row = 0;
                state.set_status(
                    "matrix of the selected run: ↑↓ rows, ←→ columns, m back to runs side by side",
                    false,
                );
            } else {
                state.set_status(
                    format!(
                        "{}'s benches are not cases on backends (as crud_overhead's and key_value's are): no matrix",
                        state.target.name
                    ),
                    true,
                );
            }
        }
        Cmd::Up | Cmd::Down => {
            let n = state.compare_rows().len();
            move_cursor(&mut state.compare.row, n, cmd == Cmd::Down);
        }
        Cmd::Left | Cmd::Right => {
            let n = state.target_runs().count();
            move_cursor(&mut state.compare.col, n, cmd == Cmd::Right);
        }
        Cmd::BaselineBench => {
            if let Some(name) = state.compare_rows().get(state.compare.row) {
                state.compare.baseline_bench = name;
                state.set_status(format!("ratios are now against {name}"), false);
            }
        }
        Cmd::BaselineRun => {
            let picked = state
                .target_runs()
                .nth(state.compare.col)
                .map(|r| (r.id.clone(), r.seq, r.profiled));
            if let Some((_, seq, true)) = picked {
                state.set_status(
                    format!("run {seq} ran under perf: its timings include the profiler, so it cannot be the baseline"),
                    true,
                );
            } else if let Some((id, seq, false)) = picked {
                state.compare.baseline_run = Some(id);
                state.set_status(format!("verdicts are now against run {seq}"), false);
            }
        }
        Cmd::SaveBaseline => {
            if state.baseline_candidates().next().is_none() {
                state.set_status(
                    format!(
                        "no finished run of {} to save as a baseline",
                        state.target.name
                    ),
                    true,
                );
                return vec![];
            }
            // A name is asked for, offered as `<target>-<UTC time>`.
            let stamp = crate::format::now_rfc3339().replace([':', '-'], "");
            let name = format!("{}-{}", state.target.name, stamp.trim_end_matches('Z'));
            state
                .prompt
                .open(name, super::state::TypedFor::BaselineName);
        }
        Cmd::History => {
            let (run, bench) = selected_cell(state);
            let (Some((run_id, _)), Some(bench)) = (run, bench) else {
                state.set_status("no bench selected", true);
                return vec![];
            };
            state.history = Some(super::state::HistoryView {
                bench: bench.clone(),
                loaded: None,
            });
            state.overlay = Some(super::state::Overlay::History {
                run_id,
                bench: bench.clone(),
            });
            return vec![Effect::LoadHistory {
                target: state.target.name.to_string(),
                bench,
            }];
        }
        Cmd::Histogram => {
            let (run, bench) = selected_cell(state);
            state.show_histogram(run, bench);
        }
        Cmd::Scaling => {
            if state.scaling().is_some() {
                state.overlay = Some(super::state::Overlay::Scaling);
            } else {
                state.set_status(
                    "no sweep among these runs: they must differ in one or two knobs (s in Knobs makes one)",
                    true,
                );
            }
        }
        _ => {}
    }
    vec![]
}

/// The selected cell: its run (id and number) and its bench, the matrix's cell when the run
/// is shown as a matrix.
fn selected_cell(state: &State) -> (Option<(String, usize)>, Option<String>) {
    let run = state
        .target_runs()
        .nth(state.compare.col)
        .map(|r| (r.id.clone(), r.seq));
    let bench = if state.compare.matrix {
        state.matrix_bench()
    } else {
        state
            .compare_rows()
            .get(state.compare.row)
            .map(|b| b.to_string())
    };
    (run, bench)
}
