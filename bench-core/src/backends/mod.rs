//! The subjects being measured.

#[cfg(feature = "sqlite")]
pub mod raw;

#[cfg(feature = "middleware")]
pub mod middleware;

#[cfg(feature = "turso")]
pub mod turso;

#[cfg(feature = "middleware")]
pub mod values;
