//! The run queue: runs made, queued (one at a time, at most MAX_QUEUED waiting), started,
//! cancelled; sweeps queued or asked about; saved runs shown beside new ones.

use std::time::Instant;

use bench_core::knobs::Knobs;
use bench_core::protocol::results::RunRecord;

use std::path::PathBuf;

use super::runs::{RunState, RunView};
use super::state::*;
use crate::messages::RunRequest;

impl State {
    pub(super) fn new_run(&mut self, benches: Vec<String>, previous: Option<String>) -> RunView {
        let seq = self.next_seq;
        self.next_seq += 1;
        RunView {
            id: format!("{}-{seq}", self.session.id_prefix),
            target: self.target,
            seq,
            knobs: self.knobs.values.clone(),
            trace: self.trace,
            benches,
            record: RunRecord::default(),
            state: RunState::Queued,
            started: None,
            current: None,
            previous,
            profiled: false,
            paired: self.paired,
        }
    }

    pub(super) fn request(&self, run: &RunView) -> RunRequest {
        let mut req = RunRequest::new(
            run.id.clone(),
            run.target.name,
            run.benches.clone(),
            run.knobs.clone(),
            run.trace,
            &self.session.settings,
        );
        req.profile = run.profiled.then(|| PathBuf::from(PROFILE_DIR));
        req.settings.budget.paired = run.paired;
        req
    }

    /// Starts the oldest queued run if nothing is running (one run at a time, so that runs
    /// never compete for the cores they measure).
    pub(super) fn start_next(&mut self, now: Instant) -> Vec<Effect> {
        if self.active_run().is_some() {
            return vec![];
        }
        let Some(i) = self.runs.iter().position(|r| r.state == RunState::Queued) else {
            return vec![];
        };
        self.runs[i].state = RunState::Running;
        self.runs[i].started = Some(now);
        self.live.row = 0;
        vec![Effect::Start(Box::new(self.request(&self.runs[i])))]
    }

    /// How many more runs the queue takes (at most [`MAX_QUEUED`] wait at once).
    pub(super) fn room(&self) -> usize {
        let waiting = self
            .runs
            .iter()
            .filter(|r| r.state == RunState::Queued)
            .count();
        MAX_QUEUED.saturating_sub(waiting)
    }

    /// Says why `n` more runs are refused, when the queue has no room for them.
    pub(super) fn refuse_if_full(&mut self, n: usize) -> bool {
        let room = self.room();
        if n <= room {
            return false;
        }
        self.set_status(
            format!(
                "the queue is full: {} runs wait (at most {MAX_QUEUED}); {n} more refused; cancel some or let them run",
                MAX_QUEUED - room
            ),
            true,
        );
        true
    }

    /// Shows the histogram of `bench` in `run`, or says why there is none.
    pub(super) fn show_histogram(&mut self, run: Option<(String, usize)>, bench: Option<String>) {
        let (Some((run_id, seq)), Some(bench)) = (run, bench) else {
            self.set_status("no bench selected", true);
            return;
        };
        let has = self
            .runs
            .iter()
            .find(|r| r.id == run_id)
            .and_then(|r| r.record.bench(&bench))
            .is_some_and(|b| !b.samples.is_empty());
        if has {
            self.overlay = Some(Overlay::Histogram { run_id, bench });
        } else {
            self.set_status(format!("{bench} has no samples in run {seq} yet"), true);
        }
    }

