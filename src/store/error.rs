//! What can go wrong with the results store, as a caller can match on it: each message word
//! for word what a user reads. A store is named as it is shown (`Target`'s Display: no
//! password, a path's control characters escaped).

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A setting that says whether to record (BENCHSCOPE_NO_STORE) does not read.
    #[error("{0}")]
    Setting(String),
    /// A SQLite store's path has a file where a folder must be.
    #[error(
        "the results store {store} cannot be made: {dir} is not a folder (from --store, BENCHSCOPE_STORE or BENCHSCOPE_DATA_DIR; allowed: a path whose folders are folders, or --no-store)"
    )]
    NotAFolder { store: String, dir: String },
    /// Nothing there to read.
    #[error("no results store at {0}: runs are recorded there as they finish (or give --store)")]
    Missing(String),
    /// The store could not be opened (made, migrated, reached): why, in its own words.
    #[error("results store {store}: {why}")]
    Open { store: String, why: String },
    #[error("cannot record run {key} in the results store: {why}")]
    Record { key: String, why: String },
    #[error("cannot read the results store: {0}")]
    Read(String),
    /// This machine's identity could not be had, so nothing was recorded.
    #[error("runs not recorded in the results store {store}: {why}")]
    NoMachine { store: String, why: String },
    /// Recording failed after the run's own outputs were written.
    #[error("{0}; the run's own outputs are kept")]
    OutputsKept(Box<StoreError>),
}

impl From<StoreError> for String {
    fn from(e: StoreError) -> String {
        e.to_string()
    }
}
