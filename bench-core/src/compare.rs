//! The one comparison model: a bench against the baseline bench of its run (a ratio with its
//! error), and a run against a baseline run (a change with its verdict). The explorer, the
//! headless table and every export read these, so they always say the same thing.

use serde::{Deserialize, Serialize};

use crate::measure::stats::{Summary, bootstrap_ratio};
use crate::protocol::results::{BenchResult, RunRecord};

/// A ratio of two medians with its 95% interval, e.g. `2.86x [2.84–2.88]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Ratio {
    pub value: f64,
    /// Half the width of the interval (kept for readers of reports that predate `ci95`).
    pub err: f64,
    /// Bootstrap 95% interval of the ratio, from both benches' samples; asymmetric where the
    /// samples are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95: Option<[f64; 2]>,
}

pub use crate::sections::Band;

/// Ratio of two medians; the error is the first-order propagation of each median's CI
/// half-width (relative errors added in quadrature). What reports made before the ratio
/// bootstrap carried; kept for summaries without samples.
pub fn ratio_of_medians(num: &Summary, den: &Summary) -> Option<Ratio> {
    if den.median <= 0.0 || num.median <= 0.0 {
        return None;
    }
    let value = num.median / den.median;
    let rel = |s: &Summary| (s.ci95_median[1] - s.ci95_median[0]) / 2.0 / s.median;
    let err = value * (rel(num).powi(2) + rel(den).powi(2)).sqrt();
    Some(Ratio {
        value,
        err,
        ci95: None,
    })
}

/// The ratio of two finished benches' medians with a bootstrap 95% interval from their samples.
pub fn ratio_of(num: &BenchResult, den: &BenchResult) -> Option<Ratio> {
    let (ns, ds) = (num.summary.as_ref()?, den.summary.as_ref()?);
    let mut r = ratio_of_medians(ns, ds)?;
    if let Some([lo, hi]) = bootstrap_ratio(&num.samples, &den.samples) {
        r.ci95 = Some([lo.min(r.value), hi.max(r.value)]);
        r.err = (hi - lo) / 2.0;
    }
    Some(r)
}

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
    pub differs: Vec<String>,
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

/// The median of `xs` (the mean of the two middle values for an even count).
pub fn median_of(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// Two-sided p-value of the Mann-Whitney U test (normal approximation with the tie
/// correction): do two sets of samples come from the same distribution?
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<f64> {
    let (n1, n2) = (a.len() as f64, b.len() as f64);
    if a.len() < 3 || b.len() < 3 {
        return None;
    }
    let mut all: Vec<(f64, bool)> = a
        .iter()
        .map(|x| (*x, true))
        .chain(b.iter().map(|x| (*x, false)))
        .collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    let n = all.len();
    let (mut rank_a, mut ties) = (0.0, 0.0);
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        let t = (j - i + 1) as f64;
        ties += t * t * t - t;
        rank_a += all[i..=j].iter().filter(|x| x.1).count() as f64 * rank;
        i = j + 1;
    }
    let u = rank_a - n1 * (n1 + 1.0) / 2.0;
    let mean = n1 * n2 / 2.0;
    let nn = n1 + n2;
    let var = n1 * n2 / 12.0 * ((nn + 1.0) - ties / (nn * (nn - 1.0)));
    if var <= 0.0 {
        return Some(1.0);
    }
    let z = (u - mean).abs() / var.sqrt();
    Some(2.0 * normal_tail(z))
}

/// P(Z > z) for a standard normal (Abramowitz and Stegun 7.1.26, error below 1.5e-7).
fn normal_tail(z: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.3275911 * z / std::f64::consts::SQRT_2);
    let poly = t
        * (0.254829592
            + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    0.5 * poly * (-(z * z) / 2.0).exp()
}

/// Two-sided critical value of Student's t for `df` degrees of freedom at 99% (alpha 0.01)
/// or 95% (anything else). Beyond 30 degrees of freedom, the value of the next tabulated
/// count below (40, 60, 120) is taken, which errs on the side of "within noise".
fn t_critical(df: usize, alpha: f64) -> f64 {
    const T99: [f64; 30] = [
        63.657, 9.925, 5.841, 4.604, 4.032, 3.707, 3.499, 3.355, 3.250, 3.169, 3.106, 3.055, 3.012,
        2.977, 2.947, 2.921, 2.898, 2.878, 2.861, 2.845, 2.831, 2.819, 2.807, 2.797, 2.787, 2.779,
        2.771, 2.763, 2.756, 2.750,
    ];
    const T95: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    // (degrees of freedom from, value at 99%, at 95%) past the table.
    const TAIL: [(usize, f64, f64); 4] = [
        (120, 2.617, 1.980),
        (60, 2.660, 2.000),
        (40, 2.704, 2.021),
        (30, 2.750, 2.042),
    ];
    let strict = alpha <= 0.01;
    match df {
        0 => f64::INFINITY,
        1..=30 => {
            if strict {
                T99[df - 1]
            } else {
                T95[df - 1]
            }
        }
        _ => {
            let (_, t99, t95) = TAIL
                .iter()
                .find(|(from, _, _)| df >= *from)
                .copied()
                .unwrap_or(TAIL[3]);
            if strict { t99 } else { t95 }
        }
    }
}

