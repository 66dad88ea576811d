//! What goes wrong on the middleware path, and how it reads as a bench's error.

use super::value;
use super::workers::WorkerError;
use crate::error::BenchError;

#[derive(Debug, thiserror::Error)]
pub enum MiddlewareError {
    #[error("pool: {0}")]
    Pool(String),
    #[error("dispatch: {0}")]
    Dispatch(String),
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("decode: {0}")]
    Decode(#[from] value::DecodeError),
}

impl From<MiddlewareError> for BenchError {
    fn from(e: MiddlewareError) -> Self {
        match e {
            MiddlewareError::Sqlite(e) => BenchError::Sqlite(e),
            other => BenchError::Other(other.to_string()),
        }
    }
}

impl From<value::DecodeError> for BenchError {
    fn from(e: value::DecodeError) -> Self {
        BenchError::Other(format!("decode: {e}"))
    }
}

impl From<WorkerError> for MiddlewareError {
    fn from(e: WorkerError) -> Self {
        MiddlewareError::Dispatch(e.to_string())
    }
}
