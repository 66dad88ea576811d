//! crud_overhead on a rusqlite connection: its operations (every statement from the
//! connection's cache), and the replay through a crate that runs them where it runs a query.

use std::sync::Arc;

use super::OnConn;
use bench_core::BenchError;
use bench_core::workloads::crud_overhead::plan::{Answer, Crud, Row, Sql};

fn row_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    Ok(Row {
        id: r.get(0)?,
        text: r.get(1)?,
        int: r.get(2)?,
        real: r.get(3)?,
        flag: r.get(4)?,
    })
}

/// A count query's answer: its last column (after an AVG, say), every column read.
fn count_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<i64> {
    let n = r.as_ref().column_count();
    for i in 0..n - 1 {
        let _: Option<f64> = r.get(i)?;
    }
    r.get(n - 1)
}

/// The workload's operations: raw rusqlite calls them in place, the crates where they run
/// a query.
pub mod on_conn {
    use super::*;
    use crate::on_rusqlite::err;
    use rusqlite::types::ToSql;

    fn exec(c: &rusqlite::Connection, sql: &str, params: &[&dyn ToSql]) -> Result<u64, BenchError> {
        let mut stmt = c.prepare_cached(sql).map_err(err)?;
        Ok(stmt.execute(params).map_err(err)? as u64)
    }
    pub fn drop_table(c: &rusqlite::Connection, sql: &Sql) -> Result<(), BenchError> {
        c.execute_batch(&sql.drop).map_err(err)
    }
    pub fn create_table(c: &rusqlite::Connection, sql: &Sql) -> Result<(), BenchError> {
        c.execute_batch(&sql.create).map_err(err)
    }
    pub fn begin(c: &rusqlite::Connection) -> Result<(), BenchError> {
        exec(c, "BEGIN", &[]).map(|_| ())
    }
    pub fn commit(c: &rusqlite::Connection) -> Result<(), BenchError> {
        exec(c, "COMMIT", &[]).map(|_| ())
    }
    pub fn insert(c: &rusqlite::Connection, sql: &Sql, r: &Row) -> Result<u64, BenchError> {
        exec(c, &sql.insert, &[&r.id, &r.text, &r.int, &r.real, &r.flag])
    }
    pub fn update(
        c: &rusqlite::Connection,
        sql: &Sql,
        id: i64,
        text: &str,
    ) -> Result<u64, BenchError> {
        exec(c, &sql.update, &[&text, &id])
    }
    pub fn delete(c: &rusqlite::Connection, sql: &Sql, id: i64) -> Result<u64, BenchError> {
        exec(c, &sql.delete, &[&id])
    }
    pub fn select(c: &rusqlite::Connection, sql: &Sql, above: i64) -> Result<Vec<Row>, BenchError> {
        let mut stmt = c.prepare_cached(&sql.select).map_err(err)?;
        let rows = stmt.query_map([above], row_of).map_err(err)?;
        rows.collect::<Result<_, _>>().map_err(err)
    }
    /// Fixed query `q`, from the connection's statement cache or (`fresh`) prepared anew.
    pub fn cached(
        c: &rusqlite::Connection,
        sql: &Sql,
        q: usize,
        fresh: bool,
    ) -> Result<Answer, BenchError> {
        let (text, count) = &sql.cached[q];
        let answer = |stmt: &mut rusqlite::Statement<'_>| -> rusqlite::Result<Answer> {
            Ok(if *count {
                Answer::Count(stmt.query_row([], count_of)?)
            } else {
                Answer::Rows(stmt.query_map([], row_of)?.collect::<Result<_, _>>()?)
            })
        };
        if fresh {
            answer(&mut c.prepare(text).map_err(err)?).map_err(err)
        } else {
            answer(&mut *c.prepare_cached(text).map_err(err)?).map_err(err)
        }
    }
    pub fn insert_values(
        c: &rusqlite::Connection,
        sql: &Sql,
        rows: &[Row],
    ) -> Result<u64, BenchError> {
        let mut stmt = c.prepare_cached(sql.batch(rows.len())).map_err(err)?;
        let mut i = 1;
        for r in rows {
            stmt.raw_bind_parameter(i, r.id).map_err(err)?;
            stmt.raw_bind_parameter(i + 1, &r.text).map_err(err)?;
            stmt.raw_bind_parameter(i + 2, r.int).map_err(err)?;
            stmt.raw_bind_parameter(i + 3, r.real).map_err(err)?;
            stmt.raw_bind_parameter(i + 4, r.flag).map_err(err)?;
            i += 5;
        }
        Ok(stmt.raw_execute().map_err(err)? as u64)
    }
}

/// The workload through a crate: each operation one hop to where the crate runs queries.
pub struct HopCrud<H> {
    pub on: H,
    pub sql: Arc<Sql>,
}

impl<H: OnConn> Crud for HopCrud<H> {
    async fn drop_table(&mut self, _: &Sql) -> Result<(), BenchError> {
        let sql = self.sql.clone();
        self.on.on(move |c| on_conn::drop_table(c, &sql)).await
    }
    async fn create_table(&mut self, _: &Sql) -> Result<(), BenchError> {
        let sql = self.sql.clone();
        self.on.on(move |c| on_conn::create_table(c, &sql)).await
    }
    async fn begin(&mut self) -> Result<(), BenchError> {
        self.on.on(on_conn::begin).await
    }
    async fn commit(&mut self) -> Result<(), BenchError> {
        self.on.on(on_conn::commit).await
    }
    async fn insert(&mut self, _: &Sql, r: &Row) -> Result<u64, BenchError> {
        let (sql, r) = (self.sql.clone(), r.clone());
        self.on.on(move |c| on_conn::insert(c, &sql, &r)).await
    }
    async fn update(&mut self, _: &Sql, id: i64, text: &str) -> Result<u64, BenchError> {
        let (sql, text) = (self.sql.clone(), text.to_string());
        self.on
            .on(move |c| on_conn::update(c, &sql, id, &text))
            .await
    }
    async fn delete(&mut self, _: &Sql, id: i64) -> Result<u64, BenchError> {
        let sql = self.sql.clone();
        self.on.on(move |c| on_conn::delete(c, &sql, id)).await
    }
    async fn select(&mut self, _: &Sql, above: i64) -> Result<Vec<Row>, BenchError> {
        let sql = self.sql.clone();
        self.on.on(move |c| on_conn::select(c, &sql, above)).await
    }
    async fn cached(&mut self, _: &Sql, q: usize, fresh: bool) -> Result<Answer, BenchError> {
        let sql = self.sql.clone();
        self.on
            .on(move |c| on_conn::cached(c, &sql, q, fresh))
            .await
    }
    async fn insert_values(&mut self, _: &Sql, rows: &[Row]) -> Result<u64, BenchError> {
        let (sql, rows) = (self.sql.clone(), rows.to_vec());
        self.on
            .on(move |c| on_conn::insert_values(c, &sql, &rows))
            .await
    }
}
