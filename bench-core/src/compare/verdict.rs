//! A change against a baseline and its verdict: from the samples of one run a side, from
//! repeated runs (their run-to-run variation), or from interleaved rounds (paired).

use serde::{Deserialize, Serialize};

use crate::measure::significance::{level, mann_whitney, median_of, t_critical, welch};
use crate::protocol::results::BenchResult;

/// The verdict of a change against a baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Improved,
    Regressed,
    WithinNoise,
    /// The samples differ, but the evidence cannot separate that from run-to-run variation
    /// (one run each, and a change smaller than a run can move by).
    CannotTell,
}

impl Verdict {
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Improved => "improved",
            Verdict::Regressed => "regressed",
            Verdict::WithinNoise => "within noise",
            Verdict::CannotTell => "cannot tell",
        }
    }

    /// The mark the explorer and the exports put beside a figure.
    pub fn mark(self) -> &'static str {
        match self {
            Verdict::Improved => "▼",
            Verdict::Regressed => "▲",
            Verdict::WithinNoise => "≈",
            Verdict::CannotTell => "?",
        }
    }
}

/// How changes are judged.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// Relative changes up to this are "within noise" whatever the tests say (0.02 = 2%).
    pub noise: f64,
    /// Significance level of the tests (two-sided).
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    /// With one run a side, how far a run's median can move from run to run when nothing
    /// measured says (0.25 = 25%: three runs of rusqlite in a row on one machine read 2.90,
    /// 3.65 and 3.85 µs). Larger changes get a verdict; smaller ones "cannot tell".
    #[serde(default = "default_single_run_margin")]
    pub single_run_margin: f64,
}

/// 0.01: at Criterion's 0.05, 4 of 20 A/A comparisons of repeated runs were called
/// regressed on the machines these were measured on (the machine drifts between minutes more
/// than within three consecutive runs). The interval shown with a verdict from repeats is at
/// the same level, so the two always agree.
fn default_alpha() -> f64 {
    0.01
}

fn default_single_run_margin() -> f64 {
    0.25
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            noise: 0.02,
            alpha: default_alpha(),
            single_run_margin: default_single_run_margin(),
        }
    }
}

/// A bench's median against the same bench in a baseline run (or runs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// Relative change of the median, in percent (negative is faster).
    pub pct: f64,
    pub verdict: Verdict,
    /// Interval of the change in percent, from what decided the verdict, at `ci_level` (99%
    /// for a verdict from repeats at the default alpha; files written before it was named for
    /// what it holds call it `ci95_pct`, and still read).
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "ci95_pct")]
    pub ci_pct: Option<[f64; 2]>,
    /// The confidence level of that interval (0.95 unless a verdict from repeats was made at
    /// another significance level: then 1 - alpha).
    #[serde(default = "default_level")]
    pub ci_level: f64,
    /// What decided: the evidence, in words.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub basis: String,
    /// What differs between the runs compared (knobs, trace, build, SQLite, CPU): flagged
    /// beside the verdict, never silently compared.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub differs: Vec<crate::text::Text>,
    /// Allocations per operation either side, where both were counted (runs from protocol
    /// 1.13 on): a count, judged on its own ([`AllocChange`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocs: Option<AllocChange>,
}

/// The least change of allocations per operation that is a change: one allocation in 20
/// operations. The counts are exact, but a sample's take in what a pass does besides its
/// operations (a runtime starting a thread, a cache growing once) moves them by less.
pub const ALLOC_STEP: f64 = 0.05;

/// Allocations per operation between runs. Counts need no statistics: the median run's count
/// on each side, and a change of [`ALLOC_STEP`] or more is a change, either way.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AllocChange {
    pub baseline: f64,
    pub current: f64,
    /// Regressed (more allocations), improved (fewer) or within noise (the same count).
    pub verdict: Verdict,
}

impl AllocChange {
    /// The change between the runs of each side that counted allocations; None where a side
    /// has none.
    pub fn of(current: &[&BenchResult], baseline: &[&BenchResult]) -> Option<AllocChange> {
        let count = |rs: &[&BenchResult]| {
            let v: Vec<f64> = rs
                .iter()
                .filter_map(|r| Some(r.summary.as_ref()?.memory?.allocs_per_op))
                .collect();
            (!v.is_empty()).then(|| median_of(v))
        };
        let (current, baseline) = (count(current)?, count(baseline)?);
        let verdict = if current >= baseline + ALLOC_STEP {
            Verdict::Regressed
        } else if current <= baseline - ALLOC_STEP {
            Verdict::Improved
        } else {
            Verdict::WithinNoise
        };
        Some(AllocChange {
            baseline,
            current,
            verdict,
        })
    }
}

