//! The crates people choose between, used the way their READMEs show, each opening its
//! connections with the run's SQLite settings and reading them back:
//!
//! - tokio-rusqlite: a background thread per connection, `Connection::call`;
//! - r2d2 + r2d2_sqlite: a blocking pool, reached with `spawn_blocking` (checkout and query in
//!   one hop) or `block_in_place` (on the runtime thread);
//! - diesel (sqlite, its r2d2 pool): the query DSL (whose statements diesel caches) under
//!   `spawn_blocking`;
//! - sql-middleware: its SQLite pool (bb8 over a worker thread per connection) and its query
//!   builder with the statement cache on, as shipped.
//!
//! Only public API. A phase a crate does not let one separate is not measured apart.

mod diesel_orm;
mod r2d2_pool;
mod sql_mw;
mod sql_mw_pg;
mod tokio_rs;

pub use crate::on_sql_middleware::MiddlewareConn;
pub use diesel_orm::crud::DieselCrud;
pub use diesel_orm::kv::DieselKv;
pub use diesel_orm::{
    Diesel, DieselLease, diesel_batch, diesel_batch_all, diesel_bulk_count, diesel_insert_all,
};
pub use r2d2_pool::{Hop, R2d2, R2d2Conn, R2d2Held, R2d2Lease, R2d2Pool, r2d2_pool};
pub use sql_mw::{
    SQL_MIDDLEWARE_POOL, SqlMiddleware, SqlMiddlewareHeld, marshal, marshal_params,
    middleware_param,
};
pub use sql_mw_pg::{SqlMiddlewarePg, SqlMiddlewarePgHeld};
pub use tokio_rs::TokioRusqlite;

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::BenchError;
use crate::measure::drive::LookupPath;
use crate::settings::SqliteSettings;

// ---------------------------------------------------------------------------------------------
// Opening a crate's path by its catalog identity, for every workload.

/// What a workload does with a crate's lookup path once it is open: called with the concrete
/// path type (each crate's is its own), so the workload's loops stay generic over
/// [`LookupPath`].
pub trait PathUser {
    type Out;
    fn with<P: LookupPath>(
        self,
        path: std::sync::Arc<P>,
        settings: BTreeMap<String, String>,
    ) -> Self::Out;
}

/// Opens `krate`'s lookup path on `path` with `n` connections (the crate's own pool size
/// where it has no knob), reads its settings back, and hands both to `user`.
pub fn open_path<U: PathUser>(
    krate: crate::catalog::Shipped,
    path: &Path,
    s: &SqliteSettings,
    n: usize,
    rt: &tokio::runtime::Runtime,
    user: U,
) -> Result<U::Out, BenchError> {
    use std::sync::Arc;
    let Some((pool, settings)) = Pooled::open(krate, path, s, n, rt)? else {
        // The one crate without a pool.
        let p = rt.block_on(TokioRusqlite::open(path, s, n))?;
        let settings = rt.block_on(p.read_back())?;
        return Ok(user.with(Arc::new(p), settings));
    };
    Ok(match pool {
        Pooled::R2d2(p) => user.with(Arc::new(p), settings),
        Pooled::Diesel(p) => user.with(Arc::new(p), settings),
        Pooled::SqlMiddleware(p) => user.with(Arc::new(p), settings),
    })
}

/// The error for a crate another harness links (its libsqlite3-sys is not this build's), or
/// one on PostgreSQL where a SQLite bench was asked for.
pub fn elsewhere(krate: crate::catalog::Shipped) -> BenchError {
    if krate == crate::catalog::Shipped::SqlMiddlewarePostgres {
        return BenchError::Other(format!("{} runs on PostgreSQL, not SQLite", krate.name()));
    }
    BenchError::Other(format!(
        "{} is measured by the {} harness, not bench-core",
        krate.name(),
        krate.harness().name()
    ))
}

/// How r2d2 is reached for `krate` (its two benches differ by that alone).
pub fn hop(krate: crate::catalog::Shipped) -> Hop {
    if krate == crate::catalog::Shipped::R2d2SpawnBlocking {
        Hop::SpawnBlocking
    } else {
        Hop::BlockInPlace
    }
}

/// The settings a connection reads back, by name.
pub type ReadBack = BTreeMap<String, String>;

/// A crate's pool, for its checkout and return alone.
pub enum Pooled {
    R2d2(R2d2),
    Diesel(Diesel),
    SqlMiddleware(SqlMiddleware),
}

impl Pooled {
    /// The pool of `krate`, or `None` for a crate without one (tokio-rusqlite).
    pub fn open(
        krate: crate::catalog::Shipped,
        path: &Path,
        s: &SqliteSettings,
        n: usize,
        rt: &tokio::runtime::Runtime,
    ) -> Result<Option<(Pooled, ReadBack)>, BenchError> {
        use crate::catalog::Shipped;
        Ok(Some(match krate {
            Shipped::TokioRusqlite => return Ok(None),
            Shipped::AsyncSqlite | Shipped::SqlMiddlewareTurso | Shipped::SqlMiddlewarePostgres => {
                return Err(elsewhere(krate));
            }
            Shipped::R2d2SpawnBlocking | Shipped::R2d2BlockInPlace => {
                let p = R2d2::open(path, s, n, hop(krate))?;
                let settings = p.read_back()?;
                (Pooled::R2d2(p), settings)
            }
            Shipped::Diesel => {
                let p = Diesel::open(path, s, n)?;
                let settings = p.read_back()?;
                (Pooled::Diesel(p), settings)
            }
            Shipped::SqlMiddleware => {
                let p = rt.block_on(SqlMiddleware::open(path, s))?;
                let settings = rt.block_on(p.read_back())?;
                (Pooled::SqlMiddleware(p), settings)
            }
        }))
    }

    /// One checkout and its return, the crate's way.
    pub async fn checkout_and_return(&self) -> Result<(), BenchError> {
        match self {
            Pooled::R2d2(p) => p.checkout_and_return().await,
            Pooled::Diesel(p) => p.checkout_and_return().await,
            Pooled::SqlMiddleware(p) => p.checkout_and_return().await,
        }
    }
}
