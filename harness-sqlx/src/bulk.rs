//! `bulk_insert` through sqlx: SQLite (a scratch file, like bench-core's) and PostgreSQL (its own
//! table, `benchscope_bulk_insert`, dropped again at the end; no other table is touched).

use std::time::Instant;

use bench_core::BenchError;
use bench_core::catalog::{BenchSpec, CatalogError, Subject, Target};
use bench_core::measure::trace::ns_between;
use bench_core::measure::{Bench, IterFn, Iteration};
use bench_core::mirror::NO_POSTGRES;
use bench_core::mirror::{Mirror, On};
use bench_core::workloads::bulk_insert::rows::batch_text_postgres;
use bench_core::workloads::bulk_insert::rows::{
    CHECKPOINT, DROP, POSTGRES_CREATE, POSTGRES_INSERT, SQLITE_CREATE, SQLITE_INSERT, Scratch,
};
use bench_core::workloads::bulk_insert::{self, INSERT_WORK, Method};

use sqlx::postgres::PgConnectOptions;
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Connection, Executor};

use crate::lookup::err;

/// sqlx's `bulk_insert`: SQLite and PostgreSQL.
pub struct Bulk;

impl Mirror for Bulk {
    type Params = bulk_insert::Params;
    const REFUSED: &'static str = "not a sqlx bench";

    fn target(&self) -> &'static Target {
        bulk_insert::spec()
    }

    fn serves(&self, subject: Subject) -> bool {
        matches!(subject, Subject::SqlxSqlite | Subject::SqlxPostgres)
    }

    fn bench<'s>(&'s self, ctx: &'s Ctx, spec: &BenchSpec) -> Result<Bench<'s>, BenchError> {
        let n = ctx.p.rows.len() as u64;
        match spec.subject {
            Subject::SqlxSqlite => {
                let (iter, settings) = sqlite(ctx, spec)?;
                Ok(Bench::new(iter, n, INSERT_WORK).with_settings(settings))
            }
            Subject::SqlxPostgres => Ok(Bench::new(postgres(ctx)?, n, INSERT_WORK)),
            _ => {
                Err(
                    CatalogError::no_implementation(bulk_insert::spec(), spec, "not a sqlx bench")
                        .into(),
                )
            }
        }
    }
}

type Ctx = On<bulk_insert::Params>;

/// Binds one row's 16 values in table order.
macro_rules! bind_row {
    ($q:expr, $r:expr) => {{
        let r = $r;
        let t = &r.texts;
        $q.bind(r.id)
            .bind(&r.title)
            .bind(&r.created_at)
            .bind(r.amount)
            .bind(r.flag)
            .bind(&r.payload)
            .bind(&r.meta)
            .bind(&t[0])
            .bind(&t[1])
            .bind(&t[2])
            .bind(&t[3])
            .bind(&t[4])
            .bind(&t[5])
            .bind(&t[6])
            .bind(&t[7])
            .bind(&t[8])
    }};
}

pub use bench_core::secret::pg_error as pg_err;

type Settings = std::collections::BTreeMap<String, String>;

/// bulk_insert `method=batch_text`: the rows' INSERT text as sqlx's batch call runs it
/// (`raw_sql`: every statement of the text, unprepared, in order; for PostgreSQL its simple
/// query protocol); `execute` sums the rows each statement changed. The text is the run's own,
/// made from the seeded rows, never a user's.
/// Held in an `Arc`, it is handed over without a copy.
fn batch(text: &std::sync::Arc<String>) -> sqlx::RawSql {
    sqlx::raw_sql(sqlx::AssertSqlSafe(std::hint::black_box(text.clone())))
}

