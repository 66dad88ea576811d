//! Small pieces every panel uses: a run's knobs in short, the rows of a scrolled list.

/// A run's knobs, short: the target's own knobs, and SQLite's settings only where they differ
/// from their defaults (the exports list every knob).
pub fn short_knobs(
    target: &bench_core::catalog::Target,
    knobs: &bench_core::knobs::Knobs,
) -> String {
    let settings: Vec<&str> = bench_core::settings::KNOBS.iter().map(|k| k.name).collect();
    knobs
        .0
        .iter()
        .filter(|(name, value)| {
            !settings.contains(&name.as_str())
                || target
                    .knobs
                    .iter()
                    .find(|k| k.name == name.as_str())
                    .is_none_or(|k| k.default_value() != **value)
        })
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Rows of a scrolled list: the window of `len` rows of `height` that keeps `cursor` visible.
pub fn window(len: usize, height: usize, cursor: usize) -> std::ops::Range<usize> {
    if len <= height {
        return 0..len;
    }
    let start = cursor
        .saturating_sub(height.saturating_sub(1) / 2)
        .min(len - height);
    start..start + height
}
