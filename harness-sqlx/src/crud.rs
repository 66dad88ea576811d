//! `crud_overhead` through sqlx: SQLite (a scratch file or an in-memory database, like
//! bench-core's) and PostgreSQL (its own table, `benchscope_crud`, dropped again at the end).
//! Both replay bench-core's plan; sqlx keeps every statement in its per-connection cache.

use std::collections::HashMap;

use bench_core::BenchError;
use bench_core::catalog::{BenchSpec, CatalogError, Subject, Target};
use bench_core::measure::Bench;
use bench_core::mirror::NO_POSTGRES;
use bench_core::mirror::{Mirror, On};
use bench_core::workloads::bulk_insert::rows::Scratch;
use bench_core::workloads::crud_overhead::plan::{Answer, BATCHES, Crud, Dialect, Row, Sql};
use bench_core::workloads::crud_overhead::{self};
use sqlx::postgres::PgConnectOptions;
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{AssertSqlSafe, ConnectOptions, Connection, Executor, SqlSafeStr, SqlStr};

use crate::bulk::pg_err;
use crate::lookup::err;

/// sqlx's `crud_overhead`: SQLite and PostgreSQL.
pub struct CrudOverhead;

impl Mirror for CrudOverhead {
    type Params = crud_overhead::Shared;
    const REFUSED: &'static str = "not a sqlx bench";

    fn target(&self) -> &'static Target {
        crud_overhead::spec()
    }

    fn serves(&self, subject: Subject) -> bool {
        matches!(subject, Subject::SqlxSqlite | Subject::SqlxPostgres)
    }

    fn bench<'s>(&'s self, ctx: &'s Ctx, spec: &BenchSpec) -> Result<Bench<'s>, BenchError> {
        let case = crud_overhead::case_for(spec)?;
        let (iter, settings) = match spec.subject {
            Subject::SqlxSqlite => {
                let scratch = Scratch::new(&ctx.p.dir, &format!("crud-sqlx-{}", spec.name));
                let options = if ctx.p.memory {
                    SqliteConnectOptions::new().in_memory(true)
                } else {
                    SqliteConnectOptions::new()
                        .filename(&scratch.0)
                        .create_if_missing(true)
                };
                let options = crate::settings::apply(options, &ctx.p.settings);
                let (conn, settings) = ctx.rt.block_on(async {
                    let mut conn = options.connect().await.map_err(err)?;
                    let settings = crate::settings::read_back(&mut conn).await?;
                    Ok::<_, BenchError>((conn, settings))
                })?;
                let sql = Sql::for_case(Dialect::Sqlite, case, ctx.p.sweep.len());
                let c = SqliteCrud {
                    conn,
                    stmts: Stmts::new(&sql),
                    _scratch: scratch,
                };
                (ctx.p.iteration(&ctx.rt, c, sql, case, ())?, settings)
            }
            Subject::SqlxPostgres => {
                let url = ctx
                    .p
                    .postgres_url
                    .clone()
                    .ok_or_else(|| BenchError::Invalid(NO_POSTGRES.into()))?;
                let options: PgConnectOptions =
                    url.expose().parse().map_err(|e| pg_err(&url, e))?;
                let conn = ctx
                    .rt
                    .block_on(options.connect())
                    .map_err(|e| pg_err(&url, e))?;
                let sql = Sql::for_case(Dialect::Postgres, case, ctx.p.sweep.len());
                let c = PgCrud {
                    conn: Some(conn),
                    stmts: Stmts::new(&sql),
                    drop: sql.drop.clone(),
                    url,
                    rt: ctx.rt.handle().clone(),
                };
                (
                    ctx.p.iteration(&ctx.rt, c, sql, case, ())?,
                    Default::default(),
                )
            }
            _ => {
                return Err(CatalogError::no_implementation(
                    crud_overhead::spec(),
                    spec,
                    "not a sqlx bench",
                )
                .into());
            }
        };
        Ok(ctx.p.bench(iter, case, settings))
    }
}

type Ctx = On<crud_overhead::Shared>;

/// The plan's statements as sqlx's shared strings, made once (a query clones a reference).
struct Stmts {
    insert: SqlStr,
    update: SqlStr,
    delete: SqlStr,
    select: SqlStr,
    begin: SqlStr,
    commit: SqlStr,
    cached: Vec<(SqlStr, bool)>,
    batch: HashMap<usize, SqlStr>,
}

fn shared(s: &str) -> SqlStr {
    AssertSqlSafe(std::sync::Arc::<str>::from(s)).into_sql_str()
}

impl Stmts {
    fn new(sql: &Sql) -> Stmts {
        let mut batch = HashMap::new();
        for n in BATCHES.iter().map(|n| *n as usize).chain([1]) {
            if let Some(s) = sql.try_batch(n) {
                batch.insert(n, shared(s));
            }
        }
        Stmts {
            insert: shared(&sql.insert),
            update: shared(&sql.update),
            delete: shared(&sql.delete),
            select: shared(&sql.select),
            begin: "BEGIN".into_sql_str(),
            commit: "COMMIT".into_sql_str(),
            cached: sql.cached.iter().map(|(s, c)| (shared(s), *c)).collect(),
            batch,
        }
    }

    fn batch(&self, sql: &Sql, n: usize) -> SqlStr {
        self.batch
            .get(&n)
            .cloned()
            .unwrap_or_else(|| shared(sql.batch(n)))
    }
}

