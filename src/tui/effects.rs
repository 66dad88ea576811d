//! What the loop carries out for the model: the effects `update` returns (start, cancel,
//! export, save, open, journal) and the runner events it applies, with the session journal.

use std::collections::HashMap;
use std::time::Instant;

use tokio::sync::mpsc;

use crate::export::{self, Report};
use crate::messages::{Outcome, RunEvent};
use crate::model::{Action, Effect, State, update};
use crate::runner::{RunHandle, Runner};

pub(super) struct Loop<'a> {
    pub(super) runner: &'a dyn Runner,
    pub(super) tx: mpsc::UnboundedSender<RunEvent>,
    pub(super) handles: HashMap<String, RunHandle>,
    pub(super) snapshot_dir: &'a std::path::Path,
    /// Whether perf can record here, checked on the first profiled run.
    pub(super) perf: Option<Result<(), String>>,
    pub(super) journal: Option<crate::journal::Writer>,
    /// Where finished runs are recorded and history is read.
    pub(super) store: StoreLink<'a>,
}

/// The results store as the loop reaches it: the thread recording finished runs, where the
/// store is (none with --no-store), and where a history read in the background reports.
pub(super) struct StoreLink<'a> {
    pub(super) background: Option<&'a crate::store::background::Background>,
    pub(super) target: Option<crate::store::Target>,
    pub(super) actions: mpsc::UnboundedSender<Action>,
}

