//! What the runner layer does not take on trust from a runner: events about benches nobody
//! asked for, figures that cannot be (negative, infinite, NaN), sample counters that jump, and
//! silence (a runner that stops writing is stopped, with how long it was silent).

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use bench_core::protocol::{Budget, DatasetStatus, Event};

/// Checks each event of one runner against what was asked of it.
pub struct Guard {
    asked: BTreeSet<String>,
    /// The most samples the budget allows a bench (`--samples`).
    max_samples: u64,
    next_sample: HashMap<String, u64>,
    /// The bench the runner is measuring (its last `bench_start`).
    pub current: Option<String>,
}

fn finite(what: &str, v: f64) -> Result<(), String> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(format!("{what} is {v} (allowed: a finite number >= 0)"))
    }
}

impl Guard {
    /// A guard for the `benches` asked for, within the runner's `budget` (its most samples).
    pub fn new(benches: &[String], budget: &Budget) -> Guard {
        let max_samples = budget.max_samples as u64;
        Guard {
            asked: benches.iter().cloned().collect(),
            max_samples,
            next_sample: HashMap::new(),
            current: None,
        }
    }

    fn asked(&self, bench: &str) -> Result<(), String> {
        if self.asked.contains(bench) {
            Ok(())
        } else {
            Err(format!(
                "an event for bench {bench:?}, which was not asked for (asked: {})",
                self.asked.iter().cloned().collect::<Vec<_>>().join(", ")
            ))
        }
    }

    /// Why `event` cannot be believed, if it cannot.
    pub fn check(&mut self, event: &Event) -> Result<(), String> {
        match event {
            Event::BenchStart { bench, .. } => {
                self.asked(bench)?;
                self.current = Some(bench.clone());
            }
            Event::Sample {
                bench,
                iter,
                ops,
                elapsed_ns,
                ..
            } => {
                self.asked(bench)?;
                let want = self.next_sample.entry(bench.clone()).or_insert(0);
                if *iter != *want {
                    return Err(format!(
                        "{bench}: sample {iter} came where sample {want} was due (counters must count up from 0)"
                    ));
                }
                *want += 1;
                if *iter >= self.max_samples {
                    return Err(format!(
                        "{bench}: sample {iter} is past the {} samples the budget allows (--samples)",
                        self.max_samples
                    ));
                }
                if *ops == 0 || *elapsed_ns == 0 {
                    return Err(format!(
                        "{bench}: sample {iter} of {ops} operations in {elapsed_ns} ns (allowed: both above 0)"
                    ));
                }
            }
            Event::Phases {
                bench, ns_per_op, ..
            } => {
                self.asked(bench)?;
                for (phase, v) in ns_per_op {
                    finite(&format!("{bench}: phase {phase:?}"), *v)?;
                }
            }
            Event::Summary { bench, stats } => {
                self.asked(bench)?;
                let s = stats;
                for (what, v) in [
                    ("mean", s.mean),
                    ("median", s.median),
                    ("std_dev", s.std_dev),
                    ("mad", s.mad),
                    ("min", s.min),
                    ("max", s.max),
                    ("ci95_median low", s.ci95_median[0]),
                    ("ci95_median high", s.ci95_median[1]),
                    ("ci95_mean low", s.ci95_mean[0]),
                    ("ci95_mean high", s.ci95_mean[1]),
                ] {
                    finite(&format!("{bench}: summary {what}"), v)?;
                }
                if !(s.min <= s.median && s.median <= s.max) {
                    return Err(format!(
                        "{bench}: summary median {} outside its samples' range {}..{}",
                        s.median, s.min, s.max
                    ));
                }
                let seen = self.next_sample.get(bench).copied().unwrap_or(0);
                if s.samples as u64 != seen {
                    return Err(format!(
                        "{bench}: summary of {} samples after {seen} samples",
                        s.samples
                    ));
                }
                if let Some(c) = &s.cost {
                    finite(&format!("{bench}: CPU per operation"), c.cpu_ns_per_op)?;
                    finite(&format!("{bench}: CPU per wall time"), c.cpu_per_wall)?;
                }
                if let Some(m) = &s.memory {
                    m.check().map_err(|e| format!("{bench}: {e}"))?;
                }
            }
            Event::Tick { bench, window } => {
                self.asked(bench)?;
                finite(&format!("{bench}: reads/s"), window.reads_per_s)?;
            }
            Event::Scenario { bench, stats } => {
                self.asked(bench)?;
                finite(&format!("{bench}: reads/s"), stats.reads_per_s)?;
                finite(&format!("{bench}: elapsed"), stats.elapsed_s)?;
            }
            Event::Skipped { bench, .. } | Event::Profile { bench, .. } => self.asked(bench)?,
            Event::Paired {
                bench,
                against,
                ratio,
            } => {
                self.asked(bench)?;
                self.asked(against)?;
                for (what, v) in [
                    ("median", ratio.median),
                    ("low", ratio.ci95[0]),
                    ("high", ratio.ci95[1]),
                ] {
                    finite(&format!("{bench}: paired ratio {what}"), v)?;
                }
                if !(ratio.ci95[0] <= ratio.median && ratio.median <= ratio.ci95[1]) {
                    return Err(format!(
                        "{bench}: paired ratio {} outside its interval {:?}",
                        ratio.median, ratio.ci95
                    ));
                }
            }
            Event::Error {
                bench: Some(bench), ..
            } => self.asked(bench)?,
            Event::Dataset {
                build_ms: Some(ms), ..
            } => finite("dataset build time", *ms)?,
            _ => {}
        }
        Ok(())
    }
}

