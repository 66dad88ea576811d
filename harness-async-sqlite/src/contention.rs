//! `async_contention` through async-sqlite: the scenario bench-core runs (the same databases,
//! writers, readers, canary and work check, [`crate::on_rusqlite::contention`]), each task
//! holding a `Client` of its own (a connection and its thread), each call through `conn`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use bench_core::BenchError;
use bench_core::catalog::{BenchSpec, CatalogError, Target};
use bench_core::measure::Bench;
use bench_core::protocol::Event;
use bench_core::settings::SqliteSettings;
use bench_core::workload::{RunContext, ScenarioRun, Session, Workload};
use bench_core::workloads::async_contention;

use crate::lookup::{SUBJECT, err, open_client};
use crate::on_rusqlite::contention::{Prepared, Reach, Setup};

/// async-sqlite's `async_contention`.
pub struct Contention;

impl Workload for Contention {
    fn spec(&self) -> &'static Target {
        async_contention::spec()
    }

    fn open<'a>(
        &'a self,
        run: &'a RunContext<'a>,
        _emit: &mut dyn FnMut(Event),
    ) -> Result<Box<dyn Session + 'a>, BenchError> {
        Ok(Box::new(Ctx(Setup::open(run, "async-sqlite")?)))
    }
}

struct Ctx(Setup);

impl Session for Ctx {
    fn ops(&self) -> u64 {
        1
    }

    fn bench(&self, spec: &BenchSpec) -> Result<Bench<'_>, BenchError> {
        Err(CatalogError::no_implementation(
            async_contention::spec(),
            spec,
            "a scenario, not sampled",
        )
        .into())
    }

    fn scenario(&self, spec: &BenchSpec) -> Result<Box<dyn ScenarioRun + '_>, BenchError> {
        if spec.subject != SUBJECT {
            return Err(CatalogError::no_implementation(
                async_contention::spec(),
                spec,
                "not an async-sqlite bench",
            )
            .into());
        }
        let backend = spec.backend().to_string();
        Ok(Box::new(Prepared::new(&self.0, spec, backend, |o| {
            Ok(Clients {
                path: o.path.to_path_buf(),
                settings: o.settings.clone(),
            })
        })?))
    }
}

/// A database reached through async-sqlite: each task opens its own `Client`.
struct Clients {
    path: PathBuf,
    settings: SqliteSettings,
}

impl Reach for Clients {
    type Held = async_sqlite::Client;

    async fn hold(&self) -> Result<async_sqlite::Client, BenchError> {
        Ok(open_client(&self.path, &self.settings).await?.0)
    }

    async fn run<T: Send + 'static>(
        &self,
        held: &mut async_sqlite::Client,
        f: impl FnOnce(&rusqlite::Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, BenchError> {
        held.conn(f).await.map_err(err)
    }

    async fn read_back(&self) -> Result<BTreeMap<String, String>, BenchError> {
        let (client, settings) = open_client(&self.path, &self.settings).await?;
        client.close().await.map_err(err)?;
        Ok(settings)
    }
}