/// One run's change against one baseline run, on their samples alone (see [`judge`]).
pub fn change(
    current: &BenchResult,
    baseline: &BenchResult,
    settings: &Settings,
) -> Option<Change> {
    judge(&[current], &[baseline], settings)
}

fn default_level() -> f64 {
    0.95
}

/// The change of a bench between runs and its verdict. `current` and `baseline` are the
/// bench's results in runs made the same way on each side (one or more each). A run measured
/// in several runner processes gives each process's median as a run's: the process is the
/// unit (`measure::processes`).
///
/// - Within the noise threshold: within noise, whatever else.
/// - With two runs or more on each side, the run-to-run variation is measured: Welch's t-test
///   of the runs' log medians (each side's own variance, Welch-Satterthwaite degrees of
///   freedom, rounded down) against Student's t at `alpha` decides, and gives the interval.
///   With one run on a side and three or more on the other, that one run has no variance of
///   its own: the other side's is taken for both (Student's pooled test). One run's samples
///   say nothing about the next run, so they do not decide here.
/// - With less, the samples are tested (Mann-Whitney): samples that do not differ are within
///   noise; samples that differ by more than a run can move (`single_run_margin`) are a
///   change; less than that, the verdict is "cannot tell".
pub fn judge(
    current: &[&BenchResult],
    baseline: &[&BenchResult],
    settings: &Settings,
) -> Option<Change> {
    let mut c = judge_time(current, baseline, settings)?;
    c.allocs = AllocChange::of(current, baseline);
    Some(c)
}

