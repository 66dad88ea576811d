//! How figures read, everywhere: durations, rates, ratios, changes and text fitted to a width.
//! One digit rule: three significant digits (fewer decimals as a value grows), so a column of
//! figures lines up and nothing claims more precision than it has.

pub use crate::units::{bytes, decimals, ns};

/// A count per operation or a factor with three significant digits (`0.0012`, `2.00`, `31.4`).
pub fn count(v: f64) -> String {
    format!("{v:.*}", decimals(v).min(6))
}

/// Context switches per operation: `0`, `<0.001` (none worth counting), else three digits.
pub fn switches(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v < 0.001 {
        "<0.001".into()
    } else {
        count(v)
    }
}

/// The cost columns of a bench: CPU per operation, CPU over wall time (2.00 is two cores busy),
/// context switches per operation; `-` where the run did not record them.
pub fn cost_cells(c: Option<&crate::measure::cost::CostSummary>) -> [String; 3] {
    match c {
        Some(c) => [
            ns(c.cpu_ns_per_op),
            count(c.cpu_per_wall),
            switches(c.switches_per_op()),
        ],
        None => ["-".into(), "-".into(), "-".into()],
    }
}

/// What a bench costs besides wall time, in one line for the explorer's detail.
pub fn cost_line(c: &crate::measure::cost::CostSummary) -> String {
    format!(
        "cost: CPU {}/op, {} cores busy, kernel {:.0}%, {} switches/op",
        ns(c.cpu_ns_per_op),
        count(c.cpu_per_wall),
        c.sys_share * 100.0,
        switches(c.switches_per_op()),
    )
}

/// The headers of [`cost_cells`].
pub const COST_HEADERS: [&str; 3] = ["CPU/op", "CPU/wall", "switches/op"];

/// The memory columns of a bench: allocations per operation, bytes handed out per operation,
/// the peak above a sample's start; `-` where the run did not count them.
pub fn memory_cells(m: Option<&crate::measure::memory::MemorySummary>) -> [String; 3] {
    match m {
        Some(m) => [
            count(m.allocs_per_op),
            bytes(m.bytes_per_op),
            bytes(m.peak_bytes as f64),
        ],
        None => ["-".into(), "-".into(), "-".into()],
    }
}

/// The headers of [`memory_cells`].
pub const MEMORY_HEADERS: [&str; 3] = ["allocs/op", "bytes/op", "peak"];

/// Allocations per operation against the baseline's: the ratio (`14.0x`) where the baseline
/// allocates, the difference (`+2.00`) where it does not, `same` where they are equal.
pub fn memory_vs(v: &crate::compare::MemoryVsBase) -> String {
    if v.allocs_more == 0.0 {
        "same".into()
    } else if let Some(r) = v.allocs_ratio {
        format!("{}x", count(r))
    } else {
        format!("+{}", count(v.allocs_more))
    }
}

/// What a bench allocates, in one line for the explorer's detail.
pub fn memory_line(m: &crate::measure::memory::MemorySummary) -> String {
    format!(
        "memory: {} allocs/op ({} reallocs), {}/op; peak {} above a sample's start; {} kept over {} samples",
        count(m.allocs_per_op),
        count(m.reallocs_per_op),
        bytes(m.bytes_per_op),
        bytes(m.peak_bytes as f64),
        bytes(m.retained_bytes as f64),
        m.samples,
    )
}

/// Operations per second, short (`1.23M/s`, `456k/s`, `78.0/s`).
pub fn ops(ops: f64) -> String {
    let (v, unit) = if ops >= 1e6 {
        (ops / 1e6, "M")
    } else if ops >= 1e3 {
        (ops / 1e3, "k")
    } else {
        (ops, "")
    };
    format!("{v:.*}{unit}/s", decimals(v).min(2))
}

/// An interval of durations, `lo – hi`.
pub fn ci(ci: [f64; 2]) -> String {
    format!("{} – {}", ns(ci[0]), ns(ci[1]))
}

/// A ratio with its 95% interval, `2.86x [2.84–2.88]`, all with the value's decimals; a ratio
/// from a report without the interval reads `5.00 ± 0.71x`.
pub fn ratio(r: &crate::compare::Ratio) -> String {
    let d = decimals(r.value);
    match r.ci95 {
        Some([lo, hi]) => format!("{:.d$}x [{lo:.d$}–{hi:.d$}]", r.value),
        None => format!("{:.d$} ± {:.d$}x", r.value, r.err),
    }
}

