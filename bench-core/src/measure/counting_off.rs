//! The switch that turns allocation counting off in a runner, read by the counting allocator
//! ([`super::memory`]) and by SQLite's memory methods ([`super::sqlite_malloc`]) alike.

/// The environment variable that turns counting off in a runner (`off`), to measure what
/// counting itself costs.
pub const OFF_VAR: &str = crate::vars::COUNT_ALLOCS.name;

/// Whether [`OFF_VAR`] turns counting off (`off`, `0`, `no`, `false`), read by its one parser
/// ([`crate::vars::COUNT_ALLOCS`]; the front ends refuse any other value before a runner starts).
pub fn turned_off() -> bool {
    // The variable read as before (one allocation, which the counting tests count).
    std::env::var(OFF_VAR).is_ok_and(|v| (crate::vars::COUNT_ALLOCS.parse)(&v) == Ok(false))
}