/// [`judge`]'s verdict on time.
fn judge_time(
    current: &[&BenchResult],
    baseline: &[&BenchResult],
    settings: &Settings,
) -> Option<Change> {
    // A run measured in several runner processes counts each process as one run: the process
    // is the unit its interval was made from.
    let medians = |rs: &[&BenchResult]| -> Vec<f64> {
        rs.iter()
            .filter_map(|r| r.summary.as_ref())
            .flat_map(|s| match s.processes.as_slice() {
                [_, _, ..] => s.processes.iter().map(|e| e.value).collect(),
                _ => vec![s.median],
            })
            .filter(|m| *m > 0.0)
            .collect()
    };
    let unit = if [current, baseline]
        .iter()
        .flat_map(|rs| rs.iter())
        .any(|r| r.summary.as_ref().is_some_and(|s| s.processes.len() > 1))
    {
        "runner processes"
    } else {
        "runs"
    };
    let (cm, bm) = (medians(current), medians(baseline));
    if cm.is_empty() || bm.is_empty() {
        return None;
    }
    let (c, b) = (median_of(cm.clone()), median_of(bm.clone()));
    let rel = c / b - 1.0;
    let direction = if rel < 0.0 {
        Verdict::Improved
    } else {
        Verdict::Regressed
    };
    let mut out = Change {
        pct: rel * 100.0,
        verdict: Verdict::WithinNoise,
        ci_pct: None,
        ci_level: 0.95,
        basis: String::new(),
        differs: Vec::new(),
        allocs: None,
    };
    let (nc, nb) = (cm.len(), bm.len());
    let logs = |xs: &[f64]| xs.iter().map(|x| x.ln()).collect::<Vec<f64>>();
    let (lc, lb) = (logs(&cm), logs(&bm));
    let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len() as f64;
    let ss = |xs: &[f64]| {
        let m = mean(xs);
        xs.iter().map(|x| (x - m).powi(2)).sum::<f64>()
    };
    if nc.max(nb) >= 3 || (nc >= 2 && nb >= 2) {
        let d = mean(&lc) - mean(&lb);
        let pooled_df = (nc - 1) + (nb - 1);
        // Run-to-run sd of log medians, pooled: what the basis line reports.
        let sd = ((ss(&lc) + ss(&lb)) / pooled_df as f64).sqrt();
        let (se, df, test) = match welch(&lc, &lb) {
            Some((_, df, se)) => (se, df.floor().max(1.0) as usize, "Welch"),
            None if nc >= 2 && nb >= 2 => (0.0, pooled_df, "Welch"),
            None => (
                sd * (1.0 / nc as f64 + 1.0 / nb as f64).sqrt(),
                pooled_df,
                "Student, pooled",
            ),
        };
        // The interval at the level the verdict is made at, so the two always agree.
        let t = t_critical(df, settings.alpha);
        out.ci_pct = Some([
            ((d - t * se).exp() - 1.0) * 100.0,
            ((d + t * se).exp() - 1.0) * 100.0,
        ]);
        out.ci_level = level(settings.alpha);
        let significant = beyond(d, se, t);
        out.basis = format!(
            "{nb} baseline {unit}, {nc} current: run-to-run sd {:.1}% ({test}, df {df})",
            sd * 100.0
        );
        if rel.abs() > settings.noise && significant {
            out.verdict = direction;
        }
        return Some(out);
    }
    // One run a side measured in paired rounds against the same bench: the change of that
    // ratio, whose drift within each run cancels pair by pair. A run's ratio still moves from
    // one runner process to the next (placement on the cores, the layout of memory): one run
    // a side is judged like any single run, by what a run can move.
    if let ([c1], [b1]) = (current, baseline)
        && let (Some((ca, cp)), Some((ba, bp))) = (&c1.paired, &b1.paired)
        && ca == ba
        && cp.median > 0.0
        && bp.median > 0.0
    {
        let d = (cp.median / bp.median).ln();
        let half = |p: &crate::measure::stats::PairedRatio| {
            ((p.ci95[1] / p.median).ln() - (p.ci95[0] / p.median).ln()) / 2.0
        };
        let w = (half(cp).powi(2) + half(bp).powi(2)).sqrt();
        let rel = d.exp() - 1.0;
        out.pct = rel * 100.0;
        out.ci_pct = Some([((d - w).exp() - 1.0) * 100.0, ((d + w).exp() - 1.0) * 100.0]);
        let direction = if rel < 0.0 {
            Verdict::Improved
        } else {
            Verdict::Regressed
        };
        (out.verdict, out.basis) = if rel.abs() <= settings.noise || d.abs() <= w {
            (
                Verdict::WithinNoise,
                format!("paired rounds: the ratios to {ca} do not differ beyond noise"),
            )
        } else if rel.abs() > settings.single_run_margin {
            (
                direction,
                format!(
                    "paired rounds: the ratio to {ca} moved beyond the {:.0}% a run can move by",
                    settings.single_run_margin * 100.0
                ),
            )
        } else {
            (
                Verdict::CannotTell,
                format!(
                    "paired rounds: the ratios to {ca} differ, but a run's ratio moves by up to {:.0}% from run to run; repeat runs (--repeat 3) to measure how much",
                    settings.single_run_margin * 100.0
                ),
            )
        };
        return Some(out);
    }
    // One run a side (or one and two): their samples, and what a run can move by.
    let samples = |rs: &[&BenchResult]| -> Vec<f64> {
        rs.iter().flat_map(|r| r.samples.iter().copied()).collect()
    };
    let (sc, sb) = (samples(current), samples(baseline));
    if let (Some(cs), Some(bs)) = (
        current.first().and_then(|r| r.summary.as_ref()),
        baseline.first().and_then(|r| r.summary.as_ref()),
    ) {
        out.ci_pct = Some([
            (cs.ci95_median[0] / bs.ci95_median[1] - 1.0) * 100.0,
            (cs.ci95_median[1] / bs.ci95_median[0] - 1.0) * 100.0,
        ]);
    }
    if rel.abs() <= settings.noise {
        out.basis = format!("within the {:.0}% noise threshold", settings.noise * 100.0);
        return Some(out);
    }
    let p = mann_whitney(&sc, &sb);
    match p {
        Some(p) if p >= settings.alpha => {
            out.basis = format!("one run a side: their samples do not differ (p = {p:.2})");
        }
        _ if rel.abs() > settings.single_run_margin => {
            out.verdict = direction;
            out.basis = format!(
                "one run a side: beyond the {:.0}% a run can move by",
                settings.single_run_margin * 100.0
            );
        }
        _ => {
            out.verdict = Verdict::CannotTell;
            out.basis = format!(
                "one run a side: their samples differ, but runs can move by up to {:.0}%; repeat runs (--repeat 3) to measure how much",
                settings.single_run_margin * 100.0
            );
        }
    }
    Some(out)
}

