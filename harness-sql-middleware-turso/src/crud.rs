//! `crud_overhead` through sql-middleware on turso: one connection of its pool on the bench's
//! scratch database (a file, or turso's `:memory:`), every statement through its query builder
//! (bench-core's code over a held connection); bench-core's plan replayed and checked against
//! its model.

use bench_core::BenchError;
use bench_core::catalog::{BenchSpec, CatalogError, Target};
use bench_core::measure::Bench;
use bench_core::protocol::Event;
use bench_core::workload::{RunContext, Session, Workload};
use bench_core::workloads::bulk_insert::rows::Place;
use bench_core::workloads::crud_overhead::plan::{Dialect, Sql};
use bench_core::workloads::crud_overhead::{self, Shared};

use crate::lookup::SUBJECT;
use crate::on_sql_middleware::MiddlewareCrud;
use crate::pool::{TursoPool, turso_path};

/// sql-middleware/turso's `crud_overhead`.
pub struct CrudOverhead;

impl Workload for CrudOverhead {
    fn spec(&self) -> &'static Target {
        crud_overhead::spec()
    }

    fn open<'a>(
        &'a self,
        run: &'a RunContext<'a>,
        _emit: &mut dyn FnMut(Event),
    ) -> Result<Box<dyn Session + 'a>, BenchError> {
        Ok(Box::new(Ctx {
            shared: Shared::new(run),
            rt: bench_core::measure::drive::runtime(None)?,
            dir: run.scratch_dir()?,
        }))
    }
}

struct Ctx {
    shared: Shared,
    rt: tokio::runtime::Runtime,
    dir: std::path::PathBuf,
}

impl Session for Ctx {
    fn ops(&self) -> u64 {
        self.shared.steps.len() as u64
    }

    fn skip(&self, spec: &BenchSpec) -> Option<String> {
        bench_core::settings::skip_reason(spec.subject, 1, &self.shared.settings)
    }

    fn bench(&self, spec: &BenchSpec) -> Result<Bench<'_>, BenchError> {
        let case = crud_overhead::case_of(spec).ok_or_else(|| {
            CatalogError::no_implementation(crud_overhead::spec(), spec, "not a crud case")
        })?;
        if spec.subject != SUBJECT {
            return Err(CatalogError::no_implementation(
                crud_overhead::spec(),
                spec,
                "not a bench of sql-middleware on turso",
            )
            .into());
        }
        let place = Place::new(&self.dir, self.shared.memory, "crud", spec.name);
        let (pool, held, settings) = self.rt.block_on(async {
            let (pool, settings) =
                TursoPool::open(turso_path(&place), &self.shared.settings).await?;
            let held = pool.hold().await?;
            Ok::<_, BenchError>((pool, held, settings))
        })?;
        let sql = Sql::for_case(Dialect::Sqlite, case, self.shared.sweep.len());
        let iter =
            self.shared
                .iteration(&self.rt, MiddlewareCrud(held), sql, case, (place, pool))?;
        Ok(self.shared.bench(iter, case, settings))
    }
}