fn sqlite<'a>(ctx: &'a Ctx, spec: &BenchSpec) -> Result<(IterFn<'a>, Settings), BenchError> {
    let scratch = Scratch::new(&ctx.p.dir, spec.name);
    let options = crate::settings::apply(
        SqliteConnectOptions::new()
            .filename(&scratch.0)
            .create_if_missing(true),
        &ctx.p.settings,
    );
    let (mut conn, settings) = ctx.rt.block_on(async {
        let mut conn = options.connect().await.map_err(err)?;
        let settings = crate::settings::read_back(&mut conn).await?;
        Ok::<_, BenchError>((conn, settings))
    })?;
    let iter: IterFn<'a> = Box::new(move |_| {
        let _scratch = &scratch;
        ctx.rt.block_on(async {
            conn.execute(DROP).await.map_err(err)?;
            conn.execute(SQLITE_CREATE).await.map_err(err)?;
            conn.execute(CHECKPOINT).await.map_err(err)?;
            let start = Instant::now();
            let mut tx = conn.begin().await.map_err(err)?;
            let mut changed = 0u64;
            match ctx.p.method {
                Method::Prepared => {
                    for r in ctx.p.rows.iter() {
                        changed += bind_row!(sqlx::query(SQLITE_INSERT), r)
                            .execute(&mut *tx)
                            .await
                            .map_err(err)?
                            .rows_affected();
                    }
                }
                Method::BatchText => {
                    changed = batch(&ctx.p.batch)
                        .execute(&mut *tx)
                        .await
                        .map_err(err)?
                        .rows_affected();
                }
            }
            tx.commit().await.map_err(err)?;
            Ok(Iteration::new(ns_between(start, Instant::now()), changed))
        })
    });
    Ok((iter, settings))
}

fn postgres(ctx: &Ctx) -> Result<IterFn<'_>, BenchError> {
    let url = ctx
        .p
        .postgres_url
        .clone()
        .ok_or_else(|| BenchError::Invalid(NO_POSTGRES.into()))?;
    let options: PgConnectOptions = url.expose().parse().map_err(|e| pg_err(&url, e))?;
    let conn = ctx
        .rt
        .block_on(options.connect())
        .map_err(|e| pg_err(&url, e))?;
    let mut guard = PgTable {
        conn: Some(conn),
        rt: &ctx.rt,
    };
    // method=batch_text: the rows as PostgreSQL's literals, made before any clock.
    let text = (ctx.p.method == Method::BatchText)
        .then(|| std::sync::Arc::new(batch_text_postgres(&ctx.p.rows)));
    Ok(Box::new(move |_| {
        let conn = guard.conn.as_mut().expect("open until dropped");
        ctx.rt.block_on(async {
            conn.execute(DROP).await.map_err(|e| pg_err(&url, e))?;
            conn.execute(POSTGRES_CREATE)
                .await
                .map_err(|e| pg_err(&url, e))?;
            let start = Instant::now();
            let mut tx = conn.begin().await.map_err(|e| pg_err(&url, e))?;
            let mut changed = 0u64;
            match &text {
                None => {
                    for r in ctx.p.rows.iter() {
                        changed += bind_row!(sqlx::query(POSTGRES_INSERT), r)
                            .execute(&mut *tx)
                            .await
                            .map_err(|e| pg_err(&url, e))?
                            .rows_affected();
                    }
                }
                Some(text) => {
                    changed = batch(text)
                        .execute(&mut *tx)
                        .await
                        .map_err(|e| pg_err(&url, e))?
                        .rows_affected();
                }
            }
            tx.commit().await.map_err(|e| pg_err(&url, e))?;
            Ok(Iteration::new(ns_between(start, Instant::now()), changed))
        })
    }))
}

/// The PostgreSQL connection; the bench's own table is dropped when the bench ends.
struct PgTable<'rt> {
    conn: Option<sqlx::PgConnection>,
    rt: &'rt tokio::runtime::Runtime,
}

impl Drop for PgTable<'_> {
    fn drop(&mut self) {
        if let Some(mut conn) = self.conn.take() {
            let _ = self.rt.block_on(async {
                conn.execute(DROP).await?;
                conn.close().await
            });
        }
    }
}