/// An event and its line with every secret of the run's PostgreSQL connection string scrubbed
/// (a driver's error may echo it). `line` is the JSON the runner wrote for `event`: it is
/// searched whole, so no field is missed, and re-read only when a secret was in it.
pub fn scrub(event: Event, line: String, secrets: &[String]) -> (Event, String) {
    if secrets.is_empty() {
        return (event, line);
    }
    let clean = bench_core::redact::scrub(&line, secrets);
    if clean == line {
        return (event, line);
    }
    match bench_core::protocol::decode(&clean) {
        Ok(e) => (e, clean),
        // A secret that was also JSON syntax: drop the texts rather than show it.
        Err(_) => {
            let e = Event::Error {
                bench: None,
                message: "a runner's message held the PostgreSQL password; it was withheld".into(),
            };
            let line = bench_core::protocol::encode(&e);
            (e, line)
        }
    }
}

/// How long a runner may stay silent before it is stopped: long enough for any sample the
/// budget allows (a pass lasts at least as long as one sample, and the warm-up runs whole
/// passes), plus a margin; while a dataset is being built, more in proportion to its rows.
/// The part that depends on the run is worked out once, not at every event.
pub struct Watchdog {
    base: f64,
}

impl Watchdog {
    /// The watchdog of a runner given `b`.
    pub fn new(b: &Budget) -> Watchdog {
        // The longest time any bench takes: --time, or a bench's own (--time-for P=S).
        let own = b.times.values().copied().fold(0.0, f64::max);
        let budget = b.time_s.max(own) + b.warmup_s;
        // BENCHSCOPE_SILENCE_S sets the bound outright (a slow machine, or a test of it); its
        // one parser bounds it (the front ends refused any other value before starting).
        let base = bench_core::vars::SILENCE_S
            .read()
            .ok()
            .flatten()
            .unwrap_or(60.0 + 10.0 * budget);
        Watchdog { base }
    }

