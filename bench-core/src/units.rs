//! How durations read wherever bench-core writes one into text (warnings, reports): three
//! significant digits in a unit that fits. The benchscope front ends format with the same rule.

/// Decimals for a value shown with three significant digits (at least two below 1 for ratios).
pub fn decimals(v: f64) -> usize {
    let v = v.abs();
    if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else if v >= 1.0 || v == 0.0 {
        2
    } else {
        (1 - v.log10().floor() as i32).max(2) as usize
    }
}

/// Nanoseconds in a readable unit (ns, µs, ms, s) with three significant digits.
pub fn ns(ns: f64) -> String {
    let (v, unit) = if ns < 1e3 {
        (ns, "ns")
    } else if ns < 1e6 {
        (ns / 1e3, "µs")
    } else if ns < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    format!("{v:.*} {unit}", decimals(v).min(2))
}
