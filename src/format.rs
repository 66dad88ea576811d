//! How comparisons against a baseline run read: changes and verdicts, on the
//! digit rule of [`bench_core::format`] (re-exported here: the front end's one `format`).

use bench_core::compare::Change;
pub use bench_core::format::*;

/// A change against a baseline run with its verdict, `-6.0% ▼`; `-6.0% ≠` when the runs were
/// not made the same way (no verdict then: [`differs`] says what).
pub fn change(c: &Change) -> String {
    if c.differs.is_empty() {
        format!("{:+.1}% {}", c.pct, c.verdict.mark())
    } else {
        format!("{:+.1}% ≠", c.pct)
    }
}

/// Allocations per operation against a baseline run: `allocs 1.00 → 2.00 ▲` where the count
/// changed, `allocs 1.00 =` where it did not.
pub fn allocs_change(a: &bench_core::compare::AllocChange) -> String {
    if a.verdict == bench_core::compare::Verdict::WithinNoise {
        format!("allocs {} =", count(a.current))
    } else {
        format!(
            "allocs {} → {} {}",
            count(a.baseline),
            count(a.current),
            a.verdict.mark()
        )
    }
}

/// A change in words: `regressed (+6.0%)`, or what differs instead of a verdict (names from
/// the runs: a text, escaped where it is written).
pub fn verdict(c: &Change) -> bench_core::text::Text {
    if c.differs.is_empty() {
        match c.ci_pct {
            Some([lo, hi]) => bench_core::text!(
                "{} ({:+.1}%, {:.0}% CI {lo:+.1}% to {hi:+.1}%)",
                c.verdict.label(),
                c.pct,
                c.ci_level * 100.0
            ),
            None => bench_core::text!("{} ({:+.1}%)", c.verdict.label(), c.pct),
        }
    } else {
        bench_core::text!(
            "{:+.1}%, no verdict ({} differ)",
            c.pct,
            bench_core::text::Text::join(&c.differs, ", ").raw()
        )
    }
}

/// The smallest and largest of a ratio's values across runs, `8.00–8.40x`, each with its own
/// digits.
pub fn ratio_range(spread: &bench_core::compare::Spread) -> String {
    let d = bench_core::units::decimals;
    format!(
        "{:.*}–{:.*}x",
        d(spread.min),
        spread.min,
        d(spread.max),
        spread.max
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::compare::{Ratio, Verdict};

    #[test]
    fn ratios_keep_the_digit_rule() {
        let r = |value, err| {
            ratio(&Ratio {
                value,
                err,
                ci95: None,
            })
        };
        assert_eq!(r(5.0, 0.7072), "5.00 ± 0.71x");
        assert_eq!(r(12.34, 0.26), "12.3 ± 0.3x");
        assert_eq!(r(0.01432, 0.0002), "0.014 ± 0.000x");
        assert_eq!(r(0.5, 0.01), "0.50 ± 0.01x");
        assert_eq!(r(139.2, 4.1), "139 ± 4x");
        let with_ci = Ratio {
            value: 2.857,
            err: 0.02,
            ci95: Some([2.84, 2.881]),
        };
        assert_eq!(ratio(&with_ci), "2.86x [2.84–2.88]");
        assert_eq!(ratio_short(2.857), "2.86x");
        assert_eq!(ratio_short(28.1), "28.1x");
        assert_eq!(ratio_short(0.0143), "0.01x");
        assert_eq!(
            change(&Change {
                pct: -6.04,
                verdict: Verdict::Improved,
                ci_pct: None,
                ci_level: 0.95,
                basis: String::new(),
                differs: vec![],
                allocs: None,
            }),
            "-6.0% ▼"
        );
        let c = Change {
            pct: -6.04,
            verdict: Verdict::Improved,
            ci_pct: None,
            ci_level: 0.95,
            basis: String::new(),
            differs: vec!["rows 20000 vs 40000".into()],
            allocs: None,
        };
        assert_eq!(change(&c), "-6.0% ≠");
        assert_eq!(
            verdict(&c),
            "-6.0%, no verdict (rows 20000 vs 40000 differ)"
        );
    }
}
