//! The `script` target through async-sqlite: the same replay as the core's benches, each
//! client a task with its own `Client` (a connection on a thread of its own), every statement
//! one `conn` call running bench-core's rusqlite statement code (compiled against
//! async-sqlite's rusqlite). The run's byte copy of the database is settled with `VACUUM
//! INTO`, or built from `--init`, and SQLite judges the scripts on it (see bench-core's
//! `workloads::script::harness`).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use bench_core::BenchError;
use bench_core::catalog::Subject;
use bench_core::script::replay::{AsyncPath, Outcome};
use bench_core::script::{Kind, Value};
use bench_core::settings::SqliteSettings;
use bench_core::workloads::script::harness::{ScriptBinding, ScriptHarness};

use crate::lookup::{SUBJECT, err, open_client};
use crate::on_rusqlite::script::{classify, exec_statement, rollback};

/// async-sqlite's `script`.
pub const SCRIPT: ScriptHarness<AsyncSqlite> = ScriptHarness(AsyncSqlite);

pub struct AsyncSqlite;

impl ScriptBinding for AsyncSqlite {
    type Path = OnClients;
    const SUBJECT: Subject = SUBJECT;

    fn init(
        &self,
        _rt: &tokio::runtime::Runtime,
        path: &Path,
        sql: &str,
    ) -> Result<(), BenchError> {
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
    ) -> Result<(OnClients, BTreeMap<String, String>), BenchError> {
        rt.block_on(async {
            let mut opened = Vec::with_capacity(clients);
            let mut read_back = BTreeMap::new();
            for _ in 0..clients.max(1) {
                // Through the jail of the run's folder: SQLite reaches nothing outside it.
                let (c, s) =
                    open_client(&bench_core::scratch::jailed_uri(path, false)?, settings).await?;
                opened.push(c);
                read_back = s;
            }
            Ok((OnClients(opened), read_back))
        })
    }
}

/// Each client's own `Client`: a transaction stays on it.
pub struct OnClients(Vec<async_sqlite::Client>);

impl AsyncPath for OnClients {
    type Conn = usize;
    async fn checkout(&self, client: usize) -> Result<Self::Conn, BenchError> {
        Ok(client)
    }
    async fn exec(
        &self,
        conn: &mut Self::Conn,
        _index: usize,
        sql: Arc<str>,
        kind: Kind,
        params: Vec<Value>,
    ) -> Outcome {
        self.0[*conn]
            .conn(move |c| Ok(exec_statement(c, &sql, kind, &params).map_err(classify)))
            .await
            .map_err(err)
    }
    async fn rollback(&self, conn: &mut Self::Conn) -> Result<(), BenchError> {
        self.0[*conn]
            .conn(|c| {
                rollback(c);
                Ok(())
            })
            .await
            .map_err(err)
    }
}
