//! Exporters: pure functions from results to text. Each format in its own file.

pub mod json;
pub mod markdown;
pub mod table;

use bench_core::results::RunRecord;

/// What every exporter is given: the runs to show, side by side, and the baseline bench.
pub struct Report<'a> {
    pub runs: &'a [RunRecord],
    pub baseline: &'a str,
    /// When the report was made (RFC 3339), passed in so exports stay pure.
    pub generated_at: &'a str,
}

/// Nanoseconds per op in a readable unit (ns, µs, ms, s) with three significant digits.
pub fn fmt_ns(ns: f64) -> String {
    let (v, unit) = if ns < 1e3 {
        (ns, "ns")
    } else if ns < 1e6 {
        (ns / 1e3, "µs")
    } else if ns < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    let digits = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$} {unit}")
}

/// The CI of a median, as `lo–hi` in the unit of the low end.
pub fn fmt_ci(ci: [f64; 2]) -> String {
    format!("{} – {}", fmt_ns(ci[0]), fmt_ns(ci[1]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(fmt_ns(17.46), "17.5 ns");
        assert_eq!(fmt_ns(1598.2), "1.60 µs");
        assert_eq!(fmt_ns(65780.4), "65.8 µs");
        assert_eq!(fmt_ns(123_456_789.0), "123 ms");
        assert_eq!(fmt_ns(2.5e9), "2.50 s");
    }
}