    /// Adds saved runs (a file's, a Criterion folder's) as finished columns that are shown,
    /// never measured again; runs of targets not in the catalog are left out and said so.
    pub fn show_saved(&mut self, runs: Vec<RunRecord>, numbers: Option<Vec<usize>>, from: &str) {
        let mut left_out = Vec::new();
        let mut n = 0;
        for (i, mut record) in runs.into_iter().enumerate() {
            let Some(target) = record
                .start
                .as_ref()
                .and_then(|s| bench_core::workloads::find(s.target.raw()).ok())
            else {
                left_out.push(
                    record
                        .start
                        .as_ref()
                        .map(|s| s.target.clone())
                        .unwrap_or_else(|| "?".into()),
                );
                continue;
            };
            record.source.get_or_insert_with(|| from.to_string());
            let seq = numbers
                .as_ref()
                .and_then(|ns| ns.get(i).copied())
                .unwrap_or(self.next_seq);
            self.next_seq = self.next_seq.max(seq + 1);
            let start = record.start.as_ref().expect("found above");
            let paired = start.budget.paired;
            let (knobs, trace) = (start.knobs.clone(), start.trace);
            self.runs.push(RunView {
                id: format!("saved-{seq}-{i}"),
                target,
                seq,
                knobs,
                trace,
                benches: record
                    .benches
                    .iter()
                    .map(|b| b.name.raw().to_string())
                    .collect(),
                state: RunState::Finished,
                started: None,
                current: None,
                previous: None,
                profiled: record.profiled,
                paired,
                record,
            });
            // Shown from a file: nothing to export before quitting.
            self.session.exported.insert(format!("saved-{seq}-{i}"));
            n += 1;
        }
        self.compare.col = self.target_runs().count().saturating_sub(1);
        let left = if left_out.is_empty() {
            String::new()
        } else {
            left_out.dedup();
            format!(
                " ({} left out: not benchscope targets: {})",
                left_out.len(),
                bench_core::text::Text::join(&left_out, ", ").terminal()
            )
        };
        self.set_status(
            format!("{n} saved runs from {from}, read-only{left}"),
            false,
        );
    }

    /// Takes the command line's lists of values as the catalog's sweep, and says so.
    pub fn command_line_sweep(&mut self, varied: String, runs: Vec<Knobs>) {
        self.set_status(
            format!(
                "the command line's lists are a sweep of {varied} ({} runs): mark benches, then s in the catalog queues it",
                runs.len()
            ),
            false,
        );
        self.cli_sweep = Some((varied, runs));
    }

    /// Runs waiting to start.
    pub fn waiting(&self) -> usize {
        self.runs
            .iter()
            .filter(|r| r.state == RunState::Queued)
            .count()
    }

    /// Queues one run per knob set of a sweep: refused when the queue cannot take them, asked
    /// about when [`LONG_QUEUE`] runs already wait.
    pub(super) fn queue_sweep(&mut self, sweep: PendingSweep, now: Instant) -> Vec<Effect> {
        if self.refuse_if_full(sweep.runs.len()) {
            return vec![];
        }
        if self.waiting() >= LONG_QUEUE {
            self.pending_sweep = Some(sweep);
            self.overlay = Some(Overlay::ConfirmSweep);
            return vec![];
        }
        let behind = self.active_run().is_some();
        let mut fx = Vec::new();
        for k in sweep.runs {
            fx.extend(self.queue(sweep.benches.clone(), Some(k), now));
        }
        let after = if behind {
            ", after the running one"
        } else {
            ""
        };
        self.set_status(format!("{}{after}", sweep.queued), false);
        fx
    }

    /// Queues a run of `benches` with the current knobs (or `knobs`), and starts it when
    /// nothing else runs (refused when the queue is full).
    pub(super) fn queue(
        &mut self,
        benches: Vec<String>,
        knobs: Option<Knobs>,
        now: Instant,
    ) -> Vec<Effect> {
        if self.refuse_if_full(1) {
            return vec![];
        }
        let mut run = self.new_run(benches, None);
        if let Some(k) = knobs {
            run.knobs = k;
        }
        self.runs.push(run);
        self.compare.col = self.target_runs().count().saturating_sub(1);
        self.start_next(now)
    }

    /// Cancels the running run, keeping its results, and starts the next queued one.
    pub(super) fn cancel_running(&mut self, now: Instant) -> Vec<Effect> {
        let Some(run) = self.runs.iter_mut().find(|r| r.state == RunState::Running) else {
            self.set_status("no run is going", false);
            return vec![];
        };
        run.state = RunState::Cancelled;
        let (id, seq) = (run.id.clone(), run.seq);
        self.restart_at = None;
        self.set_status(
            format!("run {seq} cancelled; its results so far are kept"),
            false,
        );
        let mut fx = vec![Effect::Cancel(id)];
        fx.extend(self.start_next(now));
        fx
    }
}
