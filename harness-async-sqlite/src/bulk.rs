//! `bulk_insert` through async-sqlite: one `Client` on a scratch file (like bench-core's), the
//! rusqlite transaction of rows run in its `conn_mut` closure.

use std::time::Instant;

use bench_core::BenchError;
use bench_core::catalog::{BenchSpec, CatalogError, Target};
use bench_core::measure::drive::on_runtime;
use bench_core::measure::trace::ns_between;
use bench_core::measure::{Bench, IterFn, Iteration};
use bench_core::protocol::Event;
use bench_core::workload::{RunContext, Session, Workload};
use bench_core::workloads::bulk_insert::rows::Scratch;
use bench_core::workloads::bulk_insert::{self, INSERT_WORK};

use crate::lookup::{SUBJECT, err, open_client};
use crate::on_rusqlite::{bulk_insert_all, bulk_reset};

/// async-sqlite's `bulk_insert`.
pub struct Bulk;

impl Workload for Bulk {
    fn spec(&self) -> &'static Target {
        bulk_insert::spec()
    }

    fn open<'a>(
        &'a self,
        run: &'a RunContext<'a>,
        _emit: &mut dyn FnMut(Event),
    ) -> Result<Box<dyn Session + 'a>, BenchError> {
        Ok(Box::new(Ctx {
            rt: bench_core::measure::drive::runtime(None)?,
            p: bulk_insert::Params::new(run)?,
        }))
    }
}

struct Ctx {
    rt: tokio::runtime::Runtime,
    p: bulk_insert::Params,
}

impl Session for Ctx {
    fn ops(&self) -> u64 {
        self.p.rows.len() as u64
    }

    fn skip(&self, spec: &BenchSpec) -> Option<String> {
        // One connection: no pool to share an exclusive lock with.
        bench_core::settings::skip_reason(spec.subject, 1, &self.p.settings)
    }

    fn bench(&self, spec: &BenchSpec) -> Result<Bench<'_>, BenchError> {
        if spec.subject != SUBJECT {
            return Err(CatalogError::no_implementation(
                bulk_insert::spec(),
                spec,
                "not an async-sqlite bench",
            )
            .into());
        }
        let scratch = Scratch::new(&self.p.dir, spec.name);
        let (client, settings) = self
            .rt
            .block_on(open_client(&scratch.0, &self.p.settings))?;
        let iter: IterFn<'_> = Box::new(move |_| {
            let _scratch = &scratch;
            let (client, rows) = (client.clone(), self.p.rows.clone());
            on_runtime(&self.rt, async move {
                client.conn(bulk_reset).await.map_err(err)?;
                let start = Instant::now();
                let changed = client
                    .conn_mut(move |c| bulk_insert_all(c, &rows))
                    .await
                    .map_err(err)?;
                Ok(Iteration::new(ns_between(start, Instant::now()), changed))
            })
        });
        Ok(Bench::new(iter, self.p.rows.len() as u64, INSERT_WORK).with_settings(settings))
    }
}
