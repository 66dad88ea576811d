//! `crud_overhead` through sql-middleware on turso: one connection of its pool on the bench's
//! scratch database (a file, or turso's `:memory:`), every statement through its query builder
//! (bench-core's code over a held connection); bench-core's plan replayed and checked against
//! its model.

use bench_core::BenchError;
use bench_core::catalog::{BenchSpec, Subject, Target};
use bench_core::measure::Bench;
use bench_core::mirror::{Mirror, On};
use bench_core::workloads::bulk_insert::rows::Place;
use bench_core::workloads::crud_overhead::plan::{Dialect, Sql};
use bench_core::workloads::crud_overhead::{self};

use crate::lookup::SUBJECT;
use crate::on_sql_middleware::MiddlewareCrud;
use crate::pool::{TursoPool, turso_path};

/// sql-middleware/turso's `crud_overhead`.
pub struct CrudOverhead;

impl Mirror for CrudOverhead {
    type Params = crud_overhead::Shared;
    const REFUSED: &'static str = "not a bench of sql-middleware on turso";

    fn target(&self) -> &'static Target {
        crud_overhead::spec()
    }

    fn serves(&self, subject: Subject) -> bool {
        subject == SUBJECT
    }

    fn bench<'s>(&'s self, ctx: &'s Ctx, spec: &BenchSpec) -> Result<Bench<'s>, BenchError> {
        let case = crud_overhead::case_for(spec)?;
        let place = Place::new(&ctx.p.dir, ctx.p.memory, "crud", spec.name);
        let (pool, held, settings) = ctx.rt.block_on(async {
            let (pool, settings) = TursoPool::open(turso_path(&place), &ctx.p.settings).await?;
            let held = pool.hold().await?;
            Ok::<_, BenchError>((pool, held, settings))
        })?;
        let sql = Sql::for_case(Dialect::Sqlite, case, ctx.p.sweep.len());
        let iter = ctx
            .p
            .iteration(&ctx.rt, MiddlewareCrud(held), sql, case, (place, pool))?;
        Ok(ctx.p.bench(iter, case, settings))
    }
}

type Ctx = On<crud_overhead::Shared>;