    /// The silence allowed after `last` (the runner's latest event, if any).
    pub fn bound(&self, last: Option<&Event>) -> Duration {
        let building = match last {
            Some(Event::Dataset {
                status: DatasetStatus::Building,
                rows,
                ..
            }) => *rows as f64 * 50e-6,
            _ => 0.0,
        };
        Duration::from_secs_f64(self.base + building)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;

    #[test]
    fn events_nobody_asked_for_or_that_cannot_be_are_refused() {
        let mut g = Guard::new(&["rusqlite".to_string()], &default_budget());
        let events = testing::bench_events("rusqlite", "rusqlite", 10, &[100.0, 110.0], None);
        for e in &events {
            g.check(e).unwrap();
        }
        assert_eq!(g.current.as_deref(), Some("rusqlite"));
        let other = testing::bench_events("sqlx", "sqlx", 10, &[100.0], None);
        assert_eq!(
            g.check(&other[0]).unwrap_err(),
            "an event for bench \"sqlx\", which was not asked for (asked: rusqlite)"
        );
        // A negative median.
        let mut g = Guard::new(&["rusqlite".to_string()], &default_budget());
        let mut bad = testing::bench_events("rusqlite", "rusqlite", 10, &[100.0], None);
        if let Some(Event::Summary { stats, .. }) = bad.last_mut() {
            stats.median = -5.0;
        }
        let errs: Vec<String> = bad.iter().filter_map(|e| g.check(e).err()).collect();
        assert_eq!(
            errs,
            ["rusqlite: summary median is -5 (allowed: a finite number >= 0)"]
        );
        // Allocations per operation that cannot be a count.
        let mut g = Guard::new(&["rusqlite".to_string()], &default_budget());
        let mut bad = testing::bench_events("rusqlite", "rusqlite", 10, &[100.0], None);
        if let Some(Event::Summary { stats, .. }) = bad.last_mut() {
            stats.memory.as_mut().unwrap().allocs_per_op = f64::NAN;
        }
        let errs: Vec<String> = bad.iter().filter_map(|e| g.check(e).err()).collect();
        assert_eq!(
            errs,
            ["rusqlite: allocations per operation is NaN (allowed: a finite number >= 0)"]
        );
        // A counter that jumps.
        let mut g = Guard::new(&["rusqlite".to_string()], &default_budget());
        let mut jump = testing::bench_events("rusqlite", "rusqlite", 10, &[1.0, 2.0], None);
        if let Event::Sample { iter, .. } = &mut jump[2] {
            *iter = 5;
        }
        let errs: Vec<String> = jump.iter().filter_map(|e| g.check(e).err()).collect();
        assert_eq!(
            errs[0],
            "rusqlite: sample 5 came where sample 1 was due (counters must count up from 0)"
        );
    }

    /// A runner's texts that echo the connection string's password are scrubbed before
    /// anything shows them (the harness scrubs its own errors too; this catches the rest).
    #[test]
    fn secrets_in_any_event_are_scrubbed() {
        let secrets = bench_core::redact::secrets("postgres://u:p%40ss@db/x?password=hunter2");
        let e = Event::Skipped {
            bench: "postgres".into(),
            reason:
                "server said: password p@ss rejected for postgres://u:p%40ss@db/x?password=hunter2"
                    .into(),
        };
        let line = bench_core::protocol::encode(&e);
        let (clean, clean_line) = scrub(e, line.clone(), &secrets);
        assert_ne!(clean_line, line);
        assert_eq!(bench_core::protocol::decode(&clean_line).unwrap(), clean);
        assert_eq!(
            clean,
            Event::Skipped {
                bench: "postgres".into(),
                reason: "server said: password *** rejected for postgres://u:***@db/x?password=***"
                    .into(),
            }
        );
        let sample = testing::bench_events("rusqlite", "rusqlite", 10, &[1.0], None);
        let line = bench_core::protocol::encode(&sample[1]);
        let (same, same_line) = scrub(sample[1].clone(), line.clone(), &secrets);
        assert_eq!(same_line, line);
        assert_eq!(same, sample[1]);
    }

    fn default_budget() -> Budget {
        bench_core::service::args::BudgetArgs::default()
            .resolve()
            .unwrap()
    }

    #[test]
    fn silence_is_bounded_by_the_budget_and_a_dataset_build() {
        let mut req = crate::messages::RunRequest::new(
            "r".into(),
            "key_value",
            vec![
                "bulk_put/rusqlite".into(),
                "single_get_100b/rusqlite".into(),
            ],
            Default::default(),
            false,
            &Default::default(),
        );
        req.settings.budget.time_s = "1".into();
        req.settings.budget.warmup_s = "0.5".into();
        let watchdog = |r: &crate::messages::RunRequest| Watchdog::new(&r.budget().unwrap());
        assert_eq!(watchdog(&req).bound(None), Duration::from_secs(75));
        let building = Event::Dataset {
            status: DatasetStatus::Building,
            rows: 1_000_000,
            path: "p".into(),
            build_ms: None,
        };
        assert_eq!(
            watchdog(&req).bound(Some(&building)),
            Duration::from_secs(125)
        );
        // A bench with a longer time of its own bounds it instead; a shorter one does not.
        for (own, bound) in [("^bulk_=10", 165), ("^single_get=0.5", 75)] {
            let mut r = req.clone();
            r.settings.budget.time_for.push(own.into());
            assert_eq!(watchdog(&r).bound(None), Duration::from_secs(bound));
        }
    }
}