/// Welch's two-sample t statistic of `a` against `b` (mean of `a` minus mean of `b`, over the
/// standard error from each side's own variance) and its Welch-Satterthwaite degrees of
/// freedom; `None` with fewer than two values on a side, or no variance at all.
pub fn welch(a: &[f64], b: &[f64]) -> Option<(f64, f64, f64)> {
    let (na, nb) = (a.len() as f64, b.len() as f64);
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len() as f64;
    let var = |xs: &[f64]| {
        let m = mean(xs);
        xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len() as f64 - 1.0)
    };
    let (qa, qb) = (var(a) / na, var(b) / nb);
    let se2 = qa + qb;
    if se2 <= 0.0 {
        return None;
    }
    let df = se2 * se2 / (qa * qa / (na - 1.0) + qb * qb / (nb - 1.0));
    let se = se2.sqrt();
    Some(((mean(a) - mean(b)) / se, df, se))
}

/// The confidence level `t_critical` gives its values at for `alpha`.
fn level(alpha: f64) -> f64 {
    if alpha <= 0.01 { 0.99 } else { 0.95 }
}

/// The change of a bench between runs and its verdict. `current` and `baseline` are the
/// bench's results in runs made the same way on each side (one or more each).
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
    let medians = |rs: &[&BenchResult]| -> Vec<f64> {
        rs.iter()
            .filter_map(|r| r.summary.as_ref().map(|s| s.median))
            .filter(|m| *m > 0.0)
            .collect()
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
        let significant = se > 0.0 && d.abs() / se > t || se == 0.0 && d != 0.0;
        out.basis = format!(
            "{nb} baseline runs, {nc} current: run-to-run sd {:.1}% ({test}, df {df})",
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
    let significant = if se > 0.0 {
        mean.abs() / se > t
    } else {
        mean != 0.0
    };
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

/// What differs between two runs beyond their knobs that makes their timings incomparable:
/// trace, profiling, build profile, SQLite versions, CPU model, the CPUs runners were confined
/// to, whether idle CPUs were kept polling.
pub fn setup_differences(a: &RunRecord, b: &RunRecord) -> Vec<String> {
    let mut d = run_differences(a, b);
    if let (Some(x), Some(y)) = (&a.start, &b.start) {
        if x.budget.paired != y.budget.paired {
            d.push(format!(
                "paired rounds {} vs {}",
                if x.budget.paired { "on" } else { "off" },
                if y.budget.paired { "on" } else { "off" }
            ));
        }
        if x.budget.paired && y.budget.paired && x.paired_group() != y.paired_group() {
            let words = |g: Option<usize>| {
                g.map(|g| format!("in groups of {g}"))
                    .unwrap_or_else(|| "all at once".into())
            };
            d.push(format!(
                "paired rounds {} vs {}",
                words(x.paired_group()),
                words(y.paired_group())
            ));
        }
        if x.env.profile != y.env.profile {
            d.push(format!("build {} vs {}", x.env.profile, y.env.profile));
        }
        if x.env.sqlite != y.env.sqlite {
            d.push(format!("SQLite {} vs {}", x.env.sqlite, y.env.sqlite));
        }
        if x.env.cpu != y.env.cpu {
            d.push(format!("CPU {} vs {}", x.env.cpu, y.env.cpu));
        }
        if x.env.cpus != y.env.cpus {
            let words = |c: &Option<Vec<usize>>| {
                crate::units::placement(c.as_deref().map(crate::units::cpu_list).as_deref())
            };
            d.push(format!(
                "runners {} vs {}",
                words(&x.env.cpus),
                words(&y.env.cpus)
            ));
        }
    }
    let polled = |r: &RunRecord| {
        r.machine
            .as_ref()
            .and_then(|m| m.cpu_idle.as_ref())
            .is_some_and(crate::protocol::CpuIdle::polled)
    };
    if polled(a) != polled(b) {
        let words = crate::protocol::CpuIdle::words;
        d.push(format!(
            "idle CPUs {} vs {}",
            words(polled(a)),
            words(polled(b))
        ));
    }
    d
}

/// One row of a comparison: a bench's figures, its ratio to the baseline bench and, when a
/// baseline run is given, its change against that run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparisonRow {
    pub bench: String,
    pub backend: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<String>,
    pub median_ns: f64,
    pub ci95_ns: [f64; 2],
    /// Operations per second at the median (1e9 / median ns).
    pub ops_per_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_ns: Option<u64>,
    pub samples: usize,
    /// CPU time and context switches per operation (runs from protocol 1.3 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<crate::measure::cost::CostSummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<Ratio>,
    /// Against the same bench of the baseline run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<Change>,
}

/// The SQLite settings a bench's connections read back that differ from what its run asked
/// for (`name: got (asked want)`); empty when they match or the bench has no connection.
pub fn settings_differences(run: &RunRecord, bench: &str) -> Vec<String> {
    let (Some(b), Some(start)) = (run.bench(bench), run.start.as_ref()) else {
        return Vec::new();
    };
    if b.sqlite.is_empty() {
        return Vec::new();
    }
    let asked = crate::settings::SqliteSettings::from_knobs(&start.knobs).expected();
    crate::settings::differences(&asked, &b.sqlite)
}

/// How a bench's figure (its median, or its ratio) varies between runs made with the same
/// settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Runs with the figure.
    pub runs: usize,
    /// The median of the runs' figures.
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    /// The spread of `values`; `None` with fewer than two.
    pub fn of(values: impl IntoIterator<Item = f64>) -> Option<Spread> {
        let mut values: Vec<f64> = values.into_iter().collect();
        if values.len() < 2 {
            return None;
        }
        values.sort_by(f64::total_cmp);
        let n = values.len();
        Some(Spread {
            runs: n,
            min: values[0],
            max: values[n - 1],
            median: median_of(values),
        })
    }

    /// (max - min) / median.
    pub fn relative(&self) -> f64 {
        (self.max - self.min) / self.median
    }
}