/// The same replay on both sqlx connection types: the bodies are identical, only the
/// connection and row types differ.
macro_rules! sqlx_crud {
    ($ty:ty, $conn:ident) => {
        impl Crud for $ty {
            async fn drop_table(&mut self, sql: &Sql) -> Result<(), BenchError> {
                let drop = shared(&sql.drop);
                self.$conn().execute(drop).await.map_err(err)?;
                Ok(())
            }
            async fn create_table(&mut self, sql: &Sql) -> Result<(), BenchError> {
                let create = shared(&sql.create);
                self.$conn().execute(create).await.map_err(err)?;
                Ok(())
            }
            async fn begin(&mut self) -> Result<(), BenchError> {
                let q = sqlx::query(self.stmts.begin.clone());
                q.execute(self.$conn()).await.map_err(err)?;
                Ok(())
            }
            async fn commit(&mut self) -> Result<(), BenchError> {
                let q = sqlx::query(self.stmts.commit.clone());
                q.execute(self.$conn()).await.map_err(err)?;
                Ok(())
            }
            async fn insert(&mut self, _: &Sql, r: &Row) -> Result<u64, BenchError> {
                let q = sqlx::query(self.stmts.insert.clone())
                    .bind(r.id)
                    .bind(&r.text)
                    .bind(r.int)
                    .bind(r.real)
                    .bind(r.flag);
                Ok(q.execute(self.$conn()).await.map_err(err)?.rows_affected())
            }
            async fn update(&mut self, _: &Sql, id: i64, text: &str) -> Result<u64, BenchError> {
                let q = sqlx::query(self.stmts.update.clone()).bind(text).bind(id);
                Ok(q.execute(self.$conn()).await.map_err(err)?.rows_affected())
            }
            async fn delete(&mut self, _: &Sql, id: i64) -> Result<u64, BenchError> {
                let q = sqlx::query(self.stmts.delete.clone()).bind(id);
                Ok(q.execute(self.$conn()).await.map_err(err)?.rows_affected())
            }
            async fn select(&mut self, _: &Sql, above: i64) -> Result<Vec<Row>, BenchError> {
                let q = sqlx::query(self.stmts.select.clone()).bind(above);
                let rows = q.fetch_all(self.$conn()).await.map_err(err)?;
                rows.iter().map(row_of).collect()
            }
            async fn cached(
                &mut self,
                _: &Sql,
                q: usize,
                fresh: bool,
            ) -> Result<Answer, BenchError> {
                let (text, count) = self.stmts.cached[q].clone();
                // Fresh: sqlx prepares it without keeping it in its statement cache.
                let rows = sqlx::query(text)
                    .persistent(!fresh)
                    .fetch_all(self.$conn())
                    .await
                    .map_err(err)?;
                Ok(if count {
                    let row = rows
                        .first()
                        .ok_or_else(|| BenchError::Other("a count query returned no row".into()))?;
                    Answer::Count(count_of(row)?)
                } else {
                    Answer::Rows(rows.iter().map(row_of).collect::<Result<_, _>>()?)
                })
            }
            async fn insert_values(&mut self, sql: &Sql, rows: &[Row]) -> Result<u64, BenchError> {
                let mut q = sqlx::query(self.stmts.batch(sql, rows.len()));
                for r in rows {
                    q = q
                        .bind(r.id)
                        .bind(r.text.as_str())
                        .bind(r.int)
                        .bind(r.real)
                        .bind(r.flag);
                }
                Ok(q.execute(self.$conn()).await.map_err(err)?.rows_affected())
            }
        }
    };
}

/// A row of the table, every column decoded.
fn row_of<R: sqlx::Row>(r: &R) -> Result<Row, BenchError>
where
    usize: sqlx::ColumnIndex<R>,
    i64: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    f64: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    bool: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    String: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    Ok(Row {
        id: r.try_get(0).map_err(err)?,
        text: r.try_get(1).map_err(err)?,
        int: r.try_get(2).map_err(err)?,
        real: r.try_get(3).map_err(err)?,
        flag: r.try_get(4).map_err(err)?,
    })
}

/// A count query's answer: its last column (after an AVG, say), every column read.
fn count_of<R: sqlx::Row>(r: &R) -> Result<i64, BenchError>
where
    usize: sqlx::ColumnIndex<R>,
    i64: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    Option<f64>: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    let n = r.len();
    for i in 0..n - 1 {
        let _: Option<f64> = r.try_get(i).map_err(err)?;
    }
    r.try_get(n - 1).map_err(err)
}

struct SqliteCrud {
    conn: sqlx::SqliteConnection,
    stmts: Stmts,
    _scratch: Scratch,
}

impl SqliteCrud {
    fn conn(&mut self) -> &mut sqlx::SqliteConnection {
        &mut self.conn
    }
}

sqlx_crud!(SqliteCrud, conn);

/// The PostgreSQL connection; the bench's table is dropped when the bench ends.
struct PgCrud {
    conn: Option<sqlx::PgConnection>,
    stmts: Stmts,
    drop: String,
    url: bench_core::secret::PgUrl,
    rt: tokio::runtime::Handle,
}

impl PgCrud {
    fn pg(&mut self) -> &mut sqlx::PgConnection {
        self.conn.as_mut().expect("open until dropped")
    }
}

sqlx_crud!(PgCrud, pg);

impl Drop for PgCrud {
    fn drop(&mut self) {
        if let Some(mut conn) = self.conn.take() {
            let drop = shared(&self.drop);
            let result = self.rt.block_on(async {
                conn.execute(drop).await?;
                conn.close().await
            });
            if let Err(e) = result {
                tracing::warn!("dropping benchscope_crud: {}", pg_err(&self.url, e));
            }
        }
    }
}
