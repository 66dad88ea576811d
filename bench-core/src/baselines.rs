//! What a comparison is made against: the bench every ratio is relative to (or the one a
//! bench's catalog entry names), the run every change is judged against, and the runs made
//! the same way; and a run's comparison rows. Apart from `compare` because it reads the
//! catalog's registry (a bench's own baseline), which the workloads' own reports, users of
//! `compare`, sit under.

use crate::compare::*;
use crate::protocol::results::{BenchResult, RunRecord};

/// What a comparison is made against.
#[derive(Debug, Clone)]
pub struct Baselines<'a> {
    /// The bench every ratio is relative to.
    pub bench: &'a str,
    /// The run every change is relative to (none for a single run).
    pub run: Option<&'a RunRecord>,
    pub settings: Settings,
    /// Every run on hand: those made the same way as the baseline run (or as the run judged)
    /// are its repeats, and measure how far a run moves from run to run.
    pub peers: Vec<&'a RunRecord>,
}

impl<'a> Baselines<'a> {
    pub fn bench(bench: &'a str) -> Self {
        Baselines {
            bench,
            run: None,
            settings: Settings::default(),
            peers: Vec::new(),
        }
    }

    /// The bench `bench`'s ratio is taken against: the one its catalog entry names (the same
    /// operation on the baseline backend, say), else the baseline bench.
    pub fn base_of(&self, run: &RunRecord, bench: &str) -> &'a str {
        run.start
            .as_ref()
            .and_then(|s| crate::workloads::find(s.target.raw()).ok())
            .and_then(|t| t.spec(bench).ok())
            .and_then(|s| s.vs)
            .unwrap_or(self.bench)
    }

    /// The ratio of `bench`'s median in `run` to its baseline bench's, with its interval.
    pub fn ratio(&self, run: &RunRecord, bench: &str) -> Option<Ratio> {
        let b = run.bench(bench)?;
        b.summary.as_ref()?;
        let base = self.base_of(run, bench);
        if bench == base {
            // Against itself the ratio is exactly 1: the errors are perfectly correlated.
            return Some(Ratio {
                value: 1.0,
                err: 0.0,
                ci95: Some([1.0, 1.0]),
            });
        }
        // Paired rounds measured this ratio pair by pair: that is the figure.
        if let Some((against, p)) = &b.paired
            && against == base
        {
            return Some(Ratio {
                value: p.median,
                err: (p.ci95[1] - p.ci95[0]) / 2.0,
                ci95: Some(p.ci95),
            });
        }
        ratio_of(b, run.bench(base)?)
    }

    /// The ratio's value alone (no resampling: cheap enough for every cell of every frame).
    pub fn ratio_value(&self, run: &RunRecord, bench: &str) -> Option<f64> {
        let b = run.bench(bench)?;
        if let Some((against, p)) = &b.paired
            && against == self.base_of(run, bench)
        {
            return Some(p.median);
        }
        let s = b.summary.as_ref()?;
        let base = run.bench(self.base_of(run, bench))?.summary.as_ref()?;
        (s.median > 0.0 && base.median > 0.0).then(|| s.median / base.median)
    }

    /// `bench` in `of` and in the peers made the same way as `of` but not as `other`.
    fn repeats<'r>(
        &'r self,
        of: &'r RunRecord,
        other: &RunRecord,
        bench: &str,
    ) -> Vec<&'r BenchResult> {
        let mut g: Vec<&BenchResult> = of.bench(bench).into_iter().collect();
        for p in &self.peers {
            if std::ptr::eq(*p, of) || std::ptr::eq(*p, other) || p.profiled {
                continue;
            }
            if setup_differences(of, p).is_empty() && !setup_differences(other, p).is_empty() {
                g.extend(p.bench(bench));
            }
        }
        g
    }

    /// The change of `bench` in `run` against the baseline run, unless `run` is that run:
    /// judged with the repeats of each among the peers, and flagged with what differs.
    pub fn change(&self, run: &RunRecord, bench: &str) -> Option<Change> {
        let base = self.run.filter(|b| !std::ptr::eq(*b, run))?;
        // A profiled run's timings include the profiler: no verdict either way.
        if base.profiled || run.profiled {
            return None;
        }
        let (current, baseline) = (
            self.repeats(run, base, bench),
            self.repeats(base, run, bench),
        );
        let mut c = judge(&current, &baseline, &self.settings)?;
        c.differs = setup_differences(base, run);
        Some(c)
    }
}

/// Rows for every finished bench of a run.
pub fn comparison(run: &RunRecord, baselines: &Baselines<'_>) -> Vec<ComparisonRow> {
    run.benches
        .iter()
        .filter_map(|b| {
            let s = b.summary.as_ref()?;
            let base = baselines.base_of(run, b.name.raw());
            let base_memory = (base != b.name)
                .then(|| run.bench(base)?.summary.as_ref()?.memory)
                .flatten();
            Some(ComparisonRow {
                bench: b.name.clone(),
                backend: b.backend.clone(),
                strategy: b.strategy.clone(),
                median_ns: s.median,
                ci95_ns: s.ci95_median,
                ops_per_s: if s.median > 0.0 { 1e9 / s.median } else { 0.0 },
                p99_ns: s.latency.map(|l| l.p99),
                samples: s.samples,
                cost: s.cost,
                memory: s.memory,
                memory_vs_base: s
                    .memory
                    .zip(base_memory)
                    .map(|(m, base)| crate::compare::MemoryVsBase::of(&m, &base)),
                ratio: baselines.ratio(run, b.name.raw()),
                change: baselines.change(run, b.name.raw()),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::tests::{close, record};

    #[test]
    fn rows_carry_ratios_and_changes() {
        let base_run = record(&[
            ("rusqlite", 100.0, 95.0, 105.0),
            ("mw", 300.0, 285.0, 315.0),
        ]);
        let run = record(&[
            ("rusqlite", 100.0, 95.0, 105.0),
            ("mw", 200.0, 198.0, 202.0),
        ]);
        let mut b = Baselines::bench("rusqlite");
        let rows = comparison(&base_run, &b);
        assert_eq!(rows.len(), 2);
        let r = rows[1].ratio.unwrap();
        assert!(close(r.value, 3.0));
        assert_eq!(
            r.ci95,
            Some([3.0, 3.0]),
            "one sample each: no spread to resample"
        );
        assert_eq!(rows[0].ratio.unwrap().ci95, Some([1.0, 1.0]));
        assert_eq!(b.ratio_value(&base_run, "mw"), Some(3.0));
        assert!(rows.iter().all(|r| r.change.is_none()), "no baseline run");
        b.run = Some(&base_run);
        assert!(
            comparison(&base_run, &b).iter().all(|r| r.change.is_none()),
            "not against itself"
        );
        let rows = comparison(&run, &b);
        assert_eq!(rows[1].change.as_ref().unwrap().verdict, Verdict::Improved);
        assert_eq!(
            rows[0].change.as_ref().unwrap().verdict,
            Verdict::WithinNoise
        );
        assert!(
            comparison(&run, &Baselines::bench("missing"))
                .iter()
                .all(|row| row.ratio.is_none())
        );
    }
}
