//! The catalog panel: pick benches of a target, run them, sweep, switch targets.

use std::collections::BTreeSet;
use std::time::Instant;

use bench_core::catalog::CONCURRENCY;

use bench_core::catalog::BenchSpec;

use super::keys::{Cmd, Key};
use super::{Effect, SWEEP, State, move_cursor};

#[derive(Debug, Clone, Default)]
pub struct CatalogPanel {
    pub cursor: usize,
    pub marked: BTreeSet<&'static str>,
    /// What the catalog and the comparison's rows are narrowed to (`/`): words that must all
    /// be found in a bench's name, backend, strategy or phase.
    pub filter: String,
    /// The filter is being typed: keys go to it.
    pub filtering: bool,
}

/// Whether `b` is shown under `filter`: each of its words (case aside) in the bench's name,
/// backend (pool or crate), strategy or phase.
pub fn shown(b: &BenchSpec, filter: &str) -> bool {
    if filter.trim().is_empty() {
        return true;
    }
    let mut text = format!("{} {}", b.name, b.backend());
    if let Some(s) = b.strategy() {
        text.push(' ');
        text.push_str(s.name());
    }
    if let Some(p) = b.phase {
        text.push(' ');
        text.push_str(p.label());
    }
    let text = text.to_lowercase();
    filter
        .split_whitespace()
        .all(|w| text.contains(&w.to_lowercase()))
}

/// Keys while the filter is typed: text narrows at each key, ↑↓ still move, enter keeps the
/// filter, esc clears it.
pub(super) fn on_filter_key(state: &mut State, key: Key, now: Instant) -> Vec<Effect> {
    let c = &mut state.catalog;
    match key {
        Key::Char(ch) if c.filter.len() < 64 => c.filter.push(ch),
        Key::Backspace => {
            c.filter.pop();
        }
        Key::Enter => c.filtering = false,
        Key::Esc => {
            c.filter.clear();
            c.filtering = false;
        }
        Key::Up | Key::Down => {
            return on_cmd(state, if key == Key::Up { Cmd::Up } else { Cmd::Down }, now);
        }
        _ => return vec![],
    }
    state.catalog.cursor = 0;
    vec![]
}

impl State {
    /// The benches to run: the marked ones in catalog order, or the one under the cursor.
    pub(super) fn selected_benches(&self) -> Vec<String> {
        let benches = self.catalog_benches();
        if self.catalog.marked.is_empty() {
            benches
                .get(self.catalog.cursor)
                .map(|b| vec![b.name.to_string()])
                .unwrap_or_default()
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
    let shown = state.catalog_benches();
    let len = shown.len();
    let Some(under) = shown.get(state.catalog.cursor).map(|b| b.name) else {
        // Nothing matches the filter: only what does not need a bench goes on.
        match cmd {
            Cmd::Left | Cmd::Right => state.switch_target(if cmd == Cmd::Right { 1 } else { -1 }),
            Cmd::Filter => state.catalog.filtering = true,
            Cmd::ClearFilter => state.catalog.filter.clear(),
            Cmd::Run | Cmd::Mark | Cmd::MarkGroup | Cmd::Profile | Cmd::Sweep => {
                state.set_status(
                    format!(
                        "no bench matches /{}: esc clears the filter",
                        state.catalog.filter
                    ),
                    true,
                );
            }
            _ => {}
        }
        return vec![];
    };
    match cmd {
        Cmd::Filter => state.catalog.filtering = true,
        Cmd::ClearFilter => {
            state.catalog.filter.clear();
            state.catalog.cursor = state
                .catalog_benches()
                .iter()
                .position(|b| b.name == under)
                .unwrap_or(0);
        }
        Cmd::Up | Cmd::Down => move_cursor(&mut state.catalog.cursor, len, cmd == Cmd::Down),
        Cmd::Left | Cmd::Right => state.switch_target(if cmd == Cmd::Right { 1 } else { -1 }),
        Cmd::Mark => {
            let name = under;
            if !state.catalog.marked.remove(name) {
                state.catalog.marked.insert(name);
            }
            move_cursor(&mut state.catalog.cursor, len, true);
        }
        Cmd::MarkGroup => {
            let name = under;
            let group = name.split('/').next().unwrap_or(name);
            let members: Vec<&'static str> = shown
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
            let bench = under.to_string();
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