/// The spread of `bench`'s median across `runs` (which the caller picks as comparable: same
/// target, knobs and trace). `None` with fewer than two results.
pub fn spread<'a>(runs: impl IntoIterator<Item = &'a RunRecord>, bench: &str) -> Option<Spread> {
    Spread::of(
        runs.into_iter()
            .filter_map(|r| r.bench(bench)?.summary.as_ref().map(|s| s.median)),
    )
}

/// `runs` in groups of runs made the same way (`same`: [`run_differences`] or
/// [`setup_differences`] empty, say), each group the positions of its runs in order, groups in
/// the order of their first runs. Runs without a start belong to no group. The one grouping of
/// runs every view uses (repeats, verdicts against a baseline, spreads).
pub fn groups<R: std::borrow::Borrow<RunRecord>>(
    runs: &[R],
    same: impl Fn(&RunRecord, &RunRecord) -> bool,
) -> Vec<Vec<usize>> {
    let mut seen = vec![false; runs.len()];
    let mut out = Vec::new();
    for i in 0..runs.len() {
        if seen[i] || runs[i].borrow().start.is_none() {
            continue;
        }
        let group: Vec<usize> = (i..runs.len())
            .filter(|&j| !seen[j] && same(runs[i].borrow(), runs[j].borrow()))
            .collect();
        for &j in &group {
            seen[j] = true;
        }
        out.push(group);
    }
    out
}

