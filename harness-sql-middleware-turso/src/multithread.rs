//! `multithread_pool_checkout` through sql-middleware on turso: `concurrency` tasks share its
//! pool, each checking a connection out and looking its chunk up; and checkouts alone.

use bench_core::BenchError;
use bench_core::catalog::{BenchSpec, CatalogError, Target};
use bench_core::dataset::{LOOKUP_WORK, lookup_work};
use bench_core::measure::Bench;
use bench_core::measure::drive;
use bench_core::protocol::Event;
use bench_core::workload::{RunContext, Session, Workload};

use crate::lookup::{Ctx, SUBJECT};

/// sql-middleware/turso's `multithread_pool_checkout`.
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
        let bench = match (spec.subject, spec.phase) {
            (SUBJECT, None) => Bench::new(
                drive::parallel_select(&ctx.rt, ctx.ids.clone(), ctx.concurrency, ctx.pool.clone()),
                lookup_work(&ctx.ids),
                LOOKUP_WORK,
            ),
            (SUBJECT, Some(_)) => {
                let pool = ctx.pool.clone();
                let once = move || {
                    let pool = pool.clone();
                    async move { pool.checkout().await.map(drop) }
                };
                Bench::new(
                    drive::checkouts(&ctx.rt, ctx.ids.len(), ctx.concurrency, once),
                    ctx.ids.len() as u64,
                    "connections checked out",
                )
            }
            _ => {
                return Err(CatalogError::no_implementation(
                    self::spec(),
                    spec,
                    "not a bench of sql-middleware on turso",
                )
                .into());
            }
        };
        Ok(bench.with_settings(ctx.read_back.clone()))
    }
}
