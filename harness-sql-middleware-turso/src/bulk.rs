//! `bulk_insert` through sql-middleware on turso: its pool on a scratch file (like bench-core's),
//! the rows inserted in one transaction of its own (`begin_transaction`, one prepared insert
//! run per row with its `RowValues`, commit), as its README writes one.

use std::sync::Arc;
use std::time::Instant;

use bench_core::BenchError;
use bench_core::catalog::{BenchSpec, Subject, Target};
use bench_core::measure::drive::on_runtime;
use bench_core::measure::trace::ns_between;
use bench_core::measure::{Bench, IterFn, Iteration};
use bench_core::mirror::{Mirror, On};
use bench_core::workloads::bulk_insert::rows::{
    BulkRow, CHECKPOINT, DROP, SQLITE_CREATE, SQLITE_INSERT, Scratch,
};
use bench_core::workloads::bulk_insert::{self, INSERT_WORK};
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
            let (pool, rows) = (pool.clone(), ctx.p.rows.clone());
            on_runtime(&ctx.rt, async move {
                let mut c = pool.checkout().await?;
                // A fresh table and an empty WAL, before the clock starts.
                c.execute_batch(&format!("{DROP}; {SQLITE_CREATE};"))
                    .await
                    .map_err(err)?;
                // (It answers a row: a query, not a batch.)
                c.query(CHECKPOINT).select().await.map_err(err)?;
                let start = Instant::now();
                let changed = insert_all(&mut c, &rows).await?;
                Ok(Iteration::new(ns_between(start, Instant::now()), changed))
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
