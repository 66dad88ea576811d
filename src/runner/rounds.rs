//! A run measured in several runner processes, one after another, shown as one stream: the
//! first process's start and dataset stand for the run (its start says how many processes),
//! samples, phases and everything else pass as they come, and each bench's summary and paired
//! ratio are, after every process, the figure across the processes so far
//! ([`bench_core::measure::processes`]): what a view shows between two processes is already
//! the run's figure, with the interval of as many processes as have finished.

use std::collections::BTreeMap;

use bench_core::measure::processes::{paired_across, summary_across};
use bench_core::measure::stats::{PairedRatio, Summary};
use bench_core::protocol::Event;

/// What the processes of one run said so far about each bench.
pub struct Rounds {
    processes: usize,
    process: usize,
    benches: BTreeMap<String, Across>,
}

#[derive(Default)]
struct Across {
    /// Every sample of every process, per operation.
    samples: Vec<f64>,
    summaries: Vec<Summary>,
    paired: Vec<(String, PairedRatio)>,
}

impl Rounds {
    pub fn new(processes: usize) -> Rounds {
        Rounds {
            processes,
            process: 0,
            benches: BTreeMap::new(),
        }
    }

    /// The next process starts.
    pub fn next_process(&mut self) {
        self.process += 1;
    }

    /// The event to pass on for `event`, or none.
    pub fn pass(&mut self, event: Event) -> Option<Event> {
        match event {
            Event::Start(mut s) if self.process == 0 => {
                s.budget.processes = (self.processes > 1).then_some(self.processes);
                Some(Event::Start(s))
            }
            // The run's start and dataset are the first process's.
            Event::Start(_) | Event::Dataset { .. } if self.process > 0 => None,
            Event::Sample {
                ref bench,
                ops,
                elapsed_ns,
                ..
            } => {
                self.at(bench)
                    .samples
                    .push(elapsed_ns as f64 / ops.max(1) as f64);
                Some(event)
            }
            Event::Summary { bench, stats } => {
                let a = self.at(&bench);
                a.summaries.push(stats);
                let stats = summary_across(&a.summaries, &a.samples)
                    .unwrap_or_else(|| a.summaries.last().expect("just pushed").clone());
                Some(Event::Summary { bench, stats })
            }
            Event::Paired {
                bench,
                against,
                ratio,
            } => {
                let a = self.at(&bench);
                // Only ratios against the same bench go together.
                a.paired.retain(|(b, _)| *b == against);
                a.paired.push((against.clone(), ratio));
                let ratios: Vec<PairedRatio> = a.paired.iter().map(|(_, r)| r.clone()).collect();
                let ratio = paired_across(&ratios)
                    .unwrap_or_else(|| ratios.last().expect("just pushed").clone());
                Some(Event::Paired {
                    bench,
                    against,
                    ratio,
                })
            }
            other => Some(other),
        }
    }

    /// Whether every bench measured so far has been measured in two processes or more and its
    /// processes settled, its median and its paired ratio alike (they agreed within their own
    /// intervals, and the interval they give is no wider than their own): then one process
    /// would have done, and the rest need not run.
    pub fn agreed(&self) -> bool {
        use bench_core::measure::processes::{Estimate, settled};
        let enough = |e: Vec<Estimate>| settled(&e);
        !self.benches.is_empty()
            && self.benches.values().all(|a| {
                enough(
                    a.summaries
                        .iter()
                        .map(|s| Estimate {
                            value: s.median,
                            ci95: s.ci95_median,
                        })
                        .collect(),
                ) && (a.paired.is_empty()
                    || enough(
                        a.paired
                            .iter()
                            .map(|(_, p)| Estimate {
                                value: p.median,
                                ci95: p.ci95,
                            })
                            .collect(),
                    ))
            })
    }

