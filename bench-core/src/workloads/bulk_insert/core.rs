//! bench-core's implementation of `bulk_insert`, in a scratch SQLite file per bench.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::rows::{BulkRow, CHECKPOINT, DROP, SQLITE_CREATE, SQLITE_INSERT, Scratch};
use crate::backends::middleware::Middleware;
use crate::backends::middleware::value::{self, Value};
use crate::catalog::{BenchSpec, CONCURRENCY, CatalogError, SPIN_US, Subject, Target};
use crate::error::BenchError;
use crate::measure::trace::ns_between;
use crate::measure::{Bench, IterFn, Iteration};
use crate::protocol::Event;
use crate::workload::{RunContext, Session, Workload};

use super::INSERT_WORK;

/// bench-core's `bulk_insert`.
pub struct Core;

impl Workload for Core {
    fn spec(&self) -> &'static Target {
        super::spec()
    }

    /// No shared dataset: each bench inserts the generated rows into its own scratch file.
    fn open<'a>(
        &'a self,
        run: &'a RunContext<'a>,
        _emit: &mut dyn FnMut(Event),
    ) -> Result<Box<dyn Session + 'a>, BenchError> {
        let k = &run.plan.knobs;
        Ok(Box::new(Ctx {
            p: super::Params::new(run)?,
            concurrency: k.count(&CONCURRENCY) as usize,
            spin: Duration::from_micros(k.count(&SPIN_US)),
            rt: crate::measure::drive::runtime(None)?,
        }))
    }
}

struct Ctx {
    p: super::Params,
    concurrency: usize,
    spin: Duration,
    rt: tokio::runtime::Runtime,
}

impl Session for Ctx {
    fn ops(&self) -> u64 {
        self.p.rows.len() as u64
    }

    fn skip(&self, bench: &BenchSpec) -> Option<String> {
        crate::mirror::postgres_skip(bench.subject, self.p.postgres_url.as_ref()).or_else(|| {
            crate::settings::skip_reason(bench.subject, self.concurrency, &self.p.settings)
        })
    }

    fn bench(&self, spec: &BenchSpec) -> Result<Bench<'_>, BenchError> {
        let scratch = Scratch::new(&self.p.dir, spec.name);
        // Its crate's statement cache counts, where the crate reports them (diesel).
        let mut statements = None;
        let (iter, settings) = match spec.subject {
            Subject::Rusqlite => rusqlite_inserts(self, scratch)?,
            Subject::Middleware(s) => middleware_inserts(self, scratch, s)?,
            #[cfg(feature = "turso")]
            Subject::Turso => turso_inserts(self, scratch)?,
            #[cfg(feature = "crates")]
            Subject::Crate(c) => crate_inserts(self, scratch, c, &mut statements)?,
            _ => {
                return Err(CatalogError::no_implementation(
                    super::spec(),
                    spec,
                    "not a core bench",
                )
                .into());
            }
        };
        Ok(Bench::new(iter, self.p.rows.len() as u64, INSERT_WORK)
            .with_settings(settings)
            .with_statements(statements))
    }
}

type Settings = std::collections::BTreeMap<String, String>;

/// A row as the caller's generic values (what a middleware is handed).
pub fn to_values(r: &BulkRow) -> Vec<Value> {
    let mut v = vec![
        Value::Integer(r.id),
        Value::Text(r.title.clone()),
        Value::Text(r.created_at.clone()),
        Value::Real(r.amount),
        Value::Integer(r.flag as i64),
        Value::Blob(r.payload.clone()),
        Value::Text(r.meta.clone()),
    ];
    v.extend(r.texts.iter().map(|t| Value::Text(t.clone())));
    v
}

use crate::on_rusqlite::{bulk_insert_all as insert_all, bulk_reset as reset};

/// What a sample of a rusqlite-based bench inserts, in one transaction: every row through the
/// prepared INSERT (`method=prepared`), or the rows' INSERT text through `execute_batch`
/// (`method=batch_text`).
#[derive(Clone)]
enum Insert {
    Rows(Arc<Vec<BulkRow>>),
    Text(Arc<String>),
}

impl Insert {
    fn of(p: &super::Params) -> Insert {
        match p.method {
            super::Method::Prepared => Insert::Rows(p.rows.clone()),
            super::Method::BatchText => Insert::Text(p.batch.clone()),
        }
    }

