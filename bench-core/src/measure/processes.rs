//! Figures across runner processes. The cost of handing work to another thread moves from
//! one process to the next (where its threads land, the layout of its memory) while samples
//! inside one process agree with each other: an interval made from one process's samples
//! cannot see that. So a run measures each bench in several runner processes, one after
//! another, each with its own warm-up, and the process is the unit: each gives one estimate
//! (its median, its paired ratio), the figure shown is their geometric mean, and its interval
//! is where a repeat of the same run (as many processes again) lands 95% of the time, a
//! Student t prediction interval on the logs of the processes' estimates:
//! `mean ± t(k-1) · sd · √(1/k + 1/k)`.

use super::significance::median_of;
use super::stats::{PairedRatio, Percentiles, Summary, summarize};

pub use super::stats::Estimate;

/// The mean of the logs of `values` and their standard deviation (n − 1); at least two.
fn log_mean_sd(values: impl ExactSizeIterator<Item = f64>) -> (f64, f64) {
    let k = values.len() as f64;
    let logs: Vec<f64> = values.map(f64::ln).collect();
    let mean = logs.iter().sum::<f64>() / k;
    let sd = (logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (k - 1.0)).sqrt();
    (mean, sd)
}

/// The geometric mean of `estimates` and the 95% interval of what the same number of
/// processes gives next time; `None` with fewer than two, or any not above zero.
pub fn next_run_interval(estimates: &[f64]) -> Option<(f64, [f64; 2])> {
    let k = estimates.len();
    if k < 2 || estimates.iter().any(|e| !(*e > 0.0 && e.is_finite())) {
        return None;
    }
    let (mean, sd) = log_mean_sd(estimates.iter().copied());
    let t = super::significance::t_critical(k - 1, 0.05);
    let half = t * sd * (2.0 / k as f64).sqrt();
    Some((mean.exp(), [(mean - half).exp(), (mean + half).exp()]))
}

/// [`next_run_interval`] of the processes' estimates, never narrower than their own samples
/// allow: each process's estimate varies from one process to the next at least as much as
/// its own interval says (the median process's standard error, its interval's half-width in
/// logs over 1.96), so a few processes that agree by chance do not make an interval narrower
/// than that error gives: 1.96 · se · √(2/k).
pub fn next_run_interval_of(processes: &[Estimate]) -> Option<(f64, [f64; 2])> {
    let values: Vec<f64> = processes.iter().map(|e| e.value).collect();
    let (g, ci) = next_run_interval(&values)?;
    let own: Vec<f64> = processes
        .iter()
        .filter(|e| e.ci95[0] > 0.0 && e.ci95[1] >= e.ci95[0])
        .map(|e| e.half_log() / 1.96)
        .collect();
    if own.len() < processes.len() {
        return Some((g, ci));
    }
    // The processes' own errors come from their many samples, not from the few processes:
    // the normal quantile, not Student's.
    let k = processes.len();
    let floor = 1.96 * median_of(own) * (2.0 / k as f64).sqrt();
    if floor <= (ci[1] / g).ln() {
        return Some((g, ci));
    }
    Some((g, [g * (-floor).exp(), g * floor.exp()]))
}

/// Whether one process would have done: the processes' estimates spread (1.96 standard
/// deviations of their logs) no wider than the median half-width of their own intervals.
pub fn one_process_enough(processes: &[Estimate]) -> Option<bool> {
    if processes.len() < 2 {
        return None;
    }
    let (_, sd) = log_mean_sd(processes.iter().map(|e| e.value));
    let mut within: Vec<f64> = processes.iter().map(Estimate::half_log).collect();
    within.sort_by(f64::total_cmp);
    let typical = within[within.len() / 2];
    Some(1.96 * sd <= typical)
}

/// Whether the processes so far are enough to stop at: one process would have done
/// ([`one_process_enough`]), and the interval they give is no wider than the widest of their
/// own (with two or three processes Student's t widens it many times over where they differ
/// at all: stopping then would show a wider interval than running on).
pub fn settled(processes: &[Estimate]) -> bool {
    if one_process_enough(processes) != Some(true) {
        return false;
    }
    let Some((g, ci)) = next_run_interval_of(processes) else {
        return false;
    };
    let widest = processes.iter().map(Estimate::half_log).fold(0.0, f64::max);
    (ci[1] / g).ln() <= widest * (1.0 + 1e-9)
}

