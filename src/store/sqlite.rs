//! The embedded store: a SQLite file (WAL, so that readers never wait for a writer), written
//! by several processes at once (each waits its turn for the write lock).

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};

use super::rows::{Filter, Info, NewRun, Point};

mod embedded {
    refinery::embed_migrations!("src/store/migrations/sqlite");
}

pub struct Sqlite {
    conn: Connection,
    #[allow(dead_code)]
    path: PathBuf,
}

/// Whether a store is opened to write runs (made and migrated as needed) or only to read them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Write,
    Read,
}

/// What is at a store's path before SQLite opens it (read as a file, by the opener: a FIFO,
/// a folder or a device is refused by what it is, and SQLite never opens one).
fn found(path: &Path, access: Access) -> Result<bool, String> {
    if std::fs::symlink_metadata(path).is_err() {
        return match access {
            Access::Write => Ok(false),
            Access::Read => Err(format!(
                "no results store at {}: runs are recorded there as they finish (or give --store)",
                path.display()
            )),
        };
    }
    let mut o = bench_core::opener::open(path, "", bench_core::opener::Kind::Database)
        .map_err(|e| e.to_string())?;
    let mut head = Vec::with_capacity(16);
    std::io::Read::read_to_end(&mut std::io::Read::take(&mut o.file, 16), &mut head)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if head.is_empty() && access == Access::Write {
        // An empty file is no database yet: the store is made in it.
        return Ok(false);
    }
    if head != b"SQLite format 3\0" {
        return Err(format!(
            "{} is not a SQLite database (allowed: a benchscope results store, or a path where none exists yet)",
            path.display()
        ));
    }
    // A journal beside it: a write cut short, which a read-only connection cannot roll back.
    let journal = beside(path, "-journal");
    if access == Access::Read && std::fs::symlink_metadata(&journal).is_ok_and(|m| m.len() > 0) {
        return Err(format!(
            "{} lies beside it: a write to the store was cut short; recording a run in it (or `benchscope store import`) finishes or rolls that write back, and reading never writes",
            journal.display()
        ));
    }
    Ok(true)
}

/// The file SQLite keeps beside the store's (`-journal`, `-wal`).
fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(suffix);
    PathBuf::from(p)
}

/// The tables of an open database other than SQLite's own.
fn tables(conn: &Connection) -> Result<Vec<String>, String> {
    let mut st = conn
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        .map_err(|e| e.to_string())?;
    st.query_map([], |r| r.get(0))
        .and_then(|rows| rows.collect())
        .map_err(|e| e.to_string())
}

/// Refuses a database that holds tables but is not a benchscope store (another application's
/// file): benchscope neither reads its tables as runs nor adds its own beside them.
fn check_is_store(path: &Path, tables: &[String]) -> Result<(), String> {
    let has = |t: &str| tables.iter().any(|n| n == t);
    if tables.is_empty() || (has("refinery_schema_history") && has("runs") && has("bench_results"))
    {
        return Ok(());
    }
    let mut shown: Vec<&str> = tables.iter().take(5).map(String::as_str).collect();
    if tables.len() > 5 {
        shown.push("...");
    }
    Err(format!(
        "{} is a SQLite database but not a benchscope results store (its tables: {}); allowed: a store benchscope recorded runs in, or a path where none exists yet",
        path.display(),
        bench_core::format::fit(&shown.join(", "), 200)
    ))
}