    /// The rows SQLite reports changed.
    fn run(&self, c: &mut rusqlite::Connection) -> rusqlite::Result<u64> {
        match self {
            Insert::Rows(rows) => insert_all(c, black_box(rows)),
            Insert::Text(text) => crate::on_rusqlite::bulk_batch_all(c, black_box(text)),
        }
    }
}

/// Inserts generic values through the middleware's bind path, in one transaction.
fn insert_values(conn: &mut rusqlite::Connection, rows: &[Vec<Value>]) -> rusqlite::Result<u64> {
    let tx = conn.transaction()?;
    let mut changed = 0u64;
    {
        let mut stmt = tx.prepare_cached(SQLITE_INSERT)?;
        for vals in rows {
            value::bind(&mut stmt, &value::to_params(vals))?;
            changed += stmt.raw_execute()? as u64;
        }
    }
    tx.commit()?;
    Ok(changed)
}

fn middleware_inserts(
    ctx: &Ctx,
    scratch: Scratch,
    strategy: crate::catalog::Strategy,
) -> Result<(IterFn<'_>, Settings), BenchError> {
    let mw = Arc::new(Middleware::new(
        scratch.0.clone(),
        strategy,
        ctx.concurrency,
        ctx.spin,
        &ctx.p.settings,
        ctx.rt.handle().clone(),
    )?);
    let settings = ctx.rt.block_on(mw.read_back())?;
    let iter: IterFn<'_> = Box::new(move |_| {
        let _scratch = &scratch;
        let (mw, rows, text, method) = (
            mw.clone(),
            ctx.p.rows.clone(),
            ctx.p.batch.clone(),
            ctx.p.method,
        );
        ctx.rt.block_on(async move {
            // The table is made fresh on the connection that then inserts, as the other
            // backends do: with a pool, another connection would find its page cache stale
            // and every other sample would pay for reading the schema again.
            let mut conn = mw.checkout().await?;
            mw.call(&mut conn, |c| reset(c)).await??;
            let start = Instant::now();
            let changed = match method {
                super::Method::Prepared => {
                    // The caller's values, converted and moved to the connection's thread in
                    // one hop.
                    let values: Vec<Vec<Value>> = rows.iter().map(to_values).collect();
                    mw.call(&mut conn, move |c| insert_values(c, &values))
                        .await??
                }
                super::Method::BatchText => {
                    mw.call(&mut conn, move |c| {
                        crate::on_rusqlite::bulk_batch_all(c, black_box(&text))
                    })
                    .await??
                }
            };
            let elapsed = ns_between(start, Instant::now());
            drop(conn);
            Ok(Iteration::new(elapsed, changed))
        })
    });
    Ok((iter, settings))
}

fn rusqlite_inserts(ctx: &Ctx, scratch: Scratch) -> Result<(IterFn<'_>, Settings), BenchError> {
    let mut conn = crate::backends::raw::open(&scratch.0, &ctx.p.settings)?;
    let settings = crate::backends::raw::read_back(&conn);
    let insert = Insert::of(&ctx.p);
    let iter: IterFn<'_> = Box::new(move |_| {
        let _scratch = &scratch;
        reset(&conn)?;
        let start = Instant::now();
        let changed = insert.run(&mut conn)?;
        Ok(Iteration::new(ns_between(start, Instant::now()), changed))
    });
    Ok((iter, settings))
}