impl Loop<'_> {
    /// The folder a profiled run writes its flamegraphs to (under the snapshot folder), once
    /// perf is known to work here.
    fn profile_dir(&mut self, sub: &std::path::Path) -> Result<std::path::PathBuf, String> {
        self.perf
            .get_or_insert_with(crate::profile::check)
            .clone()?;
        let dir = self.snapshot_dir.join(sub);
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        Ok(dir)
    }

    /// Writes to the journal; the first failure is said on the status line, then the session
    /// goes on without one.
    pub(super) fn journal(
        &mut self,
        state: &mut State,
        write: impl FnOnce(&mut crate::journal::Writer) -> Result<(), String>,
    ) {
        if let Some(Err(e)) = self.journal.as_mut().map(write) {
            self.apply(state, Action::JournalFailed(e));
        }
    }

    /// Applies what a runner said; returns whether a run ended (drawn at the next tick).
    pub(super) fn run_event(&mut self, state: &mut State, ev: RunEvent) -> bool {
        let ended = match &ev {
            RunEvent::Exited { run_id, .. } => {
                self.handles.remove(run_id);
                Some(run_id.clone())
            }
            _ => None,
        };
        self.apply(state, Action::Run(ev));
        ended.is_some_and(|id| self.journal_end(state, &id))
    }

    /// Journals how run `run_id` ended, as the model decided it; whether it knows the run.
    pub(super) fn journal_end(&mut self, state: &mut State, run_id: &str) -> bool {
        let Some(r) = state.runs.iter().find(|r| r.id == run_id) else {
            return false;
        };
        let entry = crate::journal::Entry::End {
            run_id: r.id.clone(),
            outcome: r.state.journal(),
        };
        if r.state == crate::model::RunState::Finished
            && let Some(s) = self.store.background
        {
            s.record(r.record.clone());
        }
        self.journal(state, |w| w.append(&entry));
        true
    }

    pub(super) fn apply(&mut self, state: &mut State, action: Action) {
        if let Action::Run(RunEvent::Event { run_id, line, .. }) = &action {
            let (id, line) = (run_id.clone(), line.clone());
            self.journal(state, |w| w.append_event(&id, &line));
        }
        let mut queue = vec![action];
        while let Some(action) = queue.pop() {
            for effect in update(state, action, Instant::now()) {
                match effect {
                    Effect::Start(mut req) => {
                        let id = req.run_id.clone();
                        if let Some(r) = state.runs.iter().find(|r| r.id == id) {
                            let entry = crate::journal::Entry::Run {
                                run_id: id.clone(),
                                seq: r.seq,
                                target: r.target.name.to_string(),
                                benches: r.benches.clone(),
                                knobs: r.knobs.clone(),
                                trace: r.trace,
                                profiled: r.profiled,
                            };
                            self.journal(state, |w| w.append(&entry));
                        }
                        if let Some(sub) = req.profile.take() {
                            match self.profile_dir(&sub) {
                                Ok(dir) => req.profile = Some(dir),
                                Err(e) => {
                                    queue.push(Action::Run(RunEvent::Exited {
                                        run_id: id,
                                        outcome: Outcome::Failed(e),
                                    }));
                                    continue;
                                }
                            }
                        }
                        match self.runner.start(*req, self.tx.clone()) {
                            Ok(h) => {
                                self.handles.insert(id, h);
                            }
                            Err(e) => queue.push(Action::Run(RunEvent::Exited {
                                run_id: id,
                                outcome: Outcome::Failed(format!("cannot start the runner: {e}")),
                            })),
                        }
                    }
                    Effect::Cancel(id) => {
                        if let Some(h) = self.handles.get_mut(&id) {
                            h.cancel();
                        }
                    }
                    Effect::Export => {
                        let generated_at = crate::format::now_rfc3339();
                        let stamp = generated_at.replace([':', '-'], "");
                        let stem = crate::files::free_stem(
                            self.snapshot_dir,
                            &format!(
                                "benchscope-{}-{}",
                                state.target.name,
                                stamp.trim_end_matches('Z')
                            ),
                            &["md", "json"],
                        );
                        let charts_dir = std::fs::create_dir_all(self.snapshot_dir)
                            .ok()
                            .map(|()| (self.snapshot_dir, stem.as_str()));
                        let (md, json, note) = export_contents(state, &generated_at, charts_dir);
                        let result = crate::files::write_new(
                            self.snapshot_dir,
                            &stem,
                            &[("md", &md), ("json", &json)],
                        )
                        .map(|ps| {
                            ps.iter()
                                .map(|p| p.display().to_string())
                                .chain(note)
                                .collect()
                        });
                        queue.push(Action::Exported(result));
                    }
                    // update has set `quit`: the loop ends after this action.
                    Effect::Quit => {}
                    Effect::Journal(entry) => self.journal(state, |w| w.append(&entry)),
                    Effect::SaveBaseline(name) => {
                        let runs: Vec<bench_core::protocol::results::RunRecord> = state
                            .baseline_candidates()
                            .map(|r| r.record.clone())
                            .collect();
                        let cache = state
                            .session
                            .settings
                            .cache_dir
                            .clone()
                            .unwrap_or_else(bench_core::dataset::default_cache_dir);
                        let dir = crate::baseline::dir(None, &cache);
                        let result = crate::baseline::save(
                            &dir,
                            &name,
                            &runs,
                            &crate::format::now_rfc3339(),
                        )
                        .map(|p| {
                            format!(
                                "saved {} run{} as baseline {name} ({}); `benchscope run {} --baseline {name}` judges later runs against it",
                                runs.len(),
                                if runs.len() == 1 { "" } else { "s" },
                                p.display(),
                                state.target.name
                            )
                        });
                        queue.push(Action::BaselineSaved(result));
                    }
                    Effect::OpenFile(path) => {
                        let result = crate::show::load(&path)
                            .map(|s| (s.runs, s.run_numbers, path.display().to_string()));
                        queue.push(Action::Opened(result));
                    }
                    Effect::LoadHistory { target, bench } => match self.store.target.clone() {
                        None => queue.push(Action::HistoryLoaded {
                            bench,
                            result: Err(
                                "no results store: runs are not recorded (--no-store)".into()
                            ),
                        }),
                        // Off the loop's thread: a PostgreSQL store may take a while.
                        Some(store) => {
                            let tx = self.store.actions.clone();
                            std::thread::spawn(move || {
                                let result = crate::site::bench_history(&store, &target, &bench);
                                let _ = tx.send(Action::HistoryLoaded { bench, result });
                            });
                        }
                    },
                    Effect::ContinueJournal(path) => {
                        self.journal = Some(crate::journal::Writer::new(path))
                    }
                    Effect::DismissJournal(path) => {
                        let mut w = crate::journal::Writer::new(path);
                        if let Err(e) = w.append(&crate::journal::Entry::Dismissed) {
                            queue.push(Action::DismissFailed(e));
                        }
                    }
                }
            }
        }
    }
}

/// The export of everything with results, through the same exporters as `benchscope run`;
/// with a folder and stem, the SVG charts are drawn there first and the markdown links them.
pub(super) fn export_contents(
    state: &State,
    generated_at: &str,
    charts_at: Option<(&std::path::Path, &str)>,
) -> (String, String, Option<String>) {
    let (runs, numbers, baseline_run) = state.export_runs();
    let mut report = Report {
        baseline_run,
        run_numbers: Some(&numbers),
        ..Report::new(&runs, state.compare.baseline_bench, generated_at)
    };
    let mut note = None;
    if let Some((dir, stem)) = charts_at {
        let charts = export::charts::write_all(&report, dir, stem);
        note = match &charts {
            Ok(c) if !c.is_empty() => Some(format!("{} SVG charts", c.len())),
            Ok(_) => None,
            Err(e) => Some(e.clone()),
        };
        report.charts = Some(charts);
    }
    (
        export::markdown::render(&report),
        export::json::render(&report),
        note,
    )
}
