//! `key_value` through sqlx-sqlite: the same store, cases and checks as bench-core's, one
//! connection per task (a scratch file, or one in-memory database shared by the tasks).

use bench_core::BenchError;
use bench_core::catalog::{BenchSpec, Subject, Target};
use bench_core::measure::Bench;
use bench_core::mirror::{Mirror, On};
use bench_core::workloads::bulk_insert::rows::Scratch;
use bench_core::workloads::key_value::plan::{self, Data, Kv, NAMESPACE, NOW, TENANT};
use bench_core::workloads::key_value::{self};
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Executor, Row};

use crate::lookup::err;

/// sqlx's `key_value`.
pub struct KeyValue;

impl Mirror for KeyValue {
    type Params = key_value::Params;
    const REFUSED: &'static str = "not a sqlx bench";

    fn target(&self) -> &'static Target {
        key_value::spec()
    }

    fn serves(&self, subject: Subject) -> bool {
        subject == Subject::SqlxSqlite
    }

    fn bench<'s>(&'s self, ctx: &'s Ctx, spec: &BenchSpec) -> Result<Bench<'s>, BenchError> {
        let case = key_value::case_for(spec)?;
        let data = Data::new(case, ctx.p.keys, ctx.p.seed);
        let tasks = case.tasks();
        let scratch = Scratch::new(&ctx.p.dir, &format!("kv-sqlx-{}", spec.name));
        let options = if ctx.p.memory {
            // One shared in-memory database for every task's connection.
            SqliteConnectOptions::new()
                .filename(format!(
                    "file:benchscope-kv-{}-{}",
                    std::process::id(),
                    spec.name.replace('/', "_")
                ))
                .in_memory(true)
                .shared_cache(true)
        } else {
            SqliteConnectOptions::new()
                .filename(&scratch.0)
                .create_if_missing(true)
        };
        let options = crate::settings::apply(options, &ctx.p.settings);
        let (handles, settings) = ctx.rt.block_on(async {
            let mut handles = Vec::new();
            for _ in 0..tasks {
                handles.push(SqliteKv(options.connect().await.map_err(err)?));
            }
            let settings = crate::settings::read_back(&mut handles[0].0).await?;
            Ok::<_, BenchError>((handles, settings))
        })?;
        Ok(plan::bench(&ctx.rt, handles, case, data, scratch)?.with_settings(settings))
    }
}

type Ctx = On<key_value::Params>;

/// sqlx-sqlite on one connection; sqlx keeps every statement in its cache.
struct SqliteKv(sqlx::SqliteConnection);

impl Kv for SqliteKv {
    async fn reset(&mut self) -> Result<(), BenchError> {
        for s in plan::CREATE {
            self.0.execute(*s).await.map_err(err)?;
        }
        Ok(())
    }
    async fn clear(&mut self) -> Result<(), BenchError> {
        sqlx::query(plan::CLEAR)
            .execute(&mut self.0)
            .await
            .map_err(err)?;
        Ok(())
    }
    async fn begin(&mut self) -> Result<(), BenchError> {
        sqlx::query("BEGIN")
            .execute(&mut self.0)
            .await
            .map_err(err)?;
        Ok(())
    }
    async fn commit(&mut self) -> Result<(), BenchError> {
        sqlx::query("COMMIT")
            .execute(&mut self.0)
            .await
            .map_err(err)?;
        Ok(())
    }
    async fn put(
        &mut self,
        key: &str,
        value: &[u8],
        expires_at: Option<i64>,
    ) -> Result<u64, BenchError> {
        let q = sqlx::query(plan::PUT)
            .bind(TENANT)
            .bind(NAMESPACE)
            .bind(key)
            .bind(value)
            .bind(expires_at)
            .bind(NOW)
            .bind(NOW);
        Ok(q.execute(&mut self.0).await.map_err(err)?.rows_affected())
    }
    async fn get(&mut self, key: &str) -> Result<Option<Vec<u8>>, BenchError> {
        let q = sqlx::query(plan::GET)
            .bind(TENANT)
            .bind(NAMESPACE)
            .bind(key)
            .bind(NOW);
        let row = q.fetch_optional(&mut self.0).await.map_err(err)?;
        row.map(|r| r.try_get::<Vec<u8>, _>(0).map_err(err))
            .transpose()
    }
    async fn exists(&mut self, key: &str) -> Result<bool, BenchError> {
        let q = sqlx::query(plan::EXISTS)
            .bind(TENANT)
            .bind(NAMESPACE)
            .bind(key)
            .bind(NOW);
        Ok(q.fetch_optional(&mut self.0).await.map_err(err)?.is_some())
    }
    async fn delete(&mut self, key: &str) -> Result<u64, BenchError> {
        let q = sqlx::query(plan::DELETE)
            .bind(TENANT)
            .bind(NAMESPACE)
            .bind(key);
        Ok(q.execute(&mut self.0).await.map_err(err)?.rows_affected())
    }
    async fn scan(&mut self, from: &str, to: &str) -> Result<Vec<(String, Vec<u8>)>, BenchError> {
        let q = sqlx::query(plan::SCAN)
            .bind(TENANT)
            .bind(NAMESPACE)
            .bind(from)
            .bind(to)
            .bind(NOW);
        let rows = q.fetch_all(&mut self.0).await.map_err(err)?;
        rows.iter()
            .map(|r| Ok((r.try_get(0).map_err(err)?, r.try_get(1).map_err(err)?)))
            .collect()
    }
}
