//! The shared store: a PostgreSQL database that many machines write to at once. Each run is
//! one transaction; the schema is brought up to date under an advisory lock, so two machines
//! starting together do not both apply a migration.

use std::time::Duration;

use tokio_postgres::{Client, NoTls, Row};

use bench_core::secret::PgUrl;

use super::rows::{Filter, Info, NewRun, Point};

mod embedded {
    refinery::embed_migrations!("src/store/migrations/postgres");
}

/// The advisory lock key held while migrating ("benchscope" in ASCII, folded to 63 bits).
const MIGRATION_LOCK: i64 = 0x62_656e_6368_7363;

pub struct Postgres {
    rt: tokio::runtime::Runtime,
    client: Client,
    /// For scrubbing its password from what the driver says.
    url: PgUrl,
}

/// The store's schema version; no history table yet (a new store) reads as none.
async fn schema_version(client: &Client) -> Option<i64> {
    client
        .query_opt(
            "SELECT MAX(version)::BIGINT FROM refinery_schema_history",
            &[],
        )
        .await
        .ok()
        .flatten()
        .and_then(|r| r.get::<_, Option<i64>>(0))
}

impl Postgres {
    /// Connects (10 s at most); to write, brings the schema up to date under the advisory
    /// lock; to read, checks that the database holds a store of this benchscope's schema and
    /// changes nothing. Blocks: called off any async runtime.
    pub fn open(url: &PgUrl, write: bool) -> Result<Postgres, String> {
        // Every error built from the URL's parse or the driver's words, its password scrubbed.
        Postgres::connect(url, write).map_err(|e| url.scrub(&e))
    }