    fn at(&mut self, bench: &str) -> &mut Across {
        self.benches.entry(bench.to_string()).or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::measure::stats::summarize;
    use bench_core::protocol::results::RunRecord;

    fn sample(bench: &str, ns: u64) -> Event {
        Event::Sample {
            bench: bench.into(),
            iter: 0,
            ops: 10,
            elapsed_ns: ns * 10,
            work: None,
            cost: None,
            memory: None,
        }
    }

    fn ratio(median: f64) -> PairedRatio {
        PairedRatio {
            pairs: 10,
            median,
            ci95: [median * 0.99, median * 1.01],
            processes: Vec::new(),
        }
    }

    /// Three processes of one bench, each 20 samples around its own level.
    #[test]
    fn a_run_of_three_processes_reads_as_one_run_with_the_processes_interval() {
        let start =
            crate::testing::start(&Default::default(), false, false, crate::testing::BUDGET);
        let mut rounds = Rounds::new(3);
        let mut record = RunRecord::default();
        let mut feed = |rounds: &mut Rounds, e: Event| {
            if let Some(e) = rounds.pass(e) {
                record.apply(e.clone());
                Some(e)
            } else {
                None
            }
        };
        let mut levels = Vec::new();
        for (p, level) in [100u64, 130, 90].into_iter().enumerate() {
            if p > 0 {
                rounds.next_process();
            }
            let s = feed(&mut rounds, start.clone());
            assert_eq!(s.is_some(), p == 0, "only the first start passes");
            let samples: Vec<f64> = (0..20).map(|i| (level + i % 3) as f64).collect();
            for x in &samples {
                assert!(feed(&mut rounds, sample("b", *x as u64)).is_some());
            }
            let own = summarize(&samples, None).unwrap();
            levels.push(own.median);
            let shown = feed(
                &mut rounds,
                Event::Summary {
                    bench: "b".into(),
                    stats: own.clone(),
                },
            );
            let Some(Event::Summary { stats, .. }) = shown else {
                panic!("a summary passes")
            };
            // The first process's is its own; later ones are across the processes so far.
            if p == 0 {
                assert_eq!(stats, own);
            } else {
                assert_eq!(stats.processes.len(), p + 1);
                let (g, ci) = bench_core::measure::processes::next_run_interval(&levels).unwrap();
                assert_eq!((stats.median, stats.ci95_median), (g, ci));
                assert_eq!(stats.samples, 20 * (p + 1));
            }
            feed(
                &mut rounds,
                Event::Paired {
                    bench: "b".into(),
                    against: "a".into(),
                    ratio: ratio(level as f64 / 100.0),
                },
            );
        }
        let b = record.bench("b").unwrap();
        assert_eq!(b.samples.len(), 60);
        let (_, p) = b.paired.as_ref().unwrap();
        assert_eq!(p.processes.len(), 3);
        let g = (1.0f64 * 1.3 * 0.9).cbrt();
        assert!((p.median - g).abs() < 1e-12, "{}", p.median);
        assert_eq!(record.start.unwrap().budget.processes, Some(3));
        assert!(record.more_starts.is_empty());
    }

    #[test]
    fn processes_that_agree_within_their_own_intervals_are_enough() {
        let feed = |levels: &[f64], paired: &[f64]| {
            let mut rounds = Rounds::new(4);
            for (p, (level, ratio_level)) in levels.iter().zip(paired).enumerate() {
                if p > 0 {
                    rounds.next_process();
                }
                // Samples within ±2% of the level: an interval of about a percent.
                let samples: Vec<f64> = (0..30)
                    .map(|i| level * (1.0 + ((i * 7) % 9) as f64 / 200.0 - 0.02))
                    .collect();
                rounds.pass(Event::Summary {
                    bench: "b".into(),
                    stats: summarize(&samples, None).unwrap(),
                });
                rounds.pass(Event::Paired {
                    bench: "b".into(),
                    against: "a".into(),
                    ratio: ratio(*ratio_level),
                });
            }
            rounds
        };
        assert!(!Rounds::new(4).agreed(), "nothing measured yet");
        assert!(!feed(&[100.0], &[2.0]).agreed(), "one process says nothing");
        assert!(feed(&[100.0, 100.01], &[2.0, 2.0001]).agreed());
        // Medians 10% apart, or paired ratios 10% apart: the processes matter.
        assert!(!feed(&[100.0, 110.0], &[2.0, 2.0001]).agreed());
        assert!(!feed(&[100.0, 100.01], &[2.0, 2.2]).agreed());
    }

    #[test]
    fn one_process_passes_everything_as_it_came() {
        let start =
            crate::testing::start(&Default::default(), false, false, crate::testing::BUDGET);
        let mut rounds = Rounds::new(1);
        assert_eq!(rounds.pass(start.clone()), Some(start));
        let s = summarize(&[1.0, 2.0, 3.0], None).unwrap();
        let e = Event::Summary {
            bench: "a".into(),
            stats: s,
        };
        assert_eq!(rounds.pass(e.clone()), Some(e));
    }
}
