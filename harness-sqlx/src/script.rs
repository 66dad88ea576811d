//! The `script` target through sqlx: the same replay as the core's benches (one seed, the same
//! transactions, busy errors handled alike, rows hashed alike), each client a task that takes
//! a connection of sqlx's pool (`clients` connections) per transaction and runs every
//! statement through `sqlx::query` with its values bound (statements cached by sqlx).
//!
//! The database: the user's file, never written, copied with `VACUUM INTO` from a read-only
//! connection into the cache (a fresh copy per bench), or built from `--init` when there is
//! none (as the core does). Its rows are compared with the core's reference by the hash of
//! the kept results (see `bench_core::script::report::cross_check`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bench_core::BenchError;
use bench_core::catalog::{BenchSpec, CatalogError, Subject, Target};
use bench_core::measure::Bench;
use bench_core::protocol::{DatasetStatus, Event};
use bench_core::script::digest::{Cell, Digest};
use bench_core::script::replay::{AsyncPath, Exec, Outcome, Replay, StmtError, StmtOut};
use bench_core::script::{Kind, Placeholders, Value};
use bench_core::settings::SqliteSettings;
use bench_core::workload::{RunContext, Session, Workload};
use bench_core::workloads::script::{CLIENTS, ON_BUSY, TRANSACTIONS};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool, SqlitePoolOptions, SqliteRow};
use sqlx::{Row, TypeInfo, ValueRef};

use crate::lookup::err;

/// sqlx's `script`.
pub struct Script;

impl Workload for Script {
    fn spec(&self) -> &'static Target {
        bench_core::workloads::script::spec()
    }

    fn open<'a>(
        &'a self,
        run: &'a RunContext<'a>,
        emit: &mut dyn FnMut(Event),
    ) -> Result<Box<dyn Session + 'a>, BenchError> {
        let mix = bench_core::workloads::script::load_mix(&run.script)?;
        let db = run.script.db.clone().ok_or_else(|| {
            BenchError::Invalid("the script target needs --db PATH (see docs/scripts.md)".into())
        })?;
        let rt = bench_core::measure::drive::runtime(None)?;
        if !db.exists() {
            let init = run.script.init.as_ref().ok_or_else(|| {
                BenchError::Invalid(format!(
                    "--db {}: no such file (allowed: an existing SQLite database, or --init FILE to build it)",
                    db.display()
                ))
            })?;
            emit(Event::Dataset {
                status: DatasetStatus::Building,
                rows: 0,
                path: db.display().to_string(),
                build_ms: None,
            });
            rt.block_on(init_db(&db, init))?;
        }
        let sha256 = bench_core::script::digest::sha256(&db)?;
        let k = &run.plan.knobs;
        let sql = mix
            .statements()
            .map(|s| Arc::<str>::from(s.sql(Placeholders::Numbered)))
            .collect();
        Ok(Box::new(Ctx {
            replay: Replay::new(
                Exec {
                    sql,
                    retry: k.word(&ON_BUSY) == "retry",
                    mix: Arc::new(mix),
                },
                k.count(&CLIENTS) as usize,
                k.count(&TRANSACTIONS),
                run.plan.target.seed,
            ),
            original: db,
            sha256,
            dir: run.scratch_dir()?,
            settings: run.sqlite.clone(),
            rt,
            working: std::cell::RefCell::new(Vec::new()),
        }))
    }
}

/// Builds the database at `path` from the SQL in `init`: into a temporary file, moved in
/// place when it is whole (a failed init leaves nothing).
async fn init_db(path: &Path, init: &Path) -> Result<(), BenchError> {
    let sql = std::fs::read_to_string(init).map_err(|e| {
        BenchError::Invalid(format!("--init {}: cannot read it: {e}", init.display()))
    })?;
    let tmp = PathBuf::from(format!("{}.{}.tmp", path.display(), std::process::id()));
    let built = async {
        let options = SqliteConnectOptions::new()
            .filename(&tmp)
            .create_if_missing(true);
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options)
            .await
            .map_err(err)?;
        sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
            .execute(&pool)
            .await
            .map_err(|e| BenchError::Invalid(format!("--init {}: {e}", init.display())))?;
        pool.close().await;
        Ok::<_, BenchError>(())
    }
    .await;
    if let Err(e) = built {
        bench_core::dataset::remove_db_files(&tmp);
        return Err(e);
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        BenchError::Invalid(format!("cannot move the new database to {}: {e}", path.display()))
    })
}