    fn connect(url: &PgUrl, write: bool) -> Result<Postgres, String> {
        let mut config: tokio_postgres::Config = url
            .expose()
            .parse()
            .map_err(|e| format!("not a PostgreSQL URL: {e}"))?;
        config.connect_timeout(Duration::from_secs(10));
        config.application_name("benchscope");
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        let client = rt.block_on(async {
            let (mut client, conn) = config.connect(NoTls).await.map_err(|e| e.to_string())?;
            tokio::spawn(async move {
                let _ = conn.await;
            });
            let runner = embedded::migrations::runner();
            let known = runner
                .get_migrations()
                .iter()
                .map(|m| i64::from(m.version()))
                .max()
                .unwrap_or(0);
            if !write {
                let found = schema_version(&client).await;
                super::rows::check_schema(found, known)?;
                return match found {
                    Some(v) if v == known => Ok(client),
                    Some(v) => Err(format!(
                        "its schema is version {v}, older than this benchscope's {known}: a run recorded in it (or `benchscope store import`) brings it up to date; reading never changes it"
                    )),
                    None => Err(
                        "no benchscope results store in this database (runs are recorded there as they finish)".to_string(),
                    ),
                };
            }
            client
                .execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])
                .await
                .map_err(|e| e.to_string())?;
            let migrated = match super::rows::check_schema(schema_version(&client).await, known) {
                Ok(()) => runner
                    .run_async(&mut client)
                    .await
                    .map(drop)
                    .map_err(|e| format!("cannot bring its schema up to date: {e}")),
                Err(e) => Err(e),
            };
            client
                .execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK])
                .await
                .map_err(|e| e.to_string())?;
            migrated.map(|()| client)
        })?;
        Ok(Postgres {
            rt,
            client,
            url: url.clone(),
        })
    }

    /// `text` (what the driver said) with this store's password scrubbed.
    pub fn scrub(&self, text: &str) -> String {
        self.url.scrub(text)
    }

    pub fn record(&mut self, r: &NewRun<'_>) -> Result<bool, String> {
        let client = &mut self.client;
        self.rt.block_on(async {
            let tx = client.transaction().await.map_err(|e| e.to_string())?;
            let steal = r.record.machine.as_ref().and_then(|m| m.steal);
            let cpu_idle = r.cpu_idle();
            let cpus = r.cpus();
            let cores = r.fingerprint.cores as i32;
            let (target, knobs, profile, json) =
                (r.target(), r.knobs(), r.build_profile(), r.json());
            let row = tx
                .query_opt(
                    "INSERT INTO runs (run_key, recorded_at, machine_id, machine_name, cpu, \
                     cores, kernel, steal, commit_sha, dirty, label, target, knobs, \
                     build_profile, profiled, source, record, cpu_idle, cpus) VALUES ($1, $2, $3, \
                     $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19) \
                     ON CONFLICT (run_key) DO NOTHING RETURNING id",
                    &[
                        &r.key,
                        &r.recorded_at,
                        &r.machine.id,
                        &r.machine.name,
                        &r.fingerprint.cpu,
                        &cores,
                        &r.fingerprint.kernel,
                        &steal,
                        &r.code.commit,
                        &r.code.dirty,
                        &r.code.label,
                        &target,
                        &knobs,
                        &profile,
                        &r.record.profiled,
                        &r.source,
                        &json,
                        &cpu_idle,
                        &cpus,
                    ],
                )
                .await
                .map_err(|e| e.to_string())?;
            let Some(row) = row else {
                return Ok(false);
            };
            let id: i64 = row.get(0);
            let insert = tx
                .prepare(
                    "INSERT INTO bench_results (run_id, bench, status, median_ns, ci_low_ns, \
                     ci_high_ns, samples, allocs_per_op) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                )
                .await
                .map_err(|e| e.to_string())?;
            for b in r.benches() {
                let (lo, hi) = (b.ci.map(|c| c[0]), b.ci.map(|c| c[1]));
                tx.execute(
                    &insert,
                    &[
                        &id, &b.bench, &b.status, &b.median, &lo, &hi, &b.samples, &b.allocs,
                    ],
                )
                .await
                .map_err(|e| e.to_string())?;
            }
            tx.commit().await.map_err(|e| e.to_string())?;
            Ok(true)
        })
    }

    fn query(&mut self, (sql, args): (String, Vec<String>)) -> Result<Vec<Row>, String> {
        let params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = args
            .iter()
            .map(|a| a as &(dyn tokio_postgres::types::ToSql + Sync))
            .collect();
        self.rt
            .block_on(self.client.query(&sql, &params))
            .map_err(|e| e.to_string())
    }

    /// The points the query finds, each as it read (a row of the wrong types as its error).
    pub fn points(&mut self, f: &Filter) -> Result<Vec<Result<Point, String>>, String> {
        let rows = self.query(super::rows::points_query(f, |i| format!("${i}")))?;
        Ok(rows.iter().map(point).collect())
    }

    /// The runs' records, newest first, each as it read.
    pub fn latest(
        &mut self,
        f: &Filter,
    ) -> Result<Vec<Result<super::rows::LatestRow, String>>, String> {
        let rows = self.query(super::rows::latest_query(f, |i| format!("${i}")))?;
        Ok(rows
            .iter()
            .map(|r| {
                let id: i64 = r.try_get(0).map_err(|e| e.to_string())?;
                let read = || -> Result<super::rows::LatestRow, tokio_postgres::Error> {
                    Ok(super::rows::LatestRow {
                        id,
                        target: r.try_get(1)?,
                        machine: r.try_get(2)?,
                        record: r.try_get(3)?,
                    })
                };
                read().map_err(|e| format!("run {id}: {e}"))
            })
            .collect())
    }

    pub fn info(&mut self) -> Result<Info, String> {
        let row = self
            .rt
            .block_on(self.client.query_one(
                "SELECT (SELECT COALESCE(MAX(version), 0)::BIGINT FROM refinery_schema_history), \
                 (SELECT COUNT(*) FROM runs), (SELECT COUNT(DISTINCT machine_id) FROM runs), \
                 (SELECT COUNT(*) FROM bench_results)",
                &[],
            ))
            .map_err(|e| e.to_string())?;
        Ok(Info {
            schema_version: row.get(0),
            runs: row.get(1),
            machines: row.get(2),
            benches: row.get(3),
        })
    }
}

fn point(row: &Row) -> Result<Point, String> {
    let run: i64 = row.try_get(0).map_err(|e| e.to_string())?;
    let read = || -> Result<Point, tokio_postgres::Error> {
        Ok(Point {
            run,
            recorded_at: row.try_get(1)?,
            machine_id: row.try_get(2)?,
            machine_name: row.try_get(3)?,
            cpu: row.try_get(4)?,
            cores: i64::from(row.try_get::<_, i32>(5)?),
            kernel: row.try_get(6)?,
            commit: row.try_get(7)?,
            dirty: row.try_get(8)?,
            label: row.try_get(9)?,
            target: row.try_get(10)?,
            knobs: row.try_get(11)?,
            build_profile: row.try_get(12)?,
            cpu_idle: row.try_get(13)?,
            cpus: row.try_get(14)?,
            bench: row.try_get(15)?,
            median: row.try_get(16)?,
            ci: [
                row.try_get::<_, Option<f64>>(17)?.unwrap_or(f64::NAN),
                row.try_get::<_, Option<f64>>(18)?.unwrap_or(f64::NAN),
            ],
            allocs: row.try_get(19)?,
        })
    };
    read().map_err(|e| format!("run {run}: {e}"))
}
