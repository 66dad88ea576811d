//! bench-core's `key_value`: the in-memory HashMap, rusqlite, the middleware per strategy and
//! turso, each store on its own scratch database (a file in the run's journal mode, or memdb).

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use super::Params;
use super::plan::{self, Data, Kv, NAMESPACE, NOW, TENANT};
use crate::backends::middleware::Middleware;
use crate::backends::middleware::value::Value;
#[cfg(feature = "turso")]
use crate::backends::values::Turso;
use crate::backends::values::{Pooled, Statements};
use crate::catalog::{BenchSpec, CONCURRENCY, CatalogError, SPIN_US, Subject, Target};
use crate::error::BenchError;
use crate::measure::Bench;
use crate::on_rusqlite::kv::RusqliteKv;
use crate::protocol::Event;
use crate::workload::{RunContext, Session, Workload};
use crate::workloads::bulk_insert::rows::Place;

/// bench-core's `key_value`.
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
        let k = &run.plan.knobs;
        Ok(Box::new(Ctx {
            p: Params::new(run)?,
            concurrency: k.count(&CONCURRENCY) as usize,
            spin: Duration::from_micros(k.count(&SPIN_US)),
            rt: crate::measure::drive::runtime(None)?,
        }))
    }
}

struct Ctx {
    p: Params,
    concurrency: usize,
    spin: Duration,
    rt: tokio::runtime::Runtime,
}

type Settings = std::collections::BTreeMap<String, String>;

impl Session for Ctx {
    fn ops(&self) -> u64 {
        self.p.keys
    }

    fn skip(&self, bench: &BenchSpec) -> Option<String> {
        crate::settings::skip_reason(bench.subject, self.concurrency, &self.p.settings)
    }

