//! How durations and sizes read wherever bench-core writes one into text (warnings, reports): three
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

/// A size in bytes with binary units and three significant digits (`64 B`, `1.88 KiB`,
/// `12.0 MiB`); negative sizes (memory returned) keep their sign.
pub fn bytes(v: f64) -> String {
    let sign = if v < 0.0 { "-" } else { "" };
    let a = v.abs();
    let (v, unit) = if a >= (1u64 << 30) as f64 {
        (a / (1u64 << 30) as f64, "GiB")
    } else if a >= (1u64 << 20) as f64 {
        (a / (1u64 << 20) as f64, "MiB")
    } else if a >= 1024.0 {
        (a / 1024.0, "KiB")
    } else {
        return format!("{sign}{a:.*} B", decimals(a).min(6));
    };
    format!("{sign}{v:.*} {unit}", decimals(v).min(2))
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
    fn sizes_read_in_binary_units_with_three_digits() {
        use super::bytes;
        assert_eq!(bytes(0.0), "0.00 B");
        assert_eq!(bytes(11.6), "11.6 B");
        assert_eq!(bytes(64.0), "64.0 B");
        assert_eq!(bytes(1023.0), "1023 B");
        assert_eq!(bytes(1024.0), "1.00 KiB");
        assert_eq!(bytes(1925.0), "1.88 KiB");
        assert_eq!(bytes(-18304.0), "-17.9 KiB");
        assert_eq!(bytes((3u64 << 20) as f64), "3.00 MiB");
        assert_eq!(bytes((1u64 << 20) as f64 - 1.0), "1024 KiB");
        assert_eq!(bytes((5u64 << 30) as f64), "5.00 GiB");
    }

    #[test]
    fn cpu_sets_read_as_the_kernel_writes_them() {
        assert_eq!(super::cpu_list(&[0]), "0");
        assert_eq!(super::cpu_list(&[3, 0, 1, 2, 6]), "0-3,6");
        assert_eq!(super::cpu_list(&[1, 3, 3]), "1,3");
    }
}