struct Ctx {
    replay: Replay,
    original: PathBuf,
    sha256: String,
    dir: PathBuf,
    settings: SqliteSettings,
    rt: tokio::runtime::Runtime,
    /// The copies made for this run's benches, removed when it ends.
    working: std::cell::RefCell<Vec<PathBuf>>,
}

impl Drop for Ctx {
    fn drop(&mut self) {
        for p in self.working.borrow().iter() {
            bench_core::dataset::remove_db_files(p);
        }
    }
}

impl Ctx {
    /// A fresh copy of the user's database for bench `name`: `VACUUM INTO` from a read-only
    /// connection (what a -wal holds is read through it, and nothing is written).
    async fn copy_for(&self, name: &str) -> Result<PathBuf, BenchError> {
        let path = self.dir.join(format!(
            "script-sqlx-work-{}-{}.sqlite",
            name.replace('/', "-"),
            std::process::id()
        ));
        bench_core::dataset::remove_db_files(&path);
        let options = SqliteConnectOptions::new()
            .filename(&self.original)
            .read_only(true);
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options)
            .await
            .map_err(err)?;
        sqlx::query("VACUUM INTO ?1")
            .bind(path.display().to_string())
            .execute(&pool)
            .await
            .map_err(|e| {
                BenchError::Invalid(format!(
                    "copying {} for sqlx: {e}",
                    self.original.display()
                ))
            })?;
        pool.close().await;
        self.working.borrow_mut().push(path.clone());
        Ok(path)
    }

    fn sqlx_bench(&self, name: &str) -> Result<Bench<'_>, BenchError> {
        let clients = self.replay.clients;
        let (pool, settings) = self.rt.block_on(async {
            let path = self.copy_for(name).await?;
            let options = crate::settings::apply(
                SqliteConnectOptions::new().filename(&path),
                &self.settings,
            );
            let pool = SqlitePoolOptions::new()
                .max_connections(clients as u32)
                .connect_with(options)
                .await
                .map_err(err)?;
            let mut conn = pool.acquire().await.map_err(err)?;
            let settings = crate::settings::read_back(&mut conn).await?;
            drop(conn);
            Ok::<_, BenchError>((pool, settings))
        })?;
        self.replay
            .async_bench(&self.rt, name, OnSqlx(pool), settings)
    }
}

impl Session for Ctx {
    fn ops(&self) -> u64 {
        self.replay.per_pass
    }

    fn skip(&self, bench: &BenchSpec) -> Option<String> {
        bench_core::settings::skip_reason(bench.subject, self.replay.clients, &self.settings)
    }

    fn bench(&self, spec: &BenchSpec) -> Result<Bench<'_>, BenchError> {
        match spec.subject {
            Subject::SqlxSqlite => self.sqlx_bench(spec.name),
            _ => Err(CatalogError::no_implementation(
                bench_core::workloads::script::spec(),
                spec,
                "not a bench of the sqlx harness",
            )
            .into()),
        }
    }

    fn report(&self, spec: &BenchSpec) -> Vec<Event> {
        self.replay
            .report(spec.name, &self.original.display().to_string(), &self.sha256)
    }
}

/// sqlx's pool: a connection per transaction, each statement through `sqlx::query`.
struct OnSqlx(SqlitePool);

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

/// Whether a write statement returns rows (`RETURNING`).
fn returning(sql: &str) -> bool {
    sql.split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .any(|w| w.eq_ignore_ascii_case("returning"))
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
            d.statement(0);
            return Ok(Ok(StmtOut {
                hash: d.finish(),
                rows: 0,
                changed: 0,
            }));
        }
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql.to_string()));
        for v in &params {
            q = match v {
                Value::Int(n) => q.bind(*n),
                Value::Double(x) => q.bind(*x),
            };
        }
        let changed = if kind != Kind::Write || returning(&sql) {
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