/// The run's summary of a bench measured in the processes of `per_process` (in order), whose
/// samples together are `pooled`: the distribution's figures (mean's spread, extremes,
/// outliers, warnings) over every sample; the median, the mean and their intervals across
/// processes; the percentiles and cost the median process's, field by field (the highest
/// maximum).
pub fn summary_across(per_process: &[Summary], pooled: &[f64]) -> Option<Summary> {
    let [first, ..] = per_process else {
        return None;
    };
    if per_process.len() == 1 {
        return Some(first.clone());
    }
    let estimates = |f: fn(&Summary) -> Estimate| per_process.iter().map(f).collect::<Vec<_>>();
    let (median, ci95_median) = next_run_interval_of(&estimates(|s| Estimate {
        value: s.median,
        ci95: s.ci95_median,
    }))?;
    let (mean, ci95_mean) = next_run_interval_of(&estimates(|s| Estimate {
        value: s.mean,
        ci95: s.ci95_mean,
    }))?;
    let latency = latency_across(per_process);
    let mut s = summarize(pooled, latency)?;
    s.median = median;
    s.ci95_median = ci95_median;
    s.mean = mean;
    s.ci95_mean = ci95_mean;
    s.cost = cost_across(per_process);
    s.memory = memory_across(per_process);
    s.warnings.extend(s.memory.and_then(|m| m.growth_warning()));
    s.processes = per_process
        .iter()
        .map(|p| Estimate {
            value: p.median,
            ci95: p.ci95_median,
        })
        .collect();
    // The warnings are the pooled samples' (outliers, two groups): a process's own would
    // repeat them once per process.
    Some(s)
}

/// A ratio measured in paired rounds in each of several processes: their geometric mean and
/// the next run's interval.
pub fn paired_across(per_process: &[PairedRatio]) -> Option<PairedRatio> {
    let [first, ..] = per_process else {
        return None;
    };
    if per_process.len() == 1 {
        return Some(first.clone());
    }
    let processes: Vec<Estimate> = per_process
        .iter()
        .map(|p| Estimate {
            value: p.median,
            ci95: p.ci95,
        })
        .collect();
    let (median, ci95) = next_run_interval_of(&processes)?;
    Some(PairedRatio {
        pairs: per_process.iter().map(|p| p.pairs).sum(),
        median,
        ci95,
        processes,
    })
}

fn latency_across(per_process: &[Summary]) -> Option<Percentiles> {
    let all: Vec<&Percentiles> = per_process
        .iter()
        .map(|s| s.latency.as_ref())
        .collect::<Option<_>>()?;
    let mid =
        |f: fn(&Percentiles) -> u64| median_of(all.iter().map(|p| f(p) as f64).collect()) as u64;
    Some(Percentiles {
        count: all.iter().map(|p| p.count).sum(),
        p50: mid(|p| p.p50),
        p90: mid(|p| p.p90),
        p99: mid(|p| p.p99),
        p999: mid(|p| p.p999),
        max: all.iter().map(|p| p.max).max().unwrap_or(0),
    })
}

fn cost_across(per_process: &[Summary]) -> Option<super::cost::CostSummary> {
    let all: Vec<&super::cost::CostSummary> = per_process
        .iter()
        .map(|s| s.cost.as_ref())
        .collect::<Option<_>>()?;
    let mid =
        |f: fn(&super::cost::CostSummary) -> f64| median_of(all.iter().map(|c| f(c)).collect());
    Some(super::cost::CostSummary {
        cpu_ns_per_op: mid(|c| c.cpu_ns_per_op),
        cpu_per_wall: mid(|c| c.cpu_per_wall),
        sys_share: mid(|c| c.sys_share),
        voluntary_per_op: mid(|c| c.voluntary_per_op),
        involuntary_per_op: mid(|c| c.involuntary_per_op),
        timed_share: mid(|c| c.timed_share),
    })
}

