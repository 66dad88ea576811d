//! The catalog panel: pick benches of a target, run them, sweep, switch targets.

use std::collections::BTreeSet;
use std::time::Instant;

use bench_core::catalog::CONCURRENCY;

use super::keys::{Cmd, Key};
use super::panels::{CatalogPanel, group_of};
use super::state::{Effect, SWEEP, State, move_cursor};

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
        let benches = self.filtered_benches();
        if self.catalog.marked.is_empty() {
            let Some(under) = self.catalog_benches().get(self.catalog.cursor).copied() else {
                return Vec::new();
            };
            if self.catalog.folded.contains(group_of(under.name)) {
                return self.group_members(under.name).map(String::from).collect();
            }
            vec![under.name.to_string()]
        } else {
            benches
                .iter()
                .filter(|b| self.catalog.marked.contains(b.name))
                .map(|b| b.name.to_string())
                .collect()
        }
    }

    /// The benches the filter shows in `name`'s group.
    pub fn group_members(&self, name: &str) -> impl Iterator<Item = &'static str> {
        let group = group_of(name).to_string();
        self.filtered_benches()
            .into_iter()
            .map(|b| b.name)
            .filter(move |n| group_of(n) == group)
    }

    /// Puts the cursor on `name`'s row, or its folded group's.
    fn cursor_to(&mut self, name: &str) {
        let group = group_of(name);
        let rows = self.catalog_benches();
        self.catalog.cursor = rows
            .iter()
            .position(|b| b.name == name)
            .or_else(|| rows.iter().position(|b| group_of(b.name) == group))
            .unwrap_or(0);
    }

    /// Shows another target: its knobs keep the values of knobs of the same name.
    fn switch_target(&mut self, by: isize) {
        let all = bench_core::workloads::targets();
        let i = all
            .iter()
            .position(|t| t.name == self.target.name)
            .unwrap_or(0) as isize;
        let mut next = all[(i + by).rem_euclid(all.len() as isize) as usize];
        if next.name == self.target.name {
            return;
        }
        // The script target with the scripts' variables as knobs, when scripts were given.
        if let Some(view) = self.script.as_ref().filter(|v| v.target.name == next.name) {
            next = view.target;
        }
        self.knobs.switch_to(next);
        self.target = next;
        self.catalog = CatalogPanel::default();
        self.compare = super::panels::ComparePanel {
            baseline_run: self.compare.baseline_run.take(),
            ..super::panels::ComparePanel::new(next)
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
            state.cursor_to(under);
        }
        Cmd::Fold => {
            let group = group_of(under);
            if !state.catalog.folded.remove(group) {
                state.catalog.folded.insert(group);
            }
            state.cursor_to(under);
        }
        Cmd::FoldAll => {
            let groups: BTreeSet<&'static str> = state
                .filtered_benches()
                .iter()
                .map(|b| group_of(b.name))
                .filter(|g| state.group_members(g).nth(1).is_some())
                .collect();
            if groups.is_subset(&state.catalog.folded) {
                state.catalog.folded.clear();
            } else {
                state.catalog.folded = groups;
            }
            state.cursor_to(under);
        }
        Cmd::Up | Cmd::Down => move_cursor(&mut state.catalog.cursor, len, cmd == Cmd::Down),
        Cmd::Left | Cmd::Right => state.switch_target(if cmd == Cmd::Right { 1 } else { -1 }),
        // A folded group's row marks the group.
        Cmd::Mark if state.catalog.folded.contains(group_of(under)) => {
            mark_group(state, under);
            move_cursor(&mut state.catalog.cursor, len, true);
        }
        Cmd::Mark => {
            let name = under;
            if !state.catalog.marked.remove(name) {
                state.catalog.marked.insert(name);
            }
            move_cursor(&mut state.catalog.cursor, len, true);
        }
        Cmd::MarkGroup => mark_group(state, under),
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
                    super::state::PROFILE_DIR,
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
                let sweep = super::state::PendingSweep {
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
            let sweep = super::state::PendingSweep {
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

/// Marks every bench of `name`'s group the filter shows, or unmarks them when all are marked.
fn mark_group(state: &mut State, name: &'static str) {
    let group = group_of(name);
    let members: Vec<&'static str> = state.group_members(name).collect();
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