/// Whether two runs measured the same thing the same way: same target, knobs and trace.
/// Returns what differs, or nothing when they are comparable.
pub fn run_differences(a: &RunRecord, b: &RunRecord) -> Vec<String> {
    match (&a.start, &b.start) {
        (Some(x), Some(y)) => {
            let mut d = Vec::new();
            if x.target != y.target {
                d.push(format!("target {} vs {}", x.target, y.target));
            }
            if x.trace != y.trace {
                d.push(format!("trace {} vs {}", x.trace, y.trace));
            }
            if a.profiled != b.profiled {
                d.push(format!("profiled {} vs {}", a.profiled, b.profiled));
            }
            d.extend(x.knobs.differences(&y.knobs));
            d
        }
        _ => vec!["a run without a start".into()],
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Welch's t and its Welch-Satterthwaite degrees of freedom against an independent
    /// implementation: the expected values are SciPy 1.17.1's
    /// `scipy.stats.ttest_ind(a, b, equal_var=False)` (its `statistic` and `df`) on the same
    /// numbers.
    #[test]
    fn welch_matches_scipy() {
        let ln = |xs: &[f64]| xs.iter().map(|x| x.ln()).collect::<Vec<f64>>();
        let cases: [(Vec<f64>, Vec<f64>, f64, f64); 3] = [
            (
                vec![1.0, 2.0, 3.0, 4.0],
                vec![2.0, 4.0, 6.0, 8.0, 10.0],
                -2.2514363231593695,
                5.520787746170677,
            ),
            (
                vec![7.2, 7.4, 7.1],
                vec![7.9, 8.3, 8.0, 8.8, 8.1, 8.4],
                -6.352788172959865,
                6.988937194572516,
            ),
            (
                ln(&[1400.0, 1409.0, 1382.0]),
                ln(&[1455.0, 1470.0, 1449.0, 1462.0]),
                -6.70283997746339,
                3.1781605406595825,
            ),
        ];
        for (a, b, t, df) in cases {
            let (gt, gdf, _) = welch(&a, &b).unwrap();
            assert!((gt - t).abs() < 1e-9, "t {gt} vs {t}");
            assert!((gdf - df).abs() < 1e-9, "df {gdf} vs {df}");
        }
        assert_eq!(welch(&[1.0], &[1.0, 2.0]), None);
        assert_eq!(welch(&[1.0, 1.0], &[2.0, 2.0]), None);
    }
    use crate::measure::stats::summarize;
    use crate::protocol::Event;

    pub(crate) fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    fn with_ci(m: f64, lo: f64, hi: f64) -> Summary {
        let mut s = summarize(&[m], None).unwrap();
        s.ci95_median = [lo, hi];
        s
    }

    #[test]
    fn ratio_propagates_relative_errors() {
        let r = ratio_of_medians(&with_ci(10.0, 9.0, 11.0), &with_ci(2.0, 1.8, 2.2)).unwrap();
        assert!(close(r.value, 5.0));
        assert!(close(r.err, 5.0 * (0.02f64).sqrt()));
        assert_eq!(r.ci95, None);
    }

    /// A bench result of `n` samples spread ±`spread` around `m` (deterministic).
    fn result(m: f64, spread: f64, n: usize) -> BenchResult {
        let xs: Vec<f64> = (0..n)
            .map(|i| m * (1.0 + spread * (((i * 37) % n) as f64 / n as f64 - 0.5) * 2.0))
            .collect();
        from_samples(&xs)
    }

    /// A bench's result from its samples (ns per operation, one operation a sample).
    fn from_samples(xs: &[f64]) -> BenchResult {
        let mut r = RunRecord::default();
        for x in xs {
            r.apply(Event::Sample {
                bench: "b".into(),
                iter: 0,
                ops: 1,
                elapsed_ns: *x as u64,
                work: None,
                cost: None,
            });
        }
        r.apply(Event::Summary {
            bench: "b".into(),
            stats: summarize(xs, None).unwrap(),
        });
        r.bench("b").unwrap().clone()
    }

    #[test]
    fn mann_whitney_tells_shifted_samples_from_the_same() {
        let a: Vec<f64> = (0..50).map(|i| 100.0 + (i % 10) as f64).collect();
        let b: Vec<f64> = (0..50).map(|i| 100.0 + ((i * 7) % 10) as f64).collect();
        let c: Vec<f64> = a.iter().map(|x| x + 8.0).collect();
        assert!(mann_whitney(&a, &b).unwrap() > 0.9);
        assert!(mann_whitney(&a, &c).unwrap() < 1e-6);
        assert_eq!(mann_whitney(&a[..2], &b), None);
        assert!((normal_tail(1.959964) - 0.025).abs() < 1e-6);
    }

    #[test]
    fn one_run_a_side_gives_a_verdict_only_beyond_what_a_run_can_move() {
        let s = Settings::default();
        let base = result(100.0, 0.01, 40);
        let v = |m: f64| change(&result(m, 0.01, 40), &base, &s).unwrap();
        // Tight samples 10% apart: they differ, but a run can move that much.
        let c = v(110.0);
        assert_eq!(c.verdict, Verdict::CannotTell);
        assert!(c.basis.contains("repeat runs"), "{}", c.basis);
        assert_eq!(
            v(101.5).verdict,
            Verdict::WithinNoise,
            "under the threshold"
        );
        assert_eq!(v(140.0).verdict, Verdict::Regressed);
        assert_eq!(v(60.0).verdict, Verdict::Improved);
        assert!(close(v(60.0).pct, -40.0));
        // Wide samples whose medians are 5% apart do not differ.
        let wide = change(&result(105.0, 0.5, 20), &result(100.0, 0.5, 20), &s).unwrap();
        assert_eq!(wide.verdict, Verdict::WithinNoise, "{}", wide.basis);
    }

    /// `judge_rounds` over rounds given as (current, baseline) levels: each run's samples lie
    /// within ±1% of its level, alike, so its fastest sample keeps the levels' ratios.
    fn judge_medians(pairs: &[(f64, f64)], s: &Settings) -> Option<Change> {
        let v: Vec<(BenchResult, BenchResult)> = pairs
            .iter()
            .map(|(c, b)| (result(*c, 0.01, 20), result(*b, 0.01, 20)))
            .collect();
        let refs: Vec<(&BenchResult, &BenchResult)> = v.iter().map(|(c, b)| (c, b)).collect();
        judge_rounds(&refs, s)
    }

    #[test]
    fn interleaved_rounds_judge_round_by_round() {
        let s = Settings::default();
        let judge = |pairs: &[(f64, f64)]| judge_medians(pairs, &s).unwrap();
        // The machine drifts 10% over the rounds; each round's current run is 5% faster than
        // its baseline run: called, although the runs of the two sides overlap in time.
        let drift = [
            (95.0, 100.0),
            (99.5, 105.0),
            (104.0, 110.0),
            (97.6, 103.0),
            (101.0, 106.0),
            (94.6, 99.5),
        ];
        let c = judge(&drift);
        assert_eq!(c.verdict, Verdict::Improved, "{}", c.basis);
        assert!((c.pct + 5.2).abs() < 0.5, "{}", c.pct);
        let [lo, hi] = c.ci_pct.unwrap();
        assert!(lo < c.pct && c.pct < hi && hi < -2.0, "{lo} {hi}");
        assert_eq!(c.ci_level, 0.99);
        assert!(
            c.basis
                .starts_with("6 interleaved rounds by their fastest samples"),
            "{}",
            c.basis
        );
        // The same drift with nothing changed: within noise.
        let same = [
            (100.5, 100.0),
            (104.0, 105.0),
            (110.8, 110.0),
            (102.0, 103.0),
            (106.3, 106.0),
            (99.0, 99.5),
        ];
        assert_eq!(judge(&same).verdict, Verdict::WithinNoise);
        // A 5% change that swings from round to round cannot be told from it: not
        // significant, and its interval reaches far beyond ±4%.
        let swings = [(95.0, 100.0), (120.0, 100.0), (98.0, 100.0), (108.0, 100.0)];
        let c = judge(&swings);
        assert!(c.pct > 4.0, "{}", c.pct);
        assert_eq!(c.verdict, Verdict::CannotTell, "{}", c.basis);
        assert!(
            c.basis.ends_with(
                "and its interval reaches beyond ±4%; more rounds or a quieter machine narrow it"
            ),
            "{}",
            c.basis
        );
        // Their 99% interval, -23.0% ... +42.6% (scipy.stats.t.interval(0.99, 3, ...) over
        // the four log ratios), stays within twice a noise threshold of 25%: within noise.
        let loose = Settings {
            noise: 0.25,
            ..Settings::default()
        };
        let c = judge_medians(&swings, &loose).unwrap();
        assert_eq!(c.verdict, Verdict::WithinNoise, "{}", c.basis);
        let [lo, hi] = c.ci_pct.unwrap();
        assert!(
            (lo + 22.98).abs() < 0.05 && (hi - 42.62).abs() < 0.05,
            "{lo} {hi}"
        );
        // Student's t at the level the rounds are judged, for their degrees of freedom.
        assert_eq!(t_critical(5, 0.01), 4.032);
        assert_eq!(t_critical(11, 0.01), 3.106);
        assert_eq!(t_critical(50, 0.05), 2.021);
        assert!((1..200).all(|df| t_critical(df + 1, 0.01) <= t_critical(df, 0.01)));
        // One round says nothing about the next.
        assert_eq!(judge_medians(&[(50.0, 100.0)], &s), None);
    }

    /// `c` has the verdict, the change (to 0.001 points) and the interval (to 0.01 points)
    /// a reference implementation computed.
    fn expect(c: &Change, verdict: Verdict, pct: f64, ci: [f64; 2]) {
        assert_eq!(c.verdict, verdict, "{}", c.basis);
        assert!((c.pct - pct).abs() < 0.001, "{} against {pct}", c.pct);
        let [lo, hi] = c.ci_pct.expect("an interval");
        assert!(
            (lo - ci[0]).abs() < 0.01 && (hi - ci[1]).abs() < 0.01,
            "[{lo}, {hi}] against {ci:?}"
        );
    }

    /// Rounds measured on this project's 2-vCPU KVM machine (`benchscope run single_row_lookup
    /// --rows 1000 --lookups 1000 --bench rusqlite --time 0.2 --warmup 0.05 --min-samples 5
    /// --baseline base --interleave 10`, the runs' medians in µs as printed, as levels), with one, three and
    /// four disturbed rounds. Expected values from an independent implementation: numpy 2 and scipy
    /// 1.17.1 over the same medians (`d = log(c / b)`; median and MAD of `d`, scale
    /// `max(1.4826 * MAD, 0.005)`, rounds beyond 3.5 scales left out;
    /// `scipy.stats.ttest_1samp(kept, 0)` and `scipy.stats.t.interval(0.99, n - 1,
    /// loc=kept.mean(), scale=scipy.stats.sem(kept))`, as percent changes).
    #[test]
    fn a_disturbed_round_is_left_out_and_named() {
        let s = Settings::default();
        let judge = |pairs: &[(f64, f64)]| judge_medians(pairs, &s).unwrap();
        // A/A: round 4's baseline run read 4.02 µs. With it, the mean change is -4.58%
        // (scipy: p = 0.28); without it, -0.62%, 99% [-1.78%, +0.55%] (p = 0.111).
        let aa = judge(&[
            (2.63, 2.67),
            (2.65, 2.71),
            (2.66, 2.64),
            (2.66, 4.02),
            (2.63, 2.66),
            (2.66, 2.66),
            (2.64, 2.62),
            (2.66, 2.67),
            (2.63, 2.64),
            (2.63, 2.67),
        ]);
        expect(&aa, Verdict::WithinNoise, -0.6238, [-1.7804, 0.5465]);
        assert_eq!(
            aa.basis,
            "10 interleaved rounds by their fastest samples, round 4 (-33.8%) left out as disturbed (the median round -0.8%): the change moves 1.0% (sd) from round to round"
        );
        // A real 5% (cache_size=35 against 2000): round 3's current run read 3.64 µs. With
        // it, +1.59% and p = 0.64 (within noise); without it, +4.94%, 99% [+2.87%, +7.05%],
        // p = 3.9e-5.
        let diff = judge(&[
            (2.80, 2.62),
            (2.77, 2.65),
            (2.76, 3.64),
            (2.76, 2.71),
            (2.78, 2.67),
            (2.78, 2.63),
            (2.76, 2.66),
            (2.76, 2.66),
            (2.80, 2.64),
            (2.85, 2.64),
        ]);
        expect(&diff, Verdict::Regressed, 4.9409, [2.8747, 7.0486]);
        // Three disturbed rounds of ten are left out; the seven left: +0.06%, 99% [-1.82%,
        // +1.98%], p = 0.91.
        let three = judge(&[
            (2.64, 2.59),
            (3.27, 2.66),
            (3.24, 2.78),
            (2.65, 3.34),
            (2.65, 2.68),
            (2.65, 2.64),
            (2.65, 2.67),
            (2.65, 2.62),
            (2.64, 2.69),
            (2.65, 2.63),
        ]);
        expect(&three, Verdict::WithinNoise, 0.0618, [-1.8184, 1.9780]);
        assert!(
            three
                .basis
                .contains("rounds 2 (+22.9%), 3 (+16.5%), 4 (-20.7%) left out as disturbed"),
            "{}",
            three.basis
        );
        // Four of ten are more than 30%: the rounds cannot tell (the change shown is the
        // median round's, +0.38%).
        let busy = judge(&[
            (2.64, 2.64),
            (3.57, 2.63),
            (2.66, 2.64),
            (2.66, 2.62),
            (2.61, 2.65),
            (2.63, 2.72),
            (3.68, 2.65),
            (3.76, 2.66),
            (2.64, 3.74),
            (2.64, 2.65),
        ]);
        assert_eq!(busy.verdict, Verdict::CannotTell, "{}", busy.basis);
        assert_eq!(busy.ci_pct, None);
        assert!((busy.pct - 0.3781).abs() < 0.001, "{}", busy.pct);
        assert!(
            busy.basis
                .contains("rounds 2 (+35.7%), 7 (+38.9%), 8 (+41.4%), 9 (-29.4%) left out")
                && busy
                    .basis
                    .contains("more than 30% of the rounds were disturbed"),
            "{}",
            busy.basis
        );
    }

    /// A slow spell that covers most of one run (seven of its ten samples at 3.8 µs where the
    /// rest of the rounds read 2.6-2.7 µs) moves that run's median by 46% and its fastest
    /// sample not at all: the round is not even disturbed, and nothing changed is called.
    #[test]
    fn a_run_slowed_for_most_of_its_samples_is_taken_by_its_fastest() {
        let s = Settings::default();
        let steady = |level: f64| {
            from_samples(&(0..10).map(|i| level + i as f64 * 10.0).collect::<Vec<_>>())
        };
        let mut slow: Vec<f64> = (0..3).map(|i| 2600.0 + i as f64 * 10.0).collect();
        slow.extend((0..7).map(|i| 3800.0 + i as f64 * 10.0));
        let spell = from_samples(&slow);
        assert!(spell.summary.as_ref().unwrap().median > 3800.0);
        assert_eq!(fastest(&spell), Some(2600.0));
        let mut rounds: Vec<(BenchResult, BenchResult)> = (0..9)
            .map(|i| {
                let level = 2600.0 + (i % 3) as f64 * 40.0;
                (steady(level), steady(level))
            })
            .collect();
        rounds.insert(3, (spell, steady(2600.0)));
        let refs: Vec<(&BenchResult, &BenchResult)> = rounds.iter().map(|(c, b)| (c, b)).collect();
        let c = judge_rounds(&refs, &s).unwrap();
        assert_eq!(c.verdict, Verdict::WithinNoise, "{}", c.basis);
        assert!(c.pct.abs() < 1e-9, "{}", c.pct);
        assert!(!c.basis.contains("left out"), "{}", c.basis);
    }

    #[test]
    fn paired_runs_judge_the_change_of_their_paired_ratio() {
        let s = Settings::default();
        let with = |m: f64, ratio: f64, half: f64| {
            let mut r = result(m, 0.01, 30);
            r.paired = Some((
                "rusqlite".into(),
                crate::measure::stats::PairedRatio {
                    pairs: 30,
                    median: ratio,
                    ci95: [ratio * (1.0 - half), ratio * (1.0 + half)],
                },
            ));
            r
        };
        // The machine ran 20% slower in the second run (both benches alike): the medians
        // moved, the paired ratio did not.
        let c = change(&with(120.0, 3.0, 0.01), &with(100.0, 3.0, 0.01), &s).unwrap();
        assert_eq!(c.verdict, Verdict::WithinNoise, "{}", c.basis);
        assert!(c.pct.abs() < 1e-9 && c.basis.starts_with("paired rounds"));
        // A 5% change of the ratio with tight intervals: the pairs differ, but one run a side
        // cannot tell it from how far a run's ratio moves (measured: up to 18% in 20 A/A runs).
        let c = change(&with(100.0, 3.15, 0.01), &with(100.0, 3.0, 0.01), &s).unwrap();
        assert_eq!(c.verdict, Verdict::CannotTell, "{}", c.basis);
        let [lo, hi] = c.ci_pct.unwrap();
        assert!(lo > 3.0 && hi < 7.0, "{lo} {hi}");
        // Beyond the margin: called.
        let c = change(&with(100.0, 4.5, 0.01), &with(100.0, 3.0, 0.01), &s).unwrap();
        assert_eq!(c.verdict, Verdict::Regressed);
        // The same 5% inside wide intervals: within noise.
        let c = change(&with(100.0, 3.15, 0.08), &with(100.0, 3.0, 0.08), &s).unwrap();
        assert_eq!(c.verdict, Verdict::WithinNoise);
    }

    #[test]
    fn repeated_runs_judge_by_their_run_to_run_variation() {
        let s = Settings::default();
        let runs = |ms: &[f64]| ms.iter().map(|m| result(*m, 0.01, 30)).collect::<Vec<_>>();
        fn refs(v: &[BenchResult]) -> Vec<&BenchResult> {
            v.iter().collect()
        }
        // Runs that move ±1% from run to run: a 5% change is called, with its interval.
        let base = runs(&[100.0, 101.0, 99.0, 100.5]);
        let slower = runs(&[105.0, 104.5, 106.0]);
        let c = judge(&refs(&slower), &refs(&base), &s).unwrap();
        assert_eq!(c.verdict, Verdict::Regressed, "{}", c.basis);
        let [lo, hi] = c.ci_pct.unwrap();
        assert!(lo > 2.0 && hi < 8.0, "{lo} {hi}");
        assert_eq!(c.ci_level, 0.99, "the interval at the verdict's level");
        // Runs that move ±20%: the same 5% is within noise.
        let noisy = runs(&[100.0, 120.0, 80.0, 110.0]);
        let c = judge(&refs(&slower), &refs(&noisy), &s).unwrap();
        assert_eq!(c.verdict, Verdict::WithinNoise, "{}", c.basis);
        assert!(c.basis.contains("run-to-run sd"), "{}", c.basis);
    }

    /// The verdict's interval and test against values derived by hand: Python's statistics
    /// module on the runs' log medians, the Welch-Satterthwaite degrees of freedom, and
    /// Student's t from a published table (t(0.995, 4) = 4.604, t(0.995, 3) = 5.841). Medians
    /// set exactly (not from samples, which are whole ns).
    #[test]
    fn the_run_to_run_test_and_interval_match_a_hand_derivation() {
        let s = Settings::default();
        let runs = |ms: &[f64]| -> Vec<BenchResult> {
            ms.iter()
                .map(|m| record(&[("b", *m, m * 0.99, m * 1.01)]).benches.remove(0))
                .collect()
        };
        let base = runs(&[100.0, 101.0, 99.0, 100.5]);
        let slower = runs(&[105.0, 104.5, 106.0]);
        let (b, c): (Vec<&BenchResult>, Vec<&BenchResult>) =
            (base.iter().collect(), slower.iter().collect());
        // Welch: df 4.836, floored to 4; d = 0.0491368, se = 0.0059821.
        let w = judge(&c, &b, &s).unwrap();
        let [lo, hi] = w.ci_pct.unwrap();
        assert!(
            (lo - 2.183016557).abs() < 1e-6 && (hi - 7.969461516).abs() < 1e-6,
            "{lo} {hi}"
        );
        assert!(w.basis.contains("(Welch, df 4)"), "{}", w.basis);
        assert_eq!(w.verdict, Verdict::Regressed);
        // One current run against four: it has no variance of its own, the baseline's is taken
        // for both (Student's pooled test, df 3; sd of the log medians 0.854%): the interval
        // [-0.8184170%, 10.8884333%] holds 0, so the same 5% is within noise.
        let one = runs(&[105.0]);
        let p = judge(&[&one[0]], &b, &s).unwrap();
        let [lo, hi] = p.ci_pct.unwrap();
        assert!(
            (lo + 0.818417027).abs() < 1e-6 && (hi - 10.888433307).abs() < 1e-6,
            "{lo} {hi}"
        );
        assert!(
            p.basis.contains("sd 0.9% (Student, pooled, df 3)"),
            "{}",
            p.basis
        );
        assert_eq!(p.verdict, Verdict::WithinNoise);
    }

    pub(crate) fn record(benches: &[(&str, f64, f64, f64)]) -> RunRecord {
        let mut r = RunRecord::default();
        for (name, m, lo, hi) in benches {
            r.apply(Event::Sample {
                bench: name.to_string(),
                iter: 0,
                ops: 1,
                elapsed_ns: *m as u64,
                work: None,
                cost: None,
            });
            r.apply(Event::Summary {
                bench: name.to_string(),
                stats: with_ci(*m, *lo, *hi),
            });
        }
        r
    }

    #[test]
    fn spread_across_runs_and_settings_that_differ() {
        let runs = [
            record(&[("a", 4040.0, 4020.0, 4050.0)]),
            record(&[("a", 3050.0, 3040.0, 3070.0)]),
            record(&[("a", 3100.0, 3090.0, 3120.0), ("b", 1.0, 1.0, 1.0)]),
        ];
        let s = spread(&runs, "a").unwrap();
        assert_eq!(
            (s.runs, s.median, s.min, s.max),
            (3, 3100.0, 3050.0, 4040.0)
        );
        assert!((s.relative() - 990.0 / 3100.0).abs() < 1e-12);
        assert!(spread(&runs, "b").is_none(), "one result is no spread");

        let mut r = RunRecord::default();
        let mut knobs = crate::knobs::Knobs::default();
        knobs.set("locking_mode", "normal");
        r.apply(Event::Start(crate::protocol::Start {
            run: "r".into(),
            target: "t".into(),
            benches: vec![],
            harness: "core".into(),
            knobs: knobs.clone(),
            seed: 0,
            trace: false,
            budget: crate::protocol::Budget {
                warmup_s: 0.0,
                time_s: 0.0,
                max_samples: 1,
                min_samples: 1,
                paired: false,
                group: None,
            },
            env: Default::default(),
        }));
        let mut got = crate::settings::SqliteSettings::default().expected();
        got.insert("locking_mode".into(), "exclusive".into());
        r.apply(Event::BenchStart {
            bench: "turso".into(),
            backend: "turso".into(),
            strategy: None,
            ops: 1,
            work: None,
            sqlite: got,
        });
        assert_eq!(
            settings_differences(&r, "turso"),
            vec!["locking_mode: exclusive (asked normal)"]
        );
        let mut other = r.clone();
        other.start.as_mut().unwrap().knobs.set("rows", 5u64);
        assert_eq!(run_differences(&r, &other), vec!["rows - vs 5"]);
        assert!(run_differences(&r, &r).is_empty());

        // Paired rounds in groups against all at once: a difference only when a run had more
        // benches beside its baseline than a group holds.
        let paired = |group: Option<usize>, benches: usize| {
            let mut p = r.clone();
            let s = p.start.as_mut().unwrap();
            s.budget.paired = true;
            s.budget.group = group;
            s.benches = (0..benches).map(|i| format!("b{i}")).collect();
            p
        };
        assert_eq!(
            setup_differences(&paired(None, 20), &paired(Some(8), 20)),
            vec!["paired rounds all at once vs in groups of 8"]
        );
        assert!(setup_differences(&paired(None, 9), &paired(Some(8), 9)).is_empty());
        assert!(setup_differences(&paired(Some(8), 20), &paired(Some(8), 30)).is_empty());
    }

    /// A change saved under the interval's old name reads; it is written under its own.
    #[test]
    fn a_change_saved_as_ci95_pct_reads() {
        let old =
            r#"{"pct": 5.0, "verdict": "regressed", "ci95_pct": [1.0, 9.0], "ci_level": 0.99}"#;
        let c: Change = serde_json::from_str(old).unwrap();
        assert_eq!((c.ci_pct, c.ci_level), (Some([1.0, 9.0]), 0.99));
        let text = serde_json::to_string(&c).unwrap();
        assert!(
            text.contains("\"ci_pct\":[1.0,9.0]") && !text.contains("ci95"),
            "{text}"
        );
    }
}