#[cfg(feature = "turso")]
fn turso_inserts(ctx: &Ctx, scratch: Scratch) -> Result<(IterFn<'_>, Settings), BenchError> {
    use crate::backends::turso as t;
    let err = BenchError::driver;
    let (db, conn, settings) = ctx.rt.block_on(async {
        let db = t::open(&scratch.0).await?;
        let conn = t::connect(&db, &ctx.p.settings).await?;
        let settings = t::read_back(&conn).await;
        Ok::<_, BenchError>((db, conn, settings))
    })?;
    let iter: IterFn<'_> = Box::new(move |_| {
        let _keep = (&scratch, &db);
        ctx.rt.block_on(async {
            conn.execute(DROP, ()).await.map_err(err)?;
            conn.execute(SQLITE_CREATE, ()).await.map_err(err)?;
            let mut rows = conn.query(CHECKPOINT, ()).await.map_err(err)?;
            while rows.next().await.map_err(err)?.is_some() {}
            let start = Instant::now();
            conn.execute("BEGIN", ()).await.map_err(err)?;
            let changed = match ctx.p.method {
                super::Method::Prepared => {
                    let mut stmt = conn.prepare(SQLITE_INSERT).await.map_err(err)?;
                    let mut changed = 0u64;
                    for r in ctx.p.rows.iter() {
                        let params = t::to_params(&to_values(r));
                        changed += stmt.execute(params).await.map_err(err)?;
                    }
                    Some(changed)
                }
                super::Method::BatchText => {
                    let text = ctx.p.batch.as_str();
                    conn.execute_batch(black_box(text)).await.map_err(err)?;
                    None
                }
            };
            conn.execute("COMMIT", ()).await.map_err(err)?;
            let elapsed = ns_between(start, Instant::now());
            let changed = match changed {
                Some(n) => n,
                // turso's batch call reports no count: the rows the table holds, counted after
                // the clock stops.
                None => {
                    let mut rows = conn.query(super::rows::COUNT, ()).await.map_err(err)?;
                    match rows.next().await.map_err(err)? {
                        Some(row) => row.get::<i64>(0).map_err(err)? as u64,
                        None => 0,
                    }
                }
            };
            Ok(Iteration::new(elapsed, changed))
        })
    });
    Ok((iter, settings))
}