impl Sqlite {
    /// Opens the store at `path`, SQLite jailed to the file and its own journals. To write,
    /// the store is made (folders and file) and its schema brought up to date; to read, it
    /// must exist, be a benchscope store and have this benchscope's schema, and nothing is
    /// written.
    pub fn open(path: &Path, access: Access) -> Result<Sqlite, String> {
        let exists = found(path, access)?;
        if access == Access::Write
            && let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let jail = bench_core::jail::file(path).map_err(|e| e.to_string())?;
        // What SQLite was refused names the file at fault, where SQLite's own words name none.
        let seen = jail.refusals().len();
        let sqlite_error = |e: rusqlite::Error| match jail.refusals().get(seen) {
            Some(r) => format!(
                "{r}: beside a store SQLite opens only regular files of its own (not a link, a FIFO, a folder, or a file with a second name elsewhere)"
            ),
            None => e.to_string(),
        };
        // Another application's database is named before anything of it is touched: its
        // tables are read through an immutable connection, which takes no lock, rolls no
        // journal back, and makes no file beside it.
        let immutable = |path: &Path| {
            let uri = format!("{}&immutable=1", jail.uri(path, true));
            Connection::open_with_flags(
                uri,
                OpenFlags::SQLITE_OPEN_READ_ONLY
                    | OpenFlags::SQLITE_OPEN_URI
                    | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
            .map_err(sqlite_error)
        };
        if exists {
            check_is_store(path, &tables(&immutable(path)?)?)?;
        }
        let mut conn = match access {
            Access::Write => Connection::open_with_flags_and_vfs(
                path,
                OpenFlags::SQLITE_OPEN_READ_WRITE
                    | OpenFlags::SQLITE_OPEN_CREATE
                    | OpenFlags::SQLITE_OPEN_NO_MUTEX,
                jail.name(),
            )
            .map_err(sqlite_error)?,
            // A read makes nothing beside the store: while no run writes it (no WAL beside
            // it) it is read immutable; while one does, as every reader of a WAL does.
            Access::Read if !beside(path, "-wal").exists() => immutable(path)?,
            Access::Read => Connection::open_with_flags_and_vfs(
                path,
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
                jail.name(),
            )
            .map_err(sqlite_error)?,
        };
        conn.busy_timeout(Duration::from_secs(30))
            .map_err(|e| e.to_string())?;
        let runner = embedded::migrations::runner();
        let known = runner
            .get_migrations()
            .iter()
            .map(|m| i64::from(m.version()))
            .max()
            .unwrap_or(0);
        let version = |conn: &Connection| -> Option<i64> {
            conn.query_row(
                "SELECT MAX(version) FROM refinery_schema_history",
                [],
                |r| r.get(0),
            )
            .unwrap_or(None)
        };
        if access == Access::Read {
            let found = version(&conn);
            super::rows::check_schema(found, known)?;
            return match found {
                Some(v) if v == known => Ok(Sqlite {
                    conn,
                    path: path.to_path_buf(),
                }),
                Some(v) => Err(format!(
                    "its schema is version {v}, older than this benchscope's {known}: a run recorded in it (or `benchscope store import`) brings it up to date; reading never changes it"
                )),
                None => Err(format!(
                    "{} holds no runs yet (an empty database; runs are recorded there as they finish)",
                    path.display()
                )),
            };
        }
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(|e| e.to_string())?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(|e| e.to_string())?;
        // Two processes making the schema at once would both apply version 1: the first to
        // take this lock migrates, the other then finds nothing to do. (SQLite's own locks
        // are fcntl locks, which flock does not touch.)
        let lock = bench_core::opener::open(path, "", bench_core::opener::Kind::Database)
            .map_err(|e| e.to_string())?
            .file;
        lock.lock()
            .map_err(|e| format!("cannot lock {}: {e}", path.display()))?;
        super::rows::check_schema(version(&conn), known)?;
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
        let (sql, args) = super::rows::points_query(f, |i| format!("?{i}"));
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
    pub fn latest(
        &mut self,
        f: &Filter,
    ) -> Result<Vec<Result<super::rows::LatestRow, String>>, String> {
        let (sql, args) = super::rows::latest_query(f, |i| format!("?{i}"));
        let mut stmt = self.conn.prepare(&sql).map_err(|e| e.to_string())?;
        let rows = stmt
            .query_map(rusqlite::params_from_iter(args.iter()), |row| {
                let id: i64 = row.get(0)?;
                let read = || -> rusqlite::Result<super::rows::LatestRow> {
                    Ok(super::rows::LatestRow {
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
        // Reading leaves it as it is, and says how it is brought up to date.
        let e = Sqlite::open(&path, Access::Read).err().unwrap();
        assert!(
            e.contains("its schema is version 1, older than this benchscope's 3"),
            "{e}"
        );
        let mut s = Sqlite::open(&path, Access::Write).unwrap();
        assert_eq!(s.info().unwrap().schema_version, 3);
        let points = s.points(&Filter::default()).unwrap();
        assert_eq!(points.len(), 1);
        let p = points.into_iter().next().unwrap().unwrap();
        assert_eq!(
            (p.bench.as_str(), p.median, p.cpus, p.cpu_idle, p.allocs),
            ("rusqlite", 1400.0, None, None, None)
        );
    }

    fn listing(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    /// Reading a store makes nothing beside it (no `-wal`, no `-shm` left behind, owned by
    /// whoever read), and reads what was recorded.
    #[test]
    fn a_read_makes_no_file_beside_the_store() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.sqlite");
        drop(Sqlite::open(&path, Access::Write).unwrap());
        let before = listing(dir.path());
        assert_eq!(before, ["results.sqlite"], "a closed store leaves no WAL");
        let mut s = Sqlite::open(&path, Access::Read).unwrap();
        assert_eq!(s.info().unwrap().runs, 0);
        assert_eq!(listing(dir.path()), before);
        drop(s);
        assert_eq!(listing(dir.path()), before);
    }

    /// Another application's database, with a write of its own cut short (a hot journal), is
    /// refused by name before SQLite touches it: its journal is not rolled back, no WAL or
    /// shared memory is made beside it, its bytes stay as they were, to write as to read.
    #[test]
    fn a_foreign_database_is_refused_before_anything_of_it_is_touched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("app.db");
        let c = Connection::open(&path).unwrap();
        c.execute_batch(
            "PRAGMA journal_mode=DELETE; CREATE TABLE accounts(x); INSERT INTO accounts VALUES (1);",
        )
        .unwrap();
        let page: u32 = c.query_row("PRAGMA page_size", [], |r| r.get(0)).unwrap();
        drop(c);
        bench_core::testing::hot_journal(&path, page, b"");
        let bytes = |p: &Path| std::fs::read(p).unwrap();
        let journal = beside(&path, "-journal");
        let (db_before, journal_before) = (bytes(&path), bytes(&journal));
        for access in [Access::Write, Access::Read] {
            let e = Sqlite::open(&path, access).err().unwrap();
            assert!(
                e.contains("not a benchscope results store") || e.contains("was cut short"),
                "{access:?}: {e}"
            );
            assert_eq!(bytes(&path), db_before, "{access:?}");
            assert_eq!(bytes(&journal), journal_before, "{access:?}");
            assert_eq!(
                listing(dir.path()),
                ["app.db", "app.db-journal"],
                "{access:?}"
            );
        }
    }

    /// A FIFO where the store's WAL goes: refused at once, by that path, to read as to write.
    #[test]
    fn a_fifo_beside_the_store_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.sqlite");
        drop(Sqlite::open(&path, Access::Write).unwrap());
        let wal = beside(&path, "-wal");
        let c = std::ffi::CString::new(wal.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        for access in [Access::Read, Access::Write] {
            let e = Sqlite::open(&path, access).err().unwrap();
            assert!(
                e.contains(&wal.display().to_string()) && e.contains("only regular files"),
                "{access:?}: {e}"
            );
        }
    }
}
