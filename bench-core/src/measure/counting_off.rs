//! The switch that turns allocation counting off in a runner, read by the counting allocator
//! ([`super::memory`]) and by SQLite's memory methods ([`super::sqlite_malloc`]) alike.

/// The environment variable that turns counting off in a runner (`off`), to measure what
/// counting itself costs.
pub const OFF_VAR: &str = "BENCHSCOPE_COUNT_ALLOCS";

/// Whether [`OFF_VAR`] turns counting off (`off` or `0`).
pub fn turned_off() -> bool {
    std::env::var(OFF_VAR).is_ok_and(|v| v.eq_ignore_ascii_case("off") || v == "0")
}
