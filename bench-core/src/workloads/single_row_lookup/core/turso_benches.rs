//! turso: raw lookups, the middleware path over it, and its micro-benches.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use super::ctx::*;
use crate::backends::middleware::value::Value;
use crate::backends::turso as t;
use crate::catalog::{BenchSpec, CatalogError, Subject};
use crate::dataset::{BenchRow, LOOKUP_WORK, SELECT_BY_ID};
use crate::error::BenchError;
use crate::measure::drive::{self, LookupPath};
use crate::measure::trace::{Phase, PhaseTotals, ns_between};
use crate::measure::{Bench, IterFn, Iteration};
use crate::settings::SqliteSettings;

/// turso has no pool: "checkout" opens a connection from the `Database` and applies the
/// run's settings to it.
pub struct TursoPath {
    db: turso::Database,
    settings: SqliteSettings,
}

impl LookupPath for TursoPath {
    type Conn = turso::Connection;
    async fn checkout(&self) -> Result<turso::Connection, BenchError> {
        t::connect(&self.db, &self.settings).await
    }
    async fn lookup<const TRACE: bool>(
        &self,
        conn: &mut turso::Connection,
        id: i64,
        phases: &mut PhaseTotals,
    ) -> Result<BenchRow, BenchError> {
        t::middleware_lookup::<TRACE>(conn, id, phases).await
    }
}

/// Times a pass of async operations on the current thread (turso runs queries on the
/// caller's task: there is no hop to dispatch to).
fn timed<'a, S: 'a>(
    ctx: &'a Ctx,
    mut state: S,
    op: impl AsyncFnMut(&mut S, i64) -> Result<u64, BenchError> + 'a,
) -> IterFn<'a> {
    let mut op = op;
    Box::new(move |_| {
        ctx.rt()?.block_on(async {
            let mut work = 0u64;
            let start = Instant::now();
            for &id in ctx.ids.iter() {
                work = work.wrapping_add(op(&mut state, id).await?);
            }
            Ok(Iteration::new(ns_between(start, Instant::now()), work))
        })
    })
}

pub fn bench<'a>(ctx: &'a Ctx, spec: &BenchSpec) -> Result<Bench<'a>, BenchError> {
    use Phase::*;
    let s = &ctx.settings;
    let db = ctx.rt()?.block_on(t::open(&ctx.path))?;
    let (conn, settings) = ctx.rt()?.block_on(async {
        let conn = t::connect(&db, s).await?;
        let settings = t::read_back(&conn).await;
        Ok::<_, BenchError>((conn, settings))
    })?;
    let n = ctx.ids.len() as u64;
    let bench = match (spec.subject, spec.phase) {
        (Subject::TursoMiddleware, None) => path_lookups(
            ctx,
            OnRuntime {
                path: Arc::new(TursoPath {
                    db,
                    settings: s.clone(),
                }),
                rt: ctx.rt()?.clone(),
            },
        ),
        (Subject::Turso, None) => {
            let mut stmt = ctx
                .rt()?
                .block_on(conn.prepare(SELECT_BY_ID))
                .map_err(BenchError::driver)?;
            let mut pass = 0u64;
            let iter: IterFn<'a> = Box::new(move |h| {
                let _keep_open = &conn;
                pass += 1;
                // Timed as rusqlite's lookups are: the pass as a whole, and one lookup
                // in LATENCY_EVERY on its own.
                let timed = drive::timed_ops(ctx.ids.len(), pass);
                let mut lat = Vec::with_capacity(timed.len() / drive::LATENCY_EVERY + 16);
                let iteration = ctx.rt()?.block_on(async {
                    let mut work = 0u64;
                    let start = Instant::now();
                    for (&id, &timed) in ctx.ids.iter().zip(&timed) {
                        let t0 = timed.then(Instant::now);
                        let r = black_box(t::lookup(&mut stmt, black_box(id)).await?);
                        work = work.wrapping_add(r.checksum());
                        if let Some(t0) = t0 {
                            lat.push(ns_between(t0, Instant::now()));
                        }
                    }
                    Ok::<_, BenchError>(Iteration::new(ns_between(start, Instant::now()), work))
                })?;
                for ns in lat {
                    h.record(ns);
                }
                Ok(iteration)
            });
            Bench::new(iter, ctx.pass_work(), LOOKUP_WORK)
        }
        (Subject::Turso, Some(Checkout)) => {
            let state = (db, s.clone());
            let iter = timed(
                ctx,
                state,
                async |(db, s): &mut (turso::Database, SqliteSettings), _| {
                    drop(black_box(t::connect(db, s).await?));
                    Ok(1)
                },
            );
            Bench::new(iter, n, "connections opened")
        }
        (Subject::Turso, Some(Prepare)) => {
            let iter = timed(ctx, conn, async |conn: &mut turso::Connection, _| {
                let stmt = black_box(
                    conn.prepare_cached(SELECT_BY_ID)
                        .await
                        .map_err(BenchError::driver)?,
                );
                Ok(stmt.column_count() as u64)
            });
            Bench::new(iter, 4 * n, "statements prepared (their column count)")
        }
        (Subject::Turso, Some(ExecuteMarshal)) => {
            let stmt = ctx
                .rt()?
                .block_on(conn.prepare(SELECT_BY_ID))
                .map_err(BenchError::driver)?;
            let iter = timed(
                ctx,
                (conn, stmt),
                async |(_, stmt): &mut (turso::Connection, turso::Statement), id| {
                    let rs = black_box(
                        t::marshal(stmt.query([id]).await.map_err(BenchError::driver)?).await?,
                    );
                    Ok(result_set_work(&rs))
                },
            );
            let per_pass = ctx.ids.iter().map(|id| *id as u64 + 1).sum();
            Bench::new(iter, per_pass, "result sets built (rows + first id)")
        }
        (Subject::Turso, Some(Decode)) => {
            let row = ctx.rt()?.block_on(async {
                let mut rows = conn
                    .query(SELECT_BY_ID, [ctx.ids[0]])
                    .await
                    .map_err(BenchError::driver)?;
                rows.next()
                    .await
                    .map_err(BenchError::driver)?
                    .ok_or_else(|| BenchError::Other("no row returned".into()))
            })?;
            let iter: IterFn<'a> = Box::new(move |_| {
                timed_loop(&ctx.ids, |_| {
                    Ok(black_box(t::decode_row(black_box(&row))?).checksum())
                })
            });
            let per_pass = crate::dataset::row(ctx.ids[0]).checksum().wrapping_mul(n);
            Bench::new(iter, per_pass, "rows decoded (their checksum)")
        }
        (Subject::Turso, Some(Bind)) => {
            let iter: IterFn<'a> = Box::new(move |_| {
                timed_loop(&ctx.ids, |id| {
                    let p = black_box(t::to_params(&[Value::Integer(black_box(id))]));
                    Ok(match p.first() {
                        Some(turso::Value::Integer(i)) => *i as u64,
                        _ => 0,
                    })
                })
            });
            let per_pass = ctx.ids.iter().map(|id| *id as u64).sum();
            return Ok(Bench::new(
                iter,
                per_pass,
                "parameters converted (their values)",
            ));
        }
        _ => {
            return Err(CatalogError::no_implementation(
                crate::workloads::single_row_lookup::spec(),
                spec,
                "no turso bench of this phase",
            )
            .into());
        }
    };
    Ok(bench.with_settings(settings))
}
