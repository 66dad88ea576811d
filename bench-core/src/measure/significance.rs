//! Tests of difference between two sets of figures, and the quantiles they are judged by.

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
pub(crate) fn normal_tail(z: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.3275911 * z / std::f64::consts::SQRT_2);
    let poly = t
        * (0.254829592
            + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    0.5 * poly * (-(z * z) / 2.0).exp()
}

/// Two-sided critical value of Student's t for `df` degrees of freedom at 99% (alpha 0.01)
/// or 95% (anything else). Beyond 30 degrees of freedom, the value of the next tabulated
/// count below (40, 60, 120) is taken, which errs on the side of "within noise".
pub(crate) fn t_critical(df: usize, alpha: f64) -> f64 {
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
pub(crate) fn level(alpha: f64) -> f64 {
    if alpha <= 0.01 { 0.99 } else { 0.95 }
}
