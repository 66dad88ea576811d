//! bench-core's `crud_overhead`: rusqlite, the middleware per strategy and turso, each on its
//! own scratch database (a file in the run's journal mode, or memdb), replaying the plan.

use std::sync::Arc;
use std::time::Duration;

use super::Shared;
use super::plan::{Answer, Crud, Dialect, Row, Sql};
use crate::backends::middleware::Middleware;
use crate::backends::middleware::value::{ResultSet, Value};
#[cfg(feature = "turso")]
use crate::backends::values::Turso;
use crate::backends::values::{Pooled, Statements};
use crate::catalog::{BenchSpec, CONCURRENCY, CatalogError, SPIN_US, Subject, Target};
use crate::error::BenchError;
use crate::measure::Bench;
#[cfg(feature = "crates")]
use crate::on_rusqlite::crud::HopCrud;
use crate::on_rusqlite::crud::on_conn;
#[cfg(feature = "crates")]
use crate::on_sql_middleware::MiddlewareCrud;
use crate::protocol::Event;
use crate::workload::{RunContext, Session, Workload};
use crate::workloads::bulk_insert::rows::Place;

/// bench-core's `crud_overhead`.
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
        Ok(Box::new(Ctx {
            shared: Shared::new(run)?,
            concurrency: run.plan.knobs.count(&CONCURRENCY) as usize,
            spin: Duration::from_micros(run.plan.knobs.count(&SPIN_US)),
            rt: crate::measure::drive::runtime(None)?,
        }))
    }
}

struct Ctx {
    shared: Shared,
    concurrency: usize,
    spin: Duration,
    rt: tokio::runtime::Runtime,
}

impl Session for Ctx {
    fn ops(&self) -> u64 {
        self.shared.steps.len() as u64
    }

    fn skip(&self, bench: &BenchSpec) -> Option<String> {
        crate::mirror::postgres_skip(bench.subject, self.shared.postgres_url.as_ref())
            .or_else(|| super::first_skip(bench))
            .or_else(|| {
                crate::settings::skip_reason(bench.subject, self.concurrency, &self.shared.settings)
            })
    }

