//! `key_value` through sql-middleware on turso: the same store, cases and checks as
//! bench-core's, one connection of its pool held per task (it holds 10), on the bench's scratch
//! database (a file, or turso's `:memory:` the pool's connections share).

use bench_core::BenchError;
use bench_core::catalog::{BenchSpec, Subject, Target};
use bench_core::measure::Bench;
use bench_core::mirror::{Mirror, On};
use bench_core::workloads::bulk_insert::rows::Place;
use bench_core::workloads::key_value::plan::{self, Data};
use bench_core::workloads::key_value::{self};

use crate::lookup::SUBJECT;
use crate::on_sql_middleware::MiddlewareKv;
use crate::pool::{TursoPool, turso_path};

/// sql-middleware/turso's `key_value`.
pub struct KeyValue;

impl Mirror for KeyValue {
    type Params = key_value::Params;
    const REFUSED: &'static str = "not a bench of sql-middleware on turso";

    fn target(&self) -> &'static Target {
        key_value::spec()
    }

    fn serves(&self, subject: Subject) -> bool {
        subject == SUBJECT
    }

    fn connections(&self) -> usize {
        crate::pool::POOL
    }

    fn bench<'s>(&'s self, ctx: &'s Ctx, spec: &BenchSpec) -> Result<Bench<'s>, BenchError> {
        let case = key_value::case_for(spec)?;
        let data = Data::new(case, ctx.p.keys, ctx.p.seed);
        let tasks = case.tasks();
        let place = Place::new(&ctx.p.dir, ctx.p.memory, "kv", spec.name);
        let (pool, handles, settings) = ctx.rt.block_on(async {
            let (pool, settings) = TursoPool::open(turso_path(&place), &ctx.p.settings).await?;
            let mut handles = Vec::new();
            for _ in 0..tasks {
                handles.push(MiddlewareKv(pool.hold().await?));
            }
            Ok::<_, BenchError>((pool, handles, settings))
        })?;
        Ok(plan::bench(&ctx.rt, handles, case, data, (place, pool))?.with_settings(settings))
    }
}

type Ctx = On<key_value::Params>;
