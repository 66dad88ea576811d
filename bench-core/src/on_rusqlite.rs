//! What benchscope does on a rusqlite connection, whichever rusqlite links it: the open flags
//! and pragmas of a run's SQLite settings and what a connection reads back, the shared dataset
//! built and checked, the lookup row decoded, the bulk_insert rows written.
//!
//! One source, compiled twice: into bench-core against its rusqlite (0.40, the line deadpool,
//! tokio-rusqlite, r2d2_sqlite and diesel share), and into harness-async-sqlite against
//! async-sqlite's (0.41, another libsqlite3-sys: one dependency graph cannot hold both), by
//! `#[path]`. So it names bench-core's items as `bench_core::` (bench-core calls itself that
//! too) and rusqlite's as `rusqlite::`, and turns rusqlite's errors into [`BenchError`] by hand.

use std::collections::BTreeMap;
use std::path::Path;

use bench_core::BenchError;
use bench_core::dataset::{
    BenchRow, CONTENT_SELECT, CREATE_TABLE, Content, DatasetKey, DatasetReady, INSERT_ROW,
    META_INSERT, META_SELECT, META_TABLE, RANGE_SELECT, SELECT_BY_ID, check, ensure_with, meta,
};
use bench_core::settings::{self, SqliteSettings};
use bench_core::workloads::bulk_insert::rows::{
    BulkRow, CHECKPOINT, DROP, SQLITE_CREATE, SQLITE_INSERT,
};
use rusqlite::{Connection, OpenFlags, params};

fn err(e: rusqlite::Error) -> BenchError {
    BenchError::driver(e)
}

/// The open flags of every rusqlite connection: read-write (read-only where the settings
/// say), URIs, and the run's mutex choice.
pub fn flags(s: &SqliteSettings) -> OpenFlags {
    let mutex = if s.no_mutex {
        OpenFlags::SQLITE_OPEN_NO_MUTEX
    } else {
        OpenFlags::SQLITE_OPEN_FULL_MUTEX
    };
    let access = if s.read_only {
        OpenFlags::SQLITE_OPEN_READ_ONLY
    } else {
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE
    };
    access | OpenFlags::SQLITE_OPEN_URI | mutex
}

/// Applies the run's pragmas to a connection (one opened by a pool, say).
pub fn apply(conn: &Connection, s: &SqliteSettings) -> rusqlite::Result<()> {
    for (name, value) in s.pragmas() {
        conn.pragma_update(None, name, value)?;
    }
    Ok(())
}

/// Prepares a connection the way every rusqlite bench does once it is open: the run's pragmas,
/// and room for the benches' cached statements.
pub fn configure(conn: &Connection, s: &SqliteSettings) -> rusqlite::Result<()> {
    apply(conn, s)?;
    conn.set_prepared_statement_cache_capacity(32);
    Ok(())
}

/// The settings a connection actually runs with, read back from it.
pub fn read_back(conn: &Connection) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for name in settings::NAMES.iter().filter(|n| **n != "mutex") {
        let value = conn
            .query_row(&format!("PRAGMA {name}"), [], |r| {
                Ok(match r.get_ref(0)? {
                    rusqlite::types::ValueRef::Integer(i) => i.to_string(),
                    rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                    other => format!("{other:?}"),
                })
            })
            .unwrap_or_else(|e| match e {
                // memdb, say, has no memory map: the pragma answers nothing.
                rusqlite::Error::QueryReturnedNoRows => settings::UNSUPPORTED.to_string(),
                e => format!("error: {e}"),
            });
        out.insert(name.to_string(), settings::normalize(name, &value));
    }
    // SAFETY: the handle is valid for as long as `conn` lives, and sqlite3_db_mutex only reads
    // the connection's mutex pointer.
    let no_mutex = unsafe { rusqlite::ffi::sqlite3_db_mutex(conn.handle()).is_null() };
    out.insert("mutex".into(), settings::mutex_name(no_mutex).into());
    out
}

/// A `SELECT id, name, score, active` row into `BenchRow`, by position.
#[inline]
pub fn bench_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<BenchRow> {
    Ok(BenchRow {
        id: r.get(0)?,
        name: r.get(1)?,
        score: r.get(2)?,
        active: r.get(3)?,
    })
}

/// One lookup as code on a rusqlite connection writes it: the statement from the
/// connection's cache, `query_row`, decode.
#[inline]
pub fn cached_lookup(c: &Connection, id: i64) -> rusqlite::Result<BenchRow> {
    let mut stmt = c.prepare_cached(SELECT_BY_ID)?;
    stmt.query_row([id], bench_row)
}

