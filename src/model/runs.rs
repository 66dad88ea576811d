//! Runs as the explorer keeps them: one column of the comparison each, queued and measured one
//! at a time.

use std::time::{Duration, Instant};

use bench_core::catalog::Target;
use bench_core::knobs::Knobs;
use bench_core::protocol::results::{BenchStatus, RunRecord};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunState {
    Queued,
    Running,
    Finished,
    /// Cancelled by the user; results so far are kept.
    Cancelled,
    /// Restarted with other knobs; results so far are kept.
    Superseded,
    Failed(String),
}

impl RunState {
    pub fn is_active(&self) -> bool {
        matches!(self, RunState::Queued | RunState::Running)
    }

    /// How the session journal says a run ended (read back by [`RunState::from_journal`]).
    pub fn journal(&self) -> String {
        match self {
            RunState::Failed(e) => format!("failed: {e}"),
            s => s.label().to_string(),
        }
    }

    pub fn from_journal(text: &str) -> RunState {
        match text {
            "finished" => RunState::Finished,
            "cancelled" => RunState::Cancelled,
            "knobs changed" => RunState::Superseded,
            other => RunState::Failed(other.strip_prefix("failed: ").unwrap_or(other).to_string()),
        }
    }

    pub fn label(&self) -> &str {
        match self {
            RunState::Queued => "queued",
            RunState::Running => "running",
            RunState::Finished => "finished",
            RunState::Cancelled => "cancelled",
            RunState::Superseded => "knobs changed",
            RunState::Failed(_) => "failed",
        }
    }
}

/// One run: a column of the comparison.
#[derive(Debug, Clone)]
pub struct RunView {
    pub id: String,
    pub target: &'static Target,
    /// Column number shown to the user (1-based).
    pub seq: usize,
    pub knobs: Knobs,
    pub trace: bool,
    pub benches: Vec<String>,
    pub record: RunRecord,
    pub state: RunState,
    pub started: Option<Instant>,
    /// The bench being measured and when it started.
    pub current: Option<(String, Instant)>,
    /// The run this one replaced after a knob change (the live chart continues across it).
    pub previous: Option<String>,
    /// Each bench runs under perf (flamegraph + CPU by layer); its timings include perf.
    pub profiled: bool,
    /// Its benches take turns sample by sample (paired rounds).
    pub paired: bool,
}

impl RunView {
    /// Overall progress in 0..=1 and the estimated time left, from the budget in `start`.
    pub fn progress(&self, now: Instant) -> (f64, Option<Duration>) {
        let total = self.benches.len().max(1) as f64;
        let done = self
            .record
            .benches
            .iter()
            .filter(|b| b.status() != BenchStatus::Running)
            .count() as f64;
        let budget = self.record.start.as_ref().map(|s| &s.budget);
        let scenario = (self.target.measure == bench_core::catalog::Measure::Scenario)
            .then(|| {
                self.target
                    .knobs
                    .iter()
                    .find(|k| k.name == "duration")
                    .and_then(|k| self.knobs.count_if(k))
            })
            .flatten();
        // The bench under way, unless it has already finished (the next one has not started:
        // a sqlx harness still building, say), which `done` counts.
        let under_way = self.current.as_ref().filter(|(name, _)| {
            self.record
                .bench(name)
                .is_none_or(|b| b.status() == BenchStatus::Running)
        });
        let current = match (under_way, budget) {
            (Some((_, since)), Some(_)) if scenario.is_some() => {
                let d = scenario.unwrap_or(1).max(1) as f64;
                (now.saturating_duration_since(*since).as_secs_f64() / d).min(1.0)
            }
            (Some((name, since)), Some(b)) => {
                let samples = self
                    .record
                    .bench(name)
                    .map(|r| r.samples.len())
                    .unwrap_or(0) as f64;
                let by_count = samples / b.max_samples.max(1) as f64;
                let by_time = now.saturating_duration_since(*since).as_secs_f64()
                    / (b.warmup_s + b.time_of(name)).max(1e-3);
                by_count.max(by_time).min(1.0)
            }
            _ => 0.0,
        };
        let fraction = if self.state == RunState::Finished {
            1.0
        } else {
            ((done + current) / total).min(1.0)
        };
        let eta = self
            .started
            .filter(|_| fraction > 0.02 && self.state == RunState::Running)
            .map(|s| {
                let elapsed = now.saturating_duration_since(s).as_secs_f64();
                Duration::from_secs_f64((elapsed / fraction - elapsed).max(0.0))
            });
        (fraction, eta)
    }
}
