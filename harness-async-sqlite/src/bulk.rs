//! `bulk_insert` through async-sqlite: one `Client` on a scratch file (like bench-core's), the
//! rusqlite transaction of rows (or, under `method=batch_text`, of their INSERT text through
//! `execute_batch`) run in its `conn_mut` closure.

use std::hint::black_box;
use std::time::Instant;

use bench_core::BenchError;
use bench_core::catalog::{BenchSpec, Subject, Target};
use bench_core::measure::drive::on_runtime;
use bench_core::measure::trace::ns_between;
use bench_core::measure::{Bench, IterFn, Iteration};
use bench_core::mirror::{Mirror, On};
use bench_core::workloads::bulk_insert::rows::Scratch;
use bench_core::workloads::bulk_insert::{self, INSERT_WORK, Method};

use crate::lookup::{SUBJECT, err, open_client};
use crate::on_rusqlite::{bulk_batch_all, bulk_insert_all, bulk_reset};

/// async-sqlite's `bulk_insert`.
pub struct Bulk;

impl Mirror for Bulk {
    type Params = bulk_insert::Params;
    const REFUSED: &'static str = "not an async-sqlite bench";

    fn target(&self) -> &'static Target {
        bulk_insert::spec()
    }

    fn serves(&self, subject: Subject) -> bool {
        subject == SUBJECT
    }

    fn bench<'s>(&'s self, ctx: &'s Ctx, spec: &BenchSpec) -> Result<Bench<'s>, BenchError> {
        let scratch = Scratch::new(&ctx.p.dir, spec.name);
        let (client, settings) = ctx.rt.block_on(open_client(&scratch.0, &ctx.p.settings))?;
        let iter: IterFn<'_> = Box::new(move |_| {
            let _scratch = &scratch;
            let (client, rows, text, method) = (
                client.clone(),
                ctx.p.rows.clone(),
                ctx.p.batch.clone(),
                ctx.p.method,
            );
            on_runtime(&ctx.rt, async move {
                client.conn(bulk_reset).await.map_err(err)?;
                let start = Instant::now();
                let changed = match method {
                    Method::Prepared => client.conn_mut(move |c| bulk_insert_all(c, &rows)).await,
                    // The rows' INSERT text through rusqlite's `execute_batch` in one
                    // transaction, in the client's closure (the batch call async-sqlite has).
                    Method::BatchText => {
                        client
                            .conn_mut(move |c| bulk_batch_all(c, black_box(&text)))
                            .await
                    }
                }
                .map_err(err)?;
                Ok(Iteration::new(ns_between(start, Instant::now()), changed))
            })
        });
        Ok(Bench::new(iter, ctx.p.rows.len() as u64, INSERT_WORK).with_settings(settings))
    }
}

type Ctx = On<bulk_insert::Params>;
