//! The catalog panel: pick benches of a target, run them, sweep, switch targets.

use std::collections::BTreeSet;
use std::time::Instant;

use bench_core::catalog::CONCURRENCY;

use super::keys::Cmd;
use super::{Effect, SWEEP, State, move_cursor};

#[derive(Debug, Clone, Default)]
pub struct CatalogPanel {
    pub cursor: usize,
    pub marked: BTreeSet<&'static str>,
}

impl State {
    /// The benches to run: the marked ones in catalog order, or the one under the cursor.
    pub(super) fn selected_benches(&self) -> Vec<String> {
        let benches = self.catalog_benches();
        if self.catalog.marked.is_empty() {
            vec![benches[self.catalog.cursor].name.to_string()]
        } else {
            benches
                .iter()
                .filter(|b| self.catalog.marked.contains(b.name))
                .map(|b| b.name.to_string())
                .collect()
        }
    }

    /// Shows another target: its knobs keep the values of knobs of the same name.
    fn switch_target(&mut self, by: isize) {
        let all = bench_core::workloads::targets();
        let i = all
            .iter()
            .position(|t| t.name == self.target.name)
            .unwrap_or(0) as isize;
        let next = all[(i + by).rem_euclid(all.len() as isize) as usize];
        if next.name == self.target.name {
            return;
        }
        self.knobs.switch_to(next);
        self.target = next;
        self.catalog = CatalogPanel::default();
        self.compare = super::ComparePanel {
            baseline_run: self.compare.baseline_run.take(),
            ..super::ComparePanel::new(next)
        };
        self.compare.col = self.target_runs().count().saturating_sub(1);
        self.set_status(
            format!("target {}: {}", next.name, crate::format::plain(next.about)),
            false,
        );
    }
}

pub(super) fn on_cmd(state: &mut State, cmd: Cmd, now: Instant) -> Vec<Effect> {
    let len = state.target.benches.len();
    match cmd {
        Cmd::Up | Cmd::Down => move_cursor(&mut state.catalog.cursor, len, cmd == Cmd::Down),
        Cmd::Left | Cmd::Right => state.switch_target(if cmd == Cmd::Right { 1 } else { -1 }),
        Cmd::Mark => {
            let name = state.catalog_benches()[state.catalog.cursor].name;
            if !state.catalog.marked.remove(name) {
                state.catalog.marked.insert(name);
            }
            move_cursor(&mut state.catalog.cursor, len, true);
        }
        Cmd::MarkGroup => {
            let benches = state.catalog_benches();
            let name = benches[state.catalog.cursor].name;
            let group = name.split('/').next().unwrap_or(name);
            let members: Vec<&'static str> = benches
                .iter()
                .map(|b| b.name)
                .filter(|n| *n == group || n.starts_with(&format!("{group}/")))
                .collect();
            let all_marked = members.iter().all(|n| state.catalog.marked.contains(n));
            for n in &members {
                if all_marked {
                    state.catalog.marked.remove(n);
                } else {
                    state.catalog.marked.insert(n);
                }
            }
            state.set_status(
                format!(
                    "{} {} benches {group}/...; {} marked",
                    if all_marked { "unmarked" } else { "marked" },
                    members.len(),
                    state.catalog.marked.len()
                ),
                false,
            );
        }
        Cmd::ClearMarks => {
            state.catalog.marked.clear();
            state.set_status("no bench marked".to_string(), false);
        }
        Cmd::Run => {
            let benches = state.selected_benches();
            let queued = state.active_run().is_some();
            let seq = state.next_seq;
            state.set_status(
                if queued {
                    format!("run {seq} queued: it starts when the running one ends")
                } else {
                    format!("run {seq} started")
                },
                false,
            );
            return state.queue(benches, None, now);
        }
        Cmd::Profile => {
            if state.refuse_if_full(1) {
                return vec![];
            }
            let bench = state.catalog_benches()[state.catalog.cursor]
                .name
                .to_string();
            let behind = state.active_run().is_some();
            let mut run = state.new_run(vec![bench.clone()], None);
            run.profiled = true;
            let seq = run.seq;
            state.runs.push(run);
            state.compare.col = state.target_runs().count().saturating_sub(1);
            state.set_status(
                format!(
                    "run {seq}: {bench} under perf (flamegraph into {}/){}",
                    super::PROFILE_DIR,
                    if behind {
                        ", after the running one"
                    } else {
                        ""
                    }
                ),
                false,
            );
            return state.start_next(now);
        }
        Cmd::Sweep => {
            if let Some((varied, runs)) = state.cli_sweep.clone() {
                let sweep = super::PendingSweep {
                    benches: state.selected_benches(),
                    queued: format!("sweep of {varied}: {} runs queued", runs.len()),
                    runs,
                };
                return state.queue_sweep(sweep, now);
            }
            let runs = SWEEP
                .iter()
                .map(|c| {
                    let mut knobs = state.knobs.values.clone();
                    knobs.set(CONCURRENCY.name, *c);
                    knobs
                })
                .collect();
            let sweep = super::PendingSweep {
                benches: state.selected_benches(),
                runs,
                queued: format!(
                    "sweep: {} runs queued, concurrency {}",
                    SWEEP.len(),
                    SWEEP.map(|c| c.to_string()).join(", ")
                ),
            };
            return state.queue_sweep(sweep, now);
        }
        _ => {}
    }
    vec![]
}
