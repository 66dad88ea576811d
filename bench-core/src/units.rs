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

/// A set of CPUs as the kernel lists them (`0-3,6`): runs of consecutive numbers as ranges.
pub fn cpu_list(cpus: &[usize]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[j] + 1 {
            j += 1;
        }
        parts.push(if j == i {
            sorted[i].to_string()
        } else {
            format!("{}-{}", sorted[i], sorted[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

/// Where runners ran, in words: confined to a CPU list (as [`cpu_list`] writes it), or on
/// every CPU when `None`.
pub fn placement(cpus: Option<&str>) -> String {
    cpus.map(|c| format!("confined to CPU {c}"))
        .unwrap_or_else(|| "on every CPU".into())
}

#[cfg(test)]
mod tests {
    #[test]
    fn cpu_sets_read_as_the_kernel_writes_them() {
        assert_eq!(super::cpu_list(&[0]), "0");
        assert_eq!(super::cpu_list(&[3, 0, 1, 2, 6]), "0-3,6");
        assert_eq!(super::cpu_list(&[1, 3, 3]), "1,3");
    }
}
