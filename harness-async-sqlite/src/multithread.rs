//! `multithread_pool_checkout` through async-sqlite: `concurrency` tasks share the pool, each
//! looking its chunk of ids up (the pool has no checkout to measure apart).

use std::hint::black_box;
use std::time::Instant;

use bench_core::BenchError;
use bench_core::catalog::{BenchSpec, CatalogError, Target};
use bench_core::dataset::{LOOKUP_WORK, lookup_work};
use bench_core::measure::drive::TaskResult;
use bench_core::measure::trace::ns_between;
use bench_core::measure::{Bench, IterFn};
use bench_core::protocol::Event;
use bench_core::workload::{RunContext, Session, Workload};

use crate::lookup::{Ctx, SUBJECT, err};
use crate::on_rusqlite::cached_lookup;

/// async-sqlite's `multithread_pool_checkout`.
pub struct Multithread;

fn spec() -> &'static Target {
    bench_core::workloads::multithread::spec()
}

impl Workload for Multithread {
    fn spec(&self) -> &'static Target {
        spec()
    }

    fn open<'a>(
        &'a self,
        run: &'a RunContext<'a>,
        emit: &mut dyn FnMut(Event),
    ) -> Result<Box<dyn Session + 'a>, BenchError> {
        Ok(Box::new(FanOuts(Ctx::open(run, emit)?)))
    }
}

struct FanOuts(Ctx);

impl Session for FanOuts {
    fn ops(&self) -> u64 {
        self.0.ids.len() as u64
    }

    fn skip(&self, bench: &BenchSpec) -> Option<String> {
        bench_core::settings::skip_reason(bench.subject, self.0.concurrency, &self.0.settings)
    }

    fn bench(&self, spec: &BenchSpec) -> Result<Bench<'_>, BenchError> {
        let ctx = &self.0;
        if (spec.subject, spec.phase) != (SUBJECT, None) {
            return Err(CatalogError::no_implementation(
                self::spec(),
                spec,
                "not an async-sqlite bench",
            )
            .into());
        }
        Ok(
            Bench::new(parallel_select(ctx), lookup_work(&ctx.ids), LOOKUP_WORK)
                .with_settings(ctx.read_back.clone()),
        )
    }
}

/// One fan-out of `concurrency` tasks over the ids, each `pool.conn` per lookup.
fn parallel_select(ctx: &Ctx) -> IterFn<'_> {
    Box::new(move |h| {
        bench_core::measure::drive::fan_out(&ctx.rt, ctx.ids.len(), ctx.concurrency, h, |a, b| {
            let (pool, ids) = (ctx.pool.clone(), ctx.ids.clone());
            async move {
                let mut out = TaskResult {
                    latencies: Vec::with_capacity(b - a),
                    work: 0,
                };
                let mut prev = Instant::now();
                for &id in &ids[a..b] {
                    let row = pool
                        .conn(move |c| cached_lookup(c, id))
                        .await
                        .map_err(err)?;
                    out.work = out.work.wrapping_add(black_box(row).checksum());
                    let t = Instant::now();
                    out.latencies.push(ns_between(prev, t));
                    prev = t;
                }
                Ok(out)
            }
        })
    })
}