    fn bench(&self, spec: &BenchSpec) -> Result<Bench<'_>, BenchError> {
        let case = super::case_for(spec)?;
        let data = Data::new(case, self.p.keys, self.p.seed);
        let tasks = case.tasks();
        let place = Place::new(&self.p.dir, self.p.memory, "kv", spec.name);
        let path = place.path().to_path_buf();
        // Its crate's statement cache counts, where the crate reports them (diesel).
        let mut statements = None;
        let (bench, settings): (Bench<'_>, Settings) = match spec.subject {
            Subject::Memory => {
                let map = Arc::new(RwLock::new(HashMap::new()));
                let handles = (0..tasks).map(|_| MemKv(map.clone())).collect();
                (
                    plan::bench(&self.rt, handles, case, data, place)?,
                    Settings::new(),
                )
            }
            Subject::Rusqlite => {
                let mut handles = Vec::new();
                for _ in 0..tasks {
                    handles.push(RusqliteKv(crate::backends::raw::open(
                        &path,
                        &self.p.settings,
                    )?));
                }
                let settings = crate::backends::raw::read_back(&handles[0].0);
                (plan::bench(&self.rt, handles, case, data, place)?, settings)
            }
            Subject::Middleware(s) => {
                let mw = Arc::new(Middleware::new(
                    path.clone(),
                    s,
                    self.concurrency.max(tasks),
                    self.spin,
                    &self.p.settings,
                    self.rt.handle().clone(),
                )?);
                let settings = self.rt.block_on(mw.read_back())?;
                let handles = (0..tasks)
                    .map(|_| ValuesKv(Pooled::new(mw.clone())))
                    .collect();
                (plan::bench(&self.rt, handles, case, data, place)?, settings)
            }
            #[cfg(feature = "turso")]
            Subject::Turso => {
                let (handles, settings) = self.rt.block_on(async {
                    let db = if self.p.memory {
                        crate::backends::turso::open(std::path::Path::new(":memory:")).await?
                    } else {
                        crate::backends::turso::open(&path).await?
                    };
                    let mut handles = Vec::new();
                    for _ in 0..tasks {
                        let conn = crate::backends::turso::connect(&db, &self.p.settings).await?;
                        handles.push(ValuesKv(Turso {
                            db: db.clone(),
                            conn,
                        }));
                    }
                    let settings = crate::backends::turso::read_back(&handles[0].0.conn).await;
                    Ok::<_, BenchError>((handles, settings))
                })?;
                (plan::bench(&self.rt, handles, case, data, place)?, settings)
            }
            #[cfg(feature = "crates")]
            Subject::Crate(krate) => {
                use crate::backends::crates as c;
                use crate::catalog::Shipped;
                use crate::on_rusqlite::kv::HopKv;
                let s = &self.p.settings;
                match krate {
                    Shipped::TokioRusqlite => {
                        // One connection (and its thread) per task.
                        let p = self.rt.block_on(c::TokioRusqlite::open(&path, s, tasks))?;
                        let settings = self.rt.block_on(p.read_back())?;
                        let mut handles = Vec::new();
                        for _ in 0..tasks {
                            handles.push(HopKv(
                                self.rt
                                    .block_on(crate::measure::drive::LookupPath::checkout(&p))?,
                            ));
                        }
                        (
                            plan::bench(&self.rt, handles, case, data, (place, p))?,
                            settings,
                        )
                    }
                    Shipped::R2d2SpawnBlocking | Shipped::R2d2BlockInPlace => {
                        // A pool of one connection per task, each held by its task.
                        let p = c::R2d2::open(&path, s, tasks, c::hop(krate))?;
                        let settings = p.read_back()?;
                        let mut handles = Vec::new();
                        for _ in 0..tasks {
                            let (conn, hop) = p.hold()?;
                            handles.push(HopKv(c::R2d2Held {
                                conn: Some(conn),
                                hop,
                            }));
                        }
                        (
                            plan::bench(&self.rt, handles, case, data, (place, p))?,
                            settings,
                        )
                    }
                    Shipped::Diesel => {
                        // A pool of one connection per task, each held by its task.
                        let p = c::Diesel::open(&path, s, tasks)?;
                        let settings = p.read_back()?;
                        statements = Some(p.statements());
                        let mut handles = Vec::new();
                        for _ in 0..tasks {
                            handles.push(p.hold()?);
                        }
                        (
                            plan::bench(&self.rt, handles, case, data, (place, p))?,
                            settings,
                        )
                    }
                    Shipped::SqlMiddleware => {
                        // One connection of its pool held per task (it holds 10).
                        let p = self.rt.block_on(c::SqlMiddleware::open(&path, s))?;
                        let settings = self.rt.block_on(p.read_back())?;
                        let mut handles = Vec::new();
                        for _ in 0..tasks {
                            let conn = self
                                .rt
                                .block_on(crate::measure::drive::LookupPath::checkout(&p))?;
                            handles.push(crate::on_sql_middleware::MiddlewareKv(
                                c::SqlMiddlewareHeld { conn },
                            ));
                        }
                        (
                            plan::bench(&self.rt, handles, case, data, (place, p))?,
                            settings,
                        )
                    }
                    _ => {
                        return Err(CatalogError::no_implementation(
                            super::spec(),
                            spec,
                            "not a key_value bench of this crate",
                        )
                        .into());
                    }
                }
            }
            _ => {
                return Err(CatalogError::no_implementation(
                    super::spec(),
                    spec,
                    "not a core bench",
                )
                .into());
            }
        };
        Ok(bench.with_settings(settings).with_statements(statements))
    }
}

struct Entry {
    value: Vec<u8>,
    expires_at: Option<i64>,
}

fn live(e: &Entry) -> bool {
    e.expires_at.is_none_or(|t| t > NOW)
}

/// (tenant, namespace, key).
type MapKey = (String, String, String);

/// The in-memory baseline: a HashMap behind a RwLock, shared by the tasks.
struct MemKv(Arc<RwLock<HashMap<MapKey, Entry>>>);

fn poisoned<T>(_: T) -> BenchError {
    BenchError::Other("the map's lock was poisoned".into())
}

fn map_key(key: &str) -> MapKey {
    (TENANT.to_string(), NAMESPACE.to_string(), key.to_string())
}