/// A ratio as an overhead in percent with its interval, `+186% [+181–+214]`.
pub fn overhead_pct(r: &crate::compare::Ratio) -> String {
    let pct = |x: f64| (x - 1.0) * 100.0;
    let d = |x: f64| if pct(x).abs() >= 100.0 { 0 } else { 1 };
    match r.ci95 {
        Some([lo, hi]) => format!(
            "{:+.*}% [{:+.*}–{:+.*}]",
            d(r.value),
            pct(r.value),
            d(lo),
            pct(lo),
            d(hi),
            pct(hi)
        ),
        None => format!(
            "{:+.*}% ± {:.*}",
            d(r.value),
            pct(r.value),
            d(r.err + 1.0),
            r.err * 100.0
        ),
    }
}

/// A ratio alone, `2.86x`.
pub fn ratio_short(value: f64) -> String {
    format!("{value:.*}x", decimals(value).min(2))
}

/// The first `n` characters of `s` (a commit's short form): cut between characters, never
/// inside one, whatever text a store or a flag brings.
pub fn prefix(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// `s` padded with spaces to `width` characters, on the right (`left` aligned) or the left. The
/// formatter's own `{:<w$}` takes a width below 65536 and panics past it: a name read from data
/// may be longer.
pub fn pad(s: &str, width: usize, left: bool) -> String {
    let fill = " ".repeat(width.saturating_sub(s.chars().count()));
    if left {
        format!("{s}{fill}")
    } else {
        format!("{fill}{s}")
    }
}

/// The first `width` characters of `s`, with an ellipsis if cut.
pub fn fit(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        s.to_string()
    } else if width == 0 {
        String::new()
    } else {
        format!("{}…", s.chars().take(width - 1).collect::<String>())
    }
}

/// A bench name fitted to `width` keeping what tells it apart: when it must be cut, the part
/// after its last `/` (the strategy or backend) stays whole and the start is shortened
/// (`middleware_parallel_select/interact` → `middleware_par…/interact`).
pub fn fit_name(name: &str, width: usize) -> String {
    if name.chars().count() <= width {
        return name.to_string();
    }
    match name.rsplit_once('/') {
        Some((head, tail)) if tail.chars().count() + 3 <= width => {
            let keep = width - tail.chars().count() - 2;
            format!("{}…/{tail}", head.chars().take(keep).collect::<String>())
        }
        _ => fit(name, width),
    }
}

/// Now, as RFC 3339 in UTC to the second.
pub fn now_rfc3339() -> String {
    let now = time::OffsetDateTime::now_utc();
    now.replace_nanosecond(0)
        .unwrap_or(now)
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| "unknown time".into())
}

/// A catalog text (a target's, a bench's or a knob's description, written with markdown code
/// spans for the docs and the exports) as a terminal shows it: without the backticks.
pub fn plain(s: &str) -> String {
    s.replace('`', "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(ns(17.46), "17.5 ns");
        assert_eq!(ns(1598.2), "1.60 µs");
        assert_eq!(ns(65780.4), "65.8 µs");
        assert_eq!(ns(123_456_789.0), "123 ms");
        assert_eq!(ns(2.5e9), "2.50 s");
        assert_eq!(ns(0.5), "0.50 ns");
        assert_eq!(ops(1_234_567.0), "1.23M/s");
        assert_eq!(ops(456_000.0), "456k/s");
        assert_eq!(ops(78.0), "78.0/s");
    }

    #[test]
    fn names_keep_what_tells_them_apart() {
        assert_eq!(
            fit_name("middleware_parallel_select/interact", 26),
            "middleware_paral…/interact"
        );
        assert_eq!(
            fit_name("middleware_parallel_select/spawn_blocking", 26),
            "middleware…/spawn_blocking"
        );
        assert_eq!(fit_name("rusqlite", 26), "rusqlite");
        assert_eq!(fit_name("x/a_very_long_strategy_name", 10), "x/a_very_…");
    }

    #[test]
    fn fit_cuts_with_an_ellipsis() {
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("abc", 4), "abc");
        assert_eq!(fit("abc", 0), "");
    }
}
