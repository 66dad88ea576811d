//! The bound on a short text a store row holds (a label, a commit, a machine's name).

/// The most characters of a `--label` or `--commit`.
pub const SHORT_TEXT: usize = 200;

/// A `--label`, `--commit` or `--machine`: at most [`SHORT_TEXT`] characters, none of them a control
/// character (what the store keeps is printed in every history).
pub(crate) fn short_text(s: &str) -> Result<String, String> {
    let n = s.chars().count();
    if n > SHORT_TEXT {
        return Err(format!(
            "{n} characters (allowed: 1 to {SHORT_TEXT}, no control characters)"
        ));
    }
    if s.trim().is_empty() || s.chars().any(bench_core::text::hidden) {
        return Err(format!(
            "{} (allowed: 1 to {SHORT_TEXT} characters, no control characters)",
            bench_core::text::Text::new(s).terminal()
        ));
    }
    Ok(s.to_string())
}