/// The rusqlite transaction of rows, run the way the crate runs a query: in tokio-rusqlite's
/// `call` closure, or on an r2d2 connection inside `spawn_blocking` / `block_in_place`. The
/// fresh table is made on the same connection first, untimed.
#[cfg(feature = "crates")]
fn crate_inserts<'a>(
    ctx: &'a Ctx,
    scratch: Scratch,
    krate: crate::catalog::Shipped,
    statements: &mut Option<Arc<crate::measure::statements::StatementCounter>>,
) -> Result<(IterFn<'a>, Settings), BenchError> {
    use crate::backends::crates as c;
    use crate::catalog::Shipped;
    let path = scratch.0.clone();
    match krate {
        Shipped::AsyncSqlite | Shipped::SqlMiddlewareTurso => Err(c::elsewhere(krate)),
        Shipped::SqlMiddlewarePostgres => {
            use super::rows::{POSTGRES_CREATE, POSTGRES_INSERT_FROM_TEXT};
            drop(scratch);
            let url = ctx
                .p
                .postgres_url
                .clone()
                .ok_or_else(|| BenchError::Invalid(crate::mirror::NO_POSTGRES.into()))?;
            let p = Arc::new(ctx.rt.block_on(c::SqlMiddlewarePg::open(&url))?);
            let guard = PgTable {
                p: p.clone(),
                rt: &ctx.rt,
            };
            let fresh = format!("{DROP}; {POSTGRES_CREATE};");
            // method=batch_text: the rows as PostgreSQL's literals, made before any clock.
            let text = match ctx.p.method {
                super::Method::BatchText => {
                    Some(Arc::new(super::rows::batch_text_postgres(&ctx.p.rows)))
                }
                super::Method::Prepared => None,
            };
            let iter: IterFn<'_> = Box::new(move |_| {
                let _drop_at_end = &guard;
                let (p, rows, fresh, text) =
                    (p.clone(), ctx.p.rows.clone(), fresh.clone(), text.clone());
                crate::measure::drive::on_runtime(&ctx.rt, async move {
                    let (changed, ns) = match text {
                        Some(text) => p.batch_all(&fresh, &text).await?,
                        None => {
                            p.insert_all(&fresh, POSTGRES_INSERT_FROM_TEXT, &rows)
                                .await?
                        }
                    };
                    Ok(Iteration::new(ns, changed))
                })
            });
            Ok((iter, Settings::new()))
        }
        Shipped::TokioRusqlite => {
            let p = ctx
                .rt
                .block_on(c::TokioRusqlite::open(&path, &ctx.p.settings, 1))?;
            let settings = ctx.rt.block_on(p.read_back())?;
            let conn = ctx
                .rt
                .block_on(crate::measure::drive::LookupPath::checkout(&p))?;
            let insert = Insert::of(&ctx.p);
            let iter: IterFn<'_> = Box::new(move |_| {
                let _keep = (&scratch, &p);
                let (conn, insert) = (conn.clone(), insert.clone());
                crate::measure::drive::on_runtime(&ctx.rt, async move {
                    conn.call(|c| reset(c)).await.map_err(BenchError::driver)?;
                    let start = Instant::now();
                    let changed = conn
                        .call(move |c| insert.run(c))
                        .await
                        .map_err(BenchError::driver)?;
                    Ok(Iteration::new(ns_between(start, Instant::now()), changed))
                })
            });
            Ok((iter, settings))
        }
        Shipped::R2d2SpawnBlocking | Shipped::R2d2BlockInPlace => {
            let p = Arc::new(c::R2d2::open(&path, &ctx.p.settings, 1, c::hop(krate))?);
            let settings = p.read_back()?;
            let insert = Insert::of(&ctx.p);
            let iter: IterFn<'_> = Box::new(move |_| {
                let _keep = &scratch;
                let (p, insert) = (p.clone(), insert.clone());
                crate::measure::drive::on_runtime(&ctx.rt, async move {
                    p.run(|c| reset(c)).await?;
                    let start = Instant::now();
                    let changed = p.run(move |c| insert.run(c)).await?;
                    Ok(Iteration::new(ns_between(start, Instant::now()), changed))
                })
            });
            Ok((iter, settings))
        }
        Shipped::Diesel if ctx.p.method == super::Method::BatchText => {
            let text = ctx.p.batch.clone();
            let p = Arc::new(c::Diesel::open(&path, &ctx.p.settings, 1)?);
            let settings = p.read_back()?;
            *statements = Some(p.statements());
            let fresh = format!("{DROP}; {SQLITE_CREATE}; {CHECKPOINT};");
            let iter: IterFn<'_> = Box::new(move |_| {
                let _keep = &scratch;
                let (p, text, fresh) = (p.clone(), text.clone(), fresh.clone());
                crate::measure::drive::on_runtime(&ctx.rt, async move {
                    p.run(move |c| c::diesel_batch(c, &fresh)).await?;
                    let start = Instant::now();
                    p.run(move |c| c::diesel_batch_all(c, &text)).await?;
                    let elapsed = ns_between(start, Instant::now());
                    // The rows the table holds, counted after the clock stops.
                    let n = p.run(c::diesel_bulk_count).await?;
                    Ok(Iteration::new(elapsed, n))
                })
            });
            Ok((iter, settings))
        }
        Shipped::Diesel => {
            let p = Arc::new(c::Diesel::open(&path, &ctx.p.settings, 1)?);
            let settings = p.read_back()?;
            *statements = Some(p.statements());
            let fresh = format!("{DROP}; {SQLITE_CREATE}; {CHECKPOINT};");
            let iter: IterFn<'_> = Box::new(move |_| {
                let _keep = &scratch;
                let (p, rows, fresh) = (p.clone(), ctx.p.rows.clone(), fresh.clone());
                crate::measure::drive::on_runtime(&ctx.rt, async move {
                    p.run(move |c| c::diesel_batch(c, &fresh)).await?;
                    let start = Instant::now();
                    let changed = p.run(move |c| c::diesel_insert_all(c, &rows)).await?;
                    Ok(Iteration::new(ns_between(start, Instant::now()), changed))
                })
            });
            Ok((iter, settings))
        }
        Shipped::SqlMiddleware if ctx.p.method == super::Method::BatchText => {
            let text = ctx.p.batch.clone();
            let p = Arc::new(
                ctx.rt
                    .block_on(c::SqlMiddleware::open(&path, &ctx.p.settings))?,
            );
            let settings = ctx.rt.block_on(p.read_back())?;
            let iter: IterFn<'_> = Box::new(move |_| {
                let _keep = &scratch;
                let (p, text) = (p.clone(), text.clone());
                crate::measure::drive::on_runtime(&ctx.rt, async move {
                    let (changed, ns) = p.batch_all(text, |c| reset(c)).await?;
                    Ok(Iteration::new(ns, changed))
                })
            });
            Ok((iter, settings))
        }
        Shipped::SqlMiddleware => {
            let p = Arc::new(
                ctx.rt
                    .block_on(c::SqlMiddleware::open(&path, &ctx.p.settings))?,
            );
            let settings = ctx.rt.block_on(p.read_back())?;
            let iter: IterFn<'_> = Box::new(move |_| {
                let _keep = &scratch;
                let (p, rows) = (p.clone(), ctx.p.rows.clone());
                crate::measure::drive::on_runtime(&ctx.rt, async move {
                    let (changed, ns) = p.insert_all(SQLITE_INSERT, &rows, |c| reset(c)).await?;
                    Ok(Iteration::new(ns, changed))
                })
            });
            Ok((iter, settings))
        }
    }
}