/// Memory across processes: the median process's figure of each, and the highest peak (each
/// process counts its own allocations: they do not add up).
fn memory_across(per_process: &[Summary]) -> Option<super::memory::MemorySummary> {
    use super::memory::MemorySummary;
    let all: Vec<&MemorySummary> = per_process
        .iter()
        .map(|s| s.memory.as_ref())
        .collect::<Option<_>>()?;
    let mid = |f: fn(&MemorySummary) -> f64| median_of(all.iter().map(|m| f(m)).collect());
    Some(MemorySummary {
        allocs_per_op: mid(|m| m.allocs_per_op),
        reallocs_per_op: mid(|m| m.reallocs_per_op),
        bytes_per_op: mid(|m| m.bytes_per_op),
        peak_bytes: all.iter().map(|m| m.peak_bytes).max().unwrap_or(0),
        retained_bytes: mid(|m| m.retained_bytes as f64) as i64,
        samples_retaining: all.iter().map(|m| m.samples_retaining).sum(),
        samples: all.iter().map(|m| m.samples).sum(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;
    use rand_distr::{Distribution, Normal};

    /// A run of `k` processes whose estimates scatter log-normally around 100 by `sd`.
    fn run(rng: &mut ChaCha8Rng, k: usize, sd: f64) -> Vec<f64> {
        let n = Normal::new(0.0, sd).unwrap();
        (0..k).map(|_| 100.0 * n.sample(rng).exp()).collect()
    }

    #[test]
    fn the_interval_holds_the_next_runs_figure_95_times_in_100() {
        // What the interval promises, checked by simulation: for 4000 pairs of runs, the
        // second run's figure lies inside the first run's interval. Exact for log-normal
        // processes: the hit rate is 95% up to the simulation's own error (about 0.35%).
        let mut rng = ChaCha8Rng::seed_from_u64(43);
        for (k, sd) in [(2, 0.05), (3, 0.2), (5, 0.1), (8, 0.02)] {
            let trials = 4000;
            let mut inside = 0;
            for _ in 0..trials {
                let (_, ci) = next_run_interval(&run(&mut rng, k, sd)).unwrap();
                let (next, _) = next_run_interval(&run(&mut rng, k, sd)).unwrap();
                inside += usize::from(ci[0] <= next && next <= ci[1]);
            }
            let rate = inside as f64 / trials as f64;
            assert!((0.935..=0.965).contains(&rate), "k {k}: {rate}");
        }
    }

    #[test]
    fn an_interval_of_the_mean_alone_would_miss_the_next_run_too_often() {
        // The same simulation against the narrower interval of the mean (no √2): with six
        // processes it holds the next run's figure about 87 times in 100 (t(5) / √2 = 1.82
        // standard deviations of the difference of two runs, less for the sd's own error),
        // which is why the interval is wider.
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let (k, trials) = (6, 4000);
        let mut inside = 0;
        for _ in 0..trials {
            let (g, ci) = next_run_interval(&run(&mut rng, k, 0.1)).unwrap();
            let half = (ci[1] / g).ln() / 2f64.sqrt();
            let (next, _) = next_run_interval(&run(&mut rng, k, 0.1)).unwrap();
            inside += usize::from((next / g).ln().abs() <= half);
        }
        let rate = inside as f64 / trials as f64;
        assert!((0.84..=0.90).contains(&rate), "{rate}");
    }

    #[test]
    fn the_figure_is_the_geometric_mean_and_the_interval_follows_the_t_law() {
        // 100 and 400: logs 4.605 and 5.991, mean 5.298 (200), sd 0.980; t(1) = 12.706,
        // half = 12.706 * 0.980 * sqrt(2/2) = 12.454.
        let (g, ci) = next_run_interval(&[100.0, 400.0]).unwrap();
        assert!((g - 200.0).abs() < 1e-9, "{g}");
        let half = 12.706 * (4f64.ln() / 2f64.sqrt());
        assert!((ci[0] - 200.0 * (-half).exp()).abs() < 1e-9 * ci[0].max(1e-300));
        assert!((ci[1] / (200.0 * half.exp()) - 1.0).abs() < 1e-9);
        // Equal estimates: no spread, the interval is the point.
        let (g, ci) = next_run_interval(&[5.0, 5.0, 5.0]).unwrap();
        assert!(
            (g - 5.0).abs() < 1e-12 && ci[0] == g && ci[1] == g,
            "{g} {ci:?}"
        );
        // Fewer than two, or one that is not a positive figure: no interval.
        assert_eq!(next_run_interval(&[5.0]), None);
        assert_eq!(next_run_interval(&[5.0, 0.0]), None);
        assert_eq!(next_run_interval(&[5.0, f64::NAN]), None);
        assert_eq!(next_run_interval(&[5.0, -1.0]), None);
    }

    #[test]
    fn one_process_is_enough_only_when_the_processes_agree_within_their_own_intervals() {
        let e = |value: f64, half: f64| Estimate {
            value,
            ci95: [value * (-half).exp(), value * half.exp()],
        };
        // Spread far smaller than each interval.
        assert_eq!(
            one_process_enough(&[e(100.0, 0.05), e(100.5, 0.05), e(99.5, 0.05)]),
            Some(true)
        );
        // Processes 20% apart with 1% intervals: the process matters.
        assert_eq!(
            one_process_enough(&[e(100.0, 0.01), e(120.0, 0.01), e(90.0, 0.01)]),
            Some(false)
        );
        assert_eq!(one_process_enough(&[e(100.0, 0.01)]), None);
    }

    #[test]
    fn processes_that_agree_by_chance_do_not_make_an_interval_narrower_than_their_own() {
        let e = |value: f64, half: f64| Estimate {
            value,
            ci95: [value * (-half).exp(), value * half.exp()],
        };
        // Three processes that read the same, each ±10% by its own samples: the interval
        // is as wide as 1.96 * (0.10 / 1.96) * sqrt(2/3) in logs, not a point.
        let (g, ci) = next_run_interval_of(&[e(50.0, 0.1), e(50.0, 0.1), e(50.0, 0.1)]).unwrap();
        let half = 0.1 * (2.0f64 / 3.0).sqrt();
        assert!((g - 50.0).abs() < 1e-9);
        assert!((ci[1] / g - half.exp()).abs() < 1e-9, "{ci:?}");
        assert!((g / ci[0] - half.exp()).abs() < 1e-9, "{ci:?}");
        // A process whose own interval reaches zero (or is upside down) says nothing of its
        // error: no floor, the processes' spread alone (here none: a point).
        let broken = [
            Estimate {
                value: 50.0,
                ci95: [0.0, 100.0],
            },
            e(50.0, 0.1),
        ];
        let (g, ci) = next_run_interval_of(&broken).unwrap();
        assert!(ci[0] == g && ci[1] == g, "{ci:?}");
        let upside_down = [
            Estimate {
                value: 50.0,
                ci95: [60.0, 40.0],
            },
            e(50.0, 0.1),
        ];
        let (g, ci) = next_run_interval_of(&upside_down).unwrap();
        assert!(ci[0] == g && ci[1] == g, "{ci:?}");
        // Processes that differ far more than their own intervals: the spread decides.
        let wide = [e(50.0, 0.001), e(60.0, 0.001), e(40.0, 0.001)];
        let values: Vec<f64> = wide.iter().map(|e| e.value).collect();
        assert_eq!(next_run_interval_of(&wide), next_run_interval(&values));
        // The same for ratios near one (the spread measured against the figure, not its size).
        let ratios = [e(0.8, 0.001), e(1.0, 0.001), e(1.25, 0.001)];
        let values: Vec<f64> = ratios.iter().map(|e| e.value).collect();
        assert_eq!(next_run_interval_of(&ratios), next_run_interval(&values));
    }

    /// The rule at its boundary, by hand: one process is enough when 1.96 standard deviations
    /// of the processes' logs are no wider than the median process's own half-width in logs.
    #[test]
    fn one_process_is_enough_at_the_boundary_the_rule_states() {
        let at = |value: f64, h: f64| Estimate {
            value,
            ci95: [value * (-h).exp(), value * h.exp()],
        };
        let h = 0.05;
        // Three processes whose logs are -d, 0 and +d: sd = d exactly.
        let three = |d: f64| {
            [
                at(100.0 * (-d).exp(), h),
                at(100.0, h),
                at(100.0 * d.exp(), h),
            ]
        };
        let d = h / 1.96;
        assert_eq!(one_process_enough(&three(d * 0.99)), Some(true));
        assert_eq!(one_process_enough(&three(d * 1.01)), Some(false));
        // Two processes are enough to tell: logs 0 and d, sd d / √2.
        let two = |d: f64| [at(100.0, h), at(100.0 * d.exp(), h)];
        let d = h / 1.96 * 2f64.sqrt();
        assert_eq!(one_process_enough(&two(d * 0.99)), Some(true));
        assert_eq!(one_process_enough(&two(d * 1.01)), Some(false));
        // Of four, the half-width ranked third smallest decides (0.05), not the smallest:
        // logs -a, -a, a, a have sd 2a / √3, here 0.03 / 1.96.
        let a = 0.03 / 1.96 * 3f64.sqrt() / 2.0;
        let four = [
            at(100.0 * (-a).exp(), 0.01),
            at(100.0 * (-a).exp(), 0.10),
            at(100.0 * a.exp(), 0.02),
            at(100.0 * a.exp(), 0.05),
        ];
        assert_eq!(one_process_enough(&four), Some(true));
    }

    #[test]
    fn processes_settle_when_they_agree_and_their_interval_is_no_wider_than_their_own() {
        let at = |value: f64, h: f64| Estimate {
            value,
            ci95: [value * (-h).exp(), value * h.exp()],
        };
        // Two processes 1% apart, each ±26% by its own samples: they agree, and the interval
        // of the two (12.7 * 0.01 / √2, under the floor of 0.26) is no wider than their own.
        let close = [at(100.0, 0.26), at(100.0 * 0.01f64.exp(), 0.26)];
        assert_eq!(one_process_enough(&close), Some(true));
        assert!(settled(&close));
        // 10% apart: still within their own intervals, but Student's t with one degree of
        // freedom makes the interval 12.7 * 0.1 / √2 = 0.9 in logs: running on is better.
        let apart = [at(100.0, 0.26), at(100.0 * 0.1f64.exp(), 0.26)];
        assert_eq!(one_process_enough(&apart), Some(true));
        assert!(!settled(&apart));
        // Processes that do not agree never settle; one says nothing.
        assert!(!settled(&[at(100.0, 0.01), at(120.0, 0.01)]));
        assert!(!settled(&[at(100.0, 0.01)]));
    }

    #[test]
    fn a_budget_names_its_processes_or_one() {
        let b = |processes| crate::protocol::Budget {
            warmup_s: 0.1,
            time_s: 1.0,
            max_samples: 10,
            min_samples: 5,
            paired: false,
            group: None,
            processes,
            times: Default::default(),
        };
        assert_eq!(b(None).runner_processes(), 1);
        assert_eq!(b(Some(0)).runner_processes(), 1);
        assert_eq!(b(Some(4)).runner_processes(), 4);
    }

    fn summary(samples: &[f64]) -> Summary {
        summarize(samples, None).unwrap()
    }

    #[test]
    fn a_summary_across_processes_keeps_each_process_and_pools_the_samples() {
        let a: Vec<f64> = (0..20).map(|i| 100.0 + i as f64).collect();
        let b: Vec<f64> = (0..20).map(|i| 200.0 + i as f64).collect();
        let (sa, sb) = (summary(&a), summary(&b));
        let pooled: Vec<f64> = a.iter().chain(&b).copied().collect();
        let s = summary_across(&[sa.clone(), sb.clone()], &pooled).unwrap();
        assert_eq!(s.samples, 40);
        assert_eq!((s.min, s.max), (100.0, 219.0));
        let (g, ci) = next_run_interval(&[sa.median, sb.median]).unwrap();
        assert_eq!((s.median, s.ci95_median), (g, ci));
        assert_eq!(
            s.processes,
            vec![
                Estimate {
                    value: sa.median,
                    ci95: sa.ci95_median
                },
                Estimate {
                    value: sb.median,
                    ci95: sb.ci95_median
                }
            ]
        );
        // One process: its own summary, untouched.
        assert_eq!(summary_across(std::slice::from_ref(&sa), &a).unwrap(), sa);
        assert_eq!(summary_across(&[], &a), None);
    }

    #[test]
    fn memory_across_processes_is_the_median_processs_with_the_highest_peak() {
        use crate::measure::memory::MemorySummary;
        let with = |allocs: f64, peak: u64, kept: i64| {
            let mut s = summary(&[100.0, 101.0, 102.0]);
            s.memory = Some(MemorySummary {
                allocs_per_op: allocs,
                reallocs_per_op: allocs / 10.0,
                bytes_per_op: allocs * 64.0,
                peak_bytes: peak,
                retained_bytes: kept,
                samples_retaining: 1,
                samples: 3,
            });
            s
        };
        let each = [with(3.0, 500, 0), with(1.0, 900, -64), with(2.0, 100, 4096)];
        let m = summary_across(&each, &[100.0, 101.0, 102.0])
            .unwrap()
            .memory
            .unwrap();
        assert_eq!(
            m,
            MemorySummary {
                allocs_per_op: 2.0,
                reallocs_per_op: 0.2,
                bytes_per_op: 128.0,
                peak_bytes: 900,
                retained_bytes: 0,
                samples_retaining: 3,
                samples: 9,
            }
        );
        // One process without memory counted: none across them.
        let mut bare = with(1.0, 1, 1);
        bare.memory = None;
        let none = summary_across(&[each[0].clone(), bare], &[100.0, 101.0]).unwrap();
        assert_eq!(none.memory, None);
    }

    #[test]
    fn percentiles_and_cost_across_processes_are_the_median_processs() {
        use crate::measure::cost::CostSummary;
        let with = |level: f64| {
            let mut s = summary(&[level, level + 1.0, level + 2.0]);
            let l = level as u64;
            s.latency = Some(Percentiles {
                count: 100,
                p50: l,
                p90: 2 * l,
                p99: 3 * l,
                p999: 4 * l,
                max: 5 * l,
            });
            s.cost = Some(CostSummary {
                cpu_ns_per_op: level,
                cpu_per_wall: level / 100.0,
                sys_share: level / 1000.0,
                voluntary_per_op: level / 10.0,
                involuntary_per_op: level / 20.0,
                timed_share: 1.0 - level / 1000.0,
            });
            s
        };
        let each = [with(100.0), with(300.0), with(200.0)];
        let s = summary_across(&each, &[100.0, 200.0, 300.0]).unwrap();
        assert_eq!(
            s.latency,
            Some(Percentiles {
                count: 300,
                p50: 200,
                p90: 400,
                p99: 600,
                p999: 800,
                max: 1500,
            })
        );
        let c = s.cost.unwrap();
        assert_eq!(
            (
                c.cpu_ns_per_op,
                c.cpu_per_wall,
                c.sys_share,
                c.voluntary_per_op,
                c.involuntary_per_op,
                c.timed_share
            ),
            (200.0, 2.0, 0.2, 20.0, 10.0, 0.8)
        );
        // A process without them: none for the run.
        let mut bare = with(250.0);
        bare.latency = None;
        bare.cost = None;
        let s = summary_across(&[with(100.0), bare], &[100.0, 250.0]).unwrap();
        assert_eq!((s.latency, s.cost), (None, None));
    }

    #[test]
    fn a_paired_ratio_across_processes_is_their_geometric_mean() {
        let p = |median: f64| PairedRatio {
            pairs: 10,
            median,
            ci95: [median * 0.99, median * 1.01],
            processes: Vec::new(),
        };
        let r = paired_across(&[p(2.0), p(8.0)]).unwrap();
        assert!((r.median - 4.0).abs() < 1e-12);
        assert_eq!(r.pairs, 20);
        assert_eq!(r.processes.len(), 2);
        assert!(r.ci95[0] < 4.0 && r.ci95[1] > 4.0);
        assert_eq!(paired_across(&[p(3.0)]).unwrap(), p(3.0));
    }
}
