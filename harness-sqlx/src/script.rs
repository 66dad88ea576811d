//! The `script` target through sqlx: the same replay as the core's benches (one seed, the same
//! transactions, busy errors handled alike, rows hashed alike), each client a task that takes
//! a connection of sqlx's pool (`clients` connections) per transaction and runs every
//! statement through `sqlx::query` with its values bound (statements cached by sqlx).
//! The database is copied with `VACUUM INTO` from a read-only connection (a fresh copy per
//! bench), or built from `--init` when there is none (see bench-core's
//! `workloads::script::harness`).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use bench_core::BenchError;
use bench_core::catalog::Subject;
use bench_core::script::digest::{Cell, Digest};
use bench_core::script::replay::{AsyncPath, Outcome, StmtError, StmtOut};
use bench_core::script::{Kind, Value};
use bench_core::settings::SqliteSettings;
use bench_core::workloads::script::harness::{ScriptBinding, ScriptHarness};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool, SqlitePoolOptions, SqliteRow};
use sqlx::{Row, TypeInfo, ValueRef};

use crate::lookup::err;

/// sqlx's `script`.
pub const SCRIPT: ScriptHarness<Sqlx> = ScriptHarness(Sqlx);

pub struct Sqlx;

/// A pool of `n` connections on `options`.
async fn pool(options: SqliteConnectOptions, n: usize) -> Result<SqlitePool, BenchError> {
    SqlitePoolOptions::new()
        .max_connections(n.max(1) as u32)
        .connect_with(options)
        .await
        .map_err(err)
}

impl ScriptBinding for Sqlx {
    type Path = OnSqlx;
    const SUBJECT: Subject = Subject::SqlxSqlite;

    fn init(&self, _: &tokio::runtime::Runtime, path: &Path, sql: &str) -> Result<(), BenchError> {
        crate::judge::build(path, sql).map_err(BenchError::Invalid)
    }

    fn judge(&self, path: &Path, mix: &mut bench_core::script::Mix) -> Result<(), BenchError> {
        crate::judge::judge(path, mix).map_err(|e| BenchError::Invalid(e.to_string()))
    }

    fn copy(&self, original: &Path, to: &Path, journal_mode: &str) -> Result<(), BenchError> {
        crate::judge::copy(original, to, journal_mode).map_err(BenchError::Invalid)
    }

    fn open(
        &self,
        rt: &tokio::runtime::Runtime,
        path: &Path,
        settings: &SqliteSettings,
        clients: usize,
    ) -> Result<(OnSqlx, BTreeMap<String, String>), BenchError> {
        rt.block_on(async {
            // Through the jail of the run's folder: SQLite reaches nothing outside it.
            let jail = bench_core::scratch::jail_for(path)?;
            let options = crate::settings::apply(
                SqliteConnectOptions::new().filename(path).vfs(jail.name()),
                settings,
            );
            let p = pool(options, clients).await?;
            let mut conn = p.acquire().await.map_err(err)?;
            let read_back = crate::settings::read_back(&mut conn).await?;
            drop(conn);
            Ok((OnSqlx(p), read_back))
        })
    }
}

/// sqlx's pool: a connection per transaction, each statement through `sqlx::query`.
pub struct OnSqlx(SqlitePool);

/// SQLITE_BUSY or SQLITE_LOCKED (any of their extended codes), as sqlx reports them.
fn is_busy(e: &sqlx::Error) -> bool {
    let code = match e {
        sqlx::Error::Database(d) => d.code().and_then(|c| c.parse::<i32>().ok()),
        _ => None,
    };
    matches!(code.map(|c| c & 0xff), Some(5 | 6))
}

fn classify(e: sqlx::Error) -> StmtError {
    if is_busy(&e) {
        StmtError::Busy
    } else {
        StmtError::Other(e.to_string())
    }
}

/// One cell of a row, read as SQLite typed the value (not the column's declared type).
fn cell(row: &SqliteRow, i: usize, d: &mut Digest) -> Result<(), sqlx::Error> {
    let raw = row.try_get_raw(i)?;
    if raw.is_null() {
        d.cell(Cell::Null);
        return Ok(());
    }
    let ty = raw.type_info().name().to_string();
    match ty.as_str() {
        "INTEGER" | "BOOLEAN" | "INT8" => d.cell(Cell::Int(row.try_get_unchecked::<i64, _>(i)?)),
        "REAL" => d.cell(Cell::Real(row.try_get_unchecked::<f64, _>(i)?)),
        "BLOB" => d.cell(Cell::Blob(row.try_get_unchecked::<&[u8], _>(i)?)),
        _ => d.cell(Cell::Text(row.try_get_unchecked::<&str, _>(i)?)),
    }
    Ok(())
}

impl AsyncPath for OnSqlx {
    type Conn = sqlx::pool::PoolConnection<sqlx::Sqlite>;
    async fn checkout(&self, _client: usize) -> Result<Self::Conn, BenchError> {
        self.0.acquire().await.map_err(err)
    }
    async fn exec(
        &self,
        conn: &mut Self::Conn,
        _index: usize,
        sql: Arc<str>,
        kind: Kind,
        params: Vec<Value>,
    ) -> Outcome {
        let mut d = Digest::default();
        if matches!(kind, Kind::Begin | Kind::Commit | Kind::Rollback) {
            if let Err(e) = sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_string()))
                .execute(&mut **conn)
                .await
            {
                return Ok(Err(classify(e)));
            }
            return Ok(Ok(StmtOut::control()));
        }
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql.to_string()));
        for v in &params {
            q = match v {
                Value::Int(n) => q.bind(*n),
                Value::Double(x) => q.bind(*x),
            };
        }
        let changed = if kind != Kind::Write || bench_core::script::returns_rows(&sql) {
            let rows = match q.fetch_all(&mut **conn).await {
                Ok(rows) => rows,
                Err(e) => return Ok(Err(classify(e))),
            };
            for row in &rows {
                for i in 0..row.columns().len() {
                    if let Err(e) = cell(row, i, &mut d) {
                        return Ok(Err(StmtError::Other(e.to_string())));
                    }
                }
                d.row();
            }
            if kind == Kind::Write { d.rows() } else { 0 }
        } else {
            match q.execute(&mut **conn).await {
                Ok(done) => done.rows_affected(),
                Err(e) => return Ok(Err(classify(e))),
            }
        };
        d.statement(changed);
        Ok(Ok(StmtOut {
            hash: d.finish(),
            rows: d.rows(),
            changed,
        }))
    }
    async fn rollback(&self, conn: &mut Self::Conn) -> Result<(), BenchError> {
        let _ = sqlx::raw_sql("ROLLBACK").execute(&mut **conn).await;
        Ok(())
    }
}
