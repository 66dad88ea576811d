//! key_value on a rusqlite connection: the store's statements (every one from the
//! connection's cache), and the replay through a crate where it runs a query.

use super::{OnConn, err};
use bench_core::BenchError;
use bench_core::workloads::key_value::plan::{self, Kv, NAMESPACE, NOW, TENANT};
use rusqlite::{Connection, OptionalExtension, params};

/// The store's operations: raw rusqlite calls them in place, the crates where they run
/// a query.
pub mod on_conn {
    use super::*;

    pub fn reset(c: &Connection) -> Result<(), BenchError> {
        for s in plan::CREATE {
            c.execute_batch(s).map_err(err)?;
        }
        Ok(())
    }
    fn exec(c: &Connection, sql: &str, p: impl rusqlite::Params) -> Result<u64, BenchError> {
        let mut stmt = c.prepare_cached(sql).map_err(err)?;
        Ok(stmt.execute(p).map_err(err)? as u64)
    }
    pub fn clear(c: &Connection) -> Result<(), BenchError> {
        exec(c, plan::CLEAR, []).map(|_| ())
    }
    pub fn begin(c: &Connection) -> Result<(), BenchError> {
        exec(c, "BEGIN", []).map(|_| ())
    }
    pub fn commit(c: &Connection) -> Result<(), BenchError> {
        exec(c, "COMMIT", []).map(|_| ())
    }
    pub fn put(
        c: &Connection,
        key: &str,
        value: &[u8],
        expires_at: Option<i64>,
    ) -> Result<u64, BenchError> {
        exec(
            c,
            plan::PUT,
            params![TENANT, NAMESPACE, key, value, expires_at, NOW, NOW],
        )
    }
    pub fn get(c: &Connection, key: &str) -> Result<Option<Vec<u8>>, BenchError> {
        let mut stmt = c.prepare_cached(plan::GET).map_err(err)?;
        stmt.query_row(params![TENANT, NAMESPACE, key, NOW], |r| r.get(0))
            .optional()
            .map_err(err)
    }
    pub fn exists(c: &Connection, key: &str) -> Result<bool, BenchError> {
        let mut stmt = c.prepare_cached(plan::EXISTS).map_err(err)?;
        stmt.exists(params![TENANT, NAMESPACE, key, NOW])
            .map_err(err)
    }
    pub fn delete(c: &Connection, key: &str) -> Result<u64, BenchError> {
        exec(c, plan::DELETE, params![TENANT, NAMESPACE, key])
    }
    pub fn scan(
        c: &Connection,
        from: &str,
        to: &str,
    ) -> Result<Vec<(String, Vec<u8>)>, BenchError> {
        let mut stmt = c.prepare_cached(plan::SCAN).map_err(err)?;
        let rows = stmt
            .query_map(params![TENANT, NAMESPACE, from, to, NOW], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .map_err(err)?;
        rows.collect::<Result<_, _>>().map_err(err)
    }
}

/// Raw rusqlite: every operation in place.
pub struct RusqliteKv(pub Connection);

impl Kv for RusqliteKv {
    async fn reset(&mut self) -> Result<(), BenchError> {
        on_conn::reset(&self.0)
    }
    async fn clear(&mut self) -> Result<(), BenchError> {
        on_conn::clear(&self.0)
    }
    async fn begin(&mut self) -> Result<(), BenchError> {
        on_conn::begin(&self.0)
    }
    async fn commit(&mut self) -> Result<(), BenchError> {
        on_conn::commit(&self.0)
    }
    async fn put(
        &mut self,
        key: &str,
        value: &[u8],
        expires_at: Option<i64>,
    ) -> Result<u64, BenchError> {
        on_conn::put(&self.0, key, value, expires_at)
    }
    async fn get(&mut self, key: &str) -> Result<Option<Vec<u8>>, BenchError> {
        on_conn::get(&self.0, key)
    }
    async fn exists(&mut self, key: &str) -> Result<bool, BenchError> {
        on_conn::exists(&self.0, key)
    }
    async fn delete(&mut self, key: &str) -> Result<u64, BenchError> {
        on_conn::delete(&self.0, key)
    }
    async fn scan(&mut self, from: &str, to: &str) -> Result<Vec<(String, Vec<u8>)>, BenchError> {
        on_conn::scan(&self.0, from, to)
    }
}

/// The store through a crate: each operation one hop to where the crate runs queries.
pub struct HopKv<H>(pub H);

impl<H: OnConn> Kv for HopKv<H> {
    async fn reset(&mut self) -> Result<(), BenchError> {
        self.0.on(on_conn::reset).await
    }
    async fn clear(&mut self) -> Result<(), BenchError> {
        self.0.on(on_conn::clear).await
    }
    async fn begin(&mut self) -> Result<(), BenchError> {
        self.0.on(on_conn::begin).await
    }
    async fn commit(&mut self) -> Result<(), BenchError> {
        self.0.on(on_conn::commit).await
    }
    async fn put(
        &mut self,
        key: &str,
        value: &[u8],
        expires_at: Option<i64>,
    ) -> Result<u64, BenchError> {
        let (key, value) = (key.to_string(), value.to_vec());
        self.0
            .on(move |c| on_conn::put(c, &key, &value, expires_at))
            .await
    }
    async fn get(&mut self, key: &str) -> Result<Option<Vec<u8>>, BenchError> {
        let key = key.to_string();
        self.0.on(move |c| on_conn::get(c, &key)).await
    }
    async fn exists(&mut self, key: &str) -> Result<bool, BenchError> {
        let key = key.to_string();
        self.0.on(move |c| on_conn::exists(c, &key)).await
    }
    async fn delete(&mut self, key: &str) -> Result<u64, BenchError> {
        let key = key.to_string();
        self.0.on(move |c| on_conn::delete(c, &key)).await
    }
    async fn scan(&mut self, from: &str, to: &str) -> Result<Vec<(String, Vec<u8>)>, BenchError> {
        let (from, to) = (from.to_string(), to.to_string());
        self.0.on(move |c| on_conn::scan(c, &from, &to)).await
    }
}
