//! How a task of the scenario reaches its database: the middleware's pooled connection under a
//! dispatch strategy, or a crate as it ships (tokio-rusqlite's connection thread, r2d2_sqlite's
//! pooled connection in `spawn_blocking` or `block_in_place`, sql-middleware's worker). Every
//! way holds one connection per task and runs the same rusqlite closures on it, so the writer,
//! the readers and the work check are the same for all.

use crate::backends::middleware::{Conn, Middleware};
use crate::error::BenchError;
use crate::on_rusqlite::contention::Reach;

impl Reach for Middleware {
    type Held = Conn;
    async fn hold(&self) -> Result<Conn, BenchError> {
        Ok(self.checkout().await?)
    }
    async fn run<T: Send + 'static>(
        &self,
        held: &mut Conn,
        f: impl FnOnce(&rusqlite::Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, BenchError> {
        Ok(self.call(held, move |c| f(c)).await??)
    }
    /// The read is the middleware's own statement: under `wait_aside` it runs in place.
    async fn read_recent(&self, held: &mut Conn) -> Result<u64, BenchError> {
        Ok(self
            .run_own(held, |c| crate::on_rusqlite::contention::read(c))
            .await??)
    }
    async fn read_back(&self) -> Result<std::collections::BTreeMap<String, String>, BenchError> {
        Ok(Middleware::read_back(self).await?)
    }
}

#[cfg(feature = "crates")]
mod crates {
    use super::*;
    use crate::backends::crates::{R2d2, R2d2Held, SqlMiddleware, TokioRusqlite};
    use crate::measure::drive::LookupPath;
    use crate::on_rusqlite::OnConn;

    type Settings = std::collections::BTreeMap<String, String>;

    impl Reach for TokioRusqlite {
        type Held = tokio_rusqlite::Connection;
        async fn hold(&self) -> Result<Self::Held, BenchError> {
            LookupPath::checkout(self).await
        }
        async fn run<T: Send + 'static>(
            &self,
            held: &mut Self::Held,
            f: impl FnOnce(&rusqlite::Connection) -> rusqlite::Result<T> + Send + 'static,
        ) -> Result<T, BenchError> {
            held.on(move |c| Ok(f(c)?)).await
        }
        async fn read_back(&self) -> Result<Settings, BenchError> {
            TokioRusqlite::read_back(self).await
        }
    }

    impl Reach for R2d2 {
        type Held = R2d2Held;
        async fn hold(&self) -> Result<Self::Held, BenchError> {
            R2d2::checkout(self).await
        }
        async fn run<T: Send + 'static>(
            &self,
            held: &mut Self::Held,
            f: impl FnOnce(&rusqlite::Connection) -> rusqlite::Result<T> + Send + 'static,
        ) -> Result<T, BenchError> {
            held.on(move |c| Ok(f(c)?)).await
        }
        async fn read_back(&self) -> Result<Settings, BenchError> {
            R2d2::read_back(self)
        }
    }

    impl Reach for SqlMiddleware {
        type Held = sql_middleware::MiddlewarePoolConnection;
        async fn hold(&self) -> Result<Self::Held, BenchError> {
            LookupPath::checkout(self).await
        }
        async fn run<T: Send + 'static>(
            &self,
            held: &mut Self::Held,
            f: impl FnOnce(&rusqlite::Connection) -> rusqlite::Result<T> + Send + 'static,
        ) -> Result<T, BenchError> {
            held.with_blocking_sqlite(move |raw| {
                f(raw).map_err(sql_middleware::SqlMiddlewareDbError::SqliteError)
            })
            .await
            .map_err(BenchError::driver)
        }
        async fn read_back(&self) -> Result<Settings, BenchError> {
            SqlMiddleware::read_back(self).await
        }
    }
}
