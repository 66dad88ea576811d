//! bench-core's implementation of `async_contention`: every strategy of the middleware and the
//! crates that run rusqlite closures, each database with its own pool (one connection per
//! task). The scenario itself (databases, runtime, writers, readers, canary, work check) is
//! [`crate::on_rusqlite::contention`], shared with harness-async-sqlite.

use crate::backends::middleware::Middleware;
use crate::catalog::{BenchSpec, CatalogError, Subject, Target};
use crate::error::BenchError;
use crate::measure::Bench;
use crate::on_rusqlite::contention::{Prepared, Setup};
use crate::protocol::Event;
use crate::workload::{RunContext, ScenarioRun, Session, Workload};

/// bench-core's `async_contention`.
pub struct Core;

impl Workload for Core {
    fn spec(&self) -> &'static Target {
        super::spec()
    }

    fn open<'a>(
        &'a self,
        run: &'a RunContext<'a>,
        _emit: &mut dyn FnMut(Event),
    ) -> Result<Box<dyn Session + 'a>, BenchError> {
        Ok(Box::new(Ctx(Setup::open(run, "core")?)))
    }
}

struct Ctx(Setup);

impl Session for Ctx {
    fn ops(&self) -> u64 {
        1
    }

    fn skip(&self, bench: &BenchSpec) -> Option<String> {
        let p = &self.0.params;
        if let Subject::Middleware(s) = bench.subject
            && let Some(why) = crate::catalog::pool_mismatch(&p.pool, s)
        {
            return Some(why);
        }
        #[cfg(feature = "crates")]
        if bench.subject == Subject::Crate(crate::catalog::Shipped::SqlMiddleware)
            && p.pool() > crate::backends::crates::SQL_MIDDLEWARE_POOL
        {
            return Some(format!(
                "sql-middleware's pool holds {} connections a database, and {} readers and a writer each hold one (lower readers)",
                crate::backends::crates::SQL_MIDDLEWARE_POOL,
                p.readers
            ));
        }
        crate::settings::skip_reason(bench.subject, p.pool(), &self.0.settings)
    }

    fn bench(&self, spec: &BenchSpec) -> Result<Bench<'_>, BenchError> {
        Err(CatalogError::no_implementation(super::spec(), spec, "a scenario, not sampled").into())
    }

    fn scenario(&self, spec: &BenchSpec) -> Result<Box<dyn ScenarioRun + '_>, BenchError> {
        let setup = &self.0;
        match spec.subject {
            Subject::Middleware(strategy) => {
                // The middleware names the pool it runs on.
                let pool = crate::catalog::Pool::chosen(&setup.params.pool, strategy);
                let backend = pool.label().to_string();
                Ok(Box::new(Prepared::new(setup, spec, backend, |o| {
                    Ok(Middleware::on_pool(
                        o.path.to_path_buf(),
                        strategy,
                        pool,
                        o.connections,
                        setup.params.spin,
                        o.settings,
                        o.rt.handle().clone(),
                    )?)
                })?))
            }
            #[cfg(feature = "crates")]
            Subject::Crate(krate) => {
                use crate::backends::crates as c;
                use crate::catalog::Shipped;
                // A crate names itself.
                let backend = spec.backend().to_string();
                match krate {
                    Shipped::TokioRusqlite => {
                        Ok(Box::new(Prepared::new(setup, spec, backend, |o| {
                            o.rt.block_on(c::TokioRusqlite::open(o.path, o.settings, o.connections))
                        })?))
                    }
                    Shipped::R2d2SpawnBlocking | Shipped::R2d2BlockInPlace => {
                        Ok(Box::new(Prepared::new(setup, spec, backend, |o| {
                            c::R2d2::open(o.path, o.settings, o.connections, c::hop(krate))
                        })?))
                    }
                    Shipped::SqlMiddleware => {
                        Ok(Box::new(Prepared::new(setup, spec, backend, |o| {
                            o.rt.block_on(c::SqlMiddleware::open(o.path, o.settings))
                        })?))
                    }
                    _ => Err(c::elsewhere(krate)),
                }
            }
            _ => {
                Err(CatalogError::no_implementation(super::spec(), spec, "not a core bench").into())
            }
        }
    }
}
