//! The one error type of bench-core. Messages are what a user reads: they name the value, the
//! thing it was for and what is allowed, and they never carry a password.

use crate::knobs::KnobError;

/// A target, bench or strategy that the catalog does not have, or a bench of another runner.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CatalogError {
    #[error("unknown target {name:?} (known: {known})")]
    UnknownTarget { name: String, known: String },
    #[error("unknown bench {name:?} in target {target} (known: {known})")]
    UnknownBench {
        target: String,
        name: String,
        known: String,
    },
    #[error(
        "{flag} {pattern:?} selects nothing in target {target}: {why} (nearest: {near}; every name: `benchscope list {target}`)"
    )]
    NoMatch {
        /// The flag the pattern was given with (`--bench`, `--time-for`).
        flag: &'static str,
        target: String,
        pattern: String,
        why: String,
        near: String,
    },
    #[error("unknown strategy {name:?} (known: {known})")]
    UnknownStrategy { name: String, known: String },
    #[error("bench {bench:?} is run by the {harness} harness, not this one")]
    OtherHarness {
        bench: String,
        /// The harness's name (`Harness::name`).
        harness: &'static str,
    },
    #[error("bench {bench:?} has no implementation in {target} ({why})")]
    NoImplementation {
        target: String,
        bench: String,
        why: &'static str,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A bad argument, found before anything started.
    #[error(transparent)]
    Knob(#[from] KnobError),
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// A bad argument that is not a knob (budget flags, bench selection).
    #[error("{0}")]
    Invalid(String),
    /// The dataset could not be built, checked or opened.
    #[error("{0}")]
    Dataset(String),
    #[cfg(feature = "sqlite")]
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// An error of a driver without a variant here (turso, sqlx, PostgreSQL), as its text.
    #[error("{0}")]
    Driver(String),
    /// A bench did other work than the dataset and knobs imply.
    #[error("work check failed: {what}: expected {expected}, got {got}")]
    Work {
        what: String,
        expected: u64,
        got: u64,
    },
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// Anything else that stops a bench, as its text (a failed task, a lost worker).
    #[error("{0}")]
    Other(String),
}

impl BenchError {
    /// A blocking task that did not finish (it panicked or was cancelled).
    pub fn joined(e: tokio::task::JoinError) -> BenchError {
        BenchError::Other(format!("a blocking task failed: {e}"))
    }

    /// A driver error, by its text.
    pub fn driver(e: impl std::fmt::Display) -> BenchError {
        BenchError::Driver(e.to_string())
    }

    pub fn other(e: impl std::fmt::Display) -> BenchError {
        BenchError::Other(e.to_string())
    }
}

impl From<String> for BenchError {
    fn from(s: String) -> Self {
        BenchError::Other(s)
    }
}

impl From<&str> for BenchError {
    fn from(s: &str) -> Self {
        BenchError::Other(s.to_string())
    }
}

pub type Result<T, E = BenchError> = std::result::Result<T, E>;
