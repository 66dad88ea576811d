//! The `script` target through sql-middleware's turso feature: the same replay as the core's
//! benches, each client a task that takes a connection of its pool (10, its default) per
//! transaction and runs every statement through the query builder (bench-core's
//! `on_sql_middleware::script_statement`, compiled against this build); BEGIN, COMMIT and
//! ROLLBACK as text (`execute_batch`, which on turso adds no transaction of its own).
//! The run's byte copy of the database is settled by SQLite (rusqlite, bundled: turso has no
//! authorizer) into a plain WAL-mode file that turso opens, or built from `--init` by SQLite,
//! and SQLite judges the scripts on it (see bench-core's `workloads::script::harness`).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use bench_core::BenchError;
use bench_core::catalog::{Shipped, Subject};
use bench_core::script::replay::{AsyncPath, Outcome, StmtError, StmtOut};
use bench_core::script::{Kind, Value};
use bench_core::settings::SqliteSettings;
use bench_core::workloads::script::harness::{ScriptBinding, ScriptHarness};
use sql_middleware::{MiddlewarePoolConnection, SqlMiddlewareDbError};

use crate::pool::TursoPool;

/// sql-middleware on turso's `script`.
pub const SCRIPT: ScriptHarness<SqlMiddlewareTurso> = ScriptHarness(SqlMiddlewareTurso);

pub struct SqlMiddlewareTurso;

impl ScriptBinding for SqlMiddlewareTurso {
    type Path = OnTursoPool;
    const SUBJECT: Subject = Subject::Crate(Shipped::SqlMiddlewareTurso);

    fn init(&self, _: &tokio::runtime::Runtime, path: &Path, sql: &str) -> Result<(), BenchError> {
        crate::judge::build(path, sql).map_err(BenchError::Invalid)
    }

    fn judge(&self, path: &Path, mix: &mut bench_core::script::Mix) -> Result<(), BenchError> {
        crate::judge::judge(path, mix).map_err(|e| BenchError::Invalid(e.to_string()))
    }

    fn copy(&self, original: &Path, to: &Path, _journal_mode: &str) -> Result<(), BenchError> {
        // turso runs in WAL mode only.
        crate::judge::copy(original, to, "wal").map_err(BenchError::Invalid)
    }

    fn open(
        &self,
        rt: &tokio::runtime::Runtime,
        path: &Path,
        settings: &SqliteSettings,
        _clients: usize,
    ) -> Result<(OnTursoPool, BTreeMap<String, String>), BenchError> {
        let (pool, read_back) = rt.block_on(TursoPool::open(path, settings))?;
        Ok((OnTursoPool(pool), read_back))
    }
}

/// Busy (turso's `Busy` or `BusySnapshot`), or another error with its message. sql-middleware
/// 0.9's turso executor turns turso's errors into text (`ExecutionError("Turso execute error:
/// database is locked")`), so there busy is told by SQLite's words for it.
fn classify(e: SqlMiddlewareDbError) -> StmtError {
    match e {
        SqlMiddlewareDbError::TursoError(turso::Error::Busy(_) | turso::Error::BusySnapshot(_)) => {
            StmtError::Busy
        }
        SqlMiddlewareDbError::ExecutionError(m) if says_busy(&m) => StmtError::Busy,
        other => StmtError::Other(other.to_string()),
    }
}

fn says_busy(message: &str) -> bool {
    message.ends_with("database is locked") || message.ends_with("database is busy")
}

/// sql-middleware's pool on turso: a connection per transaction.
pub struct OnTursoPool(TursoPool);

impl AsyncPath for OnTursoPool {
    type Conn = MiddlewarePoolConnection;
    async fn checkout(&self, _client: usize) -> Result<Self::Conn, BenchError> {
        self.0.checkout().await
    }
    async fn exec(
        &self,
        conn: &mut Self::Conn,
        _index: usize,
        sql: Arc<str>,
        kind: Kind,
        params: Vec<Value>,
    ) -> Outcome {
        if matches!(kind, Kind::Begin | Kind::Commit | Kind::Rollback) {
            return Ok(conn
                .execute_batch(&sql)
                .await
                .map(|()| StmtOut::control())
                .map_err(classify));
        }
        Ok(
            crate::on_sql_middleware::script_statement(conn, &sql, kind, &params)
                .await
                .map_err(classify),
        )
    }
    async fn rollback(&self, conn: &mut Self::Conn) -> Result<(), BenchError> {
        let _ = conn.execute_batch("ROLLBACK").await;
        Ok(())
    }
}