/// A round whose change lies further than this from the rounds' median change, in robust
/// standard deviations of the rounds' changes (1.4826 times their median absolute deviation),
/// was disturbed: on this project's 2-vCPU KVM machines one run in ten or twenty (at times one
/// in two) reads 20-50% slow for the whole of its 0.2 s (its samples around 3.8 µs where the
/// others' are around 2.7 µs, with no steal reported), which carries a paired t-test over ten
/// rounds away.
pub const ROUND_OUTLIER_Z: f64 = 3.5;
/// The robust standard deviation of the rounds' changes is taken as at least this (0.5%, in
/// log ratio), so a round within 1.75% of the median round is never disturbed, however alike
/// the others are (medians read to three digits often tie).
pub const ROUND_OUTLIER_FLOOR: f64 = 0.005;
/// When more than this share of the rounds would be left out as disturbed (more than 3 of
/// 10), the rounds cannot tell: the machine was too busy for the rest to say anything. Over 80
/// comparisons of a set-up with itself measured here, none was called a change with up to
/// half of the rounds left out; 30% keeps seven rounds of ten at least.
pub const ROUNDS_MAX_DISTURBED: f64 = 0.3;

/// Interleaved rounds whose change is not significant are within noise only when their
/// interval stays within this many noise thresholds (±4% at the default 2%); wider, they
/// cannot tell: rounds that moved 20% apart say nothing about a 5% change.
pub const ROUNDS_NOISE_REACH: f64 = 2.0;

/// The change of a bench measured in interleaved rounds: each round is one run of the
/// baseline's set-up and one of the current, made one after the other (in alternating order),
/// given here as `(current, baseline)`. The change is judged round by round: a paired t-test
/// on the log ratio of each round's two runs, at `alpha`, with its interval at the same level.
/// What moves the machine between minutes moves both runs of a round alike and cancels; what
/// is left is how far the two runs of one round can differ, which the rounds measure.
///
/// A run is taken by its fastest sample ([`fastest`]): a slow spell of the machine that covers
/// most of a run moves its median by 20-50% here, and its fastest sample seldom. Measured on
/// this project's 2-vCPU KVM machine over five series of rounds (ten rounds a try; 100
/// comparisons of a set-up with itself, 50 of a real 5% change; judged again from the figures
/// each run printed), by the runs' medians a real 5% was called 27 times of 50, by their
/// fastest samples 40 times; no comparison of a set-up with itself was called a change by
/// their fastest samples, one by their medians. docs/src/usage.md ("Baselines") has the series.
///
/// With five rounds or more, a round whose change is an outlier among the rounds'
/// ([`ROUND_OUTLIER_Z`]) is left out of the test and named in the basis; when more than
/// [`ROUNDS_MAX_DISTURBED`] of them are, the verdict is "cannot tell", as it is when the
/// change is not significant but its interval reaches beyond [`ROUNDS_NOISE_REACH`] noise
/// thresholds.
pub fn judge_rounds(
    rounds: &[(&BenchResult, &BenchResult)],
    settings: &Settings,
) -> Option<Change> {
    let mut c = judge_rounds_time(rounds, settings)?;
    let (current, baseline): (Vec<&BenchResult>, Vec<&BenchResult>) =
        rounds.iter().copied().unzip();
    c.allocs = AllocChange::of(&current, &baseline);
    Some(c)
}

