//! `bulk_insert` through sqlx: SQLite (a scratch file, like bench-core's) and PostgreSQL (its own
//! table, `benchscope_bulk_insert`, dropped again at the end; no other table is touched).

use std::time::Instant;

use bench_core::bulk::{
    BulkRow, DROP, POSTGRES_CREATE, POSTGRES_INSERT, SQLITE_CREATE, SQLITE_INSERT, Scratch,
    redact_url, url_password,
};
use bench_core::catalog::BenchSpec;
use bench_core::measure::Iteration;
use bench_core::runner::IterFn;
use bench_core::trace::ns_between;
use sqlx::postgres::PgConnectOptions;
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Connection, Executor};

use crate::lookup::err;

pub struct Ctx<'rt> {
    pub rt: &'rt tokio::runtime::Runtime,
    pub dir: std::path::PathBuf,
    pub rows: Vec<BulkRow>,
    pub postgres_url: Option<String>,
}

/// Why the `postgres` bench cannot run here, if it cannot.
pub fn skip(spec: &BenchSpec, ctx: &Ctx<'_>) -> Option<String> {
    (spec.name == "postgres" && ctx.postgres_url.is_none())
        .then(|| "no PostgreSQL URL (set --postgres-url or BENCHSCOPE_POSTGRES_URL)".to_string())
}

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

/// A PostgreSQL error with the URL redacted and the password scrubbed from the driver's text.
fn pg_err(url: &str, e: impl std::fmt::Display) -> String {
    let mut msg = e.to_string();
    if let Some(p) = url_password(url) {
        msg = msg.replace(&p, "***");
    }
    format!("PostgreSQL at {}: {msg}", redact_url(url))
}

pub fn iteration<'a>(spec: &BenchSpec, ctx: &'a Ctx<'_>) -> Result<IterFn<'a>, String> {
    match spec.name {
        "sqlx_sqlite" => {
            let scratch = Scratch::new(&ctx.dir, spec.name);
            let mut conn = ctx
                .rt
                .block_on(
                    SqliteConnectOptions::new()
                        .filename(&scratch.0)
                        .create_if_missing(true)
                        .connect(),
                )
                .map_err(err)?;
            Ok(Box::new(move |_| {
                let _scratch = &scratch;
                ctx.rt.block_on(async {
                    conn.execute(DROP).await.map_err(err)?;
                    conn.execute(SQLITE_CREATE).await.map_err(err)?;
                    let start = Instant::now();
                    let mut tx = conn.begin().await.map_err(err)?;
                    for r in &ctx.rows {
                        bind_row!(sqlx::query(SQLITE_INSERT), r)
                            .execute(&mut *tx)
                            .await
                            .map_err(err)?;
                    }
                    tx.commit().await.map_err(err)?;
                    Ok(Iteration {
                        elapsed_ns: ns_between(start, Instant::now()),
                        phases: None,
                    })
                })
            }))
        }
        "postgres" => {
            let url = ctx.postgres_url.clone().ok_or("no PostgreSQL URL")?;
            let options: PgConnectOptions = url.parse().map_err(|e| pg_err(&url, e))?;
            let conn = ctx
                .rt
                .block_on(options.connect())
                .map_err(|e| pg_err(&url, e))?;
            let mut guard = PgTable {
                conn: Some(conn),
                rt: ctx.rt,
            };
            Ok(Box::new(move |_| {
                let conn = guard.conn.as_mut().expect("open until dropped");
                ctx.rt.block_on(async {
                    conn.execute(DROP).await.map_err(|e| pg_err(&url, e))?;
                    conn.execute(POSTGRES_CREATE)
                        .await
                        .map_err(|e| pg_err(&url, e))?;
                    let start = Instant::now();
                    let mut tx = conn.begin().await.map_err(|e| pg_err(&url, e))?;
                    for r in &ctx.rows {
                        bind_row!(sqlx::query(POSTGRES_INSERT), r)
                            .execute(&mut *tx)
                            .await
                            .map_err(|e| pg_err(&url, e))?;
                    }
                    tx.commit().await.map_err(|e| pg_err(&url, e))?;
                    Ok(Iteration {
                        elapsed_ns: ns_between(start, Instant::now()),
                        phases: None,
                    })
                })
            }))
        }
        other => Err(format!(
            "bench {other:?} has no implementation in harness-sqlx"
        )),
    }
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
