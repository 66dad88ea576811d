//! The subjects being measured.

#[cfg(feature = "sqlite")]
pub mod raw;

#[cfg(feature = "sqlite")]
pub mod c_api;

#[cfg(feature = "sqlite")]
pub mod wait_aside;

#[cfg(feature = "middleware")]
pub mod middleware;

#[cfg(feature = "turso")]
pub mod turso;

#[cfg(feature = "middleware")]
pub mod values;

#[cfg(feature = "crates")]
pub mod crates;
