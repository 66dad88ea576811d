use super::significance::{normal_tail, t_critical};
use super::*;

/// Welch's t and its Welch-Satterthwaite degrees of freedom against an independent
/// implementation: the expected values are SciPy 1.17.1's
/// `scipy.stats.ttest_ind(a, b, equal_var=False)` (its `statistic` and `df`) on the same
/// numbers.
#[test]
fn welch_matches_scipy() {
    let ln = |xs: &[f64]| xs.iter().map(|x| x.ln()).collect::<Vec<f64>>();
    let cases: [(Vec<f64>, Vec<f64>, f64, f64); 4] = [
        // The fewest it takes: two a side.
        (
            vec![1.0, 2.0],
            vec![3.0, 5.0],
            -2.23606797749979,
            1.4705882352941178,
        ),
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
    assert_eq!(welch(&[1.0, 2.0], &[1.0]), None);
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
            memory: None,
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

/// Against SciPy 1.x: `scipy.stats.mannwhitneyu(a, b, use_continuity=False,
/// alternative='two-sided', method='asymptotic')`, the normal approximation with the tie
/// correction, as here: with ties (0.24583426698023336), none and the smallest samples taken
/// (3 a side: 0.049534613435626706), and most values tied (0.17971249487899987).
#[test]
fn mann_whitney_matches_scipy() {
    let cases: [(&[f64], &[f64], f64); 3] = [
        (
            &[3.0, 5.0, 5.0, 8.0, 9.0, 12.0],
            &[1.0, 2.0, 5.0, 5.0, 6.0, 7.0, 7.0],
            0.24583426698023336,
        ),
        (&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0], 0.049534613435626706),
        (
            &[10.0, 20.0, 20.0, 20.0, 30.0],
            &[20.0, 20.0, 40.0, 50.0],
            0.17971249487899987,
        ),
    ];
    for (a, b, scipy) in cases {
        let p = mann_whitney(a, b).unwrap();
        // The normal tail is Abramowitz and Stegun's, good to 1.5e-7.
        assert!((p - scipy).abs() < 1e-6, "{a:?} {b:?}: {p} vs {scipy}");
        let q = mann_whitney(b, a).unwrap();
        assert!((q - p).abs() < 1e-12, "two-sided: the same either way");
    }
    assert_eq!(mann_whitney(&[1.0, 2.0], &[4.0, 5.0, 6.0]), None);
    assert_eq!(mann_whitney(&[1.0, 2.0, 3.0], &[4.0, 5.0]), None);
    // Every value the same: no variance, no evidence of a difference.
    assert_eq!(mann_whitney(&[1.0; 4], &[1.0; 5]), Some(1.0));
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
    // Both levels at the table's ends, from a published t table (two-sided): t(0.995, 1) =
    // 63.657, t(0.975, 1) = 12.706, t(0.975, 30) = 2.042, t(0.975, 120) = 1.980; no degrees
    // of freedom, no finite bound.
    assert_eq!(t_critical(1, 0.01), 63.657);
    assert_eq!(t_critical(1, 0.05), 12.706);
    assert_eq!(t_critical(30, 0.05), 2.042);
    assert_eq!(t_critical(500, 0.05), 1.980);
    assert_eq!(t_critical(0, 0.01), f64::INFINITY);
    assert_eq!(t_critical(0, 0.05), f64::INFINITY);
    assert!((1..200).all(|df| t_critical(df + 1, 0.05) <= t_critical(df, 0.05)));
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
    let steady =
        |level: f64| from_samples(&(0..10).map(|i| level + i as f64 * 10.0).collect::<Vec<_>>());
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

/// A run of 30 samples around `m` whose paired ratio to rusqlite over 30 rounds was `ratio`,
/// its interval ±`half` of it.
fn with_paired(m: f64, ratio: f64, half: f64) -> BenchResult {
    let mut r = result(m, 0.01, 30);
    r.paired = Some((
        "rusqlite".into(),
        crate::measure::stats::PairedRatio {
            pairs: 30,
            median: ratio,
            ci95: [ratio * (1.0 - half), ratio * (1.0 + half)],
            processes: Vec::new(),
        },
    ));
    r
}

#[test]
fn paired_runs_judge_the_change_of_their_paired_ratio() {
    let s = Settings::default();
    let with = with_paired;
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
    // The other way round (four current runs against one baseline): the same test with the
    // sides' roles swapped, d = -0.0475683 with the same se 0.0095508: [-9.8192688%,
    // 0.8251704%].
    let four: Vec<&BenchResult> = b.clone();
    let p = judge(&four, &[&one[0]], &s).unwrap();
    let [lo, hi] = p.ci_pct.unwrap();
    assert!(
        (lo + 9.819268775).abs() < 1e-6 && (hi - 0.825170361).abs() < 1e-6,
        "{lo} {hi}"
    );
    assert!(p.basis.contains("(Student, pooled, df 3)"), "{}", p.basis);
    assert_eq!(p.verdict, Verdict::WithinNoise);

    // At the 0.05 level (`--significance 0.05`, Criterion's): t(0.975, 4) = 2.776 and
    // t(0.975, 3) = 3.182 from the same table; the intervals are 95% ones. Welch:
    // 0.0491368 ± 2.776 x 0.0059821 is [3.3065433%, 6.7952225%]. One run against four:
    // d / se = 0.0475683 / 0.0095508 = 4.98, past 3.182 (not past 5.841): [1.7326073%,
    // 8.1078195%], and the same 5% is now a regression.
    let at5 = Settings {
        alpha: 0.05,
        ..Settings::default()
    };
    let w = judge(&c, &b, &at5).unwrap();
    let [lo, hi] = w.ci_pct.unwrap();
    assert!(
        (lo - 3.306543303).abs() < 1e-6 && (hi - 6.795222462).abs() < 1e-6,
        "{lo} {hi}"
    );
    assert_eq!((w.ci_level, w.verdict), (0.95, Verdict::Regressed));
    let p = judge(&[&one[0]], &b, &at5).unwrap();
    let [lo, hi] = p.ci_pct.unwrap();
    assert!(
        (lo - 1.732607290).abs() < 1e-6 && (hi - 8.107819526).abs() < 1e-6,
        "{lo} {hi}"
    );
    assert_eq!((p.ci_level, p.verdict), (0.95, Verdict::Regressed));
}

/// The start event of a run of `target` with `knobs`, on one sample a bench.
pub(crate) fn start(target: &str, knobs: crate::knobs::Knobs) -> Event {
    Event::Start(crate::protocol::Start {
        run: "r".into(),
        target: target.into(),
        benches: vec![],
        harness: "core".into(),
        knobs,
        seed: 0,
        trace: false,
        budget: crate::protocol::Budget {
            warmup_s: 0.0,
            time_s: 0.0,
            max_samples: 1,
            min_samples: 1,
            paired: false,
            group: None,
            processes: None,
            times: Default::default(),
        },
        env: Default::default(),
    })
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
            memory: None,
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
    r.apply(start("t", knobs.clone()));
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
    let old = r#"{"pct": 5.0, "verdict": "regressed", "ci95_pct": [1.0, 9.0], "ci_level": 0.99}"#;
    let c: Change = serde_json::from_str(old).unwrap();
    assert_eq!((c.ci_pct, c.ci_level), (Some([1.0, 9.0]), 0.99));
    let text = serde_json::to_string(&c).unwrap();
    assert!(
        text.contains("\"ci_pct\":[1.0,9.0]") && !text.contains("ci95"),
        "{text}"
    );
    // Older still: no level written, and every interval then was a 95% one.
    let older = r#"{"pct": 5.0, "verdict": "regressed", "ci95_pct": [1.0, 9.0]}"#;
    let c: Change = serde_json::from_str(older).unwrap();
    assert_eq!(c.ci_level, 0.95);
}

/// Which evidence decides, by the runs each side has: two a side are enough to measure the
/// run-to-run variation (Welch); two against one are not (the samples decide); a side with
/// no run, or only runs that did not measure anything, gives no verdict at all.
#[test]
fn the_runs_each_side_has_choose_the_test() {
    let s = Settings::default();
    let runs = |ms: &[f64]| -> Vec<BenchResult> {
        ms.iter()
            .map(|m| record(&[("b", *m, m * 0.99, m * 1.01)]).benches.remove(0))
            .collect()
    };
    fn refs(v: &[BenchResult]) -> Vec<&BenchResult> {
        v.iter().collect()
    }
    let two = runs(&[100.0, 102.0]);
    let two_more = runs(&[110.0, 111.0]);
    let c = judge(&refs(&two_more), &refs(&two), &s).unwrap();
    assert!(
        c.basis.contains("2 baseline runs, 2 current") && c.basis.contains("Welch"),
        "{}",
        c.basis
    );
    let one = runs(&[110.0]);
    let c = judge(&refs(&two), &refs(&one), &s).unwrap();
    assert!(
        !c.basis.contains("run-to-run"),
        "two against one: {}",
        c.basis
    );
    let c = judge(&refs(&one), &refs(&two), &s).unwrap();
    assert!(
        !c.basis.contains("run-to-run"),
        "one against two: {}",
        c.basis
    );
    // Two a side with no variance at all (every run the same): Welch has no standard error,
    // and a difference with none is significant, past the noise threshold a change.
    let flat = runs(&[100.0, 100.0]);
    let flat_more = runs(&[110.0, 110.0]);
    let c = judge(&refs(&flat_more), &refs(&flat), &s).unwrap();
    assert!(c.basis.contains("(Welch, df 2)"), "{}", c.basis);
    assert_eq!(c.verdict, Verdict::Regressed);
    assert!(judge(&refs(&one), &[], &s).is_none());
    assert!(judge(&[], &refs(&one), &s).is_none());
    // A run whose median is 0 measured nothing: it is no evidence.
    let zero = runs(&[0.0]);
    assert!(judge(&refs(&zero), &refs(&one), &s).is_none());
    assert!(judge(&refs(&one), &refs(&zero), &s).is_none());
}

#[test]
fn a_ratio_needs_two_positive_medians() {
    let s = |m: f64| with_ci(m, m * 0.9, m * 1.1);
    assert!(ratio_of_medians(&s(0.0), &s(2.0)).is_none());
    assert!(ratio_of_medians(&s(2.0), &s(0.0)).is_none());
    assert!(ratio_of_medians(&s(-1.0), &s(2.0)).is_none());
    assert!(ratio_of_medians(&s(4.0), &s(2.0)).is_some());
}

/// With samples on both sides, the ratio's interval is the bootstrap's (widened to hold the
/// ratio itself) and its error half the bootstrap's width.
#[test]
fn a_ratio_of_samples_takes_the_bootstraps_interval() {
    let (a, b) = (result(300.0, 0.05, 40), result(100.0, 0.05, 40));
    let r = ratio_of(&a, &b).unwrap();
    let [lo, hi] = crate::measure::stats::bootstrap_ratio(&a.samples, &b.samples).unwrap();
    assert!(
        close(r.value, 3.0) || (r.value - 3.0).abs() < 0.05,
        "{}",
        r.value
    );
    assert_eq!(r.ci95, Some([lo.min(r.value), hi.max(r.value)]));
    assert!(hi > lo);
    assert_eq!(r.err, (hi - lo) / 2.0);
}

#[test]
fn two_runs_are_a_spread_one_is_not() {
    let s = Spread::of([3.0, 1.0]).unwrap();
    assert_eq!((s.runs, s.min, s.max, s.median), (2, 1.0, 3.0, 2.0));
    assert!(Spread::of([1.0]).is_none());
}

#[test]
fn groups_gather_runs_made_alike_in_the_order_of_their_first_runs() {
    let of = |target: &str| {
        let mut r = record(&[("a", 1.0, 1.0, 1.0)]);
        r.apply(start(target, Default::default()));
        r
    };
    let runs = vec![
        of("x"),
        of("y"),
        RunRecord::default(),
        of("x"),
        of("y"),
        of("z"),
    ];
    let target = |r: &RunRecord| r.start.as_ref().map(|s| s.target.clone());
    let same = |a: &RunRecord, b: &RunRecord| target(a) == target(b);
    assert_eq!(groups(&runs, same), vec![vec![0, 3], vec![1, 4], vec![5]]);
    assert!(
        groups(&runs[2..3], same).is_empty(),
        "a run without a start is in no group"
    );
    assert!(groups::<RunRecord>(&[], same).is_empty());
}

/// What a verdict is called and marked with, in every view (a CI log greps for "regressed").
#[test]
fn verdicts_are_named_and_marked_apart() {
    let all = [
        Verdict::Improved,
        Verdict::Regressed,
        Verdict::WithinNoise,
        Verdict::CannotTell,
    ];
    let labels: Vec<&str> = all.iter().map(|v| v.label()).collect();
    assert_eq!(
        labels,
        ["improved", "regressed", "within noise", "cannot tell"]
    );
    let marks: Vec<&str> = all.iter().map(|v| v.mark()).collect();
    assert_eq!(marks, ["▼", "▲", "≈", "?"]);
}

/// One run a side, each measured in four runner processes: judged by its processes as four
/// runs a side (Welch on their medians), so a 10% change whose processes agree is called,
/// while processes that scatter by 25% cannot call a 3% change, however tight each one's
/// own samples are.
#[test]
fn a_run_of_several_processes_is_judged_by_its_processes() {
    use crate::measure::processes::Estimate;
    let run = |medians: &[f64]| {
        let mut r = result(medians[0], 0.001, 30);
        let s = r.summary.as_mut().unwrap();
        s.processes = medians
            .iter()
            .map(|m| Estimate {
                value: *m,
                ci95: [m * 0.999, m * 1.001],
            })
            .collect();
        r
    };
    let s = Settings::default();
    let base = run(&[100.0, 101.0, 99.0, 100.5]);
    let slower = run(&[110.0, 111.0, 109.0, 110.5]);
    let c = judge(&[&slower], &[&base], &s).unwrap();
    assert_eq!(c.verdict, Verdict::Regressed, "{c:?}");
    assert!(
        c.basis
            .starts_with("4 baseline runner processes, 4 current"),
        "{}",
        c.basis
    );
    let scattered = run(&[100.0, 125.0, 90.0, 110.0]);
    let a_bit_slower = run(&[103.0, 128.5, 92.5, 113.5]);
    let c = judge(&[&a_bit_slower], &[&scattered], &s).unwrap();
    assert_eq!(c.verdict, Verdict::WithinNoise, "{c:?}");
    // The same two runs without their processes: one run a side, judged by its samples.
    let mut one = a_bit_slower.clone();
    one.summary.as_mut().unwrap().processes.clear();
    let mut other = scattered.clone();
    other.summary.as_mut().unwrap().processes.clear();
    let c = judge(&[&one], &[&other], &s).unwrap();
    assert!(!c.basis.contains("processes"), "{}", c.basis);
}

/// A change exactly at the noise threshold is within it (the threshold is "more than"), in the
/// run-to-run test as in the others; a paired ratio of 0 (nothing measured) is not judged as
/// a ratio.
#[test]
fn the_noise_threshold_is_exclusive_and_a_zero_paired_ratio_is_not_a_ratio() {
    fn refs(v: &[BenchResult]) -> Vec<&BenchResult> {
        v.iter().collect()
    }
    // Medians exactly 99, 100, 101 against 149, 150, 151: a change of 150/100 - 1 = 0.5,
    // exact in binary, and far beyond the runs' spread.
    let runs = |ms: &[f64]| ms.iter().map(|m| result(*m, 0.0, 5)).collect::<Vec<_>>();
    let (base, slower) = (runs(&[99.0, 100.0, 101.0]), runs(&[149.0, 150.0, 151.0]));
    let at = |noise: f64| {
        let s = Settings {
            noise,
            ..Settings::default()
        };
        judge(&refs(&slower), &refs(&base), &s).unwrap()
    };
    let c = at(0.5);
    assert_eq!(c.pct, 50.0);
    assert_eq!(c.verdict, Verdict::WithinNoise, "{}", c.basis);
    assert_eq!(at(0.4999).verdict, Verdict::Regressed);
    // One run a side, paired, where one side's ratio is 0: the samples are judged instead.
    let with = |ratio: f64| with_paired(100.0, ratio, 0.01);
    for (c, b) in [(0.0, 3.0), (3.0, 0.0)] {
        let ch = change(&with(c), &with(b), &Settings::default()).unwrap();
        assert!(!ch.basis.starts_with("paired rounds"), "{}", ch.basis);
        assert_eq!(ch.verdict, Verdict::WithinNoise, "{}", ch.basis);
    }
}

/// One run a side, paired: the change and its interval against values worked out apart
/// (Python's `math`: each ratio's half-width in logs `ln(1.01 / 0.99) / 2`, the two combined
/// as `sqrt(2)` times it, the change `ln(3.15 / 3.0)`, the bounds `exp(d ± w) - 1`), the
/// direction of a fall, and the margin a run can move by as "more than". Unpaired, the
/// interval of one run a side is that of the medians' intervals, bound against bound.
#[test]
fn one_run_a_side_gives_its_interval_direction_and_margin_as_worked_out_apart() {
    let s = Settings::default();
    let paired = |ratio: f64| with_paired(100.0, ratio, 0.01);
    let c = change(&paired(3.15), &paired(3.0), &s).unwrap();
    let [lo, hi] = c.ci_pct.unwrap();
    assert!((c.pct - 5.000000000000004).abs() < 1e-9, "{}", c.pct);
    assert!((lo - 3.5254776312217295).abs() < 1e-9, "{lo}");
    assert!((hi - 6.495524118934637).abs() < 1e-9, "{hi}");
    // A fall of a third: improved, not regressed.
    let c = change(&paired(2.0), &paired(3.0), &s).unwrap();
    assert_eq!(c.verdict, Verdict::Improved, "{}", c.basis);
    // A change of exactly the margin is not beyond it (the margin set to the change itself,
    // worked out as the verdict works it out).
    let rel = (4.5f64 / 3.0).ln().exp() - 1.0;
    let at = |margin: f64| {
        let s = Settings {
            single_run_margin: margin,
            ..Settings::default()
        };
        change(&paired(4.5), &paired(3.0), &s).unwrap().verdict
    };
    assert_eq!(at(rel), Verdict::CannotTell);
    assert_eq!(at(rel - 1e-12), Verdict::Regressed);
    // Unpaired: the samples; the same boundary, with medians exactly 150 and 100.
    let at = |margin: f64| {
        let s = Settings {
            single_run_margin: margin,
            ..Settings::default()
        };
        change(&result(150.0, 0.0, 30), &result(100.0, 0.0, 30), &s).unwrap()
    };
    assert_eq!(at(0.5).verdict, Verdict::CannotTell, "{}", at(0.5).basis);
    assert_eq!(at(0.4999).verdict, Verdict::Regressed);
    // Its interval: the current median's bounds against the baseline's, 104/101 - 1 and
    // 106/99 - 1.
    let with_bounds = |m: f64, lo: f64, hi: f64| {
        let mut r = result(m, 0.01, 30);
        r.summary.as_mut().unwrap().ci95_median = [lo, hi];
        r
    };
    let c = change(
        &with_bounds(105.0, 104.0, 106.0),
        &with_bounds(100.0, 99.0, 101.0),
        &s,
    )
    .unwrap();
    let [lo, hi] = c.ci_pct.unwrap();
    assert!((lo - 2.970297029702973).abs() < 1e-9, "{lo}");
    assert!((hi - 7.070707070707072).abs() < 1e-9, "{hi}");
}

/// Interleaved rounds at the edges of their verdict: rounds that all read the same ratio (no
/// spread), a change exactly at the noise threshold, an interval that reaches beyond twice
/// the threshold on one side only, or exactly to it; a run that measured nothing; and the
/// fifth round, the first with which a disturbed round is looked for.
#[test]
fn interleaved_rounds_at_the_edges_of_their_verdict() {
    let s = Settings::default();
    // Every sample of a run its level exactly (whole ns): the run's fastest is its level.
    let exact = |pairs: &[(f64, f64)], s: &Settings| {
        let v: Vec<(BenchResult, BenchResult)> = pairs
            .iter()
            .map(|(c, b)| (result(*c, 0.0, 5), result(*b, 0.0, 5)))
            .collect();
        let refs: Vec<(&BenchResult, &BenchResult)> = v.iter().map(|(c, b)| (c, b)).collect();
        judge_rounds(&refs, s)
    };
    let with_noise = |noise: f64| Settings {
        noise,
        ..Settings::default()
    };
    // No spread at all: a change every round agrees on is a change; none is none.
    let c = exact(&[(150.0, 100.0); 2], &s).unwrap();
    assert_eq!(c.verdict, Verdict::Regressed, "{}", c.basis);
    assert_eq!(
        exact(&[(100.0, 100.0); 2], &s).unwrap().verdict,
        Verdict::WithinNoise
    );
    // The same change with the threshold set to it exactly (worked out as the verdict works
    // out a change, from the rounds' log ratio): not beyond it.
    let rel = (150f64 / 100.0).ln().exp() - 1.0;
    let c = exact(&[(150.0, 100.0); 2], &with_noise(rel)).unwrap();
    assert_eq!(c.verdict, Verdict::WithinNoise, "{}", c.basis);
    // Not significant, the interval beyond ±2 thresholds on the high side only (-23.0% ..
    // +42.6%, against ±40%), or on the low side only (-36.1% .. +15.5%, against ±30%;
    // Python: exp(mean ± t(0.995, 3) · sd / 2) - 1 over the four log ratios): cannot tell.
    let up = [(95.0, 100.0), (120.0, 100.0), (98.0, 100.0), (108.0, 100.0)];
    let c = exact(&up, &with_noise(0.2)).unwrap();
    assert_eq!(c.verdict, Verdict::CannotTell, "{}", c.basis);
    let down = [(85.0, 100.0), (95.0, 100.0), (75.0, 100.0), (90.0, 100.0)];
    let c = exact(&down, &with_noise(0.15)).unwrap();
    let [lo, hi] = c.ci_pct.unwrap();
    assert!(
        (lo + 36.097).abs() < 0.01 && (hi - 15.533).abs() < 0.01,
        "{lo} {hi}"
    );
    assert_eq!(c.verdict, Verdict::CannotTell, "{}", c.basis);
    // The high side reaching exactly twice the threshold is not beyond it: the threshold
    // found whose reach, as the verdict works it out, is the interval's upper bound.
    let hi = exact(&up, &s).unwrap().ci_pct.unwrap()[1];
    let mut noise = hi / (ROUNDS_NOISE_REACH * 100.0);
    for _ in 0..64 {
        let reach = ROUNDS_NOISE_REACH * noise * 100.0;
        if reach == hi {
            break;
        }
        noise = if reach < hi {
            noise.next_up()
        } else {
            noise.next_down()
        };
    }
    assert_eq!(ROUNDS_NOISE_REACH * noise * 100.0, hi);
    let c = exact(&up, &with_noise(noise)).unwrap();
    assert_eq!(c.verdict, Verdict::WithinNoise, "{}", c.basis);
    // A run whose fastest sample is 0 measured nothing: its round is not a round.
    assert_eq!(exact(&[(0.0, 100.0), (150.0, 100.0)], &s), None);
    // Four rounds are too few to call one disturbed; from five, one far out is left out.
    let mut rounds = vec![(100.0, 100.0); 3];
    rounds.push((150.0, 100.0));
    let c = exact(&rounds, &s).unwrap();
    assert!(!c.basis.contains("left out"), "{}", c.basis);
    rounds.insert(0, (100.0, 100.0));
    let c = exact(&rounds, &s).unwrap();
    assert!(
        c.basis.contains("round 5 (+50.0%) left out as disturbed"),
        "{}",
        c.basis
    );
}

/// A bench's result of `m` ns per operation that made `allocs` allocations per operation.
fn allocating(m: f64, allocs: f64) -> BenchResult {
    let mut r = result(m, 0.01, 20);
    r.summary.as_mut().unwrap().memory = Some(crate::measure::memory::MemorySummary {
        allocs_per_op: allocs,
        reallocs_per_op: 0.0,
        bytes_per_op: allocs * 32.0,
        peak_bytes: 64,
        retained_bytes: 0,
        samples_retaining: 0,
        samples: 20,
    });
    r
}

#[test]
fn allocations_per_operation_are_judged_as_counts_whatever_the_time_says() {
    let s = Settings::default();
    let judged = |cur: &[f64], base: &[f64]| {
        let (c, b): (Vec<BenchResult>, Vec<BenchResult>) = (
            cur.iter().map(|&a| allocating(100.0, a)).collect(),
            base.iter().map(|&a| allocating(100.0, a)).collect(),
        );
        let (c, b): (Vec<&BenchResult>, Vec<&BenchResult>) =
            (c.iter().collect(), b.iter().collect());
        let change = judge(&c, &b, &s).unwrap();
        // The time is the same: within noise, whatever the count did.
        assert_eq!(change.verdict, Verdict::WithinNoise);
        change.allocs.unwrap()
    };
    // One more allocation per operation: a regression, with no interval to wait for.
    let a = judged(&[2.0], &[1.0]);
    assert_eq!(
        (a.baseline, a.current, a.verdict),
        (1.0, 2.0, Verdict::Regressed)
    );
    assert_eq!(judged(&[1.0], &[2.0]).verdict, Verdict::Improved);
    // The step either way is a change; just below it is the same count.
    assert_eq!(
        judged(&[1.0 + ALLOC_STEP], &[1.0]).verdict,
        Verdict::Regressed
    );
    assert_eq!(
        judged(&[1.0 - ALLOC_STEP], &[1.0]).verdict,
        Verdict::Improved
    );
    assert_eq!(judged(&[1.04], &[1.0]).verdict, Verdict::WithinNoise);
    assert_eq!(judged(&[0.96], &[1.0]).verdict, Verdict::WithinNoise);
    // Several runs a side: the median run's count.
    let m = judged(&[3.0, 1.0, 1.0], &[1.0, 1.0, 9.0]);
    assert_eq!(
        (m.baseline, m.current, m.verdict),
        (1.0, 1.0, Verdict::WithinNoise)
    );
    // A side without counts (an older run, a driver's own allocator): no allocation verdict.
    let (c, b) = (allocating(100.0, 1.0), result(100.0, 0.01, 20));
    assert_eq!(judge(&[&c], &[&b], &s).unwrap().allocs, None);
    assert_eq!(judge(&[&b], &[&c], &s).unwrap().allocs, None);
    // Interleaved rounds judge the count the same way.
    let (c, b) = (allocating(100.0, 5.0), allocating(100.0, 1.0));
    let rounds = [(&c, &b), (&c, &b), (&c, &b)];
    let r = judge_rounds(&rounds, &s).unwrap().allocs.unwrap();
    assert_eq!(
        (r.baseline, r.current, r.verdict),
        (1.0, 5.0, Verdict::Regressed)
    );
}