impl Kv for MemKv {
    async fn reset(&mut self) -> Result<(), BenchError> {
        self.clear().await
    }
    async fn clear(&mut self) -> Result<(), BenchError> {
        self.0.write().map_err(poisoned)?.clear();
        Ok(())
    }
    async fn begin(&mut self) -> Result<(), BenchError> {
        Ok(())
    }
    async fn commit(&mut self) -> Result<(), BenchError> {
        Ok(())
    }
    async fn put(
        &mut self,
        key: &str,
        value: &[u8],
        expires_at: Option<i64>,
    ) -> Result<u64, BenchError> {
        let e = Entry {
            value: value.to_vec(),
            expires_at,
        };
        self.0.write().map_err(poisoned)?.insert(map_key(key), e);
        Ok(1)
    }
    async fn get(&mut self, key: &str) -> Result<Option<Vec<u8>>, BenchError> {
        let map = self.0.read().map_err(poisoned)?;
        Ok(map
            .get(&map_key(key))
            .filter(|e| live(e))
            .map(|e| e.value.clone()))
    }
    async fn exists(&mut self, key: &str) -> Result<bool, BenchError> {
        let map = self.0.read().map_err(poisoned)?;
        Ok(map.get(&map_key(key)).is_some_and(live))
    }
    async fn delete(&mut self, key: &str) -> Result<u64, BenchError> {
        let mut map = self.0.write().map_err(poisoned)?;
        Ok(u64::from(map.remove(&map_key(key)).is_some()))
    }
    async fn scan(&mut self, from: &str, to: &str) -> Result<Vec<(String, Vec<u8>)>, BenchError> {
        // A HashMap has no order: every entry is looked at, the matches sorted.
        let map = self.0.read().map_err(poisoned)?;
        let mut out: Vec<(String, Vec<u8>)> = map
            .iter()
            .filter(|((t, n, k), e)| {
                t == TENANT && n == NAMESPACE && k.as_str() >= from && k.as_str() < to && live(e)
            })
            .map(|((_, _, k), e)| (k.clone(), e.value.clone()))
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }
}

/// A store driven with generic values (the middleware per strategy, or turso): the caller's
/// values in, a result set out.
struct ValuesKv<B>(B);

fn key_values(key: &str) -> Vec<Value> {
    vec![
        Value::Text(TENANT.into()),
        Value::Text(NAMESPACE.into()),
        Value::Text(key.into()),
    ]
}

fn blob(v: Option<&Value>) -> Result<Vec<u8>, BenchError> {
    match v {
        Some(Value::Blob(b)) => Ok(b.clone()),
        other => Err(BenchError::Other(format!("value column holds {other:?}"))),
    }
}