/// Checks that a cached dataset file holds exactly the dataset `key` describes.
pub fn validate(path: &Path, key: &DatasetKey) -> Result<(), BenchError> {
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(err)?;
    let (min, max): (Option<i64>, Option<i64>) = conn
        .query_row(RANGE_SELECT, [], |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(err)?;
    let (count, content): (i64, Content) = conn
        .query_row(CONTENT_SELECT, [], |r| {
            Ok((r.get(0)?, (r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
        })
        .map_err(err)?;
    let counts = (count, min, max);
    let journal: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .map_err(err)?;
    check(
        key,
        &mut |k| conn.query_row(META_SELECT, [k], |r| r.get(0)).map_err(err),
        counts,
        content,
        &journal,
        &mut |id| conn.query_row(SELECT_BY_ID, [id], bench_row).map_err(err),
    )
}

/// Every row of a dataset file, in id order (to check what a harness wrote).
pub fn read_rows(path: &Path) -> rusqlite::Result<Vec<BenchRow>> {
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let mut stmt = conn.prepare("SELECT id, name, score, active FROM test ORDER BY id")?;
    stmt.query_map([], bench_row)?.collect()
}

/// Writes the dataset into `path` (which must not exist), in one transaction.
pub fn write(path: &Path, key: &DatasetKey) -> rusqlite::Result<()> {
    let mut conn = Connection::open(path)?;
    conn.pragma_update(None, "journal_mode", key.journal())?;
    conn.pragma_update(None, "synchronous", "OFF")?;
    let tx = conn.transaction()?;
    tx.execute_batch(&format!("{CREATE_TABLE}; {META_TABLE};"))?;
    {
        let mut insert = tx.prepare(INSERT_ROW)?;
        let mut name = String::new();
        for id in 1..=key.rows as i64 {
            use std::fmt::Write;
            name.clear();
            let _ = write!(name, "name-{id}");
            insert.execute(params![id, name, id as f64 * 0.5, id % 2 == 0])?;
        }
        let mut meta_insert = tx.prepare(META_INSERT)?;
        for (k, v) in meta(key) {
            meta_insert.execute(params![k, v])?;
        }
    }
    tx.commit()?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    if key.wal {
        conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")?;
    }
    conn.close().map_err(|(_, e)| e)
}

/// The dataset file for `key` in `dir`, built with this rusqlite when absent or invalid.
pub fn ensure(
    dir: &Path,
    key: &DatasetKey,
    on_build: &mut dyn FnMut(&Path),
) -> Result<DatasetReady, BenchError> {
    ensure_with(dir, key, on_build, &|p| validate(p, key), &|p| {
        write(p, key).map_err(err)
    })
}

/// bulk_insert: a fresh table and an empty WAL, before the clock starts.
pub fn bulk_reset(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(&format!("{DROP}; {SQLITE_CREATE};"))?;
    conn.query_row(CHECKPOINT, [], |_| Ok(()))
}

/// bulk_insert: every row through one cached prepared statement, in one transaction; the rows
/// SQLite reports changed.
pub fn bulk_insert_all(conn: &mut Connection, rows: &[BulkRow]) -> rusqlite::Result<u64> {
    let tx = conn.transaction()?;
    let mut changed = 0u64;
    {
        let mut stmt = tx.prepare_cached(SQLITE_INSERT)?;
        for r in rows {
            let t = &r.texts;
            changed += stmt.execute(params![
                r.id,
                r.title,
                r.created_at,
                r.amount,
                r.flag,
                r.payload,
                r.meta,
                t[0],
                t[1],
                t[2],
                t[3],
                t[4],
                t[5],
                t[6],
                t[7],
                t[8]
            ])? as u64;
        }
    }
    tx.commit()?;
    Ok(changed)
}

/// A crate's way to run a closure on its rusqlite connection: tokio-rusqlite's `call`,
/// r2d2's connection in `spawn_blocking` / `block_in_place`, async-sqlite's `conn`.
#[allow(async_fn_in_trait)]
pub trait OnConn: Send {
    async fn on<T: Send + 'static>(
        &mut self,
        f: impl FnOnce(&Connection) -> Result<T, BenchError> + Send + 'static,
    ) -> Result<T, BenchError>;
}

/// key_value on a rusqlite connection: the store's statements (every one from the
/// connection's cache), and the replay through a crate where it runs a query.
pub mod kv {
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
        async fn scan(
            &mut self,
            from: &str,
            to: &str,
        ) -> Result<Vec<(String, Vec<u8>)>, BenchError> {
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
        async fn scan(
            &mut self,
            from: &str,
            to: &str,
        ) -> Result<Vec<(String, Vec<u8>)>, BenchError> {
            let (from, to) = (from.to_string(), to.to_string());
            self.0.on(move |c| on_conn::scan(c, &from, &to)).await
        }
    }
}

/// crud_overhead on a rusqlite connection: its operations (every statement from the
/// connection's cache), and the replay through a crate that runs them where it runs a query.
pub mod crud {
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

        fn exec(
            c: &rusqlite::Connection,
            sql: &str,
            params: &[&dyn ToSql],
        ) -> Result<u64, BenchError> {
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
        pub fn select(
            c: &rusqlite::Connection,
            sql: &Sql,
            above: i64,
        ) -> Result<Vec<Row>, BenchError> {
            let mut stmt = c.prepare_cached(&sql.select).map_err(err)?;
            let rows = stmt.query_map([above], row_of).map_err(err)?;
            rows.collect::<Result<_, _>>().map_err(err)
        }
        pub fn cached(c: &rusqlite::Connection, sql: &Sql, q: usize) -> Result<Answer, BenchError> {
            let (text, count) = &sql.cached[q];
            let mut stmt = c.prepare_cached(text).map_err(err)?;
            Ok(if *count {
                Answer::Count(stmt.query_row([], count_of).map_err(err)?)
            } else {
                Answer::Rows(
                    stmt.query_map([], row_of)
                        .map_err(err)?
                        .collect::<Result<_, _>>()
                        .map_err(err)?,
                )
            })
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
        async fn cached(&mut self, _: &Sql, q: usize) -> Result<Answer, BenchError> {
            let sql = self.sql.clone();
            self.on.on(move |c| on_conn::cached(c, &sql, q)).await
        }
        async fn insert_values(&mut self, _: &Sql, rows: &[Row]) -> Result<u64, BenchError> {
            let (sql, rows) = (self.sql.clone(), rows.to_vec());
            self.on
                .on(move |c| on_conn::insert_values(c, &sql, &rows))
                .await
        }
    }
}

/// A script's statement on a rusqlite connection, for every backend whose SQL runs through
/// rusqlite (bench-core's, and async-sqlite's in its harness): values bound, every row read
/// and hashed, busy errors told apart.
pub mod script {
    use bench_core::script::digest::{Cell, Digest};
    use bench_core::script::replay::{StmtError, StmtOut};
    use bench_core::script::{Kind, Value};
    use rusqlite::Connection;

    fn is_busy(e: &rusqlite::Error) -> bool {
        matches!(
            e.sqlite_error_code(),
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
        )
    }

    /// Runs one statement on a connection: its values bound, every row read and hashed.
    pub fn exec_statement(
        c: &Connection,
        sql: &str,
        kind: Kind,
        params: &[Value],
    ) -> rusqlite::Result<StmtOut> {
        let mut stmt = c.prepare_cached(sql)?;
        for (i, v) in params.iter().enumerate() {
            match v {
                Value::Int(n) => stmt.raw_bind_parameter(i + 1, n)?,
                Value::Double(d) => stmt.raw_bind_parameter(i + 1, d)?,
            }
        }
        let cols = stmt.column_count();
        let mut d = Digest::default();
        {
            let mut rows = stmt.raw_query();
            while let Some(row) = rows.next()? {
                for i in 0..cols {
                    use rusqlite::types::ValueRef as V;
                    d.cell(match row.get_ref(i)? {
                        V::Null => Cell::Null,
                        V::Integer(n) => Cell::Int(n),
                        V::Real(r) => Cell::Real(r),
                        V::Text(t) => Cell::Text(std::str::from_utf8(t).unwrap_or("\u{fffd}")),
                        V::Blob(b) => Cell::Blob(b),
                    });
                }
                d.row();
            }
        }
        drop(stmt);
        let changed = if kind == Kind::Write { c.changes() } else { 0 };
        d.statement(changed);
        Ok(StmtOut {
            hash: d.finish(),
            rows: d.rows(),
            changed,
        })
    }

    pub fn classify(e: rusqlite::Error) -> StmtError {
        if is_busy(&e) {
            StmtError::Busy
        } else {
            StmtError::Other(e.to_string())
        }
    }

    /// Rolls back what a failed transaction left open.
    pub fn rollback(c: &Connection) {
        if !c.is_autocommit() {
            let _ = c.execute_batch("ROLLBACK");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::knobs::resolve;

    #[test]
    fn connections_run_with_the_settings_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sqlite");
        for overrides in [
            vec![],
            vec![
                ("journal_mode", "delete"),
                ("synchronous", "full"),
                ("cache_size", "4000"),
                ("mmap_size", "1m"),
                ("sqlite_mutex", "full"),
            ],
            vec![("journal_mode", "memory"), ("synchronous", "off")],
        ] {
            let o: Vec<(String, String)> = overrides
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let s = SqliteSettings::from_knobs(&resolve(&settings::KNOBS, &|_| None, &o).unwrap());
            let conn = Connection::open_with_flags(&path, flags(&s)).unwrap();
            apply(&conn, &s).unwrap();
            assert_eq!(read_back(&conn), s.expected(), "{overrides:?}");
        }
    }

    #[test]
    fn a_written_dataset_validates_and_holds_the_spec_rows() {
        let dir = tempfile::tempdir().unwrap();
        let key = DatasetKey::new("t", 50, 7);
        let ready = ensure(dir.path(), &key, &mut |_| {}).unwrap();
        validate(&ready.path, &key).unwrap();
        let rows = read_rows(&ready.path).unwrap();
        assert_eq!(rows.len(), 50);
        assert!(rows.iter().all(|r| *r == bench_core::dataset::row(r.id)));
        let conn = Connection::open(&ready.path).unwrap();
        assert_eq!(
            cached_lookup(&conn, 9).unwrap(),
            bench_core::dataset::row(9)
        );
    }
}
