//! `single_row_lookup` through sql-middleware on turso: the lookup, and the phases it lets one
//! measure apart (checkout, decode, parameter conversion). The pool on the shared dataset is
//! also what the multithread fan-out uses.

use std::hint::black_box;
use std::sync::Arc;

use bench_core::BenchError;
use bench_core::catalog::{
    BenchSpec, CatalogError, LOOKUPS_PER_CHECKOUT, Shipped, Subject, TRACE_EVERY, Target,
};
use bench_core::dataset::{LOOKUP_WORK, lookup_work};
use bench_core::measure::drive::{self, LookupPath, on_runtime};
use bench_core::measure::trace::{Phase, ns_between};
use bench_core::measure::{Bench, IterFn, Iteration};
use bench_core::protocol::Event;
use bench_core::settings::SqliteSettings;
use bench_core::workload::{RunContext, Session, Workload};
use sql_middleware::RowValues as V;

use crate::on_sql_middleware::{lookup_row, select_by_id};
use crate::pool::{TursoPool, err};

/// The subject every bench of this harness measures.
pub const SUBJECT: Subject = Subject::Crate(Shipped::SqlMiddlewareTurso);

/// sql-middleware/turso's `single_row_lookup`.
pub struct Lookup;

impl Workload for Lookup {
    fn spec(&self) -> &'static Target {
        bench_core::workloads::single_row_lookup::spec()
    }

    fn open<'a>(
        &'a self,
        run: &'a RunContext<'a>,
        emit: &mut dyn FnMut(Event),
    ) -> Result<Box<dyn Session + 'a>, BenchError> {
        Ok(Box::new(Ctx::open(run, emit)?))
    }
}

/// The pool on the shared dataset and the ids of a pass.
pub struct Ctx {
    pub rt: tokio::runtime::Runtime,
    pub pool: Arc<TursoPool>,
    pub ids: Arc<Vec<i64>>,
    /// Tasks of a fan-out.
    pub concurrency: usize,
    per_checkout: usize,
    trace_every: usize,
    pub settings: SqliteSettings,
    /// What the pool's connections read back.
    pub read_back: std::collections::BTreeMap<String, String>,
}

impl Ctx {
    /// Builds or reuses the target's dataset (through turso) and opens the pool on it.
    pub fn open(run: &RunContext<'_>, emit: &mut dyn FnMut(Event)) -> Result<Ctx, BenchError> {
        let rt = drive::runtime(None)?;
        let k = &run.plan.knobs;
        let ensure = |dir: &std::path::Path,
                      key: &bench_core::dataset::DatasetKey,
                      on_build: &mut dyn FnMut(&std::path::Path)| {
            crate::dataset::ensure(&rt, dir, key, on_build)
        };
        let (path, ids) = run.lookup_dataset(emit, &ensure)?;
        let (pool, read_back) = rt.block_on(TursoPool::open(&path, &run.sqlite))?;
        Ok(Ctx {
            rt,
            pool: Arc::new(pool),
            ids: Arc::new(ids),
            concurrency: k.count_if(&bench_core::catalog::CONCURRENCY).unwrap_or(1) as usize,
            // multithread_pool_checkout has no such knob: one checkout per task there.
            per_checkout: k.count_if(&LOOKUPS_PER_CHECKOUT).unwrap_or(1) as usize,
            trace_every: k.count_if(&TRACE_EVERY).unwrap_or(1) as usize,
            settings: run.sqlite.clone(),
            read_back,
        })
    }
}

impl Session for Ctx {
    fn ops(&self) -> u64 {
        self.ids.len() as u64
    }

    fn skip(&self, bench: &BenchSpec) -> Option<String> {
        bench_core::settings::skip_reason(bench.subject, self.concurrency, &self.settings)
    }

    fn bench(&self, spec: &BenchSpec) -> Result<Bench<'_>, BenchError> {
        if spec.subject != SUBJECT {
            return Err(CatalogError::no_implementation(
                bench_core::workloads::single_row_lookup::spec(),
                spec,
                "not a bench of sql-middleware on turso",
            )
            .into());
        }
        let ids = &self.ids;
        let bench = match spec.phase {
            None => Bench::new(self.lookups(), lookup_work(ids), LOOKUP_WORK),
            Some(Phase::Checkout) => Bench::new(self.checkouts(), ids.len() as u64, "checkouts"),
            Some(Phase::Decode) => {
                Bench::new(self.decodes()?, lookup_work(ids), "rows decoded (checksum)")
            }
            Some(Phase::Bind) => Bench::new(
                self.conversions(),
                ids.iter().map(|&id| id as u64).sum(),
                "ids converted (sum)",
            ),
            Some(_) => {
                return Err(CatalogError::no_implementation(
                    bench_core::workloads::single_row_lookup::spec(),
                    spec,
                    "a phase sql-middleware on turso does not let one measure apart",
                )
                .into());
            }
        };
        Ok(bench.with_settings(self.read_back.clone()))
    }
}

impl Ctx {
    /// Whole lookups, a checkout every `lookups_per_checkout`; untraced: the crate hides its
    /// phases.
    fn lookups(&self) -> IterFn<'_> {
        let plan = drive::LookupPlan {
            ids: self.ids.clone(),
            per_checkout: self.per_checkout,
            trace_every: self.trace_every,
        };
        drive::lookup_passes(self.pool.clone(), &self.rt, plan, false)
    }

    /// `get_connection()` and drop, once per id.
    fn checkouts(&self) -> IterFn<'_> {
        Box::new(move |_| {
            let (pool, n) = (self.pool.clone(), self.ids.len());
            on_runtime(&self.rt, async move {
                let start = std::time::Instant::now();
                for _ in 0..n {
                    drop(black_box(LookupPath::checkout(&*pool).await?));
                }
                Ok(Iteration::new(
                    ns_between(start, std::time::Instant::now()),
                    n as u64,
                ))
            })
        })
    }

    /// One row of a result set the query builder returned, decoded once per id (the result
    /// sets made before the clock starts).
    fn decodes(&self) -> Result<IterFn<'_>, BenchError> {
        let sets = self.rt.block_on(async {
            let mut c = self.pool.checkout().await?;
            let mut sets = Vec::with_capacity(self.ids.len());
            for &id in self.ids.iter() {
                sets.push(select_by_id(&mut c, id).await?);
            }
            Ok::<_, BenchError>(sets)
        })?;
        Ok(Box::new(move |_| {
            let start = std::time::Instant::now();
            let mut work = 0u64;
            for rs in &sets {
                work = work.wrapping_add(black_box(lookup_row(black_box(rs))?).checksum());
            }
            Ok(Iteration::new(
                ns_between(start, std::time::Instant::now()),
                work,
            ))
        }))
    }

    /// The caller's id as turso parameters (`convert_sql_params`), once per id.
    fn conversions(&self) -> IterFn<'_> {
        Box::new(move |_| {
            let start = std::time::Instant::now();
            let mut work = 0u64;
            for &id in self.ids.iter() {
                let values = [V::Int(id)];
                let p = sql_middleware::convert_sql_params::<sql_middleware::turso::Params>(
                    black_box(&values),
                    sql_middleware::ConversionMode::Query,
                )
                .map_err(err)?;
                black_box(&p);
                work = work.wrapping_add(id as u64);
            }
            Ok(Iteration::new(
                ns_between(start, std::time::Instant::now()),
                work,
            ))
        })
    }
}
