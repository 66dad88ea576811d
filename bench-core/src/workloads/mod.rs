//! Workload implementations, one module per target of the catalog.

#[cfg(feature = "middleware")]
pub mod single_row_lookup;

#[cfg(feature = "middleware")]
pub mod multithread;

#[cfg(feature = "middleware")]
pub mod bulk_insert;