/// [`judge_rounds`]'s verdict on time.
fn judge_rounds_time(
    rounds: &[(&BenchResult, &BenchResult)],
    settings: &Settings,
) -> Option<Change> {
    // (round number from 1, log ratio of its runs' fastest samples)
    let all: Vec<(usize, f64)> = rounds
        .iter()
        .enumerate()
        .filter_map(|(i, (c, b))| Some((i + 1, (fastest(c)? / fastest(b)?).ln())))
        .collect();
    let n_all = all.len();
    if n_all < 2 {
        return None;
    }
    let (centre, disturbed) = disturbed_rounds(&all);
    let pct = |x: f64| (x.exp() - 1.0) * 100.0;
    let named: Vec<String> = disturbed
        .iter()
        .map(|(round, x)| format!("{round} ({:+.1}%)", pct(*x)))
        .collect();
    let left_out = match named.len() {
        0 => String::new(),
        1 => format!(
            ", round {} left out as disturbed (the median round {:+.1}%)",
            named[0],
            pct(centre)
        ),
        _ => format!(
            ", rounds {} left out as disturbed (the median round {:+.1}%)",
            named.join(", "),
            pct(centre)
        ),
    };
    if disturbed.len() as f64 > ROUNDS_MAX_DISTURBED * n_all as f64 {
        return Some(Change {
            pct: pct(centre),
            verdict: Verdict::CannotTell,
            ci_pct: None,
            ci_level: level(settings.alpha),
            basis: format!(
                "{n_all} interleaved rounds by their fastest samples{left_out}: more than {:.0}% of the rounds were disturbed; run again when the machine is quieter",
                ROUNDS_MAX_DISTURBED * 100.0
            ),
            differs: Vec::new(),
            allocs: None,
        });
    }
    let d: Vec<f64> = all
        .iter()
        .filter(|(round, _)| disturbed.iter().all(|(r, _)| r != round))
        .map(|(_, x)| *x)
        .collect();
    let n = d.len();
    let mean = d.iter().sum::<f64>() / n as f64;
    let sd = (d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
    let se = sd / (n as f64).sqrt();
    let t = t_critical(n - 1, settings.alpha);
    let rel = mean.exp() - 1.0;
    let significant = beyond(mean, se, t);
    let (lo, hi) = (pct(mean - t * se), pct(mean + t * se));
    let reach = ROUNDS_NOISE_REACH * settings.noise * 100.0;
    let verdict = match (rel.abs() > settings.noise && significant, rel < 0.0) {
        (false, _) if lo < -reach || hi > reach => Verdict::CannotTell,
        (false, _) => Verdict::WithinNoise,
        (true, true) => Verdict::Improved,
        (true, false) => Verdict::Regressed,
    };
    let mut basis = format!(
        "{n_all} interleaved rounds by their fastest samples{left_out}: the change moves {:.1}% (sd) from round to round",
        sd * 100.0
    );
    if verdict == Verdict::CannotTell {
        basis.push_str(&format!(
            ", and its interval reaches beyond ±{reach:.0}%; more rounds or a quieter machine narrow it"
        ));
    }
    Some(Change {
        pct: rel * 100.0,
        verdict,
        ci_pct: Some([lo, hi]),
        ci_level: level(settings.alpha),
        basis,
        differs: Vec::new(),
        allocs: None,
    })
}

/// A run's fastest sample, ns per operation (what interleaved rounds are judged by).
pub fn fastest(r: &BenchResult) -> Option<f64> {
    r.summary.as_ref().map(|s| s.min).filter(|m| *m > 0.0)
}

/// The median round's log ratio, and the rounds (number, log ratio) whose change is an
/// outlier among all of them (see [`ROUND_OUTLIER_Z`]); none with fewer than five rounds.
fn disturbed_rounds(all: &[(usize, f64)]) -> (f64, Vec<(usize, f64)>) {
    let centre = median_of(all.iter().map(|(_, x)| *x).collect());
    if all.len() < 5 {
        return (centre, Vec::new());
    }
    let mad = median_of(all.iter().map(|(_, x)| (x - centre).abs()).collect());
    let scale = (1.4826 * mad).max(ROUND_OUTLIER_FLOOR);
    let out = all
        .iter()
        .filter(|(_, x)| (x - centre).abs() > ROUND_OUTLIER_Z * scale)
        .copied()
        .collect();
    (centre, out)
}

/// Whether a mean difference `d` (of logs) with standard error `se` (never negative) is
/// beyond the level whose critical value is `t`: strictly beyond (a quotient equal to `t` is
/// not); with a standard error of 0, any difference is.
fn beyond(d: f64, se: f64, t: f64) -> bool {
    if se == 0.0 {
        d != 0.0
    } else {
        d.abs() / se > t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The level's boundary: a difference exactly `t` standard errors away is not beyond it,
    /// one a hair further is; with no spread, any difference is, and none is not.
    #[test]
    fn a_difference_is_significant_strictly_beyond_the_level() {
        assert!(!beyond(2.0, 1.0, 2.0));
        assert!(!beyond(-2.0, 1.0, 2.0));
        assert!(beyond(2.0 + 1e-12, 1.0, 2.0));
        assert!(beyond(-2.0 - 1e-12, 1.0, 2.0));
        assert!(!beyond(1.0, 1.0, 2.0));
        assert!(beyond(1e-9, 0.0, 2.0));
        assert!(!beyond(0.0, 0.0, 2.0));
    }

    /// A round exactly as far from the median round as the outlier bound is not disturbed;
    /// one a step further is. With every other round alike, the bound is the floor's.
    #[test]
    fn a_round_at_the_outlier_bound_is_not_disturbed() {
        let bound = ROUND_OUTLIER_Z * ROUND_OUTLIER_FLOOR;
        let rounds = |x: f64| vec![(1, 0.0), (2, 0.0), (3, 0.0), (4, 0.0), (5, x)];
        assert_eq!(disturbed_rounds(&rounds(bound)), (0.0, vec![]));
        let beyond = bound.next_up();
        assert_eq!(disturbed_rounds(&rounds(beyond)), (0.0, vec![(5, beyond)]));
        assert_eq!(
            disturbed_rounds(&rounds(-beyond)),
            (0.0, vec![(5, -beyond)])
        );
    }
}