    fn bench(&self, spec: &BenchSpec) -> Result<Bench<'_>, BenchError> {
        let case = super::case_for(spec)?;
        let sql = Sql::for_case(Dialect::Sqlite, case, self.shared.sweep.len());
        let place = Place::new(&self.shared.dir, self.shared.memory, "crud", spec.name);
        // Its crate's statement cache counts, where the crate reports them (diesel).
        let mut statements = None;
        let (iter, settings) = match spec.subject {
            Subject::Rusqlite => {
                let conn = crate::backends::raw::open(place.path(), &self.shared.settings)?;
                let settings = crate::backends::raw::read_back(&conn);
                (
                    self.shared
                        .iteration(&self.rt, RusqliteCrud(conn), sql, case, place)?,
                    settings,
                )
            }
            Subject::Middleware(s) => {
                let mw = Arc::new(Middleware::new(
                    place.path().to_path_buf(),
                    s,
                    self.concurrency,
                    self.spin,
                    &self.shared.settings,
                    self.rt.handle().clone(),
                )?);
                let settings = self.rt.block_on(mw.read_back())?;
                let c = ValuesCrud {
                    b: Pooled::new(mw),
                    sql: Arc::new(sql.clone()),
                };
                (
                    self.shared.iteration(&self.rt, c, sql, case, place)?,
                    settings,
                )
            }
            #[cfg(feature = "turso")]
            Subject::Turso => {
                let (c, settings) = self.rt.block_on(async {
                    let db = if self.shared.memory {
                        crate::backends::turso::open(std::path::Path::new(":memory:")).await?
                    } else {
                        crate::backends::turso::open(place.path()).await?
                    };
                    let conn = crate::backends::turso::connect(&db, &self.shared.settings).await?;
                    let settings = crate::backends::turso::read_back(&conn).await;
                    let c = ValuesCrud {
                        b: Turso { db, conn },
                        sql: Arc::new(sql.clone()),
                    };
                    Ok::<_, BenchError>((c, settings))
                })?;
                (
                    self.shared.iteration(&self.rt, c, sql, case, place)?,
                    settings,
                )
            }
            #[cfg(feature = "crates")]
            Subject::Crate(krate) => {
                use crate::backends::crates as c;
                use crate::catalog::Shipped;
                let (path, s) = (place.path().to_path_buf(), &self.shared.settings);
                let sql_arc = Arc::new(sql.clone());
                match krate {
                    Shipped::TokioRusqlite => {
                        let p = self.rt.block_on(c::TokioRusqlite::open(&path, s, 1))?;
                        let settings = self.rt.block_on(p.read_back())?;
                        let conn = self
                            .rt
                            .block_on(crate::measure::drive::LookupPath::checkout(&p))?;
                        let crud = HopCrud {
                            on: conn,
                            sql: sql_arc,
                        };
                        (
                            self.shared
                                .iteration(&self.rt, crud, sql, case, (place, p))?,
                            settings,
                        )
                    }
                    Shipped::R2d2SpawnBlocking | Shipped::R2d2BlockInPlace => {
                        let p = c::R2d2::open(&path, s, 1, c::hop(krate))?;
                        let settings = p.read_back()?;
                        let (conn, hop) = p.hold()?;
                        let crud = HopCrud {
                            on: c::R2d2Held {
                                conn: Some(conn),
                                hop,
                            },
                            sql: sql_arc,
                        };
                        (
                            self.shared
                                .iteration(&self.rt, crud, sql, case, (place, p))?,
                            settings,
                        )
                    }
                    Shipped::Diesel => {
                        let p = c::Diesel::open(&path, s, 1)?;
                        let settings = p.read_back()?;
                        statements = Some(p.statements());
                        let crud = p.crud()?;
                        (
                            self.shared
                                .iteration(&self.rt, crud, sql, case, (place, p))?,
                            settings,
                        )
                    }
                    Shipped::SqlMiddleware => {
                        let p = self.rt.block_on(c::SqlMiddleware::open(&path, s))?;
                        let settings = self.rt.block_on(p.read_back())?;
                        let conn = self
                            .rt
                            .block_on(crate::measure::drive::LookupPath::checkout(&p))?;
                        let crud = MiddlewareCrud(c::SqlMiddlewareHeld { conn });
                        (
                            self.shared
                                .iteration(&self.rt, crud, sql, case, (place, p))?,
                            settings,
                        )
                    }
                    Shipped::SqlMiddlewarePostgres => {
                        let url = self.shared.postgres_url.clone().ok_or_else(|| {
                            BenchError::Invalid(crate::mirror::NO_POSTGRES.into())
                        })?;
                        let sql = Sql::for_case(Dialect::Postgres, case, self.shared.sweep.len());
                        let held = self.rt.block_on(async {
                            let pool = c::SqlMiddlewarePg::open(&url).await?;
                            pool.hold(sql.drop.clone()).await
                        })?;
                        // PostgreSQL's settings are the server's: none of SQLite's is read.
                        (
                            self.shared.iteration(
                                &self.rt,
                                MiddlewareCrud(held),
                                sql,
                                case,
                                place,
                            )?,
                            Default::default(),
                        )
                    }
                    _ => {
                        return Err(CatalogError::no_implementation(
                            super::spec(),
                            spec,
                            "not a crud_overhead bench of this crate",
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
        Ok(self
            .shared
            .bench(iter, case, settings)
            .with_statements(statements))
    }
}

/// Raw rusqlite: every statement from the connection's cache.
struct RusqliteCrud(rusqlite::Connection);

impl Crud for RusqliteCrud {
    async fn drop_table(&mut self, sql: &Sql) -> Result<(), BenchError> {
        on_conn::drop_table(&self.0, sql)
    }
    async fn create_table(&mut self, sql: &Sql) -> Result<(), BenchError> {
        on_conn::create_table(&self.0, sql)
    }
    async fn begin(&mut self) -> Result<(), BenchError> {
        on_conn::begin(&self.0)
    }
    async fn commit(&mut self) -> Result<(), BenchError> {
        on_conn::commit(&self.0)
    }
    async fn insert(&mut self, sql: &Sql, r: &Row) -> Result<u64, BenchError> {
        on_conn::insert(&self.0, sql, r)
    }
    async fn update(&mut self, sql: &Sql, id: i64, text: &str) -> Result<u64, BenchError> {
        on_conn::update(&self.0, sql, id, text)
    }
    async fn delete(&mut self, sql: &Sql, id: i64) -> Result<u64, BenchError> {
        on_conn::delete(&self.0, sql, id)
    }
    async fn select(&mut self, sql: &Sql, above: i64) -> Result<Vec<Row>, BenchError> {
        on_conn::select(&self.0, sql, above)
    }
    async fn cached(&mut self, sql: &Sql, q: usize, fresh: bool) -> Result<Answer, BenchError> {
        on_conn::cached(&self.0, sql, q, fresh)
    }
    async fn insert_values(&mut self, sql: &Sql, rows: &[Row]) -> Result<u64, BenchError> {
        on_conn::insert_values(&self.0, sql, rows)
    }
}

/// A row as the caller's generic values.
pub fn values_of(r: &Row) -> Vec<Value> {
    vec![
        Value::Integer(r.id),
        Value::Text(r.text.clone()),
        Value::Integer(r.int),
        Value::Real(r.real),
        Value::Integer(r.flag as i64),
    ]
}

/// A result set's rows decoded by position into table rows.
pub fn rows_of(rs: &ResultSet) -> Result<Vec<Row>, BenchError> {
    let bad = |what: &str, v: &Value| BenchError::Other(format!("{what} holds {v:?}"));
    rs.rows
        .iter()
        .map(|r| {
            let int = |i: usize, what: &str| match &r[i] {
                Value::Integer(n) => Ok(*n),
                v => Err(bad(what, v)),
            };
            Ok(Row {
                id: int(0, "id")?,
                text: match &r[1] {
                    Value::Text(t) => t.clone(),
                    v => return Err(bad("text_col", v)),
                },
                int: int(2, "int_col")?,
                real: match &r[3] {
                    Value::Real(f) => *f,
                    Value::Integer(n) => *n as f64,
                    v => return Err(bad("real_col", v)),
                },
                flag: int(4, "bool_col")? != 0,
            })
        })
        .collect()
}

/// A count query's result set: the last column of its one row.
pub fn count_in(rs: &ResultSet) -> Result<i64, BenchError> {
    match rs.rows.first().and_then(|r| r.last()) {
        Some(Value::Integer(n)) => Ok(*n),
        other => Err(BenchError::Other(format!(
            "a count query returned {other:?}"
        ))),
    }
}

/// Which statement of the workload a call runs (the text stays on the connection's side).
#[derive(Clone, Copy)]
enum Which {
    Drop,
    Create,
    Insert,
    Update,
    Delete,
    Select,
    Cached(usize),
    Batch(usize),
}

/// A statement's text, shared with the connection's thread without copying it.
struct Text(Arc<Sql>, Which);

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        let sql = &self.0;
        match self.1 {
            Which::Drop => &sql.drop,
            Which::Create => &sql.create,
            Which::Insert => &sql.insert,
            Which::Update => &sql.update,
            Which::Delete => &sql.delete,
            Which::Select => &sql.select,
            Which::Cached(q) => &sql.cached[q].0,
            Which::Batch(n) => sql.batch(n),
        }
    }
}

/// A backend driven with generic values (the middleware per strategy, or turso): the caller's
/// values in, a result set out, decoded on the caller's side.
struct ValuesCrud<B> {
    b: B,
    sql: Arc<Sql>,
}

impl<B: Statements> ValuesCrud<B> {
    fn text(&self, w: Which) -> Text {
        Text(self.sql.clone(), w)
    }
}

impl<B: Statements> Crud for ValuesCrud<B> {
    async fn drop_table(&mut self, _: &Sql) -> Result<(), BenchError> {
        let t = self.text(Which::Drop);
        self.b.ddl(t).await
    }
    async fn create_table(&mut self, _: &Sql) -> Result<(), BenchError> {
        let t = self.text(Which::Create);
        self.b.ddl(t).await
    }
    async fn begin(&mut self) -> Result<(), BenchError> {
        self.b.begin().await
    }
    async fn commit(&mut self) -> Result<(), BenchError> {
        self.b.commit().await
    }
    async fn insert(&mut self, _: &Sql, r: &Row) -> Result<u64, BenchError> {
        let t = self.text(Which::Insert);
        self.b.changed(t, values_of(r)).await
    }
    async fn update(&mut self, _: &Sql, id: i64, text: &str) -> Result<u64, BenchError> {
        let v = vec![Value::Text(text.to_string()), Value::Integer(id)];
        let t = self.text(Which::Update);
        self.b.changed(t, v).await
    }
    async fn delete(&mut self, _: &Sql, id: i64) -> Result<u64, BenchError> {
        let t = self.text(Which::Delete);
        self.b.changed(t, vec![Value::Integer(id)]).await
    }
    async fn select(&mut self, _: &Sql, above: i64) -> Result<Vec<Row>, BenchError> {
        let t = self.text(Which::Select);
        rows_of(&self.b.rows(t, vec![Value::Integer(above)]).await?)
    }
    async fn cached(&mut self, sql: &Sql, q: usize, fresh: bool) -> Result<Answer, BenchError> {
        let t = self.text(Which::Cached(q));
        let rs = if fresh {
            self.b.rows_fresh(t).await?
        } else {
            self.b.rows(t, vec![]).await?
        };
        Ok(if sql.cached[q].1 {
            Answer::Count(count_in(&rs)?)
        } else {
            Answer::Rows(rows_of(&rs)?)
        })
    }
    async fn insert_values(&mut self, _: &Sql, rows: &[Row]) -> Result<u64, BenchError> {
        let values = rows.iter().flat_map(values_of).collect();
        let t = self.text(Which::Batch(rows.len()));
        self.b.changed(t, values).await
    }
}

#[cfg(test)]
mod tests {
    use super::super::plan::{self, Case, Op};
    use super::*;
    use crate::measure::stats::LatencyHistogram;
    use crate::settings::SqliteSettings;

    /// Every case on raw rusqlite does exactly what the model says, pass after pass.
    #[test]
    fn rusqlite_matches_the_model_in_every_case() {
        let dir = tempfile::tempdir().unwrap();
        let rt = crate::measure::drive::runtime(None).unwrap();
        let steps = plan::steps(300, 25, 11);
        let sweep = plan::sweep_rows(120, 11);
        for case in super::super::cases() {
            let path = dir.path().join(format!("{}.sqlite", case.name()));
            let conn = crate::backends::raw::open(&path, &SqliteSettings::default()).unwrap();
            let mut c = RusqliteCrud(conn);
            let sql = Sql::for_case(Dialect::Sqlite, case, sweep.len());
            let (_, work) = plan::expected(case, &steps, &sweep);
            rt.block_on(async {
                if matches!(case, Case::Op(Op::SelectCached | Op::SelectFirst)) {
                    plan::fill(&mut c, &sql, &steps).await.unwrap();
                }
                for _ in 0..2 {
                    let mut h = LatencyHistogram::new();
                    let it = plan::pass(&mut c, &sql, case, &steps, &sweep, &mut h)
                        .await
                        .unwrap();
                    assert_eq!(it.work, work, "{case:?}");
                }
            });
        }
    }

    /// The middleware's values and result sets read back what rusqlite reads.
    #[test]
    fn the_middleware_reads_what_rusqlite_reads() {
        let dir = tempfile::tempdir().unwrap();
        let rt = crate::measure::drive::runtime(None).unwrap();
        let steps = plan::steps(200, 20, 5);
        let path = dir.path().join("mw.sqlite");
        let mw = Middleware::new(
            path,
            crate::catalog::Strategy::Worker,
            2,
            Duration::ZERO,
            &SqliteSettings::default(),
            rt.handle().clone(),
        )
        .unwrap();
        let sql = Sql::new(Dialect::Sqlite);
        let c = ValuesCrud {
            b: Pooled::new(Arc::new(mw)),
            sql: Arc::new(sql.clone()),
        };
        reads_what_the_model_says(&rt, c, &steps);
    }

    /// After the whole mix, every fixed query and a full select answer what the model of the
    /// table says.
    fn reads_what_the_model_says<C: Crud>(
        rt: &tokio::runtime::Runtime,
        mut c: C,
        steps: &[plan::Step],
    ) {
        let sql = Sql::new(Dialect::Sqlite);
        let table = plan::model(steps);
        rt.block_on(async {
            plan::fill(&mut c, &sql, steps).await.unwrap();
            for q in 0..plan::CACHED {
                assert_eq!(
                    c.cached(&sql, q, false).await.unwrap(),
                    plan::cached_answer(&table, q),
                    "query {q}"
                );
            }
            let all = c.select(&sql, 0).await.unwrap();
            assert_eq!(all, table.values().cloned().collect::<Vec<_>>());
        });
    }

    /// diesel's DSL versions of the statements answer what the model of the table says, the
    /// five fixed queries included.
    #[cfg(feature = "crates")]
    #[test]
    fn diesel_reads_what_the_model_says() {
        let dir = tempfile::tempdir().unwrap();
        let rt = crate::measure::drive::runtime(None).unwrap();
        let steps = plan::steps(200, 20, 5);
        let p = crate::backends::crates::Diesel::open(
            &dir.path().join("d.sqlite"),
            &SqliteSettings::default(),
            1,
        )
        .unwrap();
        reads_what_the_model_says(&rt, p.crud().unwrap(), &steps);
    }
}
