//! The embedded store: a SQLite file (WAL, so that readers never wait for a writer), written
//! by several processes at once (each waits its turn for the write lock).

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::{Filter, Info, NewRun, Point};

mod embedded {
    refinery::embed_migrations!("src/store/migrations/sqlite");
}

pub struct Sqlite {
    conn: Connection,
    #[allow(dead_code)]
    path: PathBuf,
}

impl Sqlite {
    pub fn open(path: &Path) -> Result<Sqlite, String> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let mut conn = Connection::open(path).map_err(|e| e.to_string())?;
        conn.busy_timeout(Duration::from_secs(30))
            .map_err(|e| e.to_string())?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(|e| e.to_string())?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(|e| e.to_string())?;
        // Two processes making the schema at once would both apply version 1: the first to
        // take this lock migrates, the other then finds nothing to do. (SQLite's own locks
        // are fcntl locks, which flock does not touch.)
        let lock = std::fs::File::open(path).map_err(|e| e.to_string())?;
        lock.lock()
            .map_err(|e| format!("cannot lock {}: {e}", path.display()))?;
        let runner = embedded::migrations::runner();
        let known = runner
            .get_migrations()
            .iter()
            .map(|m| i64::from(m.version()))
            .max()
            .unwrap_or(0);
        let found: Option<i64> = conn
            .query_row(
                "SELECT MAX(version) FROM refinery_schema_history",
                [],
                |r| r.get(0),
            )
            .unwrap_or(None);
        super::check_schema(found, known)?;
        runner
            .run(&mut conn)
            .map_err(|e| format!("cannot bring its schema up to date: {e}"))?;
        drop(lock);
        Ok(Sqlite {
            conn,
            path: path.to_path_buf(),
        })
    }

    pub fn record(&mut self, r: &NewRun<'_>) -> Result<bool, String> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| e.to_string())?;
        let added = tx
            .execute(
                "INSERT INTO runs (run_key, recorded_at, machine_id, machine_name, cpu, cores, \
                 kernel, steal, commit_sha, dirty, label, target, knobs, build_profile, profiled, \
                 source, record, cpu_idle, cpus) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, \
                 ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19) ON CONFLICT (run_key) DO NOTHING",
                params![
                    r.key,
                    r.recorded_at,
                    r.machine.id,
                    r.machine.name,
                    r.fingerprint.cpu,
                    r.fingerprint.cores as i64,
                    r.fingerprint.kernel,
                    r.record.machine.as_ref().and_then(|m| m.steal),
                    r.code.commit,
                    r.code.dirty,
                    r.code.label,
                    r.target(),
                    r.knobs(),
                    r.build_profile(),
                    r.record.profiled,
                    r.source,
                    r.json(),
                    r.cpu_idle(),
                    r.cpus(),
                ],
            )
            .map_err(|e| e.to_string())?;
        if added == 0 {
            return Ok(false);
        }
        let id = tx.last_insert_rowid();
        for b in r.benches() {
            tx.execute(
                "INSERT INTO bench_results (run_id, bench, status, median_ns, ci_low_ns, \
                 ci_high_ns, samples, allocs_per_op) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    id,
                    b.bench,
                    b.status,
                    b.median,
                    b.ci.map(|c| c[0]),
                    b.ci.map(|c| c[1]),
                    b.samples,
                    b.allocs
                ],
            )
            .map_err(|e| e.to_string())?;
        }
        tx.commit().map_err(|e| e.to_string())?;
        Ok(true)
    }

    /// The points the query finds, each as it read (a row of the wrong types as its error).
    pub fn points(&mut self, f: &Filter) -> Result<Vec<Result<Point, String>>, String> {
        let (sql, args) = super::points_query(f, |i| format!("?{i}"));
        let mut stmt = self.conn.prepare(&sql).map_err(|e| e.to_string())?;
        let rows = stmt
            .query_map(rusqlite::params_from_iter(args.iter()), |row| {
                let run: i64 = row.get(0)?;
                let point = (|| {
                    Ok(Point {
                        run,
                        recorded_at: row.get(1)?,
                        machine_id: row.get(2)?,
                        machine_name: row.get(3)?,
                        cpu: row.get(4)?,
                        cores: row.get(5)?,
                        kernel: row.get(6)?,
                        commit: row.get(7)?,
                        dirty: row.get(8)?,
                        label: row.get(9)?,
                        target: row.get(10)?,
                        knobs: row.get(11)?,
                        build_profile: row.get(12)?,
                        cpu_idle: row.get(13)?,
                        cpus: row.get(14)?,
                        bench: row.get(15)?,
                        median: row.get(16)?,
                        ci: [
                            row.get::<_, Option<f64>>(17)?.unwrap_or(f64::NAN),
                            row.get::<_, Option<f64>>(18)?.unwrap_or(f64::NAN),
                        ],
                        allocs: row.get(19)?,
                    })
                })();
                Ok(point.map_err(|e: rusqlite::Error| format!("run {run}: {e}")))
            })
            .map_err(|e| e.to_string())?;
        rows.collect::<Result<_, _>>().map_err(|e| e.to_string())
    }

    /// The runs' records, newest first, each as it read.
    pub fn latest(&mut self, f: &Filter) -> Result<Vec<Result<super::LatestRow, String>>, String> {
        let (sql, args) = super::latest_query(f, |i| format!("?{i}"));
        let mut stmt = self.conn.prepare(&sql).map_err(|e| e.to_string())?;
        let rows = stmt
            .query_map(rusqlite::params_from_iter(args.iter()), |row| {
                let id: i64 = row.get(0)?;
                let read = || -> rusqlite::Result<super::LatestRow> {
                    Ok(super::LatestRow {
                        id,
                        target: row.get(1)?,
                        machine: row.get(2)?,
                        record: row.get(3)?,
                    })
                };
                Ok(read().map_err(|e| format!("run {id}: {e}")))
            })
            .map_err(|e| e.to_string())?;
        rows.collect::<Result<_, _>>().map_err(|e| e.to_string())
    }

    pub fn info(&mut self) -> Result<Info, String> {
        let one = |sql: &str| -> Result<i64, String> {
            self.conn
                .query_row(sql, [], |r| r.get::<_, Option<i64>>(0))
                .optional()
                .map(|v| v.flatten().unwrap_or(0))
                .map_err(|e| e.to_string())
        };
        Ok(Info {
            schema_version: one("SELECT MAX(version) FROM refinery_schema_history")?,
            runs: one("SELECT COUNT(*) FROM runs")?,
            machines: one("SELECT COUNT(DISTINCT machine_id) FROM runs")?,
            benches: one("SELECT COUNT(*) FROM bench_results")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store made by a benchscope of schema version 1, with a run in it: opening it brings
    /// it to the newest version (the columns of where runners ran and of allocations added,
    /// empty for the old run), and its run reads as every run does.
    #[test]
    fn a_version_1_store_is_brought_to_the_newest_version_and_its_runs_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.sqlite");
        {
            let mut c = Connection::open(&path).unwrap();
            embedded::migrations::runner()
                .set_target(refinery::Target::Version(1))
                .run(&mut c)
                .unwrap();
            let has_cpus: i64 = c
                .query_row(
                    "SELECT count(*) FROM pragma_table_info('runs') WHERE name = 'cpus'",
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(has_cpus, 0, "version 1 has no cpus column");
            c.execute_batch(
                "INSERT INTO runs (id, run_key, recorded_at, machine_id, machine_name, cpu, cores, \
                 kernel, target, knobs, build_profile, profiled, record) VALUES (1, 'k', \
                 '2026-11-01T00:00:00Z', 'm', 'vm', 'EPYC', 2, 'Linux', 'single_row_lookup', '{}', \
                 'release', 0, '{}');
                 INSERT INTO bench_results VALUES (1, 'rusqlite', 'finished', 1400.0, 1390.0, 1410.0, 30);",
            )
            .unwrap();
        }
        let mut s = Sqlite::open(&path).unwrap();
        assert_eq!(s.info().unwrap().schema_version, 3);
        let points = s.points(&Filter::default()).unwrap();
        assert_eq!(points.len(), 1);
        let p = points.into_iter().next().unwrap().unwrap();
        assert_eq!(
            (p.bench.as_str(), p.median, p.cpus, p.cpu_idle, p.allocs),
            ("rusqlite", 1400.0, None, None, None)
        );
    }
}
