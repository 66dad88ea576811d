//! `crud_overhead` through async-sqlite: one `Client` on the bench's scratch database (a file,
//! or memdb, like bench-core's), every statement (from the connection's cache) one `conn` call
//! to its thread; bench-core's plan replayed and checked against its model.

use std::sync::Arc;

use bench_core::BenchError;
use bench_core::catalog::{BenchSpec, Subject, Target};
use bench_core::measure::Bench;
use bench_core::mirror::{Mirror, On};
use bench_core::workloads::bulk_insert::rows::Place;
use bench_core::workloads::crud_overhead::plan::{Dialect, Sql};
use bench_core::workloads::crud_overhead::{self};

use crate::lookup::{OnClient, SUBJECT, open_client};
use crate::on_rusqlite::crud::HopCrud;

/// async-sqlite's `crud_overhead`.
pub struct CrudOverhead;

impl Mirror for CrudOverhead {
    type Params = crud_overhead::Shared;
    const REFUSED: &'static str = "not an async-sqlite bench";

    fn target(&self) -> &'static Target {
        crud_overhead::spec()
    }

    fn serves(&self, subject: Subject) -> bool {
        subject == SUBJECT
    }

    fn bench<'s>(&'s self, ctx: &'s Ctx, spec: &BenchSpec) -> Result<Bench<'s>, BenchError> {
        let case = crud_overhead::case_for(spec)?;
        let place = Place::new(&ctx.p.dir, ctx.p.memory, "crud", spec.name);
        let (client, settings) = ctx
            .rt
            .block_on(open_client(place.path(), &ctx.p.settings))?;
        let sql = Sql::for_case(Dialect::Sqlite, case, ctx.p.sweep.len());
        let crud = HopCrud {
            on: OnClient(client),
            sql: Arc::new(sql.clone()),
        };
        let iter = ctx.p.iteration(&ctx.rt, crud, sql, case, place)?;
        Ok(ctx.p.bench(iter, case, settings))
    }
}

type Ctx = On<crud_overhead::Shared>;
