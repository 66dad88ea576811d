//! `bulk_insert` through sql-middleware on turso: its pool on a scratch file (like bench-core's),
//! the rows inserted in one transaction of its own (`begin_transaction`, one prepared insert
//! run per row with its `RowValues`, commit), as its README writes one; under
//! `method=batch_text`, the rows' INSERT text through its `execute_batch`.

use std::sync::Arc;
use std::time::Instant;

use bench_core::BenchError;
use bench_core::catalog::{BenchSpec, Subject, Target};
use bench_core::measure::drive::on_runtime;
use bench_core::measure::trace::ns_between;
use bench_core::measure::{Bench, IterFn, Iteration};
use bench_core::mirror::{Mirror, On};
use bench_core::workloads::bulk_insert::rows::COUNT;
use bench_core::workloads::bulk_insert::rows::{
    BulkRow, CHECKPOINT, DROP, SQLITE_CREATE, SQLITE_INSERT, Scratch,
};
use bench_core::workloads::bulk_insert::{self, INSERT_WORK, Method};
use sql_middleware::MiddlewarePoolConnection;

use crate::lookup::SUBJECT;
use crate::pool::{TursoPool, err};

/// sql-middleware/turso's `bulk_insert`.
pub struct Bulk;

impl Mirror for Bulk {
    type Params = bulk_insert::Params;
    const REFUSED: &'static str = "not a bench of sql-middleware on turso";

    fn target(&self) -> &'static Target {
        bulk_insert::spec()
    }

    fn serves(&self, subject: Subject) -> bool {
        subject == SUBJECT
    }

    fn bench<'s>(&'s self, ctx: &'s Ctx, spec: &BenchSpec) -> Result<Bench<'s>, BenchError> {
        let scratch = Scratch::new(&ctx.p.dir, spec.name);
        let (pool, settings) = ctx
            .rt
            .block_on(TursoPool::open(&scratch.0, &ctx.p.settings))?;
        let pool = Arc::new(pool);
        let iter: IterFn<'_> = Box::new(move |_| {
            let _scratch = &scratch;
            let (pool, rows, text, method) = (
                pool.clone(),
                ctx.p.rows.clone(),
                ctx.p.batch.clone(),
                ctx.p.method,
            );
            on_runtime(&ctx.rt, async move {
                let mut c = pool.checkout().await?;
                // A fresh table and an empty WAL, before the clock starts.
                c.execute_batch(&format!("{DROP}; {SQLITE_CREATE};"))
                    .await
                    .map_err(err)?;
                // (It answers a row: a query, not a batch.)
                c.query(CHECKPOINT).select().await.map_err(err)?;
                let start = Instant::now();
                match method {
                    Method::Prepared => {
                        let changed = insert_all(&mut c, &rows).await?;
                        Ok(Iteration::new(ns_between(start, Instant::now()), changed))
                    }
                    Method::BatchText => {
                        batch_all(&mut c, &text).await?;
                        let elapsed = ns_between(start, Instant::now());
                        // It reports no count: the rows the table holds, after the clock.
                        Ok(Iteration::new(elapsed, count(&mut c).await?))
                    }
                }
            })
        });
        Ok(Bench::new(iter, ctx.p.rows.len() as u64, INSERT_WORK).with_settings(settings))
    }
}

type Ctx = On<bulk_insert::Params>;

/// The rows inserted in one transaction of sql-middleware's on turso.
async fn insert_all(c: &mut MiddlewarePoolConnection, rows: &[BulkRow]) -> Result<u64, BenchError> {
    // The one kind of connection this build of sql-middleware has.
    let MiddlewarePoolConnection::Turso { conn, .. } = c;
    let tx = sql_middleware::turso::begin_transaction(&mut *conn)
        .await
        .map_err(err)?;
    let mut stmt = tx.prepare(SQLITE_INSERT).await.map_err(err)?;
    let mut changed = 0u64;
    for r in rows {
        let p = crate::on_sql_middleware::bulk_values(r, true);
        changed += tx.execute(&mut stmt).params(&p).run().await.map_err(err)? as u64;
    }
    tx.commit().await.map_err(err)?;
    Ok(changed)
}

/// The rows' INSERT text in one transaction of sql-middleware's on turso: `begin_transaction`,
/// the transaction's `execute_batch` (turso's batch call), commit. (The connection's own
/// `execute_batch` opens no transaction: each INSERT would commit alone.)
async fn batch_all(c: &mut MiddlewarePoolConnection, text: &str) -> Result<(), BenchError> {
    let MiddlewarePoolConnection::Turso { conn, .. } = c;
    let tx = sql_middleware::turso::begin_transaction(&mut *conn)
        .await
        .map_err(err)?;
    tx.execute_batch(std::hint::black_box(text))
        .await
        .map_err(err)?;
    tx.commit().await.map_err(err)?;
    Ok(())
}

/// The rows the bench's table holds.
async fn count(c: &mut MiddlewarePoolConnection) -> Result<u64, BenchError> {
    let rs = c.query(COUNT).select().await.map_err(err)?;
    match rs.results.first().and_then(|r| r.get_by_index(0)) {
        Some(sql_middleware::RowValues::Int(n)) => Ok(*n as u64),
        other => Err(BenchError::Other(format!(
            "count(*) of the bulk table read back as {other:?}, not an integer"
        ))),
    }
}
