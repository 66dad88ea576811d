//! `key_value` through async-sqlite: the same store, cases and checks as bench-core's, one
//! `Client` (and its thread) per task, on the bench's scratch database (a file, or one memdb
//! database the tasks share, like bench-core's).

use bench_core::BenchError;
use bench_core::catalog::{BenchSpec, Subject, Target};
use bench_core::measure::Bench;
use bench_core::mirror::{Mirror, On};
use bench_core::workloads::bulk_insert::rows::Place;
use bench_core::workloads::key_value::plan::{self, Data};
use bench_core::workloads::key_value::{self};

use crate::lookup::{OnClient, SUBJECT, open_client};
use crate::on_rusqlite::kv::HopKv;

/// async-sqlite's `key_value`.
pub struct KeyValue;

impl Mirror for KeyValue {
    type Params = key_value::Params;
    const REFUSED: &'static str = "not an async-sqlite bench";

    fn target(&self) -> &'static Target {
        key_value::spec()
    }

    fn serves(&self, subject: Subject) -> bool {
        subject == SUBJECT
    }

    fn bench<'s>(&'s self, ctx: &'s Ctx, spec: &BenchSpec) -> Result<Bench<'s>, BenchError> {
        let case = key_value::case_for(spec)?;
        let data = Data::new(case, ctx.p.keys, ctx.p.seed);
        let tasks = case.tasks();
        let place = Place::new(&ctx.p.dir, ctx.p.memory, "kv", spec.name);
        let (handles, settings) = ctx.rt.block_on(async {
            let mut handles = Vec::new();
            let mut settings = None;
            for _ in 0..tasks {
                let (client, read) = open_client(place.path(), &ctx.p.settings).await?;
                settings.get_or_insert(read);
                handles.push(HopKv(OnClient(client)));
            }
            Ok::<_, BenchError>((handles, settings.unwrap_or_default()))
        })?;
        Ok(plan::bench(&ctx.rt, handles, case, data, place)?.with_settings(settings))
    }
}

type Ctx = On<key_value::Params>;
