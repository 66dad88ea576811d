//! `key_value` through sql-middleware on turso: the same store, cases and checks as
//! bench-core's, one connection of its pool held per task (it holds 10), on the bench's scratch
//! database (a file, or turso's `:memory:` the pool's connections share).

use bench_core::BenchError;
use bench_core::catalog::{BenchSpec, CatalogError, Target};
use bench_core::measure::Bench;
use bench_core::protocol::Event;
use bench_core::workload::{RunContext, Session, Workload};
use bench_core::workloads::bulk_insert::rows::Place;
use bench_core::workloads::key_value::plan::{self, Case, Data};
use bench_core::workloads::key_value::{self, Params};

use crate::lookup::SUBJECT;
use crate::on_sql_middleware::MiddlewareKv;
use crate::pool::{TursoPool, turso_path};

/// sql-middleware/turso's `key_value`.
pub struct KeyValue;

impl Workload for KeyValue {
    fn spec(&self) -> &'static Target {
        key_value::spec()
    }

    fn open<'a>(
        &'a self,
        run: &'a RunContext<'a>,
        _emit: &mut dyn FnMut(Event),
    ) -> Result<Box<dyn Session + 'a>, BenchError> {
        Ok(Box::new(Ctx {
            p: Params::new(run)?,
            rt: bench_core::measure::drive::runtime(None)?,
        }))
    }
}

struct Ctx {
    p: Params,
    rt: tokio::runtime::Runtime,
}

impl Session for Ctx {
    fn ops(&self) -> u64 {
        self.p.keys
    }

    fn skip(&self, spec: &BenchSpec) -> Option<String> {
        bench_core::settings::skip_reason(spec.subject, crate::pool::POOL, &self.p.settings)
    }

    fn bench(&self, spec: &BenchSpec) -> Result<Bench<'_>, BenchError> {
        let case = key_value::case_of(spec)
            .filter(|_| spec.subject == SUBJECT)
            .ok_or_else(|| {
                CatalogError::no_implementation(
                    key_value::spec(),
                    spec,
                    "not a bench of sql-middleware on turso",
                )
            })?;
        let data = Data::new(case, self.p.keys, self.p.seed);
        let tasks = match case {
            Case::ConcurrentReads(n) => n as usize,
            _ => 1,
        };
        let place = Place::new(&self.p.dir, self.p.memory, "kv", spec.name);
        let (pool, handles, settings) = self.rt.block_on(async {
            let (pool, settings) = TursoPool::open(turso_path(&place), &self.p.settings).await?;
            let mut handles = Vec::new();
            for _ in 0..tasks {
                handles.push(MiddlewareKv(pool.hold().await?));
            }
            Ok::<_, BenchError>((pool, handles, settings))
        })?;
        Ok(plan::bench(&self.rt, handles, case, data, (place, pool))?.with_settings(settings))
    }
}