/// The PostgreSQL bench's own table, dropped when the bench ends.
#[cfg(feature = "crates")]
struct PgTable<'rt> {
    p: Arc<crate::backends::crates::SqlMiddlewarePg>,
    rt: &'rt tokio::runtime::Runtime,
}

#[cfg(feature = "crates")]
impl Drop for PgTable<'_> {
    fn drop(&mut self) {
        let _ = self.rt.block_on(self.p.drop_table(DROP));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::SqliteSettings;

    #[test]
    fn both_insert_paths_write_the_same_rows() {
        let dir = tempfile::tempdir().unwrap();
        let rows = super::super::rows::rows(40, 1);
        let read = |conn: &rusqlite::Connection| -> Vec<(i64, String, f64, bool, Vec<u8>, String)> {
            let mut s = conn.prepare("SELECT id, created_at, amount, flag, payload, c9 FROM benchscope_bulk_insert ORDER BY id").unwrap();
            s.query_map([], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ))
            })
            .unwrap()
            .map(Result::unwrap)
            .collect()
        };
        let mut a = rusqlite::Connection::open(dir.path().join("a.sqlite")).unwrap();
        reset(&a).unwrap();
        assert_eq!(insert_all(&mut a, &rows).unwrap(), 40, "rows changed");
        let mut b = rusqlite::Connection::open(dir.path().join("b.sqlite")).unwrap();
        reset(&b).unwrap();
        let values: Vec<Vec<Value>> = rows.iter().map(to_values).collect();
        assert_eq!(insert_values(&mut b, &values).unwrap(), 40);
        let (ra, rb) = (read(&a), read(&b));
        assert_eq!(ra.len(), 40);
        assert_eq!(ra, rb);
        assert_eq!(ra[0].1, rows[0].created_at);
        assert_eq!(ra[39].5, rows[39].texts[8]);
    }

    /// diesel and sql-middleware write the rows rusqlite writes, value for value (every
    /// column, with its SQLite type).
    /// diesel's statement cache counted exactly: its events, with this crate's text paths said
    /// as text, give every statement run, the ones it prepared into its cache and the ones
    /// run as text, call by call.
    #[cfg(feature = "crates")]
    #[test]
    fn diesels_statement_cache_is_counted_statement_by_statement() {
        use crate::backends::crates as c;
        let dir = tempfile::tempdir().unwrap();
        let rows = Arc::new(super::super::rows::rows(5, 1));
        let rt = crate::measure::drive::runtime(None).unwrap();
        let d =
            c::Diesel::open(&dir.path().join("d.sqlite"), &SqliteSettings::default(), 1).unwrap();
        let counter = d.statements();
        let counts = || {
            let s = counter.read();
            (s.run, s.prepared, s.text)
        };
        let at = counts();
        let step = |f: &dyn Fn() -> u64| {
            let before = counter.read();
            f();
            let s = counter.since(&before, 1);
            (s.run, s.prepared, s.text)
        };
        // Each `run` checks a connection out of diesel's r2d2 pool, which first checks it
        // with a `SELECT 1` of diesel's own: a statement, cached (prepared the first time).
        // Two statements of text in one batch call: diesel reports the call once.
        let fresh = format!("{DROP}; {SQLITE_CREATE};");
        assert_eq!(
            step(&|| {
                let f = fresh.clone();
                rt.block_on(d.run(move |c| c::diesel_batch(c, &f))).unwrap();
                0
            }),
            (2, 1, 1)
        );
        // BEGIN, five inserts (the first prepares the statement into the cache), COMMIT.
        let insert = || {
            let r = rows.clone();
            rt.block_on(d.run(move |c| c::diesel_insert_all(c, &r)))
                .unwrap()
        };
        assert_eq!(step(&insert), (8, 1, 2));
        // Again: every insert from the cache.
        assert_eq!(step(&insert), (8, 0, 2));
        // A count through the DSL: a statement of its own, prepared once.
        let count = || rt.block_on(d.run(c::diesel_bulk_count)).unwrap();
        assert_eq!(step(&count), (2, 1, 0));
        assert_eq!(step(&count), (2, 0, 0));
        // The batch text in a diesel transaction: BEGIN, the text, COMMIT, all text.
        let text = Arc::new(super::super::rows::batch_text(&rows));
        assert_eq!(
            step(&|| {
                let t = text.clone();
                rt.block_on(d.run(move |c| c::diesel_batch_all(c, &t)))
                    .unwrap();
                0
            }),
            (4, 0, 3)
        );
        let all = counter.since(
            &crate::measure::statements::StatementCache {
                by: String::new(),
                run: at.0,
                prepared: at.1,
                text: at.2,
                ops: 0,
            },
            6,
        );
        assert_eq!((all.run, all.prepared, all.text), (26, 3, 8));
        assert_eq!(all.hits(), 15);
        assert!(all.by.starts_with("diesel"), "{}", all.by);
    }

    #[cfg(feature = "crates")]
    #[test]
    fn the_crates_write_the_rows_rusqlite_writes() {
        use crate::backends::crates as c;
        let dir = tempfile::tempdir().unwrap();
        let rows = Arc::new(super::super::rows::rows(40, 1));
        let all = |path: &std::path::Path| -> Vec<Vec<(String, String)>> {
            let conn = rusqlite::Connection::open(path).unwrap();
            let mut s = conn
                .prepare("SELECT * FROM benchscope_bulk_insert ORDER BY id")
                .unwrap();
            let n = s.column_count();
            s.query_map([], |r| {
                Ok((0..n)
                    .map(|i| {
                        let v = r.get_ref(i).unwrap();
                        (format!("{:?}", v.data_type()), format!("{v:?}"))
                    })
                    .collect::<Vec<_>>())
            })
            .unwrap()
            .map(Result::unwrap)
            .collect()
        };
        let mut a = rusqlite::Connection::open(dir.path().join("a.sqlite")).unwrap();
        reset(&a).unwrap();
        insert_all(&mut a, &rows).unwrap();
        let want = all(&dir.path().join("a.sqlite"));
        assert_eq!(want.len(), 40);
        let rt = crate::measure::drive::runtime(None).unwrap();
        let settings = SqliteSettings::default();

        let path = dir.path().join("d.sqlite");
        let d = c::Diesel::open(&path, &settings, 1).unwrap();
        let fresh = format!("{DROP}; {SQLITE_CREATE};");
        let r = rows.clone();
        let changed = rt
            .block_on(async {
                d.run(move |c| c::diesel_batch(c, &fresh)).await?;
                d.run(move |c| c::diesel_insert_all(c, &r)).await
            })
            .unwrap();
        assert_eq!(changed, 40);
        assert_eq!(all(&path), want, "diesel");

        let path = dir.path().join("m.sqlite");
        let m = rt
            .block_on(c::SqlMiddleware::open(&path, &settings))
            .unwrap();
        let (changed, _) = rt
            .block_on(m.insert_all(SQLITE_INSERT, &rows, |c| reset(c)))
            .unwrap();
        assert_eq!(changed, 40);
        assert_eq!(all(&path), want, "sql-middleware");

        // method=batch_text: the same rows from the INSERT text, through each batch call.
        let text = Arc::new(super::super::rows::batch_text(&rows));
        let path = dir.path().join("bt.sqlite");
        let mut b = rusqlite::Connection::open(&path).unwrap();
        reset(&b).unwrap();
        assert_eq!(
            crate::on_rusqlite::bulk_batch_all(&mut b, &text).unwrap(),
            40
        );
        assert_eq!(all(&path), want, "rusqlite, batch text");

        let path = dir.path().join("dbt.sqlite");
        let d = c::Diesel::open(&path, &settings, 1).unwrap();
        let (fresh, t) = (format!("{DROP}; {SQLITE_CREATE};"), text.clone());
        let n = rt
            .block_on(async {
                d.run(move |c| c::diesel_batch(c, &fresh)).await?;
                d.run(move |c| c::diesel_batch_all(c, &t)).await?;
                d.run(c::diesel_bulk_count).await
            })
            .unwrap();
        assert_eq!(n, 40);
        assert_eq!(all(&path), want, "diesel, batch text");

        let path = dir.path().join("mbt.sqlite");
        let m = rt
            .block_on(c::SqlMiddleware::open(&path, &settings))
            .unwrap();
        let (changed, _) = rt
            .block_on(m.batch_all(text.clone(), |c| reset(c)))
            .unwrap();
        assert_eq!(changed, 40);
        assert_eq!(all(&path), want, "sql-middleware, batch text");
    }
}
