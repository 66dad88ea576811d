//! r2d2 + r2d2_sqlite: a blocking pool, reached with `spawn_blocking` (checkout and query in
//! one hop) or `block_in_place` (on the runtime thread).

use std::collections::BTreeMap;
use std::path::Path;

use crate::backends::raw;
use crate::dataset::BenchRow;
use crate::error::BenchError;
use crate::measure::drive::LookupPath;
use crate::measure::trace::PhaseTotals;
use crate::on_rusqlite::cached_lookup;
use crate::settings::SqliteSettings;

/// How the blocking pool is reached from async code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hop {
    /// `tokio::task::spawn_blocking`: checkout and query in one closure on a blocking thread.
    SpawnBlocking,
    /// `tokio::task::block_in_place`: on the runtime thread, which tokio hands off first.
    BlockInPlace,
}

pub type R2d2Pool = r2d2::Pool<r2d2_sqlite::SqliteConnectionManager>;
pub type R2d2Conn = r2d2::PooledConnection<r2d2_sqlite::SqliteConnectionManager>;

/// An r2d2 pool of `n` rusqlite connections (at least one), each opened with the run's
/// settings: the crate's pool, and the middleware path's `pool=r2d2`.
pub fn r2d2_pool(path: &Path, s: &SqliteSettings, n: usize) -> Result<R2d2Pool, r2d2::Error> {
    let init = s.clone();
    let manager = r2d2_sqlite::SqliteConnectionManager::file(path)
        .with_flags(raw::flags(s))
        .with_init(move |c| raw::configure(c, &init));
    r2d2::Pool::builder()
        .max_size(n.max(1) as u32)
        .build(manager)
}

/// An r2d2 pool of `n` rusqlite connections, each opened with the run's settings.
pub struct R2d2 {
    pool: R2d2Pool,
    hop: Hop,
}

impl R2d2 {
    pub fn open(path: &Path, s: &SqliteSettings, n: usize, hop: Hop) -> Result<Self, BenchError> {
        let pool = r2d2_pool(path, s, n).map_err(BenchError::driver)?;
        Ok(R2d2 { pool, hop })
    }

    pub fn read_back(&self) -> Result<BTreeMap<String, String>, BenchError> {
        let c = self.pool.get().map_err(BenchError::driver)?;
        Ok(raw::read_back(&c))
    }

    /// A connection taken from the pool (blocking) and held by the caller, with the hop.
    pub fn hold(&self) -> Result<(R2d2Conn, Hop), BenchError> {
        Ok((self.pool.get().map_err(BenchError::driver)?, self.hop))
    }

    /// A connection taken from the pool with the pool's hop, held by the caller until it
    /// drops it (a transaction's length, say).
    pub async fn checkout(&self) -> Result<R2d2Held, BenchError> {
        let pool = self.pool.clone();
        let get = move || pool.get().map_err(BenchError::driver);
        let conn = match self.hop {
            Hop::SpawnBlocking => tokio::task::spawn_blocking(get)
                .await
                .map_err(BenchError::joined)??,
            Hop::BlockInPlace => tokio::task::block_in_place(get)?,
        };
        Ok(R2d2Held {
            conn: Some(conn),
            hop: self.hop,
        })
    }

    /// Runs `f` on a pooled connection, reached with the pool's hop (checkout, `f`, return).
    pub async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut rusqlite::Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, BenchError> {
        let pool = self.pool.clone();
        let work = move || -> Result<T, BenchError> {
            let mut c = pool.get().map_err(BenchError::driver)?;
            Ok(f(&mut c)?)
        };
        match self.hop {
            Hop::SpawnBlocking => tokio::task::spawn_blocking(work)
                .await
                .map_err(BenchError::joined)?,
            Hop::BlockInPlace => tokio::task::block_in_place(work),
        }
    }

    /// A checkout and its return, reached with the pool's hop.
    pub async fn checkout_and_return(&self) -> Result<(), BenchError> {
        let pool = self.pool.clone();
        match self.hop {
            Hop::SpawnBlocking => tokio::task::spawn_blocking(move || pool.get().map(drop))
                .await
                .map_err(BenchError::joined)?
                .map_err(BenchError::driver),
            Hop::BlockInPlace => {
                tokio::task::block_in_place(|| pool.get().map(drop)).map_err(BenchError::driver)
            }
        }
    }
}

/// r2d2's connection, held for the bench (its pool holds one) and reached with the hop.
pub struct R2d2Held {
    pub conn: Option<r2d2::PooledConnection<r2d2_sqlite::SqliteConnectionManager>>,
    pub hop: Hop,
}

impl crate::on_rusqlite::OnConn for R2d2Held {
    async fn on<T: Send + 'static>(
        &mut self,
        f: impl FnOnce(&rusqlite::Connection) -> Result<T, BenchError> + Send + 'static,
    ) -> Result<T, BenchError> {
        match self.hop {
            Hop::SpawnBlocking => {
                let c = self.conn.take().ok_or_else(|| {
                    BenchError::Other("connection lost by an earlier failed hop".into())
                })?;
                let (c, out) = tokio::task::spawn_blocking(move || {
                    let out = f(&c);
                    (c, out)
                })
                .await
                .map_err(BenchError::other)?;
                self.conn = Some(c);
                out
            }
            Hop::BlockInPlace => {
                let c = self.conn.as_ref().ok_or_else(|| {
                    BenchError::Other("connection lost by an earlier failed hop".into())
                })?;
                tokio::task::block_in_place(|| f(c))
            }
        }
    }
}

/// A connection of the r2d2 pool; under `spawn_blocking` it is first taken inside the first
/// lookup's closure (one hop for checkout and query, as such code is written).
pub struct R2d2Lease {
    pool: R2d2Pool,
    conn: Option<R2d2Conn>,
}

impl LookupPath for R2d2 {
    type Conn = R2d2Lease;
    async fn checkout(&self) -> Result<Self::Conn, BenchError> {
        let pool = self.pool.clone();
        let conn = match self.hop {
            Hop::SpawnBlocking => None,
            Hop::BlockInPlace => {
                Some(tokio::task::block_in_place(|| pool.get()).map_err(BenchError::driver)?)
            }
        };
        Ok(R2d2Lease { pool, conn })
    }
    async fn lookup<const TRACE: bool>(
        &self,
        lease: &mut Self::Conn,
        id: i64,
        _phases: &mut PhaseTotals,
    ) -> Result<BenchRow, BenchError> {
        match self.hop {
            Hop::SpawnBlocking => {
                let pool = lease.pool.clone();
                let held = lease.conn.take();
                let (conn, row) = tokio::task::spawn_blocking(move || {
                    let conn = match held {
                        Some(c) => c,
                        None => pool.get().map_err(BenchError::driver)?,
                    };
                    let row = cached_lookup(&conn, id);
                    Ok::<_, BenchError>((conn, row))
                })
                .await
                .map_err(BenchError::joined)??;
                lease.conn = Some(conn);
                Ok(row?)
            }
            Hop::BlockInPlace => {
                let conn = lease.conn.as_ref().expect("checked out above");
                Ok(tokio::task::block_in_place(|| cached_lookup(conn, id))?)
            }
        }
    }
}