impl<B: Statements> Kv for ValuesKv<B> {
    async fn reset(&mut self) -> Result<(), BenchError> {
        for s in plan::CREATE {
            self.0.ddl(*s).await?;
        }
        Ok(())
    }
    async fn clear(&mut self) -> Result<(), BenchError> {
        self.0.changed(plan::CLEAR, vec![]).await.map(|_| ())
    }
    async fn begin(&mut self) -> Result<(), BenchError> {
        self.0.begin().await
    }
    async fn commit(&mut self) -> Result<(), BenchError> {
        self.0.commit().await
    }
    async fn put(
        &mut self,
        key: &str,
        value: &[u8],
        expires_at: Option<i64>,
    ) -> Result<u64, BenchError> {
        let mut v = key_values(key);
        v.push(Value::Blob(value.to_vec()));
        v.push(expires_at.map(Value::Integer).unwrap_or(Value::Null));
        v.push(Value::Integer(NOW));
        v.push(Value::Integer(NOW));
        self.0.changed(plan::PUT, v).await
    }
    async fn get(&mut self, key: &str) -> Result<Option<Vec<u8>>, BenchError> {
        let mut v = key_values(key);
        v.push(Value::Integer(NOW));
        let rs = self.0.rows(plan::GET, v).await?;
        rs.rows.first().map(|r| blob(r.first())).transpose()
    }
    async fn exists(&mut self, key: &str) -> Result<bool, BenchError> {
        let mut v = key_values(key);
        v.push(Value::Integer(NOW));
        Ok(!self.0.rows(plan::EXISTS, v).await?.rows.is_empty())
    }
    async fn delete(&mut self, key: &str) -> Result<u64, BenchError> {
        self.0.changed(plan::DELETE, key_values(key)).await
    }
    async fn scan(&mut self, from: &str, to: &str) -> Result<Vec<(String, Vec<u8>)>, BenchError> {
        let v = vec![
            Value::Text(TENANT.into()),
            Value::Text(NAMESPACE.into()),
            Value::Text(from.into()),
            Value::Text(to.into()),
            Value::Integer(NOW),
        ];
        let rs = self.0.rows(plan::SCAN, v).await?;
        rs.rows
            .iter()
            .map(|r| match r.first() {
                Some(Value::Text(k)) => Ok((k.clone(), blob(r.get(1))?)),
                other => Err(BenchError::Other(format!("key column holds {other:?}"))),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::stats::LatencyHistogram;
    use crate::workloads::key_value::plan::Case;

    /// Every single-task case on raw rusqlite and on the map does the work the plan says.
    #[test]
    fn rusqlite_and_the_map_do_each_cases_work() {
        let dir = tempfile::tempdir().unwrap();
        let rt = crate::measure::drive::runtime(None).unwrap();
        for case in Case::all() {
            if matches!(case, Case::ConcurrentReads(_)) {
                continue;
            }
            let d = Data::new(case, 40, 9);
            let path = dir.path().join(format!("{}.sqlite", case.name()));
            let mut r = RusqliteKv(crate::backends::raw::open(&path, &Default::default()).unwrap());
            let mut m = MemKv(Arc::new(RwLock::new(HashMap::new())));
            rt.block_on(async {
                plan::prepare(&mut r, case, &d).await.unwrap();
                plan::prepare(&mut m, case, &d).await.unwrap();
                for _ in 0..2 {
                    let mut h = LatencyHistogram::new();
                    let a = plan::pass(&mut r, case, &d, &mut h).await.unwrap();
                    let b = plan::pass(&mut m, case, &d, &mut h).await.unwrap();
                    assert_eq!(a.work, d.work(case), "{case:?} rusqlite");
                    assert_eq!(b.work, d.work(case), "{case:?} map");
                }
            });
        }
    }

    /// diesel's store (its DSL: upsert, TTL filter, range scan) does each single-task case's
    /// work, pass after pass, as the plan says (the pass checks every value it reads back).
    #[cfg(feature = "crates")]
    #[test]
    fn diesel_does_each_cases_work() {
        let dir = tempfile::tempdir().unwrap();
        let rt = crate::measure::drive::runtime(None).unwrap();
        for case in Case::all() {
            if matches!(case, Case::ConcurrentReads(_)) {
                continue;
            }
            let d = Data::new(case, 40, 9);
            let path = dir.path().join(format!("{}.sqlite", case.name()));
            let pool =
                crate::backends::crates::Diesel::open(&path, &Default::default(), 1).unwrap();
            let mut kv = pool.hold().unwrap();
            rt.block_on(async {
                plan::prepare(&mut kv, case, &d).await.unwrap();
                for _ in 0..2 {
                    let mut h = LatencyHistogram::new();
                    let a = plan::pass(&mut kv, case, &d, &mut h).await.unwrap();
                    assert_eq!(a.work, d.work(case), "{case:?} diesel");
                }
            });
        }
    }

    /// A store that hands back other bytes than were put fails the pass.
    #[test]
    fn a_wrong_value_fails_the_check() {
        let rt = crate::measure::drive::runtime(None).unwrap();
        let case = Case::Get(plan::Size::Small);
        let d = Data::new(case, 5, 1);
        let mut m = MemKv(Arc::new(RwLock::new(HashMap::new())));
        rt.block_on(async {
            plan::prepare(&mut m, case, &d).await.unwrap();
            m.put(&d.keys[3], b"other bytes", None).await.unwrap();
            let e = plan::pass(&mut m, case, &d, &mut LatencyHistogram::new())
                .await
                .unwrap_err()
                .to_string();
            assert!(e.contains("value check failed: key/0000003"), "{e}");
        });
    }
}
